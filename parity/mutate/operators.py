"""The mutation catalog of ``parity mutate``: text-level mutations of an LLVM IR
module as the engines print it (docs/ir_text.md).

Every operator lists its *sites* in a module (:func:`sites`) and applies one
(:func:`apply`), returning the mutated text. Operators preserve types and SSA
form, so a mutant is a module the emulator parses and LLVM verifies; what they
change is meaning. A mutant whose text equals the original, or that is proved
the same by a rule stated here (a commutative operation's operands swapped; a
two-term fadd chain reversed, fadd being commutative), is *equivalent* and never
run.

=================  ====================================================================
kind               mutation
=================  ====================================================================
``const_inc``      an integer constant operand of an instruction, plus 1
``const_dec``      the same, minus 1
``cmp_negate``     an icmp/fcmp predicate replaced by its negation (ult -> uge, ...)
``cmp_boundary``   a strict predicate made non-strict or back (ult <-> ule, ...)
``swap_operands``  the two operands of a binary operation or compare swapped
``drop_sync``      an ``s.barrier`` / ``s.cluster.barrier`` call or a fence deleted
``align_double``   a load/store's declared ``align N`` made ``align 2N``
``gep_index``      a getelementptr's last index plus 1 (a constant; else an inserted add)
``loop_bound``     the compare of a loop's back edge: its second operand plus 1
``select_swap``    a select's two value operands swapped
``slab_reverse``   a chain of fadds (a slab fold) summed in reverse order
``epi_twice``      a bias add or scale multiply of the accumulator epilogue applied twice
``epi_early``      the epilogue (bias, scale, relu) applied before the fold's last slab is
                   added (``epi(P) + X`` instead of ``epi(P + X)``): before the fold
``bias_group``     the bias channel without the group base (``0 + n`` for ``kbase + n``)
``promise_lie``    a flag / FMF / metadata / attribute the IR does not justify
                   (parity/mutate/lies.py, issue 34 item 6)
``launch_plan``    a conv_launch plan field or a kernarg offset one unit off: the IR is
                   unchanged, the runtime's data is not (parity/mutate/lies.py)
``kloop_cmp``      ``cmp_negate`` / ``cmp_boundary`` / ``select_swap`` inside the K loop's
                   blocks (:data:`KLOOP_BLOCKS`); parity/mutate/run.py plans it on one
                   config per AOT tile class
=================  ====================================================================

The three epilogue kinds (issue 36, fused split-K) find the epilogue by the
builder's name hints (``%biased``, ``%scaled``, ``%neg``/``%relu``,
``%epi_ch``), which both engines print alike (docs/ir_text.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from parity.mutate import lies as LIES

KINDS = ("const_inc", "const_dec", "cmp_negate", "cmp_boundary", "swap_operands", "drop_sync", "align_double",
         "gep_index", "loop_bound", "select_swap", "slab_reverse", "epi_twice", "epi_early", "bias_group",
         "promise_lie", "launch_plan", "kloop_cmp")
#: the kinds of issue 34 item 6 (reported apart as well as in the overall rate)
NEW_KINDS = ("promise_lie", "launch_plan", "kloop_cmp")
#: block hints of the conv K loop: prologue, pipelined loop, K walk, uniform-tap loop
KLOOP_BLOCKS = ("prologue", "kloop", "kwalk", "tap_pro", "tap_loop", "taptile_gate", "taptile_pro",
                "taptile_loop")
_LABEL = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*?)\d*:")

NEGATE = {"eq": "ne", "ne": "eq", "ult": "uge", "uge": "ult", "ugt": "ule", "ule": "ugt", "slt": "sge",
          "sge": "slt", "sgt": "sle", "sle": "sgt",
          "oeq": "une", "une": "oeq", "one": "ueq", "ueq": "one", "olt": "uge", "oge": "ult", "ogt": "ule",
          "ole": "ugt"}
BOUNDARY = {"ult": "ule", "ule": "ult", "ugt": "uge", "uge": "ugt", "slt": "sle", "sle": "slt", "sgt": "sge",
            "sge": "sgt", "olt": "ole", "ole": "olt", "ogt": "oge", "oge": "ogt"}
COMMUTATIVE = {"add", "mul", "and", "or", "xor", "fadd", "fmul"}
#: compare predicates whose result does not change when the operands swap (LangRef icmp / fcmp)
SYMMETRIC_CMPS = {"icmp eq", "icmp ne", "fcmp oeq", "fcmp one", "fcmp ueq", "fcmp une", "fcmp ord", "fcmp uno",
                  "fcmp true", "fcmp false"}
BINOPS = COMMUTATIVE | {"sub", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "fsub", "fdiv"}

_INS = re.compile(r"^  (?:(%[\w.]+) = )?(\w+)")
_BIN = re.compile(r"^(  %[\w.]+ = )(\w+)((?: (?:nuw|nsw|exact|fast|nnan|ninf|nsz|arcp|contract|afn|reassoc))*) "
                  r"(<[^>]+>|\w+) ([^,]+), (.+)$")
_CMP = re.compile(r"^(  %[\w.]+ = )(icmp|fcmp) (\w+) (<[^>]+>|\w+) ([^,]+), (.+)$")
# select operands: a type (``<4 x float>``, ``float``, ``ptr addrspace(1)``) and a value, which may be
# a vector constant ``<float 0x..., ...>`` (commas inside the brackets)
_SEL = re.compile(r"^(  %[\w.]+ = select )(<[^>]+>|i1) ([^,]+), (<[^>]+>|[\w ()]+?) (<[^>]+>|[^, ]+), "
                  r"(<[^>]+>|[\w ()]+?) (<[^>]+>|[^, ]+)$")
_INTC = re.compile(r"\b(i8|i16|i32|i64) (-?\d+)\b")
_ALIGN = re.compile(r", align (\d+)$")
_GEP = re.compile(r"^(  (%[\w.]+) = getelementptr (?:inbounds )?.*, )(i32|i64) (%[\w.]+|-?\d+)$")
_FADD = re.compile(r"^  (%[\w.]+) = fadd (<[^>]+>|\w+) (%[\w.]+), (%[\w.]+)$")
_EPI_OP = re.compile(r"^  (%(?:biased|scaled)\d+) = (fadd|fmul) (<[^>]+>|\w+) (%[\w.]+), (%[\w.]+)$")
_RELU_CMP = re.compile(r"^  (%neg\d+) = fcmp olt (<[^>]+>|\w+) (%[\w.]+), (.+)$")
_EPI_CH = re.compile(r"^(  %epi_ch\d+ = add i32 )(%kbase\d+)(, .+)$")


@dataclass(frozen=True)
class Mutant:
    """One mutation: ``kind``, the 1-based ``line`` it changes, a short ``what``, the mutated ``text``."""

    kind: str
    line: int
    what: str
    text: str


def _body(lines: list) -> range:
    start = next(i for i, ln in enumerate(lines) if ln.startswith("define "))
    end = next(i for i in range(start, len(lines)) if lines[i] == "}")
    return range(start + 1, end)


def sites(text: str, kind: str) -> list:
    """Every site of ``kind`` in ``text``: a list of opaque site keys (line index, detail)."""
    if kind == "promise_lie":
        return LIES.promise_sites(text)
    if kind == "launch_plan":
        return LIES.plan_sites(text)
    if kind == "kloop_cmp":
        return _kloop_sites(text)
    lines = text.split("\n")
    body = _body(lines)
    out = []
    for i in body:
        ln = lines[i]
        if not ln.startswith("  "):
            continue
        m = _INS.match(ln)
        op = m.group(2) if m else ""
        if kind in ("const_inc", "const_dec"):
            if op in ("br", "phi", "ret", "switch") or "@llvm.amdgcn" in ln:
                continue
            out += [(i, k) for k, _ in enumerate(_INTC.finditer(ln.split(", align ")[0]))]
            out += [(i, f"imm{g}") for g in _immediates(ln)]
        elif kind in ("cmp_negate", "cmp_boundary"):
            c = _CMP.match(ln)
            if c and c.group(3) in (NEGATE if kind == "cmp_negate" else BOUNDARY):
                out.append((i, 0))
        elif kind == "swap_operands":
            if (_BIN.match(ln) and _BIN.match(ln).group(2) in BINOPS) or _CMP.match(ln):
                out.append((i, 0))
        elif kind == "drop_sync":
            if ln.strip().startswith("fence ") or "@llvm.amdgcn.s.barrier()" in ln \
                    or "@llvm.amdgcn.s.cluster.barrier()" in ln:
                out.append((i, 0))
        elif kind == "align_double":
            if op in ("load", "store") and _ALIGN.search(ln):
                out.append((i, 0))
        elif kind == "gep_index":
            if _GEP.match(ln):
                out.append((i, 0))
        elif kind == "select_swap":
            if _SEL.match(ln):
                out.append((i, 0))
        elif kind == "loop_bound":
            out += _loop_bound_sites(lines, body, i)
        elif kind == "slab_reverse":
            chain = _fadd_chain(lines, body, i)
            if chain:
                out.append((i, 0))
        elif kind == "epi_twice":
            if _EPI_OP.match(ln):
                out.append((i, 0))
        elif kind == "epi_early":
            if _early_parts(lines, body, i):
                out.append((i, 0))
        elif kind == "bias_group":
            if _EPI_CH.match(ln) and _bias_uses(lines, body, ln):
                out.append((i, 0))
        else:
            raise ValueError(f"unknown mutation kind {kind!r} (kinds: {', '.join(KINDS)})")
    return out


def _kloop_sites(text: str) -> list:
    """``kloop_cmp`` sites: ``(line, sub-kind)`` for every cmp_negate / cmp_boundary /
    select_swap site in a block whose hint is in :data:`KLOOP_BLOCKS`."""
    lines = text.split("\n")
    block, cur = {}, ""
    for i, ln in enumerate(lines):
        m = _LABEL.match(ln)
        if m:
            cur = m.group(1)
        block[i] = cur
    return [(i, k) for k in ("cmp_negate", "cmp_boundary", "select_swap") for i, _ in sites(text, k)
            if block[i] in KLOOP_BLOCKS]


def _immediates(ln: str) -> list:
    """Regex groups (5, 6) of a binary op or compare whose operand is an integer literal."""
    m = _BIN.match(ln) or _CMP.match(ln)
    if not m or (m is _BIN.match(ln) and m.group(2) not in BINOPS) or m.group(4).startswith("<") \
            or m.group(4) in ("float", "half", "bfloat", "double"):
        return []
    return [g for g in (5, 6) if re.fullmatch(r"-?\d+", m.group(g).strip())]


def _defs(lines: list, body: range) -> dict:
    return {m.group(1): i for i in body for m in [_INS.match(lines[i])] if m and m.group(1)}


def _loop_bound_sites(lines, body, i) -> list:
    """The compare feeding a back edge ``br i1 %c, label %B, ...`` in block B (or a
    block above it): ``[(compare line, 0)]``."""
    ln = lines[i]
    m = re.match(r"^  br i1 (%[\w.]+), label %([\w.]+), label %([\w.]+)$", ln)
    if not m:
        return []
    labels = {re.match(r"^([\w.]+):", lines[j]).group(1): j for j in body if re.match(r"^[\w.]+:", lines[j])}
    if not any(t in labels and labels[t] < i for t in (m.group(2), m.group(3))):
        return []
    d = _defs(lines, body).get(m.group(1))
    if d is None or not _CMP.match(lines[d]):
        return []
    return [(d, 0)]


def _fadd_chain(lines, body, i) -> list:
    """Line indices of the fadd chain headed at line ``i`` (``%a = fadd x, y``;
    ``%b = fadd %a, z`` ...; each link's result used only by the next), or [] when
    line ``i`` heads no chain of at least 2 links in one block."""
    m = _FADD.match(lines[i])
    if not m:
        return []
    text_after = "\n".join(lines[j] for j in body)
    prev_uses = [j for j in body if j != i and re.search(re.escape(m.group(3)) + r"\b", lines[j])]
    if prev_uses and _FADD.match(lines[prev_uses[0]]) and _FADD.match(lines[prev_uses[0]]).group(1) == m.group(3):
        return []  # not a head: the first operand is itself a link
    chain = [i]
    j = i
    while True:
        name = _FADD.match(lines[j]).group(1)
        uses = [k for k in body if k != j and re.search(re.escape(name) + r"\b", lines[k])]
        if len(uses) != 1:
            break
        n = _FADD.match(lines[uses[0]])
        if not n or n.group(3) != name or lines[uses[0]].startswith("  ") is False:
            break
        if any(re.match(r"^[\w.]+:", lines[k]) for k in range(j, uses[0])):
            break  # another block
        chain.append(uses[0])
        j = uses[0]
    del text_after
    return chain if len(chain) >= 2 else []


def _bias_uses(lines, body, ln) -> bool:
    """The ``%epi_ch`` value of ``ln`` feeds a bias byte offset (so dropping its group
    base changes a bias load, not a dead value)."""
    name = ln.split(" = ")[0].strip()
    return any(re.match(r"^  %bias_byte\d+ = mul i32 " + re.escape(name) + r",", lines[k]) for k in body)


def _fold_last(lines, body, name: str):
    """``(P, X)`` when ``name`` is defined by ``fadd TY P, X`` (the fold's last
    link), else None."""
    d = _defs(lines, body).get(name)
    m = _FADD.match(lines[d]) if d is not None else None
    return (m.group(3), m.group(4)) if m else None


def _early_parts(lines, body, i):
    """For ``epi_early`` at line ``i``: ``("op", P, X)`` for a bias/scale op on a fold
    result ``P + X``; ``("relu", P, X, select line)`` for a relu compare on one; else None."""
    m = _EPI_OP.match(lines[i])
    if m:
        pr = _fold_last(lines, body, m.group(4))
        return ("op",) + pr if pr else None
    r = _RELU_CMP.match(lines[i])
    if not r:
        return None
    pr = _fold_last(lines, body, r.group(3))
    sel = [k for k in body if re.match(r"^  %relu\d+ = select .* " + re.escape(r.group(1)) + r", ", lines[k])]
    return ("relu",) + pr + (sel[0],) if pr and len(sel) == 1 else None


def _const_step(lines, i, k, kind):
    """``const_inc`` / ``const_dec``: a binary/compare operand (``k`` "grpN") or the
    ``k``-th integer constant of the line, plus or minus 1."""
    ln = lines[i]
    d = 1 if kind == "const_inc" else -1
    if isinstance(k, str):
        g = int(k[3:])
        m = _BIN.match(ln) or _CMP.match(ln)
        v = int(m.group(g)) + d
        lines[i] = ln[:m.start(g)] + str(v) + ln[m.end(g):]
        return lines, f"{m.group(2)} operand {m.group(g)} -> {v}"
    head, sep, tail = ln.partition(", align ")
    c = list(_INTC.finditer(head))[k]
    v = int(c.group(2)) + d
    head = head[:c.start()] + f"{c.group(1)} {v}" + head[c.end():]
    lines[i] = head + sep + tail
    return lines, f"{c.group(0)} -> {c.group(1)} {v}"


def _cmp_predicate(lines, i, k, kind):
    """``cmp_negate`` / ``cmp_boundary``: the predicate replaced (:data:`NEGATE`, :data:`BOUNDARY`)."""
    c = _CMP.match(lines[i])
    new = (NEGATE if kind == "cmp_negate" else BOUNDARY)[c.group(3)]
    lines[i] = f"{c.group(1)}{c.group(2)} {new} {c.group(4)} {c.group(5)}, {c.group(6)}"
    return lines, f"{c.group(3)} -> {new}"


def _swap_operands(lines, i, k, kind):
    """The two operands of a binary operation or compare swapped."""
    ln = lines[i]
    b = _BIN.match(ln)
    if b and b.group(2) in BINOPS:
        lines[i] = f"{b.group(1)}{b.group(2)}{b.group(3)} {b.group(4)} {b.group(6)}, {b.group(5)}"
        return lines, f"{b.group(2)} operands swapped"
    c = _CMP.match(ln)
    lines[i] = f"{c.group(1)}{c.group(2)} {c.group(3)} {c.group(4)} {c.group(6)}, {c.group(5)}"
    return lines, f"{c.group(2)} {c.group(3)} operands swapped"


def _drop_sync(lines, i, k, kind):
    """The barrier call or fence deleted."""
    ln = lines.pop(i)
    return lines, f"deleted `{ln.strip()}`"


def _align_double(lines, i, k, kind):
    """The declared ``align N`` made ``align 2N``."""
    ln = lines[i]
    a = _ALIGN.search(ln)
    n = int(a.group(1))
    lines[i] = ln[:a.start()] + f", align {2 * n}"
    return lines, f"align {n} -> align {2 * n}"


def _plus_one(lines, i, head: str, ty: str, operand: str, tmp: str) -> list:
    """Line ``i`` as ``head`` followed by ``operand + 1``: a constant folded, else the
    value ``tmp`` of an ``add ty operand, 1`` inserted before the line."""
    if operand.lstrip("-").isdigit():
        lines[i] = f"{head}{int(operand) + 1}"
    else:
        lines[i] = f"{head}{tmp}"
        lines.insert(i, f"  {tmp} = add {ty} {operand}, 1")
    return lines


def _gep_index(lines, i, k, kind):
    """A getelementptr's last index plus 1 (a constant; else an inserted add)."""
    g = _GEP.match(lines[i])
    lines = _plus_one(lines, i, f"{g.group(1)}{g.group(3)} ", g.group(3), g.group(4), f"%mut_idx{i}")
    return lines, f"{g.group(2)}: last index + 1"


def _loop_bound(lines, i, k, kind):
    """The back edge compare's second operand plus 1 (a constant; else an inserted add)."""
    c = _CMP.match(lines[i])
    head = f"{c.group(1)}{c.group(2)} {c.group(3)} {c.group(4)} {c.group(5)}, "
    return _plus_one(lines, i, head, c.group(4), c.group(6), f"%mut_bound{i}"), "loop bound + 1"


def _select_swap(lines, i, k, kind):
    """A select's two value operands swapped."""
    s = _SEL.match(lines[i])
    lines[i] = f"{s.group(1)}{s.group(2)} {s.group(3)}, {s.group(6)} {s.group(7)}, {s.group(4)} {s.group(5)}"
    return lines, "select arms swapped"


def _slab_reverse(lines, i, k, kind):
    """The fadd chain headed at line ``i`` (:func:`_fadd_chain`) summed in reverse order."""
    chain = _fadd_chain(lines, _body(lines), i)
    ms = [_FADD.match(lines[j]) for j in chain]
    leaves = [ms[0].group(3)] + [m.group(4) for m in ms]
    names = [m.group(1) for m in ms]
    ty = ms[0].group(2)
    rev = leaves[::-1]
    new = [f"  {names[0]} = fadd {ty} {rev[0]}, {rev[1]}"]
    new += [f"  {names[n]} = fadd {ty} {names[n - 1]}, {rev[n + 1]}" for n in range(1, len(names))]
    for j in chain:
        lines[j] = None
    last = chain[-1]
    lines[last:last + 1] = new
    lines = [x for x in lines if x is not None]
    return lines, f"fadd chain of {len(leaves)} terms summed in reverse"


def _epi_twice(lines, i, k, kind):
    """A bias add or scale multiply of the epilogue applied twice."""
    m = _EPI_OP.match(lines[i])
    tmp = f"{m.group(1)}.twice"
    lines[i:i + 1] = [f"  {tmp} = {m.group(2)} {m.group(3)} {m.group(4)}, {m.group(5)}",
                      f"  {m.group(1)} = {m.group(2)} {m.group(3)} {tmp}, {m.group(5)}"]
    return lines, f"{m.group(1)} ({m.group(2)}) applied twice"


def _epi_early(lines, i, k, kind):
    """The epilogue op (or relu) on ``P + X`` moved before the last slab: ``epi(P) + X``
    (:func:`_early_parts`)."""
    ln = lines[i]
    parts = _early_parts(lines, _body(lines), i)
    if parts[0] == "op":
        m = _EPI_OP.match(ln)
        _, p, x = parts
        tmp = f"{m.group(1)}.early"
        lines[i:i + 1] = [f"  {tmp} = {m.group(2)} {m.group(3)} {p}, {m.group(5)}",
                          f"  {m.group(1)} = fadd {m.group(3)} {tmp}, {x}"]
        return lines, f"{m.group(1)} ({m.group(2)}) applied before the last slab {x} is added"
    _, p, x, k = parts
    r = _RELU_CMP.match(ln)
    s = lines[k]
    name = s.split(" = ")[0].strip()
    tmp = f"{name}.early"
    lines[i] = f"  {r.group(1)} = fcmp olt {r.group(2)} {p}, {r.group(4)}"
    ty = r.group(2)
    head, _, _ = s.rpartition(f"{ty} {r.group(3)}")
    lines[k:k + 1] = [head.replace(f"  {name} = ", f"  {tmp} = ", 1) + f"{ty} {p}",
                      f"  {name} = fadd {ty} {tmp}, {x}"]
    return lines, f"relu {name} applied before the last slab {x} is added"


def _bias_group(lines, i, k, kind):
    """The bias channel without its group base (``0 + n``)."""
    m = _EPI_CH.match(lines[i])
    lines[i] = f"{m.group(1)}0{m.group(3)}"
    return lines, f"bias channel without the group base {m.group(2)}"


#: kind -> ``(lines, line index, site detail, kind) -> (new lines, what)`` of the text-level kinds.
_APPLY = {
    "const_inc": _const_step, "const_dec": _const_step,
    "cmp_negate": _cmp_predicate, "cmp_boundary": _cmp_predicate,
    "swap_operands": _swap_operands, "drop_sync": _drop_sync, "align_double": _align_double,
    "gep_index": _gep_index, "loop_bound": _loop_bound, "select_swap": _select_swap,
    "slab_reverse": _slab_reverse, "epi_twice": _epi_twice, "epi_early": _epi_early,
    "bias_group": _bias_group,
}


def apply(text: str, kind: str, site) -> Mutant:
    """The mutant of ``text`` at ``site`` (from :func:`sites`). Raises ValueError for an unknown ``kind``."""
    if kind == "promise_lie":
        new, what = LIES.promise_apply(text, site)
        return Mutant(kind, site[0] + 1, what, new)
    if kind == "launch_plan":
        return Mutant(kind, site[0] + 1, f"plan {site[1]} one unit off", text)
    if kind == "kloop_cmp":
        m = apply(text, site[1], (site[0], 0))
        return Mutant(kind, m.line, f"{site[1]}: {m.what}", m.text)
    step = _APPLY.get(kind)
    if step is None:
        raise ValueError(f"unknown mutation kind {kind!r}")
    i, k = site
    lines, what = step(text.split("\n"), i, k, kind)
    return Mutant(kind, i + 1, what, "\n".join(lines))


def equivalent_reason(original: str, m: Mutant) -> str:
    """Why ``m`` is equivalent to ``original`` (proved by a rule), or '' when it is not known to be."""
    if m.kind == "launch_plan":
        return ""  # the plan changes, not the IR
    if m.text == original:
        return "the text does not change"
    if m.kind == "swap_operands" and m.what.split(" ")[0] in COMMUTATIVE:
        return f"{m.what.split(' ')[0]} is commutative"
    if m.kind == "swap_operands" and " ".join(m.what.split(" ")[:2]) in SYMMETRIC_CMPS:
        return f"{' '.join(m.what.split(' ')[:2])} is symmetric in its operands"
    if m.kind == "slab_reverse" and m.what.startswith("fadd chain of 2 "):
        return "a two-term fadd is commutative"
    if m.kind == "promise_lie" and m.what.startswith("exact_shift:") and _shift_of_multiple(m.text, m.line - 1):
        return "exact holds: the shifted operand is a product by a multiple of 2^shift (no set bit shifted out)"
    if m.kind == "promise_lie" and m.what.startswith(("exact_div:", "exact_shift:")) and \
            re.match(r"^  %[\w.]+ = (?:udiv|sdiv|lshr|ashr) exact i\d+ 0, ", m.text.split("\n")[m.line - 1]):
        return "exact holds: a literal 0 dividend is a multiple of every divisor"
    if m.kind in ("const_inc", "const_dec") and _times_zero(original, m.text, m.line - 1):
        return "a product with a literal 0 operand: 0 whatever the other operand"
    if m.kind in ("const_inc", "const_dec") and _same_literal_value(original, m.text, m.line - 1):
        return "an operation of two literals whose value does not change"
    if m.kind in ("cmp_boundary", "kloop_cmp") and m.what.startswith(("cmp_boundary", "ult", "ule", "ugt", "uge",
                                                                         "slt", "sle", "sgt", "sge")) \
            and _min_max_idiom(m.text, m.line - 1):
        return "the compare only picks between its own two operands (a min/max), equal at the boundary"
    return ""


def _shift_of_multiple(text: str, i: int) -> bool:
    """Line ``i`` is ``lshr/ashr exact iN %v, s`` (or a literal multiple of 2^s) and ``%v`` is defined as ``mul iN %x, C`` (or
    ``C, %x``) with C a multiple of 2^s, or ``shl iN %x, t`` with t >= s: the low s bits
    are zero, so ``exact`` is a true promise."""
    lines = text.split("\n")
    m = re.match(r"^  %[\w.]+ = (?:lshr|ashr) exact (i\d+) (%[\w.]+|-?\d+), (\d+)$", lines[i])
    if not m:
        return False
    v, sh = m.group(2), int(m.group(3))
    if not v.startswith("%"):
        return int(v) % (1 << sh) == 0
    d = next((ln for ln in lines if ln.startswith(f"  {v} = ")), "")
    mm = re.match(r"^  %[\w.]+ = mul(?: nuw| nsw)* i\d+ (?:%[\w.]+, (\d+)|(\d+), %[\w.]+)$", d)
    if mm:
        return int(mm.group(1) or mm.group(2)) % (1 << sh) == 0
    ms = re.match(r"^  %[\w.]+ = shl(?: nuw| nsw)* i\d+ %[\w.]+, (\d+)$", d)
    return bool(ms) and int(ms.group(1)) >= sh


def _times_zero(original: str, text: str, i: int) -> bool:
    """Line ``i`` is ``mul iN a, b`` with a literal 0 operand both in ``original`` and in
    the mutant ``text`` (a constant of the product changed, the 0 kept): both are 0."""
    pat = r"^  %[\w.]+ = mul(?: nuw| nsw)* i\d+ (%[\w.]+|-?\d+), (%[\w.]+|-?\d+)$"
    a = re.match(pat, original.split("\n")[i])
    b = re.match(pat, text.split("\n")[i])
    return bool(a and b) and "0" in a.groups() and "0" in b.groups()


_LIT_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
            "udiv": lambda a, b: a // b if b else None, "urem": lambda a, b: a % b if b else None,
            "shl": lambda a, b: a << b, "lshr": lambda a, b: a >> b,
            "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}


def _same_literal_value(original: str, text: str, i: int) -> bool:
    """Line ``i`` is ``OP iN a, b`` with two non-negative literal operands (no flags), in
    ``original`` and in the mutant, and both evaluate (modulo 2^N, shift amounts below
    N, divisors non-zero) to the same value: e.g. ``udiv i32 32, 8`` -> ``udiv i32 33, 8``."""
    pat = r"^  %[\w.]+ = (\w+) i(\d+) (\d+), (\d+)$"
    vals = []
    for t in (original, text):
        m = re.match(pat, t.split("\n")[i])
        if not m or m.group(1) not in _LIT_OPS:
            return False
        n, a, b = int(m.group(2)), int(m.group(3)), int(m.group(4))
        if a >= 1 << n or b >= 1 << n or (m.group(1) in ("shl", "lshr") and b >= n):
            return False
        v = _LIT_OPS[m.group(1)](a, b)
        if v is None:
            return False
        vals.append(v % (1 << n))
    return vals[0] == vals[1]


def _min_max_idiom(text: str, i: int) -> bool:
    """Line ``i`` is ``%c = icmp P a, b`` and %c's only use is ``select %c, a, b`` or
    ``select %c, b, a``: at a == b both arms are equal, so a strict/non-strict change
    of P selects the same value."""
    lines = text.split("\n")
    c = _CMP.match(lines[i])
    if not c:
        return False
    name = c.group(1).strip().split(" ")[0]
    a, b = c.group(5).strip(), c.group(6).strip()
    uses = [ln for k, ln in enumerate(lines) if k != i and re.search(re.escape(name) + r"\b", ln)]
    if len(uses) != 1:
        return False
    s = _SEL.match(uses[0])
    return bool(s) and s.group(3).strip() == name and {s.group(5), s.group(7)} == {a, b}


def mutants(text: str, kinds=KINDS) -> list:
    """Every mutant of ``text`` for ``kinds``, in (kind, site) order."""
    return [apply(text, k, s) for k in kinds for s in sites(text, k)]

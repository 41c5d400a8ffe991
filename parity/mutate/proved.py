"""Mutants proved equivalent from the IR itself (docs/sim.md, "Mutation lane": *proved*
reasons), besides the literal rules of parity/mutate/operators.py:

* :func:`dead_reason` (before any oracle runs): the mutated instruction's value reaches
  no store, call, load, branch or return (LLVM's dead-code elimination removes it), and
  the instruction cannot trap (a division only by a non-zero literal);
* :func:`abstract_reason` (on a survivor): the proof's abstract interpreter
  (parity/proof/interpret.py: known low bits and an unsigned interval per integer
  value, to a fixpoint over the whole kernel) run on the honest kernel, with the
  launch facts of :data:`ADMISSION`, shows that the mutated instruction gives the
  honest value for every value its operands can take: both the same constant; a
  compare that agrees at every admissible operand value; a ``select`` arm that is
  never chosen; a flag (``nuw``, ``nsw``, ``exact``, ``disjoint``) that the operands
  justify.

Why the honest kernel's abstract values suffice: up to the first instruction where the
two kernels differ, both executions are the same, so the mutated instruction sees
operand values the honest kernel's analysis covers; if it then gives the honest value,
the executions never differ (induction over the execution).
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

from parity.proof import domain as D
from parity.proof import interpret as PI
from parity.proof.assumptions import PTR_ARG_ALIGN
from parity.mutate import guard as GUARD
from parity.mutate import reach as REACH

#: a defining line: name and op (a ``tail`` / ``notail`` / ``musttail`` marker skipped, so a
#: marked call is a ``call``: a root, never a pure value)
_DEF = re.compile(r"^  %([\w.$-]+) = (?:(?:tail|notail|musttail) )?(\w+)")
_NAME = re.compile(r"%([\w.$-]+)")
#: defining instructions kept as roots: they touch memory or the machine (a call may
#: have effects; a dead load may still fault)
_ROOT_OPS = {"call", "load", "atomicrmw", "cmpxchg"}
_DIVS = {"udiv", "sdiv", "urem", "srem"}


@lru_cache(maxsize=8)
def live_names(text: str) -> frozenset:
    """SSA names (without ``%``) whose value reaches a side effect of the kernel in
    ``text``: operands of every instruction without a result (store, br, ret, fence,
    void call) and of every call / load / atomic, closed under "is an operand of"."""
    defs, work = {}, []
    for ln in text.split("\n"):
        if not ln.startswith("  ") or ln.startswith("  ;"):
            continue
        m = _DEF.match(ln)
        rhs = ln.partition(" = ")[2] if m else ln
        names = _NAME.findall(rhs)
        if m and m.group(2) not in _ROOT_OPS:
            defs[m.group(1)] = names
        else:
            work += names
    live = set()
    while work:
        n = work.pop()
        if n not in live:
            live.add(n)
            work += defs.get(n, ())
    return frozenset(live)


def _mutated_def(text: str, line: int) -> tuple[str, str, str]:
    """(name, op, line) of the instruction a mutant changes (after an inserted ``%mut_*``
    line, the one it feeds); ('', '', line) when the line defines nothing."""
    lines = text.split("\n")
    i = line - 1
    if lines[i].startswith("  %mut_") and i + 1 < len(lines):
        i += 1
    m = _DEF.match(lines[i])
    return (m.group(1), m.group(2), lines[i]) if m else ("", "", lines[i])


def _may_trap(line: str) -> bool:
    """The defining ``line`` touches memory or the machine (a root op), or divides by a value
    that may be 0 (UB even when its result is dead)."""
    m = _DEF.match(line)
    op = m.group(2) if m else ""
    return op in _ROOT_OPS or (op in _DIVS and not re.search(r", [1-9]\d*$", line))


def dead_reason(original: str, kind: str, text: str, line: int) -> str:
    """Why the mutant (``text``, changed at 1-based ``line``) is equivalent because the
    changed value is dead in ``original``, or ''."""
    if kind in ("launch_plan", "drop_sync"):
        return ""
    name, op, ln = _mutated_def(text, line)
    if not name or name.startswith("mut_") or _may_trap(ln):
        return ""
    if name in live_names(original):
        return ""
    return f"dead value: %{name} reaches no store, load, call, branch or return (dead-code elimination)"


# -- the abstract values ---------------------------------------------------------------

#: launch facts of conv_implicit_gemm admitted problems (python_engine/kernels/conv_launch.py
#: ``validate``, twin cpp_engine/src/kernels/conv_launch.cpp): vector_a and vector_b divide
#: cpg (so cpg >= lcm and Kgemm = Y*X*cpg is a multiple of it); every filter, stride and
#: dilation extent is at least 1 (``problem_reason``). Padded-pixel vector_a (3, 5, 6, 7)
#: admit only cpg = vector_a and are left out (Kgemm is then Y*X*slot).
ADMISSION = ("conv_launch admission: lcm(vector_a, vector_b) divides cpg; Y, X, strides, dilations >= 1; "
             "a cluster binary (split_k_cluster S) launches ks_count = S slices; the cshuffle epilogue "
             "and the cluster fold admit K and kpg multiples of 4 only (they store 4 output channels "
             "per vector; python_engine/kernels/conv_launch.py)")


def _arg_facts(family: str, spec: dict) -> dict:
    """{argument: (low zero bits, lower bound, upper bound or None)} of :data:`ADMISSION`
    for ``spec``."""
    if family != "conv_implicit_gemm":
        return {}
    facts = {n: (0, 1, None) for n in ("Y", "X", "stride_h", "stride_w", "dil_h", "dil_w", "groups")}
    S = spec.get("split_k_cluster") or 0
    if S:
        facts.update(ks_count=(0, S, S))
    if S or spec.get("epilogue") == "cshuffle":
        facts.update(K=(2, 4, None), kpg=(2, 4, None))
    va, vb = spec.get("vector_a") or 1, spec.get("vector_b") or 1
    if va in (3, 5, 6, 7):
        return facts
    lcm = va * vb // math.gcd(va, vb)
    bits = D.tz(lcm, 32)
    facts.update(cpg=(bits, lcm, None), Kgemm=(bits, lcm, None))
    return facts


def _interp(job):
    """The proof's interpreter run on ``job``'s honest kernel with its admission facts."""
    return _honest(job.original, tuple(sorted(_arg_facts(job.family, job.spec).items())))


@lru_cache(maxsize=32)
def _honest(original: str, facts: tuple, tid: tuple | None = None):
    """The proof's interpreter run on the honest kernel with ``facts`` seeded, and the
    work-item id narrowed to ``tid`` (first, last) when given (None when the proof cannot
    read the kernel)."""
    try:
        mod = PI.read(original)
        it = PI.Interp(mod, {}, PTR_ARG_ALIGN, tid)
        for name, (bits, lo, hi) in facts:
            v = it.env.get(name)
            if isinstance(v, tuple):
                it.env[name] = (v[0], max(v[1], bits), 0, lo, D.MASK[v[0]] if hi is None else hi)
        it.run()
    except (PI.ProofParseError, RecursionError):
        return None
    return it


def _admits(v, x: int) -> bool:
    w, k, r, lo, hi = v
    return lo <= x <= hi and (x & D.MASK[k]) == r


def _admitted_near(v, points: list) -> list:
    """The values ``v`` stands for in a window around ``points``, and one on each side of
    the window (the nearest admitted value), where a compare against literals in
    ``points`` is constant."""
    w, k, r, lo, hi = v
    step = 1 << k
    wins = sorted({(max(0, p % (1 << w) - 2), min(D.MASK[w], p % (1 << w) + 2)) for p in points})
    out = [x for a, b in wins for x in range(a, b + 1) if _admits(v, x)]
    edges = [0] + [e for a, b in wins for e in (a, b + 1)] + [D.MASK[w] + 1]
    for a, b in zip(edges[0::2], edges[1::2]):   # the gaps between windows: one value each
        x = max(a, lo)
        x += (r - x) % step
        if x < b and _admits(v, x):
            out.append(x)
    return out


_PRED = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "ult": lambda a, b: a < b,
         "ule": lambda a, b: a <= b, "ugt": lambda a, b: a > b, "uge": lambda a, b: a >= b}
_CMP = re.compile(r"^  %[\w.$-]+ = icmp (\w+) (i\d+) (%[\w.$-]+|-?\d+), (%[\w.$-]+|-?\d+)$")


def _cmp_values(it, line: str):
    """(predicate, width, left, right) of an ``icmp`` line over unsigned integers, the
    operands as abstract values; None when not one."""
    m = _CMP.match(line)
    if not m or m.group(1) not in _PRED:
        return None
    w = int(m.group(2)[1:])
    vals = [it.val(t, w) for t in (m.group(3), m.group(4))]
    if any(not isinstance(v, tuple) for v in vals):
        return None
    return m.group(1), w, vals[0], vals[1]


def _literal_compare(it, line: str):
    """``(v, lit, f)`` of a compare with one literal operand ``lit``: ``v`` the other
    operand's abstract value, ``f(x)`` the compare's result at x; None when not of that shape."""
    c = _cmp_values(it, line)
    if c is None:
        return None
    p, w, a, b = c
    if D.is_const(a) == D.is_const(b):
        return None
    if D.is_const(b):
        return a, b[2], lambda x: _PRED[p](x, b[2])
    return b, a[2], lambda x: _PRED[p](a[2], x)


def _results(lc, points: list) -> dict:
    """{x: f(x)} of :func:`_literal_compare`'s ``lc`` over the admitted values near
    ``points`` and its own literal (and one in each gap between those windows)."""
    v, lit, f = lc
    return {x: f(x) for x in _admitted_near(v, points + [lit])}


def _constant(it, line: str):
    """True / False when the literal compare ``line`` has that result for every admitted
    value of its other operand (or both operands are constants), else None."""
    c = _cmp_values(it, line)
    if c is not None and D.is_const(c[2]) and D.is_const(c[3]):
        return bool(_PRED[c[0]](c[2][2], c[3][2]))
    lc = _literal_compare(it, line)
    vals = set(_results(lc, []).values()) if lc else set()
    return vals.pop() if len(vals) == 1 else None


def _same_compare(it, honest: str, mutant: str) -> str:
    """A compare whose mutant agrees with it for every admitted operand value."""
    h, m = _literal_compare(it, honest), _literal_compare(it, mutant)
    if h and m and h[0] == m[0]:
        pts = [h[1], m[1]]
        th, tm = _results(h, pts), _results(m, pts)
        if th and th == tm:
            return "the compare gives the honest result for every admitted value of its operand"
    ch, cm = _cmp_values(it, honest), _cmp_values(it, mutant)
    if ch and cm and all(D.is_const(v) for v in ch[2:] + cm[2:]) and \
            _PRED[ch[0]](ch[2][2], ch[3][2]) == _PRED[cm[0]](cm[2][2], cm[3][2]):
        return "both compares have constant operands on every admitted launch, with the same result"
    if ch and cm and ch[2:] == cm[2:] and not D.is_const(ch[2]) and not D.is_const(ch[3]):
        p, q = ch[0], cm[0]
        strict = {frozenset(("ult", "ule")), frozenset(("ugt", "uge"))}
        if frozenset((p, q)) in strict and _never_equal(ch[2], ch[3]):
            return "the predicates differ only at equal operands, which never occur"
    return ""


def _never_equal(a, b) -> bool:
    """No value both abstract values stand for: disjoint intervals or known low bits."""
    k = min(a[1], b[1])
    return a[4] < b[3] or b[4] < a[3] or (a[2] & D.MASK[k]) != (b[2] & D.MASK[k])


def _cond_value(it, lines: list, cond: str):
    """True / False when the i1 ``cond`` is constant over every admitted value (the
    interpreter's own i1 value, or an icmp against a literal), else None."""
    v = it.env.get(cond[1:])
    if isinstance(v, tuple) and v[0] == 1 and D.is_const(v):
        return bool(v[2])
    d = next((ln for ln in lines if ln.startswith(f"  {cond} = icmp ")), None)
    return _constant(it, d) if d else None


_SEL = re.compile(r"^  %[\w.$-]+ = select i1 (%[\w.$-]+), (i\d+) (\S+), (i\d+) (\S+)$")


def _unchosen_arm(it, original: str, honest: str, mutant: str) -> str:
    """A ``select`` whose changed arm is never chosen (its condition is constant)."""
    h, m = _SEL.match(honest), _SEL.match(mutant)
    if not (h and m) or h.group(1) != m.group(1):
        return ""
    c = _cond_value(it, original.split("\n"), h.group(1))
    if c is True and h.group(3) == m.group(3):
        return "the select's false arm is never chosen (its condition holds for every admitted value)"
    if c is False and h.group(5) == m.group(5):
        return "the select's true arm is never chosen (its condition fails for every admitted value)"
    return ""


def _value(it, line: str, ln: int):
    """The abstract value of an integer binary instruction ``line`` over the honest
    operands (flags not trusted), or None."""
    try:
        x = PI.decode_instruction(line, ln)
    except PI.ProofParseError:
        return None
    if x is None or x[2] not in PI.INT_BIN:
        return None
    _, _, op, _, (flags, w, a, b) = x
    A, B = it.val(a, w), it.val(b, w)
    if not isinstance(A, tuple) or not isinstance(B, tuple):
        return None
    if (op in _DIVS and B[3] == 0) or (op in ("shl", "lshr", "ashr") and B[4] >= w):
        return None   # a divisor that may be 0, a shift by the width or more: UB / poison
    return PI.eval_binop(op, A, B), op, flags, A, B


def _same_constant(it, honest: str, mutant: str, ln: int) -> str:
    h, m = _value(it, honest, ln), _value(it, mutant, ln)
    if h and m and h[0][3] == h[0][4] == m[0][3] == m[0][4]:
        return f"the same constant {h[0][3]} on every admitted launch"
    return ""


def _flag_holds(it, mutant: str, ln: int) -> str:
    """A flag the promise lie adds that the operands' abstract values justify."""
    v = _value(it, mutant, ln)
    if not v:
        return ""
    _, op, flags, A, B = v
    w = A[0]
    ok = {"nuw": {"add": lambda: A[4] + B[4] <= D.MASK[w], "sub": lambda: A[3] >= B[4],
                  "mul": lambda: A[4] * B[4] <= D.MASK[w],
                  "shl": lambda: D.is_const(B) and B[2] < w and A[4] << B[2] <= D.MASK[w]},
          "exact": {"udiv": lambda: _divides(B, A), "lshr": lambda: D.is_const(B) and D.align_bits(A) >= B[2]},
          "disjoint": {"or": lambda: D.disjoint(A, B)}}
    for f in flags:
        test = ok.get(f, {}).get(op)
        if test is not None and test():
            return f"`{f}` holds: the operands' known bits and intervals rule out {_BROKEN[f]}"
    return ""


_BROKEN = {"nuw": "unsigned wrap", "exact": "a remainder", "disjoint": "a common set bit"}


def _divides(B, A) -> bool:
    """The divisor ``B`` leaves no remainder of any value ``A`` stands for: ``A`` is 0 (a
    divisor 0 is UB in the honest kernel too), or ``B`` a literal that divides ``A``."""
    if A[4] == 0:
        return True
    if not D.is_const(B) or B[2] == 0:
        return False
    d = B[2]
    if A[3] == A[4]:
        return A[3] % d == 0
    return d & (d - 1) == 0 and D.align_bits(A) >= d.bit_length() - 1


def compare_constant(job):
    """True / False when the mutant's changed line is an ``icmp`` against a literal that
    has that value for every admitted value of its other operand (the honest kernel's
    abstract values), else None."""
    it = _interp(job)
    return _constant(it, job.mutant.text.split("\n")[job.mutant.line - 1]) if it else None


_BR2 = re.compile(r"^  br i1 (%[\w.$-]+), label %([\w.$-]+), label %([\w.$-]+)$")
_BR1 = re.compile(r"^  br label %([\w.$-]+)$")


def block_labels(text: str) -> dict:
    """Line number (1-based) -> the label of its block, for every instruction line (two-space
    indented) inside a ``define ... {`` ... ``}`` body of the module ``text``; the entry block
    without a label is ''. The one block map of parity/mutate (argued, proved, prioritise)."""
    out, cur, inside = {}, None, False
    for i, s in enumerate(text.split("\n"), 1):
        if s.startswith("define "):
            inside, cur = True, ""
        elif s == "}":
            inside = False
        elif inside and s.split(";")[0].rstrip().endswith(":") and not s.startswith(" "):
            cur = s.split(";")[0].rstrip()[:-1]   # a label, with or without LLVM's `; preds = ...`
        elif inside and s.startswith("  ") and s.strip():
            out[i] = cur
    return out


def _unreached_block(it, original: str, ln: int) -> str:
    """Why honest line ``ln`` never runs: its block is not reachable from the entry when a
    conditional branch whose condition is constant over every admitted value
    (:func:`_cond_value`) follows only its taken edge; '' when it may run. A mutant there
    never executes its change, so the two executions are the same."""
    lines = original.split("\n")
    start = next((i for i, s in enumerate(lines) if s.startswith("define ")), None)
    if start is None or not 0 < ln <= len(lines):
        return ""
    label_of, edges, why = block_labels(original), {}, {}
    for i in range(start + 1, len(lines)):
        s = lines[i]
        if s == "}":
            break
        if s.endswith(":") and not s.startswith(" "):
            edges.setdefault(s[:-1], [])
            continue
        cur = label_of.get(i + 1)
        b2, b1 = _BR2.match(s), _BR1.match(s)
        if b2:
            c = _cond_value(it, lines, b2.group(1))
            edges[cur] = [b2.group(2)] if c is True else [b2.group(3)] if c is False else [b2.group(2), b2.group(3)]
            if c is not None:
                why[cur] = f"`{s.strip()}` always goes to %{edges[cur][0]}"
        elif b1:
            edges[cur] = [b1.group(1)]
    if label_of.get(ln) is None or not edges:
        return ""
    seen, todo = set(), [next(iter(edges))]
    while todo:
        b = todo.pop()
        if b not in seen:
            seen.add(b)
            todo += edges.get(b, [])
    block = label_of[ln]
    if block in seen:
        return ""
    return (f"block %{block} is never entered for an admitted problem ("
            f"{'; '.join(why.values()) or 'no edge reaches it'})")


def abstract_reason(job) -> str:
    """Why the surviving mutant of ``job`` (parity/mutate/run.py ``Job``) gives the honest
    value on every admitted launch, proved with the proof's abstract values; '' when not."""
    m = job.mutant
    if m.kind == "launch_plan":
        return ""
    it = _interp(job)
    if it is None:
        return ""
    ln = m.line
    unreached = _unreached_block(it, job.original, ln)
    if unreached:
        return unreached
    hl, ml = job.original.split("\n")[ln - 1], m.text.split("\n")[ln - 1]
    if ml.startswith("  %mut_") or hl.split(" = ")[0] != ml.split(" = ")[0]:
        return ""
    if m.kind == "promise_lie":
        return _flag_holds(it, ml, ln)
    return _value_rules(it, job, hl, ml, ln) or _guarded(job, hl, ml, ln)


def _value_rules(it, job, hl: str, ml: str, ln: int) -> str:
    """The rules that show the mutated instruction gives the honest value, on ``it``."""
    return (_same_compare(it, hl, ml) or _unchosen_arm(it, job.original, hl, ml)
            or _same_constant(it, hl, ml, ln) or _masked_bits(it, hl, ml, ln)
            or _same_on_every_value(it, hl, ml, ln, job.original)
            or _offset_uses(it, job.original, hl, ml) or _only_unchosen(it, job, ml))


def _guarded(job, hl: str, ml: str, ln: int) -> str:
    """:func:`_value_rules` on the interpreter narrowed to the work-items that pass a guard
    behind which every effect of the mutated value lies (parity/mutate/guard.py). The
    mutated instruction must not trap (a root op or a division by a value that may be 0)
    nor be a phi, in either kernel."""
    h, m = _DEF.match(hl), _DEF.match(ml)
    it = _interp(job) if h and m else None
    wgs = it.mod.wgs if it is not None else None
    if not wgs or wgs % GUARD.WAVE or m.group(2) == "phi" or _may_trap(hl) or _may_trap(ml):
        return ""
    facts = tuple(sorted(_arg_facts(job.family, job.spec).items()))
    for g in GUARD.guards(job.original, h.group(1)):
        tids = GUARD.passing_tids(lambda t: _honest(job.original, facts, (t, t)), g, wgs)
        narrowed = _honest(job.original, facts, tids) if tids else None
        why = _value_rules(narrowed, job, hl, ml, ln) if narrowed is not None else ""
        if why:
            return (f"for the work-items {tids[0]}..{tids[1]} that pass %{g} (behind which every "
                    f"effect of the value lies): {why}")
    return ""


#: the most operand values :func:`_same_on_every_value` enumerates
ENUMERATE_MAX = 256
_LIT_OP = re.compile(r"^  %[\w.$-]+ = (\w+) (i\d+) (%[\w.$-]+|-?\d+), (%[\w.$-]+|-?\d+)$")


def _values(v) -> list | None:
    """Every value the abstract integer ``v`` stands for (its interval stepped by its known
    low bits), or None when more than :data:`ENUMERATE_MAX`."""
    w, k, r, lo, hi = v
    step = 1 << k if k < w else 1
    first = lo + ((r - lo) % step if k < w else 0)
    if first > hi or (hi - first) // step + 1 > ENUMERATE_MAX:
        return None if first <= hi else []
    return list(range(first, hi + 1, step))


_INT_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
            "udiv": lambda a, b: a // b, "urem": lambda a, b: a % b, "shl": lambda a, b: a << b,
            "lshr": lambda a, b: a >> b, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
            "xor": lambda a, b: a ^ b}


def _lit_form(line: str):
    """(op, width, SSA operand, literal, literal on the right) of an integer op of one SSA
    operand and one literal without flags, else None."""
    m = _LIT_OP.match(line)
    if not m or m.group(1) not in PI.INT_BIN:
        return None
    a, b = m.group(3), m.group(4)
    if a.startswith("%") and not b.startswith("%"):
        return m.group(1), int(m.group(2)[1:]), a, int(b), True
    if b.startswith("%") and not a.startswith("%"):
        return m.group(1), int(m.group(2)[1:]), b, int(a), False
    return None


def _one_mask_use(original: str, name: str, w: int) -> int | None:
    """The literal ``c`` when the only use of ``%name`` is ``and iW %name, c`` (either
    operand order), else None."""
    uses = REACH.uses_of(original).get(name, ())
    if len(uses) != 1:
        return None
    m = re.match(rf"^i{w} (%[\w.$-]+|-?\d+), (%[\w.$-]+|-?\d+)$", uses[0][2]) if uses[0][1] == "and" else None
    if not m or f"%{name}" not in m.group(1, 2):
        return None
    lit = m.group(2) if m.group(1) == f"%{name}" else m.group(1)
    return int(lit) if re.match(r"^-?\d+$", lit) else None


def _same_on_every_value(it, honest: str, mutant: str, ln: int, original: str = "") -> str:
    """An integer op of one SSA operand and one literal (no flags) that the mutant changes
    (the literal, or the operand order), equal to the honest result at every value the
    operand can take (at most :data:`ENUMERATE_MAX` of them, enumerated): ``udiv %rk, 8``
    -> ``7`` with rk in {0, 8, 16, 24}. With ``original`` (the honest kernel) the results
    may differ where the value's one use, ``and`` with a literal, masks the difference
    away: the wavelet loader's ``swq = lshr %row, 2`` -> ``3`` where ``swq & 3`` agrees.
    A divisor or shift the mutant makes UB or poison is not equal."""
    hf, mf = _lit_form(honest), _lit_form(mutant)
    if not hf or not mf or hf[0] != mf[0] or hf[1] != mf[1] or hf[2] != mf[2]:
        return ""
    op, w, x = hf[0], hf[1], hf[2]
    v = it.val(x, w)
    vals = _values(v) if isinstance(v, tuple) else None
    if not vals:
        return ""
    mask = D.MASK[w]

    def ev(form, a):
        _, _, _, c, right = form
        a, b = (a & mask, c & mask) if right else (c & mask, a & mask)
        if op in _DIVS and b == 0 or op in ("shl", "lshr", "ashr") and b >= w or op in ("sdiv", "srem", "ashr"):
            return None   # UB, poison, or a signed op this rule does not model
        # only ``op`` is evaluated: an eager table computed ``a << b`` for an `and` with b = 2**32 - 32
        # (a MemoryError that failed CI's mutate lane in stop 49)
        fn = _INT_OPS.get(op)
        return None if fn is None else fn(a, b) & mask
    pairs = [(ev(hf, a), ev(mf, a)) for a in vals]
    if any(h is None or m is None for h, m in pairs):
        return ""
    shown = f"{x} can take ({', '.join(map(str, vals[:4]))}{', ...' if len(vals) > 4 else ''})"
    if all(h == m for h, m in pairs):
        return f"the same result at each of the {len(vals)} values {shown}"
    dst = _DEF.match(honest)
    keep = _one_mask_use(original, dst.group(1), w) if original and dst else None
    if keep is not None and all((h ^ m) & keep == 0 for h, m in pairs):
        return f"the same result after its one use, `and` with {keep}, at each of the {len(vals)} values {shown}"
    return ""


_AND_LIT = re.compile(r"^  %[\w.$-]+ = and (i\d+) (%[\w.$-]+), (-?\d+)$")


def _masked_bits(it, honest: str, mutant: str, ln: int) -> str:
    """``and %x, c`` made ``and %x, c'`` where every bit of ``c xor c'`` is known zero in %x
    (its known low bits, or above its interval's highest bit): the same result."""
    h, m = _AND_LIT.match(honest), _AND_LIT.match(mutant)
    if not h or not m or h.group(1, 2) != m.group(1, 2):
        return ""
    w = int(h.group(1)[1:])
    x = it.val(h.group(2), w)
    if not isinstance(x, tuple):
        return ""
    _, k, r, _, hi = x
    maybe_set = (D.MASK[w] & ~D.MASK[k] | r) & D.MASK[hi.bit_length()]
    diff = (int(h.group(3)) ^ int(m.group(3))) & D.MASK[w]
    if diff & maybe_set:
        return ""
    return f"the mask bits the mutant changes ({diff:#x}) are known zero in {h.group(2)}"


def _offset_uses(it, original: str, honest: str, mutant: str) -> str:
    """An add/sub literal changed by delta whose every use drops the delta (parity/mutate/reach.py)."""
    d = REACH.literal_delta(honest, mutant)
    if d and REACH.offset_uses(it, original, d[0], d[2]):
        return (f"%{d[0]} one {d[2]:+d} off: every use (compares whose other operand's known bits "
                "or interval keep the result, shifts that drop it) gives the honest result")
    return ""


def _only_unchosen(it, job, mutant: str) -> str:
    """The mutated value reaches effects only through never-chosen select arms (reach.py); the
    instruction must not trap (a division only by a non-zero literal)."""
    name, op, ln = _mutated_def(job.mutant.text, job.mutant.line)
    if not name or op in _ROOT_OPS or (op in _DIVS and not re.search(r", [1-9]\d*$", ln)):
        return ""
    return REACH.unchosen_only(it, job.original, name)

"""The mutation kinds of issue 34 item 6 that are not arithmetic: promise lies and
launch-plan slips (docs/sim.md, "Mutation lane"). parity/mutate/operators.py
dispatches ``promise_lie`` and ``launch_plan`` here; this module imports nothing
of the mutation lane (no circle).

``promise_lie``: one promise of the promise table (docs/sim.md, "Promises") added
where the IR does not justify it. Sites (``(line index, sub-kind)``):

=====================  ==========================================================
sub-kind               the lie
=====================  ==========================================================
``nuw_add_neg``        ``nuw`` on ``add iN x, -c`` (wraps unsigned whenever x >= c)
``nuw_sub``            ``nuw`` on a ``sub`` (wraps when the result is negative)
``exact_shift``        ``exact`` on an ``lshr``/``ashr`` by a constant (drops set bits)
``exact_div``          ``exact`` on a ``udiv`` (a non-zero remainder)
``disjoint_or``        ``disjoint`` on an ``or`` (operands sharing a set bit)
``fmf_reassoc``        ``reassoc`` on an ``fadd`` (refused: a documented order)
``fmf_contract``       ``contract`` on an ``fmul``
``fmf_nnan``           ``nnan`` on an ``fadd``
``range_tid``          ``!range [0, 1)`` on ``workitem.id.x`` (the launch has >= 32 lanes)
``readonly_written``   ``writeonly`` (or nothing) made ``readonly`` on a pointer
                       argument the kernel stores to
``deref_big``          ``dereferenceable(2^40)`` on the first pointer argument
``cluster_half``       ``amdgpu-cluster-dims`` with its largest dimension halved
``fwgs_small``         ``amdgpu-flat-work-group-size`` one wave smaller than launched
``no_implicit``        ``"amdgpu-no-<X>"`` for an implicit input the kernel reads
``denormal_ftz``       ``"denormal-fp-math"="preserve-sign,preserve-sign"``
=====================  ==========================================================

``noalias`` on overlapping arguments has no site: every pointer argument already
carries ``noalias`` and no plan passes one buffer twice.

``launch_plan``: the conv_launch plan (the runtime's data, not the IR) with one
field one unit off, or the runtime's kernarg layout with one argument's offset one
unit (its size) off. The mutant's IR text is the original; :func:`mutate_plan`
changes every plan the config's cases ask for (:class:`parity.mutate.run` applies
it through a lowerer), :func:`kernarg_shift` the conv_abi layout.
"""
from __future__ import annotations

import re

_NO_INPUTS = (("workitem-id-x", "workitem.id.x"), ("workitem-id-y", "workitem.id.y"),
              ("workitem-id-z", "workitem.id.z"), ("workgroup-id-x", "workgroup.id.x"),
              ("workgroup-id-y", "workgroup.id.y"), ("workgroup-id-z", "workgroup.id.z"))
_INT_BIN = re.compile(r"^(  %[\w.]+ = )(add|sub|lshr|ashr|udiv|or)((?: nuw| nsw| exact| disjoint)*) "
                      r"(i\d+) ([^,]+), (.+)$")
_FP = re.compile(r"^(  %[\w.]+ = )(fadd|fmul) ((?:[a-z]+ )*)(<[^>]+>|float|half|bfloat) (.+)$")
_ATTR0 = re.compile(r"^attributes #0 = \{ (.*) \}$")
_PARAM = re.compile(r"ptr addrspace\(1\)((?: [\w()]+)*?) %(\w+)")

PROMISE_SUBKINDS = ("nuw_add_neg", "nuw_sub", "exact_shift", "exact_div", "disjoint_or", "fmf_reassoc",
                    "fmf_contract", "fmf_nnan", "range_tid", "readonly_written", "deref_big", "cluster_half",
                    "fwgs_small", "no_implicit", "denormal_ftz")


def _stored_params(lines: list) -> set:
    """Pointer parameters the kernel writes (a store or a buffer store through a value
    whose text derives from ``%NAME_ptr``: the engines name every pointer so)."""
    text = "\n".join(lines)
    out = set()
    for m in re.finditer(r"%(\w+_ptr)\b", lines[_define(lines)]):
        p = m.group(1)
        if re.search(r"buffer\.store[^\n]*|store [^\n]*", text) and _writes(text, p):
            out.add(p)
    return out


def _writes(text: str, p: str) -> bool:
    """``%p`` (or a resource / gep made from it, one level) is the address of a store."""
    names = {p}
    for m in re.finditer(r"^  (%[\w.]+) = [^\n]*%" + re.escape(p) + r"\b", text, re.M):
        names.add(m.group(1).lstrip("%"))
    for m in re.finditer(r"^  (?:call void @llvm\.amdgcn\.raw\.ptr\.buffer\.store[^\n]*|store [^\n]*)$", text, re.M):
        if any(re.search(r"%" + re.escape(n) + r"\b", m.group(0)) for n in names):
            return True
    return False


def _define(lines: list) -> int:
    return next(i for i, ln in enumerate(lines) if ln.startswith("define "))


def promise_sites(text: str) -> list:
    """Every ``promise_lie`` site of ``text``: ``[(line index, sub-kind)]``."""
    lines = text.split("\n")
    d = _define(lines)
    out = []
    for i in range(d + 1, len(lines)):
        ln = lines[i]
        if ln == "}":
            break
        m = _INT_BIN.match(ln)
        if m and not m.group(4).startswith("<"):
            op, flags, b = m.group(2), m.group(3), m.group(6).strip()
            if op == "add" and "nuw" not in flags and re.fullmatch(r"-\d+", b):
                out.append((i, "nuw_add_neg"))
            elif op == "sub" and "nuw" not in flags:
                out.append((i, "nuw_sub"))
            elif op in ("lshr", "ashr") and "exact" not in flags and re.fullmatch(r"[1-9]\d*", b):
                out.append((i, "exact_shift"))
            elif op == "udiv" and "exact" not in flags:
                out.append((i, "exact_div"))
            elif op == "or" and "disjoint" not in flags:
                out.append((i, "disjoint_or"))
        f = _FP.match(ln)
        if f and f.group(2) == "fadd":
            out += [(i, "fmf_reassoc"), (i, "fmf_nnan")]
        elif f:
            out.append((i, "fmf_contract"))
        if re.search(r"= call i32 @llvm\.amdgcn\.workitem\.id\.x\(\)$", ln):
            out.append((i, "range_tid"))
    written = _stored_params(lines)
    out += [(d, f"readonly_written:{p}") for p in sorted(written)]
    out.append((d, "deref_big"))
    a = next((k for k, ln in enumerate(lines) if _ATTR0.match(ln)), None)
    if a is not None:
        if '"amdgpu-cluster-dims"=' in lines[a]:
            out.append((a, "cluster_half"))
        if '"amdgpu-flat-work-group-size"=' in lines[a]:
            out.append((a, "fwgs_small"))
        out += [(a, f"no_implicit:{attr}") for attr, fn in _NO_INPUTS if f"@llvm.amdgcn.{fn}()" in text]
        out.append((a, "denormal_ftz"))
    return out


def _next_md(lines: list) -> int:
    ns = [int(m.group(1)) for ln in lines for m in [re.match(r"^!(\d+) = ", ln)] if m]
    return max(ns, default=-1) + 1


def promise_apply(text: str, site) -> tuple:
    """``(mutated text, what)`` of the ``promise_lie`` ``site``."""
    lines = text.split("\n")
    i, sub = site
    ln = lines[i]
    kind, _, arg = sub.partition(":")
    flag = {"nuw_add_neg": "nuw", "nuw_sub": "nuw", "exact_shift": "exact", "exact_div": "exact",
            "disjoint_or": "disjoint"}.get(kind)
    if flag:
        m = _INT_BIN.match(ln)
        lines[i] = f"{m.group(1)}{m.group(2)}{m.group(3)} {flag} {m.group(4)} {m.group(5)}, {m.group(6)}"
        what = f"`{flag}` on {m.group(2)} {m.group(5)}, {m.group(6).strip()}"
    elif kind.startswith("fmf_"):
        fl = kind[4:]
        m = _FP.match(ln)
        lines[i] = f"{m.group(1)}{m.group(2)} {fl} {m.group(3)}{m.group(4)} {m.group(5)}"
        what = f"`{fl}` on {m.group(2)}"
    elif kind == "range_tid":
        n = _next_md(lines)
        lines[i] = ln + f", !range !{n}"
        lines.insert(len(lines) - 1 if lines[-1] == "" else len(lines), f"!{n} = !{{i32 0, i32 1}}")
        what = "`!range [0, 1)` on workitem.id.x"
    elif kind == "readonly_written":
        new = re.sub(r"((?:noalias |captures\(none\) |nocapture )*)(?:writeonly |readonly )?%" + arg + r"\b",
                     lambda mm: f"{mm.group(1)}readonly %{arg}", ln, count=1)
        lines[i] = new
        what = f"`readonly` on %{arg}, which the kernel writes"
    elif kind == "deref_big":
        lines[i] = ln.replace("ptr addrspace(1) noalias", "ptr addrspace(1) dereferenceable(1099511627776) noalias", 1)
        what = "`dereferenceable(2^40)` on the first pointer argument"
    elif kind == "cluster_half":
        m = re.search(r'"amdgpu-cluster-dims"="(\d+),(\d+),(\d+)"', ln)
        dims = [int(v) for v in m.groups()]
        k = dims.index(max(dims))
        dims[k] = max(1, dims[k] // 2)
        lines[i] = ln[:m.start()] + f'"amdgpu-cluster-dims"="{dims[0]},{dims[1]},{dims[2]}"' + ln[m.end():]
        what = f"amdgpu-cluster-dims {','.join(m.groups())} -> {','.join(map(str, dims))}"
    elif kind == "fwgs_small":
        m = re.search(r'"amdgpu-flat-work-group-size"="(\d+),(\d+)"', ln)
        lo, hi = int(m.group(1)), int(m.group(2))
        nl, nh = max(1, lo - 32) if lo > 32 else lo, hi - 32 if hi > 32 else hi - 1
        lines[i] = ln[:m.start()] + f'"amdgpu-flat-work-group-size"="{min(nl, nh)},{nh}"' + ln[m.end():]
        what = f"amdgpu-flat-work-group-size {lo},{hi} -> {min(nl, nh)},{nh}"
    elif kind == "no_implicit":
        lines[i] = ln[:-2] + f' "amdgpu-no-{arg}" }}'
        what = f'"amdgpu-no-{arg}" on a kernel that reads it'
    elif kind == "denormal_ftz":
        lines[i] = ln[:-2] + ' "denormal-fp-math"="preserve-sign,preserve-sign" }'
        what = '"denormal-fp-math"="preserve-sign,preserve-sign"'
    else:
        raise ValueError(f"unknown promise_lie site {sub!r}")
    return "\n".join(lines), f"{kind}: {what}"


# -- launch_plan -------------------------------------------------------------------------------

#: plan fields a launch_plan mutant moves by one unit (conv kernels: they have a conv_launch plan)
PLAN_FIELDS = ("workspace_bytes", "grid.0", "grid.1", "grid.2", "block", "cluster.2", "arg:x_bytes",
               "arg:w_bytes", "arg:d_bytes", "arg:ws_bytes", "arg:ks", "arg:ks_count", "arg:Kgemm",
               "stage2:ks_count", "stage2:ws_bytes")


def plan_sites(text: str) -> list:
    """``launch_plan`` sites of a kernel module: ``[(define line, field)]``; conv kernels
    only (a reduce is planned by its conv's plan), ``cluster.*`` on cluster kernels,
    ``workspace``/``ws``/``ks``/``stage2`` fields on split kernels; plus ``kernarg:NAME``
    for every parameter (the runtime's layout of that argument one unit off)."""
    lines = text.split("\n")
    d = _define(lines)
    head = lines[d]
    params = re.findall(r"%(\w+)[,)]", head[head.index("("):])
    out = []
    if "@conv_implicit_gemm" in head:
        split = "%ws_ptr" in head
        cluster = "amdgpu-cluster-dims" in text
        for f in PLAN_FIELDS:
            if f.startswith("cluster") and not cluster:
                continue
            if not split and (f in ("workspace_bytes", "arg:ws_bytes", "arg:ks", "arg:ks_count")
                              or f.startswith("stage2")):
                continue
            if cluster and f.startswith("stage2"):
                continue
            out.append((d, f))
    out += [(d, f"kernarg:{p}") for p in params]
    return out


#: The families whose numerics plans launch through the product's kernarg route
#: (``Launch.variant``: the runtime packs the segment from the conv_abi list, the emulator
#: reads each parameter back at LLVM's offset; parity/sim/launch_route.py). Only their
#: kernels get ``kernarg:NAME`` sites: ir_core's plan passes its arguments by name
#: (docs/sim.md), so a slip of the runtime's layout reaches no oracle there (before: every
#: ir_core ``kernarg:`` mutant survived, ``parity mutate --only ir_core`` RED).
#: tests/test_mutate_bad_input.py checks this against the plans' launches.
KERNARG_ROUTED = ("conv_fwd_split_k_reduce", "conv_implicit_gemm")


def judged_plan_sites(family: str, sites: list) -> list:
    """The ``launch_plan`` ``sites`` of a ``family`` kernel that an oracle judges: no
    ``kernarg:NAME`` site outside :data:`KERNARG_ROUTED`."""
    if family in KERNARG_ROUTED:
        return sites
    return [s for s in sites if not str(s[1]).startswith("kernarg:")]


_UNIT = {"x_bytes": 2, "w_bytes": 2, "d_bytes": 2, "ws_bytes": 4}


def mutate_plan(plan: str, field: str) -> str:
    """``plan`` (conv_launch plan text) with ``field`` one unit off: bytes one element
    short (2 bytes of x/w/d, 4 of the fp32 workspace), a grid / cluster dimension or
    a count one less (one more when it is 1), the block one wave less (more when 32)."""
    lines = plan.split("\n")
    head, _, rest = field.partition(":")
    section = None
    for i, ln in enumerate(lines):
        key, _, val = ln.partition(" ")
        if key in ("args", "stage2_args"):
            section = key
            continue
        if section is None and field == "workspace_bytes" and key == field and int(val) > 0:
            lines[i] = f"{key} {int(val) - 4}"
        elif section is None and "." in field and key == field.split(".")[0] and val != "none":
            k = int(field.split(".")[1])
            dims = [int(v) for v in val.split()]
            dims[k] = dims[k] - 1 if dims[k] > 1 else dims[k] + 1
            lines[i] = f"{key} {' '.join(map(str, dims))}"
        elif section is None and field == "block" and key == "block":
            dims = [int(v) for v in val.split()]
            dims[0] = dims[0] - 32 if dims[0] > 32 else dims[0] + 32
            lines[i] = f"block {' '.join(map(str, dims))}"
        elif section is not None and ((head == "arg" and section == "args")
                                      or (head == "stage2" and section == "stage2_args")):
            idx, name, eq, v = (ln.split(" ", 3) + ["", "", ""])[:4]
            if name == rest and re.fullmatch(r"-?\d+", v):
                n = int(v)
                lines[i] = f"{idx} {name} = {n - _UNIT.get(name, 1) if n > 1 else n + 1}"
    return "\n".join(lines)


def kernarg_shift(layout_fn, name: str):
    """``layout_fn`` (parity.launch.kernarg.variant_layout) with argument ``name``'s
    offset one unit (its size) later in every variant that has it."""
    def shifted(variant, acc_epilogue="identity"):
        slots, size = layout_fn(variant, acc_epilogue)
        out = tuple(type(s)(s.name, s.kind, s.offset + s.size, s.size) if s.name == name else s for s in slots)
        return out, size
    return shifted

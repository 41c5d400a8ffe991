"""Admission and launch plan of a conv_implicit_gemm binary for one problem at
one split-K degree, for a spec whose ``split_k`` is explicit (docs/conv_launch.md).
The family ``conv_launch`` (families/conv_launch.py) resolves ``split_k = -1``
through the policy first, then calls :func:`validate`, :func:`kernel_name`
and :func:`plan_text` here.
Twin: cpp_engine/src/kernels/conv_launch.{h,cpp}.

The spec is one flat record, fields in this fixed order: every
``ImplicitGemmConvSpec`` field (the binary, :data:`conv_implicit_gemm.FIELDS`),
then the problem (``N C H W K Y X stride_h stride_w pad_h pad_w dil_h dil_w
groups``), then ``degree`` (the split-K degree this launch asks for).

``validate`` returns the admission reason: why this binary may not run this
problem (the binary's own rule first, then the degree, the problem, and the
limits of the kernel: vector widths dividing the channels, 4-wide stores,
the cluster's slice count, 32-bit byte offsets, grid limits). ``build`` returns
the launch plan as text, not an LLVM module: grid, block, LDS bytes, cluster
shape, workspace bytes, whether Stage 2 runs, and every kernel argument value
by name, in the order of the variant's :mod:`.conv_abi` list (a missing or
extra name is an internal error, not a rejection).

Slicing rule: ``ks = ceil(ceil(Kr/degree)/tile_k)*tile_k`` (a multiple of
``tile_k``); ``data = ceil(Kr/ks)`` slices carry data (<= degree), where ``Kr``
is the reduction the kernel runs over (:func:`reduction`: ``Kgemm``, or
``Y*X*pixel_slot(v)`` for a padded-pixel vector width v). A
two-stage binary launches ``ks_count = data`` (every slice non-empty); a
cluster binary launches ``ks_count = S`` (the degree, baked into the binary),
so its trailing ``S - data`` slices may be empty (``k_begin >= Kgemm``: the
kernel writes a zero slab, which the fold sums).
"""
from __future__ import annotations

from . import acc_epilogue, conv_abi
from . import conv_implicit_gemm as CIG
from .conv_problem import PROBLEM_ARGS, ConvProblem

# The given extents of ConvProblem, in PROBLEM_ARGS order, with the lowest
# allowed value and the default problem (a 56x56x64 3x3 same-padding layer).
PROBLEM_FIELDS = (
    ("N", 1, 1), ("C", 1, 64), ("H", 1, 56), ("W", 1, 56), ("K", 1, 64), ("Y", 1, 3), ("X", 1, 3),
    ("stride_h", 1, 1), ("stride_w", 1, 1), ("pad_h", 0, 1), ("pad_w", 0, 1),
    ("dil_h", 1, 1), ("dil_w", 1, 1), ("groups", 1, 1),
)
SPEC_FIELDS = tuple(f.name for f in CIG.FIELDS)

I32_MAX = (1 << 31) - 1
BYTES_LIMIT = 1 << 31          # every buffer byte count must be below this
# HIP grid limits (blocks per dimension) as hipGetDeviceProperties reports them
# (x 2^31-1, y and z 2^16-1; ROCm/clr issue #140, ROCm/ROCR-Runtime PR #298),
# and the AQL dispatch packet's grid size in work-items, a uint32 per dimension.
GRID_MAX = (I32_MAX, 65535, 65535)
AQL_WORKITEMS_MAX = (1 << 32) - 1
STORE_VEC = CIG.OUT_VEC        # the cshuffle / cluster-fold store width (4 channels)


def _ceil(a: int, b: int) -> int:
    return (a + b - 1) // b


def _variant(spec: dict) -> str:
    return conv_abi.variant_of(spec["split_k"], spec["split_k_cluster"])


def problem_of(spec: dict) -> ConvProblem:
    return ConvProblem(**{n: spec[n] for n, _, _ in PROBLEM_FIELDS})


def problem_reason(spec: dict) -> str | None:
    """The problem rules (field ranges, groups, filter fit, i32 problem block):
    part of :func:`validate`; split_k_policy checks its problem with it."""
    for n, lo, _ in PROBLEM_FIELDS:
        v = spec[n]
        if v < lo or v > I32_MAX:
            return f"problem field {n} must be in {lo}..{I32_MAX}, got {v}"
    g = spec["groups"]
    if spec["C"] % g or spec["K"] % g:
        return f"groups {g} must divide C {spec['C']} and K {spec['K']}"
    fh = spec["dil_h"] * (spec["Y"] - 1) + 1
    fw = spec["dil_w"] * (spec["X"] - 1) + 1
    ph = spec["H"] + 2 * spec["pad_h"]
    pw = spec["W"] + 2 * spec["pad_w"]
    if fh > ph or fw > pw:
        return f"the dilated filter {fh}x{fw} does not fit the padded input {ph}x{pw}"
    p = problem_of(spec)
    for n in PROBLEM_ARGS:
        v = getattr(p, n)
        if v > I32_MAX:
            return f"kernel argument {n} = {v} exceeds the i32 range (max {I32_MAX})"
    return None


def reduction(spec: dict, p: ConvProblem) -> int:
    """The reduction length the kernel's K loop covers: ``Kgemm``, or for a
    padded-pixel ``vector_a`` (3, 5, 6, 7; the small-channel path) ``Y*X`` taps of
    ``pixel_slot(vector_a)`` elements (the padding channels are zero in A and B)."""
    va = spec["vector_a"]
    return p.Y * p.X * CIG.pixel_slot(va) if va in CIG.PIXEL_VECTORS else p.Kgemm


def _slicing(spec: dict, p: ConvProblem) -> tuple:
    """(ks, ks_count, data slices) of a degree >= 1 (see the module docstring).
    A cluster binary launches ks_count = S = degree; ``data <= degree`` always
    (``ks >= Kgemm/degree``), so its trailing slices may be empty, never missing."""
    tk = spec["tile_k"]
    kr = reduction(spec, p)
    ks = _ceil(_ceil(kr, spec["degree"]), tk) * tk
    data = _ceil(kr, ks)
    s = spec["split_k_cluster"]
    if s and data > s:  # an internal invariant of the slicing rule, not an admission rule
        raise RuntimeError(f"conv_launch: {data} slices carry data, more than the cluster's {s} "
                           f"(reduction {kr}, ks {ks})")
    return ks, (s or data), data


def _byte_counts(spec: dict, p: ConvProblem, ks_count: int) -> tuple:
    """(name, bytes) of every buffer the forward kernel range-checks, in check order."""
    esz = 2  # bf16 / fp16
    out = [("x_bytes", p.x_elems() * esz), ("w_bytes", p.w_elems() * esz), ("d_bytes", p.d_elems() * esz)]
    if acc_epilogue.has(spec["acc_epilogue"], "bias"):
        out.append(("bias_bytes", p.K * 4))
    if spec["split_k"] > 1:
        out.append(("ws_bytes", ks_count * p.d_elems() * 4))
    return tuple(out)


def _grid(spec: dict, p: ConvProblem, ks_count: int) -> tuple:
    return (_ceil(p.M, spec["tile_m"]), _ceil(p.kpg, spec["tile_n"]), p.groups * ks_count)


def validate(spec: dict, arch, flavor) -> str | None:
    """The admission reason of a resolved spec (``split_k`` explicit; the
    family resolves -1 first, families/conv_launch.py), or None. Order: the
    binary (conv_implicit_gemm's rules), degree,
    problem fields, groups, filter fit, i32 problem block, vector widths,
    4-wide stores, byte counts, grid, i32 slicing arguments. A cluster binary
    launches ks_count = S and is admitted with trailing empty slices."""
    return CIG.validate({n: spec[n] for n in SPEC_FIELDS}, arch, flavor) or launch_reason(spec)


def launch_reason(spec: dict, problem: tuple | None = None) -> str | None:
    """The rules of :func:`validate` after the binary's own (conv_implicit_gemm's
    rules), in the same order: for a caller that has just run ``CIG.validate``
    on the same binary fields (policy/perf_model.py), so it does not run twice.
    ``problem``: ``(problem_reason(spec), problem_of(spec))`` when the caller
    has them (one problem, many candidate specs); computed here otherwise."""
    d, sk, s = spec["degree"], spec["split_k"], spec["split_k_cluster"]
    if d < 1:
        return f"degree must be >= 1 (the split-K degree of this launch), got {d}"
    if sk == 1 and d != 1:
        return f"the plain binary (split_k = 1) launches with degree 1, got {d}"
    if s and d != s:
        return f"the cluster binary (split_k_cluster = {s}) launches with degree {s}, got {d}"
    r, p = problem if problem is not None else (problem_reason(spec), None)
    if r:
        return r
    p = p if p is not None else problem_of(spec)
    va = spec["vector_a"]
    if va in CIG.PIXEL_VECTORS and p.cpg != va:
        return f"vector_a {va} loads one padded pixel of {va} channels: it needs cpg = {va}, got cpg {p.cpg}"
    for f in ("vector_a", "vector_b"):
        if p.cpg % spec[f]:
            return f"{f} {spec[f]} must divide the channels per group cpg {p.cpg}"
    if spec["epilogue"] == "cshuffle" or s:
        if p.kpg % STORE_VEC or p.K % STORE_VEC:
            what = "cshuffle epilogue" if spec["epilogue"] == "cshuffle" else "cluster fold"
            return (f"the {what} stores {STORE_VEC} output channels per vector: kpg and K must be "
                    f"multiples of {STORE_VEC}, got kpg {p.kpg}, K {p.K}")
    ks, kc, _ = _slicing(spec, p)
    for n, v in _byte_counts(spec, p, kc):
        if v >= BYTES_LIMIT:
            return f"{n} = {v} must be below 2^31 (the kernel's buffer offsets are 32-bit)"
    grid = _grid(spec, p, kc)
    t = CIG.threads(spec)
    for axis, v, lim in zip("xyz", grid, GRID_MAX):
        if v > lim:
            extra = " (groups * ks_count)" if axis == "z" else ""
            return f"grid {axis} = {v}{extra} exceeds the HIP limit {lim}"
    if grid[0] * t > AQL_WORKITEMS_MAX:
        return (f"grid x * block = {grid[0] * t} work-items exceeds the 32-bit AQL grid size "
                f"{AQL_WORKITEMS_MAX}")
    for n, v in (("ks", ks), ("ks_count", kc)):
        if v > I32_MAX:
            return f"kernel argument {n} = {v} exceeds the i32 range (max {I32_MAX})"
    return None


def kernel_name(spec: dict, arch, flavor) -> str:
    """The name of the forward kernel this plan launches (a resolved spec)."""
    return CIG.kernel_name({n: spec[n] for n in SPEC_FIELDS}, arch, flavor)


def _arg_values(spec: dict, p: ConvProblem, variant: str, ks: int, kc: int) -> dict:
    """Value text of every argument of ``variant``: byte counts and extents in
    decimal, pointers ``buffer <tensor>`` or ``unused`` (the kernel never
    touches it; pass null), epilogue scalars ``caller`` or ``unused``. The
    epilogue's arguments go to the kernel that applies it: the plain kernel,
    the cluster kernel (its fold) or Stage 2 (``reduce``, its own arguments
    after ``ks_count``); Stage 1 of two-stage gets them as ``unused``."""
    acc = spec["acc_epilogue"]
    nb = dict(_byte_counts(spec, p, kc))
    v = {}
    if variant == "reduce":
        v.update(ws_ptr="buffer ws", ws_bytes=kc * p.d_elems() * 4, d_ptr="buffer d",
                 d_bytes=nb["d_bytes"], M=p.M, K=p.K, ks_count=kc)
        if acc_epilogue.has(acc, "bias"):
            v.update(bias_ptr="buffer bias", bias_bytes=nb["bias_bytes"])
        if acc_epilogue.has(acc, "scale"):
            v.update(scale="caller")
        if acc_epilogue.has(acc, "clamp"):
            v.update(clamp_lo="caller", clamp_hi="caller")
        return v
    writes_d = variant != "two_stage"
    epi = acc if writes_d else "identity"   # Stage 1 stores raw partials
    v.update(x_ptr="buffer x", x_bytes=nb["x_bytes"], w_ptr="buffer w", w_bytes=nb["w_bytes"],
             d_ptr="buffer d" if writes_d else "unused", d_bytes=nb["d_bytes"],
             bias_ptr="buffer bias" if acc_epilogue.has(epi, "bias") else "unused",
             scale="caller" if acc_epilogue.has(epi, "scale") else "unused",
             clamp_lo="caller" if acc_epilogue.has(epi, "clamp") else "unused",
             clamp_hi="caller" if acc_epilogue.has(epi, "clamp") else "unused")
    v.update(p.problem_args())
    if variant != "plain":
        v.update(ws_ptr="buffer ws", ws_bytes=nb["ws_bytes"], ks=ks, ks_count=kc)
    return v


def _arg_lines(values: dict, variant: str, acc: str = "identity") -> list:
    names = conv_abi.param_names(variant, acc)
    missing = [n for n in names if n not in values]
    extra = [n for n in values if n not in names]
    if missing or extra:
        raise RuntimeError(f"conv_launch: argument values of variant {variant} do not match its ABI "
                           f"(missing: {', '.join(missing) or '-'}; extra: {', '.join(extra) or '-'})")
    return [f"{i} {n} = {values[n]}" for i, n in enumerate(names)]


def plan_text(spec: dict, arch, flavor) -> str:
    """The launch plan of an admitted (spec, problem, degree)."""
    p = problem_of(spec)
    variant = _variant(spec)
    ks, kc, data = _slicing(spec, p)
    s = spec["split_k_cluster"]
    two_stage = spec["split_k"] > 1
    needs_stage2 = two_stage and not s
    ws = dict(_byte_counts(spec, p, kc)).get("ws_bytes", 0)
    gx, gy, gz = _grid(spec, p, kc)
    lines = [
        f"conv_launch {kernel_name(spec, arch, flavor)}",
        f"variant {variant}",
        f"degree {spec['degree']}",
        f"ks {ks}",
        f"ks_count {kc}",
    ] + ([f"data_slices {data}"] if s else []) + [
        f"grid {gx} {gy} {gz}",
        f"block {CIG.threads(spec)} 1 1",
        f"lds_bytes {CIG.lds_bytes(spec)}",
        f"cluster {'1 1 ' + str(s) if s else 'none'}",
        f"workspace_bytes {ws}",
        f"needs_stage2 {'true' if needs_stage2 else 'false'}",
        f"args {variant}",
    ]
    lines += _arg_lines(_arg_values(spec, p, variant, ks, kc), variant)
    if needs_stage2:
        acc = spec["acc_epilogue"]
        lines.append("stage2_args reduce" + ("" if acc == "identity" else f" acc_epilogue={acc}"))
        lines += _arg_lines(_arg_values(spec, p, "reduce", ks, kc), "reduce", acc)
    return "\n".join(lines) + "\n"

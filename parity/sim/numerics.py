"""``parity numerics``: every accepted config of every family with a numerics
plan, run through the emulator on small problems and compared with numpy.

A *plan* (one per family, :data:`PLANS`) turns a config's spec into cases. A
:class:`Case` lists the kernels it needs (family, spec), its buffers, its
launches in order (Stage 1 then Stage 2, ...) and a check of the final
buffers against a numpy reference, with the tolerance stated by the plan.
Every launch runs in forward and reverse wave order (the emulator compares
the two byte for byte). A config the emulator cannot run is a failure.

Plans: ``conv_fwd_split_k_reduce`` (bit-exact against a sequential fp32 sum
and an independent RNE cast), ``ir_core`` (exact), ``conv_implicit_gemm``
(:func:`conv_cases`: every launch -- grid, block, cluster shape, ks, ks_count,
workspace bytes, every argument -- taken from the Python engine's
``conv_launch`` plan of (spec, problem, degree); problems the plan does not
admit are skipped, a config no problem admits fails).
"""
from __future__ import annotations

import importlib
import math
import multiprocessing as mp
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import python_engine
from parity.sim import reference as ref
from parity.config import load_families
from parity.cli.interrupt import leave_sigint_to_parent
from python_engine.facts import conv_kernel as C
from parity.launch.stage2 import reduce_grid, reduce_spec
from parity.launch.plan import buffer_bytes, parse_plan
from parity.launch.reduce_launch import reduce_launch_reason
from parity.sim import cover
from parity.sim import checks as CK
from parity.sim import launch_route as LR
from parity.sim.cases import Buf, Case, Launch, ReduceProblem, Skipped  # noqa: F401 (re-exported: the plans' records)
from parity.sim.ir_core_plan import ir_core_cases
from parity.sim.checks import CONV_CALLER
from parity.sim import numerics_fused
from parity.sim import invariants as INV
from parity.sim.errors import SimError
from parity.sim.kernel import Kernel
from parity.sim.schedule import longest_first

FLAVOR = "llvm23"


@dataclass
class Outcome:
    family: str
    config: str
    ok: bool
    cases: int = 0
    launches: int = 0
    instructions: int = 0
    seconds: float = 0.0
    problems: list = field(default_factory=list)
    expected_errors: int = 0
    coverage: dict = None     # Coverage.summary() of the config's own kernel (coverage runs only)
    classes: dict = None      # tile class -> hit (coverage runs only; parity/sim/cover.py)
    skipped: list = field(default_factory=list)   # Skipped problems (not admitted by the launch plan)
    opt: dict = None          # the opt lane's cost (parity/sim/optimised.py Stats) when it ran


# -- conv_fwd_split_k_reduce ------------------------------------------------------------------

from parity.sim.cases import REDUCE_KS_DEGREE0, REDUCE_PROBLEMS, REDUCE_SPECIALS, and_then as _and_then  # noqa: E402,F401
REDUCE_TOLERANCE = ("bit-exact: D == RNE(sequential fp32 sum over slabs from slab 0), "
                    "NaN compared as NaN")


def reduce_cases(spec: dict, arch: str) -> list:
    """The cases of a reduce spec, one per (problem, ks): the problems of
    REDUCE_PROBLEMS and the coverage problems, D bit-exact against numpy, the
    unrolled form equal to the loop form bit for bit. Identity: mixed-magnitude
    slabs with the order probe, ``RNE(sequential fp32 sum)``, plus the exact case;
    fused (``acc_epilogue`` not identity): the slabs and the reference of
    :func:`parity.sim.numerics_fused.reduce_problem` (``RNE(epilogue(sum))``)."""
    dt, v, t, deg = spec["dtype"], spec["vector"], spec["threads"], spec["degree"]
    fused = spec.get("acc_epilogue", "identity") != "identity"
    rng = np.random.default_rng((4321 if fused else 1234) + v * 7 + t + deg)
    kss = REDUCE_KS_DEGREE0 if deg == 0 else (deg,)
    out = []
    for pi, (M, K) in enumerate(REDUCE_PROBLEMS + cover.reduce_cover_problems(spec)):
        for ks in kss:
            prob = numerics_fused.reduce_problem(spec, rng, pi, M, K, ks) if fused else \
                _identity_reduce_problem(rng, dt, M, K, ks)
            out.append(_reduce_case(spec, arch, prob, M, K, ks))
    return out if fused else out + [_reduce_exact_case(spec, arch, rng)]


def _identity_reduce_problem(rng, dt: str, M: int, K: int, ks: int) -> ReduceProblem:
    """Slabs of mixed magnitudes (1, 300, 1e-3), the specials in slab 0 and the
    order probe; D = RNE(sequential fp32 sum)."""
    mk = M * K
    scale = rng.choice([1.0, 300.0, 1e-3], size=(ks, mk)).astype(np.float32)
    ws = (rng.standard_normal((ks, mk)).astype(np.float32) * scale).astype(np.float32)
    ns = min(mk, REDUCE_SPECIALS.size)
    ws[0, :ns] = REDUCE_SPECIALS[:ns]
    ws[1:, :ns] = 0.0
    cover.reduce_order_probe(ws, ns)
    return ReduceProblem(ws, ref.ref_cast_bits(ref.split_k_sum(ws.reshape(ks, M, K)).ravel(), dt), {}, {})


def _reduce_case(spec: dict, arch: str, prob: ReduceProblem, M: int, K: int, ks: int) -> Case:
    """One reduce case: D bit-exact against ``prob.want``; with an unrolled degree
    and a vector path, the loop twin's D equal bit for bit."""
    dt, v, t, deg = spec["dtype"], spec["vector"], spec["threads"], spec["degree"]
    mk, want = M * K, prob.want
    d = np.full(mk, 0xDEAD, np.uint16)
    grid = (math.ceil(mk / (t * v)), 1, 1)

    def check(bufs, want=want, dt=dt):
        got = bufs["d"]
        okm = ref.same_bits_16(got, want, dt)
        if okm.all():
            return []
        k = int(np.argmin(okm))
        return [f"D[{k}] = {int(got[k]):#06x}, want {int(want[k]):#06x} "
                f"({int((~okm).sum())} of {okm.size} elements differ)"]
    kern = {"reduce": ("conv_fwd_split_k_reduce", spec, arch)}
    launches = [_reduce_launch("reduce", grid, t, spec, prob.ws, d, M, K, ks, "d", prob.plan_args)]
    bufs = {"ws": prob.ws, "d": d, **prob.bufs}
    if deg and mk >= 32 * v:  # invariant unrolled == loop, on the problems with a vector path
        twin = INV.loop_twin_spec(spec)
        kern["loop"] = ("conv_fwd_split_k_reduce", twin, arch)
        bufs["d2"] = d.copy()
        launches.append(_reduce_launch("loop", grid, t, twin, prob.ws, d, M, K, ks, "d2", prob.plan_args))
        check = _and_then(check, lambda b, d=deg: INV.same_bits(
            "unrolled == loop", b["d"], b["d2"], (f"degree {d}", f"degree 0, ks_count {d}")))
    return Case(f"M{M}_K{K}_ks{ks}" + prob.suffix, kern, bufs, launches, check,
                classes=cover.reduce_classes(spec, M, K, ks))


def _reduce_launch(key: str, grid, t: int, spec: dict, ws, d, M: int, K: int, ks: int, dname: str,
                   epi_args: dict | None = None) -> Launch:
    """A reduce launch through the product's route: the runtime's pairing rule
    (parity/reduce_launch.py) and its packer (the ``reduce`` ABI of the spec's
    ``acc_epilogue``; ``epi_args``: the epilogue's plan texts, ``caller`` scalars
    from :data:`parity.sim.numerics_fused.CALLER`)."""
    pargs = {"ws_ptr": "buffer ws", "ws_bytes": ws.nbytes, "d_ptr": f"buffer {dname}", "d_bytes": d.nbytes,
             "M": M, "K": K, "ks_count": ks, **(epi_args or {})}
    why = reduce_launch_reason(spec, pargs)
    if why:
        raise SimError(f"reduce launch refused by the pairing rule (parity/reduce_launch.py): {why}")
    caller = numerics_fused.CALLER
    args = {n: (Buf(v.split(" ", 1)[1]) if v.startswith("buffer ") else caller[n]) if isinstance(v, str) else v
            for n, v in pargs.items()}
    return Launch(key, grid, t, args, variant="reduce", plan_args=pargs, scalars=caller,
                  acc_epilogue=spec.get("acc_epilogue", "identity"))


def _reduce_exact_case(spec: dict, arch: str, rng) -> Case:
    """Bit for bit against the exact sum: slabs of integers times 2^-6 (|v| < 2^12
    steps, at most 16 slabs: every fp32 partial sum exact in any order), so D must
    be the RNE of the exact float64 sum (no order to model)."""
    dt, v, t, deg = spec["dtype"], spec["vector"], spec["threads"], spec["degree"]
    ks = deg or 5
    M, K = 33, 70
    ws = (rng.integers(-4095, 4096, size=(ks, M * K)) * 2.0 ** -6).astype(np.float32)
    d = np.full(M * K, 0xDEAD, np.uint16)
    exact = ws.astype(np.float64).sum(axis=0)
    want = ref.ref_cast_bits(exact.astype(np.float32), dt)
    assert np.array_equal(exact.astype(np.float32).astype(np.float64), exact)

    def check(bufs):
        okm = ref.same_bits_16(bufs["d"], want, dt)
        if okm.all():
            return []
        k = int(np.argmin(okm))
        return [f"bit-exact: D[{k}] = {int(bufs['d'][k]):#06x}, want {int(want[k]):#06x} = RNE({exact[k]!r}) "
                f"({int((~okm).sum())} of {okm.size} elements differ)"]
    grid = (math.ceil(M * K / (t * v)), 1, 1)
    return Case(f"exact_M{M}_K{K}_ks{ks}", {"reduce": ("conv_fwd_split_k_reduce", spec, arch)}, {"ws": ws, "d": d},
                [_reduce_launch("reduce", grid, t, spec, ws, d, M, K, ks, "d")], check,
                classes=cover.reduce_classes(spec, M, K, ks))


# -- conv_implicit_gemm: every launch from the conv_launch plan ----------------------------

#: (name, N, C, H, W, K, Y, X, stride, pad, dil, groups) for plain and two-stage binaries:
#: partial M and N tiles, a reduction not a multiple of tile_k, padding, stride,
#: dilation, groups, 1x1 (Kgemm 72, 48, 40).
CONV_PROBLEMS = (
    ("pad_stride", 1, 8, 9, 7, 24, 3, 3, (2, 1), (1, 1), (1, 1), 1),
    ("dil_groups", 2, 16, 6, 6, 16, 3, 2, (1, 1), (2, 1), (2, 1), 2),
    ("one_by_one", 1, 40, 5, 5, 20, 1, 1, (1, 1), (0, 0), (1, 1), 1),
    # The strength-reduced im2col walk (docs/conv_implicit_gemm.md, "Loop-carried
    # addressing"): cpg 24 does not divide tile_k, so K tiles straddle filter rows
    # and split-K slices start mid-row, with dilation 2 and padding 2; depthwise
    # (cpg 1, stride 2); the 3-channel 7x7 stem (stride 2, pad 3). cpg 1 is admitted
    # only with vector_a = vector_b = 1, cpg 3 also with the padded pixel (3).
    ("cpg24_dil2", 1, 24, 7, 7, 16, 3, 3, (1, 1), (2, 2), (2, 2), 1),
    ("depthwise", 1, 6, 7, 7, 6, 3, 3, (2, 2), (1, 1), (1, 1), 6),
    ("stem7x7", 1, 3, 11, 11, 8, 7, 7, (2, 2), (3, 3), (1, 1), 1),
    # kpg 3 (odd; 3 groups): the scalar D path of the default epilogue, cshuffle skips it
    ("odd_kpg", 1, 24, 5, 4, 9, 3, 3, (1, 1), (1, 1), (1, 1), 3),
    # kpg 24 (multiple of 8, group base 24): the 16-byte D paths with partial M and N tiles
    ("wide_groups", 2, 16, 5, 3, 48, 1, 3, (1, 1), (0, 1), (1, 1), 2),
    # Small channel counts with padding at both ends of both axes: cpg 1 and 4 on the
    # element-wise / 4-wide paths (cpg 8: pad_stride); the padded-pixel path
    # (vector_a = vector_b = cpg in 3, 5, 6, 7): cpg 3 with 2 images, stride (1, 2)
    # and dilation (2, 1); cpg 5; cpg 6 in 2 groups; cpg 7 in 2 images.
    ("c1_pad", 1, 1, 6, 6, 8, 3, 3, (1, 1), (1, 1), (1, 1), 1),
    ("c4_pad", 1, 4, 6, 6, 8, 3, 3, (1, 1), (1, 1), (1, 1), 1),
    ("c3_dil", 2, 3, 9, 10, 20, 5, 3, (1, 2), (2, 1), (2, 1), 1),
    ("c5_pad", 1, 5, 6, 7, 20, 3, 3, (1, 1), (1, 1), (1, 1), 1),
    ("c6_groups", 1, 12, 6, 7, 24, 3, 3, (2, 1), (2, 1), (1, 2), 2),
    ("c7_pad", 2, 7, 5, 5, 12, 2, 3, (1, 1), (1, 1), (1, 1), 1),
    # A tall dilated filter (7x5, dilation (1, 2)) with stride (2, 1) and padding (1, 2)
    # over 2 images: a bottom padding tap at hi == H in the K loop with image 1 behind it
    # (the differential run of the kloop `a_hok` survivor drew it, docs/sim.md)
    ("tall_dil_pad", 2, 8, 11, 5, 56, 7, 5, (2, 1), (1, 2), (1, 2), 1),
)


def cluster_problems(S: int, tk: int) -> tuple:
    """Problems of a cluster binary (``split_k_cluster = S``, ``tile_k = tk``).
    The first two have every one of the S slices carrying data: cpg = S*tk, so
    Kgemm = Y*X*S*tk and the slicing rule gives ks = Y*X*tk, ks_count = S.
    Partial M and N tiles (kpg 20 / 12 < tile_n; M 72 / 70 = one full 64-row
    tile and a partial one, or one partial 128-row tile), 2 images each,
    padding + stride (1, 2) on the 3x3, 2 groups on the 1x1. The third
    (``_empty_tail``) has trailing empty slices: a 1x1 with Kgemm =
    max(1, S//2)*tk - 8, so ks = tk, max(1, S//2) slices carry data (the last
    one a partial K tile) and the rest of the S slices (ks_count = S) are
    empty (k_begin >= Kgemm: zero slabs the fold sums)."""
    c = S * tk
    return (
        (f"cl{S}_3x3_pad_stride", 2, c, 9, 7, 20, 3, 3, (1, 2), (1, 1), (1, 1), 1),
        (f"cl{S}_1x1_groups", 2, 2 * c, 5, 7, 24, 1, 1, (1, 1), (0, 0), (1, 1), 2),
        (f"cl{S}_1x1_empty_tail", 2, max(1, S // 2) * tk - 8, 5, 7, 20, 1, 1, (1, 1), (0, 0), (1, 1), 1),
    )


CONV_TOLERANCE = ("|D - ref| <= 2*u_out*|ref| + (Kgemm+2)*2^-24*sum|a*b| + tiny, ref in float64 from the "
                  "rounded inputs (u_out = 2^-8 bf16, 2^-11 fp16); parity.sim.reference.conv_tolerance")


def parse_launch_plan(text: str) -> dict:
    """The conv_launch plan text (docs/conv_launch.md) as data: header values
    (ints, ``grid``/``block``/``cluster`` tuples, ``needs_stage2`` bool) and
    ``args`` / ``stage2_args`` as ordered ``name -> value text``."""
    out: dict = {"args": {}, "stage2_args": {}}
    lines = text.split("\n")
    if lines[-1] != "":
        raise SimError("conv_launch plan text does not end with a newline")
    section = None
    for ln in lines[:-1]:
        key, _, rest = ln.partition(" ")
        if key == "args" or key == "stage2_args":
            section = key
            out[key + "_variant"] = rest
        elif section is not None:
            idx, name, eq, val = (ln.split(" ", 3) + ["", "", ""])[:4]
            if eq != "=" or int(idx) != len(out[section]):
                raise SimError(f"conv_launch plan: malformed argument line {ln!r}")
            out[section][name] = val
        elif key in ("grid", "block"):
            out[key] = tuple(int(v) for v in rest.split())
        elif key == "cluster":
            out[key] = None if rest == "none" else tuple(int(v) for v in rest.split())
        elif key == "needs_stage2":
            out[key] = {"true": True, "false": False}[rest]
        elif key in ("conv_launch", "variant"):
            out["kernel" if key == "conv_launch" else key] = rest
        else:
            out[key] = int(rest)
    return out


def _plan_args(values: dict, floats: dict) -> dict:
    """Kernel arguments from plan value texts: ``buffer t`` -> Buf(t); ``unused``
    pointer -> a zero-byte buffer (any access is out of bounds); ``unused`` float
    -> NaN; ``caller`` -> the plan's chosen value; decimal -> int."""
    args = {}
    for n, v in values.items():
        if v.startswith("buffer "):
            args[n] = Buf(v.split(" ", 1)[1])
        elif v == "unused":
            args[n] = Buf("null") if n.endswith("_ptr") else float("nan")
        elif v == "caller":
            args[n] = floats[n]
        else:
            args[n] = int(v)
    return args


def conv_degree(full: dict) -> int:
    """The degree a launch of this binary asks for: 1 (plain), split_k (two-stage), S (cluster)."""
    return full["split_k_cluster"] or full["split_k"]


def conv_cases(spec: dict, arch: str, lowerer=None, problems=None) -> list:
    """Cases of one conv_implicit_gemm spec (plain, two-stage + reduce, cluster).
    Grid, block, cluster shape, ks, ks_count, workspace bytes, buffer sizes and
    every argument come from the conv_launch plan of (spec, problem, degree),
    launched through the product's route (:func:`plan_launches`); a problem the
    plan does not admit is a :class:`Skipped`, and a config no problem admits
    fails. Problems with bit-exact data (:func:`parity.sim.cover.data_mode`)
    are also checked bit for bit against the RNE of the exact result, and every
    split form's D against the numpy model of its documented fold order."""
    lowerer = lowerer or _Lowerer()
    dt = spec.get("dtype", "bf16")
    full = {f.name: spec.get(f.name, f.default) for f in C.FIELDS}
    S = full["split_k_cluster"]
    degree = conv_degree(full)
    cl_probs = cluster_problems(S, full["tile_k"]) if S else ()
    if problems is None:
        problems = CONV_PROBLEMS + cl_probs + cover.conv_cover_problems(full) + cover.conv_deep_problems(full)
    rng = np.random.default_rng(99)
    out, skipped = [], []
    for (pname, N, Cc, H, W, K, Y, X, st, pd, dl, G) in problems:
        prob = dict(N=N, C=Cc, H=H, W=W, K=K, Y=Y, X=X, stride_h=st[0], stride_w=st[1], pad_h=pd[0],
                    pad_w=pd[1], dil_h=dl[0], dil_w=dl[1], groups=G)
        text, reason = lowerer.launch_plan({**full, **prob, "degree": cover.problem_degree(full, pname, degree)},
                                           arch)
        if reason:
            skipped.append(Skipped(pname, reason))
            continue
        plan = parse_launch_plan(text)
        a = plan["args"]
        _check_problem_slicing(pname, plan, full, cl_probs)
        CK.check_plan_bytes(plan)
        exact = cover.data_mode(pname) == "exact"
        xs, ws_, bias = CK.conv_inputs(rng, dt, (N, H, W, Cc), (K, Y, X, Cc // G), exact)
        if S and _order_probed(pname):  # the fold order shows in D (cluster == two-stage)
            xs, ws_ = cover.order_probe(xs, ws_, dt, G, plan["ks"])
        if _order_probed(pname) and Y == X == 1:  # a fused epilogue before the last slab shows in D
            xs, ws_ = numerics_fused.cancel_probe_conv(full, xs, ws_, G, plan)
        kw = dict(groups=G, stride=st, padding=pd, dilation=dl)
        r64 = ref.conv_fwd(xs, ws_, **kw)
        asum = ref.conv_abs_fwd(xs, ws_, **kw)
        acc = full["acc_epilogue"]
        e, easum = CK.epilogue(r64, acc, bias, asum)
        tol = ref.conv_tolerance(dt, int(a["Kgemm"]), easum, e)
        bufs = {"x": ref.cast_bits(np.asarray(xs, np.float32), dt), "w": ref.cast_bits(np.asarray(ws_, np.float32), dt),
                "bias": bias}
        kern, launches = {}, []
        plan_launches(text, full, spec, arch, dt, bufs, kern, launches, "conv", {})
        if bufs["d"].nbytes != 2 * e.size:
            raise SimError(f"{pname}: conv_launch plan d_bytes = {a['d_bytes']}, the reference has {2 * e.size} bytes")
        check = CK.tolerance_check(e, tol, dt)
        if exact:
            check = _and_then(check, CK.exact_check(pname, e, asum, dt))
        if plan["workspace_bytes"] and acc == "identity":  # fused: exact_after_fold below (order + epilogue)
            check = _and_then(check, CK.fold_model_check(plan, dt, "d", "ws"))
        inv = _invariant_twin(full, pname, prob, degree, arch, lowerer, kern, bufs, launches, dt, tol)
        if inv is not None:
            check = _and_then(check, inv)
        fused = numerics_fused.exact_after_fold(full, plan, dt, e.shape)  # None unless fused split
        if fused is not None:
            check = _and_then(check, fused)
        data = f"d{plan['data_slices']}" if "data_slices" in plan else ""  # cluster: the slices with data
        kr = Y * X * C.pixel_slot(full["vector_a"]) if full["vector_a"] in C.PIXEL_VECTORS else int(a["Kgemm"])
        out.append(Case(f"{pname}_ks{plan['ks']}x{plan['ks_count']}{data}", kern, bufs, launches, check,
                        classes=cover.conv_classes(full, plan, kr), orders=cover.problem_orders(pname)))
    if not out:
        raise SimError("no conv problem is admitted by the conv_launch plan for this config: "
                       + "; ".join(f"{s.name}: {s.reason}" for s in skipped))
    return out + skipped


def _check_problem_slicing(pname: str, plan: dict, full: dict, cl_probs) -> None:
    """The plan's slicing must be what a cluster or K-deep problem was built for."""
    a, S = plan["args"], full["split_k_cluster"]
    if pname in (c[0] for c in cl_probs):
        tail = pname.endswith("_empty_tail")
        ok = plan["ks_count"] == S and (
            plan.get("data_slices", S) < S if tail else
            plan.get("data_slices") == S and plan["ks"] * S == int(a["Kgemm"]))
        if not ok:
            want = "trailing empty slices" if tail else f"every one of the {S} slices tile_k-aligned data"
            raise SimError(f"{pname}: the cluster problem does not give {want} (plan ks {plan['ks']}, "
                           f"ks_count {plan['ks_count']}, data_slices {plan.get('data_slices')}, "
                           f"Kgemm {a['Kgemm']})")
    if pname.startswith("deep_"):
        why = cover.deep_slicing_problem(full, plan)
        if why:
            raise SimError(f"{pname}: the K-deep problem does not give {why}")


def plan_launches(text: str, full: dict, spec: dict, arch: str, dt: str, bufs: dict, kern: dict, launches: list,
                  key: str, ren: dict) -> dict:
    """Add a conv_launch plan's launches (Stage 1, and Stage 2 when the plan says
    ``needs_stage2``) to a case, through the product's route: device buffers
    sized by the plan (:func:`parity.launch.plan.buffer_bytes`; ``d`` NaN, the
    workspace NaN, so unwritten elements fail; names renamed by ``ren``), the
    runtime's Stage-2 spec, grid and pairing rule (parity/runtime/pipeline.py,
    parity/reduce_launch.py), arguments packed by the runtime (``Launch.variant``).
    ``key``: the kernel key of Stage 1 in ``kern``. Returns the parsed plan."""
    rp = parse_plan(text)
    nan16 = 0x7FC0 if dt == "bf16" else 0x7E00
    for t, n in buffer_bytes(rp, ref.epilogue_has(full["acc_epilogue"], "bias")).items():
        name = ren.get(t, t)
        if t in ("x", "w", "bias"):
            if name in bufs and bufs[name].nbytes != n:
                raise SimError(f"conv_launch plan: {t} is {n} bytes, the reference has {bufs[name].nbytes}")
        elif t == "d":
            bufs[name] = np.full(n // 2, nan16, np.uint16)
        else:
            bufs[name] = np.full(n // 4, np.nan, np.float32)
    bufs.setdefault("null", np.zeros(0, np.uint8))
    kern[key] = ("conv_implicit_gemm", spec, arch)
    rargs = {n: (f"buffer {ren.get(v.split(' ', 1)[1], v.split(' ', 1)[1])}" if isinstance(v, str)
                 and v.startswith("buffer ") else v) for n, v in rp.args.items()}
    launches.append(Launch(key, rp.grid, rp.block[0], _renamed(_plan_args(_texts(rp.args), CONV_CALLER), ren),
                           cluster=rp.cluster or (1, 1, 1), kernel_name=rp.kernel,
                           lds_bytes=rp.lds_bytes if key == "conv" else None, variant=rp.variant,
                           plan_args=rargs, scalars=CONV_CALLER, plan_cluster=rp.cluster))
    if rp.needs_stage2:
        rspec = reduce_spec(dt, full["acc_epilogue"])
        why = reduce_launch_reason(rspec, rp.stage2_args)
        if why:
            raise SimError(f"conv_launch plan: Stage 2 refused by the pairing rule (parity/reduce_launch.py): {why}")
        kern["reduce"] = ("conv_fwd_split_k_reduce", rspec, arch)
        sargs = {n: (f"buffer {ren.get(v.split(' ', 1)[1], v.split(' ', 1)[1])}" if isinstance(v, str)
                     and v.startswith("buffer ") else v) for n, v in rp.stage2_args.items()}
        launches.append(Launch("reduce", reduce_grid(rp, rspec), rspec["threads"],
                               _renamed(_plan_args(_texts(rp.stage2_args), CONV_CALLER), ren), variant="reduce",
                               plan_args=sargs, scalars=CONV_CALLER,
                               acc_epilogue=rspec.get("acc_epilogue", "identity")))
    return rp


def _texts(args: dict) -> dict:
    return {n: str(v) for n, v in args.items()}


def _invariant_twin(full, pname, prob, degree, arch, lowerer, kern, bufs, launches, dt, tol):
    """Add the launches of a cross-form invariant (parity/sim/invariants.py) to a
    conv case and return its check, or None: a cluster config's two-stage twin
    (``cluster == two-stage``, on the problems with every slice or every fold row
    carrying data) or a two-stage config's plain twin (``plain ~ split``, on
    ``cover_full_tile``). The twin writes D into ``d2`` (workspace ``ws2``)."""
    S = full["split_k_cluster"]
    if S and _order_probed(pname):
        twin, deg, name = INV.cluster_twin_spec(full), degree, "cluster == two-stage"
    elif not S and full["split_k"] > 1 and pname == "cover_full_tile":
        twin, deg, name = INV.plain_twin_spec(full), 1, "plain ~ split"
    else:
        return None
    text, reason = lowerer.launch_plan({**twin, **prob, "degree": deg}, arch)
    if reason:
        raise SimError(f"{pname}: invariant {name!r}: the twin {_variant_name(twin)} is not admitted: {reason}")
    tfull = {f.name: twin.get(f.name, f.default) for f in C.FIELDS}
    plan_launches(text, tfull, twin, arch, dt, bufs, kern, launches, "twin", {"d": "d2", "ws": "ws2"})
    labels = (_variant_name(full), _variant_name(twin))
    if name == "cluster == two-stage":
        return lambda b: INV.same_bits(name, b["d"], b["d2"], labels)
    return lambda b: INV.within(name, b["d"], b["d2"], tol, dt, labels)


def _order_probed(pname: str) -> bool:
    """The cluster problems that run the order probe and the two-stage twin (1x1: the
    full wide-D tile, and the narrow-D problem with every slice carrying data)."""
    return pname == "cover_full_tile" or pname.endswith("_1x1_groups")


def _variant_name(full: dict) -> str:
    S = full["split_k_cluster"]
    return f"cluster S={S}" if S else f"two-stage split_k={full['split_k']}" if full["split_k"] > 1 else "plain"


def _renamed(args: dict, ren: dict) -> dict:
    return {n: Buf(ren.get(v.name, v.name)) if isinstance(v, Buf) else v for n, v in args.items()}


PLANS = {
    "conv_fwd_split_k_reduce": (reduce_cases, REDUCE_TOLERANCE),
    "ir_core": (ir_core_cases, "exact bytes against numpy"),
    "conv_implicit_gemm": (conv_cases, CONV_TOLERANCE),
}

#: families whose output plans launches or degrees -> the kernel families whose launches
#: (and so whose numerics) depend on it: conv_launch plans every conv launch and its
#: Stage 2; split_k_policy picks degrees and the Stage-2 spec; conv_abi is the argument
#: list the runtime packs for both kernels. A change to one makes ``parity write`` run
#: the numerics of every config of those families (parity/golden/bless.py).
PLANNERS = {
    "conv_launch": ("conv_implicit_gemm",),
    "split_k_policy": ("conv_implicit_gemm", "conv_fwd_split_k_reduce"),
    "conv_abi": ("conv_implicit_gemm", "conv_fwd_split_k_reduce"),
}


def planned_configs(changed_families, families=None) -> dict:
    """``planner -> {(family, config)}``: for every changed family of :data:`PLANNERS`,
    the accepted configs (:func:`accepted_configs`) of the kernel families it plans."""
    out = {}
    for planner in sorted(set(changed_families) & set(PLANNERS)):
        fams = PLANNERS[planner]
        out[planner] = {(f, c) for f, c, _, _ in accepted_configs(fams, families=families)}
    return out


# -- running ----------------------------------------------------------------------------------

class _Lowerer:
    """Lowers (and decodes once) the kernels cases name. ``coverage``: decode
    them with branch/select recording (:mod:`parity.sim.coverage`)."""

    def __init__(self, engine: str = "python", coverage: bool = False, opt: bool = False):
        self.E = importlib.import_module("python_engine" if engine == "python" else "cpp_engine")
        self.kernels: dict = {}
        self.coverage = coverage
        self.opt_lane = None
        if opt:   # every case also on the modules after opt -O3 (parity/sim/optimised.py)
            from parity.sim import optimised
            optimised.Lane(_Lowerer).attach(self)

    def text(self, family, spec, arch, flavor=FLAVOR) -> str:
        return self.E.lower(family, spec, arch, flavor).text

    def kernel(self, family, spec, arch, flavor=FLAVOR) -> Kernel:
        key = (family, repr(sorted(spec.items())), arch, flavor)
        k = self.kernels.get(key)
        if k is None:
            k = self.kernels[key] = Kernel(self.text(family, spec, arch, flavor), arch=arch,
                                           coverage=self.coverage)
        return k

    def launch_plan(self, spec: dict, arch: str, flavor=FLAVOR) -> tuple:
        """``(plan text, None)`` of an admitted conv_launch spec, else ``(None, reason)``."""
        reason = self.E.validate("conv_launch", spec, arch, flavor)
        if reason:
            return None, reason
        return self.E.lower("conv_launch", spec, arch, flavor).text, None


def run_case(case: Case, lowerer, orders=("forward", "reverse")) -> tuple:
    """Run a case's launches in order on its buffers (copied into a guarded
    arena, parity/sim/launch_route.py) and check them: ``(problems, wave-instructions)``."""
    arena = LR.Arena(case.buffers)
    bufs = arena.views
    n = 0
    for la in case.launches:
        fam, spec, arch = case.kernels[la.kernel]
        k = lowerer.kernel(fam, spec, arch)
        if la.kernel_name is not None and k.name != la.kernel_name:
            raise SimError(f"the launch plan names kernel {la.kernel_name}, the lowered kernel is {k.name}")
        if la.lds_bytes is not None:
            lds = sum(g.ty.size for g in k.module.lds)
            if lds != la.lds_bytes:
                raise SimError(f"the launch plan says lds_bytes {la.lds_bytes}, kernel {k.name} allocates {lds}")
        cluster = la.cluster
        if la.variant is not None:
            args = LR.routed_args(la.variant, la.plan_args, la.scalars, k, arena, la.acc_epilogue)
            cluster = LR.routed_cluster(k, la.grid, la.plan_cluster)
        else:
            args = {p: (bufs[v.name] if isinstance(v, Buf) else v) for p, v in la.args.items()}
        cap = getattr(lowerer, "max_instructions", None)
        if cap is not None:  # per wave: its static instructions, 64 times over (loops, retries)
            cap = 64 * k.n_instructions * math.prod(la.grid) * (la.block // 32)
        st = k.launch(la.grid, la.block, args, cluster=cluster, orders=orders,
                      max_instructions=cap or 200_000_000)
        n += st.instructions
        arena.check_guards(f"launch of {k.name}")
    return case.check(bufs), n


def run_config(family: str, cfg_name: str, spec: dict, arch: str, lowerer=None, first_failure: bool = False
               ) -> Outcome:
    """Run every case of one config; ``first_failure``: stop at the first failing case
    (``parity mutate``: a mutant is killed by one)."""
    lowerer = lowerer or _Lowerer()
    o = Outcome(family, cfg_name, True)
    t0 = time.perf_counter()
    try:
        plan = PLANS[family][0]
        spec = _with_defaults(family, spec)
        own = None
        if getattr(lowerer, "coverage", False):
            own = lowerer.kernel(family, spec, arch)
            own.coverage.reset()
        cases = plan(spec, arch, lowerer) if plan is conv_cases else plan(spec, arch)
        hit = set().union(*(c.classes for c in cases if isinstance(c, Case)))
        o.skipped = [c for c in cases if isinstance(c, Skipped)]
        wrap = getattr(lowerer, "wrap_case", None)   # the opt lane (parity/sim/optimised.py)
        for case in (c for c in cases if not isinstance(c, Skipped)):
            if wrap is not None:
                case = wrap(case, run_case)
            try:
                probs, n = run_case(case, lowerer, case.orders)
                if case.expect_error is not None:
                    probs = [f"expected {case.expect_error.__name__} at `{case.expect_where}`, the kernel ran"]
            except SimError as e:
                n = 0
                if case.expect_error is not None and isinstance(e, case.expect_error) \
                        and case.expect_where in str(e):
                    probs = []
                    o.expected_errors += 1
                else:
                    probs = [f"{type(e).__name__}: {e}"]
            o.cases += 1
            o.launches += len(case.launches)
            o.instructions += n
            o.problems += [f"{case.name}: {p}" for p in probs]
            if first_failure and o.problems:
                break
        if own is not None:
            o.coverage = own.coverage.summary()
            o.classes = {c: c in hit for c in cover.required_classes(family, spec)}
    except Exception as e:  # lowering failed, plan failed, emulator bug: a failure, not a skip
        o.problems.append(f"{type(e).__name__}: {e}")
    o.ok = not o.problems
    o.seconds = time.perf_counter() - t0
    return o


def _with_defaults(family: str, spec: dict) -> dict:
    """``spec`` with the engine's defaults for missing fields (the kernels are
    lowered from the config's own spec; the plan needs every field)."""
    try:
        fields = python_engine.spec_fields(family)
    except Exception:
        return dict(spec)
    return {**{n: d for n, d in fields}, **spec}


def accepted_configs(only=None, flavor: str = FLAVOR, families=None) -> list:
    """(family, config name, spec, arch) of every config expected to lower at
    ``flavor`` in every family that has a numerics plan. ``families``: the
    already selected families (``--only`` with FAMILY/NAME items), else all."""
    out = []
    for fam in (families if families is not None else load_families()):
        if fam.name not in PLANS or (only and fam.name not in only):
            continue
        for c in fam.configs:
            if c.applies(flavor) and c.expectation(flavor).kind == "ok":
                out.append((fam.name, c.name, dict(c.spec), c.arch))
    return out


def _worker(item):
    fam, name, spec, arch = item
    lw = _worker_lowerer()
    if lw.opt_lane is not None:
        lw.opt_lane.reset()
    o = run_config(fam, name, spec, arch, lw)
    if lw.opt_lane is not None:   # the opt lane's order-sensitive problems (parity/sim/optimised.py)
        lw.opt_lane.run_order_cases(o, fam, _with_defaults(fam, spec), arch, lw, sys.modules[__name__])
        o.opt = lw.opt_lane.stats.as_dict()
    return o


def _indexed_worker(job):
    i, item = job
    return i, _worker(item)


_LOWERER = None
_COVERAGE = False   # set by run_all before the worker processes fork
_OPT = False        # likewise: the opt lane (parity/sim/optimised.py)


def _worker_lowerer():
    global _LOWERER
    if _LOWERER is None or _LOWERER.coverage != _COVERAGE or (_LOWERER.opt_lane is not None) != _OPT:
        _LOWERER = _Lowerer(coverage=_COVERAGE, opt=_OPT)
    return _LOWERER


def run_all(only=None, jobs: int = 1, progress=None, families=None, select=None, coverage: bool = False,
            opt: bool = False) -> list:
    """Run every accepted config (:func:`accepted_configs`) in ``jobs`` processes;
    ``progress(outcome, done, total)`` after each config (in the order they
    finish; the list returned is in catalog order). ``select``, a set of
    (family, config name), narrows it further (``parity write`` runs only the
    configs whose llvm23 text changed). ``coverage``: record branch/select
    coverage and tile classes (``Outcome.coverage`` / ``Outcome.classes``). ``opt``: also run
    every case on the modules after ``opt -O3`` and require bit-identical buffers
    (parity/sim/optimised.py; its cost in ``Outcome.opt``)."""
    global _COVERAGE, _OPT
    _COVERAGE = coverage
    _OPT = opt
    items = accepted_configs(only, families=families)
    if select is not None:
        items = [it for it in items if (it[0], it[1]) in select]
    total = len(items)
    if jobs <= 1:
        out = []
        for it in items:
            out.append(_worker(it))
            if progress:
                progress(out[-1], len(out), total)
        return out
    # longest first, one config per task: both workers stay busy to the end
    # (parity/sim/schedule.py); the outcomes are returned in catalog order
    ctx = mp.get_context("fork")
    out = [None] * total
    done = 0
    with ctx.Pool(jobs, initializer=leave_sigint_to_parent) as pool:  # Ctrl-C: one error line
        for i, r in pool.imap_unordered(_indexed_worker, [(i, items[i]) for i in longest_first(items)],
                                        chunksize=1):
            out[i] = r
            done += 1
            if progress:
                progress(r, done, total)
    return out


class TextLowerer(_Lowerer):
    """A lowerer that hands out ``text`` (an IR module, e.g. a mutant or ``parity
    numerics --ir FILE``) in place of ``family``'s kernel of ``spec``; every other
    kernel a case needs (Stage 2, the two-stage twin) is lowered as usual."""

    def __init__(self, family: str, spec: dict, arch: str, text: str, coverage: bool = False):
        super().__init__("python", coverage)
        #: per launch (run_case): 64 times the kernel's static instruction count per
        #: wave; a text that runs longer hangs (a mutated loop bound). The plans' loops
        #: run at most a few dozen K tiles or slabs.
        self.max_instructions = "per wave"
        self.target = (family, repr(sorted(_with_defaults(family, spec).items())), arch)
        self.replacement = text

    def text(self, family, spec, arch, flavor=FLAVOR) -> str:
        if (family, repr(sorted(spec.items())), arch) == self.target and flavor == FLAVOR:
            return self.replacement
        return super().text(family, spec, arch, flavor)


def find_config(ref: str, families=None) -> tuple:
    """``(family, config name, spec, arch)`` of the accepted llvm23 config named by
    ``ref`` (``FAMILY/NAME`` or a NAME unique over the families with a plan).
    Raises ``ValueError`` naming the rule."""
    fam, _, name = ref.rpartition("/")
    hits = [it for it in accepted_configs(families=families) if it[1] == name and (not fam or it[0] == fam)]
    if len(hits) != 1:
        why = "no accepted llvm23 config with a numerics plan is" if not hits else "several configs are"
        raise ValueError(f"{why} named {ref!r} (use FAMILY/NAME)")
    return hits[0]

"""The numerics plan of conv_implicit_gemm (parity/sim/plans/__init__.py):
every launch -- grid, block, cluster shape, ks, ks_count, workspace bytes,
every argument -- taken from the Python engine's ``conv_launch`` plan of
(spec, problem, degree) and launched through the product's route; problems
the plan does not admit are skipped, a config no problem admits fails
(:func:`conv_cases`)."""
from __future__ import annotations

import numpy as np

from parity.launch.plan import buffer_bytes, parse_plan
from parity.launch.reduce_launch import reduce_launch_reason
from parity.launch.stage2 import reduce_grid, reduce_spec
from parity.sim import checks as CK
from parity.sim import cover
from parity.sim import invariants as INV
from parity.sim import numerics_fused
from parity.sim import reference as ref
from parity.sim.cases import Buf, Case, Launch, Skipped, and_then as _and_then
from parity.sim.checks import CONV_CALLER
from parity.sim.errors import SimError
from python_engine.facts import conv_kernel as C


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
    # K = kpg = 9: (K | kpg) & 7 == 1, so a 16-byte D test that admits K = 1 mod 8 (`d_klow`
    # and 7 -> 6, `d_wide` == 1) stores 8 columns past a 9-wide row (drawn by the every-site run
    # of plain 32x32x32, docs/sim.md)
    ("odd_k9", 1, 8, 3, 3, 9, 1, 1, (1, 1), (0, 0), (1, 1), 1),
    # a 3x1 filter with dilation (1, 2^28) (admitted: a 1-wide filter fits any padded width):
    # the K walk's byte steps dil_w * C * 2 wrap modulo 2^32 (the honest kernel's offsets stay
    # right modulo 2^32), so a `nuw` promised on `k_dcy = dil_w*C*2 - cpg*2` is broken at the
    # first channel carry (cpg 24: tile_k does not divide it)
    ("dil_wrap", 1, 24, 2, 2, 8, 3, 1, (1, 1), (1, 0), (1, 1 << 28), 1),
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


TOLERANCE = ("|D - ref| <= 2*u_out*|ref| + (Kgemm+2)*2^-24*sum|a*b| + tiny, ref in float64 from the "
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


def conv_cases(spec: dict, arch: str, lowerer, problems=None) -> list:
    """Cases of one conv_implicit_gemm spec (plain, two-stage + reduce, cluster).
    Grid, block, cluster shape, ks, ks_count, workspace bytes, buffer sizes and
    every argument come from the conv_launch plan of (spec, problem, degree),
    launched through the product's route (:func:`plan_launches`); a problem the
    plan does not admit is a :class:`Skipped`, and a config no problem admits
    fails. Problems with bit-exact data (:func:`parity.sim.cover.data_mode`)
    are also checked bit for bit against the RNE of the exact result, and every
    split form's D against the numpy model of its documented fold order.
    ``lowerer``: a parity.sim.numerics ``_Lowerer`` (its ``launch_plan``);
    ``problems``: the CONV_PROBLEMS-layout tuples to run (default: all of them)."""
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
        caller = CK.conv_caller(pname)
        if caller is not CONV_CALLER:   # zero weights and bias: every result is +0 exactly
            ws_[:], bias[:] = 0.0, 0.0
        kw = dict(groups=G, stride=st, padding=pd, dilation=dl)
        r64 = ref.conv_fwd(xs, ws_, **kw)
        asum = ref.conv_abs_fwd(xs, ws_, **kw)
        acc = full["acc_epilogue"]
        e, easum = CK.epilogue(r64, acc, bias, asum, caller)
        tol = ref.conv_tolerance(dt, int(a["Kgemm"]), easum, e)
        bufs = {"x": ref.cast_bits(np.asarray(xs, np.float32), dt), "w": ref.cast_bits(np.asarray(ws_, np.float32), dt),
                "bias": bias}
        kern, launches = {}, []
        plan_launches(text, full, spec, arch, dt, bufs, kern, launches, "conv", {}, caller)
        if bufs["d"].nbytes != 2 * e.size:
            raise SimError(f"{pname}: conv_launch plan d_bytes = {a['d_bytes']}, the reference has {2 * e.size} bytes")
        check = CK.tolerance_check(e, tol, dt)
        if exact:
            check = _and_then(check, CK.exact_check(pname, e, asum, dt))
        if plan["workspace_bytes"] and acc == "identity":  # fused: exact_after_fold below (order + epilogue)
            check = _and_then(check, CK.fold_model_check(plan, dt, "d", "ws"))
        inv = _invariant_twin(full, pname, prob, degree, arch, lowerer, kern, bufs, launches, dt, tol, caller)
        if inv is not None:
            check = _and_then(check, inv)
        fused = numerics_fused.exact_after_fold(full, plan, dt, e.shape, caller=caller)  # None unless fused split
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
                  key: str, ren: dict, caller: dict = CONV_CALLER) -> dict:
    """Add a conv_launch plan's launches (Stage 1, and Stage 2 when the plan says
    ``needs_stage2``) to a case, through the product's route: device buffers
    sized by the plan (:func:`parity.launch.plan.buffer_bytes`; ``d`` NaN, the
    workspace NaN, so unwritten elements fail; names renamed by ``ren``), the
    runtime's Stage-2 spec, grid and pairing rule (parity/runtime/pipeline.py,
    parity/reduce_launch.py), arguments packed by the runtime (``Launch.variant``).
    ``key``: the kernel key of Stage 1 in ``kern``; ``caller``: the values of the plan's
    ``caller`` scalars. Returns the parsed plan."""
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
    launches.append(Launch(key, rp.grid, rp.block[0], _renamed(_plan_args(_texts(rp.args), caller), ren),
                           cluster=rp.cluster or (1, 1, 1), kernel_name=rp.kernel,
                           lds_bytes=rp.lds_bytes if key == "conv" else None, variant=rp.variant,
                           plan_args=rargs, scalars=caller, plan_cluster=rp.cluster))
    if rp.needs_stage2:
        rspec = reduce_spec(dt, full["acc_epilogue"])
        why = reduce_launch_reason(rspec, rp.stage2_args)
        if why:
            raise SimError(f"conv_launch plan: Stage 2 refused by the pairing rule (parity/reduce_launch.py): {why}")
        kern["reduce"] = ("conv_fwd_split_k_reduce", rspec, arch)
        sargs = {n: (f"buffer {ren.get(v.split(' ', 1)[1], v.split(' ', 1)[1])}" if isinstance(v, str)
                     and v.startswith("buffer ") else v) for n, v in rp.stage2_args.items()}
        launches.append(Launch("reduce", reduce_grid(rp, rspec), rspec["threads"],
                               _renamed(_plan_args(_texts(rp.stage2_args), caller), ren), variant="reduce",
                               plan_args=sargs, scalars=caller,
                               acc_epilogue=rspec.get("acc_epilogue", "identity")))
    return rp


def _texts(args: dict) -> dict:
    return {n: str(v) for n, v in args.items()}


def _invariant_twin(full, pname, prob, degree, arch, lowerer, kern, bufs, launches, dt, tol, caller=CONV_CALLER):
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
    plan_launches(text, tfull, twin, arch, dt, bufs, kern, launches, "twin", {"d": "d2", "ws": "ws2"}, caller)
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


def cases(spec: dict, arch: str, lowerer) -> list:
    """The plan's entry point (parity/sim/plans/__init__.py): :func:`conv_cases` on
    every problem; ``lowerer`` (parity.sim.numerics ``_Lowerer``) gives the launch plans."""
    return conv_cases(spec, arch, lowerer)

"""The checks of a numerics case (parity/sim/numerics.py) beyond running it:
the conv_launch plan's workspace rule, the data of a conv problem (Gaussian or
bit-exact), the reference epilogue, and the checks of D: within the tolerance,
bit for bit against the RNE of the exact result (issue 34 item 3), and bit for
bit against the numpy model of the documented fold order."""
from __future__ import annotations

import numpy as np

from parity.sim import reference as ref
from parity.sim import cover
from parity.sim.errors import SimError

#: values the conv plan passes where the launch plan says ``caller``
CONV_CALLER = {"scale": 0.75, "clamp_lo": -0.5, "clamp_hi": 0.5}


def check_plan_bytes(plan: dict) -> None:
    """The plan's workspace against what the kernels are told and write (DESIGN §4:
    a ``[ks_count][M][K]`` fp32 workspace, every slab element written once):
    ``ws_bytes`` (the num_records Stage 1 and Stage 2 are given) covers ks_count
    slabs and ``workspace_bytes`` (the allocation) covers ``ws_bytes``. SimError
    naming the plan field and the rule."""
    a = plan["args"]
    if "ws_bytes" not in a:
        return
    need = plan["ks_count"] * int(a["M"]) * int(a["K"]) * 4
    if int(a["ws_bytes"]) != need:
        raise SimError(f"conv_launch plan: ws_bytes = {a['ws_bytes']}, but the kernel writes ks_count "
                       f"{plan['ks_count']} fp32 slabs of M*K = {a['M']}*{a['K']} ({need} bytes; rule: "
                       f"ws_bytes = ks_count*M*K*4, a [ks_count][M][K] workspace, DESIGN §4)")
    if plan["workspace_bytes"] < int(a["ws_bytes"]):
        raise SimError(f"conv_launch plan: workspace_bytes = {plan['workspace_bytes']} is below ws_bytes = "
                       f"{a['ws_bytes']} (rule: the allocation covers the bytes the kernels are told they have)")


def conv_inputs(rng, dt: str, xshape: tuple, wshape: tuple, exact: bool) -> tuple:
    """(x, w, bias) float32, x and w representable in ``dt``. Gaussian data, or
    with ``exact`` dyadic data (:func:`parity.sim.cover.exact_values`) whose
    fp32 accumulation is exact in any order."""
    if exact:
        kgemm = int(np.prod(wshape[1:]))
        return (cover.exact_values(rng, xshape, kgemm, "x"), cover.exact_values(rng, wshape, kgemm, "w"),
                cover.exact_values(rng, (wshape[0],), kgemm, "bias"))
    xs = ref.round_bf16(rng.standard_normal(xshape)) if dt == "bf16" else \
        rng.standard_normal(xshape).astype(np.float16).astype(np.float32)
    ws_ = ref.round_bf16(rng.standard_normal(wshape)) if dt == "bf16" else \
        rng.standard_normal(wshape).astype(np.float16).astype(np.float32)
    return xs, ws_, rng.standard_normal(wshape[0]).astype(np.float32)


#: the caller scalars of the conv zero-bound problems (``cover_clamp_zero*``): clamp bounds -0
#: and -0 meet a +0 result (zero weights and bias: every result), kept +0 by ``x < lo`` and
#: ``x > hi``; either compare made non-strict stores -0
CONV_ZERO_BOUNDS = {"scale": 0.75, "clamp_lo": -0.0, "clamp_hi": -0.0}


def conv_caller(pname: str) -> dict:
    """The caller scalars of conv problem ``pname``: :data:`CONV_ZERO_BOUNDS` for
    ``cover_clamp_zero`` and ``cover_clamp_zero_narrow``, else :data:`CONV_CALLER`."""
    return CONV_ZERO_BOUNDS if pname.startswith("cover_clamp_zero") else CONV_CALLER


def epilogue(r64, acc: str, bias, asum, caller: dict = CONV_CALLER):
    """``(e, asum)``: the float64 result ``r64`` after epilogue ``acc`` with the conv
    plan's caller scalars ``caller`` (:func:`parity.sim.reference.epilogue_f64`), and the
    absolute-sum bound scaled alike."""
    return ref.epilogue_f64(acc, r64, bias, caller, asum)


def tolerance_check(e, tol, dt: str):
    def check(b):
        bits = b["d"]
        got = (bits.astype(np.uint32) << np.uint32(16)).view(np.float32) if dt == "bf16" else bits.view(np.float16)
        got = got.astype(np.float64).reshape(e.shape)
        bad = ~(np.abs(got - e) <= tol)
        if not bad.any():
            return []
        k = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), e.shape))
        return [f"D{list(k)} (n, ho, wo, k) = {float(got[k])!r}, want {float(e[k])!r} +- {float(tol[k]):.3g} "
                f"({int(bad.sum())} of {bad.size} outside the tolerance)"]
    return check


def exact_check(pname: str, e, asum, dt: str):
    """Bit for bit: D == RNE(exact result) (``e`` is exact in float64 and in
    float32 by construction of the data; parity.sim.reference.ref_cast_bits rounds)."""
    if not np.array_equal(e.astype(np.float32).astype(np.float64), e) or asum.max(initial=0) >= 2.0 ** 15:
        raise SimError(f"{pname}: the bit-exact data's sums are not exact in fp32 (a data generator bug)")
    want = ref.ref_cast_bits(e.astype(np.float32).ravel(), dt)

    def check(b):
        got = b["d"].reshape(-1)
        okm = ref.same_bits_16(got, want, dt)
        if okm.all():
            return []
        k = int(np.argmin(okm))
        idx = [int(i) for i in np.unravel_index(k, e.shape)]
        return [f"bit-exact: D{idx} (n, ho, wo, k) = {int(got[k]):#06x}, want {int(want[k]):#06x} = RNE({float(e.flat[k])!r}) "
                f"({int((~okm).sum())} of {okm.size} elements differ; the data make fp32 accumulation exact, "
                f"so D must be round-to-nearest-even of the exact result)"]
    return check


def fold_model_check(plan: dict, dt: str, d: str, ws: str):
    """Bit for bit on any data: D == RNE(fp32 sum of the workspace slabs from slab 0
    in order), the documented fold order of Stage 2 and of the cluster fold
    (docs/conv_implicit_gemm.md), modelled in numpy on the slabs the kernel wrote."""
    a = plan["args"]
    M, K, kc = int(a["M"]), int(a["K"]), plan["ks_count"]

    def check(b):
        slabs = b[ws][:kc * M * K].reshape(kc, M, K)
        want = ref.ref_cast_bits(ref.split_k_sum(slabs).ravel(), dt)
        okm = ref.same_bits_16(b[d].reshape(-1), want, dt)
        if okm.all():
            return []
        k = int(np.argmin(okm))
        return [f"fold order: D[{k}] = {int(b[d].reshape(-1)[k]):#06x}, want {int(want[k]):#06x} = RNE(fp32 sum of "
                f"the {kc} slabs from slab 0 in order) ({int((~okm).sum())} of {okm.size} elements differ)"]
    return check

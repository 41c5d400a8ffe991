"""The numerics plan of conv_fwd_split_k_reduce (parity/sim/plans/__init__.py):
every accepted reduce spec on the problems of :data:`parity.sim.cases.REDUCE_PROBLEMS`
and the coverage problems, D bit-exact against a sequential fp32 sum and an
independent RNE cast (identity), or against :mod:`parity.sim.numerics_fused`'s
reference (a fused epilogue); launched through the product's pairing rule and
packer (parity/launch/reduce_launch.py)."""
from __future__ import annotations

import math

import numpy as np

from parity.launch.reduce_launch import reduce_launch_reason
from parity.sim import cover
from parity.sim import invariants as INV
from parity.sim import numerics_fused
from parity.sim import reference as ref
from parity.sim.cases import REDUCE_KS_DEGREE0, REDUCE_PROBLEMS, REDUCE_SPECIALS, and_then as _and_then, \
    place_specials
from parity.sim.cases import Buf, Case, Launch, ReduceProblem
from parity.sim.errors import SimError

TOLERANCE = ("bit-exact: D == RNE(sequential fp32 sum over slabs from slab 0), "
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
                _identity_reduce_problem(rng, dt, M, K, ks, v)
            out.append(_reduce_case(spec, arch, prob, M, K, ks))
    if ref.epilogue_has(spec.get("acc_epilogue", "identity"), "clamp"):
        for caller in numerics_fused.ZERO_BOUNDS:   # a bound of +-0 meeting the other zero
            prob = numerics_fused.zero_bound_problem(spec, rng, 33, 20, kss[-1], caller)
            out.append(_reduce_case(spec, arch, prob, 33, 20, kss[-1]))
    return out if fused else out + [_reduce_exact_case(spec, arch, rng)]


def _identity_reduce_problem(rng, dt: str, M: int, K: int, ks: int, vector: int) -> ReduceProblem:
    """Slabs of mixed magnitudes (1, 300, 1e-3), the specials in slab 0 on the vector
    path and the tail (:func:`parity.sim.cases.place_specials`) and the order probe;
    D = RNE(sequential fp32 sum)."""
    mk = M * K
    scale = rng.choice([1.0, 300.0, 1e-3], size=(ks, mk)).astype(np.float32)
    ws = (rng.standard_normal((ks, mk)).astype(np.float32) * scale).astype(np.float32)
    place_specials(ws, vector, 8)   # the order probe keeps the last 8
    cover.reduce_order_probe(ws, min(mk, REDUCE_SPECIALS.size))
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
    launches = [_reduce_launch("reduce", grid, t, spec, prob.ws, d, M, K, ks, "d", prob.plan_args, prob.caller)]
    bufs = {"ws": prob.ws, "d": d, **prob.bufs}
    if deg and mk >= 32 * v:  # invariant unrolled == loop, on the problems with a vector path
        twin = INV.loop_twin_spec(spec)
        kern["loop"] = ("conv_fwd_split_k_reduce", twin, arch)
        bufs["d2"] = d.copy()
        launches.append(_reduce_launch("loop", grid, t, twin, prob.ws, d, M, K, ks, "d2", prob.plan_args,
                                       prob.caller))
        check = _and_then(check, lambda b, d=deg: INV.same_bits(
            "unrolled == loop", b["d"], b["d2"], (f"degree {d}", f"degree 0, ks_count {d}")))
    return Case(f"M{M}_K{K}_ks{ks}" + prob.suffix, kern, bufs, launches, check,
                classes=cover.reduce_classes(spec, M, K, ks))


def _reduce_launch(key: str, grid, t: int, spec: dict, ws, d, M: int, K: int, ks: int, dname: str,
                   epi_args: dict | None = None, caller: dict | None = None) -> Launch:
    """A reduce launch through the product's route: the runtime's pairing rule
    (parity/reduce_launch.py) and its packer (the ``reduce`` ABI of the spec's
    ``acc_epilogue``; ``epi_args``: the epilogue's plan texts, ``caller`` scalars
    from ``caller``, default :data:`parity.sim.numerics_fused.CALLER`)."""
    pargs = {"ws_ptr": "buffer ws", "ws_bytes": ws.nbytes, "d_ptr": f"buffer {dname}", "d_bytes": d.nbytes,
             "M": M, "K": K, "ks_count": ks, **(epi_args or {})}
    why = reduce_launch_reason(spec, pargs)
    if why:
        raise SimError(f"reduce launch refused by the pairing rule (parity/reduce_launch.py): {why}")
    caller = caller or numerics_fused.CALLER
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


def cases(spec: dict, arch: str, lowerer) -> list:
    """The plan's entry point (parity/sim/plans/__init__.py): :func:`reduce_cases`
    (a reduce case lowers its own kernels through ``lowerer`` when run)."""
    return reduce_cases(spec, arch)

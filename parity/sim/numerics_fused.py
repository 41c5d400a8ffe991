"""Numerics of fused split-K (issue 36): the accumulator epilogue (bias, scale,
relu, clamp, and the fused bias_relu / bias_clamp: bias then the activation) applied once, after the fp32 fold and before the cast, by Stage 2
(``conv_fwd_split_k_reduce`` with ``acc_epilogue``) and by the cluster fold.

Kept apart from the plans (parity/sim/plans/conv_fwd_split_k_reduce.py and
conv_implicit_gemm.py, which call in here) so the fused plan reads as one piece:

* :func:`reduce_problem` -- the data of the Stage-2 plan of a fused reduce spec
  (:func:`parity.sim.plans.conv_fwd_split_k_reduce.reduce_cases` builds the cases, one loop for
  identity and fused): bit-exact
  against ``RNE(epilogue(sequential fp32 sum))`` in numpy (the epilogue in
  float32, numpy's own rounding), on the unfused plan's problems; the
  unrolled form equals the loop form bit for bit; a short bias buffer
  (``bias_bytes`` one channel short) reads the missing channel as 0.
* :func:`exact_after_fold` -- the check a fused split conv case adds:
  D equals, bit for bit, "the unfused split's fp32 sum (the workspace the
  launch left: Stage 1 / the cluster's slabs stay raw partials), then the
  epilogue in numpy, then RNE".

Problems that catch a misplaced epilogue: every slab carries a nonzero,
mixed-sign value, so relu or clamp on partials (before the fold) changes the
sum; the bias is nonzero per channel and channel-dependent, so a bias added
per slab, twice, or at the channel without the group base is off; the scale
is 0.75, so scaling twice is off (0.5625); the last row of each reduce problem
cancels (+2^25 in slab 0, -2^25 in the last slab), so an epilogue applied
before the fold's last slab loses a bias below 2 to rounding (D = 0, not the
bias) -- a difference in D's bits, not only in an fp32 rounding.
"""
from __future__ import annotations

import numpy as np

from parity.sim import reference as ref
from parity.sim.cases import REDUCE_PROBLEMS, ReduceProblem, place_specials

#: the values the plans pass for the epilogue scalars (the conv plan's CONV_CALLER)
CALLER = {"scale": 0.75, "clamp_lo": -0.5, "clamp_hi": 0.5}
TOLERANCE = ("bit-exact: D == RNE(epilogue(sequential fp32 sum over slabs from slab 0)), the epilogue "
             "in float32 (bias[k mod K], a short bias buffer reads 0; x*scale; relu NaN passes; clamp), "
             "NaN compared as NaN")


def epilogue_f32(acc: str, s: np.ndarray, channel: np.ndarray, bias: np.ndarray | None,
                 caller: dict = CALLER) -> np.ndarray:
    """The accumulator epilogue on fp32 sums ``s`` (any shape), in float32 as the
    kernels compute it: ``bias`` adds ``bias[channel]`` (0 where ``channel`` is
    past the bias buffer), ``scale`` multiplies by ``caller['scale']``,
    ``relu`` is ``where(s < 0, 0, s)`` (NaN passes), ``clamp`` is
    ``where(s < lo, lo, s)`` then ``where(x1 > hi, hi, x1)``; a fused name
    (``bias_relu``, ``bias_clamp``) applies its steps in order, each rounded to
    float32 (:func:`parity.sim.reference.epilogue_steps`); ``identity`` returns ``s``.
    ValueError for an unknown epilogue."""
    s = np.asarray(s, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for step in ref.epilogue_steps(acc):
            if step == "bias":
                padded = np.zeros(int(channel.max()) + 1 if channel.size else 1, np.float32)
                n = min(padded.size, bias.size)
                padded[:n] = bias[:n]
                s = (s + padded[channel]).astype(np.float32)
            elif step == "scale":
                s = (s * np.float32(caller["scale"])).astype(np.float32)
            elif step == "relu":
                s = np.where(s < 0, np.float32(0.0), s).astype(np.float32)
            else:
                lo, hi = np.float32(caller["clamp_lo"]), np.float32(caller["clamp_hi"])
                x1 = np.where(s < lo, lo, s)
                s = np.where(x1 > hi, hi, x1).astype(np.float32)
    return s


def _mixed_slabs(rng, ks: int, mk: int) -> np.ndarray:
    """``ks`` slabs of mixed-sign values around the clamp bounds: the sum's sign
    and clamp differ from the partials' for many elements."""
    ws = rng.standard_normal((ks, mk)).astype(np.float32)
    if ks > 1:
        ws[1] = (-ws[0] * np.float32(0.75) + rng.standard_normal(mk).astype(np.float32) * np.float32(0.25))
    return ws.astype(np.float32)


#: the cancellation probe's magnitude: its fp32 ulp is 4, so a bias |b| < 2 added
#: before the last slab rounds away ((2^25 + b) - 2^25 = 0), once after the fold it stays
CANCEL = np.float32(2.0 ** 25)


def _cancel_probe(ws: np.ndarray, M: int, K: int) -> None:
    """Row M-1 (when M >= 2 and ks >= 2): slab 0 holds +CANCEL, the last slab -CANCEL,
    the slabs between 0, so the fold's exact sum is 0 and D is the epilogue of 0
    (the bias itself): an epilogue applied before the last slab is added (or per
    slab) shows in D, not only in the last fp32 bit."""
    ks = ws.shape[0]
    if M < 2 or ks < 2:
        return
    row = slice((M - 1) * K, M * K)
    ws[:, row] = 0.0
    ws[0, row] = CANCEL
    ws[ks - 1, row] = -CANCEL


def reduce_problem(spec: dict, rng, pi: int, M: int, K: int, ks: int) -> ReduceProblem:
    """The data of one problem (``pi``: its index in the problem list) of a fused
    reduce spec (``acc_epilogue`` not identity), for
    :func:`parity.sim.plans.conv_fwd_split_k_reduce.reduce_cases`: mixed-sign slabs, the specials in
    slab 0, the cancellation probe; a nonzero channel-dependent bias, one channel
    short (``bias_bytes`` = 4*(K-1)) on the last of REDUCE_PROBLEMS; D wanted =
    RNE(epilogue(sequential fp32 sum)) in numpy."""
    dt, acc = spec["dtype"], spec["acc_epilogue"]
    mk = M * K
    ws = _mixed_slabs(rng, ks, mk)
    place_specials(ws, spec["vector"], K, order_probe=True)   # the cancellation probe keeps row M-1
    _cancel_probe(ws, M, K)
    short = ref.epilogue_has(acc, "bias") and pi == len(REDUCE_PROBLEMS) - 1 and K > 1
    bias = rng.uniform(0.25, 1.75, K).astype(np.float32) * rng.choice([-1, 1], K).astype(np.float32)
    neg_zero = np.flatnonzero(((ws == 0) & np.signbit(ws)).all(axis=0))   # -0.0 in every slab (place_specials)
    if K > 2:   # their channels' bias -0.0 (vector path and tail): bias then relu sees -0.0 + -0.0
        bias[np.unique(neg_zero % K)[:2]] = np.float32(-0.0)
    nbias = K - 1 if short else K
    s = ref.split_k_sum(ws.reshape(ks, M, K)).ravel()
    want = ref.ref_cast_bits(epilogue_f32(acc, s, np.arange(mk) % K, bias[:nbias]), dt)
    bufs = {"bias": bias[:nbias].copy()} if ref.epilogue_has(acc, "bias") else {}
    return ReduceProblem(ws, want, bufs, epilogue_plan_args(acc, 4 * nbias), "_short_bias" if short else "")


#: clamp bounds of +-0 (the zero-bound cases, :func:`zero_bound_problem`): lo = +0 meets a
#: -0 sum (kept: -0 < +0 is false), hi = -0 meets a +0 sum (kept: +0 > -0 is false), so a
#: bound compare made non-strict (``ole`` / ``oge``) stores the bound's zero, the other sign
ZERO_BOUNDS = ({"scale": 0.75, "clamp_lo": 0.0, "clamp_hi": 0.5},
               {"scale": 0.75, "clamp_lo": -0.5, "clamp_hi": -0.0})


def zero_bound_problem(spec: dict, rng, M: int, K: int, ks: int, caller: dict) -> ReduceProblem:
    """A clamp epilogue's problem with a bound of +-0 (``caller``, one of
    :data:`ZERO_BOUNDS`): channels 0 mod 4 hold -0.0 in every slab (and a -0.0 bias), 1 mod
    4 hold +0.0 (and a +0.0 bias), so their sums (and scaled, biased values) are -0 and +0
    exactly, on the vector path and the tail; the rest mixed-sign. D wanted =
    RNE(epilogue(sequential fp32 sum)) with ``caller``'s bounds, sign of zero included."""
    dt, acc = spec["dtype"], spec["acc_epilogue"]
    mk = M * K
    ws = _mixed_slabs(rng, ks, mk)
    ch = np.arange(mk) % K
    ws[:, ch % 4 == 0] = np.float32(-0.0)
    ws[:, ch % 4 == 1] = np.float32(0.0)
    bias = rng.uniform(0.25, 1.75, K).astype(np.float32) * rng.choice([-1, 1], K).astype(np.float32)
    bias[np.arange(K) % 4 == 0] = np.float32(-0.0)
    bias[np.arange(K) % 4 == 1] = np.float32(0.0)
    s = ref.split_k_sum(ws.reshape(ks, M, K)).ravel()
    want = ref.ref_cast_bits(epilogue_f32(acc, s, ch, bias, caller), dt)
    bufs = {"bias": bias.copy()} if ref.epilogue_has(acc, "bias") else {}
    lo, hi = caller["clamp_lo"], caller["clamp_hi"]
    suffix = "_lo+0" if lo == 0 and not np.signbit(lo) else "_hi-0"
    return ReduceProblem(ws, want, bufs, epilogue_plan_args(acc, 4 * K), "_zero_bound" + suffix, caller)


def epilogue_plan_args(acc: str, bias_bytes: int) -> dict:
    """The reduce kernel's epilogue arguments as plan texts, its steps' in order
    (bias: ``buffer bias`` and ``bias_bytes``; scale and clamp bounds: ``caller``,
    the values of :data:`CALLER`)."""
    out = {}
    for step in ref.epilogue_steps(acc):
        if step == "bias":
            out.update(bias_ptr="buffer bias", bias_bytes=bias_bytes)
        elif step == "scale":
            out.update(scale="caller")
        elif step == "clamp":
            out.update(clamp_lo="caller", clamp_hi="caller")
    return out


#: the conv cancellation probe's input values (bf16 and fp16 exact): x * w = 2^25
CANCEL_X, CANCEL_W = 2.0 ** 12, 2.0 ** 13


def cancel_probe_conv(full: dict, xs, ws_, groups: int, plan: dict):
    """Inputs of a fused split 1x1 problem (channel = reduction index) whose last
    slab cancels the others: in every group, channel 1 (slice 0) adds +2^25 and the
    first channel of the last slice with data -2^25 to every output. Folded and then
    biased, D holds the small terms plus the bias; a bias (|b| < 2) added before the
    last slab is absorbed into 2^25 (fp32 ulp 4). Unchanged for identity, plain, or
    when the last slice with data starts at channel <= 1."""
    if full["acc_epilogue"] == "identity" or not plan["workspace_bytes"]:
        return xs, ws_
    data = plan.get("data_slices", plan["ks_count"])
    cpg = ws_.shape[-1]
    last = (data - 1) * plan["ks"]
    if data < 2 or last <= 1 or last >= cpg:
        return xs, ws_
    xs, ws_ = xs.copy(), ws_.copy()
    for g in range(groups):
        xs[..., g * cpg + 1] = xs[..., g * cpg + last] = CANCEL_X
    ws_[..., 1] = CANCEL_W
    ws_[..., last] = -CANCEL_W
    return xs, ws_


def exact_after_fold(full: dict, plan: dict, dt: str, shape: tuple, d_name: str = "d", ws_name: str = "ws",
                     caller: dict = CALLER):
    """The check a fused split conv case adds, or None for identity / plain:
    D[m][k] == RNE(epilogue(sum over slabs of ws[s][m][k])) bit for bit, with the
    workspace the launch left (raw fp32 partials), the case's bias buffer and the
    case's caller scalars ``caller``."""
    acc = full["acc_epilogue"]
    if acc == "identity" or not plan["workspace_bytes"]:
        return None
    kc = plan["ks_count"]

    def check(b):
        N_HW_K = shape
        K = N_HW_K[-1]
        M = int(np.prod(N_HW_K[:-1]))
        ws = b[ws_name].reshape(kc, M, K)
        s = ref.split_k_sum(ws)
        channel = np.broadcast_to(np.arange(K), (M, K))
        want = ref.ref_cast_bits(epilogue_f32(acc, s, channel, b.get("bias"), caller).ravel(), dt)
        okm = ref.same_bits_16(b[d_name], want, dt)
        if okm.all():
            return []
        i = int(np.argmin(okm))
        return [f"fused split != unfused split + epilogue in numpy + RNE: D[{i // K}][{i % K}] = "
                f"{int(b[d_name][i]):#06x}, want {int(want[i]):#06x} ({int((~okm).sum())} of {okm.size} differ)"]
    return check

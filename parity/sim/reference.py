"""Numpy references for the numerics oracle (DESIGN §4 convention).

Forward convolution: input ``x`` NHWC, weights ``w`` KYXC (per group
``[kpg][Y][X][cpg]``), output NHWK, ``G`` groups packed in the channel
dimension (``C = G*cpg``, ``K = G*kpg``), accumulated in float64.
"""
from __future__ import annotations

import numpy as np

from parity.sim.fp import f32_to_bf16_bits


def conv_out_size(h: int, y: int, stride: int, pad: int, dil: int) -> int:
    return (h + 2 * pad - dil * (y - 1) - 1) // stride + 1


def conv_fwd(x: np.ndarray, w: np.ndarray, groups: int = 1, stride=(1, 1), padding=(0, 0),
             dilation=(1, 1)) -> np.ndarray:
    """Direct forward convolution in float64. ``x`` [N][H][W][C], ``w`` [K][Y][X][cpg];
    returns [N][Ho][Wo][K] float64."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, h, wd, c = x.shape
    k, y, xx, cpg = w.shape
    if c != groups * cpg or k % groups:
        raise ValueError(f"C={c}, K={k} do not fit groups={groups}, cpg={cpg}")
    kpg = k // groups
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    ho, wo = conv_out_size(h, y, sh, ph, dh), conv_out_size(wd, xx, sw, pw, dw)
    xp = np.zeros((n, h + 2 * ph, wd + 2 * pw, c))
    xp[:, ph:ph + h, pw:pw + wd, :] = x
    out = np.zeros((n, ho, wo, k))
    for g in range(groups):
        xg = xp[..., g * cpg:(g + 1) * cpg]
        wg = w[g * kpg:(g + 1) * kpg]  # [kpg][Y][X][cpg]
        for ky in range(y):
            for kx in range(xx):
                patch = xg[:, ky * dh: ky * dh + sh * (ho - 1) + 1: sh,
                           kx * dw: kx * dw + sw * (wo - 1) + 1: sw, :]  # [n][ho][wo][cpg]
                out[..., g * kpg:(g + 1) * kpg] += patch @ wg[:, ky, kx, :].T
    return out


def conv_abs_fwd(x, w, **kw) -> np.ndarray:
    """``conv_fwd`` of |x| and |w|: the sum of |products| per output, for tolerances."""
    return conv_fwd(np.abs(np.asarray(x, np.float64)), np.abs(np.asarray(w, np.float64)), **kw)


#: unit roundoff of the output types (half an ulp at 1.0)
UNIT_ROUNDOFF = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11, "f32": 2.0 ** -24}


#: the steps an accumulator epilogue is made of (the kernels' acc_epilogue docs):
#: a fused name is its steps joined by "_" in order (bias_relu: bias, then relu)
EPILOGUE_STEPS = ("bias", "scale", "relu", "clamp")


def epilogue_steps(acc: str) -> tuple:
    """The steps of accumulator epilogue ``acc`` in order: ``()`` for identity,
    ``("bias", "relu")`` for bias_relu. ValueError for an unknown step."""
    if acc == "identity":
        return ()
    steps = tuple(acc.split("_"))
    if not steps or any(s not in EPILOGUE_STEPS for s in steps) or len(set(steps)) != len(steps):
        raise ValueError(f"no accumulator epilogue {acc!r}")
    return steps


def epilogue_has(acc: str, step: str) -> bool:
    """Whether epilogue ``acc`` has ``step`` (``bias``, ``scale``, ``relu``, ``clamp``)."""
    return step in epilogue_steps(acc)


def epilogue_f64(acc: str, e: np.ndarray, bias, scal: dict, absum: np.ndarray | None = None):
    """The float64 reference ``e`` (channels last) after epilogue ``acc``, its
    steps in order: bias adds ``bias`` (fp32[K], per output channel), scale
    multiplies by ``scal['scale']``, relu is ``max(e, 0)``, clamp clips to
    ``scal['clamp_lo'], scal['clamp_hi']`` as the kernels do (``e < lo`` selects lo,
    then ``x > hi`` selects hi: a +-0 bound meeting the other zero keeps the value's
    sign). Returns ``(e, absum)`` with the
    absolute-sum bound ``absum`` scaled alike (None stays None)."""
    for step in epilogue_steps(acc):
        if step == "bias":
            e = e + np.asarray(bias, np.float64)
        elif step == "scale":
            e = e * scal["scale"]
            absum = None if absum is None else absum * abs(scal["scale"])
        elif step == "relu":
            e = np.maximum(e, 0.0)
        else:   # the kernels' select form: where(e < lo, lo, e), then where(x > hi, hi, x)
            lo, hi = np.float64(scal["clamp_lo"]), np.float64(scal["clamp_hi"])
            x = np.where(e < lo, lo, e)
            e = np.where(x > hi, hi, x)
    return e, absum


def conv_tolerance(dtype: str, kgemm: int, abs_sum: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per-element bound on |D - ref| for a kernel that multiplies ``dtype``
    inputs exactly, accumulates ``kgemm`` products in fp32 in any order (and,
    split-K, sums fp32 partials), then rounds once to ``dtype``:

        2*u_out*|ref| + (kgemm + 2) * u_f32 * sum|a*b|  (+ the smallest subnormal step)

    ``ref`` is the float64 convolution of the same (already rounded) inputs.
    The first term is the final rounding (doubled for the 1-ulp slack of a value
    near a binade edge), the second the standard fp32 summation bound."""
    u = UNIT_ROUNDOFF[dtype]
    tiny = {"bf16": 2.0 ** -133, "fp16": 2.0 ** -24}[dtype]
    return 2 * u * np.abs(ref) + (kgemm + 2) * UNIT_ROUNDOFF["f32"] * abs_sum + tiny


def round_bf16(a: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (RNE), returned as float32."""
    b = f32_to_bf16_bits(np.asarray(a, np.float32))
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


def split_k_sum(ws: np.ndarray) -> np.ndarray:
    """Sequential fp32 sum over slabs in slab order from slab 0 (the reduce kernel's order).
    An overflow is inf and inf - inf NaN, as the kernel's fadd gives them (IEEE 754; a
    mutant's workspace reaches them), not a warning."""
    acc = ws[0].astype(np.float32).copy()
    with np.errstate(over="ignore", invalid="ignore"):
        for s in range(1, ws.shape[0]):
            acc = (acc + ws[s]).astype(np.float32)
    return acc


def cast_bits(a: np.ndarray, dtype: str) -> np.ndarray:
    """uint16 bit patterns of float32 ``a`` rounded (RNE) to ``dtype`` (bf16 or fp16)."""
    a = np.asarray(a, np.float32)
    if dtype == "bf16":
        return f32_to_bf16_bits(a)
    if dtype == "fp16":
        return a.astype(np.float16).view(np.uint16)
    raise ValueError(dtype)


def round_to_format(a, mbits: int, emin: int, emax: int) -> np.ndarray:
    """Round float64 values to a binary format with ``mbits`` fraction bits and
    normal exponents ``emin..emax`` (nearest, ties to even; subnormals kept;
    overflow to infinity), returned as float64. Written with frexp/rint on
    float64, independently of the emulator's bit-twiddling conversions."""
    a = np.asarray(a, np.float64)
    out = a.copy()
    fin = np.isfinite(a) & (a != 0)
    x = a[fin]
    _, e = np.frexp(x)                    # x = m * 2**e, 0.5 <= |m| < 1
    exp = np.maximum(e - 1, emin)         # exponent of the quantum's binade
    q = np.ldexp(1.0, exp - mbits)
    r = np.rint(x / q) * q                # exact scaling; rint ties to even
    big = np.ldexp(2.0 - 2.0 ** -mbits, emax)
    r = np.where(np.abs(r) > big, np.copysign(np.inf, x), r)
    out[fin] = r
    return out


def ref_cast_bits(a, dtype: str) -> np.ndarray:
    """Independent reference of float32 -> ``dtype`` (bf16/fp16) RNE, as uint16 bits
    (NaN -> the canonical quiet NaN; compare NaN-ness, not payloads)."""
    with np.errstate(invalid="ignore"):
        a = np.asarray(a, np.float32).astype(np.float64)
    if dtype == "bf16":
        r = round_to_format(a, 7, -126, 127).astype(np.float32)
        bits = (r.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        return np.where(np.isnan(a), np.uint16(0x7FC0), bits)
    if dtype == "fp16":
        r = round_to_format(a, 10, -14, 15)
        bits = r.astype(np.float16).view(np.uint16)  # exact: r is representable
        return np.where(np.isnan(a), np.uint16(0x7E00), bits)
    raise ValueError(dtype)


def same_bits_16(got: np.ndarray, want: np.ndarray, dtype: str) -> np.ndarray:
    """Elementwise: equal uint16 bit patterns, or both NaN of ``dtype``."""
    got = np.asarray(got, np.uint16)
    want = np.asarray(want, np.uint16)
    exp_mask, man_mask = (0x7F80, 0x007F) if dtype == "bf16" else (0x7C00, 0x03FF)

    def isnan(b):
        return ((b & exp_mask) == exp_mask) & ((b & man_mask) != 0)
    return (got == want) | (isnan(got) & isnan(want))

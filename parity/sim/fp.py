"""Floating-point conversions of the emulator (IEEE-754 round-to-nearest-even).

Rows of docs/hardware_facts.md: CVT-F32-BF16, CVT-F32-F16, DENORM-F32.

* float32 -> bfloat16: integer ops on the binary32 bits (add 0x7FFF plus the
  lowest kept bit, shift right 16): nearest, ties to even, subnormals kept,
  overflow to infinity; NaN stays NaN (sign and top payload kept, quiet bit set).
* float32 -> float16: numpy's float32->float16 cast, which is RNE with
  subnormals and overflow to infinity (numpy ``npy_floatbits_to_halfbits``).
* bfloat16 -> float32: the bits shifted left 16 (exact).

Every arithmetic result stays in its LLVM type's numpy dtype (float32 for
``float``); nothing is widened to float64 except where noted (WMMA).
"""
from __future__ import annotations

import math

import numpy as np

from . import hw_facts


_ABS, _INF, _HALF, _S16, _ONE, _QUIET = (np.uint32(v) for v in (0x7FFFFFFF, 0x7F800000, 0x7FFF, 16, 1, 0x0040))


def f32_to_bf16_bits(x) -> np.ndarray:
    """bfloat16 bit patterns (uint16) of float32 ``x``, rounded to nearest even."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32)
    hi = u >> _S16
    rounded = (u + _HALF + (hi & _ONE)) >> _S16
    nan = (u & _ABS) > _INF
    if not np.count_nonzero(nan):
        return rounded.astype(np.uint16)
    return np.where(nan, hi | _QUIET, rounded).astype(np.uint16)


def f32_to_bf16_bits_rtz(x) -> np.ndarray:
    """bfloat16 bits (uint16) of float32 ``x`` rounded toward zero (the high
    half; NaN quieted): the other reading of hardware_facts.md CVT-F32-BF16."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    hi = u >> _S16
    nan = (u & _ABS) > _INF
    return np.where(nan, hi | _QUIET, hi).astype(np.uint16)


def f32_to_bf16_hw(x) -> np.ndarray:
    """What the emulated hardware's ``fptrunc float -> bfloat`` produces
    (gfx1250: ``v_cvt_pk_bf16_f32`` under MODE round 0 = nearest even;
    hardware_facts.md: CVT-F32-BF16). The reference (parity/reference.py)
    keeps :func:`f32_to_bf16_bits`, the IEEE rounding LangRef's fptrunc
    promises, so ``--assume CVT-F32-BF16=rtz`` shows which configs depend on it."""
    return (f32_to_bf16_bits if _HW_BF16_RNE else f32_to_bf16_bits_rtz)(x)


def _configure() -> None:
    global _HW_BF16_RNE
    _HW_BF16_RNE = hw_facts.value("CVT-F32-BF16") == "rne"


_HW_BF16_RNE = True
hw_facts.on_change(_configure)


def bf16_bits_to_f32(b) -> np.ndarray:
    """float32 values of bfloat16 bit patterns (exact)."""
    b = np.asarray(b, dtype=np.uint16)
    return (b.astype(np.uint32) << _S16).view(np.float32)


def f32_to_f16(x) -> np.ndarray:
    """float16 values of float32 ``x``, rounded to nearest even."""
    with np.errstate(over="ignore"):  # overflow to infinity is the IEEE result
        return np.asarray(x, dtype=np.float32).astype(np.float16)


def f64_to_bf16_bits(d: float) -> np.uint16:
    """bfloat16 bits of a Python float rounded once (nearest even), for constants."""
    if math.isnan(d):
        return np.uint16(0x7FC0)
    from python_engine.facts import small_float_bits  # the engines' own constant rounding; local: facts loads the engine
    return np.uint16(small_float_bits(d, 8, 7))

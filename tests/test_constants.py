"""Constant text forms (DESIGN §2), checked against IEEE conversions done by
the struct module, and across both engines through an ir_core-independent path."""
from __future__ import annotations

import math
import struct

from hypothesis import given, strategies as st

from python_engine.ir.constants import fmt_float, fmt_int, small_float_bits


def _f32_bits(x: float) -> int:
    try:
        return struct.unpack(">I", struct.pack(">f", x))[0]
    except OverflowError:
        return 0x7F800000 | (0x80000000 if x < 0 else 0)


@given(st.floats(allow_nan=False, width=64))
def test_half_matches_struct(x):
    try:
        want = struct.unpack(">H", struct.pack(">e", x))[0]
    except OverflowError:
        want = 0xFC00 if x < 0 else 0x7C00
    assert small_float_bits(x, 5, 10) == want


@given(st.floats(allow_nan=False, width=64))
def test_float32_matches_struct(x):
    if abs(x) >= 3.4028235677973366e38:  # struct raises on overflow
        return
    assert small_float_bits(x, 8, 23) == _f32_bits(x)


@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_bfloat_is_rne_of_float32(x):
    b = _f32_bits(x)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16  # RNE on the f32 bits
    assert small_float_bits(x, 8, 7) == rounded & 0xFFFF


def test_special_values():
    assert fmt_float(0.0, "float") == "0x0000000000000000"
    assert fmt_float(-0.0, "float") == "0x8000000000000000"
    assert fmt_float(math.inf, "float") == "0x7FF0000000000000"
    assert fmt_float(-math.inf, "double") == "0xFFF0000000000000"
    assert fmt_float(math.nan, "float") == "0x7FF8000000000000"
    assert fmt_float(0.1, "float") == "0x3FB99999A0000000"
    assert fmt_float(0.1, "double") == "0x3FB999999999999A"
    assert fmt_float(0.1, "half") == "0xH2E66"
    assert fmt_float(0.1, "bfloat") == "0xR3DCD"
    assert fmt_float(math.nan, "half") == "0xH7E00"
    assert fmt_float(math.nan, "bfloat") == "0xR7FC0"
    assert fmt_float(1e-45, "float") == "0x36A0000000000000"  # smallest f32 subnormal
    assert fmt_float(6e-8, "half") == "0xH0001"  # smallest f16 subnormal
    assert fmt_float(65520.0, "half") == "0xH7C00"  # rounds to +inf
    assert fmt_float(65504.0, "half") == "0xH7BFF"


def test_integers():
    assert fmt_int(-128, 8) == "-128"
    assert fmt_int(255, 8) == "-1"
    assert fmt_int(2**63 - 1, 64) == "9223372036854775807"
    assert fmt_int(1, 1) == "true" and fmt_int(0, 1) == "false"

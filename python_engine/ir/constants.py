"""Constant text forms (DESIGN §2).
Twin: cpp_engine/src/ir/constants.{h,cpp}.

Integers print in decimal; ``float`` and ``double`` as ``0x`` plus the 16 hex
digits (upper case) of the value widened to IEEE double; ``half`` as ``0xH``
and ``bfloat`` as ``0xR`` plus 4 hex digits. Values are converted with
round-to-nearest-even directly from the double the caller gives (one rounding),
and every NaN prints as the canonical positive quiet NaN. Nothing here goes
through ``repr``, ``%g`` or the locale, so the text is the same in every
process.
"""
from __future__ import annotations

import math
import struct

CANONICAL_NAN_DOUBLE = 0x7FF8000000000000


def double_bits(x: float) -> int:
    """IEEE-754 binary64 bit pattern of ``x`` (NaN -> canonical quiet NaN)."""
    if math.isnan(x):
        return CANONICAL_NAN_DOUBLE
    return struct.unpack(">Q", struct.pack(">d", x))[0]


def float_as_double_bits(x: float) -> int:
    """Round ``x`` to binary32 (RNE) and return the bits of that value widened to
    binary64 -- the form LLVM prints a ``float`` constant in. Overflow gives inf."""
    if math.isnan(x):
        return CANONICAL_NAN_DOUBLE
    bits32 = small_float_bits(x, 8, 23)
    f = struct.unpack(">f", struct.pack(">I", bits32))[0]
    return double_bits(f)


def small_float_bits(x: float, ebits: int, mbits: int) -> int:
    """Bits of ``x`` rounded (nearest, ties to even) to an IEEE-style binary format
    with ``ebits`` exponent and ``mbits`` fraction bits; subnormals kept, overflow
    to infinity, NaN to the canonical positive quiet NaN.

    binary16: (5, 10); bfloat16: (8, 7); binary32: (8, 23).
    """
    top = ebits + mbits
    exp_all = (1 << ebits) - 1
    if math.isnan(x):
        return (exp_all << mbits) | (1 << (mbits - 1))
    sign = 1 if math.copysign(1.0, x) < 0 else 0
    if math.isinf(x):
        return (sign << top) | (exp_all << mbits)
    a = abs(x)
    if a == 0.0:
        return sign << top
    bias = (1 << (ebits - 1)) - 1
    _, e = math.frexp(a)
    exp = e - 1  # a = 1.f * 2**exp
    quantum = exp - mbits if exp >= 1 - bias else 1 - bias - mbits
    n = round(math.ldexp(a, -quantum))  # exact scaling; round() ties to even
    if exp >= 1 - bias:
        if n == 1 << (mbits + 1):
            exp += 1
            n >>= 1
        if exp > bias:
            return (sign << top) | (exp_all << mbits)
        return (sign << top) | ((exp + bias) << mbits) | (n - (1 << mbits))
    # subnormal (n == 1 << mbits rounds up into the smallest normal, same bits)
    return (sign << top) | n


def fmt_int(v: int, bits: int) -> str:
    """Decimal text of an integer constant of width ``bits`` (i1 prints true/false).
    Raises ValueError when ``v`` does not fit the signed or unsigned range."""
    if bits == 1:
        if v not in (0, 1, -1):
            raise ValueError(f"i1 constant {v} is not 0 or 1")
        return "true" if v else "false"
    if not -(1 << (bits - 1)) <= v < (1 << bits):
        raise ValueError(f"constant {v} does not fit i{bits}")
    if v >= 1 << (bits - 1):
        v -= 1 << bits  # LLVM prints integers signed
    return str(v)


def fmt_float(x: float, type_name: str) -> str:
    """Text of a floating constant of LLVM type ``type_name``
    (``half``, ``bfloat``, ``float``, ``double``)."""
    if type_name == "double":
        return f"0x{double_bits(x):016X}"
    if type_name == "float":
        return f"0x{float_as_double_bits(x):016X}"
    if type_name == "half":
        return f"0xH{small_float_bits(x, 5, 10):04X}"
    if type_name == "bfloat":
        return f"0xR{small_float_bits(x, 8, 7):04X}"
    raise ValueError(f"{type_name} is not a floating-point type")

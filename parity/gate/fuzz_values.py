"""Odd values the fuzzer puts into specs: int, float and str subclasses that
format themselves differently from their value, and floats of given bits (NaN
payloads). Module-level classes, so they pickle across the worker pool and a
reproducer file can import them."""
from __future__ import annotations

import struct


def float_from_bits(bits: int) -> float:
    """The float whose IEEE-754 binary64 bits are ``bits`` (NaN payloads kept)."""
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def float_bits(v: float) -> int:
    """The IEEE-754 binary64 bits of ``v`` (read as the plain float)."""
    return struct.unpack("<Q", struct.pack("<d", float.__float__(v)))[0]


class LyingInt(int):
    """An int whose ``str``/``format`` give letters instead of its value
    (an engine that formats it prints ``abc``; its value is ``int(self)``)."""

    def __str__(self) -> str:
        return "abc"

    def __format__(self, spec: str) -> str:
        return "abc"

    def __repr__(self) -> str:
        return f"LyingInt({int.__repr__(self)})"

    def __int__(self) -> int:
        return 7

    def __index__(self) -> int:
        return 7


class LyingFloat(float):
    """A float whose ``str``/``format``/``repr``/``float`` give other text or
    another value than its bits (an engine that formats it, or calls its
    ``__float__``, prints ``abc`` or 7.0)."""

    def __str__(self) -> str:
        return "abc"

    def __format__(self, spec: str) -> str:
        return "abc"

    def __repr__(self) -> str:
        return f"LyingFloat(float_from_bits(0x{float_bits(self):016X}))"

    def __float__(self) -> float:
        return 7.0

    def hex(self) -> str:
        return "abc"


class LyingStr(str):
    """A str whose ``str``/``format`` give other text than its characters."""

    def __str__(self) -> str:
        return "evil"

    def __format__(self, spec: str) -> str:
        return "evil"

    def __repr__(self) -> str:
        return f"LyingStr({str.__repr__(self)})"


def code_repr(v) -> str:
    """Python source that rebuilds ``v`` (dict, list, tuple, str, int, bool,
    float, bytes, None and the classes above), for reproducer files. A NaN is
    rebuilt from its bits (its payload kept)."""
    if isinstance(v, LyingFloat):
        return f"LyingFloat(float_from_bits(0x{float_bits(v):016X}))"
    if isinstance(v, LyingInt):
        return f"LyingInt({int.__repr__(v)})"
    if isinstance(v, LyingStr):
        return f"LyingStr({str.__repr__(v)})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{code_repr(k)}: {code_repr(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(code_repr(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + "".join(code_repr(x) + ", " for x in v) + ")"
    if isinstance(v, float) and v != v:
        return f"float_from_bits(0x{float_bits(v):016X})"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return f"float('{v}')"
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return repr(v)
    raise TypeError(f"no reproducer text for {type(v).__name__}")

"""Odd values the fuzzer puts into specs: int and str subclasses that format
themselves differently from their value. Module-level classes, so they
pickle across the worker pool and a reproducer file can import them."""
from __future__ import annotations


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
    float, bytes, None and the classes above), for reproducer files."""
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
        return "float('nan')"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return f"float('{v}')"
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return repr(v)
    raise TypeError(f"no reproducer text for {type(v).__name__}")

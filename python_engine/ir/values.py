"""Values: SSA registers, parameters, constants and globals.
Twin: cpp_engine/src/ir/values.{h,cpp}.

A value is its type plus the text that names it in an operand (``%acc12``,
``0x3FF0000000000000``, ``@lds_a``). Constants are built by the helpers below,
which apply the constant text rules of :mod:`.constants`.
"""
from __future__ import annotations

from . import types as T
from .constants import fmt_float, fmt_int


class Value:
    """An operand: ``type`` and ``ref`` (its text without the type); equal and
    hashed by both. Never changed after it is made. A plain slotted class (not
    a frozen dataclass, whose ``__init__`` is about 4x slower): the builder
    makes about a million of them for one ``parity check``."""

    __slots__ = ("type", "ref")

    def __init__(self, type: T.Type, ref: str):  # noqa: A002 - the field's name
        self.type = type
        self.ref = ref

    def __eq__(self, other) -> bool:
        if other.__class__ is not Value:
            return NotImplemented
        return self.type == other.type and self.ref == other.ref

    def __hash__(self) -> int:
        return hash((self.type, self.ref))

    def __repr__(self) -> str:
        return f"Value(type={self.type!r}, ref={self.ref!r})"

    @property
    def typed(self) -> str:
        """``<type> <ref>``, the usual operand form."""
        return f"{self.type.text} {self.ref}"


def const_int(t: T.Type, v: int) -> Value:
    """Integer constant of integer type ``t`` (decimal; i1 as true/false).
    Raises ValueError if ``v`` does not fit."""
    if t.kind != "int":
        raise ValueError(f"const_int needs an integer type, got {t.text}")
    return Value(t, fmt_int(v, t.bits))


def const_float(t: T.Type, x: float) -> Value:
    """Floating constant of type ``t`` (half, bfloat, float, double), rounded RNE."""
    if t.kind != "float":
        raise ValueError(f"const_float needs a floating type, got {t.text}")
    return Value(t, fmt_float(x, t.text))


def const_vector(t: T.Type, elems: list) -> Value:
    """Vector constant ``<a, b, ...>`` from scalar constant values of ``t.elem``."""
    if t.kind != "vector" or len(elems) != t.count:
        raise ValueError(f"const_vector: {len(elems)} elements for {t.text}")
    for e in elems:
        if e.type is not t.elem:
            raise ValueError(f"const_vector: element {e.typed} in {t.text}")
    return Value(t, "<" + ", ".join(e.typed for e in elems) + ">")


def splat(t: T.Type, elem: Value) -> Value:
    """Vector constant with every lane equal to the scalar constant ``elem``."""
    return const_vector(t, [elem] * t.count)


def zeroinit(t: T.Type) -> Value:
    """``zeroinitializer`` of a vector or array type."""
    return Value(t, "zeroinitializer")


def poison(t: T.Type) -> Value:
    """``poison`` of any first-class type."""
    return Value(t, "poison")


#: i32 constants made so far, by value (a Value never changes, so one serves every use).
_I32: dict = {}


def i32(v: int) -> Value:
    """Shorthand for an i32 constant (ValueError when ``v`` does not fit)."""
    c = _I32.get(v) if type(v) is int else None
    if c is None:
        c = const_int(T.I32, v)
        if type(v) is int and len(_I32) < 4096:
            _I32[v] = c
    return c


def i64(v: int) -> Value:
    """Shorthand for an i64 constant."""
    return const_int(T.I64, v)


def i1(v: bool) -> Value:
    """Shorthand for an i1 constant."""
    return const_int(T.I1, 1 if v else 0)

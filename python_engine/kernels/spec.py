"""Spec fields and the common front of validation, shared by every family.

A family declares its fields once, as data: ``Field(name, kind, default)`` in
spec order. ``kind`` is ``int``, ``str`` (may be None: "null", which the
family rules then reject by name) or ``bool``. Type errors are found here, in
field order, before any family rule; the C++ engine's binding checks the same
kinds in the same order with the same text.
"""
from __future__ import annotations

from dataclasses import dataclass


class SpecRejected(Exception):
    """A spec, arch or flavor this engine will not lower; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Field:
    """One spec field: ``name``, ``kind`` (``int``, ``str`` or ``bool``) and default."""

    name: str
    kind: str
    default: object


def type_reason(f: Field, value) -> str | None:
    """Reason text when ``value`` is not of ``f.kind``, else None."""
    if f.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"spec field '{f.name}' must be an integer"
        if not -(1 << 63) <= value < (1 << 63):
            return f"spec field '{f.name}' is out of the 64-bit range"
    elif f.kind == "str":
        if value is not None and not isinstance(value, str):
            return f"spec field '{f.name}' must be a string or null"
    elif f.kind == "bool":
        if not isinstance(value, bool):
            return f"spec field '{f.name}' must be true or false"
    return None


def normalize(family: str, fields: tuple, spec) -> dict:
    """Return ``spec`` with defaults filled in, in field order.

    Raises SpecRejected for a spec that is not a dict, an unknown field, or a
    value of the wrong kind (first offending field in spec order)."""
    if not isinstance(spec, dict):
        raise SpecRejected(f"spec for family '{family}' must be a mapping of field names to values")
    names = {f.name for f in fields}
    for k in spec:
        if k not in names:
            raise SpecRejected(f"spec field '{k}' is not a field of family '{family}'")
    out = {}
    for f in fields:
        v = spec.get(f.name, f.default)
        r = type_reason(f, v)
        if r:
            raise SpecRejected(r)
        out[f.name] = v
    return out

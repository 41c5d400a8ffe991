"""Spec fields and the common front of validation, shared by every family.
Twin: cpp_engine/src/spec/fields.{h,cpp}. The front checks themselves (kinds,
strings, unknown names: rules, order and reasons) are the declarative
description in :mod:`spec_front`, which the C++ engine's binding reads too.

A family declares its fields once, as data: ``Field(name, kind, default)`` in
spec order. ``kind`` is ``int``, ``str`` (may be None: "null", which the
family rules then reject by name), ``bool`` or ``float`` (a C ``double``: a
float, or an int of magnitude at most 2**53, which becomes the float of the
same value; NaN and infinities pass, the family rules decide). Type errors are found here, in
field order, before any family rule; the C++ engine's binding checks the same
kinds in the same order with the same text.

Values are normalised to their exact built-in type before any rule sees them
(an ``int``, ``float`` or ``str`` subclass with its own ``__str__``/``__format__`` is
read as the plain value, so it cannot change a kernel name), and a string
must be printable text: no C0/C1 control character (so no NUL, newline or
tab), no DEL, no Unicode line or paragraph separator (U+2028, U+2029) and no
lone surrogate -- a string that cannot cross the C boundary, or could forge a
line of a text output, is refused up front with :func:`text_reason` (the C++
engine checks the same bytes for C callers). A string (a spec field, the
arch, the flavor, the family) is at most :data:`MAX_STRING_BYTES` bytes of
UTF-8, checked before anything else looks at its characters
(:func:`length_reason`), so a huge string costs no work.

A float value is printed (reasons, kernel names) only as :func:`float_text`:
``0x`` and the 16 upper-case hex digits of its binary64 bits (docs/ir_text.md).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import spec_front
from spec_front import (FLOAT_INT_LIMIT, MAX_STRING_BYTES, exact, length_reason, printable, string_reason,
                        text_reason, too_long, unknown_field_reason, unknown_name_reason)

__all__ = ["FLOAT_INT_LIMIT", "MAX_STRING_BYTES", "Field", "SpecRejected", "convert", "exact", "float_text",
           "length_reason", "normalize", "printable", "string_reason", "text_reason", "too_long", "type_reason",
           "unknown_family_reason", "unknown_field_reason", "unknown_name_reason"]


class SpecRejected(Exception):
    """A spec, arch or flavor this engine will not lower; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Field:
    """One spec field: ``name``, ``kind`` (``int``, ``str``, ``bool`` or ``float``) and default."""

    name: str
    kind: str
    default: object


def float_text(value: float) -> str:
    """The one text form of a float field value (reasons, kernel names):
    ``0x`` + the 16 upper-case hex digits of its IEEE-754 binary64 bits, so
    -0.0, subnormals and NaN payloads keep their bits (the IR's double
    constant form, except that a NaN is not canonicalised). Never repr, %g or
    the locale (same text in the C++ engine, spec/fields.h ``float_text``)."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]


def type_reason(f: Field, value) -> str | None:
    """Reason text when ``value`` is not of ``f.kind``, else None (the rules of
    :data:`spec_front.KIND_RULES`, in their order)."""
    return spec_front.type_reason(f.name, f.kind, value)


def convert(f: Field, value):
    """``value`` (of ``f.kind``, checked by :func:`type_reason`) as the engine
    holds it: an int in a float field becomes the float of the same value."""
    if f.kind == "float" and type(value) is int:
        return float(value)
    return value


def unknown_family_reason(name, families) -> str:
    """Reason for a family name that is not one of ``families`` (:func:`unknown_name_reason`)."""
    return unknown_name_reason("family", name, ", ".join(families), "family must be a string")


def normalize(family: str, fields: tuple, spec) -> dict:
    """Return ``spec`` with defaults filled in, in field order.

    ``family`` is the family's own name (the registry's str, never a caller's
    object: a reason formats it). Raises SpecRejected for a spec that is not
    a dict, an unknown field, a spec that sets some of the split-K fields
    (``split_k``, ``split_k_cluster``: :data:`spec_front.SPLIT_K_FIELDS`) but
    lacks another (naming the missing field; issue 37), or a value of the
    wrong kind (first offending field in spec order), in that order."""
    family = str.__str__(family)
    if not isinstance(spec, dict):
        raise SpecRejected(f"spec for family '{family}' must be a mapping of field names to values")
    names = {f.name for f in fields}
    for k in spec:
        if k not in names:
            raise SpecRejected(unknown_field_reason(family, k))
    r = spec_front.group_reason(spec_front.group_fields(names), spec)
    if r:
        raise SpecRejected(r)
    out = {}
    for f in fields:
        v = exact(spec.get(f.name, f.default))
        r = type_reason(f, v)
        if r:
            raise SpecRejected(r)
        out[f.name] = convert(f, v)
    return out

"""Spec fields and the common front of validation, shared by every family.
Twin: cpp_engine/src/spec/fields.{h,cpp}.

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

import re
import struct
from dataclasses import dataclass


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


def printable(value: str) -> bool:
    """True when ``value`` holds no control character (U+0000-U+001F,
    U+007F-U+009F), no Unicode line or paragraph separator (U+2028, U+2029;
    U+000A-U+000D and U+0085 are controls already) and no lone surrogate
    (U+D800-U+DFFF): text that is valid UTF-8 once encoded and stays on one line."""
    return not _UNPRINTABLE.search(value)


_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")

#: The longest string (a spec field, arch, flavor or family name) either
#: engine takes, in bytes of UTF-8 (a lone surrogate counts 3 bytes, as
#: "surrogatepass" writes it). Same value in the C++ engine (spec/fields.h
#: ``kMaxStringBytes``, C API ``CPE_MAX_STRING_BYTES``).
MAX_STRING_BYTES = 4096


def too_long(value: str) -> bool:
    """True when ``value`` (a str) is more than :data:`MAX_STRING_BYTES` bytes
    of UTF-8. Looks at no more than ``MAX_STRING_BYTES + 1`` characters, so a
    huge string is refused at once."""
    if len(value) > MAX_STRING_BYTES:
        return True
    return len(value.encode("utf-8", "surrogatepass")) > MAX_STRING_BYTES


def length_reason(what: str) -> str:
    """Reason for a string ``what`` (e.g. ``spec field 'dtype'``, ``arch``)
    longer than :data:`MAX_STRING_BYTES` (same text in the C++ engine, spec/fields.h)."""
    return f"{what} must be at most {MAX_STRING_BYTES} bytes of UTF-8 text"


def text_reason(what: str) -> str:
    """Reason for a string ``what`` (e.g. ``spec field 'dtype'``, ``arch``)
    that is not :func:`printable` (same text in the C++ engine, spec/fields.h)."""
    return (f"{what} must be printable UTF-8 text (no control characters, line or paragraph separators, "
            "NUL or lone surrogates)")


def string_reason(what: str, value: str) -> str | None:
    """The reason a str ``value`` of ``what`` is refused -- :func:`length_reason`
    first, then :func:`text_reason` -- or None (the order of both engines)."""
    if too_long(value):
        return length_reason(what)
    if not printable(value):
        return text_reason(what)
    return None


def exact(value):
    """``value`` as its exact built-in type: an int subclass becomes the int
    of the same value, a float subclass the float of the same bits, a str
    subclass the str of the same characters (their own ``__str__``,
    ``__format__``, ``__int__``, ``__float__`` or ``__repr__`` are never called)."""
    if type(value) is not int and isinstance(value, int) and not isinstance(value, bool):
        return int.__int__(value)
    if type(value) is not float and isinstance(value, float):
        return float.__float__(value)
    if type(value) is not str and isinstance(value, str):
        return str.__str__(value)
    return value


#: The largest magnitude of an int a float field takes (every int up to it is a double exactly).
FLOAT_INT_LIMIT = 1 << 53


def float_text(value: float) -> str:
    """The one text form of a float field value (reasons, kernel names):
    ``0x`` + the 16 upper-case hex digits of its IEEE-754 binary64 bits, so
    -0.0, subnormals and NaN payloads keep their bits (the IR's double
    constant form, except that a NaN is not canonicalised). Never repr, %g or
    the locale (same text in the C++ engine, spec/fields.h ``float_text``)."""
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]


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
        if value is not None:
            return string_reason(f"spec field '{f.name}'", value)
    elif f.kind == "bool":
        if not isinstance(value, bool):
            return f"spec field '{f.name}' must be true or false"
    elif f.kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"spec field '{f.name}' must be a number"
        if isinstance(value, int) and not -FLOAT_INT_LIMIT <= value <= FLOAT_INT_LIMIT:
            return f"spec field '{f.name}' is an integer beyond 2**53 (not exactly a double)"
    return None


def convert(f: Field, value):
    """``value`` (of ``f.kind``, checked by :func:`type_reason`) as the engine
    holds it: an int in a float field becomes the float of the same value."""
    if f.kind == "float" and type(value) is int:
        return float(value)
    return value


def unknown_field_reason(family: str, key) -> str:
    """Reason for a spec key that is not a field of ``family``; a key that is
    not a printable str is not echoed (the reason stays one line)."""
    if not isinstance(key, str):
        return f"spec field names must be strings (family '{family}')"
    key = str.__str__(key)
    why = string_reason(f"a spec field name of family '{family}'", key)
    if why:
        return why
    return f"spec field '{key}' is not a field of family '{family}'"


def unknown_name_reason(field: str, name, allowed: str, not_str: str) -> str:
    """Reason for a ``field`` name (family, arch, flavor) that is not one of
    ``allowed``: None reads as the text None; another non-str value gives
    ``not_str``, a str that is too long or not printable
    :func:`string_reason`; neither is echoed (same texts in the C++ engine
    and its binding)."""
    if name is None:
        name = "None"
    if not isinstance(name, str):
        return not_str
    name = str.__str__(name)
    why = string_reason(field, name)
    if why:
        return why
    return f"{field} '{name}' is not one of {allowed}"


def unknown_family_reason(name, families) -> str:
    """Reason for a family name that is not one of ``families`` (:func:`unknown_name_reason`)."""
    return unknown_name_reason("family", name, ", ".join(families), "family must be a string")


def normalize(family: str, fields: tuple, spec) -> dict:
    """Return ``spec`` with defaults filled in, in field order.

    ``family`` is the family's own name (the registry's str, never a caller's
    object: a reason formats it). Raises SpecRejected for a spec that is not
    a dict, an unknown field, or a value of the wrong kind (first offending
    field in spec order)."""
    family = str.__str__(family)
    if not isinstance(spec, dict):
        raise SpecRejected(f"spec for family '{family}' must be a mapping of field names to values")
    names = {f.name for f in fields}
    for k in spec:
        if k not in names:
            raise SpecRejected(unknown_field_reason(family, k))
    out = {}
    for f in fields:
        v = exact(spec.get(f.name, f.default))
        r = type_reason(f, v)
        if r:
            raise SpecRejected(r)
        out[f.name] = convert(f, v)
    return out

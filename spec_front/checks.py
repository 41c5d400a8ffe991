"""The front checks (see the package docstring): limits, the rule table, and
the functions that apply it. Every reason is one line; a value that is not a
printable str is never echoed into a reason."""
from __future__ import annotations

import re

#: The longest string (a spec field, arch, flavor or family name) either engine
#: takes, in bytes of UTF-8 (a lone surrogate counts 3 bytes, as "surrogatepass"
#: writes it). The C++ engine has the same value (spec/fields.h ``kMaxStringBytes``,
#: C API ``CPE_MAX_STRING_BYTES``); tests/test_spec_front.py compares them.
MAX_STRING_BYTES = 4096

#: The largest magnitude of an int a float field takes (every int up to it is a
#: double exactly).
FLOAT_INT_LIMIT = 1 << 53

#: The range of an int field (a C ``int64_t``).
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1

#: Not printable text: C0/C1 controls (so NUL, tab, LF, CR, NEL), DEL, the Unicode
#: line and paragraph separators and lone surrogates (which are not UTF-8).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: Every field rule: ``rule -> (fails(value) -> bool, reason template)``. A template
#: names the field as ``{name}``; ``None`` means "the string rules of
#: :func:`string_reason`" (their own two reasons, for ``spec field '{name}'``).
RULES = {
    "int.type": (lambda v: not _is_int(v), "spec field '{name}' must be an integer"),
    "int.range": (lambda v: not I64_MIN <= v <= I64_MAX, "spec field '{name}' is out of the 64-bit range"),
    "str.type": (lambda v: v is not None and not isinstance(v, str), "spec field '{name}' must be a string or null"),
    "str.text": (lambda v: v is not None, None),
    "bool.type": (lambda v: not isinstance(v, bool), "spec field '{name}' must be true or false"),
    "float.type": (lambda v: isinstance(v, bool) or not isinstance(v, (int, float)),
                   "spec field '{name}' must be a number"),
    "float.int_range": (lambda v: _is_int(v) and not -FLOAT_INT_LIMIT <= v <= FLOAT_INT_LIMIT,
                        "spec field '{name}' is an integer beyond 2**53 (not exactly a double)"),
}

#: Per field kind, its rules in the order both engines check them (the first that
#: fails gives the reason).
KIND_RULES = {
    "int": ("int.type", "int.range"),
    "str": ("str.type", "str.text"),
    "bool": ("bool.type",),
    "float": ("float.type", "float.int_range"),
}


def too_long(value: str) -> bool:
    """True when str ``value`` is more than :data:`MAX_STRING_BYTES` bytes of
    UTF-8; looks at no more than ``MAX_STRING_BYTES + 1`` characters first, so a
    huge string is refused at once."""
    if len(value) > MAX_STRING_BYTES:
        return True
    return len(value.encode("utf-8", "surrogatepass")) > MAX_STRING_BYTES


def printable(value: str) -> bool:
    """True when str ``value`` holds no control character (U+0000-U+001F,
    U+007F-U+009F), no line or paragraph separator (U+2028, U+2029) and no lone
    surrogate: valid UTF-8 once encoded, and one line."""
    return not _UNPRINTABLE.search(value)


def length_reason(what: str) -> str:
    """Reason for a string ``what`` (``spec field 'dtype'``, ``arch``, ...) longer
    than :data:`MAX_STRING_BYTES` bytes."""
    return f"{what} must be at most {MAX_STRING_BYTES} bytes of UTF-8 text"


def text_reason(what: str) -> str:
    """Reason for a string ``what`` that is not :func:`printable`."""
    return (f"{what} must be printable UTF-8 text (no control characters, line or paragraph separators, "
            "NUL or lone surrogates)")


def string_reason(what: str, value: str) -> str | None:
    """The reason str ``value`` of ``what`` is refused -- :func:`length_reason`
    first, then :func:`text_reason` -- or None."""
    if too_long(value):
        return length_reason(what)
    if not printable(value):
        return text_reason(what)
    return None


def exact(value):
    """``value`` as its exact built-in type: an int, float or str subclass becomes
    the int, float or str of the same value (its own ``__str__``, ``__format__``,
    ``__int__``, ``__float__`` or ``__repr__`` are never called); other values
    unchanged."""
    if type(value) is not int and _is_int(value):
        return int.__int__(value)
    if type(value) is not float and isinstance(value, float):
        return float.__float__(value)
    if type(value) is not str and isinstance(value, str):
        return str.__str__(value)
    return value


def type_reason(name: str, kind: str, value) -> str | None:
    """The reason ``value`` (already :func:`exact`) is not a value of field
    ``name`` of ``kind`` (a key of :data:`KIND_RULES`), or None. Raises KeyError
    for an unknown kind (a registry bug, not bad input)."""
    for rule in KIND_RULES[kind]:
        fails, template = RULES[rule]
        if fails(value):
            if template is None:
                why = string_reason(f"spec field '{name}'", value)
                if why:
                    return why
                continue
            return template.format(name=name)
    return None


def unknown_field_reason(family: str, key) -> str:
    """Reason for a spec key that is not a field of ``family``; a key that is not
    a printable str is not echoed."""
    if not isinstance(key, str):
        return f"spec field names must be strings (family '{family}')"
    key = str.__str__(key)
    why = string_reason(f"a spec field name of family '{family}'", key)
    if why:
        return why
    return f"spec field '{key}' is not a field of family '{family}'"


#: The split-K fields (issue 37; DESIGN.md section 4: ``split_k`` and
#: ``split_k_cluster`` of the conv_implicit_gemm spec, which conv_launch,
#: split_k_policy and perf_model carry too). A spec mapping gives them together or
#: not at all: one without the other is refused naming the missing field, where a
#: default would silently pick another binary. Every other field keeps its default.
SPLIT_K_FIELDS = ("split_k", "split_k_cluster")


def group_fields(field_names) -> tuple:
    """The split-K fields (:data:`SPLIT_K_FIELDS`, in that order) that a family
    with fields ``field_names`` has: empty unless it has at least two."""
    have = tuple(n for n in SPLIT_K_FIELDS if n in field_names)
    return have if len(have) > 1 else ()


def group_reason(group: tuple, spec) -> str | None:
    """The reason a spec mapping ``spec`` (its keys already known fields) that
    sets some of the split-K fields ``group`` (:func:`group_fields`) lacks
    another: ``spec field 'split_k_cluster' is missing: a spec that sets
    split_k sets every split-K field (split_k, split_k_cluster)`` (the first
    missing field, and the first given one, in ``group`` order); None when
    it sets all of them or none."""
    given = [n for n in group if n in spec]
    if not given or len(given) == len(group):
        return None
    missing = next(n for n in group if n not in spec)
    return (f"spec field '{missing}' is missing: a spec that sets {given[0]} sets every split-K field "
            f"({', '.join(group)})")


def unknown_name_reason(field: str, name, allowed: str, not_str: str) -> str:
    """Reason for a ``field`` name (family, arch, flavor) that is not one of
    ``allowed`` (text): None reads as the text None; another non-str value gives
    ``not_str``; a str that is too long or not printable :func:`string_reason`
    (not echoed)."""
    if name is None:
        name = "None"
    if not isinstance(name, str):
        return not_str
    name = str.__str__(name)
    why = string_reason(field, name)
    if why:
        return why
    return f"{field} '{name}' is not one of {allowed}"

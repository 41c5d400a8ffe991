"""One escaping function for every name the tools print that came from outside.

A golden key, a shard or catalog file name, a config name, a family name
given on the command line, a reason an engine returned: any of them may hold
a newline, a carriage return, a Unicode line or paragraph separator
(U+2028/U+2029), U+0085, another C0/C1 control, a lone surrogate, or an
ANSI escape. Printed as is, such text can split an error line or forge a
line of the report (``RESULT: GREEN``). ``shown`` makes any value one safe,
printable line; every command prints outside text through it.

It is the identity on the names the project itself makes (ASCII letters,
digits, ``_-./@:=,`` and spaces), so normal output does not change.
"""
from __future__ import annotations

import unicodedata

__all__ = ["shown", "MAX_SHOWN"]

#: Longest text ``shown`` returns before cutting (characters); a cut text ends
#: in ``...(+N chars)`` so the reader knows it was cut.
MAX_SHOWN = 400

# Unicode categories that never print as themselves on one line: controls
# (Cc), format characters (Cf: bidi overrides, zero-width joiners), line and
# paragraph separators (Zl, Zp), surrogates (Cs), private use (Co) and
# unassigned code points (Cn).
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if ch == "\\":
        return "\\\\"
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def shown(text: object, limit: int = MAX_SHOWN) -> str:
    """Return ``str(text)`` as one printable line.

    Every character in an unsafe Unicode category (controls, format
    characters, line/paragraph separators, surrogates, private use,
    unassigned) and the backslash itself are written as Python-style escapes
    (``\\n``, ``\\x85``, ``\\u2028``, ``\\udc80``), so the result holds no line
    break and encodes to UTF-8 without error. ``str`` subclasses are read
    through ``str.__str__`` of the base type, never through an overridden
    ``__str__``/``__format__``. Text longer than ``limit`` characters after
    escaping is cut and marked with ``...(+N chars)``.

    Never raises.
    """
    if isinstance(text, str):
        raw = str.__str__(text)
    else:
        try:
            raw = str(text)
        except Exception as exc:  # noqa: BLE001 - a broken __str__ still gets shown
            raw = f"<unprintable {type(text).__name__}: {type(exc).__name__}>"
        if not isinstance(raw, str) or type(raw) is not str:
            raw = str.__str__(raw) if isinstance(raw, str) else repr(type(text))
    out = []
    for ch in raw:
        if ch == "\\" or unicodedata.category(ch) in _UNSAFE_CATEGORIES:
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    result = "".join(out)
    if len(result) > limit:
        cut = len(result) - limit
        result = f"{result[:limit]}...(+{cut} chars)"
    return result

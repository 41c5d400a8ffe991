"""One JSON read path for every file the tools read (issue 39).

A JSON file that came from outside (a golden shard, a side of a merge, a
pending file, a catalog, a cache's metadata, a manifest) is read through
:func:`load_json`, which applies, before and after ``json.loads``:

* a size cap (bytes), checked before anything is decoded;
* strict UTF-8 (a file that is not UTF-8 is refused with the byte offset);
* a nesting-depth cap, counted outside strings *before* the parse, so the
  recursive decoder never meets a document nested 200,000 arrays deep
  (a RecursionError traceback before);
* no lone surrogates: ``"\\ud800"`` is valid JSON text but no UTF-8 file can
  carry the string it decodes to, so a value holding one could never be
  written back (a UnicodeEncodeError traceback, or a shard that is not
  UTF-8). It is refused at parse, naming the entry (a ``/``-joined path of
  keys and indexes) that holds it.

Every refusal is a :class:`JsonInputError`: one line, naming the file (through
:func:`parity.base.escape.shown`) and the rule. Callers add what to do.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

from parity.base.escape import shown

__all__ = ["JsonInputError", "load_json", "check_text", "check_strings", "DEFAULT_MAX_DEPTH",
           "DEFAULT_MAX_BYTES", "has_lone_surrogate"]

#: Deepest nesting accepted by default (arrays + objects); the tools' own files nest < 8.
DEFAULT_MAX_DEPTH = 64
#: Largest JSON text accepted by default (bytes).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET_RE = re.compile(r"[\[\]{}]")
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


class JsonInputError(ValueError):
    """A JSON input refused by a guard or the parser; ``str()`` is one line."""


def has_lone_surrogate(text: str) -> bool:
    """True when ``text`` holds a code point U+D800..U+DFFF (no UTF-8 form)."""
    return _SURROGATE_RE.search(text) is not None


def check_text(s: str, name: str, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
    """JsonInputError when ``s`` nests arrays/objects deeper than ``max_depth``
    (brackets inside strings do not count) or holds a raw lone surrogate.
    Linear in ``len(s)``; runs before any ``json.loads``."""
    if has_lone_surrogate(s):
        raise JsonInputError(f"{shown(name)}: holds a lone surrogate (not UTF-8 text)")
    stripped = _STRING_RE.sub('""', s) if '"' in s else s
    depth = 0
    for m in _BRACKET_RE.finditer(stripped):
        if m.group() in "[{":
            depth += 1
            if depth > max_depth:
                raise JsonInputError(f"{shown(name)}: nested deeper than {max_depth} levels")
        else:
            depth -= 1


def _path(parts: list) -> str:
    return "/".join(str(p) for p in parts) or "(top level)"


def check_strings(doc: Any, name: str) -> None:
    """JsonInputError naming the first entry (key path) whose key or string value holds a
    lone surrogate (decoded from a ``\\udXXX`` escape). Iterative: any depth, linear."""
    stack: list[tuple[Any, list]] = [(doc, [])]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if has_lone_surrogate(node):
                raise JsonInputError(f"{shown(name)}: entry '{shown(_path(where))}' holds a lone surrogate "
                                     "escape (like \\ud800), which no UTF-8 file can carry")
        elif isinstance(node, dict):
            for k, v in node.items():
                if isinstance(k, str) and has_lone_surrogate(k):
                    raise JsonInputError(f"{shown(name)}: key '{shown(_path(where + [k]))}' holds a lone "
                                         "surrogate escape (like \\ud800), which no UTF-8 file can carry")
                stack.append((v, where + [k]))
        elif isinstance(node, list):
            stack.extend((v, where + [i]) for i, v in enumerate(node))


def decode_utf8(data: bytes | str, name: str) -> str:
    """``data`` as text: bytes decoded as strict UTF-8 (a leading BOM is refused as such)."""
    if isinstance(data, str):
        return data
    if data.startswith(b"\xef\xbb\xbf"):
        raise JsonInputError(f"{shown(name)}: starts with a UTF-8 byte order mark; save it without one")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonInputError(f"{shown(name)}: not valid UTF-8 (byte {exc.start})") from None


def load_json(data: bytes | str, name: str, *, max_depth: int = DEFAULT_MAX_DEPTH,
              max_bytes: int = DEFAULT_MAX_BYTES,
              object_pairs_hook: Callable | None = None, parse_int: Callable | None = None) -> Any:
    """Parse the JSON ``data`` (bytes: strict UTF-8; or text) named ``name`` in messages.

    Guards, in order: size (``max_bytes``), UTF-8, depth (``max_depth``, before the
    parse), the parse itself, lone surrogates in any key or string (after). Raises
    :class:`JsonInputError` (one line) for each; exceptions a hook raises propagate."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", errors="surrogatepass"))
    if size > max_bytes:
        raise JsonInputError(f"{shown(name)}: {size} bytes, more than the cap of {max_bytes}")
    s = decode_utf8(data, name)
    check_text(s, name, max_depth)
    kw: dict = {}
    if object_pairs_hook is not None:
        kw["object_pairs_hook"] = object_pairs_hook
    if parse_int is not None:
        kw["parse_int"] = parse_int
    try:
        doc = json.loads(s, **kw)
    except RecursionError:
        raise JsonInputError(f"{shown(name)}: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise JsonInputError(f"{shown(name)}: malformed JSON at line {exc.lineno} column {exc.colno}: "
                             f"{exc.msg}") from None
    if _SURROGATE_ESCAPE_RE.search(s):
        check_strings(doc, name)
    return doc

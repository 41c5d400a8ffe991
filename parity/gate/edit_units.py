"""The units an edit is mapped through for ``parity check --changed`` (docs/gate.md,
"Checking only what an edit reached"): the functions of an engine source file.

A *unit* is ``(path, name)``: ``path`` the file relative to the project root
(``/``-separated), ``name`` a function's normalised qualified name, or ``None``
for the file's text outside every function (module-level code, class bodies,
namespace-scope tables, decorators of top-level functions) -- a change there
cannot be mapped to configs and makes ``--changed`` fall back to the full check.

* Python (``*.py``): every ``def`` (at any depth) is a unit named by its
  qualified name without ``<locals>`` (``f.g`` for ``g`` defined in ``f``,
  ``C.m`` for a method), spanning from its ``def`` line to its last line; a
  line belongs to the innermost such def. A changed line in a nested def's
  header (defaults, annotations: evaluated by the enclosing function) also
  belongs to the enclosing def.
* C++ (``*.cpp``): every function defined at namespace or class scope is a
  unit named by its unqualified name (``Class::f`` -> ``f``), spanning from the
  first line of its declarator to its closing brace; lambdas and blocks inside
  belong to it. The scan skips comments, string and character literals.
  Headers are never mapped (any change in one is unmappable).

Blank and comment-only lines never count as a change.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass

OUTSIDE = None  # the unit name of the text outside every function


@dataclass(frozen=True)
class Span:
    """One function of a file: ``name`` (see the module doc), its 1-based first and last
    lines, and ``body`` (the first line of its body; a Python header ends before it)
    and ``parent`` (the enclosing function's name, or None)."""

    name: str
    first: int
    last: int
    body: int
    parent: str | None = None


def _quiet_line(line: str, lang: str) -> bool:
    s = line.strip()
    if not s:
        return True
    if lang == "py":
        return s.startswith("#")
    return s.startswith("//") or s.startswith("/*") or s.startswith("*")


def python_spans(text: str) -> list[Span]:
    """The defs of a Python source (SyntaxError when it does not parse)."""
    tree = ast.parse(text)
    out: list[Span] = []

    def walk(node, prefix: str, func: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out.append(Span(name, child.lineno, child.end_lineno or child.lineno,
                                child.body[0].lineno if child.body else child.lineno, func))
                walk(child, name + ".", name)
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.", func)
            else:
                walk(child, prefix, func)
    walk(tree, "", None)
    return out


# -- C++ ------------------------------------------------------------------------------

_STRIP = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_NAME = re.compile(r"([A-Za-z_~][A-Za-z_0-9]*)\s*(?:<[^()]*>)?\s*$")


def _blank_literals(text: str) -> str:
    """``text`` with comments and string/char literals replaced by spaces (line breaks kept)."""
    def blank(m):
        s = m.group(0)
        if s.startswith("/"):
            return re.sub(r"[^\n]", " ", s)
        return s[0] + re.sub(r"[^\n]", " ", s[1:-1]) + s[-1]
    return _STRIP.sub(blank, text)


def _header_kind(header: str) -> tuple[str, str | None]:
    """What the text before a ``{`` at namespace/class scope opens: ``("namespace", None)``,
    ``("class", name)``, ``("function", name)`` or ``("other", None)`` (an initializer)."""
    h = " ".join(header.split())
    if re.match(r"^(inline\s+)?namespace\b", h) or re.match(r'^extern\s*"', h):
        return "namespace", None
    paren = h.find("(")
    if paren < 0:
        m = re.search(r"\b(struct|class|union|enum)\s+(?:class\s+|struct\s+)?([A-Za-z_]\w*)?", h)
        return ("class", m.group(2) or "") if m else ("other", None)
    if "=" in h[:paren] and "operator" not in h[:paren]:
        return "other", None
    m = _NAME.search(h[:paren])
    if not m:
        return "other", None
    name = m.group(1)
    if name in ("if", "for", "while", "switch", "return", "catch"):
        return "other", None
    return "function", name.split("::")[-1]


def cpp_spans(text: str) -> list[Span]:
    """The functions defined at namespace or class scope of a C++ source (a best-effort
    scan: comments and literals skipped, braces counted; preprocessor lines ignored)."""
    clean = _blank_literals(text)
    clean = re.sub(r"(?m)^[ \t]*#[^\n]*", lambda m: " " * len(m.group(0)), clean)
    out: list[Span] = []
    stack: list[tuple[str, int, str | None]] = []  # (kind, first line, name)
    start = 0  # offset where the current statement's header starts
    line_at = [0]
    for i, ch in enumerate(clean):
        if ch == "\n":
            line_at.append(i + 1)
    import bisect

    def line_of(off: int) -> int:
        return bisect.bisect_right(line_at, off)

    for i, ch in enumerate(clean):
        if ch not in "{};":
            continue
        in_func = any(k in ("function", "other") for k, _, _ in stack)
        if ch == ";":
            if not in_func:
                start = i + 1
            continue
        if ch == "{":
            if in_func:
                stack.append(("block", 0, None))
                continue
            header = clean[start:i]
            kind, name = _header_kind(header)
            lead = len(header) - len(header.lstrip())
            stack.append((kind, line_of(start + lead), name))
            start = i + 1
            continue
        if not stack:  # unbalanced: stop, nothing more is mapped
            break
        kind, first, name = stack.pop()
        if kind == "function":
            out.append(Span(name, first, line_of(i), first, None))
        if not any(k in ("function", "other") for k, _, _ in stack):
            start = i + 1
    return out


def spans(path: str, text: str) -> list[Span]:
    """The units of ``path`` (by its suffix); ValueError for a file that is not mapped."""
    if path.endswith(".py"):
        return python_spans(text)
    if path.endswith(".cpp"):
        return cpp_spans(text)
    raise ValueError(f"{path}: not a mapped source (only .py and .cpp)")


def _lang(path: str) -> str:
    return "py" if path.endswith(".py") else "cpp"


def _without_comments(text: str, lang: str) -> str:
    """``text`` with its comments blanked (lines kept): Python ``#`` comments found by
    the tokenizer, C++ ``//`` and ``/* */`` comments outside literals."""
    if lang == "cpp":
        return _STRIP.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)) if m.group(0).startswith("/")
                          else m.group(0), text)
    import io
    import tokenize
    rows = text.split("\n")
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                r, c = tok.start
                rows[r - 1] = rows[r - 1][:c]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text
    return "\n".join(rows)


def units_of_lines(path: str, text: str, lines, sp: list[Span] | None = None) -> set:
    """The units (names, :data:`OUTSIDE` for none) holding the 1-based ``lines`` of
    ``text``, skipping blank and comment-only lines."""
    sp = spans(path, text) if sp is None else sp
    rows = text.split("\n")
    lang = _lang(path)
    out: set = set()
    for n in lines:
        if 1 <= n <= len(rows) and _quiet_line(rows[n - 1], lang):
            continue
        inner = [s for s in sp if s.first <= n <= s.last]
        if not inner:
            out.add(OUTSIDE)
            continue
        best = max(inner, key=lambda s: (s.first, -s.last))
        out.add(best.name)
        if lang == "py" and n < best.body and best.parent is not None:
            out.add(best.parent)  # a nested def's header runs in the enclosing function
    return out


def unit_hashes(path: str, text: str) -> dict:
    """``{unit name: sha256}`` of every function of ``text`` (its lines less nested
    functions' bodies, blank and comment lines) and of :data:`OUTSIDE` (``"<outside>"``:
    every line in no function). Two versions of a file differ in exactly the units
    whose hashes differ."""
    sp = spans(path, text)
    lang = _lang(path)
    rows = _without_comments(text, lang).split("\n")
    owner: list[str | None] = [None] * (len(rows) + 1)
    for s in sorted(sp, key=lambda s: (s.first, -s.last)):  # inner spans overwrite outer ones
        for n in range(s.first, min(s.last, len(rows)) + 1):
            owner[n] = s.name
    parts: dict[str, list[str]] = {}
    for n in range(1, len(rows) + 1):
        if _quiet_line(rows[n - 1], lang):
            continue
        key = owner[n] if owner[n] is not None else "<outside>"
        parts.setdefault(key, []).append(rows[n - 1].strip())
    for s in sp:  # a header line of a nested def counts for its parent too (defaults)
        if lang == "py" and s.parent is not None:
            for n in range(s.first, min(s.body, len(rows) + 1)):
                if not _quiet_line(rows[n - 1], lang):
                    parts.setdefault(s.parent, []).append(rows[n - 1].strip())
    out = {k: hashlib.sha256("\n".join(v).encode()).hexdigest()[:16] for k, v in parts.items()}
    for s in sp:
        out.setdefault(s.name, hashlib.sha256(b"").hexdigest()[:16])
    return out


def changed_units(path: str, old: dict | None, new: dict | None) -> set:
    """The unit names whose hash differs between two :func:`unit_hashes` tables
    (``"<outside>"`` reported as :data:`OUTSIDE`); None for a missing file: every unit."""
    old, new = old or {}, new or {}
    names = {k for k in set(old) | set(new) if old.get(k) != new.get(k)}
    return {OUTSIDE if k == "<outside>" else k for k in names}


def normalise_qualname(qualname: str) -> str | None:
    """A code object's ``co_qualname`` as a unit name: ``<locals>`` dropped, cut at the
    first ``<...>`` part (a lambda or comprehension counts as its enclosing function);
    None for module-level code."""
    parts = []
    for p in qualname.split("."):
        if p == "<locals>":
            continue
        if p.startswith("<"):
            break
        parts.append(p)
    return ".".join(parts) or None

"""Intrinsic existence and external-call checks.

LLVM's verifier takes an unknown ``llvm.amdgcn.*`` name for an ordinary
external function: a typo in an intrinsic name verifies. But a *known*
intrinsic declared (and called) with a wrong signature fails ``verify()``
("Intrinsic has incorrect argument type!"). So a declaration is probed with a
deliberately wrong signature (one extra ``i32`` parameter; then, if that
still verifies, a changed return type): if every probe still verifies, LLVM
does not know the name.

This module only builds texts and reads declarations; the probes run in the
compile worker (parity.verify.compile_worker), because LLVM may abort.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DECL_RE = re.compile(r'^declare\s+(?P<pre>.*?)@(?P<name>"[^"]+"|[-\w.$]+)\s*\((?P<params>.*)\)(?P<post>.*)$')
_DEFINE_RE = re.compile(r'^define\s+.*?@(?P<name>"[^"]+"|[-\w.$]+)\s*\(')
_CALL_RE = re.compile(r'\bcall\b[^@]*@(?P<name>"[^"]+"|[-\w.$]+)\s*\(')
_RET_ATTRS = {"noundef", "nonnull", "zeroext", "signext", "inreg", "noalias", "dereferenceable"}
_PARAM_ATTRS_STOP = re.compile(r"\s+(?:immarg|noundef|nocapture|readonly|writeonly|readnone|nonnull|"
                               r"noalias|zeroext|signext|inreg|captures\(|align\s|%)")


class DeclError(ValueError):
    pass


@dataclass(frozen=True)
class Decl:
    name: str
    ret: str                  # return type
    params: tuple[str, ...]   # parameter types (attributes and names dropped)
    text: str                 # the declaration line as written

    @property
    def is_intrinsic_name(self) -> bool:
        return self.name.startswith("llvm.")


def split_top(s: str) -> list[str]:
    """Split on commas not nested in (), <>, [], {}."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        out.append(tail)
    return out


def _param_type(p: str) -> str:
    m = _PARAM_ATTRS_STOP.search(" " + p)
    t = (" " + p)[: m.start()].strip() if m else p.strip()
    return t


def parse_decl(line: str) -> Decl:
    line = line.strip()
    m = _DECL_RE.match(line)
    if not m:
        raise DeclError(f"not a declaration: {line!r}")
    pre = m.group("pre").split()
    # drop linkage/attrs before the return type, keep the type words
    ret_words = [w for w in pre if w not in _RET_ATTRS]
    ret = " ".join(ret_words)
    params = tuple(_param_type(p) for p in split_top(m.group("params")))
    if "..." in params:
        raise DeclError(f"varargs declaration cannot be probed: {line!r}")
    return Decl(m.group("name").strip('"'), ret, params, line)


def declarations(text: str) -> list[Decl]:
    return [parse_decl(l) for l in text.splitlines() if l.startswith("declare ")]


def defined_functions(text: str) -> set[str]:
    return {m.group("name").strip('"') for l in text.splitlines() if (m := _DEFINE_RE.match(l))}


def called_functions(text: str) -> set[str]:
    return {m.group("name").strip('"') for m in _CALL_RE.finditer(text)}


def external_call_problems(text: str) -> list[str]:
    """Every declared or called function that is neither defined in the module
    nor an ``llvm.`` intrinsic."""
    problems = []
    defined = defined_functions(text)
    try:
        decls = declarations(text)
    except DeclError as exc:
        return [str(exc)]
    declared = {d.name for d in decls}
    for d in decls:
        if not d.is_intrinsic_name:
            problems.append(f"declares external function @{d.name}, which is not an llvm. intrinsic")
    for name in sorted(called_functions(text) - defined - declared):
        problems.append(f"calls @{name}, which is neither defined nor declared")
    return problems


# --- probe modules --------------------------------------------------------------

def _call_module(ret: str, name: str, params: tuple[str, ...], header: str = "") -> str:
    args = ", ".join(f"{t} zeroinitializer" for t in params)
    call = f"call {ret} @{name}({args})" if ret == "void" else f"%r = call {ret} @{name}({args})"
    return (f"{header}declare {ret} @{name}({', '.join(params)})\n\n"
            f"define void @__parity_probe() {{\n  {call}\n  ret void\n}}\n")


def right_signature_module(d: Decl, header: str = "") -> str:
    """The declaration as written, called once: must verify in the lane's LLVM."""
    return _call_module(d.ret, d.name, d.params, header)


def wrong_signature_modules(d: Decl) -> list[tuple[str, str]]:
    """(what, text) probes that a *known* intrinsic must fail."""
    out = [("extra i32 parameter", _call_module(d.ret, d.name, d.params + ("i32",)))]
    other = "i32" if d.ret != "i32" else "i64"
    out.append((f"return type {other} instead of {d.ret}", _call_module(other, d.name, d.params)))
    return out


def combined_right_signature_module(decls: list[Decl], header: str = "") -> str:
    """All declarations in one module, each called from its own function."""
    parts = [header]
    for i, d in enumerate(decls):
        parts.append(f"declare {d.ret} @{d.name}({', '.join(d.params)})\n")
    for i, d in enumerate(decls):
        args = ", ".join(f"{t} zeroinitializer" for t in d.params)
        call = f"call {d.ret} @{d.name}({args})" if d.ret == "void" else f"%r = call {d.ret} @{d.name}({args})"
        parts.append(f"\ndefine void @__parity_probe{i}() {{\n  {call}\n  ret void\n}}\n")
    return "".join(parts)

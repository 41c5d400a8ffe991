"""Read-back: each flavor's text parsed and printed back by every LLVM that
checks the flavor, and every difference in what the text says compared
(docs/verify.md, "Read-back"; docs/targets.md, "Which LLVM defines each flavor").

LLVM upgrades old forms silently when it parses them (``AutoUpgrade.cpp``): an
intrinsic whose signature changed is rewritten to the new one, an old
attribute to its successor. ``-passes=verify`` then passes, and "verified by
LLVM X" would be said of text that release does not accept as written. So
every module is printed back (``opt -S`` with no passes, llvmlite's
``str(module)``) and its *fingerprint* compared with the text's:

* every call to an ``llvm.*`` function: the callee and its operand types, in order;
* every ``llvm.*`` declaration: return and parameter types (parameter
  attributes are left out: LLVM attaches the intrinsic's own, such as
  ``immarg``, to every declaration it prints);
* every ``define``: its function attributes (inline and through its
  attribute groups) and each parameter's attributes, as sets;
* metadata: the kinds attached to instructions, the named metadata, and
  the metadata nodes with their numbers masked.

A difference is reported per config and intrinsic; it fails the unit unless
:data:`EXPECTED` (the flavor table's read-back column) declares it, with the
reason. Attributes LLVM adds to declarations and comments it prints are not
differences.
"""
from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field

# --- the expected upgrades (the flavor table's read-back column) ----------------


@dataclass(frozen=True)
class Expected:
    """A read-back difference a flavor's definition expects: LLVM release
    ``llvm`` (version prefix) rewrites ``what`` (an intrinsic name prefix, or
    an attribute/metadata key) as ``kind`` describes, for ``reason``."""

    flavor: str
    llvm: str
    kind: str
    what: str
    reason: str


#: flavor -> the read-back differences its definition expects (docs/targets.md).
EXPECTED: dict[str, tuple[Expected, ...]] = {
    "llvm23": tuple(
        Expected("llvm23", "LLVM 23.1.", "operands",
                 f"llvm.amdgcn.wmma.f32.16x16x32.{t}", reason=(
                     "llvm23 text is defined by ROCm's LLVM 23 as rocKE records it: 8 WMMA operands "
                     "(A/B neg modifiers); upstream LLVM 23.1 dropped neg_a/neg_b for the 16-bit "
                     "16x16x32 WMMA and auto-upgrades 8 -> 6 operands (false modifiers, no change "
                     "in meaning); LLVM 22.1 rejects the 6-operand form (docs/targets.md)"))
        for t in ("bf16", "f16")),
}


@dataclass(frozen=True)
class Difference:
    """One read-back difference: ``kind`` (``operands``, ``signature``,
    ``call``, ``attributes``, ``metadata``), ``what`` (the intrinsic or the
    define/metadata it concerns), the text's form and the printed form."""

    kind: str
    what: str
    before: str
    after: str

    def line(self) -> str:
        return f"{self.what}: {self.kind} {self.before} -> {self.after}"


# --- fingerprints ----------------------------------------------------------------

_CALL = re.compile(r"\bcall\b[^@\n]*@(llvm\.[\w.]+)\(")
_DECL = re.compile(r"^declare\s+(.*?)\s*@(llvm\.[\w.]+)\((.*)\)")
_DEFINE = re.compile(r"^define\s+(.*?)@([\w.$]+)\((.*)\)\s*(.*?)\{?\s*$")
_GROUP = re.compile(r"^attributes\s+#(\d+)\s*=\s*\{\s*(.*?)\s*\}\s*$")
_MD_NODE = re.compile(r"^!(\d+)\s*=\s*(.*)$")
_MD_NAMED = re.compile(r"^!([A-Za-z_.][\w.]*)\s*=\s*(.*)$")
_MD_ATTACH = re.compile(r",\s*!([A-Za-z_.][\w.]*)\s+!")
_ATTR_TOKEN = re.compile(r'"[^"]*"(?:="[^"]*")?|[\w.]+\([^)]*\)|#\d+|[\w.]+')
_TYPE_PREFIX = re.compile(r"^(<[^>]*>|\[[^\]]*\]|\{[^}]*\}|ptr(?:\s+addrspace\(\d+\))?|[\w.]+)")


#: the argument list after a call's ``(``: up to its closing ``)`` (one level of
#: parentheses inside, as in ``ptr addrspace(8)``)
_ARGS = re.compile(r"(?:[^()]|\([^()]*\))*")


_TOP_ITEM = re.compile(r'(?:<[^<>]*>|\([^()]*\)|\[[^\]]*\]|\{[^{}]*\}|"[^"]*"|[^,<(\[{"])+')


def split_top(s: str) -> list[str]:
    """Split ``s`` at top-level commas (not inside (), <>, [], {}, quotes; one
    level of nesting, as LLVM types and our operands have)."""
    return [x.strip() for x in _TOP_ITEM.findall(s) if x.strip()]


def operand_type(op: str) -> str:
    """The type of one printed operand or parameter (``i1 false`` -> ``i1``,
    ``ptr addrspace(1) noalias %x`` -> ``ptr addrspace(1)``)."""
    m = _TYPE_PREFIX.match(op.strip())
    return re.sub(r"\s+", " ", m.group(1)) if m else op.strip()


def last_type(s: str) -> str:
    """The type that ends ``s`` (a declaration's return type after any return
    attributes: ``noundef range(i32 0, 1024) i32`` -> ``i32``)."""
    s = s.strip()
    if s.endswith(">"):
        return re.sub(r"\s+", " ", s[s.rindex("<"):])
    m = re.search(r"ptr\s+addrspace\(\d+\)$", s)
    if m:
        return re.sub(r"\s+", " ", m.group(0))
    return s.split()[-1] if s else ""


def _param_attrs(param: str) -> frozenset:
    ty = operand_type(param)
    rest = param.strip()[len(ty):]
    rest = re.sub(r"%[\w.$]+\s*$", "", rest)
    return frozenset(_ATTR_TOKEN.findall(rest))


@dataclass
class Fingerprint:
    """What a module's text says, in the parts read-back compares."""

    calls: list = field(default_factory=list)        # [(callee, (types,))]
    decls: dict = field(default_factory=dict)        # callee -> (ret, (param types,))
    defines: dict = field(default_factory=dict)      # name -> (fn attrs, (param attrs,))
    md_kinds: Counter = field(default_factory=Counter)
    md_named: dict = field(default_factory=dict)     # name -> operand count
    md_nodes: Counter = field(default_factory=Counter)


def fingerprint(text: str) -> Fingerprint:
    """The :class:`Fingerprint` of LLVM IR ``text`` (ours or a printer's)."""
    fp = Fingerprint()
    groups: dict[str, frozenset] = {}
    defines: list[tuple[str, str, str]] = []
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s[0] == ";":
            continue
        c0 = s[0]
        if c0 == "!":
            m = _MD_NODE.match(s)
            if m:
                fp.md_nodes[re.sub(r"!\d+", "!N", m.group(2).replace("distinct ", ""))] += 1
                continue
            m = _MD_NAMED.match(s)
            if m and not s.startswith("!llvm.ident"):
                body = m.group(2).strip()
                fp.md_named[m.group(1)] = len(split_top(body[2:-1])) if body.startswith("!{") else 1
            continue
        if ";" in s:
            s = s.split(";", 1)[0].rstrip()
        if c0 == "d":
            if s.startswith("declare"):
                m = _DECL.match(s)
                if m:
                    fp.decls[m.group(2)] = (last_type(m.group(1)),
                                            tuple(operand_type(p) for p in split_top(m.group(3))))
                continue
            if s.startswith("define"):
                m = _DEFINE.match(s)
                if m:
                    defines.append((m.group(2), m.group(3), m.group(4)))
                continue
        if c0 == "a" and s.startswith("attributes"):
            m = _GROUP.match(s)
            if m:
                groups[m.group(1)] = frozenset(_ATTR_TOKEN.findall(m.group(2)))
            continue
        if ", !" in s:
            for k in _MD_ATTACH.findall(s):
                fp.md_kinds[k] += 1
        if "@llvm." in s:
            m = _CALL.search(s)
            if m:
                args = _ARGS.match(s, m.end()).group(0)
                fp.calls.append((m.group(1), tuple(operand_type(a) for a in split_top(args))))
    for name, params, tail in defines:
        attrs: set = set()
        for tok in _ATTR_TOKEN.findall(tail):
            attrs |= groups.get(tok[1:], frozenset()) if tok.startswith("#") else {tok}
        fp.defines[name] = (frozenset(attrs), tuple(_param_attrs(p) for p in split_top(params)))
    return fp


# --- comparison ------------------------------------------------------------------

def _sig(types) -> str:
    return f"{len(types)} operands ({', '.join(types)})"


def compare(text: str, printed: str) -> list[Difference]:
    """Every difference between the fingerprints of ``text`` and of its
    read-back ``printed``, one per intrinsic/define/metadata kind (a call
    upgraded at N call sites is one difference)."""
    a, b = fingerprint(text), fingerprint(printed)
    out: list[Difference] = []
    seen: set = set()
    for (ca, ta), (cb, tb) in zip(a.calls, b.calls):
        if (ca, ta) == (cb, tb) or (ca, ta, cb, tb) in seen:
            continue
        seen.add((ca, ta, cb, tb))
        if ca != cb:
            out.append(Difference("call", ca, ca, cb))
        else:
            out.append(Difference("operands", ca, _sig(ta), _sig(tb)))
    if len(a.calls) != len(b.calls):
        out.append(Difference("call", "llvm.* calls", f"{len(a.calls)} calls", f"{len(b.calls)} calls"))
    for name in sorted(set(a.decls) | set(b.decls)):
        da, db = a.decls.get(name), b.decls.get(name)
        if da == db:
            continue
        if da is None or db is None:
            out.append(Difference("signature", name, "declared" if da else "absent", "declared" if db else "absent"))
            continue
        if any(d.kind == "operands" and d.what == name for d in out) and len(da[1]) != len(db[1]):
            continue  # the call's difference says it
        out.append(Difference("signature", name, f"{da[0]} ({', '.join(da[1])})", f"{db[0]} ({', '.join(db[1])})"))
    for name in sorted(set(a.defines) | set(b.defines)):
        fa, fb = a.defines.get(name), b.defines.get(name)
        if fa == fb:
            continue
        if fa is None or fb is None:
            out.append(Difference("define", name, "defined" if fa else "absent", "defined" if fb else "absent"))
            continue
        if fa[0] != fb[0]:
            out.append(Difference("attributes", f"@{name}", " ".join(sorted(fa[0] - fb[0])) or "-",
                                  " ".join(sorted(fb[0] - fa[0])) or "-"))
        for i, (pa, pb) in enumerate(zip(fa[1], fb[1])):
            if pa != pb:
                out.append(Difference("attributes", f"@{name} parameter {i}", " ".join(sorted(pa - pb)) or "-",
                                      " ".join(sorted(pb - pa)) or "-"))
    for what, ma, mb in (("metadata attachments", a.md_kinds, b.md_kinds),
                         ("named metadata", a.md_named, b.md_named), ("metadata nodes", a.md_nodes, b.md_nodes)):
        if ma != mb:
            ka, kb = set(ma.items()), set(mb.items())
            out.append(Difference("metadata", what, "; ".join(f"{k} x{v}" for k, v in sorted(ka - kb)) or "-",
                                  "; ".join(f"{k} x{v}" for k, v in sorted(kb - ka)) or "-"))
    return out


def expected(flavor: str, llvm: str, d: Difference) -> Expected | None:
    """The :data:`EXPECTED` entry that declares ``d`` for ``flavor`` read back
    by ``llvm`` (its version label, e.g. ``LLVM 23.1.4 (opt, ...)``), or None."""
    for e in EXPECTED.get(flavor, ()):
        if e.kind == d.kind and d.what.startswith(e.what) and llvm.startswith(e.llvm):
            return e
    return None


def judge(flavor: str, llvm: str, diffs: list[Difference]) -> tuple[list[str], list[str]]:
    """(errors, notes) of one unit's read-back by ``llvm``: an undeclared
    difference is an error, a declared one a note carrying its reason."""
    errors, notes = [], []
    for d in diffs:
        e = expected(flavor, llvm, d)
        if e is None:
            errors.append(f"read-back by {llvm} changes the text (auto-upgrade not declared expected for "
                          f"{flavor}): {d.line()}")
        else:
            notes.append(f"read-back by {llvm}: {d.line()} (expected: {e.reason})")
    return errors, notes


# --- running the printers -----------------------------------------------------------

_NO_TARGET = re.compile(r"WARNING: failed to create target machine for 'amdgcn[^']*'.*")


def run_opt_print(text: str, path: str, timeout: float = 60.0) -> tuple[bool, str, str]:
    """``opt -S`` (no passes; opt verifies its input) on ``text``: (ok, the
    printed module, stderr without the no-AMDGPU-target warning of LLVM 23's
    x86-only opt)."""
    try:
        res = subprocess.run([path, "-S", "-"], input=text, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "", f"{os.path.basename(path)} timed out after {timeout:g}s"
    err = "\n".join(l for l in res.stderr.splitlines() if not _NO_TARGET.search(l)).strip()
    if res.returncode != 0:
        if res.returncode < 0:
            err = f"{os.path.basename(path)} killed by signal {-res.returncode}: {err}"
        return False, "", err or f"{os.path.basename(path)} exited with status {res.returncode}"
    return True, res.stdout, err

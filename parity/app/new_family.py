"""``parity new-family NAME --like FAMILY``: a registered, building skeleton of a
new family in both engines (docs/contributing.md).

    parity new-family bias_act --like ir_core     an IR family (an empty ``ret void`` kernel)
    parity new-family abi_notes --like conv_abi   a text family (a short text listing the spec)

``--like`` picks the kind (the template family's ``OUTPUT`` in parity/configs:
LLVM IR or text) and the starting spec: the template's field list (names,
kinds, defaults), or the minimal one (``threads`` int 256) when the template's
cannot make a skeleton that builds (an IR template without an int ``threads``
field, a field kind other than int and str, a default C++ cannot spell).

What it writes, from two templates (one per engine, each in its engine's idiom;
neither is translated from the other: parity/app/new_family_engines.py):

* Python: ``python_engine/kernels/NAME.py`` (IR) or ``python_engine/families/NAME.py``
  (text), and the ``python_engine/families/registry.py`` entry;
* C++: ``cpp_engine/src/kernels/NAME.{h,cpp}`` (or ``src/families/``),
  ``cpp_engine/include/cpp_engine/NAME.h`` (C struct ``cpe_NAME_spec``,
  ``cpe_NAME_spec_default``, ``cpe_NAME_validate``, ``cpe_NAME_lower``),
  ``cpp_engine/src/api/NAME.cpp`` and the ``families.def`` row;
* the gate: ``parity/configs/NAME.py`` (one placeholder config; a text family:
  ``OUTPUT = "text"`` and ``NUMERICS_OPT_OUT``), an IR family's numerics plan
  ``parity/sim/plans/NAME.py`` (parity/app/new_family_done.py: the skeleton kernel
  run by the emulator) and the ``docs/families.md`` table row and section.

Then, unless ``--no-tests``, it runs ``parity write --only NAME`` and every
family-sensitive test (parity/app/new_family_done.py) and says done only when
they pass.

The rules are placeholders that every field reaches (a str field may not be
null, an int field is a 32-bit integer, ``threads`` of an IR family is a
multiple of the wave size in wave..1024), so tests/test_family_registry.py
passes on the skeleton as written. Nothing is written unless every file was
rendered: files go to temporary names first and are moved into place
together; a failure removes them and restores the edited files.
"""
from __future__ import annotations

import difflib
import keyword
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from string import Template

from parity.cli.common import EXIT_USAGE, ERROR_PREFIX
from parity.config import load_families
from parity.base.project import find_project_root
from parity.app.new_family_done import done_commands, opt_sample_edit, render_plan, run_done, shown_command
from parity.app.new_family_engines import doc_value, render_c_api, render_cxx, render_python, rule_doc
from python_engine.facts import FAMILY_BY_NAME as BY_NAME, FAMILY_MODULES as FAMILIES

NAME_RE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")

#: C and C++ keywords and names that would break one of the generated files.
RESERVED = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires restrict return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
wchar_t while xor xor_eq std cpe api spec ir targets kernels policy families main
""".split())

MINIMAL_FIELDS = (("threads", "int", 256),)
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


class ScaffoldError(Exception):
    """Input the scaffold refuses; the message is one line."""


@dataclass(frozen=True)
class Plan:
    """What the scaffold writes: new files and edited files, as text."""

    name: str
    like: str
    kind: str            # "ir" or "text"
    layer: str           # "kernels" or "families"
    fields: tuple        # ((name, kind, default), ...)
    note: str            # why the minimal field list was used ("" when copied)
    new: dict            # relative path -> text
    edited: dict         # relative path -> (old text, new text)


# -- the starting spec ---------------------------------------------------------------------

def _spellable(default) -> bool:
    # a null default would fail the skeleton's own "must not be null" rule
    return (isinstance(default, str) and all(" " <= c <= "~" for c in default)) \
        or (type(default) is int and INT32_MIN <= default <= INT32_MAX)


def starting_fields(mod, kind: str) -> tuple[tuple, str]:
    """The template's fields ``((name, kind, default), ...)`` or the minimal list, and why."""
    fields = tuple((f.name, f.kind, f.default) for f in mod.FIELDS if f.kind in ("int", "str"))
    names = [f[0] for f in fields]
    if not fields:
        return MINIMAL_FIELDS, "it has no int or str field"
    if any(not _spellable(d) for _, _, d in fields):
        return MINIMAL_FIELDS, "a default is null, not plain ASCII text or not a 32-bit integer"
    if kind == "ir" and ("threads", "int") not in [(n, k) for n, k, _ in fields]:
        return MINIMAL_FIELDS, "an IR skeleton needs an int `threads` field"
    if len(set(names)) != len(names) or any(n in RESERVED or keyword.iskeyword(n) for n in names):
        return MINIMAL_FIELDS, "a field name is reserved in C, C++ or Python"
    return fields, ""


# -- the gate's files ------------------------------------------------------------------------

CONFIGS = Template('''\
"""$name: TODO($name) one line (python_engine/$layer/$name.py, cpp_engine/src/$layer/$name.cpp;
docs/families.md)."""

from parity.config import Config

FAMILY = "$name"
$output$opt_out
CONFIGS = [
    # TODO($name): the placeholder; add named configs (ok ones, and must-reject ones with
    # expect=reject("exact reason")) as the rules grow. Names are stable: never rename or reuse one.
    Config("defaults", arch="gfx1250", spec={}),
]
''')


def render_configs(name: str, kind: str) -> str:
    output, opt_out = ("", "") if kind == "ir" else (  # an IR family's plan: parity/sim/plans/NAME.py
        'OUTPUT = "text"  # lower() returns text, not an LLVM module: parity verify skips it\n',
        'NUMERICS_OPT_OUT = "text family: no IR to run"\n')
    return CONFIGS.substitute(name=name, layer="kernels" if kind == "ir" else "families",
                              output=output, opt_out=opt_out)


def docs_row(name: str, like: str, kind: str, fields) -> str:
    what = "TODO" + ("" if kind == "ir" else " (text, not LLVM IR)")
    return (f"| `{name}` | {what} | "
            + ", ".join(f"`{n}`={doc_value(d)}" for n, _, d in fields) + " |\n")


def docs_section(name: str, like: str, kind: str, fields) -> str:
    kname = f"`{name}_t<threads>`" if kind == "ir" else f"`{name}`"
    return (f"\n## {name}\n\nTODO({name}): what it {'computes' if kind == 'ir' else 'prints'}; its arguments and grid.\n"
            f"(Skeleton of `parity new-family {name} --like {like}`.)\n\n"
            f"Rules: {rule_doc(fields, kind)}.\nName: {kname}.\n")


# -- the edits of the registries ---------------------------------------------------------------

def edit_python_registry(text: str, name: str, layer: str) -> str:
    imp = re.compile(r"^from \.\.kernels import (.+)$" if layer == "kernels" else r"^from \. import (.+)$", re.M)
    m = imp.search(text)
    if m and "(" not in m.group(1):
        names = sorted({*[s.strip() for s in m.group(1).split(",")], name})
        head = m.group(0)[: m.start(1) - m.start(0)]
        text = text[: m.start()] + head + ", ".join(names) + text[m.end():]
    else:
        anchor = re.search(r"^\nFAMILY_MODULES = ", text, re.M)
        if anchor is None:
            raise ScaffoldError("python_engine/families/registry.py: no FAMILY_MODULES to add to")
        line = f"from ..kernels import {name}\n" if layer == "kernels" else f"from . import {name}\n"
        text = text[: anchor.start()] + line + text[anchor.start():]
    m = re.search(r"^FAMILY_MODULES = \((.*?)\)\n", text, re.M | re.S)
    if m is None:
        raise ScaffoldError("python_engine/families/registry.py: no FAMILY_MODULES tuple")
    body = m.group(1).rstrip().rstrip(",")
    last = body.rsplit("\n", 1)[-1]
    sep = ",\n" + " " * len("FAMILY_MODULES = (") if len(last) + len(name) + 3 > 100 else ", "
    return text[: m.start(1)] + body + sep + name + text[m.end(1):]


def edit_families_def(text: str, name: str, layer: str) -> str:
    if not text.endswith("\n"):
        text += "\n"
    return text + f"CPE_FAMILY({name}, cpe_{name}, cpe::{layer}::{name})\n"


def edit_docs(text: str, row: str, section: str) -> str:
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.startswith("| family |")), None)
    if start is None:
        raise ScaffoldError("docs/families.md: no family table (a line starting '| family |')")
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    out = "".join(lines[:end] + [row] + lines[end:])
    return out.rstrip("\n") + "\n" + section


# -- planning and writing ------------------------------------------------------------------------

def c_identifiers(root: Path) -> set:
    ids = set()
    for h in (root / "cpp_engine/include/cpp_engine").glob("*.h"):
        ids |= set(re.findall(r"\bcpe_\w+", h.read_text(encoding="utf-8")))
    return ids


#: The longest family name: it is a file name in both engines and the C prefix ``cpe_NAME_spec_default``.
MAX_NAME = 64


def family_paths(name: str) -> list:
    """Every path a family called ``name`` would own, in either layer."""
    return [f"python_engine/kernels/{name}.py", f"python_engine/kernels/{name}",
            f"python_engine/families/{name}.py", f"python_engine/families/{name}",
            f"cpp_engine/src/kernels/{name}.h", f"cpp_engine/src/kernels/{name}.cpp",
            f"cpp_engine/src/kernels/{name}", f"cpp_engine/src/families/{name}.h",
            f"cpp_engine/src/families/{name}.cpp", f"cpp_engine/src/families/{name}",
            f"cpp_engine/include/cpp_engine/{name}.h", f"cpp_engine/src/api/{name}.cpp",
            # the api folder's own headers (c_api.h, conv_spec_c.h): NAME.cpp would sit beside them
            f"cpp_engine/src/api/{name}.h",
            f"parity/configs/{name}.py", f"parity/sim/plans/{name}.py", f"golden/{name}.json"]


def plan(root: Path, name: str, like: str) -> Plan:
    """Everything the scaffold would write; ScaffoldError (one line) for refused input."""
    if not NAME_RE.match(name or ""):
        raise ScaffoldError(f"family name {name!r} is not a lowercase identifier "
                            "(a-z first, then a-z, 0-9 and single underscores)")
    if len(name) > MAX_NAME:  # before: "[Errno 36] File name too long: '.../NAME.py'" once it wrote
        raise ScaffoldError(f"family name is {len(name)} characters long, at most {MAX_NAME} "
                            "(it names files, a C prefix and kernels)")
    if keyword.iskeyword(name) or name in RESERVED:
        raise ScaffoldError(f"family name {name!r} is reserved in C, C++ or Python")
    if like not in BY_NAME:
        raise ScaffoldError(f"--like {like!r} is not a family (families: {', '.join(FAMILIES)})")
    if name in BY_NAME:
        raise ScaffoldError(f"family {name!r} exists")
    taken = [p for p in family_paths(name) if (root / p).exists()]
    if taken:
        raise ScaffoldError(f"family {name!r} exists: {taken[0]} is there")
    ids = c_identifiers(root)
    prefix = f"cpe_{name}"
    ours = {prefix, *(prefix + s for s in ("_spec", "_spec_default", "_validate", "_lower"))}
    defs = Path(root / "cpp_engine/include/cpp_engine/families.def").read_text(encoding="utf-8")
    prefixes = set(re.findall(r"^CPE_FAMILY\(\w+, (\w+), ", defs, re.M))
    # cpe_NAME_* must be the family's own namespace of C names: `family` would share
    # cpe_family_count & co. (the registry API), so it is refused like an exact clash.
    clash = (sorted(ours & ids) or sorted(p for p in prefixes if p == prefix)
             or sorted(i for i in ids if i.startswith(prefix + "_")))
    if clash:
        raise ScaffoldError(f"family name {name!r} clashes with the C identifier {clash[0]} "
                            "(cpp_engine/include/cpp_engine); pick another name")
    fam = {f.name: f for f in load_families()}.get(like)
    kind = "text" if fam is not None and fam.output == "text" else "ir"
    layer = "kernels" if kind == "ir" else "families"
    fields, why = starting_fields(BY_NAME[like], kind)
    dropped = [f"{f.name} ({f.kind})" for f in BY_NAME[like].FIELDS if f.kind not in ("int", "str")]
    origin = (f"the spec fields are {like}'s" if not why
              else f"the minimal spec (`threads` int 256: {like}'s fields do not fit, {why})")
    if dropped and not why:
        # The templates write int and str fields; a bool or float field is added by hand
        # (docs/contributing.md, "Spec fields").
        origin += f" (its int and str fields; not copied: {', '.join(dropped)})"
    py = render_python(name, like, kind, fields, origin.replace("`", "``"))
    h, cpp = render_cxx(name, like, kind, fields, origin)
    ch, api = render_c_api(name, kind, fields)
    new = {
        f"python_engine/{layer}/{name}.py": py,
        f"cpp_engine/src/{layer}/{name}.h": h,
        f"cpp_engine/src/{layer}/{name}.cpp": cpp,
        f"cpp_engine/include/cpp_engine/{name}.h": ch,
        f"cpp_engine/src/api/{name}.cpp": api,
        f"parity/configs/{name}.py": render_configs(name, kind),
    }
    if kind == "ir":
        new[f"parity/sim/plans/{name}.py"] = render_plan(root, name, like)
    edited = {}
    for rel, fn in (("python_engine/families/registry.py", lambda t: edit_python_registry(t, name, layer)),
                    ("cpp_engine/include/cpp_engine/families.def", lambda t: edit_families_def(t, name, layer)),
                    ("docs/families.md", lambda t: edit_docs(t, docs_row(name, like, kind, fields),
                                                            docs_section(name, like, kind, fields)))):
        p = root / rel
        if not p.is_file():
            raise ScaffoldError(f"{rel} is missing: run inside a splitk-parity checkout")
        old = p.read_text(encoding="utf-8")
        edited[rel] = (old, fn(old))
    if kind == "ir":  # the CI opt lane samples every family with a plan (tests/test_sim_opt_lane.py)
        edited.update(opt_sample_edit(root, name))
    return Plan(name, like, kind, layer, fields, why, new, edited)


def write(root: Path, p: Plan) -> None:
    """Write every file of ``p`` or none: temporary files first, then moved into place;
    on any failure the moved ones are removed (new) or restored (edited)."""
    items = [(rel, text) for rel, text in p.new.items()] + [(rel, new) for rel, (_, new) in p.edited.items()]
    temps, done = [], []
    try:
        for rel, text in items:
            dst = root / rel
            tmp = dst.with_name(f".{dst.name}.new-family-{os.getpid()}.tmp")
            temps.append((rel, tmp))
            with open(tmp, "x", encoding="utf-8", newline="\n") as f:
                f.write(text)
        for rel, tmp in temps:
            os.replace(tmp, root / rel)
            done.append(rel)
    except BaseException:
        for rel in done:
            if rel in p.edited:
                (root / rel).write_text(p.edited[rel][0], encoding="utf-8", newline="")
            else:
                (root / rel).unlink(missing_ok=True)
        for _, tmp in temps:
            tmp.unlink(missing_ok=True)
        raise


def _line_delta(old: str, new: str) -> str:
    """``+A -R lines`` between two texts (a line edited in place counts once each way),
    so an entry added inside an existing line reads ``+1 -1``, not ``+0``."""
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
    body = [d for d in diff if not d.startswith(("---", "+++", "@@"))]
    added = sum(1 for d in body if d.startswith("+"))
    return f"+{added} -{len(body) - added} lines"


def report(root: Path, p: Plan) -> str:
    lines = [f"new family {p.name} ({'LLVM IR' if p.kind == 'ir' else 'text'}, like {p.like}; "
             + (f"the spec fields of {p.like})" if not p.note else f"minimal spec: {p.note})")]
    for rel, text in p.new.items():
        lines.append(f"  wrote  {rel} ({text.count(chr(10))} lines)")
    for rel, (old, new) in p.edited.items():
        lines.append(f"  edited {rel} ({_line_delta(old, new)})")
    lines += ["next steps (docs/contributing.md):",
              "  1. fill in every TODO(" + p.name + ") in both engines and its numerics plan (`grep -rn 'TODO(" + p.name + ")'`)",
              "  2. bash scripts/bootstrap.sh       # only if the package map is stale (a new folder); "
              "C++ rebuilds on import",
              f"  3. parity check --only {p.name}     # both engines agree; the shard is MISSING until step 4",
              f"  4. parity write --only {p.name}     # oracles, then golden/{p.name}.json",
              "  5. " + shown_command(done_commands(root, p.name)[1]) + "   # the family-sensitive tests"]
    return "\n".join(lines)


def cmd_new_family(args) -> int:
    root = find_project_root()
    if root is None:
        print(f"{ERROR_PREFIX}new-family: no splitk-parity checkout at or above {Path.cwd()}", file=sys.stderr)
        return EXIT_USAGE
    try:
        p = plan(root, args.name, args.like)
        write(root, p)
    except (ScaffoldError, OSError) as exc:
        print(f"{ERROR_PREFIX}new-family: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(report(root, p))
    if args.no_tests:
        print("not run (--no-tests): before it is done, run\n"
              + "\n".join(f"  {shown_command(c)}" for c in done_commands(root, p.name)))
        return 0
    return run_done(root, p.name)


def add_command(sub) -> None:
    """Register ``parity new-family`` on the subparsers ``sub``."""
    p = sub.add_parser("new-family", help="write a registered, building skeleton of a new family in both engines "
                                          "(docs/contributing.md)")
    p.add_argument("name", metavar="NAME", help="the new family's name (a lowercase identifier)")
    p.add_argument("--like", metavar="FAMILY", required=True,
                   help="the family whose kind (LLVM IR or text) and spec fields the skeleton starts from")
    p.add_argument("--no-tests", action="store_true",
                   help="do not run `parity write --only NAME` and the family-sensitive tests; print them")
    p.set_defaults(func=cmd_new_family)

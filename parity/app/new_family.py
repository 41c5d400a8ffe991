"""``parity new-family NAME --like FAMILY``: a registered, building skeleton of a
new family in both engines (docs/contributing.md).

    parity new-family bias_act --like ir_core     an IR family (an empty ``ret void`` kernel)
    parity new-family abi_notes --like conv_abi   a text family (a short text listing the spec)

``--like`` picks the kind (the template family's ``OUTPUT`` in parity/configs:
LLVM IR or text) and the starting spec: the template's field list (names,
kinds, defaults), or the minimal one (``threads`` int 256) when the template's
cannot make a skeleton that builds (an IR template without an int ``threads``
field, a field kind other than int and str, a default C++ cannot spell).

What it writes, from two templates (one per engine, each in its engine's
idiom; neither is translated from the other):

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

import json
import keyword
import os
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from string import Template

from parity.cli.common import EXIT_USAGE, ERROR_PREFIX
from parity.config import load_families
from parity.base.project import find_project_root
from parity.app.new_family_done import done_commands, opt_sample_edit, render_plan, run_done, shown_command
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


# -- literals of each language ---------------------------------------------------------------

def py_literal(v) -> str:
    return "None" if v is None else json.dumps(v) if isinstance(v, str) else str(v)


def cxx_string(v: str) -> str:
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def doc_value(v) -> str:
    return "null" if v is None else json.dumps(v) if isinstance(v, str) else str(v)


def camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


# -- the Python template ----------------------------------------------------------------------

PY_IR = Template('''\
"""Family ``$name``; twin: cpp_engine/src/kernels/$name.cpp.

TODO($name): what the kernel computes.

$intro

$field_doc
"""
from __future__ import annotations

from ..ir.builder import IRBuilder
from ..spec.fields import Field
from .common import kernel_attrs, new_module

FAMILY = "$name"
FIELDS = (
$fields)


def validate(spec: dict, arch, flavor) -> str | None:
$rule_doc
    # TODO($name): the family's rules, in docs/families.md's order (the same text in C++).
$rules    return None


def kernel_name(spec: dict, arch, flavor) -> str:
    """``${name}_t<threads>``."""
    return f"{FAMILY}_t{spec['threads']}"


def build(spec: dict, arch, flavor):
    """Build the module of a valid spec; returns (kernel name, Module)."""
    name = kernel_name(spec, arch, flavor)
    m, fn = new_module(flavor, arch, name, [], kernel_attrs(spec["threads"]))
    b = IRBuilder(m, fn)
    b.position(b.new_block("entry"))
    # TODO($name): the kernel body (parameters above: common.in_ptr / out_ptr / scalar).
    b.ret_void()
    return name, m
''')

PY_TEXT = Template('''\
"""Family ``$name``; twin: cpp_engine/src/families/$name.cpp.

TODO($name): what the text says.

$intro

$field_doc
"""
from __future__ import annotations

from ..spec.fields import Field

FAMILY = "$name"
FIELDS = (
$fields)


def validate(spec: dict, arch, flavor) -> str | None:
$rule_doc
    # TODO($name): the family's rules, in docs/families.md's order (the same text in C++).
$rules    return None


def kernel_name(spec: dict, arch, flavor) -> str:
    """``$name``."""
    return FAMILY


def _value(v) -> str:
    return f"'{v}'" if isinstance(v, str) else str(v)


def build(spec: dict, arch, flavor):
    """(name, text) of a valid spec: ``$name <arch> <flavor>`` then ``<field> = <value>`` per field."""
    # TODO($name): the family's text.
    lines = [f"{FAMILY} {arch.name} {flavor.canonical}"]
    lines += [f"{f.name} = {_value(spec[f.name])}" for f in FIELDS]
    return kernel_name(spec, arch, flavor), "\\n".join(lines) + "\\n"
''')


def _py_rules(fields, kind: str) -> str:
    out = []
    for n, k, _ in fields:
        if k == "str":
            out.append(f'    if spec["{n}"] is None:\n        return "{n} must not be null"\n')
        elif n == "threads" and kind == "ir":
            out.append('    t = spec["threads"]\n'
                       '    if t < arch.wave_size or t > 1024 or t % arch.wave_size:\n'
                       '        return f"threads must be a multiple of the wave size {arch.wave_size} in '
                       '{arch.wave_size}..1024, got {t}"\n')
        else:
            out.append(f'    if not -(1 << 31) <= spec["{n}"] < (1 << 31):\n'
                       f'        return f"{n} must be a 32-bit integer, got {{spec[\'{n}\']}}"\n')
    return "".join(out)


def _rule_doc(fields, kind: str) -> str:
    parts = []
    for n, k, _ in fields:
        if k == "str":
            parts.append(f"{n} not null")
        elif n == "threads" and kind == "ir":
            parts.append("threads a multiple of the wave size in wave..1024")
        else:
            parts.append(f"{n} a 32-bit integer")
    return "; ".join(parts) + " (placeholders)"


def _para(text: str, prefix: str = "", width: int = 100) -> str:
    return textwrap.fill(text, width=width, initial_indent=prefix, subsequent_indent=prefix,
                         break_long_words=False, break_on_hyphens=False)


def render_python(name: str, like: str, kind: str, fields, origin: str) -> str:
    tpl = PY_IR if kind == "ir" else PY_TEXT
    what = ("``build`` emits an empty ``ret void`` kernel" if kind == "ir" else
            "``build`` returns a short text listing the spec (not an LLVM module: the engine API's "
            "``lower`` passes a ``str`` through unprinted)")
    intro = (f"Skeleton of ``parity new-family {name} --like {like}`` (docs/contributing.md): {origin}, "
             f"placeholder rules, and {what}. Replace every TODO here and in the C++ twin.")
    return tpl.substitute(
        name=name, like=like, intro=_para(intro),
        field_doc=_para("Spec fields (in order): "
                        + ", ".join(f"``{n}`` ({k}, default {py_literal(d)})" for n, k, d in fields) + "."),
        fields="".join(f'    Field("{n}", "{k}", {py_literal(d)}),\n' for n, k, d in fields),
        rules=_py_rules(fields, kind),
        rule_doc=_para(f'"""First failing rule\'s reason, or None. Rules, in order: {_rule_doc(fields, kind)}."""',
                       "    "))


# -- the C++ template ------------------------------------------------------------------------

CXX_HEADER = Template('''\
// Twin of python_engine/$layer/$name.py.
// Family `$name`: TODO($name) what it $what.
//
$intro
//
$field_doc
#pragma once

#include <cstdint>
$includes
namespace cpe::$layer::$name {

extern const char *const kFamily;  // "$name"

// The fields in spec order (names and kinds; defaults are $spec's).
const std::vector<spec::Field> &fields();

struct $spec {
$members};

$rule_doc
std::optional<std::string> validate(const $spec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor);

// `$kernel_doc` of a valid spec.
std::string kernel_name(const $spec &spec);

// $build_doc
$build_decl

}  // namespace cpe::$layer::$name
''')

CXX_SOURCE = Template('''\
// Twin of python_engine/$layer/$name.py.$source_note
#include "$layer/$name.h"

$includes
namespace cpe::$layer::$name {
$using
const char *const kFamily = "$name";

const std::vector<spec::Field> &fields() {
    static const std::vector<spec::Field> f{
$field_rows    };
    return f;
}

std::optional<std::string> validate(const $spec &spec, const targets::Arch &$arch_param,
                                    const targets::Flavor &) {
    // TODO($name): the family's rules, in docs/families.md's order (the same text in Python).
$rules    return std::nullopt;
}

$kernel_name_def

$build_def

}  // namespace cpe::$layer::$name
''')

CXX_IR_KERNEL_NAME = '''\
std::string kernel_name(const $spec &spec) { return std::string(kFamily) + "_t" + dec(spec.threads); }'''

CXX_IR_BUILD = '''\
std::pair<std::string, std::unique_ptr<Module>> build(const $spec &spec, const targets::Arch &arch,
                                                      const targets::Flavor &flavor) {
    const std::string name = kernel_name(spec);
    std::unique_ptr<Module> m = new_module(flavor, arch, name, {}, kernel_attrs(spec.threads));
    IRBuilder b(*m);
    Block &entry = b.new_block("entry");
    b.position(entry);
    // TODO($name): the kernel body (parameters above: kernels/common.h in_ptr / out_ptr / scalar).
    b.ret_void();
    return {name, std::move(m)};
}'''

CXX_TEXT_KERNEL_NAME = '''\
std::string kernel_name(const $spec &) { return kFamily; }'''

CXX_TEXT_BUILD = '''\
std::pair<std::string, std::string> build(const $spec &spec, const targets::Arch &arch,
                                          const targets::Flavor &flavor) {
    // TODO($name): the family's text.
    std::string text = std::string(kFamily) + " " + arch.name + " " + flavor.canonical + "\\n";
$text_lines    return {kernel_name(spec), text};
}'''


def _cxx_rules(fields, kind: str) -> str:
    out = []
    for n, k, _ in fields:
        if k == "str":
            out.append(f'    if (!spec.{n}) return std::string("{n} must not be null");\n')
        elif n == "threads" and kind == "ir":
            out.append('    const int64_t w = arch.wave_size;\n'
                       '    if (spec.threads < w || spec.threads > 1024 || spec.threads % w)\n'
                       '        return "threads must be a multiple of the wave size " + dec(w) + " in " + dec(w) +\n'
                       '               "..1024, got " + dec(spec.threads);\n')
        else:
            out.append(f'    if (spec.{n} != static_cast<int32_t>(spec.{n}))\n'
                       f'        return "{n} must be a 32-bit integer, got " + dec(spec.{n});\n')
    return "".join(out)


def render_cxx(name: str, like: str, kind: str, fields, origin: str) -> tuple[str, str]:
    """(header, source) of src/<layer>/<name>."""
    layer = "kernels" if kind == "ir" else "families"
    spec = camel(name) + "Spec"
    if kind == "ir":
        h_inc = "#include <memory>\n#include <optional>\n#include <string>\n#include <utility>\n#include <vector>\n\n" \
                '#include "ir/function.h"\n#include "spec/fields.h"\n'
        build_decl = (f"std::pair<std::string, std::unique_ptr<ir::Module>> build(const {spec} &spec, "
                      "const targets::Arch &arch,\n"
                      + " " * 58 + "const targets::Flavor &flavor);")
        s_inc = '#include "ir/builder.h"\n#include "ir/constants.h"\n#include "kernels/common.h"\n'
    else:
        h_inc = "#include <optional>\n#include <string>\n#include <utility>\n#include <vector>\n\n" \
                '#include "spec/fields.h"\n#include "targets/arch.h"\n#include "targets/flavors.h"\n'
        build_decl = (f"std::pair<std::string, std::string> build(const {spec} &spec, const targets::Arch &arch,\n"
                      + " " * 42 + "const targets::Flavor &flavor);")
        s_inc = '#include "ir/constants.h"\n'
    members = "".join(
        f"    std::optional<std::string> {n} = {'std::nullopt' if d is None else f'std::string({cxx_string(d)})'};"
        "  // nullopt = JSON null\n" if k == "str" else f"    int64_t {n} = {d};\n"
        for n, k, d in fields)
    header = CXX_HEADER.substitute(
        name=name, like=like, layer=layer, spec=spec, origin=origin, includes=h_inc, members=members,
        what="computes" if kind == "ir" else "prints",
        intro=_para(f"Skeleton of `parity new-family {name} --like {like}` (docs/contributing.md): {origin}, "
                    "placeholder rules, and build() "
                    + ("emits an empty `ret void` kernel." if kind == "ir" else "returns a short text listing the spec."),
                    "// "),
        field_doc=_para("Spec fields (in order): "
                        + ", ".join(f"{n} ({k}, default {doc_value(d)})" for n, k, d in fields) + ".", "// "),
        rule_doc=_para(f"First failing rule's reason, or nullopt. Rules, in order: {_rule_doc(fields, kind)}.", "// "),
        kernel_doc=f"{name}_t<threads>" if kind == "ir" else name,
        build_doc="Build the module of a valid spec; returns (kernel name, module)." if kind == "ir"
        else "(name, text) of a valid spec: the text is not an LLVM module.",
        build_decl=build_decl)
    if kind == "ir":
        kn, bd = Template(CXX_IR_KERNEL_NAME), Template(CXX_IR_BUILD)
        text_lines = ""
    else:
        kn, bd = Template(CXX_TEXT_KERNEL_NAME), Template(CXX_TEXT_BUILD)
        text_lines = "".join(
            f'    text += "{n} = \'" + *spec.{n} + "\'\\n";\n' if k == "str"
            else f'    text += "{n} = " + dec(spec.{n}) + "\\n";\n' for n, k, _ in fields)
    uses_arch = kind == "ir" and any(n == "threads" for n, _, _ in fields)
    source = CXX_SOURCE.substitute(
        name=name, layer=layer, spec=spec, includes=s_inc,
        source_note="\n// Every builder call is a statement of its own, so the SSA counter runs in\n"
                    "// source order." if kind == "ir" else "",
        using="\nusing namespace cpe::ir;\n" if kind == "ir" else "\nusing ir::dec;\n",
        field_rows="".join(f"        {{\"{n}\", spec::FieldKind::{k.capitalize()}}},\n" for n, k, _ in fields),
        arch_param="arch" if uses_arch else "",
        rules=_cxx_rules(fields, kind),
        kernel_name_def=kn.substitute(spec=spec, name=name),
        build_def=bd.substitute(spec=spec, name=name, text_lines=text_lines))
    source = source.replace("const targets::Arch &,\n", "const targets::Arch & /*arch*/,\n")
    return header, source


C_HEADER = Template('''\
/* C API of family `$name`; twin of python_engine/$layer/$name.py (src/$layer/$name.h).
 * TODO($name): what the family $what; see docs/families.md ($name).
 *
 * Spec fields, in spec order:
$field_doc *
 * Checks, in order (first failure is the reason): flavor known, arch known,
 * then the family rules. Status and reason conventions: see cpp_engine.h.
 */
#ifndef $guard
#define $guard

#include "cpp_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ${prefix}_spec {
$members} ${prefix}_spec;

/* The default spec. Strings point at static storage. */
CPE_API ${prefix}_spec ${prefix}_spec_default(void);

/* CPE_OK if (spec, arch, flavor) would lower; else CPE_REJECTED with the first
 * failing rule's reason. A NULL spec is CPE_INTERNAL_ERROR. */
CPE_API cpe_status ${prefix}_validate(const ${prefix}_spec *spec, const char *arch, const char *flavor,
$pad_v char *reason, size_t reason_len);

/* Lower (spec, arch, flavor) to $output. On CPE_OK `out`
 * receives the kernel name and the text (free with cpe_output_free); on any
 * other status `out`'s fields are set NULL. */
CPE_API cpe_status ${prefix}_lower(const ${prefix}_spec *spec, const char *arch, const char *flavor,
$pad_l cpe_output *out, char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif /* $guard */
''')

C_API = Template('''\
// C API of family $name (include/cpp_engine/$name.h); twin of python_engine/api.py over
// python_engine/$layer/$name.py: converts the C spec and runs the shared bodies of api/c_api.h.
#include "cpp_engine/$name.h"

#include <stdexcept>

#include "api/c_api.h"
#include "$layer/$name.h"

using namespace cpe;

namespace {

struct Fam {
    using Spec = $layer::$name::$spec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return $layer::$name::validate(s, a, f);
    }
    static auto build(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return $layer::$name::build(s, a, f);
    }
};

Fam::Spec to_cpp(const ${prefix}_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
$to_cpp    return s;
}

}  // namespace

extern "C" {

${prefix}_spec ${prefix}_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    ${prefix}_spec s;
$to_c    return s;
}

cpe_status ${prefix}_validate(const ${prefix}_spec *spec, const char *arch, const char *flavor,
$pad_v   char *reason, size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status ${prefix}_lower(const ${prefix}_spec *spec, const char *arch, const char *flavor,
$pad_l   cpe_output *out, char *reason, size_t reason_len) {
    return api::lower_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, out, reason, reason_len);
}

}  // extern "C"
''')


def render_c_api(name: str, kind: str, fields) -> tuple[str, str]:
    """(include/cpp_engine/<name>.h, src/api/<name>.cpp)."""
    layer = "kernels" if kind == "ir" else "families"
    prefix = f"cpe_{name}"
    width = max(len(n) for n, _, _ in fields)
    members, doc, to_cpp, to_c = [], [], [], []
    for n, k, d in fields:
        if k == "str":
            members.append(f"    const char *{n};{' ' * (width - len(n) + 1)}/* default {doc_value(d)} (static storage) */\n")
            doc.append(f" *   {n} -- TODO; UTF-8, NULL means JSON null (rejected: \"{n} must not be null\")\n")
            to_cpp.append(f'    s.{n} = api::str_field(spec->{n}, "{n}");\n')
            to_c.append(f"    s.{n} = d.{n} ? d.{n}->c_str() : nullptr;\n")
        else:
            members.append(f"    int64_t {n};{' ' * (width - len(n) + 5)}/* default {d} */\n")
            doc.append(f" *   {n} -- TODO\n")
            to_cpp.append(f"    s.{n} = spec->{n};\n")
            to_c.append(f"    s.{n} = d.{n};\n")
    header = C_HEADER.substitute(
        name=name, layer=layer, prefix=prefix, guard=f"CPP_ENGINE_{name.upper()}_H",
        what="computes" if kind == "ir" else "prints", field_doc="".join(doc), members="".join(members),
        output="LLVM IR" if kind == "ir" else "the family's text (not LLVM IR)",
        pad_v=" " * (len(f"CPE_API cpe_status {prefix}_validate(") - 1),
        pad_l=" " * (len(f"CPE_API cpe_status {prefix}_lower(") - 1))
    api = C_API.substitute(
        name=name, layer=layer, prefix=prefix, spec=camel(name) + "Spec",
        to_cpp="".join(to_cpp), to_c="".join(to_c),
        pad_v=" " * (len(f"cpe_status {prefix}_validate(") - 3),
        pad_l=" " * (len(f"cpe_status {prefix}_lower(") - 3))
    return header, api


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
            f"Rules: {_rule_doc(fields, kind)}.\nName: {kname}.\n")


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


def family_paths(name: str) -> list:
    """Every path a family called ``name`` would own, in either layer."""
    return [f"python_engine/kernels/{name}.py", f"python_engine/kernels/{name}",
            f"python_engine/families/{name}.py", f"python_engine/families/{name}",
            f"cpp_engine/src/kernels/{name}.h", f"cpp_engine/src/kernels/{name}.cpp",
            f"cpp_engine/src/kernels/{name}", f"cpp_engine/src/families/{name}.h",
            f"cpp_engine/src/families/{name}.cpp", f"cpp_engine/src/families/{name}",
            f"cpp_engine/include/cpp_engine/{name}.h", f"cpp_engine/src/api/{name}.cpp",
            f"parity/configs/{name}.py", f"parity/sim/plans/{name}.py", f"golden/{name}.json"]


def plan(root: Path, name: str, like: str) -> Plan:
    """Everything the scaffold would write; ScaffoldError (one line) for refused input."""
    if not NAME_RE.match(name or ""):
        raise ScaffoldError(f"family name {name!r} is not a lowercase identifier "
                            "(a-z first, then a-z, 0-9 and single underscores)")
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


def report(root: Path, p: Plan) -> str:
    lines = [f"new family {p.name} ({'LLVM IR' if p.kind == 'ir' else 'text'}, like {p.like}; "
             + (f"the spec fields of {p.like})" if not p.note else f"minimal spec: {p.note})")]
    for rel, text in p.new.items():
        lines.append(f"  wrote  {rel} ({text.count(chr(10))} lines)")
    for rel, (old, new) in p.edited.items():
        lines.append(f"  edited {rel} (+{new.count(chr(10)) - old.count(chr(10))} lines)")
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

"""The engines' files of ``parity new-family`` (parity/app/new_family.py): the skeleton
of a family in Python (``python_engine/{kernels,families}/NAME.py``), in C++
(``cpp_engine/src/{kernels,families}/NAME.{h,cpp}``) and its C API
(``cpp_engine/include/cpp_engine/NAME.h``, ``cpp_engine/src/api/NAME.cpp``), each
from a template in its engine's idiom (neither is translated from the other), and
the literals of each language they are spelled with.

Imports: the standard library only.
"""
from __future__ import annotations

import json
import textwrap
from string import Template


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

#: The Python skeletons' shared parts: the docstring after its first paragraph with the
#: future import, and FAMILY, FIELDS and validate after the imports.
_PY_DOC_TAIL = '''
$intro

$field_doc
"""
from __future__ import annotations

'''
_PY_VALIDATE = '''\
FAMILY = "$name"
FIELDS = (
$fields)


def validate(spec: dict, arch, flavor) -> str | None:
$rule_doc
    # TODO($name): the family's rules, in docs/families.md's order (the same text in C++).
$rules    return None


'''

PY_IR = Template('''\
"""Family ``$name``; twin: cpp_engine/src/kernels/$name.cpp.

TODO($name): what the kernel computes.
''' + _PY_DOC_TAIL + '''\
from ..ir.builder import IRBuilder
from ..spec.fields import Field
from .common import kernel_attrs, new_module

''' + _PY_VALIDATE + '''\
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
''' + _PY_DOC_TAIL + '''\
from ..spec.fields import Field

''' + _PY_VALIDATE + '''\
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


def rule_doc(fields, kind: str) -> str:
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
        rule_doc=_para(f'"""First failing rule\'s reason, or None. Rules, in order: {rule_doc(fields, kind)}."""',
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
        rule_doc=_para(f"First failing rule's reason, or nullopt. Rules, in order: {rule_doc(fields, kind)}.", "// "),
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

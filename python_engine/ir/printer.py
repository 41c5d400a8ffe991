"""The LLVM text printer (DESIGN §2).
Twin: cpp_engine/src/ir/printer.{h,cpp}.

Section order: header (datalayout, target triple), LDS globals, intrinsic
declarations (table order), the kernel ``define``, attribute groups, metadata;
one blank line between non-empty sections, ``\\n`` line ends, a trailing
newline. Blocks inside the function are separated by one blank line.
"""
from __future__ import annotations

from ..targets import intrinsics
from ..targets.flavors import TRIPLE
from .function import Module


def _param_text(p, capture_attr: str) -> str:
    attrs = "".join(" " + (capture_attr if a == "capture" else a) for a in p.attrs)
    return f"{p.type.text}{attrs} %{p.name}"


def _attr_text(key: str, value) -> str:
    return key if value is None else f'"{key}"="{value}"'


def print_module(m: Module) -> str:
    """Render ``m`` as LLVM IR text."""
    fl = m.flavor
    sections = [[f'target datalayout = "{fl.datalayout}"', f'target triple = "{TRIPLE}"']]
    if m.lds:
        sections.append([f"@{g.name} = internal addrspace(3) global {g.type.text} poison, align {g.align}"
                         for g in m.lds])
    decls = [intrinsics.intrinsic(r.key, fl.canonical).declaration
             for r in intrinsics.TABLE if r.key in m.used_intrinsics]
    if decls:
        sections.append(decls)
    f = m.function
    params = ", ".join(_param_text(p, fl.capture_attr) for p in f.params)
    group = " #0" if f.attr_group else ""
    body = [f"define {f.cc} {f.ret.text} @{f.name}({params}){group} {{"]
    for i, b in enumerate(f.blocks):
        if i:
            body.append("")
        body.append(f"{b.name}:")
        body.extend("  " + ins.text() for ins in b.instrs)
    body.append("}")
    sections.append(body)
    if f.attr_group:
        sections.append(["attributes #0 = { " + " ".join(_attr_text(k, v) for k, v in f.attr_group) + " }"])
    if m.metadata:
        sections.append(list(m.metadata))
    return "\n\n".join("\n".join(s) for s in sections) + "\n"

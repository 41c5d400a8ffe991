"""The LLVM text printer (DESIGN §2).
Twin: cpp_engine/src/ir/printer.{h,cpp}.

Section order: header (datalayout, target triple), LDS globals, intrinsic
declarations (table order), the kernel ``define``, attribute groups, metadata;
one blank line between non-empty sections, ``\\n`` line ends, a trailing
newline. Blocks inside the function are separated by one blank line.
"""
from __future__ import annotations

from . import intrinsics
from ..targets.flavors import TRIPLE
from . import origin
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
        body.extend(["  " + ins.text() for ins in b.instrs])
    body.append("}")
    sections.append(body)
    if f.attr_group:
        sections.append(["attributes #0 = { " + " ".join(_attr_text(k, v) for k, v in f.attr_group) + " }"])
    if m.metadata:
        sections.append(list(m.metadata))
    return "\n\n".join("\n".join(s) for s in sections) + "\n"


def line_origins(m: Module, text: str) -> tuple:
    """The origin table of ``text`` (``print_module(m)``): one str per line of
    ``text`` (``text.split("\\n")`` without the piece after the final newline),
    ``"python_engine/<path>.py:<line>"`` of the builder call that made the block
    label or instruction on that line, or of the ``add_lds`` call that declared
    the LDS global on that line (ir/origin.py), ``""`` for a line no such call
    made (header, declarations, ``define``, ``}``, blank lines, attributes,
    metadata) or made while recording was off. ValueError when ``text`` is not
    laid out as print_module lays ``m`` out."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = [""] * len(lines)
    for k, g in enumerate(m.lds):  # the LDS section: after the two header lines and a blank line
        if 3 + k >= len(lines) or not lines[3 + k].startswith(f"@{g.name} = "):
            raise ValueError(f"line_origins: text does not match the module at LDS global {g.name}")
        out[3 + k] = origin.text(*g.origin) if g.origin else ""
    at = next((i for i, ln in enumerate(lines) if ln.startswith("define ")), None)
    if at is None or m.function is None:
        raise ValueError("line_origins: no define line")
    at += 1
    for i, b in enumerate(m.function.blocks):
        if i:
            at += 1  # the blank line between blocks
        if at >= len(lines) or lines[at] != f"{b.name}:":
            raise ValueError(f"line_origins: text does not match the module at block {b.name}")
        out[at] = origin.text(*b.origin) if b.origin else ""
        at += 1
        for ins in b.instrs:
            if at >= len(lines):
                raise ValueError(f"line_origins: text ends inside block {b.name}")
            out[at] = origin.text(*ins.origin) if ins.origin else ""
            at += 1
    return tuple(out)

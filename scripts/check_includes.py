#!/usr/bin/env python3
"""Include check for cpp_engine/src: every #include points down the layer order.

The layers, bottom to top (DESIGN.md section 1; docs/cpp_engine.md "Layers"):

    1 spec       spec/            fields, rejection
    2 ir base    ir/types, ir/constants, ir/values, ir/origin
    3 targets    targets/         arch, flavors, target
    4 ir build   ir/function, ir/builder, ir/printer, ir/intrinsics
    5 kernels    kernels/         one module per kernel (admission, lowering)
    6 policy     policy/          split-K policy, identity, AOT grid, folding, perf model
    7 families   families/        text families and resolvers over kernels + policy
    8 api        api/             the C API entry points

A file may include a header of its own layer and folder, or of any lower
layer. It may not include a header of a higher layer, nor a header of another
folder of the same layer. Includes that are not files under src (the public
C headers "cpp_engine/*.h", system headers) are not checked. A "dir/file.h"
include naming a src folder but no file is reported (a stale path), and so is
a circle of includes among the src headers.

Usage: python scripts/check_includes.py [SRC_DIR]   (default: cpp_engine/src)
Exit 0 with a one-line summary; 1 with one line per violation; 2 on bad usage.
Standard library only (Python 3.10+).
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

# (folder, file stem or None for every file of the folder) -> (layer number, layer name)
LAYERS: tuple[tuple[str, tuple[str, ...] | None, int, str], ...] = (
    ("spec", None, 1, "spec"),
    ("ir", ("types", "constants", "values", "origin"), 2, "ir base"),
    ("targets", None, 3, "targets"),
    ("ir", ("function", "builder", "printer", "intrinsics"), 4, "ir build"),
    ("kernels", None, 5, "kernels"),
    ("policy", None, 6, "policy"),
    ("families", None, 7, "families"),
    ("api", None, 8, "api"),
)
FOLDERS = frozenset(folder for folder, _, _, _ in LAYERS)
# Quoted and angle-bracket includes: the build puts cpp_engine/src on the include
# path, so `#include <kernels/common.h>` reaches a src header too.
INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)')


def layer_of(rel: str) -> tuple[int, str] | None:
    """(number, name) of the layer of a src-relative path "dir/file.ext", or None."""
    parts = rel.split("/")
    if len(parts) < 2:
        return None
    folder = parts[0]
    # A phase folder inside a layer folder (kernels/conv_implicit_gemm/) is in that layer;
    # a file stem only decides the layer of a file directly in its folder (ir/).
    stem = parts[1].split(".", 1)[0] if len(parts) == 2 else None
    for f, stems, num, lname in LAYERS:
        if f == folder and (stems is None or (stem is not None and stem in stems)):
            return num, lname
    return None


def label(layer: tuple[int, str]) -> str:
    return f"{layer[0]} {layer[1]}"


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One circle of the include graph (a list of nodes, first == last), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = {n: WHITE for n in graph}
    for root in sorted(graph):
        if color[root] != WHITE:
            continue
        stack = [(root, iter(graph[root]))]
        path = [root]
        color[root] = GREY
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[node] = BLACK
                stack.pop()
                path.pop()
                continue
            if nxt not in color:
                continue
            if color[nxt] == GREY:
                return path[path.index(nxt):] + [nxt]
            if color[nxt] == WHITE:
                color[nxt] = GREY
                stack.append((nxt, iter(graph[nxt])))
                path.append(nxt)
    return None


def check(src: Path, shown: str) -> tuple[list[str], int, int]:
    """(violation lines, files read, src includes checked) for the tree at `src`."""
    files = sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file())
    known = set(files)
    problems: list[str] = []
    graph: dict[str, list[str]] = {}
    checked = 0
    for rel in files:
        where = f"{shown}/{rel}"
        own = layer_of(rel)
        if own is None:
            problems.append(f"{where}:1: file is in no layer (folders: {', '.join(sorted(FOLDERS))})")
        text = (src / rel).read_text(encoding="utf-8", errors="replace")
        edges = graph.setdefault(rel, [])
        for lineno, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            raw = m.group(1) or m.group(2)
            if raw.startswith("."):  # relative to the including file ("../kernels/common.h")
                joined = os.path.normpath(os.path.join(os.path.dirname(rel), raw)).replace(os.sep, "/")
                if joined.startswith("../"):
                    problems.append(f"{where}:{lineno}: includes {raw}, which leaves {shown}")
                    continue
                inc = joined
            else:
                inc = os.path.normpath(raw).replace(os.sep, "/")
            if inc not in known:
                if inc.split("/", 1)[0] in FOLDERS:
                    problems.append(f"{where}:{lineno}: includes {inc}, which is not a file under {shown}")
                continue  # a public C header or a system header
            checked += 1
            edges.append(inc)
            theirs = layer_of(inc)
            if own is None or theirs is None:
                continue
            if theirs[0] > own[0]:
                problems.append(f"{where}:{lineno}: includes {inc} (layer {label(theirs)}) "
                                f"from layer {label(own)}")
            elif theirs[0] == own[0] and inc.split("/")[0] != rel.split("/")[0]:
                problems.append(f"{where}:{lineno}: includes {inc} (layer {label(theirs)}, folder "
                                f"{inc.split('/')[0]}/) from layer {label(own)} (folder {rel.split('/')[0]}/)")
    headers = {n: [d for d in ds if d in graph] for n, ds in graph.items()}
    cycle = find_cycle(headers)
    if cycle:
        problems.append(f"{shown}/{cycle[0]}:1: include cycle: {' -> '.join(cycle)}")
    return problems, len(files), checked


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print("usage: check_includes.py [SRC_DIR]", file=sys.stderr)
        return 2
    if argv:
        src, shown = Path(argv[0]), argv[0].rstrip("/")
    else:
        src, shown = Path(__file__).resolve().parent.parent / "cpp_engine" / "src", "cpp_engine/src"
    if not src.is_dir():
        print(f"check_includes: {src} is not a directory", file=sys.stderr)
        return 2
    problems, nfiles, nincludes = check(src, shown)
    for p in problems:
        print(p)
    if problems:
        print(f"check_includes: {len(problems)} violation(s) in {shown}", file=sys.stderr)
        return 1
    order = " < ".join(lname for _, _, _, lname in LAYERS)
    print(f"check_includes: {shown}: {nfiles} files, {nincludes} src includes, all point down "
          f"({order}), no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

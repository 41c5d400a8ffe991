"""Build only the plain (split_k 1) forward jobs of the AOT grid (issue 37)
with ``parity aot --build``'s own build (parity/aot/build.py: workers, gate,
manifest), to measure their build time, registers, spills and scratch
(docs/aot.md "Plain jobs").

    python bench/aot_plain.py [--flavor F] [--jobs N] [--json PATH] DIR

DIR/manifest.json then holds the plain jobs only (``parity aot validate``
reports the others missing); a later full ``parity aot --build DIR`` reuses
them. Needs the LLVM 22 linker (scripts/bootstrap.sh).
"""
from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.cli.common import Parser, at_least_one, flavor_list  # noqa: E402
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402


def is_plain(row) -> bool:
    """A grid row ``(index, family, hash, label, spec)`` of a plain conv_implicit_gemm job."""
    return row[1] == "conv_implicit_gemm" and int(row[4]["split_k"]) == 1


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", metavar="DIR", help="the build directory (DIR/manifest.json, DIR/co/)")
    ap.add_argument("--flavor", type=flavor_list("--flavor", single=True), default="llvm23",
                    help="the LLVM flavor (default llvm23)")
    ap.add_argument("--jobs", type=at_least_one("--jobs"), default=2, help="worker processes (default 2)")
    ap.add_argument("--json", metavar="PATH", help="write the build summary as JSON")
    a = ap.parse_args(argv)
    from parity.aot.build import build
    return build(a.flavor, a.dir, jobs=a.jobs, json_path=a.json, progress=False, keep=is_plain)


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

"""Epilogue store widths, LDS instructions, LDS bytes and LDS bank conflicts of
conv_implicit_gemm kernels, compiled by ``llc-22 -mcpu=gfx1250`` and counted by
the emulator's bank model (parity/sim/lds_banks.py).

    python bench/lds_epilogue.py [--engine-path DIR] [--no-banks]

``--engine-path DIR`` imports ``python_engine`` from DIR instead (e.g. a
``git archive BASE python_engine`` of an earlier commit) to print the "before"
numbers with the same counter. Prints one row per kernel: LDS bytes (compiled
``.group_segment_fixed_size``), global stores of the whole kernel by width
(``buffer_store_b16/b32/b64/b128``), LDS stores/loads by width, and the bank
conflict cycles per site category over one emulated launch (the default problem
of ``conv_bank_conflicts``: two tiles in M, one in N, two K tiles per slice).
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

CONFIGS = {
    "64x64x32 plain default": {},
    "64x64x32 plain cshuffle": {"epilogue": "cshuffle"},
    "64x64x64 two-stage default": {"tile_k": 64, "split_k": 4, "split_k_cluster": 0},
    "128x128x64 cluster S=15": {"tile_m": 128, "tile_n": 128, "tile_k": 64, "epilogue": "cshuffle",
                                "split_k": 15, "split_k_cluster": 15},
    "128x128x64 plain cshuffle": {"tile_m": 128, "tile_n": 128, "tile_k": 64, "epilogue": "cshuffle"},
    "16x16x32 AOT tile default": {"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1},
}
LLC = "llc-22"


def compile_counts(text: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ll"
        src.write_text(text)
        asm = subprocess.run([LLC, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx1250", "-O3", str(src), "-o", "-"],
                             check=True, capture_output=True, text=True).stdout
    ops = Counter(m.group(1) for m in re.finditer(r"^\s+((?:buffer_store|ds_store|ds_load|ds_write|ds_read)_\w+)",
                                                   asm, re.M))
    lds = re.search(r"\.group_segment_fixed_size:\s+(\d+)", asm)
    return {"ops": ops, "lds": int(lds.group(1)) if lds else None}


def main(argv=None) -> int:
    from parity.cli.parser import Parser  # imports no engine: --engine-path still picks the one imported below
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine-path", help="import python_engine from this directory")
    ap.add_argument("--no-banks", action="store_true", help="skip the emulated bank-conflict counts")
    a = ap.parse_args(argv)
    if a.engine_path:
        sys.meta_path[:] = [f for f in sys.meta_path if "ditable" not in repr(f)]
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        sys.path.insert(0, a.engine_path)
    import python_engine as E
    from parity.sim import lds_banks as LB
    from parity.sim import numerics as NU
    lw = NU._Lowerer.__new__(NU._Lowerer)
    lw.E, lw.kernels = E, {}
    print(f"python_engine: {E.__file__}")
    for name, spec in CONFIGS.items():
        text = E.lower("conv_implicit_gemm", spec, "gfx1250", "llvm23").text
        c = compile_counts(text)
        st = {k.replace("buffer_store_", ""): v for k, v in sorted(c["ops"].items()) if k.startswith("buffer_store")}
        ds = {k: v for k, v in sorted(c["ops"].items()) if k.startswith("ds_")}
        line = f"{name:28s} LDS {c['lds']:6d} B | global stores {st} | LDS ops {ds}"
        if not a.no_banks:
            r = LB.conv_bank_conflicts(spec, lowerer=lw)
            cats = Counter()
            for s in r["sites"]:
                cat = "ab_fragment" if s["category"].startswith("other_load_f_p") else s["category"]
                cats[cat] += s["conflict_cycles"]
            line += " | conflict cycles " + str(dict(cats))
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    from parity.base.outputs import run_quietly_on_broken_pipe
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

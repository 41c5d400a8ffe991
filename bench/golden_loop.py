"""Timings of the golden change loop (docs/gate.md), on a scratch edit that is always undone.

    python bench/golden_loop.py [--write] [--rebuild]

--write    the wall time of ``parity write --only conv_fwd_split_k_reduce``
           after a one-kernel change in both engines (the unrolled slab loads
           renamed ``slab`` -> ``slabu``: every config with degree >= 2 changes,
           valid and numerically equal), against a temporary copy of golden/,
           so the oracles run on exactly the changed configs. Prints the
           changed-entry count and the seconds.
--rebuild  the seconds from a one-line C++ edit (a comment appended to
           cpp_engine/src/kernels/conv_fwd_split_k_reduce.cpp) to a GREEN
           ``parity check`` (every family; the editable install rebuilds the
           library on import), then the same after the edit is undone, then
           with nothing edited (a no-op rebuild).

Both by default. The edited files are restored (byte for byte) in a
``finally``; run it in a checkout with an editable install.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scratch_edit import Scratch  # noqa: E402  (bench/scratch_edit.py)

ROOT = Path(__file__).resolve().parents[1]
PY = ROOT / "python_engine/kernels/conv_fwd_split_k_reduce.py"
CPP = ROOT / "cpp_engine/src/kernels/conv_fwd_split_k_reduce.cpp"
FAMILY = "conv_fwd_split_k_reduce"


def parity(*args: str) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "parity", *args], cwd=ROOT, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr, time.perf_counter() - t0


def bench_write() -> None:
    with Scratch(PY, CPP), tempfile.TemporaryDirectory() as tmp:
        old_py = '            x = b.load(vt, p, 4, "slab")'
        old_cpp = '            const Value x = b.load(vt, p, 4, "slab");'
        assert PY.read_text().count(old_py) == 1 and CPP.read_text().count(old_cpp) == 1
        PY.write_text(PY.read_text().replace(old_py, old_py.replace('"slab"', '"slabu"')))
        CPP.write_text(CPP.read_text().replace(old_cpp, old_cpp.replace('"slab"', '"slabu"')))
        gdir = Path(tmp) / "golden"
        shutil.copytree(ROOT / "golden", gdir)
        rc, out, secs = parity("write", "--only", FAMILY, "--golden-dir", str(gdir))
        m = re.search(r"oracles: (\d+) changed or new lowered entr", out)
        print(f"parity write after a one-kernel change ({FAMILY}, both engines): exit {rc}, "
              f"{m.group(1) if m else '?'} changed entries, {secs:.1f} s")
        if rc:
            print(out)
    parity("check", "--only", FAMILY)  # rebuild the restored library


def bench_rebuild() -> None:
    with Scratch(CPP):
        CPP.write_text(CPP.read_text() + "// bench/golden_loop.py: one-line edit\n")
        rc, out, secs = parity("check")
        green = rc == 0 and out.rstrip().endswith("RESULT: GREEN")
        print(f"one-line C++ edit -> parity check: {'GREEN' if green else 'NOT GREEN'} "
              f"in {secs:.1f} s (incremental rebuild on import included)")
    rc, out, secs = parity("check")
    print(f"edit undone -> parity check: {'GREEN' if rc == 0 else 'NOT GREEN'} in {secs:.1f} s")
    rc, out, secs = parity("check")
    print(f"no edit (no-op rebuild) -> parity check: {'GREEN' if rc == 0 else 'NOT GREEN'} in {secs:.1f} s")


def main(argv=None) -> int:
    from parity.cli.parser import Parser
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="time `parity write` after a one-kernel change only")
    ap.add_argument("--rebuild", action="store_true", help="time a one-line C++ edit to a GREEN check only")
    a = ap.parse_args(argv)
    both = not (a.write or a.rebuild)
    if a.write or both:
        bench_write()
    if a.rebuild or both:
        bench_rebuild()
    return 0


if __name__ == "__main__":
    from parity.base.outputs import run_quietly_on_broken_pipe
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

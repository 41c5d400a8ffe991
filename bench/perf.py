"""The before/after table of the perf targets (parity/perf/targets.py), and the report's wall time.

    python bench/perf.py [--base REF] [--jobs N]

Runs ``parity perf --only <the targets> --base REF`` (default REF:
``HEAD``, i.e. the last commit against the working tree; give the commit
before a kernel change to see that change) and prints its before -> after
table of the targets, the goal lines, and the wall time of the report. Then
times ``parity perf --only conv_implicit_gemm`` (the CI lane) and prints its
wall time. Figures are static (compiled code, llvm-mca-22's gfx1250 model;
docs/perf.md), no GPU involved.
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.app.main import main as parity_main  # noqa: E402
from parity.cli.common import Parser, at_least_one, git_commit  # noqa: E402
from parity.perf.measure import Measure  # noqa: E402
from parity.perf.table import COMPARE_HEAD, compare_rows, render  # noqa: E402
from parity.perf.targets import FAMILY, TARGETS, target_keys  # noqa: E402
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402


def _run(argv: list[str]) -> tuple[int, float, str]:
    out = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out):
        rc = parity_main(argv)
    return rc, time.perf_counter() - t0, out.getvalue()


def main(argv=None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=git_commit("--base"), default="HEAD", help="git ref of the 'before' kernels (default HEAD)")
    ap.add_argument("--jobs", "-j", type=at_least_one("--jobs"), default=None, help="parity perf's compile workers (default: the CPU count)")
    ap.add_argument("--no-lane", action="store_true", help="skip timing the CI lane (--only conv_implicit_gemm)")
    a = ap.parse_args(argv)
    jobs = ["--jobs", str(a.jobs)] if a.jobs else []
    only = ",".join(f"{FAMILY}/{c}" for _, c in TARGETS)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "perf.json"
        rc, secs, text = _run(["perf", "--only", only, "--base", a.base, "--json", str(path)] + jobs)
        if rc == 130:
            raise KeyboardInterrupt
        if rc != 0:
            sys.stdout.write(text)
            print(f"parity perf exited {rc}", file=sys.stderr)
            return rc
        doc = json.loads(path.read_text())
    before = {k: Measure.from_json(v) for k, v in doc["base"]["configs"].items()}
    after = {k: Measure.from_json(v) for k, v in doc["configs"].items()}
    print(f"before: {a.base} ({doc['base']['commit'][:12]}); after: the working tree; ratio = after/before")
    for line in render(compare_rows(target_keys(), before, after), COMPARE_HEAD):
        print(line)
    for g in doc["goals"]:
        print(f"goal {g['name']}: {g['status']} ({g['detail']})")
    print(f"parity perf, 4 targets with --base: {secs:.1f} s wall")
    if not a.no_lane:
        rc, secs, _ = _run(["perf", "--only", FAMILY] + jobs)
        print(f"parity perf --only {FAMILY} (the CI lane): {secs:.1f} s wall, exit {rc}")
        if rc == 130:   # the lane's run was interrupted (Ctrl-C): so is this benchmark
            raise KeyboardInterrupt
    return 0



if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

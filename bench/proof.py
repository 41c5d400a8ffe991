"""Benchmark of the alignment/bounds proof (parity/proof, docs/proof.md).

    python bench/proof.py [--repeats N] [--only fam,...]

Lowers every accepted config of every LLVM IR family at every flavor with the
Python engine (as ``parity verify`` does), then times ``prove_module`` over all
of them: CPU seconds (process time, what the proof adds to ``parity verify``
on this machine, where it runs in a thread beside the LLVM workers) and wall
seconds, the median of N repeats, split into reading the text and the
fixpoint; per family the modules, accesses, proved aligned, proved in bounds,
left to sampling and failures.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import python_engine  # noqa: E402
from parity.cli.common import Parser, at_least_one, family_list  # noqa: E402
from parity.config import load_families  # noqa: E402
from parity.proof import assumptions as A  # noqa: E402
from parity.proof import interpret as I  # noqa: E402
from parity.proof import report as R  # noqa: E402
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402


def units(only):
    for fam in load_families(only=only):
        if fam.output != "llvm_ir":
            continue
        for cfg in fam.configs:
            for fl in ("llvm20", "llvm22", "llvm23"):
                if cfg.applies(fl) and cfg.expectation(fl).kind == "ok":
                    text = python_engine.lower(fam.name, dict(cfg.spec), cfg.arch, fl).text
                    yield fam.name, cfg.name, dict(cfg.spec), cfg.arch, fl, text


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=at_least_one("--repeats"), default=3,
                    help="proof runs over every unit; the median is reported (default 3)")
    ap.add_argument("--only", type=family_list("--only"), default=None, help="families, comma-separated (default all)")
    a = ap.parse_args(argv)
    work = list(units(a.only.split(",") if a.only else None))
    cpu, wall, read_s, fix_s = [], [], [], []
    reps = []
    for _ in range(a.repeats):
        R._analyse.cache_clear()
        t0, w0 = time.process_time(), time.perf_counter()
        reps = [R.prove_module(text, f, c, s, arch, fl) for f, c, s, arch, fl, text in work]
        cpu.append(time.process_time() - t0)
        wall.append(time.perf_counter() - w0)
        t1 = time.process_time()
        mods = [I.read(text) for *_, text in work]
        t2 = time.process_time()
        for (f, _, s, _, _, _), m in zip(work, mods):
            I.Interp(m, A.arg_multiples(f, s), A.PTR_ARG_ALIGN).run()
        read_s.append(t2 - t1)
        fix_s.append(time.process_time() - t2)
    med = statistics.median
    print(f"proof: {len(work)} modules (every accepted config x flavor, python engine), "
          f"median of {a.repeats}: {med(cpu):.2f} s CPU, {med(wall):.2f} s wall "
          f"(with identical texts proved once); without that memo: read {med(read_s):.2f} s + "
          f"fixpoint {med(fix_s):.2f} s CPU")
    for sm in sorted(R.summarise(reps).values(), key=lambda x: x.family):
        print(sm.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

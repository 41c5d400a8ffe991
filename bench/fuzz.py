"""Throughput of `parity fuzz`: specs per second through both engines'
validate and lower, in the worker pool (docs/fuzz.md).

    python bench/fuzz.py [--seconds N] [--jobs N] [--seed S]

Prints one line per family (specs, specs/s in-process on one core) and the
pool's total specs/s for a bounded run over every family.
"""
from __future__ import annotations

import time


def main(argv=None) -> int:
    from parity.cli.common import Parser, at_least_one, finite_seconds, integer
    p = Parser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=finite_seconds("--seconds"), default=10.0, help="seconds of the pool run (default 10)")
    p.add_argument("--jobs", type=at_least_one("--jobs"), default=None, help="worker processes (default: CPUs)")
    p.add_argument("--seed", type=integer("--seed"), default=0, help="the generator seed (default 0)")
    args = p.parse_args(argv)

    from parity.gate.fuzz_check import check_spec
    from parity.gate.fuzz_generate import families, generate
    from parity.fuzz.run import run_fuzz

    fams = families()
    per = max(0.5, args.seconds / (2 * len(fams)))
    for fam in fams:
        t0 = time.perf_counter()
        n = 0
        while time.perf_counter() - t0 < per:
            spec, arch, flavor, _ = generate(args.seed, fam, n)
            check_spec(fam, spec, arch, flavor, ("python_engine", "cpp_engine"))
            n += 1
        dt = time.perf_counter() - t0
        print(f"{fam:<24} in-process: {n / dt:,.0f} specs/s ({n} specs)")
    rep = run_fuzz(fams, seed=args.seed, seconds=args.seconds, specs=None, jobs=args.jobs, out_dir=None)
    print(f"pool ({rep.specs} specs, {rep.seconds:.1f} s): {rep.specs / rep.seconds:,.0f} specs/s, "
          f"{rep.failed} failing")
    return 0 if rep.failed == 0 else 1


if __name__ == "__main__":
    from parity.base.outputs import run_quietly_on_broken_pipe
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

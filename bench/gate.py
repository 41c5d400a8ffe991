"""Benchmark of the parity gate.

    python bench/gate.py [--repeats N] [--engines python,cpp] [--only fam,...]

Prints the wall time of a full ``parity check`` (worker pool, both engines,
goldens) and, per engine, kernels per second: every config that both engines
are expected to accept is lowered in-process at each flavor it applies to;
the median of N repeats is reported. An engine that cannot be imported is
reported as unavailable.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.cli_common import at_least_one  # noqa: E402

from parity.cli import main as parity_main  # noqa: E402
from parity.config import load_families  # noqa: E402
from parity.runner import engine_module  # noqa: E402


def accepted_units(families):
    for fam in families:
        for cfg in fam.configs:
            for fl in cfg.flavors:
                if cfg.expectation(fl).kind == "ok":
                    yield fam.name, dict(cfg.spec), cfg.arch, fl


def bench_engine(name: str, units, repeats: int) -> str:
    try:
        E = importlib.import_module(engine_module(name))
        lower = E.lower
        rejected = E.SpecRejected
    except Exception as exc:  # noqa: BLE001
        return f"{name}: unavailable ({type(exc).__name__}: {exc})"
    if not units:
        return f"{name}: no accepted configs to lower"
    times = []
    failures = 0
    for _ in range(repeats):
        failures = 0
        t0 = time.perf_counter()
        for fam, spec, arch, fl in units:
            try:
                lower(fam, spec, arch, fl)
            except rejected:
                failures += 1
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    rate = len(units) / med if med > 0 else float("inf")
    extra = f", {failures} rejected unexpectedly" if failures else ""
    return (f"{name}: {rate:,.0f} kernels/s ({len(units)} kernels in {med * 1000:.1f} ms, "
            f"median of {repeats}{extra})")


#: argparse type of --repeats: an integer >= 1 (the median of no runs is undefined).
_repeats = at_least_one("--repeats")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=_repeats, default=5)
    p.add_argument("--engines", default="python,cpp")
    p.add_argument("--only", default=None)
    args = p.parse_args(argv)
    engines = [e for e in args.engines.split(",") if e]
    only = args.only.split(",") if args.only else None

    check_args = ["check", "--engines", ",".join(engines[:2])] + (["--only", args.only] if args.only else [])
    buf = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(buf):
        rc = parity_main(check_args)
    wall = time.perf_counter() - t0
    result = (buf.getvalue().rstrip().splitlines() or ["?"])[-1]
    print(f"parity check: {wall:.2f} s wall ({result}, exit {rc})")

    units = list(accepted_units(load_families(only=only)))
    for name in dict.fromkeys(engines):
        print(bench_engine(name, units, args.repeats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

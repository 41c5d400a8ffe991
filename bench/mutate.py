"""The mutation lane in full: every mutation kind at every site of every accepted
conv_implicit_gemm and conv_fwd_split_k_reduce config (or a sample), and the
kill rate.

    python bench/mutate.py [--per-kind K] [--seconds N] [--max-mutants N] [--seed S] [-j N] [--only F] [--json PATH]

``--per-kind 0`` (the default here) draws every site; CI runs a bounded sample
(``parity mutate --seconds 60``). Prints ``parity mutate``'s report: per kind
killed / survived / equivalent, the oracle that killed, the kill rate, every
survivor with its diff, and the wall time.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.app.main import main as parity_main  # noqa: E402
from parity.cli.common import Parser, at_least_one, finite_seconds, integer  # noqa: E402
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402


def main(argv=None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-kind", type=integer("--per-kind", lo=0), default=0, metavar="K",
                    help="sites drawn per mutation kind and config (default 0 here: every site)")
    ap.add_argument("--seconds", type=finite_seconds("--seconds"), default=None,
                    help="stop judging new mutants after this many seconds (default: all)")
    ap.add_argument("--max-mutants", type=at_least_one("--max-mutants"), default=None, metavar="N",
                    help="judge the first N mutants of the seeded order (default: all)")
    ap.add_argument("--seed", type=integer("--seed"), default=0, help="the sampling seed (default 0)")
    ap.add_argument("--jobs", "-j", type=at_least_one("--jobs"), default=None,
                    help="judging processes (default: parity mutate's, the CPU count)")
    ap.add_argument("--only", default=None, help="families or FAMILY/NAME configs, comma-separated (default all)")
    ap.add_argument("--json", default=None, metavar="PATH", help="also write parity mutate's JSON report to PATH")
    a = ap.parse_args(argv)
    args = ["mutate", "--per-kind", str(a.per_kind), "--seed", str(a.seed)]
    args += ["--seconds", str(a.seconds)] if a.seconds else []
    args += ["--max-mutants", str(a.max_mutants)] if a.max_mutants else []
    args += ["-j", str(a.jobs)] if a.jobs else []
    args += ["--only", a.only] if a.only else []
    args += ["--json", a.json] if a.json else []
    t0 = time.perf_counter()
    rc = parity_main(args)
    print(f"bench/mutate.py: parity {' '.join(args)}: exit {rc}, wall {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

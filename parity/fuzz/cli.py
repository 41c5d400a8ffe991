"""``parity fuzz [--only F,..] [--seconds N] [--specs N] [--seed S] [--jobs N] [--out DIR]``;
``parity fuzz --gate [--seconds N] [--only KIND|GROUP,..] [--seed S]`` (parity/fuzz/gate_report.py).

Prints one line per family with its verdict counts, the failures (at most
20 lines, with the reproducer path), then ``specs N seconds S specs/s R`` and
``RESULT: GREEN`` or ``RESULT: RED``. Exit 0 when every spec passed, 1 on any
MISMATCH, REASON_MISMATCH, ASYMMETRIC, CRASH, INCONSISTENT or UNCLEAN_REASON,
2 on bad arguments. Default: 60 seconds, a fresh random seed per run (printed
on the summary line; ``--seed S`` replays a run), reproducers in ``fuzz-out/``.
"""
from __future__ import annotations

import secrets
import sys
from pathlib import Path

from parity.base import stale
from parity.cli.common import at_least_one as _at_least_one, die, finite_seconds, integer, positive_int
from parity.base.outputs import OutputError, check_dir_to_be

from parity.gate import executor as X
from parity.gate.fuzz_check import VERDICTS
from parity.gate.fuzz_generate import families
from .run import run_fuzz


def add_command(sub) -> None:
    """Register ``parity fuzz`` on the ``parity`` subparsers."""
    f = sub.add_parser("fuzz", help="differential fuzzing of both engines' validate and lower (docs/fuzz.md)")
    f.add_argument("--only", metavar="F[,F...]", help="only these families (default all)")
    f.add_argument("--seconds", type=finite_seconds("--seconds"), default=None,
                   help="stop after this many seconds (default 60 unless --specs is given)")
    f.add_argument("--specs", type=_at_least_one("--specs"), default=None,
                   help="stop after this many specs")
    f.add_argument("--seed", type=integer("--seed"), default=None,
                   help="generation seed (default: a fresh random seed, printed on the summary line)")
    f.add_argument("--jobs", "-j", type=positive_int, default=None,
                   help="worker processes, 1 to 1024 (default: CPUs)")
    f.add_argument("--out", metavar="DIR", default="fuzz-out", help="reproducer directory (default fuzz-out)")
    f.add_argument("--timeout", type=finite_seconds("--timeout"), default=30.0, help="per-spec timeout in seconds")
    f.add_argument("--gate", action="store_true",
                   help="fuzz the gate's own inputs instead (hostile shards, configs, command lines, "
                        "environments; --only takes kinds or groups; docs/fuzz.md)")
    X.add_argument(f)
    f.set_defaults(func=cmd_fuzz)


def _build_once() -> str | None:
    """Rebuild and check cpp_engine here, once, before any worker starts (parity/base/stale.py),
    and tell the workers to skip scikit-build-core's import-time rebuild. Before, each of
    ``-j N`` workers ran its own ``cmake --build`` on import (one after another, under the
    build's file lock); the workers still waiting when the run ended were killed and their
    ``cmake --build`` went on as orphans, printing after the command had exited. The
    failure line of a build that does not compile or load, else None."""
    msg = stale.check_cpp_build()
    if msg is None:
        stale.mark_checked()
    return msg


def cmd_fuzz(args) -> int:
    if getattr(args, "gate", False):
        from .gate_report import cmd_fuzz_gate  # the gate lane: its kinds load only when asked for
        return cmd_fuzz_gate(args)
    known = families()
    if args.only:
        fams = [p.strip() for p in args.only.split(",") if p.strip()]
        bad = [f for f in fams if f not in known]
        if bad or not fams:
            print(f"error: --only: unknown family {', '.join(bad) or '(empty)'} "
                  f"(known: {', '.join(known)})", file=sys.stderr)
            return 2
    else:
        fams = list(known)
    try:
        check_dir_to_be(args.out, "--out")  # written only when a failure is found: checked now
    except OutputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seconds = args.seconds if args.seconds is not None or args.specs is not None else 60.0

    def progress(rep):
        if sys.stderr.isatty():
            print(f"\r{rep.specs} specs, {rep.failed} failing, {rep.seconds:.0f}s", end="", file=sys.stderr)

    seed = args.seed if args.seed is not None else secrets.randbits(32)
    bad_build = _build_once()
    if bad_build:
        return die(bad_build)
    try:
        with X.cluster_for(X.scheduler_address(getattr(args, "scheduler", None))) as cluster:
            rep = run_fuzz(fams, seed=seed, seconds=seconds, specs=args.specs, jobs=args.jobs,
                           out_dir=Path(args.out), timeout=args.timeout, progress=progress, cluster=cluster)
    except X.SchedulerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if sys.stderr.isatty():
        print(file=sys.stderr)
    width = max(len(f) for f in fams)
    for fam in fams:
        c = rep.counts[fam]
        print(f"{fam:<{width}}  " + " ".join(f"{v}={c.get(v, 0)}" for v in VERDICTS))
    for f in rep.failures[:20]:
        where = f" -> {f.reproducer}" if f.reproducer else ""
        print(f"  {f.verdict} {f.family} #{f.index}: {f.detail}{where}")
    if len(rep.failures) > 20:
        print(f"  ... and {len(rep.failures) - 20} more")
    rate = rep.specs / rep.seconds if rep.seconds > 0 else 0.0
    print(f"specs {rep.specs} seconds {rep.seconds:.1f} specs/s {rate:.0f} seed {rep.seed} "
          f"worker restarts {rep.restarts}")
    green = rep.failed == 0 and rep.specs > 0
    print(f"RESULT: {'GREEN' if green else 'RED'}")
    return 0 if green else 1

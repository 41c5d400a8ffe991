"""``parity fuzz --gate [--seconds N] [--only KIND|GROUP,..] [--seed S] [--jobs N]``: the
command over parity/fuzz/gate_run.py. Prints one line per kind (its group,
the commands tried, the verdict counts), every failure (kind, command,
verdict, detail; a kind that needs another branch's fixes says which), the
kinds skipped on this machine and why, then ``kinds K cases N seconds S seed
S`` and ``RESULT: GREEN`` or ``RESULT: RED``. Exit 0 when every case kept the
contract, 1 otherwise, 2 on bad arguments. Default 60 seconds; every kind
runs at least once whatever the bound; ``--jobs`` cases at a time (default
two, or one on a one-CPU machine)."""
from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

from parity.base.escape import shown

from .gate_kinds import KINDS
from .gate_run import run_gate_fuzz


def cmd_fuzz_gate(args) -> int:
    only = None
    if args.only:
        only = [p.strip() for p in args.only.split(",") if p.strip()]
        known = {k.name for k in KINDS} | {k.group for k in KINDS}
        bad = [o for o in only if o not in known]
        if bad or not only:
            print(f"error: --only: unknown gate fuzz kind or group {shown(', '.join(bad)) or '(empty)'} "
                  f"(groups: {', '.join(sorted({k.group for k in KINDS}))}; kinds: docs/fuzz.md)", file=sys.stderr)
            return 2
    seconds = args.seconds if args.seconds is not None else 60.0
    seed = args.seed if args.seed is not None else secrets.randbits(32)

    def progress(rep):
        if sys.stderr.isatty():
            print(f"\r{rep.cases} cases, {len(rep.failures)} failing", end="", file=sys.stderr)

    jobs = args.jobs or min(2, os.cpu_count() or 1)
    main = getattr(args, "parity_main", None)
    if main is None:  # `parity`'s own main hands itself in (parity.app.main imports this package)
        print("error: parity fuzz --gate runs from the `parity` command (parity.app.main.main)", file=sys.stderr)
        return 2
    out = getattr(args, "out", None)
    rep = run_gate_fuzz(seconds, seed, main, only=only, progress=progress, jobs=jobs,
                        out=Path(out) if out else None)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    by_name = {k.name: k for k in KINDS}
    width = max(len(n) for n in by_name)
    for name in sorted(rep.counts):
        k = by_name[name]
        counts = " ".join(f"{v}={n}" for v, n in sorted(rep.counts[name].items()))
        print(f"{name:<{width}}  {k.group:<10} {','.join(k.commands):<14} {counts}")
    for name, why in sorted(rep.skipped.items()):
        print(f"SKIPPED {name}: {why}")
    for f in rep.failures:
        dep = by_name[f.kind].depends
        note = f" [needs the {dep} branch]" if dep else ""
        print(f"  {f.verdict} {f.kind} ({f.command}){note}: {shown(f.detail, limit=300)}")
    for d in rep.reproducers:
        print(f"reproducer: {shown(str(d))}/repro.sh")
    failing = sorted({f.kind for f in rep.failures})
    print(f"kinds {len(rep.counts)} cases {rep.cases} failing kinds {len(failing)} "
          f"seconds {rep.seconds:.1f} seed {rep.seed}")
    green = not rep.failures and rep.cases > 0
    print(f"RESULT: {'GREEN' if green else 'RED'}")
    return 0 if green else 1


__all__ = ["cmd_fuzz_gate"]

"""Byte identity of the two engines over every config family.

    python -m parity.check_byte_identity [--only fam1,fam2] [--flavor F] [--json PATH]
    python parity/check_byte_identity.py ...

Prints one line per family and flavor with its counts by verdict, the failing
configs (for a MISMATCH the first differing line of both texts), and
``RESULT: GREEN`` or ``RESULT: RED`` last. Exit status 0 (GREEN), 1 (RED) or
2 (bad usage / config error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.config import ConfigError  # noqa: E402
from parity.pool import PoolError  # noqa: E402
from parity.report import (add_common_options, die, failure_lines, progress, select,  # noqa: E402
                           summary_lines, write_json)
from parity.runner import run_gate  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="check_byte_identity",
                                description="Check that both engines emit the same bytes for every config.")
    add_common_options(p)
    p.add_argument("--json", metavar="PATH", help="write a machine-readable report to PATH")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        families, flavors, engines = select(args)
    except (ConfigError, ValueError) as exc:
        return die(str(exc))
    try:
        with progress("byte identity") as cb:
            report = run_gate(families, engines=engines, flavors=flavors, timeout=args.timeout,
                              workers=args.jobs, progress=cb)
    except PoolError as exc:
        return die(str(exc))
    for line in summary_lines(report):
        print(line)
    for line in failure_lines(report):
        print(line)
    if args.json:
        write_json(args.json, report.to_json())
    print(f"RESULT: {'GREEN' if report.green else 'RED'}")
    return 0 if report.green else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Byte identity of the two engines over every config family.

    python -m parity.check_byte_identity [--only fam1,fam2] [--flavor F] [--json PATH] [--verify]
    python parity/check_byte_identity.py ...
    python parity/check_byte_identity.py --write [options]     # = parity write [options]

``--only`` takes families, FAMILY/NAME configs, family tokens (``conv``) and
arches (``gfx1250``): ``--only conv,gfx1250`` runs the conv families' gfx1250
configs (parity/cli/common.py ``parse_only``, docs/cli.md).

Prints one line per family and flavor with its counts by verdict, the failing
configs grouped (parity/gate/failure_summary.py: one example in full per group, for
a MISMATCH the first differing line of both texts, and a hint line), and
``RESULT: GREEN`` or ``RESULT: RED`` last; with ``--verify``, ``RESULT: INCOMPLETE
(skipped lanes: ...)`` when nothing failed but a verify lane was skipped
outside CI. Exit status 0 (GREEN), 1 (RED or INCOMPLETE) or 2 (bad usage /
config error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.cli.common import Parser, add_version, finish, json_on_stdout  # noqa: E402
from parity.cli.help import add_color  # noqa: E402
from parity.cli.color import set_choice, verdict  # noqa: E402
from parity.config import ConfigError  # noqa: E402
from parity.gate.pool import PoolError  # noqa: E402
from parity.gate.failure_summary import hint_lines, summary_block  # noqa: E402
from parity.gate.report import add_common_options, die, progress, select, summary_lines  # noqa: E402
from parity.gate.runner import run_gate  # noqa: E402
from parity.app.preamble import preamble  # noqa: E402 - stale C++ build check + provenance first line (issue 12)
from parity.verify.verify import print_report, run_verify  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="check_byte_identity",
               description="Check that both engines emit the same bytes for every config.",
               epilog="exit status: 0 GREEN; 1 RED, or INCOMPLETE (--verify: a lane was skipped outside CI); "
                      "2 a usage or input error (one `error:` line on stderr). See docs/cli.md.")
    add_version(p)
    add_common_options(p)
    add_color(p)
    p.add_argument("--write", action="store_true",
                   help="re-bless instead, exactly as `parity write` with the same options (the reference "
                        "harness's --write; docs/cli.md)")
    p.add_argument("--verify", action="store_true",
                   help="then run `parity verify` (LLVM validity + ISA gate, docs/verify.md) and fold it into RESULT")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--write" in argv and "--help" not in argv and "-h" not in argv:  # the reference's re-bless flag
        from parity.app.main import main as parity_main
        return parity_main(["write", *(a for a in argv if a != "--write")])
    args = build_parser().parse_args(argv)
    set_choice(args.color)
    with json_on_stdout(args):  # --json -: the report alone on stdout
        return _main(args)


def _main(args) -> int:
    stop = preamble(args)
    if stop is not None:
        return stop
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
    lines, groups = summary_block(report)
    for line in lines + hint_lines(groups, report.labels):
        print(line)
    green = report.green
    doc = report.to_json()
    doc["summary_groups"] = [g.to_json() for g in groups]
    if args.verify:  # issue 6: the validity oracle, on the first engine's text
        with progress("verify") as cb:
            vrep = run_verify(families, engine=engines[0], flavors=flavors, workers=args.jobs, progress=cb)
        print_report(vrep)
        doc["verify"] = vrep.to_json()
        result = "RED" if not green else vrep.result
        print(vrep.result_line() if result == vrep.result else f"RESULT: {result}")
        return finish(args, "check_byte_identity", result, doc)
    print(f"RESULT: {verdict('GREEN' if green else 'RED', sys.stdout)}")
    return finish(args, "check_byte_identity", green, doc)


if __name__ == "__main__":
    from parity.base.outputs import run_quietly_on_broken_pipe  # `... | head -1` ends quietly
    raise SystemExit(run_quietly_on_broken_pipe(main))

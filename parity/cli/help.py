"""What every subcommand's ``--help`` says beyond its options: a one-line
description and its exit status (docs/cli.md, "Exit status"); and the
``--color`` option every subcommand takes (parity/cli/color.py)."""
from __future__ import annotations

import argparse

from parity.cli.color import CHOICES

#: Exit status per subcommand: what 0 and 1 mean; 2 is always a usage or input error.
EXIT_STATUS = {
    "check": "0 GREEN; 1 RED (a verdict fails, or a golden entry is MISSING, ORPHAN, CHANGED or CONFLICT)",
    "write": "0 written (or nothing to change); 1 refused: a verdict fails (the engines disagree) or a "
             "changed config fails an oracle, nothing written",
    "list": "0 every listed verdict passes; 1 one fails",
    "show": "0 the IR is printed; 1 the engine rejected the config or crashed",
    "diff": "0 no difference (the same IR, or both engines reject with the same reason; --base: no IR "
            "change); 1 a difference (other IR, one engine rejects, other reasons, a crash; --base: a change)",
    "verify": "0 GREEN; 1 RED, or INCOMPLETE (a lane was skipped outside CI)",
    "numerics": "0 every config matches the reference; 1 one does not",
    "emit": "0 every layer written; 1 a layer failed (the others are written)",
    "layers": "0 every layer passes; 1 one fails",
    "aot": "0 the grid is listed, written, checked or built; 1 a check, a job or a manifest fails",
    "fuzz": "0 no failure found; 1 a failure (reproducers in --out)",
    "perf": "0 the report ran; 1 only with --check-goals and a goal not met",
    "merge-golden": "0 merged; 1 keys changed differently on both sides (conflict entries written)",
    "new-family": "0 the skeleton is written; never 1",
    "run": "0 ran (and verified); 1 the result differs from the reference",
    "review": "0 done (or nothing pending); 1 an accepted group was refused (oracles or engines)",
    "golden-textconv": "0 the shard is shown or the driver installed; never 1",
    "golden-diff": "0 the change groups (or the JSON diff) are shown; never 1",
    "mutate": "0 the kill rate reaches --goal; 1 it does not (survivors listed with their diffs)",
    "completion": "0 the script is printed; never 1",
}


#: What a command missing from :data:`EXIT_STATUS` says (tests/test_cli_exit_help_color.py fails until it is added).
DEFAULT_STATUS = "0 GREEN; 1 RED"


def epilog(command: str) -> str:
    """The exit-status paragraph of ``command``'s --help."""
    return (f"exit status: {EXIT_STATUS.get(command, DEFAULT_STATUS)}; 2 a usage or input error (one `error:` "
            "line on stderr, nothing run or written) or a report file that cannot be written (one `error:` "
            "line after the run, e.g. --json to a full device). See docs/cli.md.")


def document(sub) -> None:
    """Give every subcommand parser of ``sub`` (the ``parity`` subparsers) its
    one-line description (its ``help``), its exit status and ``--color``. A
    subcommand :data:`EXIT_STATUS` does not know gets :data:`DEFAULT_STATUS`
    (and fails the test that every command says what its exit status means)."""
    helps = {a.dest: a.help for a in sub._choices_actions}  # argparse keeps each subcommand's help here
    for name, parser in sub.choices.items():
        if parser.description is None:
            parser.description = helps.get(name)
        parser.epilog = epilog(name)
        if name != "run":  # `parity run` has its own parser (parity/runtime/cli.py)
            add_color(parser, default=argparse.SUPPRESS)
        for action in parser._actions:  # nested subcommands (`parity aot merge`, `aot validate`)
            if isinstance(action, argparse._SubParsersAction):
                nested = {a.dest: a.help for a in action._choices_actions}
                for sub_name, sp in action.choices.items():
                    sp.description = sp.description or nested.get(sub_name)
                    sp.epilog = epilog(name)


def add_color(parser, default="auto") -> None:
    """``--color=auto|always|never`` (parity/cli/color.py)."""
    parser.add_argument("--color", choices=CHOICES, default=default, metavar="WHEN",
                        help="colour the output: auto (default: on a terminal, unless NO_COLOR is set), "
                             "always or never")

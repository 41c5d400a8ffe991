"""The argument parser of every ``parity`` command and bench script: a usage
error is one ``error:`` line and exit 2 (docs/cli.md, "Exit status").

Kept apart from :mod:`parity.cli.common` (which re-exports it) because this
module imports neither engine: a bench script that imports ``python_engine``
from another checkout (bench/lds_epilogue.py ``--engine-path``) parses its
options with it first.
"""
from __future__ import annotations

import argparse

from parity.base.escape import shown

EXIT_GREEN, EXIT_RED, EXIT_USAGE = 0, 1, 2
ERROR_PREFIX = "error: "


class Parser(argparse.ArgumentParser):
    """argparse with the project's conventions: a usage error is one line
    ``error: <prog>: <message>`` on stderr and exit 2; subcommand parsers made
    with ``add_subparsers().add_parser`` are Parsers too."""

    def error(self, message):  # noqa: D102 - argparse API
        self.exit(EXIT_USAGE, f"{ERROR_PREFIX}{self.prog}: {one_line(message)} (see `{self.prog} --help`)\n")


def one_line(text: object) -> str:
    """``text`` with every character :func:`parity.base.escape.shown` escapes, except the
    backslash, escaped: one printable line, safe to encode."""
    return "\\".join(shown(part, limit=10**9) for part in str(text).split("\\")) if text else ""

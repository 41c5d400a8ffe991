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


class Once(argparse._StoreAction):
    """An option that may be given once: a second ``--seed`` or ``--only`` is an argparse
    error naming both values (the last one silently won: ``--flavor llvm23 --flavor
    llvm22`` ran llvm22 only, ``mutate --seed 1 --seed 2`` seed 2). Every ``Parser`` makes
    it the action of each single-valued option (``action`` unset or ``"store"``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = getattr(namespace, "_given", set())
        if option_string is not None and self.dest in seen:
            raise argparse.ArgumentError(self, twice(getattr(namespace, self.dest), values))
        namespace._given = seen | {self.dest}
        setattr(namespace, self.dest, values)


def twice(first, second) -> str:
    """The message of an option given twice, with both values when they are text the user wrote
    (``perf --layers --layers``: two defaults, shown as nothing rather than ``<object ...>``)."""
    a, b = _text(first), _text(second)
    return f"given twice ({a} and {b}); give it once" if a is not None and b is not None else \
        "given twice; give it once"


class _SubCommand(argparse._SubParsersAction):
    """The subcommand action: an option given both before and after the subcommand
    (``parity --color never check --color always``) is given twice too; argparse parses the
    subcommand into a fresh namespace and copied it over the first value silently."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen, before = getattr(namespace, "_given", set()), dict(vars(namespace))
        super().__call__(parser, namespace, values, option_string)
        mine = getattr(namespace, "_given", set())
        mine = set() if mine is seen else mine  # the subcommand's own set, when it was given any option
        again = seen & mine
        if again:
            dest = sorted(again)[0]
            action = next((a for a in parser._actions if a.dest == dest), None)
            raise argparse.ArgumentError(action, twice(before.get(dest), getattr(namespace, dest, None)))
        namespace._given = seen | mine


def _text(value) -> str | None:
    """An option's parsed value as the user wrote it, near enough: a compiled regular
    expression as its pattern, a tuple (``--annotations gitlab=FILE``) its parts."""
    if hasattr(value, "pattern"):
        return str(value.pattern)
    if isinstance(value, (tuple, list)):  # a tuple is KIND=FILE, a list an option's nargs values
        parts = [_text(v) for v in value if v is not None]
        return None if None in parts else ("=" if isinstance(value, tuple) else " ").join(parts)
    if type(value) is object:  # a sentinel const (`--layers` without a value): nothing the user wrote
        return None
    return str(value)


class Parser(argparse.ArgumentParser):
    """argparse with the project's conventions: a usage error is one line
    ``error: <prog>: <message>`` on stderr and exit 2; an option that takes one value
    may be given once (:class:`Once`); subcommand parsers made with
    ``add_subparsers().add_parser`` are Parsers too."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, Once)     # argument groups share this registry
        self.register("action", "store", Once)
        self.register("action", "parsers", _SubCommand)

    def error(self, message):  # noqa: D102 - argparse API
        self.exit(EXIT_USAGE, f"{ERROR_PREFIX}{self.prog}: {one_line(message)} (see `{self.prog} --help`)\n")


def one_line(text: object) -> str:
    """``text`` with every character :func:`parity.base.escape.shown` escapes, except the
    backslash, escaped: one printable line, safe to encode."""
    return "\\".join(shown(part, limit=10**9) for part in str(text).split("\\")) if text else ""

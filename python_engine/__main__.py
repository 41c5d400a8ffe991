"""``python -m python_engine <command>``. Commands: ``run`` (a conv layer on a
gfx1250, :mod:`python_engine.runtime.cli`), ``emit`` (the kernels and launch
plan of convolution layers, :mod:`python_engine.emit`). ``--version`` and
``--help`` as in ``parity``; an unknown command is one ``error:`` line and
exit 2 (docs/cli.md)."""
from __future__ import annotations

import sys

COMMANDS = {"run": ("python_engine.runtime.cli", "run one conv layer on a gfx1250 and time it (docs/runtime.md)"),
            "emit": ("python_engine.emit", "emit the kernels + launch plan of convolution layers (docs/policy.md)")}
USAGE = "usage: python -m python_engine [--version] {" + ",".join(COMMANDS) + "} ..."


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--version":
        from parity.cli_common import version_text
        print(version_text("python_engine"))
        return 0
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE + "\n\ncommands:\n" + "".join(f"  {k:<6} {v[1]}\n" for k, v in COMMANDS.items())
              + "\n`python -m python_engine COMMAND --help` for a command's options; docs/cli.md for all.")
        return 0
    if not argv or argv[0] not in COMMANDS:
        what = f"unknown command {argv[0]!r}" if argv else "no command given"
        print(f"error: python -m python_engine: {what} (commands: {', '.join(COMMANDS)}; see --help)",
              file=sys.stderr)
        return 2
    import importlib
    from .outputs import run_quietly_on_broken_pipe
    return run_quietly_on_broken_pipe(importlib.import_module(COMMANDS[argv[0]][0]).main, argv[1:])


if __name__ == "__main__":
    sys.exit(main())

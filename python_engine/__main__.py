"""``python -m python_engine <command>``. Commands: ``run`` (a conv layer on a
gfx1250, :mod:`python_engine.runtime.cli`), ``emit`` (the kernels and launch
plan of convolution layers, :mod:`python_engine.emit`)."""
from __future__ import annotations

import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"run": "python_engine.runtime.cli", "emit": "python_engine.emit"}
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in commands:
        print("usage: python -m python_engine {" + ",".join(commands) + "} ...", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    import importlib
    from .outputs import run_quietly_on_broken_pipe
    return run_quietly_on_broken_pipe(importlib.import_module(commands[argv[0]]).main, argv[1:])


if __name__ == "__main__":
    sys.exit(main())

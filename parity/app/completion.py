"""Shell completion for ``parity`` (bash, zsh, fish) through argcomplete (docs/cli.md,
"Shell completion"): nothing is listed by hand, so it cannot drift from the parser.

``parity completion bash|zsh|fish`` prints argcomplete's registration code for the
``parity`` executable (``argcomplete.shellcode``). At each Tab the shell runs
``parity`` itself with ``_ARGCOMPLETE=1`` and the command line in ``COMP_LINE`` /
``COMP_POINT``; :func:`complete` (called first thing by :func:`parity.app.main.main`)
builds the real parser -- only the named subcommand's module when the line names one
(the lazy table of ``main.COMMAND_MODULES``), every module for the subcommand word
itself -- and lets argcomplete answer from it. So every subcommand, option and
``choices`` list completes as the parser has it, and ``--only`` completes family names
(after a comma too) and ``--flavor`` the canonical flavors.

Needs the ``argcomplete`` package (a dependency in pyproject.toml); the registration
code is argcomplete's own (bash and zsh share it; fish has its own).
"""
from __future__ import annotations

import argparse
import os
import sys

SHELLS = ("bash", "zsh", "fish")


def add_command(sub) -> None:
    """``parity completion SHELL``."""
    p = sub.add_parser("completion", help="print the shell completion script for bash, zsh or fish "
                                          "(eval it, or save it where the shell loads completions)")
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    p.set_defaults(func=print_script)


def script(shell: str) -> str:
    """The registration code of the ``parity`` executable for ``shell`` (argcomplete's)."""
    import argcomplete
    return argcomplete.shellcode(["parity"], shell=shell)


def print_script(args) -> int:
    sys.stdout.write(script(args.shell))
    return 0


def _words_before_cursor() -> list[str]:
    """The finished words of the line being completed (the word under the cursor left out)."""
    line = os.environ.get("COMP_LINE", "")
    try:
        point = int(os.environ.get("COMP_POINT", len(line)))
    except ValueError:
        point = len(line)
    line = line[:point]
    words = line.split()
    return words[1:] if line[-1:].isspace() else words[1:-1]


def family_completer(prefix: str, **_) -> list[str]:
    """``--only``: the families (parity/configs/), after the comma-separated ones typed."""
    from parity.base.project import checkout_configs_dir
    from parity.configs import family_module_names
    names = family_module_names(checkout_configs_dir())  # the checkout's, under a non-editable install too
    done, _, last = prefix.rpartition(",")
    head = f"{done}," if done else ""
    return [head + name for name in sorted(names) if name.startswith(last)]


def flavor_completer(prefix: str, **_) -> list[str]:
    """``--flavor``: the canonical flavors."""
    from parity.config import CANONICAL_FLAVORS
    return [f for f in CANONICAL_FLAVORS if f.startswith(prefix)]


def attach_completers(parser: argparse.ArgumentParser) -> None:
    """Give ``--only`` and ``--flavor`` of every (sub)parser their completers."""
    for action in parser._actions:
        if "--only" in action.option_strings:
            action.completer = family_completer
        elif "--flavor" in action.option_strings:
            action.completer = flavor_completer
        elif isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                attach_completers(sub)


def _give_run_its_parser(parser: argparse.ArgumentParser) -> None:
    """``parity run`` is listed in the main parser as a stub (its own MIOpenDriver-style parser,
    parity/runtime/cli.py, needs the [runtime] extra): put the real one in the stub's place so
    its options complete. Without the extra the stub stays (no options offered, no traceback)."""
    try:
        from parity.runtime.cli import _parser as run_parser  # pyelftools + msgpack ([runtime] extra)
    except Exception:  # noqa: BLE001 - any import failure: complete nothing for run's options
        return
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    sub.choices["run"] = run_parser()


def complete(build_parser, command_of) -> int:
    """Answer the shell's completion request (``_ARGCOMPLETE`` is set) from the real parser:
    ``build_parser(command_of(words))`` (parity/app/main.py). A command whose module cannot
    import an engine falls back to the whole parser, where that command is a stub (no
    options offered, never a traceback). argcomplete writes the candidates to the shell's
    descriptor and ends the process."""
    import argcomplete
    from parity.base.engine_import import EngineImportError
    words = _words_before_cursor()
    try:
        parser = build_parser(command_of(words))
    except EngineImportError:
        parser = build_parser(None)
    if words[:1] == ["run"]:
        _give_run_its_parser(parser)
    attach_completers(parser)
    argcomplete.autocomplete(parser)
    return 0  # argcomplete exits; reached only when it declines (no completion request)

"""The ``parity`` command line.

    parity check    [--only X,..] [--flavor F] [-j N] [--json PATH]   byte identity + goldens, one verdict
    parity write    [--only X,..] [--flavor F] [-j N] [--json PATH]   re-bless goldens (refused when CI is set)
    parity list     [--only X,..] [--flavor F] [-j N] [--json PATH]   configs and their verdicts
    parity show     FAMILY/NAME [--flavor F] [--engine E]              print one engine's IR
    parity diff     FAMILY/NAME [--flavor F]                           unified diff of the two engines' IR
    parity review   [--list | --accept GROUP... | --reject GROUP...]   accept/reject the changes a RED check left
    parity verify   [--only X,..] [--flavor F] [-j N] [--json PATH] [--report] [--engine E]
                                                                      LLVM validity + ISA report (docs/verify.md)
    parity numerics [--only X,..] [--flavor F] [-j N] [--json PATH] [-v] [--coverage] [--ir FILE CONFIG]
                                                                    CPU emulator vs numpy (docs/sim.md)
    parity mutate   [--only X,..] [--seconds N] [--seed S] [-j N] [--json PATH]   IR mutants: the kill rate
    parity emit     [COMMAND | --catalog FILE] [--only L,..] [--engine E] [--out DIR] [--json PATH]
    parity layers   [FILE..] [--only L,..] [--flavor F[,F..]] [-j N] [--json PATH]   every catalog layer, end to end
    parity aot      [--flavor F] [--only X,..] [--emit DIR] [--check] [--json PATH]   the AOT job grid
    parity aot      --build DIR [--flavor F] [--jobs N] [--shard I/N] [--json PATH]; aot merge / validate
    parity diff     --base REF [FAMILY[/NAME]] [--only X,..] [--flavor F] [--stat] [--json PATH]
                                                                      the IR changes since a git ref
    parity merge-golden %O %A %B %P | --install                        git merge driver for golden/
    parity golden-textconv FILE | --install                            git diff driver: golden/ shown as IR
    parity golden-diff PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE   git external diff driver (grouped)
    parity fuzz     [--only F,..] [--seconds N] [--seed S] [--jobs N] [--out DIR]   differential fuzzer
    parity perf     [--only X,..] [--flavor F] [-j N] [--json PATH] [--base REF] [--check-goals]
                                                                      static performance report (docs/perf.md)
    parity new-family NAME --like FAMILY                               skeleton of a new family (docs/contributing.md)
    parity completion bash|zsh|fish                                    shell completion script (argcomplete)

X is a family or FAMILY/NAME config (FAMILY/LABEL job for aot), L a layer
name. Exit status everywhere (docs/cli.md; each command's --help says what its 0
and 1 mean, parity/cli/help.py): 0 GREEN, 1 RED (the check found problems;
``diff`` found a difference, ``show`` a rejection; ``write`` refused by a
failing verdict or oracle), 2 usage or input error (bad arguments, unknown
names, unreadable golden shard, ``write`` under CI): one ``error:`` line on
stderr, nothing run or written. ``--color=auto|always|never`` and ``NO_COLOR``
decide colour (parity/cli/color.py). Nothing here reads the environment for
flavor or arch; ``CI`` only gates ``write``.
"""

from __future__ import annotations

import argparse
import os
import sys

import importlib

from parity.cli import color

from parity import _early_sigint
from parity.llvm import compile_cache
from parity.cli.common import Parser, add_version, die, json_on_stdout, report_paths_error
from parity.cli.help import add_color, document
from parity.base.outputs import (interrupted, keep_going_on_broken_pipe, reopen_closed_std_streams,
                                 run_quietly_on_broken_pipe)
from parity.app.preamble import GATE_COMMANDS, preamble
from parity.base.engine_import import EngineImportError, engine_failure


# -- parser ------------------------------------------------------------------

#: The command modules, in ``parity --help`` order, each with the subcommands its
#: ``add_command(sub)`` adds to the ``parity`` subparsers. A command's module is
#: imported only when that command runs (or for ``parity --help`` and a name
#: that is no command): ``parity check`` starts without numpy, the emulator,
#: the verifier and the other commands (tests/test_cli_lazy_commands.py).
COMMAND_MODULES = (
    ("parity.app.gate_commands", ("check", "write", "list", "show", "diff")),
    ("parity.golden.review", ("review",)),               # issue 23: review the pending golden changes a RED check left
    ("parity.verify.verify", ("verify",)),        # issue 6: the validity oracle
    ("parity.sim.numerics_cli", ("numerics",)),   # issue 7: the numerics oracle (parity/sim/numerics.py)
    ("parity.catalog.emit", ("emit",)),                   # issue 8: a layer's kernels + launch plan
    ("parity.catalog.layers", ("layers",)),               # issue 8: every catalog layer, end to end
    ("parity.aot.cli", ("aot",)),                 # issue 8: the AOT job grid, --build, merge, validate
    ("parity.fuzz.cli", ("fuzz",)),               # issue 14: differential fuzzer
    ("parity.mutate.cli", ("mutate",)),           # issue 22: IR mutants through the oracles, the kill rate
    ("parity.perf.cli", ("perf",)),               # issue 16: static performance report
    ("parity.golden.merge_driver", ("merge-golden",)),   # issue 12: git merge driver
    ("parity.golden.textconv", ("golden-textconv",)),  # issue 23: git diff driver (a golden change shown as IR)
    ("parity.golden.ext_diff", ("golden-diff",)),   # issue 38: git external diff driver (the grouped form)
    ("parity.app.new_family", ("new-family",)),       # issue 21: a registered skeleton of a new family in both engines
    ("parity.app.completion", ("completion",)),       # issue 38: bash/zsh/fish completion (argcomplete)
)


#: The reference harness's spellings (``--write`` re-blesses, ``--check`` checks): ``parity --write
#: [options]`` is ``parity write [options]`` exactly (docs/cli.md, "The reference's spellings").
FLAG_COMMANDS = {"--write": "write", "--check": "check"}


def reference_spelling(argv: list[str]) -> list[str]:
    """``argv`` with the reference's ``--write`` / ``--check`` turned into the subcommand, moved
    to the front, when no subcommand is named; else ``argv`` unchanged. ``--write --check`` (both)
    is left to argparse, which names the conflict."""
    flags = [a for a in argv if a in FLAG_COMMANDS]
    if len(set(flags)) != 1 or command_of(argv) is not None or "--" in argv:
        return argv
    rest = [a for a in argv if a not in FLAG_COMMANDS]
    return [FLAG_COMMANDS[flags[0]], *rest]


def command_of(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is one), or None (none: ``--help``,
    ``--version``, a misspelt name)."""
    names = {c for _, cs in COMMAND_MODULES for c in cs}
    return next((a for a in argv if a in names), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``parity`` parser: every subcommand, or with ``command`` only the module that adds it
    (the same parser for that command; its module is imported, the others are not)."""
    p = Parser(prog="parity", description="The splitk-parity gate (docs/gate.md; every command: docs/cli.md).",
               epilog="exit status: 0 GREEN; 1 RED (each command's --help says what its 1 means; a refused "
                      "`write` is 1); 2 a usage or input error only. NO_COLOR and --color are honoured.")
    add_version(p)
    add_color(p)
    g = p.add_mutually_exclusive_group()  # rewritten by main() before parsing; here for --help and completion
    # dest apart from every command's own options (`aot --check`): a --write / --check left after
    # reference_spelling() stood beside a command and is refused (spelling_error)
    g.add_argument("--write", action="store_true", dest="spelling_write",
                   help="the reference harness's spelling of `parity write` "
                   "(takes write's options: parity --write --only ir_core)")
    g.add_argument("--check", action="store_true", dest="spelling_check",
                   help="the reference harness's spelling of `parity check`")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, commands in COMMAND_MODULES:
        if command is not None and command not in commands:
            for c in commands:  # not imported: named, so a usage error lists every command
                sub.add_parser(c, add_help=False)
            continue
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - SyntaxError too: a broken engine must not take --help down
            why = engine_failure(exc)
            if why is None:
                raise
            if command is not None:  # the command to run needs the engine it cannot import
                raise EngineImportError(why) from None
            for c in commands:  # `parity --help`: the command is listed, with why it cannot run now
                sub.add_parser(c, help="(unavailable: an engine does not import, see below)")
            if why not in p.epilog:
                p.epilog = f"unavailable now: {why}. " + p.epilog
            continue
        module.add_command(sub)
    # `parity run` is dispatched by main() to parity/runtime/cli.py (its own parser; parity.runtime
    # needs pyelftools + msgpack, so it is not imported here); listed for --help.
    sub.add_parser("run", add_help=False, help="run one conv layer on a gfx1250 and time it (docs/runtime.md)")
    document(sub)  # each subcommand's --help: description, exit status, --color (parity/cli/help.py)
    return p


# Commands whose work is files: a reader that closes stdout must not stop them half way.
FILE_WRITING_COMMANDS = ("write", "review", "aot", "emit", "merge-golden")


def spelling_error(args) -> str | None:
    """The error of a top-level ``--check`` / ``--write`` beside a command (``parity --check aot``:
    aot's own --check was read as unset, nothing checked), or None. The two are only the
    reference's spellings of ``parity check`` / ``parity write`` (:func:`reference_spelling`)."""
    flag = "--check" if getattr(args, "spelling_check", False) else \
        "--write" if getattr(args, "spelling_write", False) else None
    if flag is None:
        return None
    return (f"{flag} before a command is the reference's spelling of `parity {FLAG_COMMANDS[flag]}` and takes no "
            f"command (got '{args.command}'); drop it, or give the command's own option after the command")


def _never_unencodable() -> None:
    """A character the terminal's encoding lacks (or a lone surrogate that reached a print)
    is written as a backslash escape, never a UnicodeEncodeError traceback."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass


def _command_parser(parser, args):
    """The subcommand's parser of ``args`` (its errors read ``error: parity check: ...``), else ``parser``."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return (subs[0].choices.get(getattr(args, "command", None)) if subs else None) or parser


def _parse(parser, argv):
    """``parser.parse_args(argv)``, but an unrecognized argument is reported by the
    subcommand's parser (``error: parity emit: unrecognized arguments: -j (see `parity emit
    --help`)``): argparse reports it from the top-level parser, which pointed at `parity --help`."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        _command_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: list[str] | None = None) -> int:
    """``parity ARGV``: the exit status. In the CLI, a Ctrl-C after the command returned
    (the interpreter finalizing) is ignored (parity/_early_sigint.py)."""
    try:
        return _main(argv)
    finally:
        _early_sigint.quiet_exit()


def _main(argv: list[str] | None) -> int:
    reopen_closed_std_streams()  # `parity list >&-`: dropped output, not an AttributeError
    _never_unencodable()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        os.getcwd()  # worker processes start in it: a deleted one is refused here, not in a traceback
    except OSError as exc:
        print(f"error: parity: the working directory cannot be used ({exc.strerror}); "
              "cd to an existing directory", file=sys.stderr)
        return 2
    compile_cache.pin()  # a relative PARITY_COMPILE_CACHE means the directory the command starts in
    if os.environ.get("_ARGCOMPLETE"):  # a shell asking for completions (`parity completion SHELL`)
        from parity.app.completion import complete
        return complete(build_parser, command_of)
    if argv[:1] == ["run"]:  # `parity run ...`: the runtime's own MIOpenDriver-style parser (docs/runtime.md)
        # parity.runtime needs the [runtime] extra (pyelftools, msgpack; hip-python at launch):
        # loaded only for `parity run`, so the other commands start without it.
        try:
            from parity.runtime.cli import main as run_main  # pyelftools + msgpack ([runtime] extra) via parity.runtime
        except Exception as exc:  # noqa: BLE001 - SyntaxError too: an engine that does not import is one line
            why = engine_failure(exc)
            if why is None:
                raise
            return die(why)
        return run_quietly_on_broken_pipe(run_main, argv[1:])
    argv = reference_spelling(argv)
    try:
        parser = build_parser(command_of(argv))
        args = _parse(parser, argv)
        why = spelling_error(args)
        if why is not None:
            parser.error(why)
        why = report_paths_error(args)
        if why is not None:
            _command_parser(parser, args).error(why)
    except EngineImportError as exc:  # the command's module imports an engine that does not import
        return die(str(exc))
    except KeyboardInterrupt:  # Ctrl-C while the command's module imports, main() called in-process
        return interrupted()   # (`parity fuzz --gate`'s forked children; the CLI has parity/_early_sigint.py)
    args.parity_main = main  # `parity fuzz --gate` runs this entry point in forked children (parity/fuzz/gate_run.py)
    color.set_choice(args.color)
    if hasattr(args, "no_compile_cache"):  # a command that compiles through the cache (docs/verify.md)
        bad = compile_cache.settings_error()
        if bad is not None:
            return die(bad)

    def run(_):
        if args.command in FILE_WRITING_COMMANDS:
            keep_going_on_broken_pipe()  # `parity write | head -1` still writes its shards
        with json_on_stdout(args):  # --json -: the report alone on stdout, the text on stderr
            if args.command in GATE_COMMANDS:
                stop = preamble(args)
                if stop is not None:
                    return stop
            return args.func(args)
    return run_quietly_on_broken_pipe(run)  # `parity list | head -1` ends quietly


if __name__ == "__main__":
    raise SystemExit(main())

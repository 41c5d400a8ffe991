"""Every single-valued option of every ``parity`` command is refused when given twice
(hostile-input trial s49, finding 6: ``mutate --seed 1 --seed 2`` ran seed 2, ``write --mode
new --mode all`` wrote all, the first value dropped in silence). ``Parser`` makes ``Once``
the action of each option that takes one value (parity/cli/parser.py; docs/cli.md)."""
from __future__ import annotations

import argparse

import pytest

from parity.app.main import build_parser, main as parity_main
from parity.check_byte_identity import build_parser as cbi_parser
from parity.cli.parser import Once, Parser

#: Actions that may be given more than once on purpose: they add up or are flags.
REPEATABLE = (argparse._AppendAction, argparse._ExtendAction, argparse._HelpAction, argparse._CountAction)


def _parsers(parser, path=()):
    """(command path, parser) of ``parser`` and every subcommand below it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _value_options():
    out = []
    for root in (build_parser(), cbi_parser()):
        for path, parser in _parsers(root):
            for a in parser._actions:
                if a.option_strings and a.nargs != 0 and not isinstance(a, REPEATABLE):
                    out.append((" ".join(path) or root.prog, a))
    return out


def test_the_walk_sees_the_commands_and_their_options():
    opts = {(cmd, a.option_strings[0]) for cmd, a in _value_options()}
    for want in [("mutate", "--seed"), ("mutate", "--kinds"), ("mutate", "--match"), ("mutate", "--max-mutants"),
                 ("mutate", "--per-kind"), ("mutate", "--seconds"), ("mutate", "--goal"),
                 ("mutate", "--differential"), ("mutate", "--scheduler"), ("write", "--mode"),
                 ("write", "--lock-timeout"), ("numerics", "--ir"), ("numerics", "--scheduler"),
                 ("check", "--since"), ("check", "--timeout"), ("fuzz", "--seed"), ("aot merge", "--out"),
                 ("review", "--json"), ("emit", "--catalog"), ("check_byte_identity", "--timeout")]:
        assert want in opts, want
    assert len(opts) > 120


def test_every_single_valued_option_of_every_command_is_once():
    loose = [(cmd, a.option_strings[0], type(a).__name__) for cmd, a in _value_options() if not isinstance(a, Once)]
    assert loose == []


@pytest.mark.parametrize("cmd,action", _value_options(), ids=lambda v: v if isinstance(v, str) else v.dest)
def test_a_second_value_is_an_error_naming_both(cmd, action):
    ns = argparse.Namespace()
    flag = action.option_strings[0]
    action(None, ns, "first", flag)
    assert getattr(ns, action.dest) == "first"
    with pytest.raises(argparse.ArgumentError) as ei:
        action(None, ns, "second", flag)
    assert str(ei.value) == f"argument {'/'.join(action.option_strings)}: given twice (first and second); give it once"


def run(capsys, *argv):
    try:
        rc = parity_main(list(argv))
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("argv,shown", [
    (["mutate", "--seed", "1", "--seed", "2"], "--seed: given twice (1 and 2)"),
    (["mutate", "--kinds", "drop_sync", "--kinds", "swap_operands"], "--kinds: given twice (drop_sync and swap_operands)"),
    (["mutate", "--match", "icmp", "--match", "fadd"], "--match: given twice (icmp and fadd)"),
    (["mutate", "--max-mutants", "1", "--max-mutants", "2"], "--max-mutants: given twice (1 and 2)"),
    (["mutate", "--per-kind", "1", "--per-kind", "0"], "--per-kind: given twice (1 and 0)"),
    (["mutate", "--seconds", "5", "--seconds", "6"], "--seconds: given twice (5.0 and 6.0)"),
    (["mutate", "--goal", "90", "--goal", "80"], "--goal: given twice (90.0 and 80.0)"),
    (["mutate", "--differential", "3", "--differential", "4"], "--differential: given twice (3 and 4)"),
    (["mutate", "--scheduler", "local", "--scheduler", "tcp://h:1"], "--scheduler: given twice (local and tcp://h:1)"),
    (["write", "--mode", "new", "--mode", "all"], "--mode: given twice (new and all)"),
    (["numerics", "--ir", "a.ll", "ir_core/x", "--ir", "b.ll", "ir_core/y"], "--ir: given twice (a.ll ir_core/x and b.ll ir_core/y)"),
    (["check", "--annotations", "github", "--annotations", "github"], "--annotations: given twice (github and github)"),
])
def test_repeated_option_through_parity_main(capsys, argv, shown):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert err.splitlines() == [f"error: parity {argv[0]}: argument {shown}; give it once "
                                f"(see `parity {argv[0]} --help`)"]


def test_collecting_options_and_flags_still_repeat():
    p = build_parser("numerics")
    args = p.parse_args(["numerics", "--assume", "WMMA-AB-layout=a", "--assume", "CVT-F32-BF16=b",
                         "--coverage", "--coverage"])
    assert args.assume == ["WMMA-AB-layout=a", "CVT-F32-BF16=b"] and args.coverage is True


def test_a_plain_parser_and_its_groups_use_once():
    p = Parser(prog="x")
    p.add_argument("--a")
    p.add_mutually_exclusive_group().add_argument("--b")
    assert p.parse_args(["--a", "1", "--b", "2"]).a == "1"
    with pytest.raises(SystemExit):
        p.parse_args(["--b", "1", "--b", "2"])

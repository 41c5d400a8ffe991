"""`parity <command>` imports only the module of that command (parity/app/main.py
COMMAND_MODULES): `parity check` starts without numpy, the emulator and the verifier."""

import argparse
import subprocess
import sys
import textwrap

import pytest

from parity.app import main as cli


def _choices(parser) -> set:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices) - {"run"}


def _sub(parser):
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices


def test_the_table_names_exactly_the_commands_each_module_adds():
    """Built for one command, the parser imports that command's module only: its commands get
    their real parsers, every other command a stub without -h (named, so that a usage
    error lists every command: hostile-input trial 2)."""
    everything = set().union(*(set(c) for _, c in cli.COMMAND_MODULES))
    assert _choices(cli.build_parser()) == everything
    for module, commands in cli.COMMAND_MODULES:
        subs = _sub(cli.build_parser(commands[0]))
        assert set(subs) - {"run"} == everything, module
        real = {c for c, sp in subs.items() if c != "run" and any("-h" in a.option_strings for a in sp._actions)}
        assert real == set(commands), module


@pytest.mark.parametrize("argv, command", [
    (["check", "--only", "ir_core"], "check"),
    (["--color", "never", "verify"], "verify"),
    (["show", "ir_core/casts"], "show"),
    (["--help"], None),
    (["chek"], None),  # a misspelt command gets the full parser (its did-you-mean error)
])
def test_command_of(argv, command):
    assert cli.command_of(argv) == command


def test_a_misspelt_command_is_a_usage_error_naming_the_choices(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["chek"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'chek'" in err and "'check'" in err and "'numerics'" in err


_PROBE = textwrap.dedent("""
    import sys
    from parity.app.main import build_parser, command_of
    build_parser(command_of(["check"])).parse_args(["check"])
    import parity.gate.pool
    print(" ".join(m for m in ("numpy", "parity.sim", "parity.verify", "parity.proof", "parity.mutate",
                               "parity.catalog.emit", "parity.gate.worker") if m in sys.modules))
""")


def test_parity_check_starts_without_numpy_the_emulator_or_the_verifier():
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""

"""The CLI's exit statuses, --help texts, colour and name suggestions (issue 23
item 6): a refused write exits 1 (2 stays for usage and input errors); every
subcommand's --help has a one-line description and its exit status; NO_COLOR
and --color=auto|always|never are honoured; an unknown config or family name
suggests the nearest ones."""

import argparse
import os
import pty
import subprocess
import sys
from pathlib import Path

from pty_helpers import drain
import pytest

import gate_stubs
from parity.cli import color
from parity.check_byte_identity import main as cbi_main
from parity.sim.plans import PLANS
from parity.app.main import build_parser, main as parity_main
from parity.cli.help import EXIT_STATUS
from parity.base.suggest import nearest

ROOT = Path(__file__).resolve().parents[1]
BROKEN_FAM = '''
from parity.config import Config
FAMILY = "fam_a"
CONFIGS = [
    Config("plain", arch="gfx1250", spec={"kernel": "plain"}),
    Config("drifted", arch="gfx1250", spec={"kernel": "d", "b_text": 1}),
]
'''


def subcommands():
    p = build_parser()
    [sub] = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(sub.choices)


@pytest.mark.parametrize("command", subcommands())
def test_every_subcommand_help_has_a_description_and_its_exit_status(command, capsys):
    with pytest.raises(SystemExit) as e:
        parity_main([command, "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    paras = out.split("\n\n")
    assert paras[0].startswith(f"usage: parity {command}")
    desc = paras[1].strip()
    assert desc and not desc.startswith(("options:", "positional")), out  # the description, before the options
    flat = " ".join(out.split())
    assert f"exit status: {' '.join(EXIT_STATUS[command].split())}; 2 a usage or input error" in flat
    if command != "run":
        assert "--color WHEN" in out


def test_exit_status_table_names_exactly_the_subcommands():
    assert set(EXIT_STATUS) == set(subcommands())


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    yield from gate_stubs.importable_world(tmp_path_factory.mktemp("exitcodes"), "ex", {"fam_a": BROKEN_FAM})


def test_refused_write_exits_1_and_writes_nothing(stubs, tmp_path, capsys, monkeypatch):
    good, bad, cfg = stubs
    monkeypatch.delenv("CI", raising=False)
    rc = parity_main(["write", "--engines", f"{good},{bad}", "--configs", cfg, "--golden-dir", str(tmp_path),
                      "--timeout", "20"])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert "error: parity write refuses: " in err
    assert list(tmp_path.iterdir()) == []
    # usage and input errors stay 2
    monkeypatch.setenv("CI", "1")
    assert parity_main(["write", "--engines", f"{good},{good}", "--configs", cfg,
                        "--golden-dir", str(tmp_path)]) == 2
    monkeypatch.delenv("CI")
    assert parity_main(["write", "--only", "nosuch", "--configs", cfg, "--golden-dir", str(tmp_path)]) == 2
    with pytest.raises(SystemExit) as e:
        parity_main(["write", "--jobs", "0"])
    assert e.value.code == 2


@pytest.mark.parametrize("argv, needle", [
    (["show", "conv_fwd_split_k_reduce/bf16_v2_t46_d0"], "; did you mean bf16_v2_t64_d0, bf16_v2_t256_d0"),
    (["check", "--only", "conv_fwd_split_k_reduce/bf16_v2_t64_d9"], "; did you mean bf16_v2_t64_d8"),
    (["check", "--only", "conv_fwd_split_k_reducee"], "unknown family: conv_fwd_split_k_reducee; "
                                                       "did you mean conv_fwd_split_k_reduce?"),
    (["diff", "ir_cor/x"], "did you mean ir_core?"),
    # numerics and mutate: the nearest family with a plan, then every plan (mutate listed none)
    # (the plan list is the registry's: a contributor's new family is in it)
    (["numerics", "--only", "ir_cor"], "ir_cor: not a family, family token or arch; did you mean ir_core? (plans: "
                                       + ", ".join(PLANS) + ")"),
    (["mutate", "--only", "conv_implicit_gem"], "conv_implicit_gem: not a family, family token or arch; did you mean "
                                                "conv_implicit_gemm? (plans: " + ", ".join(PLANS) + ")"),
])
def test_unknown_names_suggest_the_nearest(argv, needle, capsys):
    assert parity_main(argv) == 2
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and needle in errors[0], err


def test_nearest_ranks_close_names_and_finds_none_for_junk():
    known = ["bf16_v2_t64_d0", "bf16_v2_t256_d0", "fp16_v8_t64_d4"]
    assert nearest("bf16_v2_t46_d0", known)[0] == "bf16_v2_t64_d0"
    assert nearest("zzzz", known) == []


class _Tty:
    def isatty(self):
        return True


@pytest.fixture
def choice():
    yield color
    color.set_choice("auto")


def test_color_choice_and_no_color(choice, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert color.enabled(_Tty()) and not color.enabled(open(os.devnull, "w"))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not color.enabled(_Tty())                       # NO_COLOR turns auto off
    color.set_choice("always")
    assert color.enabled(_Tty()) and color.enabled(open(os.devnull, "w"))  # an explicit choice wins
    color.set_choice("never")
    monkeypatch.delenv("NO_COLOR")
    assert not color.enabled(_Tty())
    monkeypatch.setenv("NO_COLOR", "")                     # empty: as if unset (no-color.org)
    color.set_choice("auto")
    assert color.enabled(_Tty())
    with pytest.raises(ValueError):
        color.set_choice("sometimes")


def test_color_option_on_the_command_line(choice, capsys):
    assert parity_main(["check", "--only", "ir_core", "--flavor", "llvm23", "--color", "always"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "RESULT: \x1b[32mGREEN\x1b[0m"
    assert parity_main(["--color=never", "check", "--only", "ir_core", "--flavor", "llvm23"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "RESULT: GREEN"
    assert cbi_main(["--only", "ir_core", "--flavor", "llvm23", "--color", "always"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "RESULT: \x1b[32mGREEN\x1b[0m"
    with pytest.raises(SystemExit) as e:
        parity_main(["check", "--color", "sometimes"])
    assert e.value.code == 2


def _stdout_on_a_terminal(argv, env):
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=slave, stderr=subprocess.DEVNULL, cwd=ROOT, env=env)
    os.close(slave)
    received = drain(master)
    p.wait()
    os.close(master)
    return p.returncode, received.decode(errors="replace")


def test_no_color_on_a_real_terminal():
    argv = [sys.executable, "-m", "parity", "check", "--only", "ir_core", "--flavor", "llvm23"]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm"
    rc, out = _stdout_on_a_terminal(argv, env)
    assert rc == 0 and "RESULT: \x1b[32mGREEN\x1b[0m" in out
    rc, out = _stdout_on_a_terminal(argv, dict(env, NO_COLOR="1"))
    assert rc == 0 and "RESULT: GREEN" in out and "\x1b[" not in out


def test_every_option_and_argument_has_help_text():
    # parity show/diff's FAMILY/NAME, emit/layers --arch, layers --cus/-v and aot
    # merge/validate's MANIFEST had none in --help
    import argparse

    from parity.app.main import build_parser

    bare = []

    def walk(parser, name):
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for n, sp in a.choices.items():
                    walk(sp, f"{name} {n}")
            elif not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS and not (a.help or "").strip():
                bare.append(f"{name} {'/'.join(a.option_strings) or a.dest}")
    walk(build_parser(None), "parity")
    assert not bare, bare


def test_diff_exits_0_when_both_engines_reject_alike_as_its_help_says(capsys):
    # the help said "1 a difference (or a rejection ...)": a same-reason rejection is 0
    assert "both engines reject with the same reason" in EXIT_STATUS["diff"].split("; 1 ")[0]
    rc = parity_main(["diff", "conv_abi/fwd_cluster", "--flavor", "llvm20"])
    out = capsys.readouterr().out
    assert rc == 0 and out.splitlines()[-2:] == ["python: rejected: variant cluster requires flavor llvm23",
                                                 "cpp: rejected: variant cluster requires flavor llvm23"]


@pytest.mark.parametrize("argv, line", [
    (["show", "/lds_barrier"], "error: expected FAMILY/NAME, got '/lds_barrier' (empty FAMILY)"),
    (["show", "ir_core/"], "error: expected FAMILY/NAME, got 'ir_core/' (empty NAME)"),
    (["diff", "/x"], "error: expected FAMILY/NAME, got '/x' (empty FAMILY)"),
    (["show", "ir_core"], "error: expected FAMILY/NAME, got 'ir_core'"),
])
def test_show_and_diff_name_an_empty_half_of_family_name(argv, line, capsys):
    assert parity_main(argv) == 2
    assert [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error:")] == [line]


@pytest.mark.parametrize("argv, line", [
    (["emit", "-j", "2"], "error: parity emit: unrecognized arguments: -j (see `parity emit --help`)"),
    (["check", "--bogus"], "error: parity check: unrecognized arguments: --bogus (see `parity check --help`)"),
    (["list", "extra"], "error: parity list: unrecognized arguments: extra (see `parity list --help`)"),
])
def test_an_unrecognized_argument_points_at_the_subcommands_help(argv, line, capsys):
    # argparse reported it from the top-level parser: "error: parity: ... (see `parity --help`)"
    with pytest.raises(SystemExit) as e:
        parity_main(argv)
    assert e.value.code == 2 and capsys.readouterr().err.splitlines() == [line]


def test_emit_keeps_the_subcommand_name_beside_its_layer_command():
    # emit's MIOpenDriver positional had dest "command" and overwrote the subcommand name
    # (so main() saw args.command == the layer line, never "emit", for FILE_WRITING_COMMANDS)
    from parity.app.main import build_parser, command_of
    argv = ["emit", "MIOpenDriver convbfp16 -n 1 -c 8 -H 4 -W 4 -k 8 -y 1 -x 1"]
    args = build_parser(command_of(argv)).parse_args(argv)
    assert args.command == "emit" and args.layer_command == argv[1]

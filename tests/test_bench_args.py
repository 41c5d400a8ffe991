"""The benchmarks' command lines: --base and --only are checked when parsed, before any
base is built (a ref that names no commit and an unknown family are one argparse error,
exit 2); every bench/ script parses with cli_parser.Parser, each option has help text,
and a bad value (or an unknown flag) is one `error:` line, exit 2, no traceback."""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from parity.cli.common import family_list, git_commit, integer_list
from parity.cli.parser import Parser

ROOT = Path(__file__).resolve().parents[1]


def _head() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_git_commit_resolves_a_ref_to_its_full_sha():
    assert git_commit("--base")("HEAD") == _head()


@pytest.mark.parametrize("ref", ["nosuchref", "HEAD~999999", ""])
def test_git_commit_refuses_a_ref_that_names_no_commit(ref):
    with pytest.raises(argparse.ArgumentTypeError, match="names no commit"):
        git_commit("--base")(ref)


def test_family_list_keeps_known_names_and_refuses_others():
    assert family_list("--only")("ir_core,conv_abi") == "ir_core,conv_abi"
    with pytest.raises(argparse.ArgumentTypeError, match="unknown family: nosuch"):
        family_list("--only")("nosuch")
    with pytest.raises(argparse.ArgumentTypeError, match="an empty family name"):
        family_list("--only")("ir_core,")


def test_integer_list_parses_comma_separated_integers_and_names_the_flag():
    assert integer_list("--sizes")("1000,10,1") == [1000, 10, 1]
    assert integer_list("--n", lo=None)("-3,0") == [-3, 0]
    for bad in ("", "1,,2", "1,0", "1.5", "\u0661"):  # empty item, below 1, not an integer, non-ASCII digit
        with pytest.raises(argparse.ArgumentTypeError, match="--sizes wants integers of at least 1"):
            integer_list("--sizes")(bad)


BENCH = Path(__file__).resolve().parents[1] / "bench"
#: sim_rate.py is bench/sim.py's worker (positional arguments from its parent), not a command
SCRIPTS = sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in ("sim_rate", "scratch_edit"))  # a worker, a helper module


class _Parsed(Exception):
    pass


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_script_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _parser_of(name: str, monkeypatch) -> argparse.ArgumentParser:
    """The parser bench/<name>.py's main() builds (stopped as it parses: nothing runs)."""
    seen = []

    def stop(self, args=None, namespace=None):
        seen.append(self)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop)
    with pytest.raises(_Parsed):
        _module(name).main([])
    return seen[0]


def test_every_bench_script_is_covered():
    assert {"gate", "verify", "sim", "mutate", "mutate_plan", "fuzz", "golden_loop", "lds_epilogue"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_bench_options_have_help_and_one_line_errors(name, monkeypatch):
    # bench/gate.py --repeats and --engines (and a dozen more) had no help text; plain
    # argparse printed a usage block and the error on two lines
    p = _parser_of(name, monkeypatch)
    assert isinstance(p, Parser), f"bench/{name}.py parses with {type(p).__name__}, not cli_parser.Parser"
    bare = [a.option_strings or a.dest for a in p._actions
            if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS and not (a.help or "").strip()]
    assert not bare, f"bench/{name}.py: options without help text: {bare}"


@pytest.mark.parametrize("name,argv,needle", [
    ("gate", ["--base", "nosuchref"], "argument --base: 'nosuchref' names no commit"),
    ("gate", ["--only", "nosuch"], "argument --only: unknown family: nosuch"),
    ("sim", ["--only", "nosuch"], "argument --only: unknown family: nosuch"),
    ("verify", ["--base", "nosuchref"], "argument --base: 'nosuchref' names no commit"),
    ("c_emit", ["--base", "nosuchref"], "argument --base: 'nosuchref' names no commit"),
    ("gate", ["--engines", "python,rust"], "unknown engine 'rust'"),
    ("gate", ["--engines", "cpp,cpp"], "a name given twice"),
    ("aot", ["--flavors", "llvm20,llvm19"], "unknown flavor 'llvm19'"),
    ("aot", ["--sample-shards", "0"], "--sample-shards must be at least 1"),
    ("aot_910", ["--flavor", "llvm22,llvm23"], "one name only"),
    ("aot_910", ["--jobs", "x"], "--jobs wants an integer"),
    ("fuzz", ["--seconds", "nan"], "--seconds must be a finite number"),
    ("fuzz", ["--seed", "1.5"], "--seed wants an integer"),
    ("mutate", ["--per-kind", "-1"], "--per-kind must be at least 0"),
    ("mutate", ["-j", "0"], "--jobs must be at least 1"),
    ("proof", ["--repeats", "0"], "--repeats must be at least 1"),
    ("proof", ["--only", "nope"], "unknown family"),
    ("verify", ["--repeats", "-2"], "--repeats must be at least 1"),
    ("mutate_plan", ["--cap-gb", "0"], "--cap-gb must be at least 1"),
    ("layers_scale", ["--sizes", "1000,x"], "--sizes wants integers of at least 1 separated by commas, got '1000,x'"),
    ("pending_scale", ["--sizes", "10,0"], "--sizes wants integers of at least 1 separated by commas, got '10,0'"),
    ("golden_loop", ["--bogus"], "unrecognized arguments: --bogus"),
    ("lds_epilogue", ["--bogus"], "unrecognized arguments: --bogus"),
    ("edit_loop", ["--repeats", "0"], "--repeats must be at least 1"),
    ("edit_loop", ["--figures", "cpp,nope"], "unknown figure 'nope'"),
])
def test_bench_bad_values_are_one_error_line_exit_2(name, argv, needle, capsys, monkeypatch):
    # checked when parsed: nothing measured, no base built (SystemExit from the parser)
    monkeypatch.setattr(sys, "argv", [str(BENCH / f"{name}.py")])  # argparse's prog
    with pytest.raises(SystemExit) as ei:
        _module(name).main(argv)
    cap = capsys.readouterr()
    err = cap.err.splitlines()
    assert ei.value.code == 2 and cap.out == "", cap
    assert len(err) == 1 and err[0].startswith(f"error: {name}.py: ") and needle in err[0], err


@pytest.mark.parametrize("argv, rc, first", [
    ([], 2, "error: bench/sim_rate.py: usage: python bench/sim_rate.py TREE WORKLOADS.pkl REPEATS | --numerics"),
    (["--help"], 0, "usage: python bench/sim_rate.py TREE WORKLOADS.pkl REPEATS | --numerics"),
    (["--numerics", "t"], 2, "error: bench/sim_rate.py: usage: "),
    (["nosuch_tree", "w.pkl", "3"], 2, "error: bench/sim_rate.py: TREE 'nosuch_tree' is not a directory (a checkout)"),
    ([".", "nosuch.pkl", "3"], 2, "error: bench/sim_rate.py: WORKLOADS 'nosuch.pkl' is not a file"),
])
def test_sim_rate_worker_by_hand_is_usage_not_a_traceback(argv, rc, first, capsys):
    # bench/sim.py's worker run by hand: `--help` or no arguments was an IndexError traceback
    assert _module("sim_rate").main(argv) == rc
    cap = capsys.readouterr()
    text = cap.out if rc == 0 else cap.err
    assert text.startswith(first) and "Traceback" not in cap.err
    if rc == 2:
        assert len(cap.err.splitlines()) == 1 and cap.out == ""

"""Second hostile-input trial (s49 findings2: 2, 4, 7-13, 15): each input was a silent
no-op, an overwritten report, a report in a golden directory, a RED empty shard or a
confusing line; now one ``error:`` line naming the option and the rule, exit 2 (or, for an
empty shard, GREEN) (docs/cli.md, docs/ci.md). Finding 3 (.ci/shard.py): tests/test_ci_shard.py."""
from __future__ import annotations

import argparse
import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.app import ci_output as CI
from parity.app.main import build_parser
from parity.cli import common
from cli_run import run

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "golden"




def one_error(rc, out, err, line):
    assert rc == 2 and "Traceback" not in err, err
    got = [ln for ln in err.splitlines() if not ln.startswith("note:")]
    assert got == [line], err


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("CI", raising=False)
    before = sorted(p.name for p in GOLDEN.iterdir())
    yield
    assert sorted(p.name for p in GOLDEN.iterdir()) == before  # nothing written into golden/


# -- 2: the workers are capped by the machine too ---------------------------------------------

def test_jobs_are_capped_at_four_per_cpu(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert common.machine_jobs() == 8
    assert common.positive_int("1024") == 8 and common.positive_int("3") == 3
    assert build_parser("check").parse_args(["check", "-j", "1024"]).jobs == 8
    assert common.jobs_of(argparse.Namespace(jobs=None)) == 2
    with pytest.raises(argparse.ArgumentTypeError, match="--jobs must be at most 1024, got 1025"):
        common.positive_int("1025")  # the range is still the option's rule, whatever the machine


# -- 4: a report in the golden directory of the same command, even an empty one -----------------

def test_report_in_a_new_golden_dir_is_refused(in_repo, tmp_path, capsys):
    gdir = tmp_path / "empty2"
    gdir.mkdir()
    rc, out, err = run(capsys, "write", "--only", "ir_core", "--flavor", "llvm23", "--golden-dir", gdir,
                       "--json", gdir / "conv_abi.json")
    one_error(rc, out, err, f"error: parity write: --json {gdir}/conv_abi.json: is in the golden directory of "
                            f"this command ({gdir.resolve()}); reports go elsewhere (see `parity write --help`)")
    assert list(gdir.iterdir()) == []


# -- 7: an empty shard is GREEN ------------------------------------------------------------------

def test_an_empty_shard_is_green(in_repo, capsys):
    rc, out, err = run(capsys, "check", "--only", "ir_core", "--flavor", "llvm23", "--shard", "1000/1000", "-j", "1")
    assert rc == 0, out + err
    lines = out.splitlines()
    assert any(ln.startswith("shard 1000/1000: holds no config (") for ln in lines), out
    assert lines[-1] == "RESULT: GREEN"


# -- 8: top-level --check / --write only as the spellings -----------------------------------------

@pytest.mark.parametrize("argv,flag,cmd", [
    (["--check", "aot", "--only", "conv_fwd_split_k_reduce", "--flavor", "llvm23"], "--check", "aot"),
    (["--write", "list", "--only", "ir_core"], "--write", "list"),
    (["--write", "numerics", "--only", "ir_core"], "--write", "numerics"),
])
def test_top_level_check_or_write_beside_a_command_is_refused(in_repo, capsys, argv, flag, cmd):
    rc, out, err = run(capsys, *argv)
    spelt = "check" if flag == "--check" else "write"
    one_error(rc, out, err, f"error: parity: {flag} before a command is the reference's spelling of `parity "
                            f"{spelt}` and takes no command (got '{cmd}'); drop it, or give the command's own "
                            "option after the command (see `parity --help`)")


# -- 9: an option given before and after the command -------------------------------------------

def test_option_given_on_both_levels_is_given_twice(in_repo, capsys):
    rc, out, err = run(capsys, "--color", "never", "check", "--color", "always", "--only", "ir_core")
    one_error(rc, out, err, "error: parity: argument --color: given twice (never and always); give it once "
                            "(see `parity --help`)")


# -- 10: two reports to one file -----------------------------------------------------------------

@pytest.mark.parametrize("first,second", [("--json", "--junit"), ("--json", "--annotations"),
                                          ("--junit", "--record-costs")])
def test_two_reports_to_one_file_are_refused(in_repo, tmp_path, capsys, first, second):
    x = tmp_path / "x"
    val = {"--annotations": f"gitlab={x}"}
    rc, out, err = run(capsys, "check", "--only", "ir_core", first, val.get(first, x), second, val.get(second, x))
    one_error(rc, out, err, f"error: parity check: {second} {x}: the same file as {first}; give each report its "
                            "own file (see `parity check --help`)")
    assert not x.exists()


def test_two_reports_to_dev_null_are_fine():
    ns = argparse.Namespace(json="/dev/null", junit="/dev/null", golden_dir=None)
    assert common.report_paths_error(ns) is None


# -- 11: --json - and a reader that goes away, or a closed stdout -----------------------------------

def test_broken_pipe_on_json_stdout_is_a_broken_pipe(monkeypatch):
    def boom(path, doc):
        raise OSError(errno.EPIPE, "Broken pipe")
    monkeypatch.setattr(common, "write_json", boom)
    with pytest.raises(BrokenPipeError):  # run_quietly_on_broken_pipe: exit 141, as `parity list | head`
        common.finish(argparse.Namespace(json="-"), "check", True, {})
    assert common.finish(argparse.Namespace(json="/nonexistent/x.json"), "check", True, {}) == 2


def test_json_stdout_with_stdout_closed_is_refused():
    r = subprocess.run(["bash", "-c", f"{sys.executable} -m parity check --only ir_core --json - >&-"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2
    assert r.stderr.splitlines() == ["error: parity check: --json -: stdout is closed (the report would be lost); "
                                     "give a file name (see `parity check --help`)"]


# -- 12: annotation paths are the real paths ---------------------------------------------------------

def test_annotation_golden_path_outside_the_checkout_is_absolute(in_repo, tmp_path):
    g5 = tmp_path / "g5"
    g5.mkdir()
    assert CI.golden_location(g5, "ir_core", "llvm23", "x") == (f"{g5.resolve()}/ir_core.json", 1)
    assert CI.golden_location(GOLDEN, "ir_core", "llvm23", "nothing-here")[0] == "golden/ir_core.json"


# -- 13: the wording ---------------------------------------------------------------------------------

def test_sentinel_values_are_not_shown(capsys):
    with pytest.raises(SystemExit):
        build_parser("perf").parse_args(["perf", "--layers", "--layers"])
    err = capsys.readouterr().err
    assert err == ("error: parity perf: argument --layers: given twice; give it once "
                   "(see `parity perf --help`)\n")


@pytest.mark.parametrize("cmd", [("check", "--only", "ir_core"), ("write", "--only", "ir_core"), ("review", "--list")])
def test_empty_golden_dir_is_refused(in_repo, capsys, cmd):
    # review read '' as the working directory (trial 3): every gate command refuses it alike
    rc, out, err = run(capsys, *cmd, "--golden-dir", "")
    one_error(rc, out, err, f"error: parity {cmd[0]}: argument --golden-dir: empty (give a directory) "
                            f"(see `parity {cmd[0]} --help`)")


def test_missing_golden_dir_has_the_argument_prefix(in_repo, tmp_path, capsys):
    rc, out, err = run(capsys, "check", "--only", "ir_core", "--golden-dir", tmp_path / "none")
    one_error(rc, out, err, f"error: parity check: argument --golden-dir: {tmp_path}/none: not a directory")


def test_an_option_before_the_command_lists_every_command(in_repo, capsys):
    rc, out, err = run(capsys, "-j", "1024", "check")
    assert rc == 2 and len(err.splitlines()) == 1, err
    for name in ("'check'", "'numerics'", "'mutate'", "'fuzz'", "'perf'", "'completion'", "'run'"):
        assert name in err, err


# -- 15: the default GitLab report is ignored by git ------------------------------------------------

def test_gitlab_default_report_is_gitignored():
    r = subprocess.run(["git", "check-ignore", "-q", CI.GITLAB_DEFAULT], cwd=REPO)
    assert r.returncode == 0


# -- trial 3: output directories (emit --out, aot --emit / --build) -------------------------------

def test_a_report_inside_the_output_directory_is_refused(capsys, tmp_path):
    """`aot --emit D --json D/jobs.tsv` replaced the emitted job list with the report, exit 0."""
    out = tmp_path / "em"
    out.mkdir()
    rc, o, err = run(capsys, "aot", "--emit", out, "--json", out / "jobs.tsv", "--only", "conv_fwd_split_k_reduce",
                     "--flavor", "llvm23")
    assert rc == 2 and o == "" and list(out.iterdir()) == [], err
    assert err == (f"error: parity aot: --json {out / 'jobs.tsv'}: is inside the output directory of --emit ({out}); "
                   "the report would replace or join the outputs: write it elsewhere (see `parity aot --help`)\n")


@pytest.mark.parametrize("argv, flag", [(["aot", "--emit", "golden/em", "--only", "conv_fwd_split_k_reduce"], "--emit"),
                                        (["emit", "--out", "golden/em2"], "--out")])
def test_an_output_directory_in_golden_is_refused(capsys, monkeypatch, argv, flag):
    """`parity aot --emit golden` and `parity emit --out golden/x` wrote into golden/, exit 0."""
    from parity.base.project import find_project_root
    root = find_project_root()
    monkeypatch.chdir(root)
    before = sorted(p.name for p in (root / "golden").iterdir())
    rc, o, err = run(capsys, *argv)
    assert rc == 2 and o == "", err
    assert err.startswith(f"error: parity {argv[0]}: {flag} {argv[2]}: is in a golden directory (") and \
        err.endswith("outputs go elsewhere (see `parity " + argv[0] + " --help`)\n"), err
    assert sorted(p.name for p in (root / "golden").iterdir()) == before

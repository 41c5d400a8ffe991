"""Hostile-input trial s49 (findings 1, 3, 4, 7, 11, 12): each input was a traceback, a
file written into golden/, a silent no-op or a hang; now one ``error:`` line naming the
option and the rule, exit 2, nothing written (docs/cli.md, docs/ci.md, docs/scale.md)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.aot.shard import MAX_SHARDS, ShardError, parse_shard
from parity.base.project import ProjectError, resolve_golden_dir
from parity.cli.common import MAX_SECONDS, check_writable, configured_families
from cli_run import run

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "golden"




def one_error(rc, out, err, line):
    """``line``: the whole error line, or a tuple of (start, end)."""
    assert rc == 2 and "Traceback" not in err, err
    got = [ln for ln in err.splitlines() if not ln.startswith("note:")]
    assert len(got) == 1, err
    if isinstance(line, tuple):
        assert got[0].startswith(line[0]) and got[0].endswith(line[1]), got[0]
    else:
        assert got[0] == line


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("CI", raising=False)
    before = sorted(p.name for p in GOLDEN.iterdir())
    yield
    assert sorted(p.name for p in GOLDEN.iterdir()) == before  # nothing written into golden/


# -- finding 1: report options and caches never write into golden/ ----------------------------

@pytest.mark.parametrize("argv,flag,path", [
    (["--annotations", "gitlab=golden/q.json"], "--annotations", "golden/q.json"),
    (["--junit", "golden/x.xml"], "--junit", "golden/x.xml"),
    (["--json", "golden/r.json"], "--json", "golden/r.json"),
    (["--record-costs", "golden/c.json"], "--record-costs", "golden/c.json"),
])
def test_report_options_refuse_a_golden_directory(in_repo, capsys, argv, flag, path):
    rc, out, err = run(capsys, "check", "--only", "ir_core", *argv)
    shown = f"{path}: " if path else ""
    one_error(rc, out, err, f"error: parity check: argument {flag}: {shown}is in a golden directory ({GOLDEN}); "
                            "reports go elsewhere (see `parity check --help`)")


def test_gitlab_default_file_in_golden_cwd_is_refused(in_repo, monkeypatch, capsys):
    monkeypatch.chdir(GOLDEN)
    rc, out, err = run(capsys, "check", "--only", "ir_core", "--annotations", "gitlab")
    one_error(rc, out, err, f"error: parity check: argument --annotations: gl-code-quality-report.json: is in a "
                            f"golden directory ({GOLDEN}); reports go elsewhere (see `parity check --help`)")


def test_a_report_below_a_golden_directory_is_refused(tmp_path):
    (tmp_path / "ir_core.json").write_bytes((GOLDEN / "ir_core.json").read_bytes())
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match=rf"--junit .*x\.xml: is in a golden directory \({tmp_path}\)"):
        check_writable(tmp_path / "sub" / "x.xml", "--junit")


@pytest.mark.parametrize("value,why", [
    ("golden", f"{GOLDEN} is in a golden directory ({GOLDEN}); the cache goes elsewhere (e.g. build/numerics-cache)"),
    ("golden/sub", f"{GOLDEN}/sub is in a golden directory ({GOLDEN}); the cache goes elsewhere "
                   "(e.g. build/numerics-cache)"),
    ("pyproject.toml", f"{REPO}/pyproject.toml exists and is not a directory (a directory to create or reuse, or "
                       "off to disable the cache)"),
])
def test_numerics_cache_in_golden_or_on_a_file(in_repo, monkeypatch, capsys, value, why):
    monkeypatch.setenv("PARITY_NUMERICS_CACHE", value)
    rc, out, err = run(capsys, "numerics", "--only", "ir_core")
    one_error(rc, out, err, f"error: PARITY_NUMERICS_CACHE: {why}")


def test_compile_cache_in_golden_is_a_settings_error(in_repo, monkeypatch):
    from parity.llvm import compile_cache
    monkeypatch.setenv("PARITY_COMPILE_CACHE", str(GOLDEN / "cc"))
    assert compile_cache.settings_error() == (f"PARITY_COMPILE_CACHE: {GOLDEN}/cc is in a golden directory "
                                              f"({GOLDEN}); the cache goes elsewhere")


# -- finding 3: seconds have an upper bound --------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["check", "--timeout"], ["list", "--timeout"], ["write", "--lock-timeout"], ["verify", "--compile-timeout"],
    ["verify", "--timeout"], ["fuzz", "--timeout"], ["fuzz", "--seconds"], ["mutate", "--seconds"],
])
@pytest.mark.parametrize("value", ["1e9", "1e12", "1e200", "1000001"])
def test_seconds_past_the_bound(capsys, argv, value):
    rc, out, err = run(capsys, *argv, value)
    flag = argv[1]
    one_error(rc, out, err, f"error: parity {argv[0]}: argument {flag}: {flag} must be at most {MAX_SECONDS} "
                            f"seconds (1e6), got '{value}' (see `parity {argv[0]} --help`)")


def test_the_bound_itself_is_taken():
    from parity.cli.common import finite_seconds
    assert finite_seconds("--timeout")("1e6") == 1e6 == MAX_SECONDS


# -- finding 4: --shard N is bounded ----------------------------------------------------------

def test_huge_shard_count_is_one_line(in_repo, capsys):
    rc, out, err = run(capsys, "check", "--shard", "1/99999999999")
    one_error(rc, out, err, "error: parity check: argument --shard: I/N needs N <= 1000, got '1/99999999999' "
                            "(see `parity check --help`)")


def test_shard_bound_is_shared_with_aot():
    assert parse_shard(f"{MAX_SHARDS}/{MAX_SHARDS}") == (1000, 1000)
    with pytest.raises(ShardError, match=r"--shard I/N needs N <= 1000, got '3/1001'"):
        parse_shard("3/1001")


# -- finding 7: --golden-dir holds golden shards or is empty ----------------------------------

def _fams():
    return configured_families(None)


@pytest.mark.parametrize("files", [
    {"r.json": '{\n  "tool": "splitk-parity"\n}\n'},
    {"foo.json": "{}\n", "notes.txt": "x"},
    {"notes.txt": "x"},
])
def test_golden_dir_without_a_shard_is_refused(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ProjectError) as ei:
        resolve_golden_dir(tmp_path, families=_fams())
    assert str(ei.value) == (f"--golden-dir {tmp_path}: holds no golden shard (a FAMILY.json that starts "
                             '{"family": "FAMILY", or is named for a configured family) and is not empty: not '
                             "a golden directory")


@pytest.mark.parametrize("name,text", [("ir_core.json", "garbage"), ("ir_core.json.new", "[]"),
                                       ("gone_family.json", '{"family": "gone_family",\n"format": 2}\n')])
def test_a_shard_or_a_corrupt_shard_of_a_family_makes_a_golden_dir(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    (tmp_path / "notes.txt").write_text("x")
    assert resolve_golden_dir(tmp_path, families=_fams()) == tmp_path.resolve()


def test_check_writes_nothing_into_a_report_directory(in_repo, tmp_path, capsys):
    (tmp_path / "r.json").write_text('{"tool": "splitk-parity"}\n')
    rc, out, err = run(capsys, "check", "--only", "ir_core", "--golden-dir", tmp_path)
    one_error(rc, out, err, ("error: parity check: argument --golden-dir: ", "not a golden directory"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


# -- finding 11: --json - is stdout for every command -----------------------------------------

def test_json_dash_is_stdout_alone(tmp_path):
    log = tmp_path / "out.txt"
    log.write_text("before\n")
    with open(log, "a") as fh:  # `>> out.txt`: appended, not truncated
        r = subprocess.run([sys.executable, "-m", "parity", "list", "--only", "ir_core/" + _one_config(),
                            "--json", "-"], cwd=REPO, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    text = log.read_text()
    assert text.startswith("before\n{")
    doc = json.loads(text[len("before\n"):])
    assert doc["command"] == "list" and doc["tool"] == "splitk-parity"
    assert "parity: golden" in r.stderr  # the text went to stderr
    assert not (REPO / "-").exists()


def _one_config():
    from parity.config import load_families
    return next(f for f in load_families(only=["ir_core"])).configs[0].name


@pytest.mark.parametrize("flag", ["--junit", "--record-costs"])
def test_dash_for_other_report_options_is_refused(capsys, flag):
    rc, out, err = run(capsys, "check", "--only", "ir_core", flag, "-")
    one_error(rc, out, err, (f"error: parity check: argument {flag}: ", "stdout carries the command's text (only "
                             "--json - goes there); give a file name (see `parity check --help`)"))


# -- finding 12 (check side) ------------------------------------------------------------------

def test_empty_junit(capsys):
    rc, out, err = run(capsys, "check", "--only", "ir_core", "--junit", "")
    one_error(rc, out, err, "error: parity check: argument --junit: '': empty path (give a file name) "
                            "(see `parity check --help`)")


def test_since_without_changed(in_repo, capsys):
    rc, out, err = run(capsys, "check", "--since", "HEAD")
    one_error(rc, out, err, "error: parity check: --since REV goes with --changed (the revision the edit is "
                            "measured from); add --changed, or drop --since")


def test_changed_since_empty(capsys):
    rc, out, err = run(capsys, "check", "--changed", "--since", "")
    one_error(rc, out, err, "error: parity check: argument --since: empty (give a git revision) "
                            "(see `parity check --help`)")


@pytest.mark.parametrize("flag,arg", [("--json", "{}"), ("--junit", "{}"), ("--annotations", "gitlab={}")])
def test_fifo_without_reader_is_refused_up_front(tmp_path, capsys, flag, arg):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    rc, out, err = run(capsys, "check", "--only", "ir_core", flag, arg.format(fifo))
    one_error(rc, out, err, (f"error: parity check: argument {flag}: ", "is a named pipe (FIFO) with no reader "
                             "(the write would block); start the reader first (see `parity check --help`)"))


def test_no_iterations_without_coverage(in_repo, capsys):
    rc, out, err = run(capsys, "numerics", "--no-iterations")
    one_error(rc, out, err, "error: --no-iterations goes with --coverage (it turns off the per-iteration "
                            "coverage judgement)")


@pytest.mark.parametrize("argv,line", [
    (["numerics", "--assume", ""], "argument --assume: empty (give NAME=VALUE)"),
    (["numerics", "--assume", "WMMA-AB-layout=x,,"], "argument --assume: an empty item in 'WMMA-AB-layout=x,,' "
                                                     "(give NAME=VALUE)"),
    (["mutate", "--scheduler", ""], "argument --scheduler: empty (give tcp://HOST:PORT, or local for this "
                                    "machine's pool)"),
    (["mutate", "--per-kind", "9" * 23], f"argument --per-kind: --per-kind must be from 0 to {'9' * 18}, got "
                                         f"'{'9' * 23}' (23 digits)"),
    (["mutate", "--seed", "-" + "9" * 20], f"argument --seed: --seed must be from -{'9' * 18} to {'9' * 18}, got "
                                           f"'-{'9' * 20}' (20 digits)"),
    (["mutate", "--max-mutants", "9" * 19], f"argument --max-mutants: --max-mutants must be from 1 to {'9' * 18}, "
                                            f"got '{'9' * 19}' (19 digits)"),
])
def test_empty_and_out_of_range_values(capsys, argv, line):
    rc, out, err = run(capsys, *argv)
    one_error(rc, out, err, f"error: parity {argv[0]}: {line} (see `parity {argv[0]} --help`)")


def test_scheduler_local_means_the_local_pool(monkeypatch):
    from parity.gate import executor as X
    monkeypatch.setenv("PARITY_SCHEDULER", "tcp://nowhere:1")
    assert X.scheduler_address("local") is None and X.scheduler_address(None) == "tcp://nowhere:1"


def test_a_fifo_whose_reader_left_is_an_oserror_not_a_hang(tmp_path):
    import errno
    from parity.base.outputs import write_report
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError) as ei:  # before: open() blocked until a reader came, for ever
        write_report(fifo, "{}\n")
    assert ei.value.errno == errno.ENXIO


def test_a_checked_fifo_is_held_open_for_its_reader(tmp_path):
    from parity.base.outputs import write_report
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        check_writable(fifo)   # opens it for writing and keeps it: the reader sees no end of file
        with pytest.raises(BlockingIOError):  # a writer holds it (with none, read() is b"": end of file)
            os.read(rd, 10)
        write_report(fifo, '{"a": 1}\n')
        assert os.read(rd, 100) == b'{"a": 1}\n'
    finally:
        os.close(rd)


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_golden_dir_is_named_as_empty_not_read_as_the_working_directory(value):
    with pytest.raises(ProjectError) as ei:
        resolve_golden_dir(value, families=_fams())
    assert str(ei.value).endswith(": an empty path; give the golden directory's path")


# -- stop 53's helper: an --only/--flavor pair that selects nothing was a silent GREEN ----------

@pytest.mark.parametrize("cmd", ["check", "verify"])
def test_only_and_flavor_that_select_nothing_are_one_line(in_repo, capsys, cmd):
    rc, out, err = run(capsys, cmd, "--only", "conv_implicit_gemm/reject_skc4_at_llvm22", "--flavor", "llvm20")
    one_error(rc, out, err, "error: --only conv_implicit_gemm/reject_skc4_at_llvm22 with --flavor llvm20: no "
                            "selected config applies at llvm20 (they apply at llvm22); nothing would be checked")

"""One command-line vocabulary (docs/cli.md): every command of ``parity`` and
``parity run`` and ``parity emit`` validate --only, --flavor, --jobs and --json
alike, puts errors on stderr as one ``error:`` line with exit 2, writes the
versioned JSON envelope, has plain help, and draws progress only on a terminal."""
from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

from pty_helpers import drain
import pytest

from parity.app.main import main as parity_main
from parity.cli.common import SCHEMA, SCHEMA_VERSION, parse_only

ROOT = Path(__file__).resolve().parents[1]
LAYER = "resnet50_b1_conv5_1_3x3"

# command -> the arguments that make it small
COMMANDS = {
    "check": ["check"], "write": ["write"], "list": ["list"], "verify": ["verify"], "numerics": ["numerics"],
    "layers": ["layers"], "aot": ["aot"], "emit": ["emit"],
}
WITH_JOBS = ["check", "write", "list", "verify", "numerics", "layers"]
WITH_FLAVOR = ["check", "write", "list", "verify", "numerics", "layers", "aot", "emit"]


def call(fn, argv, capsys):
    try:
        rc = fn([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def assert_usage_error(rc, out, err, needle):
    assert rc == 2, (out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert needle in lines[0], err
    assert "Traceback" not in out + err


@pytest.mark.parametrize("cmd", WITH_JOBS)
def test_jobs_zero_is_refused_everywhere(cmd, capsys):
    rc, out, err = call(parity_main, [cmd, "-j", "0"], capsys)
    assert_usage_error(rc, out, err, "--jobs must be at least 1, got 0")
    rc, out, err = call(parity_main, [cmd, "--jobs", "two"], capsys)
    assert_usage_error(rc, out, err, "--jobs wants an integer, got 'two'")


@pytest.mark.parametrize("cmd", list(COMMANDS))
def test_json_path_is_checked_before_running(cmd, capsys):
    rc, out, err = call(parity_main, [cmd, "--json", "/nonexistent-dir/r.json"], capsys)
    assert_usage_error(rc, out, err, "directory /nonexistent-dir does not exist")


@pytest.mark.parametrize("cmd", WITH_FLAVOR)
def test_unknown_flavor_is_an_input_error(cmd, capsys):
    rc, out, err = call(parity_main, [cmd, "--flavor", "llvm99"], capsys)
    assert rc == 2 and err.startswith("error: ") and len(err.splitlines()) == 1, err
    # nothing ran: stdout is empty (the provenance line comes only after the input is accepted)
    assert out == "", out
    assert "llvm99" in err


@pytest.mark.parametrize("cmd,needle", [
    ("check", "unknown family: nosuch"), ("write", "unknown family: nosuch"), ("list", "unknown family: nosuch"),
    ("verify", "unknown family: nosuch"), ("numerics", "nosuch: not a family, family token or arch"),
    ("layers", "no layer named 'nosuch'"), ("aot", "no AOT jobs of family nosuch"),
    ("emit", "no layer named 'nosuch'"),
])
def test_unknown_only_is_an_input_error(cmd, needle, capsys):
    rc, out, err = call(parity_main, [cmd, "--only", "nosuch"], capsys)
    assert_usage_error(rc, out, err, needle)
    assert out == "", out


@pytest.mark.parametrize("cmd", ["check", "list", "verify", "numerics"])
def test_only_family_slash_name(cmd, capsys):
    fam = "conv_fwd_split_k_reduce"
    rc, out, err = call(parity_main, [cmd, "--only", f"{fam}/nope"], capsys)
    assert_usage_error(rc, out, err, f"--only: no config {fam}/nope (known in {fam}: ")
    assert out == "", out


def test_parse_only():
    assert parse_only(None) == (None, {})
    assert parse_only("a,b/x,b/y,c/z,c") == (["a", "b", "c"], {"b": {"x", "y"}})
    for bad in (",", "a/", "/x", "a/b/c"):
        with pytest.raises(ValueError):
            parse_only(bad)


def test_version(capsys):
    rc, out, err = call(parity_main, ["--version"], capsys)
    assert rc == 0 and out.startswith("parity 0.1.0; cpp_engine library 0.1.0 (") and err == ""
    rc, out, err = call(parity_main, ["run", "--version"], capsys)
    assert rc == 0 and out.startswith("parity 0.1.0; ")


@pytest.mark.parametrize("argv", [[c, "--help"] for c in COMMANDS] + [["show", "--help"], ["diff", "--help"]])
def test_help_is_plain_text(argv, capsys):
    rc, out, err = call(parity_main, argv, capsys)
    assert rc == 0 and out.startswith("usage: parity ")
    for markup in ("``", ":mod:", ":func:", ":data:"):
        assert markup not in out


@pytest.mark.parametrize("argv", [["run", "--help"], ["emit", "--help"]])
def test_run_and_emit_help_is_plain_text(argv, capsys):
    rc, out, err = call(parity_main, argv, capsys)
    assert rc == 0 and out.startswith("usage: parity " + argv[0])
    for markup in ("``", ":mod:", ":func:"):
        assert markup not in out


def test_unknown_argument_is_one_error_line(capsys):
    rc, out, err = call(parity_main, ["numerics", "--bogus"], capsys)
    assert_usage_error(rc, out, err, "unrecognized arguments: --bogus")
    assert err.startswith("error: parity")


def test_numerics_refuses_other_flavors(capsys):
    rc, out, err = call(parity_main, ["numerics", "--flavor", "llvm22"], capsys)
    assert_usage_error(rc, out, err, "numerics runs the llvm23 text")


# -- the JSON envelope -------------------------------------------------------------------

def _envelope(path: Path, command: str, result: str = "GREEN") -> dict:
    doc = json.loads(path.read_text())
    assert doc["schema"] == SCHEMA and doc["schema_version"] == SCHEMA_VERSION == 1
    assert doc["tool"] == "splitk-parity" and doc["command"] == command and doc["version"] == "0.1.0"
    assert doc["result"] == result and doc["exit_code"] == (0 if result == "GREEN" else 1)
    return doc


@pytest.fixture(autouse=True)
def _not_under_ci(monkeypatch):
    """`parity write` refuses to run under CI before it reads its options;
    these tests are about the option vocabulary, so CI is unset for them."""
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_json_check_list_verify_numerics(tmp_path, capsys, in_root):
    one = "conv_fwd_split_k_reduce/bf16_v8_t256_d4"
    j = tmp_path / "r.json"
    rc, out, err = call(parity_main, ["check", "--only", one, "-j", "1", "--json", j], capsys)
    assert rc == 0, out + err
    doc = _envelope(j, "check")
    assert [(r["family"], r["config"]) for r in doc["results"]] == [tuple(one.split("/"))] * 3
    assert doc["golden"] == [] and doc["golden_dir"] == str(ROOT / "golden")

    rc, out, err = call(parity_main, ["list", "--only", one, "--flavor", "llvm24", "--json", j], capsys)
    assert rc == 0
    doc = _envelope(j, "list")
    assert doc["configs"] == [{"family": "conv_fwd_split_k_reduce", "config": "bf16_v8_t256_d4", "arch": "gfx1250",
                               "verdicts": {"llvm23": "IDENTICAL"}}]

    rc, out, err = call(parity_main, ["verify", "--only", one, "--flavor", "llvm23", "-j", "1", "--json", j], capsys)
    assert rc == 0, out + err
    doc = _envelope(j, "verify")
    assert doc["summary"]["passed"] == 1

    rc, out, err = call(parity_main, ["numerics", "--only", one, "-j", "1", "--json", j], capsys)
    assert rc == 0, out + err
    doc = _envelope(j, "numerics")
    assert [(c["family"], c["config"], c["ok"]) for c in doc["configs"]] == [(*one.split("/"), True)]
    assert "RESULT: GREEN" in out and err == ""


def test_json_layers_aot_emit(tmp_path, capsys, in_root):
    j = tmp_path / "r.json"
    rc, out, err = call(parity_main, ["layers", "--only", LAYER, "--no-verify", "--json", j], capsys)
    assert rc == 0, out + err
    doc = _envelope(j, "layers")
    assert [(r["layer"], r["engines"], r["numerics"]) for r in doc["layers"]] == [(LAYER, "IDENTICAL", "ok")]

    rc, out, err = call(parity_main, ["aot", "--only", "conv_fwd_split_k_reduce", "--check", "--json", j], capsys)
    assert rc == 0, out + err
    doc = _envelope(j, "aot")
    # llvm23 grid (docs/policy.md): 3948 jobs (1596 plain since issue 37); reduce kernels: vectors 8/4/2 x degrees
    # 0,2,4,8,16,32 x 2 dtypes x 7 epilogues (identity and the fused bias, scale, relu, clamp, bias_relu, bias_clamp)
    assert doc["count_jobs"] == 3948 and len(doc["jobs"]) == 252 and all(x["identical"] for x in doc["jobs"])

    rc, out, err = call(parity_main, ["emit", "--only", LAYER, "--out", tmp_path / "o", "--json", j], capsys)
    assert rc == 0, out + err
    doc = _envelope(j, "emit")
    assert [x["layer"] for x in doc["layers"]] == [LAYER]
    assert Path(doc["layers"][0]["plan"]).is_file()


def test_write_only_touches_the_selected_entries(tmp_path, capsys, in_root):
    g = tmp_path / "golden"
    shutil.copytree(ROOT / "golden", g)
    shard = g / "ir_core.json"
    doc = json.loads(shard.read_text())  # format 2: one "FLAVOR/CONFIG" key per entry
    want = json.loads(shard.read_text())
    del doc["llvm23/casts"]
    del doc["llvm20/buffer_copy"]
    shard.write_text(json.dumps(doc))
    j = tmp_path / "w.json"
    env = os.environ.pop("CI", None)
    try:
        rc, out, err = call(parity_main, ["write", "--only", "ir_core/casts", "--flavor", "llvm23",
                                          "--golden-dir", g, "--json", j], capsys)
    finally:
        if env is not None:
            os.environ["CI"] = env
    assert rc == 0, out + err
    got = json.loads(shard.read_text())
    assert got["llvm23/casts"] == want["llvm23/casts"]
    assert "llvm20/buffer_copy" not in got          # not selected: left as it was
    want.pop("llvm20/buffer_copy")
    assert got == want
    rep = _envelope(j, "write")
    assert rep["shards"]["ir_core"] == {"state": "updated", "added": 1, "removed": 0, "changed": 0}


def test_default_emit_directory_is_ignored_by_git():
    from parity.catalog.emit import DEFAULT_OUT
    assert Path(DEFAULT_OUT).parts[0] == "out"
    r = subprocess.run(["git", "check-ignore", "-q", f"{DEFAULT_OUT}/x.plan.json"], cwd=ROOT)
    assert r.returncode == 0


# -- progress ----------------------------------------------------------------------------

def _run_with_tty_stderr(argv):
    """(exit status, stdout, what the terminal on stderr received)."""
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS="100", TERM="xterm")
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, cwd=ROOT, env=env)
    os.close(slave)
    received = drain(master)
    out = p.stdout.read()
    p.wait()
    os.close(master)
    return p.returncode, out.decode(), received.decode(errors="replace")


PROGRESS_CMDS = [
    ["numerics", "--only", "conv_fwd_split_k_reduce/bf16_v8_t256_d4,conv_fwd_split_k_reduce/bf16_v1_t64_d0",
     "-j", "1"],
    ["aot", "--only", "conv_fwd_split_k_reduce", "--check"],
    ["layers", "--only", LAYER, "--no-verify"],
]


@pytest.mark.parametrize("argv", PROGRESS_CMDS, ids=lambda a: a[0])
def test_progress_on_a_terminal_not_when_piped(argv):
    exe = [sys.executable, "-m", "parity"]
    rc, out, tty = _run_with_tty_stderr(exe + argv)
    assert rc == 0, out + tty
    assert argv[0] in tty and "\x1b[" in tty           # the rich bar, labelled with the command
    assert "\x1b[" not in out
    r = subprocess.run(exe + argv, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stderr == "" and "\x1b[" not in r.stdout


def test_json_to_a_fifo_or_through_a_symlink_keeps_the_path(tmp_path, capsys):
    # the report was written beside the path and renamed over it: a FIFO (and, run as root,
    # /dev/stdout or /dev/null) became a regular file, a symlink was replaced by a file
    from parity.cli.common import check_writable, write_json
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # a reader, so the writer's open does not block
    try:
        check_writable(fifo)
        write_json(fifo, {"a": 1})
        assert fifo.is_fifo()
        assert json.loads(os.read(rd, 65536).decode()) == {"a": 1}
    finally:
        os.close(rd)
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_json(link, {"b": 2})
    assert link.is_symlink() and json.loads(target.read_text()) == {"b": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json", "report.fifo"]

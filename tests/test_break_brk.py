"""Hostile inputs found by the brk pass (after 73f71ab): each was a traceback, a file it must
never touch, or a run with no end; now one ``error:`` line naming the option and the rule, exit 2,
nothing written (docs/cli.md, docs/gate.md, docs/sim.md, docs/contributing.md)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from parity.app import new_family as NF
from parity.app.main import main as parity_main
from cli_run import run

REPO = Path(__file__).resolve().parents[1]
CLAMP = "conv_implicit_gemm/fused_clamp_wavelet1_default_64x64_bf16"
REDUCE = "conv_fwd_split_k_reduce/bf16_v1_t64_d0"




def one_error(rc, out, err, starts):
    assert rc == 2 and out == "", out
    assert len(err.splitlines()) == 1, err
    assert err.startswith(starts), err


# -- review --list --json PATH ----------------------------------------------------------

@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("CI", raising=False)


def test_review_json_never_replaces_a_golden_shard(in_repo, capsys):
    # before: with an entry pending, `--json golden/conv_abi.json` replaced the shard with the review's JSON
    shard = REPO / "golden" / "conv_abi.json"
    before = shard.read_bytes()
    rc, out, err = run(capsys, "review", "--list", "--json", "golden/conv_abi.json")
    one_error(rc, out, err, "error: parity review: argument --json: golden/conv_abi.json: is in a golden directory (")
    assert shard.read_bytes() == before


@pytest.mark.parametrize("path, says", [
    ("/", "/: is a directory"),   # the path named first (trial 2: every refusal names it)
    ("/nonexistent-brk/x.json", "/nonexistent-brk/x.json: directory /nonexistent-brk does not exist"),
    ("", "'': empty path (give a file name)"),
])
def test_review_json_path_is_checked_before_the_work(in_repo, capsys, path, says):
    # before: a traceback (IsADirectoryError, FileNotFoundError) once the groups were built
    rc, out, err = run(capsys, "review", "--list", "--json", path)
    one_error(rc, out, err, f"error: parity review: argument --json: {says} (see `parity review --help`)")


def test_review_json_path_with_nothing_pending_is_written(in_repo, capsys, tmp_path):
    # before: `--json -` printed the empty document, `--json PATH` wrote nothing
    gdir = tmp_path / "golden"
    gdir.mkdir()
    for f in (REPO / "golden").glob("*.json"):
        shutil.copy(f, gdir / f.name)
    path = tmp_path / "review.json"
    for _ in range(2):  # a second run replaces its own report
        rc, out, err = run(capsys, "review", "--list", "--json", path, "--golden-dir", gdir)
        assert rc == 0, err
        assert out.splitlines()[-1] == "review: nothing pending (a RED `parity check` leaves the entries to review)"
        assert json.loads(path.read_text()) == {"base": "HEAD", "commit": None, "entries": 0, "groups": [],
                                                "tool": "splitk-parity"}


def test_json_empty_path_is_named_as_such(in_repo, capsys):
    # before: "argument --json: is a directory" (Path("") is ".")
    rc, out, err = run(capsys, "check", "--json", "", "--only", "conv_abi")
    one_error(rc, out, err, "error: parity check: argument --json: '': empty path (give a file name)")


# -- mutate --match / --differential ----------------------------------------------------

@pytest.mark.parametrize("extra, says", [
    (["--match", "a{99999999999}"],   # before: OverflowError traceback
     "error: parity mutate: argument --match: not a regular expression (the repetition number is "
     "too large): 'a{99999999999}'"),
    (["--match", "(" * 1500 + ")" * 1500],  # before: RecursionError traceback
     "error: parity mutate: argument --match: not a regular expression (maximum recursion depth"),
    (["--match", ""],   # before: matched every site (234 mutants judged, RED)
     "error: parity mutate: argument --match: empty (it would match every site; omit --match instead)"),
    (["--match", "^"],   # before: matched every site, as the empty pattern did
     "error: parity mutate: argument --match: '^' matches the empty string, so every site (omit --match instead)"),
    (["--match", "x*"],
     "error: parity mutate: argument --match: 'x*' matches the empty string, so every site (omit --match instead)"),
    (["--kinds", "cmp_boundary,cmp_boundary"],   # before: planned twice, --per-kind 2 drew 4 sites of it
     "error: --kinds: cmp_boundary given twice (each kind once)"),
    (["--match", "no such line", "--differential", "100001"],  # before: accepted (1e11 ran on without end)
     "error: parity mutate: argument --differential: --differential must be at most 100000, got 100001"),
])
def test_mutate_bad_match_or_differential_is_one_error_line(capsys, extra, says):
    # --max-mutants 1: a regression judges one mutant, not the plan
    kinds = [] if "--kinds" in extra else ["--kinds", "cmp_boundary"]  # a second --kinds is refused itself
    rc, out, err = run(capsys, "mutate", "--only", CLAMP, *kinds, "--max-mutants", "1", *extra)
    one_error(rc, out, err, says)


# -- new-family -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["c_api", "conv_spec_c"])
def test_new_family_refuses_the_name_of_an_api_header(name):
    # before: `c_api` was scaffolded (src/api/c_api.cpp beside the shared src/api/c_api.h), exit 1 after writing
    with pytest.raises(NF.ScaffoldError) as e:
        NF.plan(REPO, name, "conv_abi")
    assert str(e.value) == f"family '{name}' exists: cpp_engine/src/api/{name}.h is there"


# -- numerics --ir of another config's kernel -------------------------------------------

def test_numerics_ir_of_another_configs_kernel_is_an_input_error(capsys, tmp_path):
    # before: exit 1 and 22 KernargError lines, as if the config's kernel had failed
    ir = tmp_path / "k.ll"
    rc = parity_main(["show", "conv_fwd_split_k_reduce/bf16_v2_t64_d0"])
    ir.write_text(capsys.readouterr().out)
    assert rc == 0
    rc, out, err = run(capsys, "numerics", "--ir", ir, REDUCE)
    one_error(rc, out, err, f"error: --ir: {ir}: defines @conv_fwd_split_k_reduce_bf16_v2_t64_d0, not {REDUCE}'s "
                            "kernel @conv_fwd_split_k_reduce_bf16_v1_t64_d0 (FILE must hold that config's kernel "
                            f"module, e.g. `parity show {REDUCE} > FILE`)")
    # renamed, the v2 kernel is judged on the v1 plan (and passes it: the plan's problems fit any vector)
    ir.write_text(ir.read_text().replace("_bf16_v2_t64_d0(", "_bf16_v1_t64_d0("))
    rc, out, err = run(capsys, "numerics", "--ir", ir, REDUCE)
    assert rc == 0 and err == "" and out.splitlines()[-1] == "RESULT: GREEN"
    assert [line for line in out.splitlines() if line.startswith("PASS ")][0].startswith(
        f"PASS {REDUCE} with the IR of {ir}: 22 cases, 22 launches x 2 orders")


def test_new_family_refuses_a_name_too_long_for_its_files():
    # before: "[Errno 36] File name too long: '.../python_engine/kernels/aaa...a.py'" (300 characters)
    with pytest.raises(NF.ScaffoldError) as e:
        NF.plan(REPO, "a" * 300, "conv_abi")
    assert str(e.value) == "family name is 300 characters long, at most 64 (it names files, a C prefix and kernels)"
    assert f"python_engine/families/{'a' * 64}.py" in NF.plan(REPO, "a" * 64, "conv_abi").new  # planned, not written


def test_review_with_a_missing_golden_dir_names_it(in_repo, capsys, tmp_path):
    # before: "parity review needs a splitk-parity git checkout at or above ..." inside one
    rc, out, err = run(capsys, "review", "--list", "--golden-dir", tmp_path / "nope")
    one_error(rc, out, err, f"error: --golden-dir {tmp_path / 'nope'}: not a directory")


def test_a_bad_parity_scheduler_is_named_as_the_variable(capsys, monkeypatch):
    # before: "error: --scheduler garbage: ..." though no --scheduler was given
    monkeypatch.setenv("PARITY_SCHEDULER", "garbage")
    rc, out, err = run(capsys, "numerics", "--only", REDUCE)
    one_error(rc, out, err, "error: PARITY_SCHEDULER=garbage (from the environment; --scheduler overrides it): "
                            "not a Dask scheduler address (missing port number in address 'garbage')")
    rc, out, err = run(capsys, "numerics", "--only", REDUCE, "--scheduler", "bogus")  # the flag wins, named as such
    one_error(rc, out, err, "error: --scheduler bogus: not a Dask scheduler address (missing port number")

"""Hostile inputs to ``parity mutate`` and ``parity numerics`` (the s49 trial, items 2, 8, 9, 10
and 12's ``--match`` guard): each was a hang, a fork storm or a RED run of nothing; now one
``error:`` line naming the option and the rule, exit 2 (docs/cli.md, docs/sim.md)."""
from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import threading
import time
from types import SimpleNamespace

import pytest

from parity.mutate import differential as D
from parity.mutate import match as M
from parity.mutate import run as R
from parity.sim import numerics as N
from parity.sim.numerics_cli import plan_only
from cli_run import run

REDUCE = "conv_fwd_split_k_reduce/bf16_v1_t64_d1"   # 39 instruction lines: plans in about a second




def one_error(rc, out, err, starts):
    assert rc == 2 and out == "", out
    assert len(err.splitlines()) == 1, err
    assert err.startswith(starts), err
    assert "Traceback" not in err


# -- -j: at most 1024, and no more workers than work items (item 2) ------------------------

@pytest.mark.parametrize("cmd", ["mutate", "numerics", "check", "fuzz"])
@pytest.mark.parametrize("n", ["99999999", "1025"])
def test_absurd_jobs_is_one_error_line(capsys, cmd, n):
    # fuzz: its batches are -j times a round of specs (parity/fuzz/run.py), so it had the same storm
    rc, out, err = run(capsys, cmd, "--only", REDUCE if cmd != "fuzz" else "ir_core", "-j", n)
    one_error(rc, out, err, f"error: parity {cmd}: argument --jobs/-j: --jobs must be at most 1024, got {n}")


class _FakePool:
    """multiprocessing's fork context, recording the pool sizes asked for; work runs nowhere."""

    def __init__(self, sizes: list, result):
        self.sizes, self.result = sizes, result

    def get_context(self, method):
        assert method == "fork"
        return self

    def Pool(self, n, initializer=None):
        self.sizes.append(n)
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def imap(self, fn, items, chunksize=1):
        return [self.result(it) for it in items]

    imap_unordered = imap


def test_pools_start_no_more_workers_than_work_items(monkeypatch):
    sizes: list = []
    monkeypatch.setattr(multiprocessing, "get_context", _FakePool(sizes, lambda it: it).get_context)
    # mutants: 3 of them, -j 1024 -> 3 workers (the verdicts here are the jobs themselves)
    assert R.run(["a", "b", "c"], n_jobs=1024) == ["a", "b", "c"]
    # numerics: 2 configs -> 2 workers
    items = N.accepted_configs(["ir_core"])[:2]
    pick = {(f, c) for f, c, _, _ in items}
    out = N.run_all(["ir_core"], jobs=1024, select=pick)
    assert out == items   # the fake's outcome of a config is the config, in catalog order
    # the differential: 3 problems -> 3 parts -> 3 workers (not 1024 parts drawing every problem)
    jobs = [SimpleNamespace(family="conv_implicit_gemm", config="c")]
    monkeypatch.setattr(multiprocessing, "get_context",
                        _FakePool(sizes, lambda w: [[1, 0, None]]).get_context)
    assert D.differential_many(jobs, 3, n_jobs=1024)[0][:3] == (3, 0, "")
    assert sizes == [3, 2, 3]


# -- --match: a time limit, the every-line guard (items 8, 12) ------------------------------

def test_backtracking_match_is_stopped_at_the_limit(capsys, monkeypatch):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("SIGALRM bounds the search in the main thread only")
    monkeypatch.setattr(M, "MATCH_SECONDS", 0.3)
    rc, out, err = run(capsys, "mutate", "--only", REDUCE, "--match", "(.*)*!", "-j", "1")
    one_error(rc, out, err, "error: --match: /(.*)*!/ took more than the limit of 0.3s to search the ")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)


def test_empty_string_probe_runs_under_the_limit(capsys, monkeypatch):
    # findings2 item 1: the parse-time probe rx.search("") ran outside the limit (3^20 ways: a hang)
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("SIGALRM bounds the search in the main thread only")
    monkeypatch.setattr(M, "MATCH_SECONDS", 0.3)
    pattern = "(?:$|^|\\Z)" * 20 + "(?!)"
    t0 = time.monotonic()
    rc, out, err = run(capsys, "mutate", "--only", REDUCE, "--match", pattern, "-j", "1")
    assert time.monotonic() - t0 < 5
    one_error(rc, out, err, "error: parity mutate: argument --match: '(?:$|^|\\\\Z)(?:$|^|")
    assert "took more than the limit of 0.3s to search the empty string" in err
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
    # a pattern that matches the empty string quickly is still refused as before
    rc, out, err = run(capsys, "mutate", "--only", REDUCE, "--match", "a*", "-j", "1")
    one_error(rc, out, err, "error: parity mutate: argument --match: 'a*' matches the empty string, so every site")


def test_ctrl_c_still_ends_a_backtracking_match():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("SIGALRM bounds the search in the main thread only")
    fam, name, spec, arch = next(c for c in N.accepted_configs(["conv_fwd_split_k_reduce"])
                                 if c[1] == REDUCE.split("/")[1])
    sites = R.plan([(fam, name, spec, arch)], 0, per_kind=1, kinds=("const_inc",))
    # Ctrl-C from outside (a terminal's, here another process's): the search holds the GIL,
    # so a thread of this process could not send it
    # (an xdist worker ignores SIGINT: give this test Python's own handler, as a terminal's
    # `parity mutate` has it)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        kill = subprocess.Popen(["sh", "-c", f"sleep 0.5; kill -INT {os.getpid()}"])
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            M.matched(M.regex("--match")("(.*)*!"), sites, seconds=30.0)
    finally:
        signal.signal(signal.SIGINT, old)
    assert time.monotonic() - t0 < 10 and kill.wait(10) == 0
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize("pattern", [r"\b", ".", " ", r"\S", "[a-z]"])
def test_match_of_every_line_is_refused(capsys, pattern):
    rc, out, err = run(capsys, "mutate", "--only", REDUCE, "--match", pattern, "-j", "1")
    one_error(rc, out, err, f"error: --match: /{pattern.replace(chr(92), chr(92) * 2)}/ matches every honest "
                            f"instruction line of the 1 planned config(s), so every site (omit --match instead)")


def test_a_narrow_match_still_selects(capsys):
    rc, out, err = run(capsys, "mutate", "--only", REDUCE, "--kinds", "cmp_negate", "--match", "icmp",
                       "--max-mutants", "1", "-j", "1")
    assert rc == 0 and err == "", err
    assert out.startswith("mutate: 2 mutants of 1 config(s), seed 0, 2 site(s) per kind and config, "
                          "matching /icmp/, the first 1 judged\n")
    assert "1 of 2 mutants judged" in out and "RESULT: GREEN" in out


# -- a selection that plans nothing (item 9) ----------------------------------------------

def test_selection_without_a_site_is_an_input_error(capsys):
    rc, out, err = run(capsys, "mutate", "--only", REDUCE, "--kinds", "drop_sync", "-j", "1")
    one_error(rc, out, err, f"error: --only {REDUCE} with --kinds drop_sync: no mutant is planned: the 1 "
                            f"selected config(s) have no site of the kind(s) drop_sync")


def test_selection_without_an_accepted_config_is_an_input_error(capsys):
    rc, out, err = run(capsys, "mutate", "--only", "conv_fwd_split_k_reduce/reject_vector3", "-j", "1")
    one_error(rc, out, err, "error: --only conv_fwd_split_k_reduce/reject_vector3: no accepted llvm23 config "
                            "is selected, so no mutant is planned")
    # numerics alike (before: "0/0 configs pass" and RESULT: RED, exit 1)
    rc, out, err = run(capsys, "numerics", "--only", "conv_fwd_split_k_reduce/reject_vector3", "-j", "1")
    one_error(rc, out, err, "error: --only conv_fwd_split_k_reduce/reject_vector3: no accepted llvm23 config "
                            "is selected (each selected one is expected to be rejected at llvm23), so nothing would run")


@pytest.mark.parametrize("only", ["gfx942", "conv_fwd_split_k_reduce/reject_vector3,ir_core/casts_gfx1100"])
def test_numerics_family_without_a_selected_config_is_not_in_the_verdict(capsys, only):
    # findings2 item 6: before, "conv_*: 0/0 configs pass" and RESULT: RED, exit 1
    rc, out, err = run(capsys, "numerics", "--only", only, "-j", "1")
    assert rc == 0 and err == "", err
    lines = out.splitlines()
    assert "conv_fwd_split_k_reduce: no accepted llvm23 config selected (none run; not in the verdict)" in lines
    assert ("conv_implicit_gemm: no accepted llvm23 config selected (none run; not in the verdict)" in lines) \
        == (only == "gfx942")
    assert any(ln.startswith("ir_core: 1/1 configs pass, ") for ln in lines), out
    assert not any("0/0 configs pass" in ln for ln in lines), out
    assert lines[-1] == "RESULT: GREEN"


# -- --only tokens and arches keep the families with a plan (item 10) ----------------------

def test_only_token_or_arch_keeps_the_planned_families():
    assert plan_only("conv") == (["conv_fwd_split_k_reduce", "conv_implicit_gemm"], {})
    assert plan_only("split") == (["conv_fwd_split_k_reduce"], {})
    fams, names = plan_only("gfx1250")
    assert fams == ["conv_fwd_split_k_reduce", "conv_implicit_gemm", "ir_core"]
    assert set(names) == set(fams) and all(names.values())
    assert plan_only(None) == (None, {})


def test_only_split_plans_the_reduce_family(capsys):
    # every accepted reduce config, none with a barrier: item 9's error shows what was selected
    rc, out, err = run(capsys, "mutate", "--only", "split", "--kinds", "drop_sync", "-j", "1")
    n = sum(1 for c in N.accepted_configs(["conv_fwd_split_k_reduce"]))
    one_error(rc, out, err, f"error: --only split with --kinds drop_sync: no mutant is planned: the {n} selected")


@pytest.mark.parametrize("cmd", ["mutate", "numerics"])
def test_only_without_any_planned_family_is_one_error_line(capsys, cmd):
    rc, out, err = run(capsys, cmd, "--only", "policy", "-j", "1")
    one_error(rc, out, err, "error: --only policy: none of the families it selects (split_k_policy) has a "
                            "numerics plan (plans: conv_fwd_split_k_reduce, conv_implicit_gemm, ir_core)")
    rc, out, err = run(capsys, cmd, "--only", "ir_core,conv_abi", "-j", "1")   # named outright: refused
    one_error(rc, out, err, "error: --only: no numerics plan for conv_abi (plans: ")


def test_a_missing_tool_is_an_error_not_a_kill(capsys, monkeypatch):
    # an oracle that cannot import its tool (llvmlite not installed) has not noticed the
    # mutant: counting it killed would report 100 % with no oracle run
    def no_llvmlite(job):
        raise ModuleNotFoundError("No module named 'llvmlite'")
    monkeypatch.setattr(R, "ORACLES", [("llvm", no_llvmlite)] + [o for o in R.ORACLES if o[0] != "llvm"])
    site = next(iter(R.plan([c for c in N.accepted_configs(["ir_core"]) if c[1] == "constants_int"], 0, 1)))
    with pytest.raises(ModuleNotFoundError):
        R.judge(site)
    rc, out, err = run(capsys, "mutate", "--only", "ir_core/constants_int", "-j", "1", "--max-mutants", "3")
    assert rc == 2 and "killed" not in out
    assert err.strip().splitlines()[-1].startswith("error: an oracle cannot run: No module named 'llvmlite'")

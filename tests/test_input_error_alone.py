"""A usage / input error of a gate command is its one ``error:`` line on stderr, exit 2,
nothing else: the provenance line of ``show``, ``diff`` and ``review --json -`` (on stderr,
their stdout is the result) is held until the command prints (parity/base/outputs.py
``print_first_on_stderr``); before, it was printed ahead of the error line."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.base import outputs

REPO = Path(__file__).resolve().parents[1]
GOOD = "conv_abi/defaults"
NO_CONFIG = "error: no config 'nope' in family conv_abi (known: "
NO_FAMILY = ("error: unknown family: nofam (known: conv_abi, conv_fwd_split_k_reduce, conv_implicit_gemm, "
             "conv_launch, ir_core, perf_model, split_k_policy)")


def _parity(*args):
    # without CI: under CI `review` and `write` refuse before they read their arguments
    # (docs/gate.md), and CI sets it for the whole test run
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run([sys.executable, "-m", "parity", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.parametrize("args, first", [
    (["show", "conv_abi/nope"], NO_CONFIG),
    (["show", "nofam/x"], NO_FAMILY),
    (["diff", "conv_abi/nope"], NO_CONFIG),
    (["diff", "nofam/x"], NO_FAMILY),
    (["show", GOOD, "--flavor", "bogus"], "error: --flavor: unknown flavor 'bogus' (canonical: llvm20"),
    (["diff", GOOD, "--stat"], "error: parity diff FAMILY/NAME: --stat goes with --base REF"),
    (["review", "--json", "-"], "error: parity review: --json goes with --list"),
])
def test_input_error_is_one_line_alone(args, first):
    r = _parity(*args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr  # before: the provenance line came first
    assert lines[0].startswith(first)


def test_a_run_still_prints_the_provenance_line_first():
    r = _parity("show", GOOD)
    assert r.returncode == 0
    assert r.stderr.splitlines() == [r.stderr.splitlines()[0]]
    assert r.stderr.startswith(f"parity: golden {REPO / 'golden'} | python_engine 0.1.0 ")
    assert r.stdout.startswith("conv_abi plain\n0 x_ptr: ptr addrspace(1) ")
    r = _parity("diff", GOOD)
    assert r.returncode == 0 and r.stdout == ""
    err = r.stderr.splitlines()
    assert len(err) == 2 and err[0].startswith("parity: golden ") and " | cpp_engine 0.1.0 " in err[0]
    assert err[1].startswith(f"identical: {GOOD}@llvm23 (")


class _Sink:
    def __init__(self):
        self.text = ""

    def write(self, t):
        self.text += t
        return len(t)

    def flush(self):
        pass


def test_held_line_skips_error_lines_and_prints_once(monkeypatch):
    out, err = _Sink(), _Sink()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    outputs.print_first_on_stderr("HEAD", "error: ")
    print("error: bad", file=sys.stderr)  # print() writes the text, then "\n": neither releases it
    assert err.text == "error: bad\n"
    outputs.print_first_on_stderr("HEAD2", "error: ")  # a second in-process run replaces the proxies
    print("note: x", file=sys.stderr)
    print("result")
    print("more", file=sys.stderr)
    assert err.text == "error: bad\nHEAD2\nnote: x\nmore\n"
    assert out.text == "result\n"

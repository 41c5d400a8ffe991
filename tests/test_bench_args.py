"""The benchmarks' --base and --only are checked when parsed, before any base is built:
a ref that names no commit and an unknown family are one argparse error (exit 2)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parity.cli_common import family_list, git_commit

ROOT = Path(__file__).resolve().parents[1]


def _head() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_git_commit_resolves_a_ref_to_its_full_sha():
    assert git_commit("--base")("HEAD") == _head()


@pytest.mark.parametrize("ref", ["nosuchref", "HEAD~999999", ""])
def test_git_commit_refuses_a_ref_that_names_no_commit(ref):
    import argparse
    with pytest.raises(argparse.ArgumentTypeError, match="names no commit"):
        git_commit("--base")(ref)


def test_family_list_keeps_known_names_and_refuses_others():
    import argparse
    assert family_list("--only")("ir_core,conv_abi") == "ir_core,conv_abi"
    with pytest.raises(argparse.ArgumentTypeError, match="unknown family: nosuch"):
        family_list("--only")("nosuch")
    with pytest.raises(argparse.ArgumentTypeError, match="an empty family name"):
        family_list("--only")("ir_core,")


@pytest.mark.parametrize("script,args,needle", [
    ("gate.py", ["--base", "nosuchref"], "argument --base: 'nosuchref' names no commit"),
    ("gate.py", ["--only", "nosuch"], "argument --only: unknown family: nosuch"),
    ("sim.py", ["--only", "nosuch"], "argument --only: unknown family: nosuch"),
    ("verify.py", ["--base", "nosuchref"], "argument --base: 'nosuchref' names no commit"),
    ("c_emit.py", ["--base", "nosuchref"], "argument --base: 'nosuchref' names no commit"),
])
def test_bench_scripts_refuse_bad_base_and_only_before_any_work(script, args, needle):
    r = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""  # nothing measured, nothing built

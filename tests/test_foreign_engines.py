"""No mixed-checkout gate (issue 22, item 6; parity/gate/provenance.py
``foreign_engines``): check, write and diff run in a checkout whose engines are
imported from elsewhere stop before any verdict with one error line naming
both paths and the fix (exit 2); ``--allow-foreign-engines`` proceeds."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parity.gate import provenance as P

ROOT = Path(__file__).resolve().parents[1]


def _git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def worktree(tmp_path_factory):
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("needs git and a git checkout of the project")
    wt = tmp_path_factory.mktemp("foreign") / "wt"
    r = _git("worktree", "add", "--detach", str(wt), "HEAD")
    assert r.returncode == 0, r.stderr
    yield wt
    _git("worktree", "remove", "--force", str(wt))


def _parity(cwd, *argv):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run([sys.executable, "-m", "parity", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env)


@pytest.mark.parametrize("argv", [("check", "--only", "ir_core"), ("write", "--only", "ir_core"),
                                  ("diff", "ir_core/casts"), ("diff", "--base", "HEAD", "--only", "ir_core")])
def test_worktree_with_another_checkouts_engines_stops(worktree, argv):
    before = {p.name: p.read_bytes() for p in (worktree / "golden").glob("*.json")}
    r = _parity(worktree, *argv)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: the engines are not this checkout's")
    assert str(worktree.resolve()) in lines[0] and str(ROOT) in lines[0]
    assert "--allow-foreign-engines" in lines[0] and "bootstrap.sh" in lines[0]
    assert {p.name: p.read_bytes() for p in (worktree / "golden").glob("*.json")} == before


def test_allow_foreign_engines_proceeds(worktree):
    r = _parity(worktree, "check", "--only", "ir_core", "--flavor", "llvm23", "--allow-foreign-engines")
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr)
    assert r.stdout.splitlines()[-1] == "RESULT: GREEN"
    assert f"python_engine 0.1.0 {ROOT}/python_engine" in r.stdout.splitlines()[0]


def test_own_checkout_and_scratch_golden_pass(tmp_path):
    assert P.foreign_engines(ROOT / "golden", ("python", "cpp")) is None
    (tmp_path / "golden").mkdir()
    assert P.foreign_engines(tmp_path / "golden", ("python", "cpp")) is None  # nothing to compare with
    assert P.foreign_engines(ROOT / "golden", ("tests.some_stub", "other_stub")) is None


def test_installed_engine_must_come_from_this_checkouts_sources(tmp_path, monkeypatch):
    """A wheel's python_engine (outside any checkout) passes when its sources are the
    checkout's (scripts/check_install.sh runs `parity check` so), else it is refused."""
    site = tmp_path / "site-packages" / "python_engine"
    shutil.copytree(ROOT / "python_engine", site, ignore=shutil.ignore_patterns("__pycache__"))
    real = P._location
    monkeypatch.setattr(P, "_location", lambda mod: str(site) if mod == "python_engine" else real(mod))
    assert P.foreign_engines(ROOT / "golden", ("python",)) is None
    (site / "api.py").write_text((site / "api.py").read_text() + "\n# edited\n")
    msg = P.foreign_engines(ROOT / "golden", ("python",))
    assert msg and "an install built from other sources" in msg and str(site) in msg and str(ROOT) in msg

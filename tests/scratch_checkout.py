"""A scratch git checkout of this project for tests that need a second commit.

Used by the tests of ``parity diff --base``, ``parity review`` and the golden
textconv driver: each copies the Python engine, the gate and the goldens into
a fresh git repository under pytest's tmp_path, commits, changes a kernel and
looks at what the tools make of the change. The C++ engine is not copied (the
tools regenerate old texts from a commit's Python engine).
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REDUCE_PY = "python_engine/kernels/conv_fwd_split_k_reduce.py"

#: Module mark for the tests that run git.
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run git in ``repo`` with a throwaway identity; stdout. Asserts exit 0 when ``check``."""
    r = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                       capture_output=True, text=True)
    assert r.returncode == 0 or not check, r.stderr
    return r.stdout


def make_checkout(tmp_path: Path, extra_files: tuple[str, ...] = ()) -> Path:
    """``tmp_path/checkout``: python_engine/, parity/, golden/, pyproject.toml and
    ``extra_files`` copied from this checkout, in a new git repository on branch main
    (nothing committed yet)."""
    r = tmp_path / "checkout"
    r.mkdir()
    ignore = shutil.ignore_patterns("__pycache__")
    for d in ("python_engine", "parity", "golden"):
        shutil.copytree(REPO / d, r / d, ignore=ignore)
    for f in ("pyproject.toml", *extra_files):
        shutil.copy(REPO / f, r / f)
    git(r, "init", "-q", "-b", "main")
    return r


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A scratch checkout (:func:`make_checkout`) as the working directory."""
    r = make_checkout(tmp_path)
    monkeypatch.chdir(r)
    return r

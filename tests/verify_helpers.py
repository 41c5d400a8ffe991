"""Shared helpers of tests/test_verify_*.py."""
from __future__ import annotations

import os
import shutil

import pytest


def need_opt19() -> None:
    """Skip (loudly) without opt-19, except under CI where the llvm20 lane is required."""
    if shutil.which("opt-19") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install llvm-19 (opt-19) for the llvm20 lane of parity verify")
        pytest.skip("opt-19 not installed (apt-get install llvm-19): llvm20 lane not tested here")


def need_llvmlite():
    return pytest.importorskip("llvmlite.binding", reason="llvmlite 0.50 is in the [test]/[verify] extras")

"""Every emitted module of the shipped families parses and verifies with the
LLVM of its flavor: llvmlite (LLVM 22.1) for llvm22/llvm23, opt-19 for llvm20
(the fuller oracle with ISA reports is `parity verify`)."""
from __future__ import annotations

import itertools
import os
import shutil
import subprocess

import pytest

import python_engine as E
from python_engine.kernels.ir_core import KERNELS

llvm = pytest.importorskip("llvmlite.binding", reason="llvmlite is in the [test] extra")


def _modules(flavor):
    for k, c in itertools.product(KERNELS, (0, 4)):
        spec = {"kernel": k, "cluster": c}
        if E.validate("ir_core", spec, "gfx1250", flavor) is None:
            yield E.lower("ir_core", spec, "gfx1250", flavor)
    for dt, v, d in itertools.product(("bf16", "fp16"), (1, 2, 4, 8), (0, 1, 3, 32)):
        yield E.lower("conv_fwd_split_k_reduce", {"dtype": dt, "vector": v, "degree": d}, "gfx1250", flavor)


@pytest.mark.parametrize("flavor", ["llvm22", "llvm23"])
def test_llvmlite_parses_and_verifies(flavor):
    n = 0
    for r in _modules(flavor):
        m = llvm.parse_assembly(r.text)
        m.verify()
        assert m.get_function(r.kernel) is not None
        n += 1
    assert n >= 40


def test_opt19_verifies_llvm20(tmp_path):
    opt = shutil.which("opt-19")
    if opt is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install llvm-19 (opt-19) for the llvm20 lane")
        pytest.skip("opt-19 not installed (apt-get install llvm-19) -- llvm20 lane not checked here")
    n = 0
    for r in _modules("llvm20"):
        p = tmp_path / f"{r.kernel}.ll"
        p.write_text(r.text)
        res = subprocess.run([opt, "-passes=verify", "-disable-output", str(p)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        n += 1
    assert n >= 40


def test_opt19_rejects_llvm22_syntax(tmp_path):
    """The llvm20 lane catches newer syntax: llvm22 text fails opt-19."""
    opt = shutil.which("opt-19")
    if opt is None:
        pytest.skip("opt-19 not installed")
    p = tmp_path / "k.ll"
    p.write_text(E.lower("ir_core", {"kernel": "buffer_copy"}, "gfx1250", "llvm22").text)
    res = subprocess.run([opt, "-passes=verify", "-disable-output", str(p)], capture_output=True, text=True)
    assert res.returncode != 0 and "captures" in res.stderr

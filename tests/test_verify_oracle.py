"""`parity verify` end to end on hand-written modules that are each wrong in
one way (tests/verify_stub_engine.py): every one is reported as the failure
it is, and the run goes on past an LLVM abort."""
from __future__ import annotations

import pytest

from parity.config import Config, Family
from verify_helpers import need_llvmlite, need_opt19

need_llvmlite()

from parity.verify import lanes as L  # noqa: E402
from parity.verify.verify import FAIL, PASS, SKIPPED, run_verify  # noqa: E402

STUB = "verify_stub_engine"


def _cfg(name, case=None, arch="gfx1250", flavor="llvm22", **kw):
    return Config(name, arch=arch, spec={"case": case or name}, flavors=(flavor,), **kw)


CONFIGS = (
    _cfg("good"),
    _cfg("wrong_signature"),
    _cfg("typo_intrinsic"),
    _cfg("external_call"),
    _cfg("abort_wmma", arch="gfx942"),     # LLVM aborts: WMMA (gfx1250) on gfx942
    _cfg("wmma"),
    _cfg("spill"),
    _cfg("spill_allowed", case="spill", allow_spill="test: forced amdgpu-num-vgpr=64"),
    _cfg("bad_cpu", case="good", arch="gfx9999", flavor="llvm23"),
    _cfg("captures_in_llvm20", flavor="llvm20"),
    _cfg("good20", case="good", flavor="llvm20"),
)


@pytest.fixture(scope="module")
def report():
    return run_verify([Family("stub", CONFIGS)], engine=STUB, workers=2)


def _unit(report, name):
    [u] = [r for r in report.results if r.config == name]
    return u


def _errors(u):
    return " || ".join(u.errors)


def test_good_kernel_passes_with_isa(report):
    u = _unit(report, "good")
    assert u.status == PASS, u.errors
    assert u.llvm.startswith("LLVM 22.1") and u.isa["vgprs"] >= 1 and u.isa["occupancy"] >= 1
    assert u.isa["vgpr_spills"] == 0 and u.isa["scratch_bytes"] == 0


def test_wrong_intrinsic_signature_fails_verify(report):
    u = _unit(report, "wrong_signature")
    assert u.status == FAIL
    assert "verifier error" in _errors(u) and "Intrinsic has incorrect argument type" in _errors(u)


def test_typo_intrinsic_is_caught_by_existence_check(report):
    u = _unit(report, "typo_intrinsic")
    assert u.status == FAIL
    assert "@llvm.amdgcn.workitem.id.xx is not an intrinsic LLVM 22.1 knows" in _errors(u)


def test_external_non_intrinsic_call_fails(report):
    u = _unit(report, "external_call")
    assert u.status == FAIL
    assert "declares external function @helper, which is not an llvm. intrinsic" in _errors(u)


def test_llvm_abort_is_a_failure_with_message_and_run_goes_on(report):
    u = _unit(report, "abort_wmma")
    assert u.status == FAIL
    assert "LLVM aborted" in _errors(u) and "SIGABRT" in _errors(u)
    assert "Cannot select: intrinsic %llvm.amdgcn.wmma" in _errors(u)
    assert report.restarts >= 1
    # every other llvmlite unit still got compiled
    for name in ("good", "wmma", "spill", "spill_allowed"):
        assert _unit(report, name).isa is not None, name


def test_unknown_cpu_is_a_failure(report):
    u = _unit(report, "bad_cpu")
    assert u.status == FAIL
    assert "'gfx9999' is not a recognized processor" in _errors(u)


def test_wmma_is_counted(report):
    u = _unit(report, "wmma")
    assert u.status == PASS, u.errors
    assert u.isa["wmma"] == 1


def test_spill_fails_unless_allowed(report):
    u = _unit(report, "spill")
    assert u.status == FAIL
    assert u.isa["vgpr_spills"] > 0 and u.isa["scratch_bytes"] > 0
    assert "spill/scratch:" in _errors(u)
    a = _unit(report, "spill_allowed")
    assert a.status == PASS, a.errors
    assert any("spills allowed (test: forced amdgpu-num-vgpr=64)" in n for n in a.notes)


def test_llvm22_syntax_in_llvm20_text_fails_opt19(report):
    need_opt19()
    u = _unit(report, "captures_in_llvm20")
    assert u.status == FAIL and u.lane == "opt-19" and u.llvm.startswith("LLVM 19")
    assert "rejects the llvm20 text" in _errors(u) and "captures(none)" in _errors(u)
    assert _unit(report, "good20").status == PASS


def test_report_is_red_and_json_names_lanes(report):
    assert not report.green
    doc = report.to_json()
    assert doc["result"] == "RED"
    assert doc["lanes"]["llvm22"]["llvm"].startswith("LLVM 22.1")
    assert doc["summary"]["compiled"] >= 5


def test_missing_lane_is_skipped_never_passed_and_fails_under_ci(monkeypatch):
    lanes = L.statuses()
    opt = next(l for l in L.LANES if l.kind == L.OPT)
    lanes["llvm20"] = L.LaneStatus(opt, False, "", "opt-19 not found (simulated)")
    fam = [Family("stub", (_cfg("good20", case="good", flavor="llvm20"),))]
    monkeypatch.delenv("CI", raising=False)
    rep = run_verify(fam, engine=STUB, flavors=("llvm20",), lanes=lanes, workers=1)
    [u] = rep.results
    assert u.status == SKIPPED and not u.failed
    assert rep.skipped_lanes() == ["llvm20"]
    # a developer machine: skipped, loudly, not failed -- and never passed
    assert rep.result == "INCOMPLETE" and not rep.green
    assert rep.result_line() == "RESULT: INCOMPLETE (skipped lanes: llvm20)"
    assert rep.to_json()["result"] == "INCOMPLETE" and rep.to_json()["skipped_lanes"] == ["llvm20"]
    monkeypatch.setenv("CI", "true")
    assert u.failed and not rep.green and rep.result == "RED"


def test_typo_in_an_engine_intrinsic_table_is_caught(monkeypatch):
    monkeypatch.setenv("TYPO_TABLE", "1")
    rep = run_verify([Family("stub", (_cfg("good"),))], engine=STUB, flavors=("llvm22",), workers=1)
    assert any("@llvm.amdgcn.workitem.id.xx is not an intrinsic LLVM 22.1 knows" in p
               for p in rep.intrinsic_problems), rep.intrinsic_problems
    assert not rep.green

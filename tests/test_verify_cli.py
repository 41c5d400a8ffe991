"""`parity verify` and `check_byte_identity --verify` on the command line."""
from __future__ import annotations

import json

from verify_helpers import need_llvmlite

need_llvmlite()

from parity import check_byte_identity  # noqa: E402

from parity.app import main as cli


def test_parity_verify_report_and_json(tmp_path, capsys):
    out = tmp_path / "v.json"
    rc = cli.main(["verify", "--only", "ir_core", "--flavor", "llvm24", "--report", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "lane llvm23: checked by LLVM 22.1" in text
    assert "ir_core/lds_barrier_cluster4" in text and "1x1x4" in text  # the table
    assert text.rstrip().endswith("RESULT: GREEN")
    doc = json.loads(out.read_text())
    assert doc["result"] == "GREEN" and doc["flavors"] == ["llvm23"]
    assert doc["summary"]["compiled"] == sum(1 for r in doc["results"] if r["isa"])
    assert doc["summary"]["vgpr_spills"] == 0


def test_parity_verify_unknown_family_is_usage_error(capsys):
    assert cli.main(["verify", "--only", "nope"]) == 2


def test_parity_verify_text_families_only_is_one_error_line(capsys):
    # perf_model and split_k_policy print text, not IR: nothing to verify is said, not a RED run of 0 units
    assert cli.main(["verify", "--only", "split_k_policy,perf_model"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "text families, no LLVM IR to verify" in err[0], err


def test_check_byte_identity_verify_folds_into_result(tmp_path, capsys):
    out = tmp_path / "b.json"
    rc = check_byte_identity.main(["--only", "ir_core", "--flavor", "llvm22", "--engines", "python,python",
                                   "--verify", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "verify: engine python" in text and text.rstrip().endswith("RESULT: GREEN")
    doc = json.loads(out.read_text())
    assert doc["result"] == "GREEN" and doc["verify"]["result"] == "GREEN"


def test_parity_verify_skipped_lane_is_incomplete_not_green(monkeypatch, capsys):
    """PARITY_OPT19=/nonexistent: the llvm20 lane is skipped; outside CI the run
    ends INCOMPLETE with exit 1 (under CI, RED)."""
    monkeypatch.setenv("PARITY_OPT19", "/nonexistent")
    monkeypatch.delenv("CI", raising=False)
    rc = cli.main(["verify", "--only", "ir_core", "--flavor", "llvm20"])
    text = capsys.readouterr().out
    assert rc == 1, text
    assert "WARNING: lane(s) llvm20 SKIPPED" in text
    assert text.rstrip().splitlines()[-1] == "RESULT: INCOMPLETE (skipped lanes: llvm20)"
    monkeypatch.setenv("CI", "1")
    assert cli.main(["verify", "--only", "ir_core", "--flavor", "llvm20"]) == 1
    assert capsys.readouterr().out.rstrip().endswith("RESULT: RED")

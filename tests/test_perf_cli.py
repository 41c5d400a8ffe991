"""``parity perf``: the JSON envelope, --base against HEAD, --check-goals, bad input.

Each run is narrowed with --only to one small kernel (a 16x16 or 32x32 tile:
about a second of LLVM)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from parity.app.main import main as parity_main
from parity.cli.common import SCHEMA, SCHEMA_VERSION
from parity.perf import mca

ROOT = Path(__file__).resolve().parents[1]
SMALL = "conv_implicit_gemm/plain_mem_default_32x32x32_w1x1_bf16"
TARGET16 = "conv_implicit_gemm/aot_spk2_mem_default_16x16x32_w1x1_bf16"


def call(argv, capsys):
    try:
        rc = parity_main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_envelope_and_measures(tmp_path, capsys):
    p = tmp_path / "perf.json"
    rc, out, err = call(["perf", "--only", f"{SMALL},{TARGET16}", "-j", "1", "--json", p], capsys)
    assert rc == 0, err
    assert out.splitlines()[0].startswith("parity: golden ")          # the provenance line
    doc = json.loads(p.read_text())
    assert (doc["schema"], doc["schema_version"], doc["command"], doc["result"], doc["exit_code"]) == \
        (SCHEMA, SCHEMA_VERSION, "perf", "GREEN", 0)
    assert set(doc["configs"]) == {SMALL, TARGET16} and doc["base"] is None and doc["flavor"] == "llvm23"
    m = doc["configs"][SMALL]
    # 32x32x32 on one wave: the uniform-tap loop, 2x2 fragments, two K tiles per iteration; its
    # loads cross the K tile's barrier, which a one-wave workgroup has as "; wave barrier" only
    assert m["mix"]["counts"]["wmma"] == 8 and m["k_tiles_per_iteration"] == 2
    assert m["prefetch"]["barriers"] == 1 and m["prefetch_tiles"] == 1.0
    assert m["mca"]["full"]["cycles_per_iteration"] > 0 and m["vgprs"] > 0
    assert [{k: t[k] for k in ("label", "config")} for t in doc["targets"]] == \
        [{"label": "16x16 AOT tile", "config": TARGET16}]
    goals = {g["name"]: g["status"] for g in doc["goals"]}
    # the issue-26 main-loop goals judge the 64x64x32 plain target, which this run leaves out
    assert goals == {"non_wmma": "skipped", "epilogue_16b": "met", "bank_conflicts": "met",
                     "barrier_hidden": "met", "mca_no_barrier": "skipped", "prefetch": "skipped",
                     "occupancy": "skipped", "spills": "skipped", "scratch": "skipped",
                     "class_64x64x64_two-stage": "skipped", "class_32x32x32_AOT_tile": "skipped",
                     "class_16x16_AOT_tile": "met", "class_128x128x64_cluster_S=15": "skipped",
                     # the K-walk fallback of each target: the 16x16 tile keeps its K walk (71 non-WMMA per
                     # WMMA, half its figure is the goal), the other targets are not in this run
                     "fallback_64x64x32_plain": "skipped", "fallback_64x64x64_two-stage": "skipped",
                     "fallback_128x128x64_cluster_S=15": "skipped", "fallback_16x16_AOT_tile": "not met",
                     "fallback_32x32x32_AOT_tile": "skipped"}
    assert "goals: 4 met, 1 not met (fallback_16x16_AOT_tile), 13 skipped" in out.splitlines()  # the tally
    # the barrier model of the 16x16 target: one wave per workgroup, so LLVM drops the barriers; 16 waves
    # per SIMD issue more than one wave's no-barrier cycles
    [t16] = doc["targets"]
    cov = t16["barrier"]
    nb = doc["configs"][TARGET16]["mca"]["no_barrier"]
    assert (cov["gaps"], cov["exposed"], cov["waves"], cov["latency"]) == ([], 0.0, 16, 500)
    assert cov["issue"] == nb["block_rthroughput"] and cov["no_barrier"] == nb["cycles_per_iteration"]
    assert cov["spare"] == round(16 * cov["issue"] - cov["no_barrier"], 2) > 0 and cov["hidden"]
    i = out.index('barrier model (L = 500 cycles, an ASSUMPTION: docs/perf_model.md, "Barrier model"')
    # two K tiles an iteration: the uniform-tap loop (issue 40)
    assert out[i:].splitlines()[1] == (f"  16x16 AOT tile: no barrier per iteration (2 K tile(s)), 16 waves per SIMD, "
                                       f"llvm-mca {cov['issue']:g} issue / {round(cov['no_barrier'], 1):g} no-barrier "
                                       f"cycles per iteration")
    assert f"goal barrier_hidden: met (L = 500 cycles (assumed): 16x16 AOT tile met: 0 cycles of work per K " \
           f"tile needed (no barrier), {cov['available']:.0f} available" in out
    # the emulator's count on a real launch of the 16x16 target: every main-loop LDS site ran, none conflicted
    bank = doc["bank_conflicts"][TARGET16]
    assert bank["main_loop_conflict_cycles"] == 0
    for cat in ("a_store", "b_store", "a_fragment", "b_fragment"):
        assert bank["categories"][cat]["executed"] > 0 and bank["categories"][cat]["conflict_cycles"] == 0
    assert set(doc["bank_conflicts"]) == {TARGET16}  # counted for the targets only
    assert "LDS bank conflicts (emulator; conflict cycles / wave-instructions, one launch):" in out
    # the 16x16 two-stage target stores its slabs with 16-byte stores (2 per lane) where K and kpg allow,
    # the 4-byte fallback beside them
    assert "goal epilogue_16b: met (16-byte epilogue stores on every target" in out
    assert "16x16 AOT tile stores 8x4B 2x16B" in out
    assert "targets:" in out and "all configs:" in out


def test_check_goals_exits_1_on_a_failed_goal(tmp_path, capsys, monkeypatch):
    from parity.perf import targets
    p = tmp_path / "perf.json"
    # the 64x64x32 target meets 12 non-WMMA instructions per WMMA (docs/perf.md: 10.12 with the
    # uniform-tap loop, 10.38 with its look-ahead B cap); a limit of 8 it does not
    monkeypatch.setattr(targets, "NON_WMMA_LIMIT", 8)
    t64 = "conv_implicit_gemm/plain_mem_default_64x64x32_w2x2_bf16"
    rc, out, err = call(["perf", "--only", t64, "-j", "1", "--check-goals", "--json", p], capsys)
    assert rc == 1, err
    doc = json.loads(p.read_text())
    assert doc["result"] == "RED"
    goals = {g["name"]: g["status"] for g in doc["goals"]}
    assert goals["non_wmma"] == "not met" and goals["mca_no_barrier"] == "met"
    assert "goal non_wmma: not met (64x64x32 plain: 10.38 non-WMMA instructions per WMMA, limit 8)" in out


def _engine_is_head() -> bool:
    r = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "python_engine", "parity/configs"], cwd=ROOT)
    return r.returncode == 0


def test_base_head_gives_identical_before_and_after(tmp_path, capsys):
    if not _engine_is_head():
        pytest.skip("the working tree's Python engine or configs differ from HEAD (CI runs this on a clean tree)")
    p = tmp_path / "perf.json"
    rc, out, err = call(["perf", "--only", SMALL, "-j", "1", "--base", "HEAD", "--json", p], capsys)
    assert rc == 0, err
    doc = json.loads(p.read_text())
    assert doc["base"]["ref"] == "HEAD" and len(doc["base"]["commit"]) == 40
    assert doc["base"]["configs"] == doc["configs"]
    assert "targets, before -> after:" not in out                      # no target selected
    row = next(line for line in out.splitlines() if line.strip().startswith(SMALL) and "->" in line)
    assert "(1.00x)" in row and "->" in row
    assert doc["goals"][-1]["name"] == "barrier_hidden" and doc["goals"][-1]["status"] == "skipped"


def test_layers_section_predicts_every_catalog_layer(tmp_path, capsys):
    """--layers CATALOG: the perf model's choice, runner-up and the seed's choice per
    layer, totals that are the sums of the rows, the choice never slower than the seed."""
    from parity.catalog.model import catalog_predictions
    cat = ROOT / "tests" / "data" / "layers_c80.txt"
    p = tmp_path / "perf.json"
    rc, out, err = call(["perf", "--only", SMALL, "-j", "1", "--layers", cat, "--json", p], capsys)
    assert rc == 0, err
    lay = json.loads(p.read_text())["layers"]
    want = catalog_predictions(str(cat), "gfx1250", "llvm23")
    assert [x["layer"] for x in lay["layers"]] == ["c80"]
    [c80] = lay["layers"]
    assert c80["selected"] == want[0]["selected"] and c80["seed"] == want[0]["seed"]
    assert lay["total_ps"] == c80["selected"]["total_ps"] and lay["seed_total_ps"] == c80["seed"]["total_ps"]
    assert c80["selected"]["total_ps"] <= c80["seed"]["total_ps"]
    assert min(r["total_ps"] for r in c80["candidates"]) == c80["selected"]["total_ps"]
    assert f"layers: 1 from {cat}, gfx1250 llvm23: predicted total {lay['total_ps'] / 1e6:.3f} us" in out
    row = [l for l in out.splitlines() if l.strip().startswith("c80 ")]
    assert len(row) == 1 and f"{c80['selected']['total_ps'] / 1e6:.3f}" in row[0]


def test_layers_with_a_bad_catalog_is_one_error_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("x: MIOpenDriver convbfp16 -n 0\n")
    rc, out, err = call(["perf", "--only", SMALL, "--layers", bad], capsys)
    assert rc == 2 and err.startswith(f"error: --layers {bad}: ") and len(err.splitlines()) == 1, err
    assert out == ""
    # an explicit empty path is not the shipped catalog (bare --layers is)
    rc, out, err = call(["perf", "--only", SMALL, "--layers", ""], capsys)
    assert rc == 2 and err == "error: --layers: an empty catalog path (give a file, or --layers alone for the " \
        "shipped catalog)\n" and out == ""


@pytest.mark.parametrize("argv,needle", [
    (["--only", "no_such_family"], "no_such_family"),
    (["--only", "conv_launch"], "--only: perf measures conv_implicit_gemm, conv_fwd_split_k_reduce, not conv_launch"),
    (["--only", "conv_implicit_gemm/no_such_config"], "no config conv_implicit_gemm/no_such_config"),
    (["--only", SMALL, "--base", "no-such-ref-xyz"], "--base no-such-ref-xyz: not a commit"),
    (["--only", SMALL, "--flavor", "llvm99"], "unknown flavor"),
    (["--only", SMALL, "-j", "0"], "--jobs must be at least 1"),
])
def test_bad_input_is_one_error_line_and_exit_2(argv, needle, tmp_path, capsys):
    p = tmp_path / "perf.json"
    rc, out, err = call(["perf", *argv, "--json", p], capsys)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err
    assert not p.exists()


def test_missing_llvm_mca_is_one_error_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(mca.shutil, "which", lambda name: None)
    rc, out, err = call(["perf", "--only", SMALL], capsys)
    assert rc == 2
    assert err.strip().splitlines() == ["error: llvm-mca-22 not found on PATH (Debian/Ubuntu package llvm-22; "
                                        "scripts/bootstrap.sh installs it)"]


def test_check_goals_with_no_goal_judged_is_not_a_pass(capsys):
    # a reduce config holds no goal's target: every goal is skipped, which --check-goals refuses
    rc, out, err = call(["perf", "--only", "conv_fwd_split_k_reduce/bf16_v1_t64_d0", "-j", "1", "--check-goals"],
                        capsys)
    assert rc == 1 and "goals: 0 met, 0 not met, 18 skipped" in out
    assert "--check-goals: no goal was judged" in out
    rc, out, err = call(["perf", "--only", "conv_fwd_split_k_reduce/bf16_v1_t64_d0", "-j", "1"], capsys)
    assert rc == 0   # without --check-goals the report is not a gate

"""parity/perf/mca.py: llvm-mca-22's report parsed, on canned text and on real runs."""
from __future__ import annotations

import pytest

from parity.perf import mca

CANNED = """\
Iterations:        100
Instructions:      11800
Total Cycles:      333003
Total uOps:        11800

Dispatch Width:    1
uOps Per Cycle:    0.04
IPC:               0.04
Block RThroughput: 118.0


Resources:
[0]   - HWBranch
[1]   - HWExport
[2]   - HWXDL


Resource pressure per iteration:
[0]    [1]    [2]    
3.00    -     32.00  

Resource pressure by instruction:
"""

WMMA4 = [f"v_wmma_f32_16x16x32_bf16 v[{8 * i}:{8 * i + 7}], v[32:39], v[40:47], v[{8 * i}:{8 * i + 7}]"
         for i in range(4)]


def test_parse_canned_report():
    r = mca.parse(CANNED)
    assert (r.iterations, r.instructions, r.total_cycles, r.block_rthroughput) == (100, 11800, 333003, 118.0)
    assert r.cycles_per_iteration == 3330.03
    assert r.resource_pressure == {"HWBranch": 3.0, "HWExport": 0.0, "HWXDL": 32.0}
    assert r.to_json()["cycles_per_iteration"] == 3330.03


def test_parse_refuses_a_report_without_totals():
    with pytest.raises(mca.MCAError, match="Total Cycles"):
        mca.parse("Iterations: 100\nInstructions: 4\n")


def test_four_independent_wmma_take_the_matrix_pipe_8_cycles_each():
    r = mca.run(WMMA4)
    assert r.iterations == mca.ITERATIONS and r.instructions == 4 * mca.ITERATIONS
    assert 32 <= r.cycles_per_iteration < 33
    assert r.resource_pressure["HWXDL"] == 32.0


def test_barriers_are_dropped_for_the_no_barrier_figure():
    body = ["s_add_co_i32 s8, s8, 1", "s_barrier_signal -1", "s_barrier_wait -1"]
    assert mca.without_barriers(body) == ["s_add_co_i32 s8, s8, 1"]
    assert mca.run(body).cycles_per_iteration > 100 * mca.run(mca.without_barriers(body)).cycles_per_iteration


def test_bad_assembly_is_one_line_error():
    with pytest.raises(mca.MCAError, match="llvm-mca-22 failed") as e:
        mca.run(["v_not_an_instruction v0"])
    assert "\n" not in str(e.value)


def test_missing_tool_names_it(monkeypatch):
    monkeypatch.setattr(mca.shutil, "which", lambda name: None)
    with pytest.raises(mca.MCAError) as e:
        mca.find_tool()
    assert str(e.value).startswith("llvm-mca-22 not found on PATH") and "llvm-22" in str(e.value)

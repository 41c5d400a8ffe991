"""The barrier model (parity/perf/barrier.py): gaps between split-barrier signal
and wait in a cyclic loop body, their work cycles, and the exposed latency."""
from __future__ import annotations

import shutil

import pytest

from parity.perf import barrier as BAR

BODY = [
    "v_wmma_f32_16x16x32_bf16 v[0:7], v[8:15], v[16:23], v[0:7]",
    "s_barrier_signal -1",
    "v_add_nc_u32 v30, v31, v32",
    "v_add_nc_u32 v33, v30, v32",
    "s_barrier_wait -1",
    "ds_load_b128 v[40:43], v44",
]


def test_gaps_between_signal_and_wait():
    assert BAR.gaps(BODY) == [["v_add_nc_u32 v30, v31, v32", "v_add_nc_u32 v33, v30, v32"]]


def test_gap_wraps_around_the_loop():
    body = ["s_barrier_wait -1", "v_mov_b32 v1, v2", "s_barrier_signal -1", "v_mov_b32 v3, v4"]
    assert BAR.gaps(body) == [["v_mov_b32 v3, v4"]]


def test_combined_barrier_and_lone_signal():
    assert BAR.gaps(["s_barrier", "v_mov_b32 v1, v2"]) == [[]]
    assert BAR.gaps(["s_barrier_signal -1", "v_mov_b32 v1, v2"]) == []   # no wait: not counted


def test_exposed_latency():
    assert BAR.exposed([0.0, 120.0, 900.0], latency=500) == 500 + 380 + 0
    assert BAR.exposed([], latency=500) == 0


@pytest.mark.skipif(shutil.which("llvm-mca-22") is None, reason="llvm-mca-22 not installed (apt llvm-22)")
def test_model_adds_the_exposed_latency_to_the_no_barrier_cycles():
    m = BAR.model(BODY, 100.0, None)
    assert m["latency"] == BAR.BARRIER_LATENCY == 500
    [w] = m["gaps"]
    assert 2 <= w < 100          # two dependent VALU adds, one pass
    assert m["exposed"] == 500 - w
    assert m["cycles_per_iteration"] == round(100.0 + 500 - w, 2)
    assert m["sensitivity"] == {"0": 100.0, "2000": round(100.0 + 2000 - w, 2)}


def test_cover_at_the_boundary():
    # two gaps of 100 and 300 cycles of work: 400 + 200 = 600 exposed at L = 500; one wave
    # issues 100 cycles and takes 400 alone per iteration of 2 K tiles
    c = BAR.cover([100.0, 300.0], no_barrier=400.0, issue=100.0, waves=10, k_tiles=2.0)
    assert (c["exposed"], c["spare"], c["other_issue"], c["stalls"]) == (600.0, 600.0, 900.0, 300.0)
    assert (c["needed"], c["available"], c["hidden"], c["hidden_up_to"]) == (300.0, 300.0, True, 500.0)
    assert c["per_gap"] == [{"work": 100.0, "exposed": {"0": 0.0, "500": 400.0, "2000": 1900.0}},
                            {"work": 300.0, "exposed": {"0": 0.0, "500": 200.0, "2000": 1700.0}}]
    c = BAR.cover([100.0, 300.0], no_barrier=400.0, issue=100.0, waves=9, k_tiles=2.0)
    assert (c["spare"], c["needed"], c["available"], c["hidden"]) == (500.0, 300.0, 250.0, False)
    assert c["hidden_up_to"] == 450.0     # 2 L - 400 = 500


def test_cover_without_spare_issue_or_without_barrier():
    # the 64x64x32 plain figures (docs/perf.md): 9 x 87 = 783 issue cycles < 865, two empty gaps
    c = BAR.cover([0.0, 0.0], no_barrier=865.03, issue=87.0, waves=9, k_tiles=2.0)
    assert (c["spare"], c["needed"], c["available"], c["hidden"], c["hidden_up_to"]) == (0.0, 500.0, 0.0, False, 0.0)
    assert c["stalls"] == 778.03 and c["other_issue"] == 696.0
    c = BAR.cover([], no_barrier=822.03, issue=71.0, waves=16, k_tiles=1.0)
    assert (c["exposed"], c["spare"], c["hidden"], c["hidden_up_to"]) == (0.0, 313.97, True, None)


def test_hidden_up_to_one_gap_is_its_work_plus_the_spare():
    assert BAR.hidden_up_to([19.0], 0.0) == 19.0
    assert BAR.hidden_up_to([19.0], 100.0) == 119.0
    assert BAR.hidden_up_to([0.0, 50.0, 400.0], 150.0) == 100.0     # (150 + 0 + 50) / 2 <= 400


def test_lines_of_the_barrier_section():
    c = BAR.cover([100.0, 300.0], no_barrier=400.0, issue=100.0, waves=9, k_tiles=2.0)
    assert BAR.lines("t", c) == [
        "t: 2 barrier gap(s) per iteration (2 K tile(s)), 9 waves per SIMD, llvm-mca 100 issue / 400 "
        "no-barrier cycles per iteration",
        "  gap 1: 100 cycles of work between signal and wait; exposed L=0 0, L=500 400, L=2000 1900",
        "  gap 2: 300 cycles of work between signal and wait; exposed L=0 0, L=500 200, L=2000 1700",
        "  cover: 9 x 100 = 900 issue cycles of the SIMD's waves - 400 = 500 spare per iteration ((n-1) I = 800 "
        "of the other waves less 300 latency stalls); exposed at L=500: 600 -> not hidden (300 per K tile "
        "needed, 250 available; hidden up to L=450)"]
    c = BAR.cover([], no_barrier=822.03, issue=71.0, waves=16, k_tiles=1.0)
    assert BAR.lines("x", c)[0].startswith("x: no barrier per iteration (1 K tile(s)), 16 waves per SIMD")
    assert BAR.lines("x", c)[-1].endswith("-> hidden (0 per K tile needed, 314 available; hidden up to any L)")

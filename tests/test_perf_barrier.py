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

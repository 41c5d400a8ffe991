"""parity/perf/prefetch.py on hand-written loop bodies (no compile)."""
from __future__ import annotations

from parity.perf.prefetch import prefetch, tiles

# One K tile per iteration, the loads waited for after the WMMAs of the same tile
# (the single-stage double-buffered loop): no barrier between issue and use.
SINGLE = [
    "buffer_load_b128 v[92:95], v59, s[36:39], null offen",
    "buffer_load_b128 v[96:99], v60, s[28:31], null offen",
    "ds_load_b128 v[60:63], v59",
    "ds_load_b128 v[68:71], v72 offset:8192",
    "s_wait_dscnt 0x0",
    "v_wmma_f32_16x16x32_bf16 v[26:33], v[60:67], v[68:75], v[26:33]",
    "s_wait_loadcnt 0x0",
    "ds_store_b128 v59, v[92:95]",
    "ds_store_b128 v60, v[96:99] offset:8192",
    "s_barrier_signal -1",
    "s_barrier_wait -1",
    "s_cbranch_scc1 .LBB0_2",
]

# Two tiles per iteration: each half stores the held tile, issues the next loads, computes;
# the loads of one half are first read by the next half's stores, across its barrier.
PIPELINED = [
    "ds_store_b128 v66, v[42:45] offset:4096",
    "buffer_load_b128 v[84:87], v76, s[24:27], null offen",
    "ds_load_b128 v[34:41], v59",
    "ds_load_b128 v[50:57], v61 offset:8192",
    "v_wmma_f32_16x16x32_bf16 v[26:33], v[34:41], v[50:57], v[26:33]",
    "s_barrier_signal -1",
    "s_barrier_wait -1",
    "ds_store_b128 v66, v[84:87]",
    "buffer_load_b128 v[42:45], v72, s[24:27], null offen",
    "ds_load_b128 v[34:41], v59 offset:4096",
    "ds_load_b128 v[50:57], v61 offset:12288",
    "v_wmma_f32_16x16x32_bf16 v[26:33], v[34:41], v[50:57], v[26:33]",
    "s_barrier_signal -1",
    "s_barrier_wait -1",
    "s_cbranch_scc1 .LBB0_2",
]


def test_single_stage_loop_is_used_before_its_barrier():
    fig = prefetch(SINGLE)
    assert fig == {"barriers": 0, "wmmas": 1, "lds_loads": 2, "loads": 2}
    assert tiles(fig, 1, 2) == 0.0


def test_pipelined_loop_wraps_the_back_edge_and_crosses_a_barrier():
    fig = prefetch(PIPELINED)
    # the second load (v[42:45]) is read by the first store of the next iteration
    assert fig == {"barriers": 1, "wmmas": 1, "lds_loads": 2, "loads": 2}
    assert tiles(fig, 1, 2) == 1.0
    assert tiles(fig, 2, 2) == 0.5


def test_partial_register_overlap_counts_as_a_use():
    body = ["buffer_load_b32 v7, v1, s[0:3], null offen", "v_wmma_f32_16x16x32_bf16 v[0:7], v[8:15], v[16:23], v[0:7]",
            "v_add_nc_u32_e32 v2, v[6:7], v3"]
    assert prefetch(body) == {"barriers": 0, "wmmas": 0, "lds_loads": 0, "loads": 1}


def test_a_body_without_read_loads_has_no_figure():
    assert prefetch(["ds_load_b128 v[0:3], v4", "s_cbranch_scc1 .LBB0_2"]) is None
    assert tiles(None, 4, 8) is None

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


def test_a_register_past_v255_is_the_one_its_msb_comment_names():
    # 128x128x64's tap loop (llc-22, 320 VGPRs): under s_set_vgpr_msb the load writes v[258:261],
    # printed as v[2:5]; the WMMA accumulating in the real v[2:9] does not read it, the store does
    body = ["s_set_vgpr_msb 64                       ;  msbs: dst=1 src0=0 src1=0 src2=0",
            "buffer_load_b128 v[2:5] /*v[258:261]*/, v241, s[28:31], s0 offen offset:64",
            "s_set_vgpr_msb 0x4000                   ;  msbs: dst=0 src0=0 src1=0 src2=0",
            "ds_load_b128 v[130:133], v232",
            "v_wmma_f32_16x16x32_bf16 v[2:9], v[154:161], v[170:177], v[2:9]",
            "s_barrier_signal -1", "s_barrier_wait -1",
            "s_set_vgpr_msb 0x41                     ;  msbs: dst=0 src0=1 src1=0 src2=0",
            "ds_store_b128 v207, v[2:5] /*v[258:261]*/ offset:49152"]
    assert prefetch(body) == {"barriers": 1, "wmmas": 1, "lds_loads": 1, "loads": 1}


def test_a_body_without_read_loads_has_no_figure():
    assert prefetch(["ds_load_b128 v[0:3], v4", "s_cbranch_scc1 .LBB0_2"]) is None
    assert tiles(None, 4, 8) is None


# A one-wave workgroup: LLVM lowers the K tile's workgroup barrier to a "; wave barrier"
# comment (no instruction); its place in the body (a mark) is the K-tile boundary.
ONE_WAVE = [x for x in PIPELINED if not x.startswith("s_barrier")]


def test_one_wave_loop_crosses_its_wave_barrier_marks():
    # without marks the loads look consumed in their own K tile
    assert prefetch(ONE_WAVE)["barriers"] == 0
    assert tiles(prefetch(ONE_WAVE), 1, 2) == 0.0
    # the comments stood before the second half's store (index 5) and before the branch (10)
    assert ONE_WAVE[5] == "ds_store_b128 v66, v[84:87]" and ONE_WAVE[10].startswith("s_cbranch")
    fig = prefetch(ONE_WAVE, [5, 10])
    assert fig == {"barriers": 1, "wmmas": 1, "lds_loads": 2, "loads": 2}
    assert tiles(fig, 1, 2) == 1.0


def test_main_loop_records_wave_barrier_marks():
    from parity.perf.loop import main_loop
    asm = "\n".join([
        "k:", "; %bb.0:", "\ts_mov_b32 s0, 0",
        ".LBB0_1:                                ; =>This Inner Loop Header: Depth=1",
        "\tbuffer_load_b128 v[4:7], v1, s[0:3], null offen",
        "\tv_wmma_f32_16x16x32_bf16 v[8:15], v[16:23], v[24:31], v[8:15]",
        "\t; wave barrier",
        "\tds_store_b128 v2, v[4:7]",
        "\ts_cbranch_scc1 .LBB0_1",
        "; %bb.2:", "\ts_endpgm", ".Lfunc_end0:"])
    ml = main_loop(asm, "k")
    assert ml.body[2] == "ds_store_b128 v2, v[4:7]" and ml.marks == [2]
    assert prefetch(ml.body, ml.marks) == {"barriers": 1, "wmmas": 1, "lds_loads": 0, "loads": 1}

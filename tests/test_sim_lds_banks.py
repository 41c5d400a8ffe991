"""The emulator's LDS bank-conflict counter (parity/sim/lds_banks.py): the bank
model on hand-made access patterns, and the conv kernel's A/B stores and
fragment loads counted on real emulated launches (0 conflicts with the XOR
swizzle)."""
import numpy as np
import pytest

from parity.sim import lds_banks as LB

LANES = np.arange(32)


def test_model_constants():
    assert (LB.NUM_BANKS, LB.BANK_BYTES) == (64, 4)
    assert [LB.phase_lanes(w) for w in (2, 4, 8, 16)] == [32, 32, 32, 16]


def test_consecutive_accesses_are_conflict_free():
    assert LB.phase_cost(LANES * 4, 4) == (1, 0)          # b32, 128 contiguous bytes
    assert LB.phase_cost(LANES * 8, 8) == (1, 0)          # b64, 256 contiguous bytes
    assert LB.phase_cost(LANES * 16, 16) == (2, 0)        # b128, 2 phases of 256 bytes
    assert LB.phase_cost(LANES * 2, 2) == (1, 0)          # b16, pairs share a dword


def test_broadcast_is_free_and_same_bank_serialises():
    assert LB.phase_cost(np.zeros(32, np.int64), 16) == (2, 0)
    # b32 with a 256-byte stride: every lane in bank 0 at a different dword
    assert LB.phase_cost(LANES * 256, 4) == (1, 31)
    # b128, 16 rows of 64 bytes read at the same column (an unswizzled tile_k=32
    # fragment read): 4 rows share each 256-byte sweep -> 4-way
    assert LB.phase_cost((LANES % 16) * 64, 16) == (2, 6)


def test_padded_store_pattern_of_the_old_layout_conflicts():
    """The layout before the swizzle: rows of tile_k + 8 = 40 bf16 (80 bytes), lane
    l storing 16 bytes at row l/4, chunk l%4: in a 16-lane phase row 3 wraps onto
    row 0's banks (2-way)."""
    off = (LANES // 4) * 80 + (LANES % 4) * 16
    assert LB.phase_cost(off, 16) == (2, 2)


def test_banklog_splits_wide_accesses():
    log = LB.BankLog()
    log.record("site", "load", "cs_p", LANES * 32, 32)   # <8 x float> = 2 b128 pieces
    e = log.sites["site"]
    assert (e["executed"], e["phases"], e["conflict_cycles"]) == (1, 4, 4)


AB = ("a_store", "b_store", "a_fragment", "b_fragment")


@pytest.mark.parametrize("spec", [
    {},                                                          # 64x64x32
    {"tile_k": 64, "split_k": 4, "split_k_cluster": 0},                                # 64x64x64 two-stage
    {"tile_m": 128, "tile_n": 128, "tile_k": 64, "epilogue": "cshuffle"},
    {"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1},    # the 16x16 AOT tile
    {"vector_a": 4, "vector_b": 2, "pipeline": "wavelet", "num_load_waves": 2},
], ids=["64x64x32", "64x64x64_spk", "128x128x64_cshuffle", "16x16x32", "va4_vb2_wavelet"])
def test_conv_ab_accesses_have_no_conflicts(spec):
    r = LB.conv_bank_conflicts(spec)
    cats = r["categories"]
    for c in AB:
        assert cats[c]["executed"] > 0, c
        assert cats[c]["conflict_cycles"] == 0, (c, cats[c])
    assert not [s for s in r["sites"] if s["category"].startswith("other")]
    # epilogue sites are counted too, and are conflict-free with the chosen padding
    epi = ("c_store", "c_load") if spec.get("epilogue") == "cshuffle" else \
        ("d_transpose_store", "d_transpose_load")
    for c in epi:
        assert cats[c]["executed"] > 0 and cats[c]["conflict_cycles"] == 0, (c, cats[c])


def test_conv_counts_are_per_site_and_scale_with_the_launch():
    one = LB.conv_bank_conflicts({})
    prob = dict(N=1, C=64, H=2, W=64, K=64, Y=1, X=1, stride_h=1, stride_w=1, pad_h=0, pad_w=0,
                dil_h=1, dil_w=1, groups=1)
    two = LB.conv_bank_conflicts({}, problem=dict(prob, N=2))
    assert one["lds_bytes"] == 16384
    for c in AB:
        assert two["categories"][c]["executed"] == 2 * one["categories"][c]["executed"]
    for s in one["sites"]:
        assert set(s) >= {"site", "category", "kind", "bytes", "executed", "phases", "conflict_cycles"}


@pytest.mark.parametrize("spec,K", [
    ({"epilogue": "cshuffle", "split_k": 2, "split_k_cluster": 0}, 64),                       # slabs: 4 fp32 per slot
    ({"epilogue": "cshuffle"}, 60),                                      # narrow D: kpg % 8 != 0
    ({"epilogue": "cshuffle"}, 64),                                      # 16-byte D
    ({"tile_m": 128, "tile_n": 128, "tile_k": 64, "epilogue": "cshuffle", "split_k": 2, "split_k_cluster": 0}, 128),
    ({"tile_m": 128, "tile_n": 128, "tile_k": 64, "epilogue": "cshuffle"}, 124),
    ({"tile_m": 128, "tile_n": 128, "tile_k": 64, "epilogue": "cshuffle"}, 128),
], ids=["64_slab", "64_narrow", "64_wide", "128_slab", "128_narrow", "128_wide"])
def test_cshuffle_c_tile_accesses_have_no_conflicts(spec, K):
    """Every store phase of cshuffle (slab, narrow D, 16-byte D) reads the fp32 C tile
    without conflicts; the C writes of the WMMA layout too."""
    tm, tk = spec.get("tile_m", 64), spec.get("tile_k", 32)
    d = spec.get("split_k", 1)
    prob = dict(N=1, C=2 * tk * d, H=2, W=tm, K=K, Y=1, X=1, stride_h=1, stride_w=1, pad_h=0, pad_w=0,
                dil_h=1, dil_w=1, groups=1)
    cats = LB.conv_bank_conflicts(spec, problem=prob)["categories"]
    for c in ("c_store", "c_load"):
        assert cats[c]["executed"] > 0 and cats[c]["conflict_cycles"] == 0, (c, cats[c])


@pytest.mark.parametrize("spec,K,wide", [
    ({"split_k": 2, "split_k_cluster": 0}, 64, True),                                          # 64x64x32, 2x2 waves
    ({"split_k": 2, "split_k_cluster": 0}, 60, True),                                          # K % 8 = 4: slabs still wide
    ({"split_k": 2, "split_k_cluster": 0}, 62, False),                                         # K % 4 = 2: scalar slabs
    ({"tile_k": 64, "split_k": 4, "split_k_cluster": 0}, 64, True),                            # 64x64x64 two-stage
    ({"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1, "split_k": 2, "split_k_cluster": 0}, 16, True),   # AOT tile
    ({"tile_m": 128, "tile_n": 128, "tile_k": 64, "split_k": 2, "split_k_cluster": 0}, 128, True),
], ids=["64", "64_k60", "64_k62_narrow", "64x64x64", "16x16", "128"])
def test_default_slab_transpose_has_no_conflicts(spec, K, wide):
    """The fp32 slab transpose of the default epilogue (split-K, rows of WT_ROW = 20
    floats): per accumulator 8 b32 stores and 2 b128 loads per wave, 0 conflict
    cycles; with (K | kpg) % 4 != 0 the scalar path runs (no transpose accesses)."""
    from python_engine.kernels import conv_implicit_gemm as C
    tm, tn, tk = spec.get("tile_m", 64), spec.get("tile_n", 64), spec.get("tile_k", 32)
    d = spec.get("split_k", 1)
    prob = dict(N=1, C=2 * tk * d, H=2, W=tm, K=K, Y=1, X=1, stride_h=1, stride_w=1, pad_h=0, pad_w=0,
                dil_h=1, dil_w=1, groups=1)
    r = LB.conv_bank_conflicts(spec, problem=prob)
    st, ld = r["categories"]["d_transpose_store"], r["categories"]["d_transpose_load"]
    if not wide:
        assert st["executed"] == 0 and ld["executed"] == 0
        return
    # per workgroup and wave: (tile/16)^2 / waves accumulators; workgroups: 2 (M) x
    # ceil(K/tile_n) (N) x d slices (each slice has K tiles: C = 2*tk*d)
    waves = spec.get("waves_m", 2) * spec.get("waves_n", 2)
    accs = (tm // 16) * (tn // 16)
    wgs = 2 * -(-K // tn) * d
    assert st["executed"] == 8 * accs * wgs and ld["executed"] == 2 * accs * wgs, (st, ld, waves)
    assert st["conflict_cycles"] == 0 and ld["conflict_cycles"] == 0, (st, ld)
    assert r["lds_bytes"] >= waves * 16 * C.WT_ROW * 4

"""The tap-tile K loop of conv_implicit_gemm (python_engine/kernels/conv_implicit_gemm/
taptile.py; docs/conv_implicit_gemm.md, "Tap-tile loop"): which kernels carry it, the
shape of its body, and the covering problems that send slices through it. Its
numerics are the emulator's (parity numerics, the ``cover_tt_*`` problems); both
engines' bytes are the golden shard's."""
from __future__ import annotations

import re

import pytest

from parity.sim.cover import conv_cover_problems
from python_engine.kernels import conv_implicit_gemm as CIG
from python_engine.spec.fields import normalize
from test_conv_implicit_gemm_py import _blocks, lower
from test_conv_implicit_gemm_taploop import _kinds

CARRIERS = [({}, True), ({"split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"}, True),
            ({"split_k": 8, "split_k_cluster": 8, "epilogue": "cshuffle"}, True),
            ({"split_k": 8, "split_k_cluster": 8}, False), ({"tile_k": 64}, True),
            ({"tile_k": 64, "split_k": 4, "split_k_cluster": 0, "dtype": "fp16"}, True),
            ({"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1}, False),
            ({"tile_m": 32, "tile_n": 32, "waves_m": 1, "waves_n": 1}, False),
            ({"tile_m": 128, "tile_n": 128, "tile_k": 64}, False),
            ({"vector_a": 4}, False), ({"pipeline": "wavelet"}, False)]


@pytest.mark.parametrize("spec,carries", CARRIERS)
def test_which_kernels_carry_the_tap_tile_loop(spec, carries):
    """The 64x64x32 w2x2 (two-deep) and 64x64x64 w2x2 kernels carry it (gate, prologue,
    loop), between the uniform-tap loop's fallback edge and the K walk (``kwalk``), but
    the cluster form with the default epilogue; the 16x16x32, 32x32x32 and 128x128x64
    tap-loop tiles and every kernel without the tap loop do not."""
    full = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    assert CIG.tap_tile_kernel(full) is carries
    blocks = _blocks(lower(spec)[1])
    assert ({"taptile_gate", "taptile_pro", "taptile_loop"} <= set(blocks)) is carries
    assert not carries or "kwalk" in blocks
    if carries:
        gate = blocks["taptile_gate"]
        assert [ln for ln in gate if ln.startswith("%tt_cr = urem i32 %cpg, ")] or \
            any(re.match(r"%tt_cr\d* = urem i32 %cpg, " + str(full["tile_k"]) + "$", ln) for ln in gate), gate
        # split-K: every slice starts and ends on a tile (ks a multiple of tile_k)
        assert any(re.match(r"%tt_kr\d* = urem i32 %ks, ", ln) for ln in gate) == (full["split_k"] > 1)


@pytest.mark.parametrize("spec,slots,pixels", [
    ({}, 2, 2), ({"split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"}, 2, 2), ({"tile_k": 64}, 4, 1)],
    ids=["plain", "spk", "64x64x64"])
def test_tap_tile_loop_body(spec, slots, pixels):
    """Two halves, each one wait on the load counter, the held tile's LDS stores, the
    loads A, B, ... (``slots`` a side), the WMMAs, the barrier; no division and no
    K-range compare in the body; each half makes its next tile's A voffsets (``pixels``
    pixel tests a tile: one per A slot, one per thread with tap rows at 64x64x64; twice
    the pair loop's); every load's soffset is the
    tile's scalar channel (A) or K (B) byte offset, a loop phi."""
    body = _blocks(lower(spec)[1])["taptile_loop"]
    half = ["wait", "lds_store"] + ["load_x", "load_w"] * slots + ["wmma", "barrier"]
    assert _kinds(body) == half + half
    assert not [ln for ln in body if " udiv " in ln or " urem " in ln]
    assert not [ln for ln in body if "%k_end" in ln or "klim" in ln]
    assert len([ln for ln in body if ln.startswith("%tp_hok")]) == 2 * pixels
    assert len([ln for ln in body if ln.startswith("%tp_wrap")]) == 2   # one scalar step a tile
    for ln in body:
        if "@llvm.amdgcn.raw.ptr.buffer.load" in ln:
            vo, so = re.search(r"ptr addrspace\(8\) %\w+, i32 (%\w+), i32 (%\w+), i32 0\)", ln).groups()
            a = "%rsrc_x" in ln
            assert re.fullmatch(r"%tt_cb\d+" if a else r"%tt_kb\d+", so), ln
            assert re.fullmatch(r"%(tt_voff|tp_aoffj)\d+" if a else r"%tp_bvoff\d+", vo), ln   # aoffj: chunk j of a row


def test_tap_tile_prologue_runs_a_phantom_tile_for_odd_counts():
    """When ``ntiles`` is odd the prologue's first tile loads at the voffsets ``x_bytes``
    / ``w_bytes`` (out of range with any soffset added, whether the hardware's range
    check counts soffset or not: zeros), with the in-range soffsets of tile 0, and the
    loop runs to ``ntiles + 1``."""
    text = lower({})[1]
    pro = _blocks(text)["taptile_pro"]
    assert any(re.match(r"%tt_odd\d* = and i32 %ntiles\d*, 1$", ln) for ln in pro), pro
    avoff = [ln for ln in pro if re.match(r"%tt_avoff\d+ = select i1 %tt_phantom\d+, i32 %oob_x\d+, i32 %tp_aoff", ln)]
    bvoff = [ln for ln in pro if re.match(r"%tt_bvoff\d+ = select i1 %tt_phantom\d+, i32 %oob_w\d+, i32 %tp_bvoff", ln)]
    assert len(avoff) == 2 and len(bvoff) == 2   # 64x64x32: 2 A and 2 B slots
    first = [ln for ln in pro if "@llvm.amdgcn.raw.ptr.buffer.load" in ln][:4]
    for ln in first:
        vo, so = re.search(r"ptr addrspace\(8\) %\w+, i32 (%\w+), i32 (%?\w+), i32 0\)", ln).groups()
        assert re.fullmatch(r"%tt_(a|b)voff\d+", vo), ln          # the phantom's voffset select
        assert not so.startswith("%oob"), ln                      # never an out-of-range soffset
    body = _blocks(text)["taptile_loop"]
    assert any(re.match(r"%again\d* = icmp ult i32 %t_next\d*, %tt_ntiles\d*$", ln) for ln in body), body


def _slices(kg: int, d: int, tk: int) -> list:
    """Tile counts of the slices of a reduction of ``kg`` at degree ``d`` (ks = ceil(ceil(kg
    / d) / tk) * tk, the launch plan's rule), empty slices left out."""
    ks = -(-(-(-kg // d)) // tk) * tk
    return [-(-min(ks, kg - kb) // tk) for kb in range(0, kg, ks)]


@pytest.mark.parametrize("spec,d", [({}, 1), ({"split_k": 2, "split_k_cluster": 0}, 2),
                                    ({"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle"}, 4), ({"tile_k": 64}, 1),
                                    ({"tile_k": 64, "split_k": 4, "split_k_cluster": 0}, 2)],
                         ids=["plain", "spk", "skc4", "64x64x64", "64x64x64-spk"])
def test_cover_problems_send_slices_through_the_tap_tile_loop(spec, d):
    """The ``cover_tt_*`` problems: cpg an odd multiple of tile_k (the pair loop's test
    fails, the tap-tile loop's holds), slices of odd and of even tile counts (the phantom
    tile both ways), each at least 5 tiles (first, middle and last trips), one tile a tap
    and three (the channel wrap both ways); and the ``cover_tt_cr*`` problems whose cpg
    only a wrong modulus would send there."""
    full = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    tk = full["tile_k"]
    probs = {p[0]: p for p in conv_cover_problems(full) if p[0].startswith("cover_tt_")}
    cr = {n: probs.pop(n) for n in [n for n in probs if n.startswith("cover_tt_cr")]}
    # the prologue's problems: slices of two (xstep) and four (slots, d <= 2) tiles, even
    pro = {n: probs.pop(n) for n in ("cover_tt_xstep", "cover_tt_slots") if n in probs}
    assert set(pro) == ({"cover_tt_xstep", "cover_tt_slots"} if d <= 2 else {"cover_tt_xstep"})
    for name, n, cpg, H, W, K, Y, X, *_ in pro.values():
        assert cpg == tk and set(_slices(Y * X * cpg, d, tk)) == ({2} if name == "cover_tt_xstep" else {4}), name
    assert set(probs) == {"cover_tt_odd", "cover_tt_even", "cover_tt_x1", "cover_tt_odd3", "cover_tt_left"}
    # the test's modulus one off (tile_k -+ 1) would take the loop at these, where tiles cross taps
    assert sorted(cr) == [f"cover_tt_cr{tk - 1}", f"cover_tt_cr{tk + 1}"]
    for name, n, cpg, *_ in cr.values():
        r = int(name[len("cover_tt_cr"):])
        assert cpg % tk != 0 and cpg % r == 0 and cpg % 8 == 0
    counts, qs = set(), set()
    for name, n, cpg, H, W, K, Y, X, *_ in probs.values():
        assert cpg % tk == 0 and cpg % (2 * tk) != 0, name
        qs.add(cpg // tk)
        tiles = _slices(Y * X * cpg, d, tk)
        assert min(tiles) >= 5, (name, tiles)
        counts |= {t % 2 for t in tiles}
    assert counts == {0, 1} and qs == {1, 3}

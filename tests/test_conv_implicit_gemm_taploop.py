"""The uniform-tap K loop of conv_implicit_gemm (python_engine/kernels/conv_implicit_gemm/
taploop.py; docs/conv_implicit_gemm.md, "Uniform-tap loop"): which kernels carry it,
the shape of its body, and its scalar walk against the divisions it replaces. Its
numerics are the emulator's (parity numerics, the ``cover_taps`` problem); both
engines' bytes are the golden shard's."""
from __future__ import annotations

import re

import numpy as np
import pytest

from python_engine.kernels import conv_implicit_gemm as CIG
from python_engine.spec.fields import normalize
from test_conv_implicit_gemm_py import _blocks, _line_kind, lower

TWO_DEEP = [
    ({}, True), ({"split_k": 4, "split_k_cluster": 0}, True), ({"epilogue": "cshuffle", "dtype": "fp16"}, True),
    ({"tile_k": 64, "waves_m": 4, "waves_n": 1}, False),
    ({"tile_m": 32, "tile_n": 32, "waves_m": 2, "waves_n": 2}, False),
    ({"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1}, False),
    ({"tile_m": 128, "tile_n": 128, "tile_k": 64}, False),
    ({"vector_a": 4}, False), ({"vector_a": 3, "vector_b": 3}, False), ({"pipeline": "wavelet"}, False)]


@pytest.mark.parametrize("spec,two_deep", TWO_DEEP)
def test_tap_loop_beside_the_two_deep_loop(spec, two_deep):
    """``two_deep(spec)`` names the kernels whose K loop is the two-deep pipelined one
    (LDS-only barrier fences): those and the ``tap_beside`` tiles (16x16x32 w1x1 and
    128x128x64 w2x2 here) carry the uniform-tap loop, the run-time branch to ``kwalk``
    (the K walk) or ``tap_pro``; ``tp_gen`` (walk on the true side) beside the two-deep
    loop only."""
    full = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    assert CIG.two_deep(full) is two_deep
    tap = CIG.tap_loop_kernel(full)
    assert tap == (two_deep or CIG.tap_beside(full))
    assert CIG.tap_beside(full) == (spec in ({"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1},
                                             {"tile_m": 128, "tile_n": 128, "tile_k": 64}))
    _, text = lower(spec)
    assert (", !mmra !1" in text) == tap
    blocks = _blocks(text)
    assert ("tap_loop" in blocks and "tap_pro" in blocks and "kwalk" in blocks) == tap
    assert ("@llvm.amdgcn.s.wait.loadcnt" in text) == tap
    assert ("%tp_gen" in text) == two_deep and ("%tp_uni" in text) == (tap and not two_deep)
    # the tap-tile loop's gate (64x64x32 and 64x64x64 kernels) sits between the branch and the walk
    assert ("taptile_gate" in blocks) == CIG.tap_tile_kernel(full)
    if two_deep:
        br = [ln for ln in blocks["prologue"] if ln.startswith("br i1 %tp_gen")]
        fb = "taptile_gate" if CIG.tap_tile_kernel(full) else "kwalk"
        assert len(br) == 1 and re.search(rf"label %{fb}\d+, label %tap_pro\d+$", br[0]), br


def _kinds(lines):
    """The loop's kinds (test_conv_implicit_gemm_py._line_kind; loads by resource, the
    load-counter wait, no scheduling barriers), runs squeezed but for the loads."""
    out = []
    for ln in lines:
        k = "wait" if "@llvm.amdgcn.s.wait.loadcnt(i16 0)" in ln else _line_kind(ln)
        if k == "load":
            k = "load_x" if "%rsrc_x" in ln else "load_w"
        if k and k != "fence":
            out.append(k)
    return [k for i, k in enumerate(out) if i == 0 or out[i - 1] != k or k.startswith("load")]


@pytest.mark.parametrize("spec", [{}, {"split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"}], ids=["plain", "spk"])
def test_tap_loop_body(spec):
    """64x64x32 (2 A and 2 B slots per thread): two halves, each one wait on the load
    counter, the held tile's 4 LDS stores, the loads A, B, A, B (x, w, x, w), the
    WMMAs, the barrier; no division, no K-range compare and one pixel test per A slot
    (per pair, not per tile) in the loop; every load's soffset is a loop value (the
    scalar channel / K offset), its voffset a phi or invariant."""
    _, text = lower(spec)
    body = _blocks(text)["tap_loop"]
    half = ["wait", "lds_store", "load_x", "load_w", "load_x", "load_w", "wmma", "barrier"]
    assert _kinds(body) == half + half
    assert not [ln for ln in body if " udiv " in ln or " urem " in ln]
    assert len([ln for ln in body if ln.startswith("%tp_hok")]) == 2
    assert len([ln for ln in body if ln.startswith("%tp_wok")]) == 2
    assert not [ln for ln in body if "%k_end" in ln or "klim" in ln]
    loads = [ln for ln in body if "@llvm.amdgcn.raw.ptr.buffer.load" in ln]
    for ln in loads:
        vo, so = re.search(r"ptr addrspace\(8\) %\w+, i32 (%\w+), i32 (%\w+), i32 0\)", ln).groups()
        a = "%rsrc_x" in ln
        assert re.fullmatch(r"%tp_(cb|as)\d+" if a else r"%tp_(kb|bs)\d+", so), ln
        assert re.fullmatch(r"%tp_voff\d+" if a else r"%tp_bvoff\d+", vo), ln



BESIDE = [{"tile_k": 64}, {"tile_k": 64, "split_k": 4, "split_k_cluster": 0, "dtype": "fp16"},
          {"tile_k": 64, "split_k": 8, "split_k_cluster": 8, "epilogue": "cshuffle"}]


@pytest.mark.parametrize("spec", BESIDE, ids=["plain", "spk", "cluster"])
def test_tap_loop_beside_the_one_tile_loop(spec):
    """64x64x64 w2x2 (tap_beside): the one-tile K walk (``kloop`` with the dynamic buffer
    ``%buf``) and the uniform-tap loop beside it, the branch ``tp_uni`` with the walk on
    its false side; the tap loop's body: per half one load-counter wait, the held
    tile's 8 LDS stores, 8 loads A, B, ... (4 slots a side), 8 WMMAs, the barrier."""
    full = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    assert not CIG.two_deep(full) and CIG.tap_beside(full) and CIG.tap_loop_kernel(full)
    blocks = _blocks(lower(spec)[1])
    assert {"tap_pro", "tap_loop", "kwalk", "kloop"} <= set(blocks)
    assert any(ln.startswith("%buf") for ln in blocks["kloop"])
    body = _beside_body(blocks)
    assert sum("@llvm.amdgcn.wmma" in ln for ln in body) == 16


def _beside_body(blocks: dict, slots: int = 4) -> list:
    """The tap loop's body of a tap_beside kernel, after checking the prologue's branch
    (``tp_uni``: the tap loop, else the fallback: the tap-tile gate at 64x64x64, else the
    walk) and the body's per-half order: one load-counter wait, the held tile's LDS
    stores, ``slots`` A and B loads each, WMMAs, the barrier."""
    br = [ln for ln in blocks["prologue"] if ln.startswith("br i1 %tp_uni")]
    fallback = "taptile_gate" if "taptile_gate" in blocks else "kwalk"
    assert len(br) == 1 and re.search(rf"label %tap_pro\d+, label %{fallback}\d+$", br[0]), br
    body = blocks["tap_loop"]
    half = ["wait", "lds_store"] + ["load_x", "load_w"] * slots + ["wmma", "barrier"]
    assert _kinds(body) == half + half
    return body


W1 = {"tile_m": 32, "tile_n": 32, "tile_k": 32, "waves_m": 1, "waves_n": 1}


@pytest.mark.parametrize("spec", [W1, {**W1, "split_k": 2, "split_k_cluster": 0, "epilogue": "cshuffle"}],
                         ids=["plain", "spk"])
def test_tap_loop_beside_the_one_wave_tile(spec):
    """32x32x32 w1x1 (tap_beside, row_slots): the one-tile walk and the tap loop beside it;
    a thread's 4 A slots are the 4 chunks of its row, so the tap loop tests one pixel a
    pair (one ``tp_hok``, ``tp_wok``, one A voffset phi) and loads chunk j at that voffset
    + 16*j (``add nuw``: LLVM's immediate offset); per half 4 A and 4 B loads, 4 WMMAs."""
    full = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    assert CIG.tap_beside(full) and CIG.row_slots(full) and not CIG.two_deep(full)
    _, text = lower(spec)
    blocks = _blocks(text)
    body = _beside_body(blocks)
    assert sum("@llvm.amdgcn.wmma" in ln for ln in body) == 8
    assert [ln.split(" = ")[0][1:-3] for ln in body if re.match(r"%tp_[hw]ok", ln)] == ["tp_hok", "tp_wok"]
    assert sum(ln.startswith("%tp_voff") for ln in body) == 1
    offs = [re.search(r"= add nuw i32 %tp_voff\d+, (\d+)$", ln) for ln in body if ln.startswith("%tp_aoffj")]
    assert [int(m.group(1)) for m in offs] == [16, 32, 48] * 2
    a = [re.search(r"%rsrc_x\d+, i32 %(\w+?)\d+, ", ln).group(1) for ln in body if "%rsrc_x" in ln and "load" in ln]
    assert a == ["tp_voff", "tp_aoffj", "tp_aoffj", "tp_aoffj"] * 2
    # the slots' one pixel: one row decode, four uniform K states (literal offsets 0, 8, 16, 24)
    pro = blocks["entry"] + blocks["prologue"]
    assert sum(ln.startswith("%a_mok") for ln in pro) == 1
    assert not [ln for ln in pro if ln.startswith(("%a_row", "%a_kv", "%a_slot"))]
    assert [re.search(r"= add i32 (?:%k_begin\d+|0), (\d+)$", ln).group(1) for ln in pro if ln.startswith("%a_rk")] == \
        ["8", "16", "24"]


def test_row_slots_only_on_the_one_wave_tile():
    for spec, rows in ((W1, True), ({**W1, "split_k": 4, "split_k_cluster": 0}, True), ({"tile_k": 64}, False),
                       ({}, False), ({**W1, "pipeline": "wavelet"}, False), ({**W1, "vector_a": 2}, False)):
        assert CIG.row_slots(normalize(CIG.FAMILY, CIG.FIELDS, spec)) is rows, spec


W16 = {"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1}
T128 = {"tile_m": 128, "tile_n": 128, "tile_k": 64}


def test_tap_rows_where_row_slots_would_cost_the_walk():
    """``row_threads`` = threads / tile_m where the threads split each row's chunks evenly;
    row slots in both loops only at one thread a row and at most 4 chunks (32x32x32 w1x1);
    every other such kernel has row slots in its tap loop only (``tap_rows``)."""
    cases = ((W1, 1, True, False), (W16, 2, False, True), ({"tile_k": 64}, 2, False, True),
             (T128, 1, False, True), ({}, 0, False, False), ({"tile_k": 64, "waves_m": 4, "waves_n": 1}, 0, False, False),
             ({**W16, "pipeline": "wavelet"}, 0, False, False), ({**T128, "vector_a": 4, "vector_b": 4}, 0, False, False))
    for spec, r, rows, taprows in cases:
        full = normalize(CIG.FAMILY, CIG.FIELDS, spec)
        assert (CIG.row_threads(full), CIG.row_slots(full), CIG.tap_rows(full)) == (r, rows, taprows), spec


@pytest.mark.parametrize("spec,r,chunks", [({**W16, "split_k": 2, "split_k_cluster": 0}, 2, 2), (T128, 1, 8)],
                         ids=["16x16x32", "128x128x64"])
def test_tap_rows_one_pixel_a_thread_in_the_tap_loop_only(spec, r, chunks):
    """Tap rows: the tap prologue decodes one pixel a thread (row ``ltid / r``, ``tp_row``;
    slot 0 at chunk ``(ltid % r)*s``, ``tp_rkoff``), and the tap loop tests that pixel once a
    pair (one voffset phi) and loads chunk j at voffset + 16*j; the K walk keeps its slots
    ``ltid + j*threads`` (``a_slot``), decoded before the branch."""
    full = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    assert CIG.tap_beside(full) and CIG.tap_rows(full) and not CIG.row_slots(full)
    _, text = lower(spec)
    blocks = _blocks(text)
    body = _beside_body(blocks, chunks)   # A slots = chunks a thread; B slots as many (square tiles)
    assert sum(ln.startswith("%tp_voff") for ln in body) == 1
    assert [re.match(r"%(tp_[hw]ok)\d+ = ", ln).group(1) for ln in body if re.match(r"%tp_[hw]ok", ln)] == \
        ["tp_hok", "tp_wok"]
    offs = [re.search(r"= add nuw i32 %tp_voff\d+, (\d+)$", ln) for ln in body if ln.startswith("%tp_aoffj")]
    assert [int(m.group(1)) for m in offs] == [16 * j for j in range(1, chunks)] * 2
    tpro = blocks["tap_pro"]
    row = [ln for ln in tpro if ln.startswith("%tp_row")]
    assert len(row) == 1 and re.search(rf"= udiv i32 %\w+, {r}$", row[0]), row
    assert sum(bool(re.match(r"%tp_rkoff\d+ = ", ln)) for ln in tpro) == 1
    assert sum(ln.startswith("%a_mok") for ln in tpro) == 1   # the tap loop's one pixel decode
    pro = blocks["entry"] + blocks["prologue"]
    assert sum(ln.startswith("%a_slot") for ln in pro) >= 1 and not [ln for ln in pro if ln.startswith("%tp_row")]


@pytest.mark.parametrize("spec,waves", [
    ({"tile_k": 64}, "7"), ({"tile_k": 64, "epilogue": "cshuffle"}, "6"),
    ({"tile_k": 64, "epilogue": "cshuffle", "split_k": 4, "split_k_cluster": 0}, "7"),
    ({"tile_k": 64, "split_k": 8, "split_k_cluster": 8}, "7"),
    ({}, "9"), ({"split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"}, "9"),
    ({"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle"}, "9"), ({"split_k": 4, "split_k_cluster": 4}, None),
    ({"tile_k": 64, "waves_m": 4, "waves_n": 1}, None), ({"tile_k": 64, "pipeline": "wavelet"}, None),
    ({**W1, "split_k": 2, "split_k_cluster": 0}, "8"), (W1, "8"), ({**W1, "epilogue": "cshuffle"}, "7"),
    ({**W1, "epilogue": "cshuffle", "split_k": 2, "split_k_cluster": 0}, "7"), ({**W1, "acc_epilogue": "relu"}, "8"),
    ({**W1, "pipeline": "wavelet"}, None), ({**W1, "vector_a": 4, "vector_b": 4}, None),
    ({"tile_m": 32, "tile_n": 32, "waves_m": 2, "waves_n": 2}, None),
    ({**W16, "split_k": 2, "split_k_cluster": 0}, "16"), ({**W16, "epilogue": "cshuffle"}, "12"),
    (T128, "3"), ({**T128, "split_k": 15, "split_k_cluster": 15, "epilogue": "cshuffle"}, "3")])
def test_waves_per_eu_only_beside(spec, waves):
    """``amdgpu-waves-per-eu`` is emitted only on tap_beside kernels and the two-deep
    kernels with the tap-tile loop: the occupancy of their kernel before the tap loop
    (64x64x64: 7, the plain cshuffle form 6; 32x32x32 w1x1: 8, the cshuffle forms 7;
    16x16x32 w1x1: 16, the cshuffle forms 12; 128x128x64: 3) or the tap-tile loop
    (64x64x32 w2x2: 9; not the cluster form with the default epilogue, which has no
    tap-tile loop)."""
    _, text = lower(spec)
    got = re.findall(r'"amdgpu-waves-per-eu"="(\d+)"', text)
    assert got == ([waves] if waves else [])
    full = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    assert (CIG.tap_beside(full) or (CIG.two_deep(full) and CIG.tap_tile_kernel(full))) is (waves is not None)


@pytest.mark.parametrize("spec", [{}, {"split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"}], ids=["plain", "spk"])
def test_tap_loop_barriers_are_bracketed_by_scheduling_barriers(spec):
    """Each of the tap loop's two workgroup barriers (release fence, s.barrier, acquire
    fence) has a ``sched.barrier(0)`` right before and right after it, so LLVM keeps
    ``s_barrier_signal`` and ``s_barrier_wait`` adjacent: work in that gap costs
    llvm-mca's gfx1250 model a second barrier latency (docs/conv_implicit_gemm.md,
    "Uniform-tap loop", the last step: 3411 -> 2428 cycles per K tile)."""
    _, text = lower(spec)
    body = _blocks(text)["tap_loop"]
    at = [i for i, ln in enumerate(body) if ln == "call void @llvm.amdgcn.s.barrier()"]
    assert len(at) == 2
    sched = "call void @llvm.amdgcn.sched.barrier(i32 0)"
    for i in at:
        assert body[i - 1].startswith('fence syncscope("workgroup") release'), body[i - 2:i + 3]
        assert body[i + 1].startswith('fence syncscope("workgroup") acquire'), body[i - 2:i + 3]
        assert body[i - 2] == sched and body[i + 2] == sched, body[i - 2:i + 3]


def _pairs(k_begin, npairs, tk, cpg, X, dh, dw, C, W):
    """The uniform-tap walk of taploop.py (tap_state, then tap_step per pair) in plain
    integers: yields (cb, kb, xd, yd, kox) per pair."""
    pixb, rowb = 2 * C, 2 * C * W
    dcx = dh * rowb - X * dw * pixb
    tap, c = k_begin // cpg, k_begin % cpg
    xd, yd = (tap % X) * dw, (tap // X) * dh
    cb, kb, kox = 2 * c, 2 * k_begin, yd * rowb + xd * pixb
    for _ in range(npairs):
        yield cb, kb, xd, yd, kox
        cb += 4 * tk
        wrap = cb == 2 * cpg
        cb = 0 if wrap else cb
        xd += dw if wrap else 0
        wx = xd == X * dw
        xd = 0 if wx else xd
        yd += dh if wx else 0
        kox += (dw * pixb if wrap else 0) + (dcx if wx else 0)
        kb += 4 * tk


@pytest.mark.parametrize("tk", [32, 64])
def test_tap_walk_matches_division(tk):
    """Per pair of K tiles starting at element k (k_begin on a pair, cpg a multiple of
    2*tile_k), the scalar walk equals 2*(k % cpg), 2*k, the tap's x*dil_w, y*dil_h and
    byte offset ``(y*dil_h*W + x*dil_w)*2*C`` from the divisions, over every pair of
    the reduction."""
    rng = np.random.default_rng(tk)
    for _ in range(300):
        cpg = 2 * tk * int(rng.integers(1, 5))
        X, Y = int(rng.integers(1, 8)), int(rng.integers(1, 8))
        dh, dw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        C, W = cpg * int(rng.integers(1, 3)), int(rng.integers(1, 30))
        npairs_all = Y * X * cpg // (2 * tk)
        kb0 = 2 * tk * int(rng.integers(0, npairs_all))
        for i, (cb, kb, xd, yd, kox) in enumerate(_pairs(kb0, npairs_all - kb0 // (2 * tk), tk, cpg, X, dh, dw,
                                                         C, W)):
            k = kb0 + 2 * tk * i
            x, y = (k // cpg) % X, (k // cpg) // X
            assert (cb, kb, xd, yd) == (2 * (k % cpg), 2 * k, x * dw, y * dh), (cpg, X, kb0, i)
            assert kox == 2 * (y * dh * W + x * dw) * C
            assert (k % cpg) + 2 * tk <= cpg   # the pair lies in one tap

"""WMMA fragments and the K loop of family ``conv_implicit_gemm`` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/mainloop.cpp): the LDS fragment
loads, the WMMAs of one K tile, and the double-buffered main loop (mem and
wavelet pipelines). Methods of :class:`.emitter.Kernel` (mixin :class:`MainLoop`)."""
from __future__ import annotations

from ...ir import types as T
from ...ir.values import const_int, i1, i32, zeroinit
from .lds import CHUNK
from .spec import WMMA_K, WMMA_M, WMMA_N, WMMA_KEY, threads

# WMMAs per wave and K tile (least, most) for the two-deep pipelined K loop, and the
# most load slots per thread (A + B) it holds in registers across a half (4 VGPRs each).
PIPELINE_WMMAS = (2, 4)
PIPELINE_HELD_SLOTS = 4


def two_deep(spec: dict) -> bool:
    """Whether a (valid, defaults filled) spec's K loop is the two-deep pipelined loop
    (:meth:`MainLoop.pipelined_loop`, with the uniform-tap loop beside it): the mem
    pipeline with PIPELINE_WMMAS[0] to PIPELINE_WMMAS[1] WMMAs per wave and K tile
    and 16-byte A and B slots (``vector_a = vector_b = 8``), at most
    PIPELINE_HELD_SLOTS of them per thread (``ceil(tile*tile_k/8 / threads)`` per
    side)."""
    lo, hi = PIPELINE_WMMAS
    tm, tn, tk = spec["tile_m"], spec["tile_n"], spec["tile_k"]
    wmmas = (tm // (WMMA_M * spec["waves_m"])) * (tn // (WMMA_N * spec["waves_n"])) * (tk // WMMA_K)
    t = threads(spec)
    slots = -(-tm * tk // CHUNK // t) + -(-tn * tk // CHUNK // t)
    return (spec["pipeline"] == "mem" and lo <= wmmas <= hi and spec["vector_a"] == spec["vector_b"] == CHUNK
            and slots <= PIPELINE_HELD_SLOTS)


# The tiles (tile_m, tile_n, tile_k, waves_m, waves_n) whose one-tile K loop has the
# uniform-tap loop beside it -> the waves per SIMD their kernel asks LLVM for: the
# occupancy of the class's one-tile kernel before the tap loop (LLVM 22.1, parity perf),
# (default epilogue, split-K cshuffle, plain cshuffle). 64x64x64 w2x2 (issue 40): 7, 7, 6;
# 32x32x32 w1x1 (issue 40, the AOT grid's one-wave two-stage tile): 8, 7, 7; 16x16x32 w1x1
# (issue 40, the AOT grid's small tile): 16, 12, 12; 128x128x64 w2x2 (issue 40, the AOT
# grid's cluster S=15 tile): 3, 3, 3.
TAP_BESIDE_WAVES = {(64, 64, 64, 2, 2): (7, 7, 6), (32, 32, 32, 1, 1): (8, 7, 7),
                    (16, 16, 32, 1, 1): (16, 12, 12), (128, 128, 64, 2, 2): (3, 3, 3)}


# The most chunks a row (tile_k/8) for row slots shared by both K loops (row_slots): each is a
# K state of the walk; at 128x128x64 its 8 uniform states cost 5076 llvm-mca cycles per K
# tile, not 1941 (issue 40, docs/conv_implicit_gemm.md).
ROW_SLOT_CHUNKS = 4


def _tile(spec: dict) -> tuple:
    return tuple(spec[k] for k in ("tile_m", "tile_n", "tile_k", "waves_m", "waves_n"))


def tap_beside(spec: dict) -> bool:
    """Whether a (valid, defaults filled) spec's one-tile K loop
    (:meth:`MainLoop.double_buffer_loop`) has the uniform-tap loop beside it: the mem
    pipeline with 16-byte A and B slots on a tile of :data:`TAP_BESIDE_WAVES`
    (64x64x64 w2x2, 32x32x32 w1x1, 16x16x32 w1x1, 128x128x64 w2x2; plain, fused,
    two-stage and cluster). Its kernel
    asks for :func:`tap_beside_waves` waves per SIMD (``amdgpu-waves-per-eu``).
    Measured with llc-22 -O3 (bench/mainloop.py, docs/conv_implicit_gemm.md
    "Uniform-tap loop"): at 64x64x64 the two-deep K walk would cost a wave (146 VGPRs
    alone, 160 beside the tap loop: 6 waves, not 7) and more cycles than the one-tile
    loop (2490 vs 1366 llvm-mca cycles per K tile); 32x32x32 w1x1 holds 8 load slots a
    thread, past the two-deep loop's PIPELINE_HELD_SLOTS."""
    return (spec["pipeline"] == "mem" and spec["vector_a"] == spec["vector_b"] == CHUNK
            and _tile(spec) in TAP_BESIDE_WAVES)


def tap_beside_waves(spec: dict) -> int | None:
    """The ``amdgpu-waves-per-eu`` of a (valid, defaults filled) spec's kernel: for
    :func:`tap_tile_kernel` kernels of a two-deep tile the :data:`TAP_TILE_WAVES`
    value (the occupancy they had before the tap-tile loop); for :func:`tap_beside`
    kernels the occupancy their one-tile kernel had before the tap
    loop (:data:`TAP_BESIDE_WAVES`: by epilogue, and for cshuffle plain or split-K),
    which LLVM 22.1 then meets with no spill (without it LLVM allocates 150 to 162
    VGPRs at 64x64x64, 138 at 32x32x32: a wave fewer); else None."""
    if tap_tile_kernel(spec) and TAP_TILE_WAVES[_tile(spec)] is not None:
        return TAP_TILE_WAVES[_tile(spec)]
    if not tap_beside(spec):
        return None
    default, split_cshuffle, plain_cshuffle = TAP_BESIDE_WAVES[_tile(spec)]
    if spec["epilogue"] != "cshuffle":
        return default
    plain = spec["split_k"] == 1 and spec["split_k_cluster"] == 0
    return plain_cshuffle if plain else split_cshuffle


def row_threads(spec: dict) -> int:
    """The load threads per tile row of a (valid, defaults filled) spec whose A load
    slots are rows in the uniform-tap loop (:func:`row_slots`, :func:`tap_rows`), else 0: ``threads / tile_m`` for a
    :func:`tap_beside` kernel whose threads are a multiple of ``tile_m`` and split a
    row's ``tile_k/8`` chunks evenly (32x32x32 w1x1: 1; 16x16x32 w1x1: 2)."""
    if not tap_beside(spec):
        return 0
    t, tm, per_row = threads(spec), spec["tile_m"], spec["tile_k"] // CHUNK
    if t % tm or per_row % (t // tm):
        return 0
    return t // tm


def row_slots(spec: dict) -> bool:
    """Whether a (valid, defaults filled) spec's A load slots are rows in both K loops:
    a :func:`tap_beside` kernel with one load thread per tile row (:func:`row_threads`
    1) and at most 4 chunks a row (each row slot is a K state of the walk; 32x32x32
    w1x1: 32 threads, 32 rows), whose A slot ``j`` is chunk ``j`` of the thread's row
    (vector ``ltid*tile_k/8 + j``), not vector ``ltid + j*threads``: the slots share
    one pixel, so the uniform-tap loop tests one pixel per thread and pair (one
    voffset, chunk ``j`` at the load's immediate offset ``16*j``), and their K states
    are uniform (chunk ``j`` of every row)."""
    return row_threads(spec) == 1 and spec["tile_k"] // CHUNK <= ROW_SLOT_CHUNKS


def tap_rows(spec: dict) -> bool:
    """Whether a (valid, defaults filled) spec's uniform-tap loop has A load slots of its
    own: :func:`row_threads` ``r > 0`` and not :func:`row_slots` (16x16x32 w1x1: 32
    threads, 16 rows, r = 2; 64x64x64 w2x2: r = 2; 128x128x64 w2x2: r = 1, 8 chunks a
    row). The tap loop's slot ``j`` is vector ``ltid*s + j`` (``s = tile_k/8/r``),
    chunk ``(ltid % r)*s + j`` of row ``ltid / r``, one pixel a thread as with
    :func:`row_slots`; the K walk beside it keeps the slots ``ltid + j*threads`` (their
    shared K state: row slots would give the walk one K state per slot; at 16x16x32 its
    VGPRs more spill values that live across it, at 128x128x64 its 8 uniform states
    cost 5076 llvm-mca cycles per K tile, not 1941)."""
    return row_threads(spec) > 0 and not row_slots(spec)


def tap_loop_kernel(spec: dict) -> bool:
    """Whether a (valid, defaults filled) spec's kernel carries the uniform-tap K loop:
    :func:`two_deep` (beside the two-deep K walk) or :func:`tap_beside` (beside the
    one-tile K walk)."""
    return two_deep(spec) or tap_beside(spec)


# The tiles whose kernel carries the tap-tile loop (tap_tile_kernel) -> the waves per SIMD its
# kernel asks LLVM for (``amdgpu-waves-per-eu``; None: the one-tile loop's tap_beside_waves).
# 64x64x32 w2x2 (two-deep): 9, the occupancy of its kernels before the tap-tile loop (without
# the attribute LLVM 22.1 allocates 113 to 115 VGPRs, 8 waves, for 46 of its 55 kernels);
# 64x64x64 w2x2 (beside the one-tile loop). Left out, measured with LLVM 22.1 (parity perf;
# docs/conv_implicit_gemm.md, "Tap-tile loop"): the 16x16x32 and 32x32x32 w1x1 kernels spill
# at their waves (5 and 7 VGPRs), the 128x128x64 loop takes 5654 llvm-mca cycles per K tile
# (66 s_set_vgpr_msb); and the cluster kernels with the default epilogue, 112 VGPRs before,
# spill 4 to 9 VGPRs at 9 waves (tap_tile_kernel).
TAP_TILE_WAVES = {(64, 64, 32, 2, 2): 9, (64, 64, 64, 2, 2): None}


def tap_tile_kernel(spec: dict) -> bool:
    """Whether a (valid, defaults filled) spec's kernel carries the tap-tile K loop
    (:meth:`.taptile.TapTile.taptile_loop`) between the uniform-tap loop and the K walk:
    a :func:`tap_loop_kernel` of a :data:`TAP_TILE_WAVES` tile, but a cluster kernel
    with the default epilogue. It takes the channel counts with an odd number of K
    tiles a tap (``cpg % tile_k == 0``, ``cpg % (2*tile_k) != 0``: cpg 64 at tile_k 64,
    32 and 96 at tile_k 32) and the split-K slices the pair loop leaves (with ``ks %
    tile_k == 0``)."""
    if spec["split_k_cluster"] and spec["epilogue"] == "default":
        return False
    return tap_loop_kernel(spec) and _tile(spec) in TAP_TILE_WAVES


class MainLoop:
    """Phase methods of :class:`.emitter.Kernel`: WMMA and the main loop."""

    # -- WMMA ------------------------------------------------------------------------
    def fragment(self, lds, base, row, kk, hint):
        """The 16-element A/B fragment of ``row`` (tile row) at K step ``kk``: lane l
        holds K = 8*(l/16) + [0,8) and 16 + 8*(l/16) + [0,8) of the 32, i.e. chunks
        ``4*kk + l/16`` and ``4*kk + 2 + l/16`` of the (swizzled) row."""
        b = self.b
        v8 = T.vec(8, self.et)
        ch = b.add(self.half, i32(4 * kk), "f_ch") if kk else self.half
        idx = b.add(base, self.swz_index(row, ch, None, "f"), "f_idx")
        p0 = b.gep(self.et, lds, [idx], hint)
        lo = b.load(v8, p0, 16, "f_lo")
        ch2 = b.add(self.half, i32(4 * kk + 2), "f_chh")
        idx2 = b.add(base, self.swz_index(row, ch2, None, "fh"), "f_idxh")
        p1 = b.gep(self.et, lds, [idx2], hint)
        hi = b.load(v8, p1, 16, "f_hi")
        return b.shufflevector(lo, hi, list(range(16)), "frag")

    def compute(self, buf, accs):
        """All WMMAs of one K tile from LDS buffer ``buf``; returns the new accumulators."""
        b = self.b
        abase = b.mul(buf, i32(self.tm * self.tk), "c_abuf")
        bbase = b.mul(buf, i32(self.tn * self.tk), "c_bbuf")
        accs = list(accs)
        key = WMMA_KEY[self.s["dtype"]]
        if tap_beside(self.s):
            # fragment rows 16 apart share the swizzle phase (its period, rows_per_phase *
            # period of lds.swizzle, is 16 rows at tile_k 64 and 32), so row i's fragment is row
            # 0's at a constant element offset, which LLVM folds into the ds_load offset
            # (8 fewer address VGPRs at 64x64x64: the kernel fits tap_beside_waves unspilled)
            ra = [b.add(abase, i32(i * WMMA_M * self.tk), "c_arow") if i else abase for i in range(self.fm)]
            rb = [b.add(bbase, i32(j * WMMA_N * self.tk), "c_brow") if j else bbase for j in range(self.fn)]
            rows = ([self.a_rows[0]] * self.fm, [self.b_rows[0]] * self.fn)
        else:
            ra, rb, rows = [abase] * self.fm, [bbase] * self.fn, (self.a_rows, self.b_rows)
        for kk in range(self.tk // WMMA_K):
            if kk and tap_beside(self.s):   # one K step's fragments live at a time
                b.call("sched_barrier", [i32(0)])
            fa = [self.fragment(self.lds_a, ra[i], rows[0][i], kk, "fa_p") for i in range(self.fm)]
            fb = [self.fragment(self.lds_b, rb[j], rows[1][j], kk, "fb_p") for j in range(self.fn)]
            for i in range(self.fm):
                for j in range(self.fn):
                    k = i * self.fn + j
                    accs[k] = b.call(key, [i1(False), fa[i], i1(False), fb[j], const_int(T.I16, 0),
                                           accs[k], i1(False), i1(False)], "acc")
        return accs

    # -- main loop -------------------------------------------------------------------
    def main_loop(self):
        b = self.b
        # Fragment rows (tile rows of this wave's fragments) and the lane's K offset.
        half = b.binop("lshr", self.lane, i32(4), "half")
        self.lrow = b.binop("and", self.lane, i32(15), "lrow")
        self.lane_k = b.mul(half, i32(8), "lane_k")
        self.half = half
        wm0 = b.mul(self.wave_m, i32(self.wm), "wm_org")
        wn0 = b.mul(self.wave_n, i32(self.wn), "wn_org")
        self.wm0, self.wn0 = wm0, wn0
        self.a_rows = [b.add(b.add(wm0, i32(i * WMMA_M), "ar"), self.lrow, "arow") for i in range(self.fm)]
        self.b_rows = [b.add(b.add(wn0, i32(j * WMMA_N), "br"), self.lrow, "brow") for j in range(self.fn)]
        nacc = self.fm * self.fn
        zero = zeroinit(T.vec(8, T.FLOAT))
        any_tile = b.icmp("ugt", self.ntiles, i32(0), "any_tile")
        entry = b.block
        pro = b.new_block("prologue")
        if self.pipelines_two_deep():
            done, exits = self.pipelined_loop(any_tile, pro, nacc, zero)
        else:
            done, exits = self.double_buffer_loop(any_tile, pro, nacc, zero)
        b.position(done)
        self.accs = []
        for k in range(nacc):
            ph = b.phi(T.vec(8, T.FLOAT), "acc_out")
            ph.add_incoming(zero, entry)
            for accs, blk in exits:
                ph.add_incoming(accs[k], blk)
            self.accs.append(ph.result)

    def pipelines_two_deep(self) -> bool:
        """Whether the K loop is :meth:`pipelined_loop`: the mem pipeline with
        PIPELINE_WMMAS[0] to PIPELINE_WMMAS[1] WMMAs per wave and K tile and 16-byte A
        and B slots (whole vectors, not padded pixels), at most PIPELINE_HELD_SLOTS
        of them per thread. Other tiles keep :meth:`double_buffer_loop`, measured
        with bench/mainloop.py and parity perf (docs/conv_implicit_gemm.md "Main
        loop"): larger wave tiles (128x128x64: 32 WMMAs, 316 VGPRs, 3 waves) lose a
        wave to the unrolled body's registers, the one-WMMA 16x16 tile drops from 16
        to 12 waves for no cycle gain, the one-wave 32x32x32 tile (8 slots per
        thread: 32 held VGPRs) from 8 to 6 waves and 1299 to 1605 modelled cycles
        per K tile, and the narrow-slot paths issue more, smaller loads whose
        address registers the unrolled body reuses (more s_wait_xcnt)."""
        return two_deep(self.s)

    def enter_loop(self, loop, nacc: int):
        """End the prologue (barrier, branch into ``loop``) and open ``loop`` with the
        phis of the tile index ``t`` and the ``nacc`` accumulators; returns (the
        prologue's last block, the t phi, the accumulator phis)."""
        b = self.b
        self.barrier()
        pro_end = b.block
        b.br(loop)
        b.position(loop)
        t = b.phi(T.I32, "t")
        return pro_end, t, [b.phi(T.vec(8, T.FLOAT), "acc_in") for _ in range(nacc)]

    def k_state_phis(self, states):
        """Loop-carried phis of the CARRIED fields of the A K ``states``; returns
        (phis, the states with the phi results in those fields)."""
        b = self.b
        phis = [{f: b.phi(T.I32, "k_" + f) for f in self.CARRIED} for _ in states]
        cur = [dict(s0, **{f: ph[f].result for f in self.CARRIED}) for s0, ph in zip(states, phis)]
        return phis, cur

    def pipelined_loop(self, any_tile, pro, nacc, zero):
        """The mem pipeline's K loop: unrolled by two (LDS buffer 0, then buffer 1,
        both constants, so fragment and store addresses fold into ds offsets) and
        software-pipelined two tiles deep. The prologue stores tile 0 and holds tile
        1 in registers; the half computing tile t (buffer t&1) first stores the held
        tile t+1 into the other buffer, then issues tile t+2's global loads, which
        the next half's LDS stores use first: a whole half (every WMMA and LDS load
        of a tile) lies between issue and use. Register cost: the held tile's raw
        values are loop-carried in the registers the loads in flight occupied
        before. An iteration runs tiles t and t+1 with no exit between them: for an
        odd tile count the last half computes tile ``ntiles``, which lies past
        ``k_end``, so every one of its loads took the out-of-range offset and read
        zeros (its WMMAs add 0). Returns ``(done, [(accs, exiting block)])``."""
        b = self.b
        loop = b.new_block("kloop")
        done = b.new_block("kdone")
        b.cond_br(any_tile, pro, done)
        b.position(pro)
        tap_exits = self.tap_loop(nacc, zero, done)
        self.store_tile(self.load_tile(self.k_begin, self.a_states), i32(0))
        st1 = self.advance(self.a_states, True)
        held = self.load_tile(b.add(self.k_begin, i32(self.tk), "k_one"), st1)
        st2 = self.advance(st1, True)
        pro_end, t, acc_phis = self.enter_loop(loop, nacc)
        # The A K states of tile t+2 and the held raw values of tile t+1 (loop-carried).
        st_phis, cur = self.k_state_phis(st2)
        val_phis, vals = self.held_phis(held)
        accs, nxt = [ph.result for ph in acc_phis], cur
        for buf in (0, 1):
            tb = b.add(t.result, i32(buf), "t_half", ("nuw", "nsw")) if buf else t.result
            accs, nxt, vals = self.k_half(tb, accs, nxt, vals, buf)
        t2 = b.add(t.result, i32(2), "t_next", ("nuw", "nsw"))
        loop_end = self.close_loop(loop, done, pro_end, (t, t2), (acc_phis, zero, accs), (st_phis, st2, nxt))
        self.close_held(val_phis, held, vals, pro_end, loop_end)
        return done, tap_exits + [(accs, loop_end)]

    def held_phis(self, held):
        """Loop phis of the held tile's raw values (``held``: (A values, B values) of the
        prologue); returns (the phis, their results in the same shape)."""
        b = self.b
        phis = ([b.phi(v.type, "a_held") for v in held[0]], [b.phi(v.type, "b_held") for v in held[1]])
        return phis, tuple([ph.result for ph in side] for side in phis)

    def close_held(self, phis, held, vals, pro_end, loop_end):
        """The incoming edges of :meth:`held_phis`' phis: ``held`` from ``pro_end``,
        ``vals`` from ``loop_end``."""
        for phs, v0, v1 in zip(phis, held, vals):
            for ph, x0, x1 in zip(phs, v0, v1):
                ph.add_incoming(x0, pro_end)
                ph.add_incoming(x1, loop_end)

    def k_half(self, t, accs, cur, vals, buf: int):
        """One half of :meth:`pipelined_loop`: tile ``t`` (i32) is in LDS buffer ``buf``
        (0 or 1), ``vals`` holds tile t+1, ``cur`` the A K states of tile t+2. Stores
        ``vals`` into buffer 1-buf, issues tile t+2's loads, then (fenced by scheduling
        barriers, mask 0: nothing crosses) the WMMAs, then the K-state step and the
        barrier. Returns (accumulators, K states of tile t+3, raw values of tile t+2)."""
        b = self.b
        self.store_tile(vals, i32(1 - buf))
        t2 = b.add(t, i32(2), "t_pre", ("nuw", "nsw"))
        kpre = b.add(self.k_begin, b.mul(t2, i32(self.tk), "k_step"), "k_pre")
        nvals = self.load_tile(kpre, cur)
        b.call("sched_barrier", [i32(0)])
        new = self.compute(i32(buf), accs)
        b.call("sched_barrier", [i32(0)])
        nxt = self.advance(cur, True)
        self.barrier(lds_only=True)
        return new, nxt, nvals

    def double_buffer_loop(self, any_tile, pro, nacc, zero):
        """The K loop of the wavelet pipeline, and of the mem pipeline where
        :meth:`pipelines_two_deep` is false: iteration t computes LDS buffer t&1 while
        tile t+1 goes to buffer (t+1)&1 (mem: its loads issued before the WMMAs and
        stored after them). Returns ``(done, [(accs, exiting block)])``."""
        b = self.b
        loop = b.new_block("kloop")
        done = b.new_block("kdone")
        b.cond_br(any_tile, pro, done)
        # Prologue: tile 0 -> buffer 0, barrier.
        b.position(pro)
        tap_exits = []
        if self.wavelet:
            pl = b.new_block("pro_load")
            pj = b.new_block("pro_join")
            b.cond_br(self.is_loader, pl, pj)
            b.position(pl)
            self.store_tile(self.load_tile(self.k_begin, self.a_states), i32(0))
            b.br(pj)
            b.position(pj)
        else:
            if tap_beside(self.s):
                tap_exits = self.tap_loop(nacc, zero, done)
            self.store_tile(self.load_tile(self.k_begin, self.a_states), i32(0))
        st1 = self.advance(self.a_states)
        # Loop: iteration t computes buffer t&1 while tile t+1 goes to buffer (t+1)&1.
        pro_end, t, acc_phis = self.enter_loop(loop, nacc)
        accs = [ph.result for ph in acc_phis]
        # The A K states of tile t+1 (loop-carried).
        st_phis, cur = self.k_state_phis(st1)
        buf = b.binop("and", t.result, i32(1), "buf")
        nbuf = b.binop("xor", buf, i32(1), "nbuf")
        t1 = b.add(t.result, i32(1), "t_next", ("nuw", "nsw"))
        knext = b.add(self.k_begin, b.mul(t1, i32(self.tk), "k_step"), "k_next")
        if self.wavelet:
            new, nxt = self.wavelet_step(buf, nbuf, knext, accs, cur)
        else:
            # Software pipeline: tile t+1's global loads are issued first and fenced
            # from the WMMAs by a scheduling barrier (mask 0: nothing crosses), so the
            # machine scheduler cannot sink them; their wait lands at the LDS stores
            # after the WMMAs, which a second scheduling barrier keeps below the math
            # together with the K-state step (so no load-address register is reused
            # while the loads are in flight).
            vals = self.load_tile(knext, cur)
            b.call("sched_barrier", [i32(0)])
            new = self.compute(buf, accs)
            b.call("sched_barrier", [i32(0)])
            nxt = self.advance(cur)
            self.store_tile(vals, nbuf)
        self.barrier()
        loop_end = self.close_loop(loop, done, pro_end, (t, t1), (acc_phis, zero, new), (st_phis, st1, nxt))
        return done, tap_exits + [(new, loop_end)]

    def wavelet_step(self, buf, nbuf, knext, accs, cur):
        """One wavelet-pipeline iteration (twin: Kernel::wavelet_step, mainloop.cpp): the loader
        waves store tile t+1 to buffer ``nbuf`` while the compute waves run the WMMAs on
        ``buf``; both paths join with phis. Returns ``(accumulators, next K states)``."""
        b = self.b
        ld = b.new_block("wl_load")
        cp = b.new_block("wl_compute")
        jn = b.new_block("wl_join")
        b.cond_br(self.is_loader, ld, cp)
        b.position(ld)
        self.store_tile(self.load_tile(knext, cur), nbuf)
        nxt = self.advance(cur)
        b.br(jn)
        b.position(cp)
        new = self.compute(buf, accs)
        cp_end = b.block
        b.br(jn)
        b.position(jn)
        merged = []
        for old, nw in zip(accs, new):
            ph = b.phi(T.vec(8, T.FLOAT), "acc_j")
            ph.add_incoming(old, ld)
            ph.add_incoming(nw, cp_end)
            merged.append(ph.result)
        jst = []
        for s1, s0 in zip(nxt, cur):
            d = dict(s1)
            for f in self.CARRIED:
                ph = b.phi(T.I32, "k_j" + f)
                ph.add_incoming(s1[f], ld)
                ph.add_incoming(s0[f], cp_end)
                d[f] = ph.result
            jst.append(d)
        return merged, jst

    def close_loop(self, loop, done, pro_end, tt, acc, st):
        """The back-edge of a K-walk loop (:meth:`close_trip`) and the incoming edges of its
        K-state phis: ``st = (K-state phis, prologue states, latch states)``. Returns the
        latch block."""
        loop_end = self.close_trip(loop, done, pro_end, tt, acc)
        for ph, s1, s2 in zip(*st):
            for f in self.CARRIED:
                ph[f].add_incoming(s1[f], pro_end)
                ph[f].add_incoming(s2[f], loop_end)
        return loop_end

    def close_trip(self, loop, done, pro_end, tt, acc, bound=None):
        """The back-edge of a K loop: branch to ``loop`` while ``t_next < bound``
        (default ``ntiles``), else to ``done``, and the incoming edges of its trip and
        accumulator phis from the prologue (``pro_end``) and the latch: ``tt = (t phi,
        t_next)``, ``acc = (phis, prologue value, latch values)``. Returns the latch
        block."""
        b = self.b
        t, t_next = tt
        again = b.icmp("ult", t_next, self.ntiles if bound is None else bound, "again")
        loop_end = b.block
        b.cond_br(again, loop, done)
        t.add_incoming(i32(0), pro_end)
        t.add_incoming(t_next, loop_end)
        for ph, nw in zip(acc[0], acc[2]):
            ph.add_incoming(acc[1], pro_end)
            ph.add_incoming(nw, loop_end)
        return loop_end

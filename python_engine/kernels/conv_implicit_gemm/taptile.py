"""The tap-tile K loop of family ``conv_implicit_gemm`` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/taptile.cpp): the uniform-tap loop
stepped one K tile at a time, for the channel counts and split-K slices the
pair loop (:mod:`.taploop`) leaves to the K walk but whose every K tile still
lies in one filter tap. Methods of :class:`.emitter.Kernel` (mixin
:class:`TapTile`); docs/conv_implicit_gemm.md, "Tap-tile loop"."""
from __future__ import annotations

from ...ir import types as T
from ...ir.values import const_int, i32


class TapTile:
    """Phase methods of :class:`.emitter.Kernel`: the tap-tile K loop."""

    def taptile_loop(self, nacc: int, zero, done):
        """In block ``taptile_gate`` (the uniform-tap loop's fallback): branch
        (wave-uniform, on kernel arguments) between the tap-tile loop and the K walk;
        emits the former and leaves the builder at the start of the latter (block
        ``kwalk``). Returns ``[(accumulators, exiting block)]``.

        The condition is ``cpg % tile_k == 0`` (split-K: and ``ks % tile_k == 0``, so
        that every slice starts and ends on a tile). Then every K tile ``[k0, k0 +
        tile_k)`` lies in one filter tap with channels ``[c0, c0 + tile_k)``: the walk
        state (``cb``, ``kb``, ``xd``, ``yd``, ``kox`` of
        :meth:`.taploop.TapLoop.tap_state`) is uniform and stepped once per tile
        (:meth:`.taploop.TapLoop.tap_step` with ``tiles`` 1), and each tile has its own
        A voffsets (:meth:`.taploop.TapLoop.tap_offsets`), loop-carried two deep
        (tiles t+2 and t+3). The schedule is the pair loop's (held tile, two halves
        from LDS buffers 0 and 1, ``ceil(ntiles/2)`` iterations). ``ntiles`` may be odd:
        then the run starts with a phantom tile, loaded with the voffsets ``x_bytes`` and
        ``w_bytes`` (out of range with any soffset added, whether the hardware's range
        check counts soffset or not: each of its loads reads 0) and computed first
        (adds 0), and the loop computes the ``ntiles + 1`` tiles in pairs: no tile past
        ``k_end`` is computed, and the loop body carries no K mask."""
        b = self.b
        walk = self.taptile_branch()
        self.tap_invariants(1)
        n_even, held, (st2, st3), (vo2, vo3) = self.taptile_prologue()
        loop = b.new_block("taptile_loop")
        pro_end, t, acc_phis = self.enter_loop(loop, nacc)
        st_phis = [{f: b.phi(T.I32, "tt_" + f) for f in self.TAP_STATE} for _ in (0, 1)]
        vo_phis = [[b.phi(T.I32, "tt_voff") for _ in vo2] for _ in (0, 1)]
        val_phis, vals = self.held_phis(held)
        st = [{f: ph.result for f, ph in sp.items()} for sp in st_phis]
        vo = [[ph.result for ph in vp] for vp in vo_phis]
        accs = [ph.result for ph in acc_phis]
        # the next iteration's scalar walk first (tiles t+4, t+5); each half's A
        # voffsets for its next tile after its WMMAs
        n0 = self.tap_step(st[1], 1)
        nst = [n0, self.tap_step(n0, 1)]
        b.call("sched_barrier", [i32(0)])
        nvo = []
        for h in (0, 1):
            b.call("s_wait_loadcnt", [const_int(T.I16, 0)])
            self.store_tile(vals, i32(1 - h), self.tap_a_slots)
            b.call("sched_barrier", [i32(0)])
            vals = self.tile_loads(vo[h], st[h])
            b.call("sched_barrier", [i32(0)])
            accs = self.compute(i32(h), accs)
            b.call("sched_barrier", [i32(0)])
            nvo.append(self.tap_offsets(nst[h]))
            b.call("sched_barrier", [i32(0)])
            self.barrier(lds_only=True)
            b.call("sched_barrier", [i32(0)])
        t2 = b.add(t.result, i32(2), "t_next", ("nuw", "nsw"))
        loop_end = self.close_trip(loop, done, pro_end, (t, t2), (acc_phis, zero, accs), n_even)
        for sp, s0, s1 in zip(st_phis, (st2, st3), nst):
            for f, ph in sp.items():
                ph.add_incoming(s0[f], pro_end)
                ph.add_incoming(s1[f], loop_end)
        for vp, v0, v1 in zip(vo_phis, (vo2, vo3), nvo):
            for ph, x0, x1 in zip(vp, v0, v1):
                ph.add_incoming(x0, pro_end)
                ph.add_incoming(x1, loop_end)
        self.close_held(val_phis, held, vals, pro_end, loop_end)
        b.position(walk)
        return [(accs, loop_end)]

    def taptile_prologue(self):
        """The tap-tile prologue after :meth:`taptile_branch` (docs/conv_implicit_gemm.md,
        "Tap-tile loop"): tile 0 of the run into LDS buffer 0 (the phantom tile, all
        loads out of range, when ``ntiles`` is odd), tile 1 held in registers (tile 0
        then), and the states and A voffsets of the run's tiles 2 and 3. Returns
        ``(n_even, held, (st2, st3), (vo2, vo3))``: ``ntiles`` rounded up to even, the
        held raw values, the states (dicts of :data:`.taploop.TapLoop.TAP_STATE`) and
        the voffset lists."""
        b = self.b
        tk = self.tk
        # an odd tile count runs one phantom tile first (its loads out of range: zeros)
        odd = b.binop("and", self.ntiles, i32(1), "tt_odd")
        phantom = b.icmp("ne", odd, i32(0), "tt_phantom")
        n_even = b.add(self.ntiles, odd, "tt_ntiles", ("nuw", "nsw"))
        st0 = self.tap_state(self.k_begin if self.split else None)
        vo0 = self.tap_offsets(st0)
        # the phantom's voffsets are out of range (x_bytes, w_bytes, below 2^31): so is every
        # voffset + soffset, whether the range check counts soffset or not (LLVM's
        # IntrinsicsAMDGPU.td: soffset excluded from bounds checking; MLIR's AMDGPU dialect:
        # it may or may not be)
        vz = [b.select(phantom, self.oob_x, v, "tt_avoff") for v in vo0]
        bz = [b.select(phantom, self.oob_w, v, "tt_bvoff") for v in self.b_voff]
        self.store_tile(self.tap_loads(vz, st0["cb"], st0["kb"], bz), i32(0), self.tap_a_slots)
        n1 = self.tap_step(st0, 1)
        st1 = {f: b.select(phantom, st0[f], n1[f], "tt_" + f) for f in self.TAP_STATE}
        vo1 = self.tap_offsets(st1)
        held = self.tile_loads(vo1, st1)
        # tile 2 of the run: k_begin + (2 - odd)*tile_k
        k2 = b.sub(i32(2 * tk), b.mul(odd, i32(tk), "tt_oddk"), "tt_ktwo")
        st2 = self.tap_state(b.add(self.k_begin, k2, "tt_knext") if self.split else k2, cap=True)
        st3 = self.tap_step(st2, 1)
        vo2, vo3 = self.tap_offsets(st2), self.tap_offsets(st3)
        return n_even, held, (st2, st3), (vo2, vo3)

    def taptile_branch(self):
        """The wave-uniform branch of :meth:`taptile_loop`: ``cpg % tile_k`` (split-K:
        or'ed with ``ks % tile_k``) nonzero takes the K walk. Returns the walk's block
        (``kwalk``); leaves the builder in block ``taptile_pro``. The walk is the true
        side beside the two-deep loop, the false side beside the one-tile loop, as in
        :meth:`.taploop.TapLoop.tap_branch`."""
        b = self.b
        cr = b.binop("urem", self.p("cpg"), i32(self.tk), "tt_cr")
        if self.split:   # and every slice starts and ends on a tile
            kr = b.binop("urem", self.p("ks"), i32(self.tk), "tt_kr")
            cr = b.binop("or", cr, kr, "tt_r")
        return self.uniform_branch(cr, "tt", "kwalk", "taptile_pro")

    def tile_loads(self, voffs, st):
        """The raw values of the K tile of uniform state ``st`` (A voffsets ``voffs``):
        :meth:`.taploop.TapLoop.tap_loads` with the soffsets ``cb`` (A) and ``kb`` (B)."""
        return self.tap_loads(voffs, st["cb"], st["kb"])

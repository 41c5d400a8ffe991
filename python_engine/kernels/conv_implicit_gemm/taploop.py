"""The uniform-tap K loop of family ``conv_implicit_gemm`` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/taploop.cpp): the two-deep pipelined
K loop when every K tile pair lies in one filter tap, so the K walk is wave-uniform
(SGPRs) and the per-tile A/B addressing is a scalar offset. Methods of
:class:`.emitter.Kernel` (mixin :class:`TapLoop`); docs/conv_implicit_gemm.md,
"Uniform-tap loop"."""
from __future__ import annotations

from ...ir import types as T
from ...ir.values import const_int, i32
from .lds import CHUNK, LOAD_KEY
from .mainloop import row_slots, row_threads, tap_rows, tap_tile_kernel


class TapLoop:
    """Phase methods of :class:`.emitter.Kernel`: the uniform-tap K loop."""

    def tap_loop(self, nacc: int, zero, done):
        """Branch (wave-uniform, on kernel arguments) between the uniform-tap loop and
        the K walk of :meth:`.mainloop.MainLoop.pipelined_loop`; emits the former and
        leaves the builder at the start of the latter (block ``kwalk``). ``nacc``: the
        accumulator count; ``zero``: their initial value; ``done``: the block after the
        K loops. Returns ``[(accumulators, exiting block)]``.

        The condition is ``cpg % (2*tile_k) == 0``; split-K adds ``k_begin % (2*tile_k)
        == 0`` and an even ``ntiles`` (other slices take the K walk). Then every pair of
        K tiles ``[k0, k0 + 2*tile_k)`` the loop loads together lies in one filter tap
        ``(y, x)`` with channels ``[c0, c0 + 2*tile_k)``, ``k_end`` is a multiple of
        ``2*tile_k`` past ``k_begin`` (plain: ``Kgemm = Y*X*cpg``, so ``ntiles`` is even
        and at least 2), and no tile needs a ``k < k_end`` mask. The walk is uniform:
        the channel byte offset ``cb = 2*c0``, the B byte offset ``kb = 2*k0`` and the
        tap ``(xd, yd, kox)`` are SGPR loop phis stepped once per pair (s_cselect); an A
        slot's voffset ``ok ? pbase + 2*koff + kox : x_bytes`` (``ok``: the tap's pixel
        lies in the image) is recomputed once per pair; a B slot's ``nok ? wbyte :
        w_bytes`` is invariant. Tile ``h`` of a pair loads with the uniform soffset
        ``cb + 2*h*tile_k`` (A) or ``kb + 2*h*tile_k`` (B), so a K tile costs no VALU
        address or bounds work. An out-of-range voffset stays out of range with any
        soffset added (``x_bytes``, ``w_bytes`` and every soffset are below 2^31), and
        an in-range one plus soffset is the element's own address inside the pixel or
        filter row, so the result does not depend on whether the hardware's range check
        counts soffset (docs/conv_implicit_gemm.md, "Uniform-tap loop").

        The loop runs ``ntiles / 2`` iterations of two halves (tiles t, t+1 from LDS
        buffers 0, 1), holding the next tile in registers as
        :meth:`.mainloop.MainLoop.pipelined_loop` does; the last iteration's loads (two
        tiles past ``k_end``) read whatever lies there (data in range, zeros out of it)
        and are never computed. Each half waits once for the held tile's loads
        (``s_wait_loadcnt 0``: they are the only ones in flight), stores them, issues
        its loads A, B, A, B (scheduling barriers between: LLVM forms no hard clause,
        which llvm-mca's gfx1250 model stalls on), then computes."""
        b = self.b
        tk2 = 2 * self.tk
        walk = self.tap_branch("taptile_gate" if tap_tile_kernel(self.s) else "kwalk")
        self.tap_invariants()
        st0 = self.tap_state(self.k_begin if self.split else None)
        voffs = self.tap_offsets(st0)
        self.store_tile(self.tap_tile(voffs, st0, 0), i32(0), self.tap_a_slots)
        held = self.tap_tile(voffs, st0, 1)
        st1 = self.tap_state(b.add(self.k_begin, i32(tk2), "tp_knext") if self.split else i32(tk2), cap=True)
        voffs1 = self.tap_offsets(st1)
        loop = b.new_block("tap_loop")
        pro_end, t, acc_phis = self.enter_loop(loop, nacc)
        st_phis = {f: b.phi(T.I32, "tp_" + f) for f in self.TAP_STATE}
        vo_phis = [b.phi(T.I32, "tp_voff") for _ in voffs1]
        val_phis, vals = self.held_phis(held)
        st = {f: ph.result for f, ph in st_phis.items()}
        vo = [ph.result for ph in vo_phis]
        accs = [ph.result for ph in acc_phis]
        # the next pair's scalar walk first; its A voffsets after the last WMMA
        nst = self.tap_step(st)
        b.call("sched_barrier", [i32(0)])
        vals, accs, nvo = self.tap_pair(vals, vo, st, nst, accs)
        st, vo = nst, nvo
        t2 = b.add(t.result, i32(2), "t_next", ("nuw", "nsw"))
        loop_end = self.close_trip(loop, done, pro_end, (t, t2), (acc_phis, zero, accs))
        for f, ph in st_phis.items():
            ph.add_incoming(st1[f], pro_end)
            ph.add_incoming(st[f], loop_end)
        for ph, x0, x1 in zip(vo_phis, voffs1, vo):
            ph.add_incoming(x0, pro_end)
            ph.add_incoming(x1, loop_end)
        self.close_held(val_phis, held, vals, pro_end, loop_end)
        b.position(walk)
        exits = [(accs, loop_end)]
        if tap_tile_kernel(self.s):   # the tap-tile loop, then the K walk (block kwalk)
            exits += self.taptile_loop(nacc, zero, done)
        return exits

    def tap_branch(self, fallback: str):
        """The wave-uniform branch of :meth:`tap_loop`: ``cpg % (2*tile_k)`` (split-K:
        or'ed with ``k_begin % (2*tile_k)`` and ``ntiles & 1``) nonzero takes the
        fallback: block ``fallback`` (``kwalk``, the K walk, or ``taptile_gate``, the
        tap-tile loop's test). Returns that block; leaves the builder in ``tap_pro``."""
        b = self.b
        tk2 = 2 * self.tk
        cr = b.binop("urem", self.p("cpg"), i32(tk2), "tp_cr")
        if self.split:   # and the slice starts on a pair and has whole pairs
            kr = b.binop("urem", self.k_begin, i32(tk2), "tp_kr")
            cr = b.binop("or", cr, kr, "tp_r")
            odd = b.binop("and", self.ntiles, i32(1), "tp_odd")
            cr = b.binop("or", cr, odd, "tp_r")
        return self.uniform_branch(cr, "tp", fallback, "tap_pro")

    def uniform_branch(self, rem, hint: str, fallback: str, fast: str):
        """A wave-uniform branch between a fast path (block ``fast``, taken when ``rem``
        is 0) and its fallback (block ``fallback``): beside the two-deep loop the
        fallback is the true side of ``<hint>_gen = rem != 0``, beside the one-tile loop
        the false side of ``<hint>_uni = rem == 0``. Beside the two-deep loop the K walk
        on the true side makes LLVM 22 allocate 108 VGPRs at 64x64x32, not 118
        (occupancy 9, not 8); beside the one-tile loop LLVM's structurizer then places
        the walk first, so the fast loop does not hold the walk's values (tap_beside).
        Returns the fallback block; leaves the builder in ``fast``."""
        b = self.b
        two_deep = self.pipelines_two_deep()
        cond = b.icmp("ne", rem, i32(0), hint + "_gen") if two_deep else b.icmp("eq", rem, i32(0), hint + "_uni")
        slow = b.new_block(fallback)
        go = b.new_block(fast)
        if two_deep:
            b.cond_br(cond, slow, go)
        else:
            b.cond_br(cond, go, slow)
        b.position(go)
        return slow

    def tap_pair(self, vals, vo, st, nst, accs):
        """One iteration's two halves (K tiles t, t+1 from LDS buffers 0, 1): store the
        held tile, load the next from voffsets ``vo`` and state ``st``, compute; the
        second half also makes the next pair's A voffsets from ``nst``. Returns
        ``(held tile values, accumulators, next voffsets)``."""
        b = self.b
        for h in (0, 1):
            # one wait for the held tile's loads (the only ones in flight), not a
            # graded wait before each LDS store
            b.call("s_wait_loadcnt", [const_int(T.I16, 0)])
            self.store_tile(vals, i32(1 - h), self.tap_a_slots)
            b.call("sched_barrier", [i32(0)])
            vals = self.tap_tile(vo, st, h)
            b.call("sched_barrier", [i32(0)])
            accs = self.compute(i32(h), accs)
            b.call("sched_barrier", [i32(0)])
            if h:
                nvo = self.tap_offsets(nst)
                b.call("sched_barrier", [i32(0)])
            # nothing between s_barrier_signal and s_barrier_wait: llvm-mca's gfx1250
            # model retires in order behind the signal's guessed 2000-cycle latency,
            # so work LLVM moves into that gap costs a second barrier latency there
            self.barrier(lds_only=True)
            b.call("sched_barrier", [i32(0)])
        return vals, accs, nvo

    TAP_STATE = ("cb", "kb", "xd", "yd", "kox")

    def tap_invariants(self, tiles: int = 2):
        """Once, in the uniform-tap prologue: per A slot ``a_tap = pbase + 2*koff``, per
        B slot ``b_voff = nok ? wbyte : w_bytes``, the uniform steps ``cpg_b = 2*cpg``
        (bytes of a tap's channels), ``dw_b = dil_w*2*C`` (one dilated pixel), and
        ``kb_last = 2*(k_end - tiles*tile_k)``, the B offset of the last step's first
        tile (``tiles`` K tiles a step: 2 the pair loop, 1 the tap-tile loop), at which
        :meth:`cap_kb` holds the look-ahead states."""
        b = self.b
        kendb = b.mul(self.k_end, i32(2), "tp_kendb")
        self.tap_kb_last = b.sub(kendb, i32(2 * tiles * self.tk), "tp_kblast")
        self.tap_a_slots = self.a_slots   # the tap loop's A slots: the walk's, or tap_rows' own
        self.tap_cpgb = b.mul(self.p("cpg"), i32(2), "tp_cpgb")
        self.tap_dwb = b.mul(self.p("dil_w"), self.c2, "tp_dwb")
        if row_slots(self.s):   # one pixel a thread: slot 0's (chunk 0) base; chunk j at +16*j
            self.a_tap = [self.a_slots[0]["pbase"]]
        elif tap_rows(self.s):   # the tap loop's own slots; slot 0's chunk at 2*koff past the pixel
            self.tap_a_slots, koff = self.tap_row_slots()
            kb = b.mul(koff, i32(2), "tp_koffb")
            self.a_tap = [b.add(self.tap_a_slots[0]["pbase"], kb, "tp_abase")]
        else:
            kb = [b.mul(s["koff"], i32(2), "tp_koffb") for s in self.a_states]
            self.a_tap = [b.add(sl["pbase"], kb[sl["st"]], "tp_abase") for sl in self.a_slots]
        self.b_voff = [b.select(sl["nok"], sl["wbyte"], self.oob_w, "tp_bvoff") for sl in self.b_slots]

    def tap_row_slots(self):
        """:func:`.mainloop.tap_rows`' A slots of the tap loop: slot ``j`` is chunk
        ``(ltid % r)*s + j`` of row ``ltid / r`` (``r`` :func:`.mainloop.row_threads`,
        ``s = tile_k/8/r``), one pixel for all. Returns ``(slots, koff)``, ``koff`` slot
        0's element offset in the row (``8*(ltid % r)*s``)."""
        b = self.b
        r = row_threads(self.s)
        s = self.tk // CHUNK // r
        row = b.binop("udiv", self.ltid, i32(r), "tp_row")
        koff = b.mul(b.binop("urem", self.ltid, i32(r), "tp_rk"), i32(s * CHUNK), "tp_rkoff")
        hb, wb, pbase = self.a_pixel(row)
        slots = []
        for j in range(s):
            kj = b.add(koff, i32(j * CHUNK), "tp_rkoffj") if j else koff
            slots.append(dict(hb=hb, wb=wb, pbase=pbase, lds=self.slot_lds(row, kj, CHUNK, "tp_a")))
        return slots, koff

    def tap_state(self, k, cap: bool = False):
        """The uniform walk state of the pair starting at element ``k`` (i32; None: 0,
        all fields 0) with divisions: ``cb = 2*(k % cpg)``, ``kb = 2*k``, tap ``k / cpg
        = y*X + x``, ``xd = x*dil_w``, ``yd = y*dil_h``, ``kox = yd*rowb + xd*2*C``;
        ``cap``: ``kb`` through :meth:`cap_kb` (a look-ahead state)."""
        b = self.b
        if k is None:
            z = i32(0)
            return dict(cb=z, kb=z, xd=z, yd=z, kox=z)
        cpg, X = self.p("cpg"), self.p("X")
        tap = b.binop("udiv", k, cpg, "tp_tap")
        c = b.binop("urem", k, cpg, "tp_c")
        x = b.binop("urem", tap, X, "tp_x")
        y = b.binop("udiv", tap, X, "tp_y")
        xd = b.mul(x, self.p("dil_w"), "tp_xd")
        yd = b.mul(y, self.p("dil_h"), "tp_yd")
        kox = b.add(b.mul(yd, self.rowb, "tp_yb"), b.mul(xd, self.c2, "tp_xb"), "tp_kox")
        cb = b.mul(c, i32(2), "tp_cb")
        kb = b.mul(k, i32(2), "tp_kb")
        return dict(cb=cb, kb=self.cap_kb(kb) if cap else kb, xd=xd, yd=yd, kox=kox)

    def tap_offsets(self, st):
        """Per A slot, the voffset of the pair's tap: ``pbase + 2*koff + kox`` when the
        tap's pixel ``(hb + yd, wb + xd)`` lies in the image (unsigned compares), else
        ``x_bytes`` (out of range)."""
        b = self.b
        out = []
        for sl, base in zip(self.tap_a_slots, self.a_tap):   # row_slots: one (the slots' one pixel)
            hi = b.add(sl["hb"], st["yd"], "tp_hi")
            wi = b.add(sl["wb"], st["xd"], "tp_wi")
            hok = b.icmp("ult", hi, self.p("H"), "tp_hok")
            wok = b.icmp("ult", wi, self.p("W"), "tp_wok")
            ok = b.binop("and", hok, wok, "tp_ok")
            off = b.add(base, st["kox"], "tp_abyte")
            out.append(b.select(ok, off, self.oob_x, "tp_aoff"))
        return out

    def tap_step(self, st, tiles: int = 2):
        """The uniform walk state ``tiles`` K tiles on (2: the next pair; 1: the next tile,
        :meth:`.taptile.TapTile.taptile_loop`): ``cb += 2*tiles*tile_k`` (bytes); at
        ``2*cpg`` it wraps to 0 and the tap moves one dilated pixel right (``xd``,
        ``kox``), wrapping at ``X*dil_w`` into the next filter row (``yd``, ``kox``
        by the x carry ``dil_h*rowb - X*dil_w*pixb``); ``kb += 2*tiles*tile_k``. Every
        step is a uniform select against 0 (s_cselect). One wrap a step: ``2*cpg`` is a
        multiple of the step (the loops' entry conditions)."""
        b = self.b
        s = self.step
        step = i32(2 * tiles * self.tk)
        cb1 = b.add(st["cb"], step, "tp_cbn")
        wrap = b.icmp("eq", cb1, self.tap_cpgb, "tp_wrap")
        cb = b.select(wrap, i32(0), cb1, "tp_cb")
        xd1 = b.add(st["xd"], b.select(wrap, s["dw"], i32(0), "tp_xs"), "tp_xdn")
        wx = b.icmp("eq", xd1, s["xlim"], "tp_wx")
        xd = b.select(wx, i32(0), xd1, "tp_xd")
        yd = b.add(st["yd"], b.select(wx, s["dh"], i32(0), "tp_ys"), "tp_yd")
        kox1 = b.add(st["kox"], b.select(wrap, self.tap_dwb, i32(0), "tp_ks"), "tp_koxn")
        kox = b.add(kox1, b.select(wx, s["d2"], i32(0), "tp_kw"), "tp_kox")
        kb = self.cap_kb(b.add(st["kb"], step, "tp_kbn"))
        return dict(cb=cb, kb=kb, xd=xd, yd=yd, kox=kox)

    def cap_kb(self, kb):
        """``min(kb, kb_last)`` (unsigned; :meth:`tap_invariants`): a look-ahead state past
        the slice's last step keeps the last step's B offset. B's voffset ``wbyte`` is a
        filter row's start, in range, so its soffset ``kb`` alone would carry a look-ahead
        load past ``w_bytes`` where the hardware's range check leaves soffset out (LLVM
        IntrinsicsAMDGPU.td: the raw buffer loads' soffset is "excluded from bounds
        checking"; docs/hardware_facts.md BUFFER-OOB-SOFFSET). The capped loads read the
        last step's tiles again; no half computes them."""
        b = self.b
        kin = b.icmp("ult", kb, self.tap_kb_last, "tp_kbin")
        return b.select(kin, kb, self.tap_kb_last, "tp_kb")

    def tap_tile(self, voffs, st, h: int):
        """The raw values of tile ``h`` (0, 1) of the pair ``st``: per A slot a 16-byte
        load at voffset ``voffs[j]`` with soffset ``cb + 2*h*tile_k``, per B slot at
        ``b_voff[j]`` with soffset ``kb + 2*h*tile_k`` (bytes), issued A, B, A, B with a
        scheduling barrier between any two, so that no two loads of one resource are
        adjacent (no hard clause); returns (A values, B values)."""
        b = self.b
        d = 2 * h * self.tk
        sa = b.add(st["cb"], i32(d), "tp_as") if d else st["cb"]
        sb = b.add(st["kb"], i32(d), "tp_bs") if d else st["kb"]
        return self.tap_loads(voffs, sa, sb)

    def tap_loads(self, voffs, sa, sb, bvoffs=None):
        """One K tile's loads: per A slot 16 bytes at voffset ``voffs[j]`` with soffset
        ``sa``, per B slot at ``bvoffs[j]`` (default ``b_voff[j]``) with soffset ``sb``
        (bytes), issued A, B, A, B with a scheduling barrier between any two; returns (A
        values, B values)."""
        b = self.b
        bvoffs = self.b_voff if bvoffs is None else bvoffs
        key = LOAD_KEY[2 * CHUNK]
        if len(voffs) < len(self.tap_a_slots):   # row_slots: chunk j at the immediate offset 16*j
            # (nuw: a voffset is below 2^31, so LLVM folds the constant into the load)
            voffs = voffs + [b.add(voffs[0], i32(2 * CHUNK * j), "tp_aoffj", ("nuw",))
                             for j in range(1, len(self.tap_a_slots))]
        a, bv = [], []
        for j in range(max(len(voffs), len(bvoffs))):
            if j < len(voffs):
                if j:
                    b.call("sched_barrier", [i32(0)])
                a.append(b.call(key, [self.rx, voffs[j], sa, i32(0)], "a_val"))
            if j < len(bvoffs):
                b.call("sched_barrier", [i32(0)])
                bv.append(b.call(key, [self.rw, bvoffs[j], sb, i32(0)], "b_val"))
        return a, bv

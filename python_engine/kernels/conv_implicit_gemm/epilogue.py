"""Epilogues of family ``conv_implicit_gemm`` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/epilogue.cpp): the accumulator
epilogue, D and slab stores, the default epilogue (scalar, 16-byte D transpose,
fp32 slab transpose) and the cshuffle epilogue. Methods of
:class:`.emitter.Kernel` (mixin :class:`Epilogue`)."""
from __future__ import annotations

from ...ir import types as T
from ...ir.values import i32
from .. import acc_epilogue
from .lds import DT_ROW, D_VEC, LOAD_KEY, OUT_VEC, PAIR_SLOTS, STORE_KEY, WT_ROW, raw_type
from .spec import WMMA_M, WMMA_N


class Epilogue:
    """Phase methods of :class:`.emitter.Kernel`: the epilogues."""

    # -- epilogues ---------------------------------------------------------------------
    def acc_epi(self, x, n_elem, width: int):
        """The accumulator epilogue on fp32 ``x`` (scalar or <width x float>) whose
        first output channel is ``n_elem`` (global channel index, i32): the steps
        of :func:`..acc_epilogue.emit`, the bias one 4*width-byte load at
        ``4*n_elem`` (past K channels reads 0)."""
        b = self.b

        def bias():
            off = b.mul(n_elem, i32(4), "bias_byte")
            return b.call(LOAD_KEY[4 * width], [self.rbias, off, i32(0), i32(0)], "bias")
        return acc_epilogue.emit(b, self.s["acc_epilogue"], x, width, bias, self.p)

    def store_d(self, x, m, n, ok, width: int):
        """Cast fp32 ``x`` (width 1 or OUT_VEC) and store it at D[m][kbase + n]."""
        b = self.b
        vt = self.et if width == 1 else T.vec(width, self.et)
        y = b.cast("fptrunc", x, vt, "d_val")
        self.store_d_raw(y, m, n, ok, width)

    def store_d_raw(self, y, m, n, ok, width: int):
        """Store ``width`` dtype elements ``y`` (already cast) at D[m][kbase + n]."""
        b = self.b
        raw = b.cast("bitcast", y, raw_type(2 * width), "d_raw")
        kn = b.add(self.kbase, n, "d_ch")
        e = b.add(b.mul(m, self.p("K"), "d_rowe"), kn, "d_elem")
        off = b.mul(e, i32(2), "d_byte")
        off = b.select(ok, off, self.oob_d, "d_off")
        b.call(STORE_KEY[2 * width], [raw, self.rd, off, i32(0), i32(0)])

    def ws_offset(self, slab, m, n, ok, hint):
        """Byte offset of ws[slab][m][kbase + n] (or the out-of-range offset)."""
        b = self.b
        rows = b.add(b.mul(slab, self.p("M"), hint + "_slabm"), m, hint + "_row")
        kn = b.add(self.kbase, n, hint + "_ch")
        e = b.add(b.mul(rows, self.p("K"), hint + "_rowe"), kn, hint + "_elem")
        off = b.mul(e, i32(4), hint + "_byte")
        return b.select(ok, off, self.oob_ws, hint + "_off")

    def out_elem(self, x, m, n, ok, width: int):
        """Write one fp32 element/vector of the tile: the slab (split) or D (plain)."""
        b = self.b
        if self.split:
            off = self.ws_offset(self.slice, m, n, ok, "ws")
            b.call(STORE_KEY[4 * width], [x, self.rws, off, i32(0), i32(0)])
        else:
            kn = b.add(self.kbase, n, "epi_ch")
            y = self.acc_epi(x, kn, width)
            self.store_d(y, m, n, ok, width)

    def epilogue(self):
        b = self.b
        exit_ = b.new_block("exit")
        if self.s["epilogue"] == "default":
            if self.wavelet:
                body = b.new_block("epi_compute")
                skip = b.new_block("epi_skip")
                b.cond_br(self.is_loader, skip, body)
                b.position(body)
                self.epilogue_default()
                b.br(skip)
                b.position(skip)
            else:
                self.epilogue_default()
        else:
            self.epilogue_cshuffle()
        if self.cluster:
            self.cluster_fold()
        b.br(exit_)
        b.position(exit_)
        b.ret_void()

    def d_vec_ok(self, vec: int = D_VEC, hint: str = "d"):
        """Wave-uniform: K and kpg are multiples of ``vec`` (D_VEC for D, OUT_VEC for
        fp32 slabs), so every ``vec``-channel vector at a multiple of ``vec`` is
        16-byte aligned and wholly inside or outside ``[0, kpg)`` (kernel arguments
        only)."""
        b = self.b
        kk = b.binop("or", self.p("K"), self.p("kpg"), hint + "_kk")
        low = b.binop("and", kk, i32(vec - 1), hint + "_klow")
        return b.icmp("eq", low, i32(0), hint + "_wide")

    def d_branch(self, vec_fn, scalar_fn, hint, vec: int = D_VEC, ok_hint: str = "d"):
        """``if d_vec_ok(vec): vec_fn() else: scalar_fn()`` (a uniform branch), then join."""
        b = self.b
        ok = self.d_vec_ok(vec, ok_hint)
        bv = b.new_block(hint + "_wide")
        bs = b.new_block(hint + "_narrow")
        bj = b.new_block(hint + "_done")
        b.cond_br(ok, bv, bs)
        b.position(bv)
        vec_fn()
        b.br(bj)
        b.position(bs)
        scalar_fn()
        b.br(bj)
        b.position(bj)

    def epilogue_default(self):
        """D: 16-byte stores through the per-wave LDS transpose when K and kpg allow
        (:meth:`default_v16`), else :meth:`default_scalar`; fp32 slabs: 16-byte
        stores through the fp32 transpose when K and kpg are multiples of OUT_VEC
        (:meth:`slab_v4`), else :meth:`default_scalar`."""
        if self.split:
            self.d_branch(self.slab_v4, self.default_scalar, "slab", OUT_VEC, "ws")
        else:
            self.d_branch(self.default_v16, self.default_scalar, "epi")

    def default_scalar(self):
        """Each lane stores its fragment elements: acc[i][j] element e is tile row
        wm0 + 16*i + 8*(lane/16) + e, tile column wn0 + 16*j + lane%16."""
        b = self.b
        rbase = b.mul(self.half, i32(8), "e_rbase")
        for i in range(self.fm):
            for j in range(self.fn):
                acc = self.accs[i * self.fn + j]
                col = b.add(b.add(self.wn0, i32(j * WMMA_N), "e_c"), self.lrow, "e_col")
                n = b.add(self.n0, col, "e_n")
                nok = b.icmp("ult", n, self.p("kpg"), "e_nok")
                for e in range(8):
                    row = b.add(b.add(self.wm0, i32(i * WMMA_M + e), "e_r"), rbase, "e_row")
                    m = b.add(self.m0, row, "e_m")
                    mok = b.icmp("ult", m, self.p("M"), "e_mok")
                    ok = b.binop("and", mok, nok, "e_ok")
                    x = b.extractelement(acc, i32(e), "e_x")
                    self.out_elem(x, m, n, ok, 1)

    def wave_barrier(self):
        """``llvm.amdgcn.wave.barrier``: no instruction, a code-motion barrier for the
        wave; it orders the transpose's cross-lane LDS writes and reads (RAW: stores
        then loads of one accumulator; WAR: the loads, then the next accumulator's
        stores to the same region) in LLVM's memory model."""
        self.b.call("wave_barrier", [])

    def default_v16(self):
        """Per-wave LDS transpose (the region of wave w: DT_ROW*16 elements at
        w*16*DT_ROW, aliasing A/B after the main loop's last barrier; only this
        wave touches it). Per accumulator: lane l writes its 8 elements (epilogue
        applied, cast) to region rows 8*(l/16) + e, column l%16 (b16 stores); a
        wave barrier; then lane l reads row l%16, columns 8*(l/16) + [0,8) (one
        b128 load) and stores them as one 16-byte buffer store at tile row
        wm0 + 16*i + l%16, column wn0 + 16*j + 8*(l/16). A wave barrier precedes
        every accumulator's writes but the first."""
        b = self.b
        lds = self.lds["lds"]
        rb = b.mul(self.wave, i32(16 * DT_ROW), "dt_base")
        wcol = b.add(rb, self.lrow, "dt_wcol")
        rbase = b.mul(self.half, i32(8), "e_rbase")
        rrow = b.add(rb, b.mul(self.lrow, i32(DT_ROW), "dt_rrow"), "dt_rd")
        rd = b.add(rrow, rbase, "dt_rdc")
        for i in range(self.fm):
            for j in range(self.fn):
                acc = self.accs[i * self.fn + j]
                if i or j:
                    self.wave_barrier()
                col = b.add(b.add(self.wn0, i32(j * WMMA_N), "e_c"), self.lrow, "e_col")
                n = b.add(self.n0, col, "e_n")
                kn = b.add(self.kbase, n, "epi_ch")
                for e in range(8):
                    x = b.extractelement(acc, i32(e), "e_x")
                    y = self.acc_epi(x, kn, 1)
                    h = b.cast("fptrunc", y, self.et, "d_val")
                    r = b.add(rbase, i32(e), "dt_r")
                    idx = b.add(wcol, b.mul(r, i32(DT_ROW), "dt_wrow"), "dt_widx")
                    p = b.gep(self.et, lds, [idx], "dt_p")
                    b.store(h, p, 2)
                self.wave_barrier()
                p = b.gep(self.et, lds, [rd], "dt_p")
                v = b.load(T.vec(D_VEC, self.et), p, 16, "dt_v")
                row = b.add(b.add(self.wm0, i32(i * WMMA_M), "dt_rorg"), self.lrow, "dt_row")
                m = b.add(self.m0, row, "e_m")
                cn = b.add(b.add(self.wn0, i32(j * WMMA_N), "dt_corg"), rbase, "dt_col")
                n = b.add(self.n0, cn, "e_n")
                mok = b.icmp("ult", m, self.p("M"), "e_mok")
                nok = b.icmp("ult", n, self.p("kpg"), "e_nok")
                ok = b.binop("and", mok, nok, "e_ok")
                self.store_d_raw(v, m, n, ok, D_VEC)

    def slab_v4(self):
        """fp32 slab transpose (two-stage split-K, K and kpg multiples of OUT_VEC):
        the region of wave w is WT_ROW*16 floats at w*16*WT_ROW (aliasing A/B after
        the main loop's last barrier; only this wave touches it). Per accumulator:
        lane l writes its 8 fp32 elements to region rows 8*(l/16) + e, column l%16
        (b32 stores); a wave barrier; lane l reads row l%16, columns
        8*(l/16) + [0,4) and + [4,8) (two b128 loads) and stores each as one
        16-byte buffer store at ws[slice][m][kbase + n], m = m0 + wm0 + 16*i + l%16,
        n = n0 + wn0 + 16*j + 8*(l/16) + 4*h. A wave barrier precedes every
        accumulator's writes but the first."""
        b = self.b
        lds = self.lds["lds"]
        rb = b.mul(self.wave, i32(16 * WT_ROW), "wt_base")
        wcol = b.add(rb, self.lrow, "wt_wcol")
        rbase = b.mul(self.half, i32(8), "e_rbase")
        rrow = b.add(rb, b.mul(self.lrow, i32(WT_ROW), "wt_rrow"), "wt_rd")
        rd = b.add(rrow, rbase, "wt_rdc")
        for i in range(self.fm):
            for j in range(self.fn):
                acc = self.accs[i * self.fn + j]
                if i or j:
                    self.wave_barrier()
                for e in range(8):
                    x = b.extractelement(acc, i32(e), "e_x")
                    r = b.add(rbase, i32(e), "wt_r")
                    idx = b.add(wcol, b.mul(r, i32(WT_ROW), "wt_wrow"), "wt_widx")
                    p = b.gep(T.FLOAT, lds, [idx], "dt_p")
                    b.store(x, p, 4)
                self.wave_barrier()
                row = b.add(b.add(self.wm0, i32(i * WMMA_M), "dt_rorg"), self.lrow, "dt_row")
                m = b.add(self.m0, row, "e_m")
                mok = b.icmp("ult", m, self.p("M"), "e_mok")
                cn = b.add(b.add(self.wn0, i32(j * WMMA_N), "dt_corg"), rbase, "dt_col")
                for h in range(D_VEC // OUT_VEC):
                    c = b.add(rd, i32(OUT_VEC * h), "wt_rdh")
                    p = b.gep(T.FLOAT, lds, [c], "dt_p")
                    v = b.load(T.vec(OUT_VEC, T.FLOAT), p, 16, "wt_v")
                    n = b.add(self.n0, b.add(cn, i32(OUT_VEC * h), "wt_colh"), "e_n")
                    nok = b.icmp("ult", n, self.p("kpg"), "e_nok")
                    ok = b.binop("and", mok, nok, "e_ok")
                    off = self.ws_offset(self.slice, m, n, ok, "ws")
                    b.call(STORE_KEY[4 * OUT_VEC], [v, self.rws, off, i32(0), i32(0)])

    def epilogue_cshuffle(self):
        """Compute waves write the accumulators to the fp32 LDS tile (aliasing A/B:
        every wave passed the main loop's last barrier, after its last A/B access);
        barrier; then all threads store row vectors: 16-byte D stores of D_VEC
        channels when K and kpg allow, else OUT_VEC-wide; OUT_VEC fp32 (16 bytes) to
        the slab. Surplus slots clamp to the last vector."""
        b = self.b
        lc = self.lds["lds"]
        if self.wavelet:
            body = b.new_block("cs_write")
            join = b.new_block("cs_join")
            b.cond_br(self.is_loader, join, body)
            b.position(body)
        rbase = b.mul(self.half, i32(8), "e_rbase")
        for i in range(self.fm):
            for j in range(self.fn):
                acc = self.accs[i * self.fn + j]
                col = b.add(b.add(self.wn0, i32(j * WMMA_N), "e_c"), self.lrow, "e_col")
                for e in range(8):
                    row = b.add(b.add(self.wm0, i32(i * WMMA_M + e), "e_r"), rbase, "e_row")
                    idx = b.add(b.mul(row, i32(self.ncp), "cs_rowi"), col, "cs_idx")
                    p = b.gep(T.FLOAT, lc, [idx], "cs_p")
                    b.store(b.extractelement(acc, i32(e), "e_x"), p, 4)
        if self.wavelet:
            b.br(join)
            b.position(join)
        self.barrier()
        if self.split:
            self.cshuffle_out(OUT_VEC)
        else:
            self.d_branch(lambda: self.cshuffle_out(D_VEC), lambda: self.cshuffle_out(OUT_VEC), "cs")

    def cshuffle_out(self, width: int):
        """The store phase of cshuffle: slot v -> row v / (tile_n/width), column
        width*(v % (tile_n/width)); LDS loads of OUT_VEC fp32 (b128), the epilogue
        per OUT_VEC, one store of ``width`` elements."""
        b = self.b
        lc = self.lds["lds"]
        per_row = self.tn // width
        count = self.tm * per_row
        v4 = T.vec(OUT_VEC, T.FLOAT)
        for j in range((count + self.threads - 1) // self.threads):
            v = b.add(self.tid, i32(j * self.threads), "cs_slot")
            if (j + 1) * self.threads > count:
                v = self.umin_const(v, count - 1, "cs_slotc")
            if width == D_VEC and per_row > PAIR_SLOTS and per_row % PAIR_SLOTS == 0:
                # 16 consecutive slots = PAIR_SLOTS of row 2p and PAIR_SLOTS of row 2p+1
                # (same columns): the two b128 C loads per slot stay conflict-free
                # (width OUT_VEC needs no pairing: 16 slots read 256 contiguous bytes)
                sl = b.binop("urem", v, i32(PAIR_SLOTS), "cs_sl")
                rest = b.binop("udiv", v, i32(PAIR_SLOTS), "cs_rest")
                rpar = b.binop("urem", rest, i32(2), "cs_rpar")
                rest = b.binop("udiv", rest, i32(2), "cs_rest")
                seg = b.binop("urem", rest, i32(per_row // PAIR_SLOTS), "cs_seg")
                pair = b.binop("udiv", rest, i32(per_row // PAIR_SLOTS), "cs_pair")
                row = b.add(b.mul(pair, i32(2), "cs_prow"), rpar, "cs_row")
                cv = b.add(b.mul(seg, i32(PAIR_SLOTS), "cs_segv"), sl, "cs_cv")
            else:
                row = b.binop("udiv", v, i32(per_row), "cs_row")
                cv = b.binop("urem", v, i32(per_row), "cs_cv")
            col = b.mul(cv, i32(width), "cs_col")
            idx = b.add(b.mul(row, i32(self.ncp), "cs_rowi"), col, "cs_idx")
            m = b.add(self.m0, row, "cs_m")
            n = b.add(self.n0, col, "cs_n")
            mok = b.icmp("ult", m, self.p("M"), "cs_mok")
            nok = b.icmp("ult", n, self.p("kpg"), "cs_nok")
            ok = b.binop("and", mok, nok, "cs_ok")
            if width == OUT_VEC:
                p = b.gep(T.FLOAT, lc, [idx], "cs_p")
                x = b.load(v4, p, 16, "cs_x")
                self.out_elem(x, m, n, ok, OUT_VEC)
                continue
            parts = []
            for h in range(width // OUT_VEC):
                ih = b.add(idx, i32(h * OUT_VEC), "cs_idxh") if h else idx
                p = b.gep(T.FLOAT, lc, [ih], "cs_p")
                x = b.load(v4, p, 16, "cs_x")
                nh = b.add(n, i32(h * OUT_VEC), "cs_nh") if h else n
                kn = b.add(self.kbase, nh, "epi_ch")
                parts.append(self.acc_epi(x, kn, OUT_VEC))
            y = b.shufflevector(parts[0], parts[1], list(range(width)), "cs_y")
            dv = b.cast("fptrunc", y, T.vec(width, self.et), "d_val")
            self.store_d_raw(dv, m, n, ok, width)

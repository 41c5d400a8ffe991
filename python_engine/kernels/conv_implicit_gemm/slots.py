"""Global -> LDS load slots of family ``conv_implicit_gemm`` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/slots.cpp): the per-thread slots, the
strength-reduced im2col K walk, the tile loads and the LDS stores. Methods of
:class:`.emitter.Kernel` (mixin :class:`Slots`)."""
from __future__ import annotations

from ...ir import types as T
from ...ir.values import i32, zeroinit
from .lds import CHUNK, LOAD_KEY, PIXEL_VECTORS, pixel_pieces, pixel_slot, raw_type
from .mainloop import row_slots


class Slots:
    """Phase methods of :class:`.emitter.Kernel`: global -> LDS slots."""

    def slot_setup(self):
        """Per-thread load slots (fixed for the whole K loop): slot j of a thread is
        vector ``v = ltid + j*load_threads`` of the tile, clamped to the last vector.

        The im2col walk is strength-reduced: a slot's K coordinate lives in a *K state*
        (channel ``c``, ``xd = x*dil_w``, ``yd = y*dil_h`` and the byte offset ``ko`` of
        ``(y, x, c)`` inside a pixel window), computed with divisions once here for
        ``k_begin`` and advanced by ``tile_k`` per K tile with two single wraps
        (:meth:`advance`). Slots whose vector index differs by a multiple of the row
        length share one K state (same ``kv``); a clamped slot has its own."""
        self.k_step_setup()
        self.a_slot_setup()
        self.b_slot_setup()

    def k_step_setup(self):
        """The K walk's uniform per-tile step (``self.step``): ``tile_k = sa*cpg + sb``,
        ``sa = ay*X + ax``, and the byte steps of one K tile with and without a wrap."""
        b = self.b
        # the K walk's channel count: cpg, or the padded pixel (channel 0 in every state)
        cpg, X = (i32(self.slot_a) if self.pix else self.p("cpg")), self.p("X")
        self.kcpg = cpg
        dw, dh = self.p("dil_w"), self.p("dil_h")
        # tile_k = sa*cpg + sb, sa = ay*X + ax: the uniform per-tile step.
        tk = i32(self.tk)
        sa = b.binop("udiv", tk, cpg, "k_sa")
        sb = b.binop("urem", tk, cpg, "k_sb")
        ay = b.binop("udiv", sa, X, "k_ay")
        ax = b.binop("urem", sa, X, "k_ax")
        c2 = b.mul(self.p("C"), i32(2), "k_pixb")           # bytes per pixel
        rowb = b.mul(self.p("W"), c2, "k_rowb")             # bytes per image row
        axd = b.mul(ax, dw, "k_axd")
        ayd = b.mul(ay, dh, "k_ayd")
        xlim = b.mul(X, dw, "k_xlim")
        kc = b.add(b.mul(sb, i32(2), "k_sbb"), b.mul(axd, c2, "k_axb"), "k_kstep")
        ko0 = b.add(kc, b.mul(ayd, rowb, "k_ayb"), "k_kstep")
        d1 = b.sub(b.mul(dw, c2, "k_dwb"), b.mul(cpg, i32(2), "k_cpgb"), "k_dcy")
        d2 = b.sub(b.mul(dh, rowb, "k_dhb"), b.mul(xlim, c2, "k_xlimb"), "k_dcx")
        xs1 = b.add(axd, dw, "k_axdc")
        ys1 = b.add(ayd, dh, "k_aydc")
        ko1 = b.add(ko0, d1, "k_kstepc")
        self.step = dict(sb=sb, cpg=cpg, xs0=axd, xs1=xs1, xlim=xlim, ys0=ayd, ys1=ys1, ko0=ko0, ko1=ko1, d2=d2,
                         dw=dw, dh=dh, d1=d1)
        self.c2, self.rowb = c2, rowb

    def a_slot_setup(self):
        """The A (image) load slots: per slot its K state, pixel base, bounds and LDS offset.
        With :func:`.mainloop.row_slots` slot ``j`` is chunk ``j`` of the thread's row
        ``ltid``: one pixel for every slot, and K state ``j`` (element ``k_begin + 8*j``)."""
        b = self.b
        self.a_states, self.a_slots = [], []
        va = self.slot_a
        per_row = self.tk // va
        count = self.tm * per_row
        lt = self.load_threads
        rows = row_slots(self.s)
        pix = None
        for j in range((count + lt - 1) // lt):
            if rows:
                row = self.ltid
                self.a_states.append(self.k_state(j, va, "a"))
            else:
                v = b.add(self.ltid, i32(j * lt), "a_slot")
                clamped = (j + 1) * lt > count
                if clamped:
                    v = self.umin_const(v, count - 1, "a_slotc")
                row = b.binop("udiv", v, i32(per_row), "a_row")
                if j == 0 or clamped or lt % per_row:
                    kv = b.binop("urem", v, i32(per_row), "a_kv")
                    self.a_states.append(self.k_state(kv, va, "a"))
            st = len(self.a_states) - 1
            koff = self.a_states[st]["koff"]
            if pix is None or not rows:
                pix = self.a_pixel(row)
            lds_off = self.slot_lds(row, koff, va, "a")
            self.a_slots.append(dict(st=st, hb=pix[0], wb=pix[1], pbase=pix[2], lds=lds_off))

    def a_pixel(self, row):
        """``(hb, wbase, pbase)`` of tile row ``row``: its output pixel's input window
        origin (``hb`` 2^30 for a row past M) and byte offset."""
        b = self.b
        m = b.add(self.m0, row, "a_m")
        mok = b.icmp("ult", m, self.p("M"), "a_mok")
        hw = b.mul(self.p("Ho"), self.p("Wo"), "a_hw")
        img = b.binop("udiv", m, hw, "a_img")
        rem = b.binop("urem", m, hw, "a_pix")
        ho = b.binop("udiv", rem, self.p("Wo"), "a_ho")
        wo = b.binop("urem", rem, self.p("Wo"), "a_wo")
        hs = b.mul(ho, self.p("stride_h"), "a_hs")
        hbase = b.sub(hs, self.p("pad_h"), "a_hbase")
        ws = b.mul(wo, self.p("stride_w"), "a_ws")
        wbase = b.sub(ws, self.p("pad_w"), "a_wbase")
        nh = b.mul(img, self.p("H"), "a_nh")
        # Byte offset of (img, hbase, wbase, channel g*cpg): the slot's pixel base;
        # a row past M gets hbase 2^30 so that its hi check always fails.
        pw = b.add(b.mul(b.add(nh, hbase, "a_nhb"), self.p("W"), "a_nhw"), wbase, "a_pw")
        pc = b.add(b.mul(pw, self.p("C"), "a_pwc"), self.cbase, "a_pe")
        pbase = b.mul(pc, i32(2), "a_pbase")
        hb = b.select(mok, hbase, i32(1 << 30), "a_hb")
        return hb, wbase, pbase

    def b_slot_setup(self):
        """The B (filter) load slots: per slot its K state, filter byte, bound and LDS offset."""
        b = self.b
        lt = self.load_threads
        self.b_states, self.b_slots = [], []
        vb = self.slot_b
        per_row = self.tk // vb
        count = self.tn * per_row
        for j in range((count + lt - 1) // lt):
            v = b.add(self.ltid, i32(j * lt), "b_slot")
            clamped = (j + 1) * lt > count
            if clamped:
                v = self.umin_const(v, count - 1, "b_slotc")
            row = b.binop("udiv", v, i32(per_row), "b_row")
            if j == 0 or clamped or lt % per_row:
                kv = b.binop("urem", v, i32(per_row), "b_kv")
                koff = b.mul(kv, i32(vb), "b_koff")
                self.b_states.append(dict(kv=kv, koff=koff, klim=self.k_limit(koff, "b")))
            st = len(self.b_states) - 1
            koff = self.b_states[st]["koff"]
            n = b.add(self.n0, row, "b_n")
            nok = b.icmp("ult", n, self.p("kpg"), "b_nok")
            kn = b.add(self.kbase, n, "b_kn")
            wrow = b.mul(kn, self.p("Kgemm"), "b_wrow")
            if self.pix:   # filter tap kv of the tile: pix channels (2*pix bytes) per tap in w
                wr = b.mul(wrow, i32(2), "b_wrowb")
                tb = b.mul(self.b_states[st]["kv"], i32(2 * self.pix), "b_tapb")
                wbyte = b.add(wr, tb, "b_wbyte")
            else:
                wk = b.add(wrow, koff, "b_wk")
                wbyte = b.mul(wk, i32(2), "b_wbyte")
            lds_off = self.slot_lds(row, koff, vb, "b")
            self.b_slots.append(dict(st=st, nok=nok, wbyte=wbyte, lds=lds_off))

    def swz_index(self, row, ch, within, hint):
        """Element index in an A/B buffer of 16-byte chunk ``ch`` of tile row ``row``
        (plus ``within`` elements, or None): ``row*tile_k + 8*(ch ^ f(row))``, the XOR
        swizzle of :func:`swizzle`."""
        b = self.b
        rps, per = self.swz
        q = row if rps == 1 else b.binop("lshr", row, i32(rps.bit_length() - 1), hint + "_swq")
        f = b.binop("and", q, i32(per - 1), hint + "_swf")
        sc = b.binop("xor", ch, f, hint + "_sch")
        e = b.binop("shl", sc, i32(3), hint + "_sce")
        if within is not None:
            e = b.binop("or", e, within, hint + "_scw")
        return b.add(b.mul(row, i32(self.tk), hint + "_lrow"), e, hint + "_loff")

    def slot_lds(self, row, koff, vec: int, hint):
        """LDS element index of a load slot's vector (``koff`` elements into the row)."""
        b = self.b
        ch = b.binop("lshr", koff, i32(3), hint + "_kch")
        within = b.binop("and", koff, i32(CHUNK - 1), hint + "_kin") if vec < CHUNK else None
        return self.swz_index(row, ch, within, hint)

    def k_limit(self, koff, hint):
        """``klim`` with ``k0 + koff < k_end  <=>  k0 < klim`` (unsigned) for every tile
        origin ``k0``: ``k_end - koff``, or 0 when ``koff >= k_end``."""
        b = self.b
        kin = b.icmp("ult", koff, self.k_end, hint + "_kin")
        kl = b.sub(self.k_end, koff, hint + "_klim")
        return b.select(kin, kl, i32(0), hint + "_klim")

    def k_state(self, kv, va, hint):
        """The K state of element ``r = k_begin + kv*va`` (divisions, once per workgroup);
        ``kv`` an int (:func:`.mainloop.row_slots`' uniform states): the literal offset
        ``kv*va``, and for ``kv`` 0 ``r = k_begin`` with the K limit ``k_end`` itself."""
        b = self.b
        if isinstance(kv, int):
            koff = i32(kv * va)
            r0 = b.add(self.k_begin, koff, hint + "_rk") if kv else self.k_begin
        else:
            koff = b.mul(kv, i32(va), hint + "_koff")
            r0 = b.add(self.k_begin, koff, hint + "_rk")
        c = b.binop("urem", r0, self.kcpg, hint + "_ck")
        q = b.binop("udiv", r0, self.kcpg, hint + "_qk")
        x = b.binop("urem", q, self.p("X"), hint + "_xk")
        y = b.binop("udiv", q, self.p("X"), hint + "_yk")
        xd = b.mul(x, self.p("dil_w"), hint + "_xdk")
        yd = b.mul(y, self.p("dil_h"), hint + "_ydk")
        ko = b.add(b.add(b.mul(yd, self.rowb, hint + "_kyb"), b.mul(xd, self.c2, hint + "_kxb"), hint + "_kxy"),
                   b.mul(c, i32(2), hint + "_kcb"), hint + "_ko")
        klim = self.k_end if isinstance(kv, int) and not kv else self.k_limit(koff, hint)
        return dict(koff=koff, klim=klim, c=c, xd=xd, yd=yd, ko=ko)

    def advance(self, states, carry_steps: bool = False):
        """The K states of the next tile: ``c += sb`` with one wrap (carry into x),
        ``x += ax (+1)`` with one wrap (carry into y), ``y += ay (+1)``; ``ko`` follows
        with the uniform byte steps. No division. A carry selects between two uniform
        steps (``x += carry ? ax+dil_w : ax``); with ``carry_steps`` it adds the uniform
        step and then the carry's extra or 0 (``x += ax; x += carry ? dil_w : 0``): one
        add more, but no select of two SGPR values, which LLVM's gfx1250 code copies
        to a VGPR first (the pipelined loop's form: 4 VGPRs fewer at 64x64x32, so the
        cluster forms keep 9 waves)."""
        b = self.b
        st = self.step
        out = []
        for s0 in states:
            c1 = b.add(s0["c"], st["sb"], "k_cn")
            cy1 = b.icmp("uge", c1, st["cpg"], "k_cyc")
            c = b.sub(c1, b.select(cy1, st["cpg"], i32(0), "k_cw"), "k_c")
            if carry_steps:
                xd0 = b.add(s0["xd"], st["xs0"], "k_xdn")
                xd1 = b.add(xd0, b.select(cy1, st["dw"], i32(0), "k_xs"), "k_xdn")
            else:
                xd1 = b.add(s0["xd"], b.select(cy1, st["xs1"], st["xs0"], "k_xs"), "k_xdn")
            cy2 = b.icmp("uge", xd1, st["xlim"], "k_cyx")
            xd = b.sub(xd1, b.select(cy2, st["xlim"], i32(0), "k_xw"), "k_xd")
            if carry_steps:
                yd0 = b.add(s0["yd"], st["ys0"], "k_ydn")
                yd = b.add(yd0, b.select(cy2, st["dh"], i32(0), "k_ys"), "k_yd")
                ko0 = b.add(s0["ko"], st["ko0"], "k_kon")
                ko1 = b.add(ko0, b.select(cy1, st["d1"], i32(0), "k_ks"), "k_kon")
            else:
                yd = b.add(s0["yd"], b.select(cy2, st["ys1"], st["ys0"], "k_ys"), "k_yd")
                ko1 = b.add(s0["ko"], b.select(cy1, st["ko1"], st["ko0"], "k_ks"), "k_kon")
            ko = b.add(ko1, b.select(cy2, st["d2"], i32(0), "k_kw"), "k_ko")
            out.append(dict(s0, c=c, xd=xd, yd=yd, ko=ko))
        return out

    CARRIED = ("c", "xd", "yd", "ko")

    def load_tile(self, k0, states):
        """Global loads of the K tile starting at ``k0`` (the A K states ``states``
        describe the same tile) into registers; returns the raw values of the A slots
        then the B slots."""
        b = self.b
        s = self.s
        out_a, out_b = [], []
        va, vb = s["vector_a"], s["vector_b"]
        roks = [b.icmp("ult", k0, st["klim"], "a_rok") for st in self.a_states]
        for sl in self.a_slots:
            st = states[sl["st"]]
            hi = b.add(sl["hb"], st["yd"], "a_hi")
            wi = b.add(sl["wb"], st["xd"], "a_wi")
            hok = b.icmp("ult", hi, self.p("H"), "a_hok")   # unsigned: negative is out
            wok = b.icmp("ult", wi, self.p("W"), "a_wok")
            ok = b.binop("and", roks[sl["st"]], hok, "a_ok")
            ok = b.binop("and", ok, wok, "a_ok")
            off = b.add(sl["pbase"], st["ko"], "a_byte")
            off = b.select(ok, off, self.oob_x, "a_off")
            out_a.append(self.load_slot(self.rx, off, va, "a"))
        roks = [b.icmp("ult", k0, st["klim"], "b_rok") for st in self.b_states]
        if self.pix:   # tap k0/slot of w: 2*pix bytes per tap
            tap = b.binop("lshr", k0, i32(self.slot_b.bit_length() - 1), "b_ktap")
            kb = b.mul(tap, i32(2 * self.pix), "b_kbyte")
        else:
            kb = b.mul(k0, i32(2), "b_kbyte")
        for sl in self.b_slots:
            ok = b.binop("and", sl["nok"], roks[sl["st"]], "b_ok")
            off = b.add(sl["wbyte"], kb, "b_byte")
            off = b.select(ok, off, self.oob_w, "b_off")
            out_b.append(self.load_slot(self.rw, off, vb, "b"))
        return out_a, out_b

    def load_slot(self, rsrc, off, v: int, hint: str):
        """The raw value of one load slot at byte ``off``: one ``2*v``-byte buffer load,
        or for a padded pixel (``v`` in 3, 5, 6, 7) the pieces of :func:`pixel_pieces`
        at ``off``, ``off+8``, ... (the constant as soffset) as i32 words, the 2-byte
        piece zero-extended (its high half is the first padding channel), the words
        past them zero: ``pixel_slot(v)`` elements. The pieces lie inside the pixel,
        so each is wholly in or out of the buffer range with it."""
        b = self.b
        if v not in PIXEL_VECTORS:
            return b.call(LOAD_KEY[2 * v], [rsrc, off, i32(0), i32(0)], hint + "_val")
        words = []
        at = 0
        for nb in pixel_pieces(v):
            x = b.call(LOAD_KEY[nb], [rsrc, off, i32(at), i32(0)], hint + "_pc")
            if nb == 8:
                x = b.cast("bitcast", x, T.vec(2, T.I32), hint + "_pcw")
                words += [b.extractelement(x, i32(0), hint + "_w"), b.extractelement(x, i32(1), hint + "_w")]
            elif nb == 4:
                words.append(b.cast("bitcast", x, T.I32, hint + "_w"))
            else:
                words.append(b.cast("zext", x, T.I32, hint + "_w"))
            at += nb
        nw = pixel_slot(v) // 2
        vec = zeroinit(T.vec(nw, T.I32))
        for k, w in enumerate(words):
            vec = b.insertelement(vec, w, i32(k), hint + "_pix")
        return b.cast("bitcast", vec, raw_type(2 * pixel_slot(v)), hint + "_val")

    def store_tile(self, vals, buf, a_slots=None):
        """Store loaded registers into LDS buffer ``buf`` (i32 0 or 1); ``a_slots``: the A
        slots the values were loaded for (default: the K walk's, ``self.a_slots``)."""
        b = self.b
        s = self.s
        out_a, out_b = vals
        abase = b.mul(buf, i32(self.tm * self.tk), "a_buf")
        for sl, v in zip(self.a_slots if a_slots is None else a_slots, out_a):
            idx = b.add(abase, sl["lds"], "a_lidx")
            p = b.gep(self.et, self.lds_a, [idx], "a_lp")
            b.store(v, p, 2 * self.slot_a)
        bbase = b.mul(buf, i32(self.tn * self.tk), "b_buf")
        for sl, v in zip(self.b_slots, out_b):
            idx = b.add(bbase, sl["lds"], "b_lidx")
            p = b.gep(self.et, self.lds_b, [idx], "b_lp")
            b.store(v, p, 2 * self.slot_b)

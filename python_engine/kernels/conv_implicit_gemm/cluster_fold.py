"""The cluster fold of family ``conv_implicit_gemm`` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/cluster_fold.cpp): cluster split-K's
barrier and the fold of the cluster's fp32 slabs into D. Methods of
:class:`.emitter.Kernel` (mixin :class:`ClusterFold`)."""
from __future__ import annotations

from ...ir.values import i32
from .. import acc_epilogue
from .lds import D_VEC, LOAD_KEY, OUT_VEC


class ClusterFold:
    """Phase methods of :class:`.emitter.Kernel`: the cluster fold."""

    def cluster_fold(self):
        """After every slab of the cluster is stored: cluster barrier between
        cluster-scope release/acquire fences, then this workgroup (rank = slice)
        folds tile rows [rank*R, rank*R + R), R = ceil(tile_m / S), over slabs
        0..S-1 in order, applies the accumulator epilogue once to the folded
        values (:meth:`fold_epi`) and stores D: D_VEC channels (16 bytes) per slot when K
        and kpg allow, else OUT_VEC."""
        b = self.b
        b.fence("cluster", "release")
        b.call("s_cluster_barrier", [])
        b.fence("cluster", "acquire")
        self.d_branch(lambda: self.fold_out(D_VEC), lambda: self.fold_out(OUT_VEC), "fold")

    def fold_out(self, width: int):
        """The fold's slots: ``width`` channels each, slabs read OUT_VEC fp32 at a
        time (16 bytes), summed from slab 0 in order."""
        b = self.b
        S = self.cluster
        R = (self.tm + S - 1) // S
        per_row = self.tn // width
        count = R * per_row
        r0 = b.mul(self.slice, i32(R), "f_rorg")
        for j in range((count + self.threads - 1) // self.threads):
            v = b.add(self.tid, i32(j * self.threads), "f_slot")
            if (j + 1) * self.threads > count:
                v = self.umin_const(v, count - 1, "f_slotc")
            rr = b.binop("udiv", v, i32(per_row), "f_rr")
            cv = b.binop("urem", v, i32(per_row), "f_cv")
            col = b.mul(cv, i32(width), "f_col")
            row = b.add(r0, rr, "f_row")
            m = b.add(self.m0, row, "f_m")
            n = b.add(self.n0, col, "f_n")
            rok = b.icmp("ult", row, i32(self.tm), "f_rok")
            mok = b.icmp("ult", m, self.p("M"), "f_mok")
            nok = b.icmp("ult", n, self.p("kpg"), "f_nok")
            ok = b.binop("and", rok, mok, "f_ok")
            ok = b.binop("and", ok, nok, "f_ok")
            total = None
            for sl in range(S):
                off = self.ws_offset(i32(sl), m, n, ok, "f")
                x = b.call(LOAD_KEY[4 * OUT_VEC], [self.rws, off, i32(0), i32(0)], "f_slab")
                if width > OUT_VEC:
                    off2 = b.add(off, i32(4 * OUT_VEC), "f_offh")
                    x2 = b.call(LOAD_KEY[4 * OUT_VEC], [self.rws, off2, i32(0), i32(0)], "f_slab")
                    x = b.shufflevector(x, x2, list(range(width)), "f_slabw")
                total = x if total is None else b.fadd(total, x, "f_sum")
            if self.s["acc_epilogue"] != "identity":
                total = self.fold_epi(total, n, width)
            self.store_d(total, m, n, ok, width)

    def fold_epi(self, total, n, width: int):
        """The accumulator epilogue on a folded vector (fp32, the sum of all S slabs),
        once, before the cast: channel ``kbase + n``; a D_VEC-wide bias in two
        OUT_VEC halves (channels ``n`` and ``n + 4``: 16-byte bias loads), like the
        cshuffle epilogue."""
        b = self.b
        kn = b.add(self.kbase, n, "epi_ch")
        if width <= OUT_VEC or not acc_epilogue.has(self.s["acc_epilogue"], "bias"):
            return self.acc_epi(total, kn, width)
        lo = b.shufflevector(total, total, list(range(OUT_VEC)), "f_lo")
        hi = b.shufflevector(total, total, list(range(OUT_VEC, width)), "f_hi")
        y0 = self.acc_epi(lo, kn, OUT_VEC)
        kn2 = b.add(kn, i32(OUT_VEC), "epi_chh")
        y1 = self.acc_epi(hi, kn2, OUT_VEC)
        return b.shufflevector(y0, y1, list(range(width)), "f_epi")

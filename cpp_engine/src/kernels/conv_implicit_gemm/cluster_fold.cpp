// The cluster fold of family conv_implicit_gemm: the cluster barrier and the
// fold of the cluster's fp32 slabs into D (methods of Kernel; twin:
// python_engine/kernels/conv_implicit_gemm/cluster_fold.py, mixin ClusterFold).
#include "kernels/conv_implicit_gemm/emitter.h"

#include "ir/constants.h"
#include "ir/values.h"
#include "kernels/acc_epilogue.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

// After every slab of the cluster is stored: cluster barrier between
// cluster-scope release/acquire fences, then this workgroup (rank = slice)
// folds tile rows [rank*R, rank*R + R), R = ceil(tile_m / S), over slabs
// 0..S-1 in order and stores D: kDVec channels per slot when K and kpg
// allow, else kOutVec.
void Kernel::cluster_fold() {
    b_.fence("cluster", "release");
    b_.call_void("s_cluster_barrier", {});
    b_.fence("cluster", "acquire");
    d_branch([this] { fold_out(kDVec); }, [this] { fold_out(kOutVec); }, "fold");
}

// The fold's slots (twin: ClusterFold.fold_out).
void Kernel::fold_out(int64_t width) {
    const int64_t S = cluster_;
    const int64_t R = (tm_ + S - 1) / S;
    const int64_t per_row = tn_ / width;
    const int64_t count = R * per_row;
    const Value r0 = b_.mul(slice_, ci32(R), "f_rorg");
    for (int64_t j = 0; j < (count + threads_ - 1) / threads_; ++j) {
        Value v = b_.add(tid_, ci32(j * threads_), "f_slot");
        if ((j + 1) * threads_ > count) v = umin_const(v, count - 1, "f_slotc");
        const Value rr = b_.binop("udiv", v, ci32(per_row), "f_rr");
        const Value cv = b_.binop("urem", v, ci32(per_row), "f_cv");
        const Value col = b_.mul(cv, ci32(width), "f_col");
        const Value row = b_.add(r0, rr, "f_row");
        const Value m = b_.add(m0_, row, "f_m");
        const Value n = b_.add(n0_, col, "f_n");
        const Value rok = b_.icmp("ult", row, ci32(tm_), "f_rok");
        const Value mok = b_.icmp("ult", m, p("M"), "f_mok");
        const Value nok = b_.icmp("ult", n, p("kpg"), "f_nok");
        Value ok = b_.binop("and", rok, mok, "f_ok");
        ok = b_.binop("and", ok, nok, "f_ok");
        Value total;
        for (int64_t sl = 0; sl < S; ++sl) {
            const Value off = ws_offset(ci32(sl), m, n, ok, "f");
            Value x = b_.call(load_key(4 * kOutVec), {rws_, off, ci32(0), ci32(0)}, "f_slab");
            if (width > kOutVec) {
                const Value off2 = b_.add(off, ci32(4 * kOutVec), "f_offh");
                const Value x2 = b_.call(load_key(4 * kOutVec), {rws_, off2, ci32(0), ci32(0)}, "f_slab");
                std::vector<int> mask;
                for (int i = 0; i < static_cast<int>(width); ++i) mask.push_back(i);
                x = b_.shufflevector(x, x2, mask, "f_slabw");
            }
            total = sl == 0 ? x : b_.fadd(total, x, "f_sum");
        }
        if (*s_.acc_epilogue != "identity") total = fold_epi(total, n, width);
        store_d(total, m, n, ok, width);
    }
}

// The accumulator epilogue on a folded vector (fp32, the sum of all S slabs),
// once, before the cast: channel kbase + n; a kDVec-wide bias in two kOutVec
// halves (channels n and n + 4: 16-byte bias loads), like cshuffle.
Value Kernel::fold_epi(const Value &total, const Value &n, int64_t width) {
    const Value kn = b_.add(kbase_, n, "epi_ch");
    if (width <= kOutVec || !acc_epilogue::has(s_.acc_epilogue, "bias")) return acc_epi(total, kn, width);
    std::vector<int> lo_m, hi_m, all;
    for (int i = 0; i < static_cast<int>(width); ++i) (i < kOutVec ? lo_m : hi_m).push_back(i), all.push_back(i);
    const Value lo = b_.shufflevector(total, total, lo_m, "f_lo");
    const Value hi = b_.shufflevector(total, total, hi_m, "f_hi");
    const Value y0 = acc_epi(lo, kn, kOutVec);
    const Value kn2 = b_.add(kn, ci32(kOutVec), "epi_chh");
    const Value y1 = acc_epi(hi, kn2, kOutVec);
    return b_.shufflevector(y0, y1, all, "f_epi");
}

}  // namespace cpe::kernels::conv_implicit_gemm

// Epilogues of family conv_implicit_gemm: the accumulator epilogue, D and slab
// stores, default (scalar, D transpose, slab transpose) and cshuffle (methods
// of Kernel; twin: python_engine/kernels/conv_implicit_gemm/epilogue.py, mixin
// Epilogue).
#include "kernels/conv_implicit_gemm/emitter.h"

#include "ir/constants.h"
#include "ir/values.h"
#include "kernels/acc_epilogue.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

// The accumulator epilogue on fp32 x (scalar or <width x float>) whose first
// output channel is n_elem (global channel index, i32): the steps of
// acc_epilogue::emit, the bias one 4*width-byte load at 4*n_elem.
Value Kernel::acc_epi(const Value &x, const Value &n_elem, int64_t width) {
    const auto bias = [&]() {
        const Value off = b_.mul(n_elem, ci32(4), "bias_byte");
        return b_.call(load_key(4 * width), {rbias_, off, ci32(0), ci32(0)}, "bias");
    };
    const auto param = [&](const char *name) { return p(name); };
    return acc_epilogue::emit(b_, *s_.acc_epilogue, x, width, bias, param);
}

// Cast fp32 x (width 1 or kOutVec) and store it at D[m][kbase + n].
void Kernel::store_d(const Value &x, const Value &m, const Value &n, const Value &ok, int64_t width) {
    const Type *vt = width == 1 ? et_ : vec(width, et_);
    const Value y = b_.cast("fptrunc", x, vt, "d_val");
    store_d_raw(y, m, n, ok, width);
}

// Store `width` dtype elements y (already cast) at D[m][kbase + n].
void Kernel::store_d_raw(const Value &y, const Value &m, const Value &n, const Value &ok, int64_t width) {
    const Value raw = b_.cast("bitcast", y, raw_type(2 * width), "d_raw");
    const Value kn = b_.add(kbase_, n, "d_ch");
    const Value rowe = b_.mul(m, p("K"), "d_rowe");
    const Value e = b_.add(rowe, kn, "d_elem");
    Value off = b_.mul(e, ci32(2), "d_byte");
    off = b_.select(ok, off, oob_d_, "d_off");
    b_.call_void(store_key(2 * width), {raw, rd_, off, ci32(0), ci32(0)});
}

// Byte offset of ws[slab][m][kbase + n] (or the out-of-range offset).
Value Kernel::ws_offset(const Value &slab, const Value &m, const Value &n, const Value &ok, const std::string &hint) {
    const Value slabm = b_.mul(slab, p("M"), hint + "_slabm");
    const Value rows = b_.add(slabm, m, hint + "_row");
    const Value kn = b_.add(kbase_, n, hint + "_ch");
    const Value rowe = b_.mul(rows, p("K"), hint + "_rowe");
    const Value e = b_.add(rowe, kn, hint + "_elem");
    const Value off = b_.mul(e, ci32(4), hint + "_byte");
    return b_.select(ok, off, oob_ws_, hint + "_off");
}

// Write one fp32 element/vector of the tile: the slab (split) or D (plain).
void Kernel::out_elem(const Value &x, const Value &m, const Value &n, const Value &ok, int64_t width) {
    if (split_) {
        const Value off = ws_offset(slice_, m, n, ok, "ws");
        b_.call_void(store_key(4 * width), {x, rws_, off, ci32(0), ci32(0)});
    } else {
        const Value kn = b_.add(kbase_, n, "epi_ch");
        const Value y = acc_epi(x, kn, width);
        store_d(y, m, n, ok, width);
    }
}

void Kernel::epilogue() {
    Block &exit_b = b_.new_block("exit");
    if (*s_.epilogue == "default") {
        if (wavelet_) {
            Block &body = b_.new_block("epi_compute");
            Block &skip = b_.new_block("epi_skip");
            b_.cond_br(is_loader_, skip, body);
            b_.position(body);
            epilogue_default();
            b_.br(skip);
            b_.position(skip);
        } else {
            epilogue_default();
        }
    } else {
        epilogue_cshuffle();
    }
    if (cluster_) cluster_fold();
    b_.br(exit_b);
    b_.position(exit_b);
    b_.ret_void();
}

// Wave-uniform: K and kpg are multiples of `vec` (kDVec for D, kOutVec for
// fp32 slabs; kernel arguments only).
Value Kernel::d_vec_ok(int64_t vec, const std::string &hint) {
    const Value kk = b_.binop("or", p("K"), p("kpg"), hint + "_kk");
    const Value low = b_.binop("and", kk, ci32(vec - 1), hint + "_klow");
    return b_.icmp("eq", low, ci32(0), hint + "_wide");
}

// if d_vec_ok(vec): vec_fn() else: scalar_fn() (a uniform branch), then join.
void Kernel::d_branch(const std::function<void()> &vec_fn, const std::function<void()> &scalar_fn,
                      const std::string &hint, int64_t vec, const std::string &ok_hint) {
    const Value ok = d_vec_ok(vec, ok_hint);
    Block &bv = b_.new_block(hint + "_wide");
    Block &bs = b_.new_block(hint + "_narrow");
    Block &bj = b_.new_block(hint + "_done");
    b_.cond_br(ok, bv, bs);
    b_.position(bv);
    vec_fn();
    b_.br(bj);
    b_.position(bs);
    scalar_fn();
    b_.br(bj);
    b_.position(bj);
}

// D: 16-byte stores through the per-wave LDS transpose when K and kpg allow,
// else scalar; fp32 slabs: 16-byte stores through the fp32 transpose when K
// and kpg are multiples of kOutVec (slab_v4), else scalar.
void Kernel::epilogue_default() {
    if (split_) {
        d_branch([this] { slab_v4(); }, [this] { default_scalar(); }, "slab", kOutVec, "ws");
    } else {
        d_branch([this] { default_v16(); }, [this] { default_scalar(); }, "epi");
    }
}

// Each lane stores its fragment elements: acc[i][j] element e is tile row
// wm0 + 16*i + 8*(lane/16) + e, tile column wn0 + 16*j + lane%16.
void Kernel::default_scalar() {
    const Value rbase = b_.mul(half_, ci32(8), "e_rbase");
    for (int64_t i = 0; i < fm_; ++i) {
        for (int64_t j = 0; j < fn_; ++j) {
            const Value acc = accs_[static_cast<size_t>(i * fn_ + j)];
            const Value ec = b_.add(wn0_, ci32(j * kWmmaN), "e_c");
            const Value col = b_.add(ec, lrow_, "e_col");
            const Value n = b_.add(n0_, col, "e_n");
            const Value nok = b_.icmp("ult", n, p("kpg"), "e_nok");
            for (int64_t e = 0; e < 8; ++e) {
                const Value er = b_.add(wm0_, ci32(i * kWmmaM + e), "e_r");
                const Value row = b_.add(er, rbase, "e_row");
                const Value m = b_.add(m0_, row, "e_m");
                const Value mok = b_.icmp("ult", m, p("M"), "e_mok");
                const Value ok = b_.binop("and", mok, nok, "e_ok");
                const Value x = b_.extractelement(acc, ci32(e), "e_x");
                out_elem(x, m, n, ok, 1);
            }
        }
    }
}

// llvm.amdgcn.wave.barrier: no instruction, a code-motion barrier for the
// wave; orders the transpose's cross-lane LDS writes and reads (RAW and WAR)
// in LLVM's memory model.
void Kernel::wave_barrier() { b_.call_void("wave_barrier", {}); }

// Per-wave LDS transpose (twin: Epilogue.default_v16): lane l writes its 8 elements
// (epilogue applied, cast) to region rows 8*(l/16)+e, column l%16; a wave
// barrier; then reads row l%16, columns 8*(l/16)+[0,8) and stores them with
// one 16-byte store. A wave barrier precedes every accumulator's writes but
// the first.
void Kernel::default_v16() {
    const Value lds = lds_.at("lds");
    const Value rb = b_.mul(wave_, ci32(16 * kDtRow), "dt_base");
    const Value wcol = b_.add(rb, lrow_, "dt_wcol");
    const Value rbase = b_.mul(half_, ci32(8), "e_rbase");
    const Value rrow0 = b_.mul(lrow_, ci32(kDtRow), "dt_rrow");
    const Value rrow = b_.add(rb, rrow0, "dt_rd");
    const Value rd = b_.add(rrow, rbase, "dt_rdc");
    for (int64_t i = 0; i < fm_; ++i) {
        for (int64_t j = 0; j < fn_; ++j) {
            const Value acc = accs_[static_cast<size_t>(i * fn_ + j)];
            if (i || j) wave_barrier();
            const Value ec = b_.add(wn0_, ci32(j * kWmmaN), "e_c");
            const Value col = b_.add(ec, lrow_, "e_col");
            const Value n = b_.add(n0_, col, "e_n");
            const Value kn = b_.add(kbase_, n, "epi_ch");
            for (int64_t e = 0; e < 8; ++e) {
                const Value x = b_.extractelement(acc, ci32(e), "e_x");
                const Value y = acc_epi(x, kn, 1);
                const Value h = b_.cast("fptrunc", y, et_, "d_val");
                const Value r = b_.add(rbase, ci32(e), "dt_r");
                const Value wrow = b_.mul(r, ci32(kDtRow), "dt_wrow");
                const Value idx = b_.add(wcol, wrow, "dt_widx");
                const Value ptr = b_.gep(et_, lds, {idx}, "dt_p");
                b_.store(h, ptr, 2);
            }
            wave_barrier();
            const Value ptr = b_.gep(et_, lds, {rd}, "dt_p");
            const Value v = b_.load(vec(kDVec, et_), ptr, 16, "dt_v");
            const Value rorg = b_.add(wm0_, ci32(i * kWmmaM), "dt_rorg");
            const Value row = b_.add(rorg, lrow_, "dt_row");
            const Value m = b_.add(m0_, row, "e_m");
            const Value corg = b_.add(wn0_, ci32(j * kWmmaN), "dt_corg");
            const Value cn = b_.add(corg, rbase, "dt_col");
            const Value n2 = b_.add(n0_, cn, "e_n");
            const Value mok = b_.icmp("ult", m, p("M"), "e_mok");
            const Value nok = b_.icmp("ult", n2, p("kpg"), "e_nok");
            const Value ok = b_.binop("and", mok, nok, "e_ok");
            store_d_raw(v, m, n2, ok, kDVec);
        }
    }
}

// fp32 slab transpose (twin: Epilogue.slab_v4; split-K, K and kpg multiples of
// kOutVec): lane l writes its 8 fp32 elements to region rows 8*(l/16)+e,
// column l%16 (region of wave w: 16*kWtRow floats at w*16*kWtRow); a wave
// barrier; then reads row l%16, columns 8*(l/16)+[0,4) and +[4,8) and stores
// each with one 16-byte store at ws[slice][m][kbase + n]. A wave barrier
// precedes every accumulator's writes but the first.
void Kernel::slab_v4() {
    const Value lds = lds_.at("lds");
    const Value rb = b_.mul(wave_, ci32(16 * kWtRow), "wt_base");
    const Value wcol = b_.add(rb, lrow_, "wt_wcol");
    const Value rbase = b_.mul(half_, ci32(8), "e_rbase");
    const Value rrow0 = b_.mul(lrow_, ci32(kWtRow), "wt_rrow");
    const Value rrow = b_.add(rb, rrow0, "wt_rd");
    const Value rd = b_.add(rrow, rbase, "wt_rdc");
    for (int64_t i = 0; i < fm_; ++i) {
        for (int64_t j = 0; j < fn_; ++j) {
            const Value acc = accs_[static_cast<size_t>(i * fn_ + j)];
            if (i || j) wave_barrier();
            for (int64_t e = 0; e < 8; ++e) {
                const Value x = b_.extractelement(acc, ci32(e), "e_x");
                const Value r = b_.add(rbase, ci32(e), "wt_r");
                const Value wrow = b_.mul(r, ci32(kWtRow), "wt_wrow");
                const Value idx = b_.add(wcol, wrow, "wt_widx");
                const Value ptr = b_.gep(float_(), lds, {idx}, "dt_p");
                b_.store(x, ptr, 4);
            }
            wave_barrier();
            const Value rorg = b_.add(wm0_, ci32(i * kWmmaM), "dt_rorg");
            const Value row = b_.add(rorg, lrow_, "dt_row");
            const Value m = b_.add(m0_, row, "e_m");
            const Value mok = b_.icmp("ult", m, p("M"), "e_mok");
            const Value corg = b_.add(wn0_, ci32(j * kWmmaN), "dt_corg");
            const Value cn = b_.add(corg, rbase, "dt_col");
            for (int64_t h = 0; h < kDVec / kOutVec; ++h) {
                const Value c = b_.add(rd, ci32(kOutVec * h), "wt_rdh");
                const Value ptr = b_.gep(float_(), lds, {c}, "dt_p");
                const Value v = b_.load(vec(kOutVec, float_()), ptr, 16, "wt_v");
                const Value colh = b_.add(cn, ci32(kOutVec * h), "wt_colh");
                const Value n = b_.add(n0_, colh, "e_n");
                const Value nok = b_.icmp("ult", n, p("kpg"), "e_nok");
                const Value ok = b_.binop("and", mok, nok, "e_ok");
                const Value off = ws_offset(slice_, m, n, ok, "ws");
                b_.call_void(store_key(4 * kOutVec), {v, rws_, off, ci32(0), ci32(0)});
            }
        }
    }
}

// Compute waves write the accumulators to the fp32 LDS tile (aliasing A/B,
// after the main loop's last barrier); barrier; then all threads store row
// vectors: 16-byte D stores when K and kpg allow, else kOutVec-wide; kOutVec
// fp32 to the slab. Surplus slots clamp to the last vector.
void Kernel::epilogue_cshuffle() {
    const Value lc = lds_.at("lds");
    Block *join = nullptr;
    if (wavelet_) {
        Block &body = b_.new_block("cs_write");
        join = &b_.new_block("cs_join");
        b_.cond_br(is_loader_, *join, body);
        b_.position(body);
    }
    const Value rbase = b_.mul(half_, ci32(8), "e_rbase");
    for (int64_t i = 0; i < fm_; ++i) {
        for (int64_t j = 0; j < fn_; ++j) {
            const Value acc = accs_[static_cast<size_t>(i * fn_ + j)];
            const Value ec = b_.add(wn0_, ci32(j * kWmmaN), "e_c");
            const Value col = b_.add(ec, lrow_, "e_col");
            for (int64_t e = 0; e < 8; ++e) {
                const Value er = b_.add(wm0_, ci32(i * kWmmaM + e), "e_r");
                const Value row = b_.add(er, rbase, "e_row");
                const Value rowi = b_.mul(row, ci32(ncp_), "cs_rowi");
                const Value idx = b_.add(rowi, col, "cs_idx");
                const Value ptr = b_.gep(float_(), lc, {idx}, "cs_p");
                const Value x = b_.extractelement(acc, ci32(e), "e_x");
                b_.store(x, ptr, 4);
            }
        }
    }
    if (wavelet_) {
        b_.br(*join);
        b_.position(*join);
    }
    barrier();
    if (split_) {
        cshuffle_out(kOutVec);
    } else {
        d_branch([this] { cshuffle_out(kDVec); }, [this] { cshuffle_out(kOutVec); }, "cs");
    }
}

// The store phase of cshuffle (twin: Epilogue.cshuffle_out).
void Kernel::cshuffle_out(int64_t width) {
    const Value lc = lds_.at("lds");
    const int64_t per_row = tn_ / width;
    const int64_t count = tm_ * per_row;
    const Type *v4 = vec(kOutVec, float_());
    for (int64_t j = 0; j < (count + threads_ - 1) / threads_; ++j) {
        Value v = b_.add(tid_, ci32(j * threads_), "cs_slot");
        if ((j + 1) * threads_ > count) v = umin_const(v, count - 1, "cs_slotc");
        Value row, cv;
        if (width == kDVec && per_row > kPairSlots && per_row % kPairSlots == 0) {
            const Value sl = b_.binop("urem", v, ci32(kPairSlots), "cs_sl");
            Value rest = b_.binop("udiv", v, ci32(kPairSlots), "cs_rest");
            const Value rpar = b_.binop("urem", rest, ci32(2), "cs_rpar");
            rest = b_.binop("udiv", rest, ci32(2), "cs_rest");
            const Value seg = b_.binop("urem", rest, ci32(per_row / kPairSlots), "cs_seg");
            const Value pair = b_.binop("udiv", rest, ci32(per_row / kPairSlots), "cs_pair");
            const Value prow = b_.mul(pair, ci32(2), "cs_prow");
            row = b_.add(prow, rpar, "cs_row");
            const Value segv = b_.mul(seg, ci32(kPairSlots), "cs_segv");
            cv = b_.add(segv, sl, "cs_cv");
        } else {
            row = b_.binop("udiv", v, ci32(per_row), "cs_row");
            cv = b_.binop("urem", v, ci32(per_row), "cs_cv");
        }
        const Value col = b_.mul(cv, ci32(width), "cs_col");
        const Value rowi = b_.mul(row, ci32(ncp_), "cs_rowi");
        const Value idx = b_.add(rowi, col, "cs_idx");
        const Value m = b_.add(m0_, row, "cs_m");
        const Value n = b_.add(n0_, col, "cs_n");
        const Value mok = b_.icmp("ult", m, p("M"), "cs_mok");
        const Value nok = b_.icmp("ult", n, p("kpg"), "cs_nok");
        const Value ok = b_.binop("and", mok, nok, "cs_ok");
        if (width == kOutVec) {
            const Value ptr = b_.gep(float_(), lc, {idx}, "cs_p");
            const Value x = b_.load(v4, ptr, 16, "cs_x");
            out_elem(x, m, n, ok, kOutVec);
            continue;
        }
        std::vector<Value> parts;
        for (int64_t h = 0; h < width / kOutVec; ++h) {
            const Value ih = h ? b_.add(idx, ci32(h * kOutVec), "cs_idxh") : idx;
            const Value ptr = b_.gep(float_(), lc, {ih}, "cs_p");
            const Value x = b_.load(v4, ptr, 16, "cs_x");
            const Value nh = h ? b_.add(n, ci32(h * kOutVec), "cs_nh") : n;
            const Value kn = b_.add(kbase_, nh, "epi_ch");
            parts.push_back(acc_epi(x, kn, kOutVec));
        }
        std::vector<int> mask;
        for (int i = 0; i < static_cast<int>(width); ++i) mask.push_back(i);
        const Value y = b_.shufflevector(parts[0], parts[1], mask, "cs_y");
        const Value dv = b_.cast("fptrunc", y, vec(width, et_), "d_val");
        store_d_raw(dv, m, n, ok, width);
    }
}

}  // namespace cpe::kernels::conv_implicit_gemm

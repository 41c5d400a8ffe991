// Global -> LDS load slots of family conv_implicit_gemm: the per-thread slots,
// the strength-reduced im2col K walk, the tile loads and LDS stores (methods of
// Kernel; twin: python_engine/kernels/conv_implicit_gemm/slots.py, mixin Slots).
#include "kernels/conv_implicit_gemm/emitter.h"

#include "ir/constants.h"
#include "ir/values.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

// Per-thread load slots (fixed for the whole K loop): slot j of a thread is
// vector v = ltid + j*load_threads of the tile, clamped to the last vector.
// The im2col walk is strength-reduced: a slot's K coordinate lives in a K state
// (channel c, xd = x*dil_w, yd = y*dil_h, byte offset ko of (y, x, c) inside a
// pixel window), computed with divisions once here for k_begin and advanced by
// tile_k per K tile with two single wraps (advance). Slots whose vector index
// differs by a multiple of the row length share one K state; a clamped slot has
// its own.
void Kernel::slot_setup() {
    k_step_setup();
    a_slot_setup();
    b_slot_setup();
}

// The K walk's uniform per-tile step (step_): tile_k = sa*cpg + sb, sa = ay*X + ax,
// and the byte steps of one K tile with and without a wrap. Twin: Slots.k_step_setup.
void Kernel::k_step_setup() {
    // the K walk's channel count: cpg, or the padded pixel (channel 0 in every state)
    const Value cpg = pix_ ? ci32(slot_a_) : p("cpg"), X = p("X");
    kcpg_ = cpg;
    const Value dw = p("dil_w"), dh = p("dil_h");
    // tile_k = sa*cpg + sb, sa = ay*X + ax: the uniform per-tile step.
    const Value tk = ci32(tk_);
    const Value sa = b_.binop("udiv", tk, cpg, "k_sa");
    const Value sb = b_.binop("urem", tk, cpg, "k_sb");
    const Value ay = b_.binop("udiv", sa, X, "k_ay");
    const Value ax = b_.binop("urem", sa, X, "k_ax");
    c2_ = b_.mul(p("C"), ci32(2), "k_pixb");  // bytes per pixel
    rowb_ = b_.mul(p("W"), c2_, "k_rowb");    // bytes per image row
    const Value axd = b_.mul(ax, dw, "k_axd");
    const Value ayd = b_.mul(ay, dh, "k_ayd");
    const Value xlim = b_.mul(X, dw, "k_xlim");
    const Value sbb = b_.mul(sb, ci32(2), "k_sbb");
    const Value axb = b_.mul(axd, c2_, "k_axb");
    const Value kc = b_.add(sbb, axb, "k_kstep");
    const Value ayb = b_.mul(ayd, rowb_, "k_ayb");
    const Value ko0 = b_.add(kc, ayb, "k_kstep");
    const Value dwb = b_.mul(dw, c2_, "k_dwb");
    const Value cpgb = b_.mul(cpg, ci32(2), "k_cpgb");
    const Value d1 = b_.sub(dwb, cpgb, "k_dcy");
    const Value dhb = b_.mul(dh, rowb_, "k_dhb");
    const Value xlimb = b_.mul(xlim, c2_, "k_xlimb");
    const Value d2 = b_.sub(dhb, xlimb, "k_dcx");
    const Value xs1 = b_.add(axd, dw, "k_axdc");
    const Value ys1 = b_.add(ayd, dh, "k_aydc");
    const Value ko1 = b_.add(ko0, d1, "k_kstepc");
    step_ = KStep{sb, cpg, axd, xs1, xlim, ayd, ys1, ko0, ko1, d2, dw, dh, d1};
}

// The A (image) load slots: per slot its K state, pixel base, bounds and LDS
// offset. With row_slots slot j is chunk j of the thread's row ltid: one pixel for
// every slot, and K state j (element k_begin + 8*j). Twin: Slots.a_slot_setup.
void Kernel::a_slot_setup() {
    const int64_t lt = load_threads_;
    const int64_t va = slot_a_;
    const int64_t per_row = tk_ / va;
    const int64_t count = tm_ * per_row;
    const bool rows = row_slots(s_);
    std::vector<Value> pix;  // (hb, wbase, pbase) of the last slot's row
    for (int64_t j = 0; j < (count + lt - 1) / lt; ++j) {
        Value v = ltid_;
        const bool clamped = !rows && (j + 1) * lt > count;
        if (!rows) v = b_.add(ltid_, ci32(j * lt), "a_slot");
        if (clamped) v = umin_const(v, count - 1, "a_slotc");
        const Value row = rows ? ltid_ : b_.binop("udiv", v, ci32(per_row), "a_row");
        if (rows) {
            a_states_.push_back(k_state(j, va, "a"));
        } else if (j == 0 || clamped || lt % per_row) {
            const Value kv = b_.binop("urem", v, ci32(per_row), "a_kv");
            a_states_.push_back(k_state(kv, va, "a"));
        }
        const size_t st = a_states_.size() - 1;
        const Value koff = a_states_[st].koff;
        if (pix.empty() || !rows) {
            const std::array<Value, 3> px = a_pixel(row);
            pix.assign(px.begin(), px.end());
        }
        const Value lds_off = slot_lds(row, koff, va, "a");
        a_slots_.push_back(ASlot{st, pix[0], pix[1], pix[2], lds_off});
    }
}

// (hb, wbase, pbase) of tile row `row`: its output pixel's input window origin (hb
// 2^30 for a row past M) and byte offset. Twin: Slots.a_pixel.
std::array<Value, 3> Kernel::a_pixel(const Value &row) {
    const Value m = b_.add(m0_, row, "a_m");
    const Value mok = b_.icmp("ult", m, p("M"), "a_mok");
    const Value hw = b_.mul(p("Ho"), p("Wo"), "a_hw");
    const Value img = b_.binop("udiv", m, hw, "a_img");
    const Value rem = b_.binop("urem", m, hw, "a_pix");
    const Value ho = b_.binop("udiv", rem, p("Wo"), "a_ho");
    const Value wo = b_.binop("urem", rem, p("Wo"), "a_wo");
    const Value hs = b_.mul(ho, p("stride_h"), "a_hs");
    const Value hbase = b_.sub(hs, p("pad_h"), "a_hbase");
    const Value ws = b_.mul(wo, p("stride_w"), "a_ws");
    const Value wbase = b_.sub(ws, p("pad_w"), "a_wbase");
    const Value nh = b_.mul(img, p("H"), "a_nh");
    // Byte offset of (img, hbase, wbase, channel g*cpg): the slot's pixel base;
    // a row past M gets hbase 2^30 so that its hi check always fails.
    const Value nhb = b_.add(nh, hbase, "a_nhb");
    const Value nhw = b_.mul(nhb, p("W"), "a_nhw");
    const Value pw = b_.add(nhw, wbase, "a_pw");
    const Value pwc = b_.mul(pw, p("C"), "a_pwc");
    const Value pc = b_.add(pwc, cbase_, "a_pe");
    const Value pbase = b_.mul(pc, ci32(2), "a_pbase");
    const Value hb = b_.select(mok, hbase, ci32(int64_t(1) << 30), "a_hb");
    return {hb, wbase, pbase};
}

// The B (filter) load slots: per slot its K state, filter byte, bound and LDS
// offset. Twin: Slots.b_slot_setup.
void Kernel::b_slot_setup() {
    const int64_t lt = load_threads_;
    const int64_t vb = slot_b_;
    const int64_t per_row = tk_ / vb;
    const int64_t count = tn_ * per_row;
    for (int64_t j = 0; j < (count + lt - 1) / lt; ++j) {
        Value v = b_.add(ltid_, ci32(j * lt), "b_slot");
        const bool clamped = (j + 1) * lt > count;
        if (clamped) v = umin_const(v, count - 1, "b_slotc");
        const Value row = b_.binop("udiv", v, ci32(per_row), "b_row");
        if (j == 0 || clamped || lt % per_row) {
            const Value kv = b_.binop("urem", v, ci32(per_row), "b_kv");
            const Value koff = b_.mul(kv, ci32(vb), "b_koff");
            const Value klim = k_limit(koff, "b");
            b_states_.push_back(BState{kv, koff, klim});
        }
        const size_t st = b_states_.size() - 1;
        const Value koff = b_states_[st].koff;
        const Value n = b_.add(n0_, row, "b_n");
        const Value nok = b_.icmp("ult", n, p("kpg"), "b_nok");
        const Value kn = b_.add(kbase_, n, "b_kn");
        const Value wrow = b_.mul(kn, p("Kgemm"), "b_wrow");
        Value wbyte;
        if (pix_) {  // filter tap kv of the tile: pix channels (2*pix bytes) per tap in w
            const Value wr = b_.mul(wrow, ci32(2), "b_wrowb");
            const Value tb = b_.mul(b_states_[st].kv, ci32(2 * pix_), "b_tapb");
            wbyte = b_.add(wr, tb, "b_wbyte");
        } else {
            const Value wk = b_.add(wrow, koff, "b_wk");
            wbyte = b_.mul(wk, ci32(2), "b_wbyte");
        }
        const Value lds_off = slot_lds(row, koff, vb, "b");
        b_slots_.push_back(BSlot{st, nok, wbyte, lds_off});
    }
}

// Element index in an A/B buffer of 16-byte chunk `ch` of tile row `row` (plus
// `within` elements when given): row*tile_k + 8*(ch ^ f(row)), the swizzle.
Value Kernel::swz_index(const Value &row, const Value &ch, const Value *within, const std::string &hint) {
    const int64_t rps = swz_.first, per = swz_.second;
    int64_t sh = 0;
    while ((int64_t{1} << sh) < rps) ++sh;
    const Value q = rps == 1 ? row : b_.binop("lshr", row, ci32(sh), hint + "_swq");
    const Value f = b_.binop("and", q, ci32(per - 1), hint + "_swf");
    const Value sc = b_.binop("xor", ch, f, hint + "_sch");
    Value e = b_.binop("shl", sc, ci32(3), hint + "_sce");
    if (within) e = b_.binop("or", e, *within, hint + "_scw");
    const Value lrow = b_.mul(row, ci32(tk_), hint + "_lrow");
    return b_.add(lrow, e, hint + "_loff");
}

// LDS element index of a load slot's vector (koff elements into the row).
Value Kernel::slot_lds(const Value &row, const Value &koff, int64_t vec, const std::string &hint) {
    const Value ch = b_.binop("lshr", koff, ci32(3), hint + "_kch");
    if (vec < kChunk) {
        const Value within = b_.binop("and", koff, ci32(kChunk - 1), hint + "_kin");
        return swz_index(row, ch, &within, hint);
    }
    return swz_index(row, ch, nullptr, hint);
}

// klim with k0 + koff < k_end <=> k0 < klim (unsigned) for every tile origin k0:
// k_end - koff, or 0 when koff >= k_end.
Value Kernel::k_limit(const Value &koff, const std::string &hint) {
    const Value kin = b_.icmp("ult", koff, k_end_, hint + "_kin");
    const Value kl = b_.sub(k_end_, koff, hint + "_klim");
    return b_.select(kin, kl, ci32(0), hint + "_klim");
}

// The K state of element r = k_begin + kv*va (divisions, once per workgroup).
KState Kernel::k_state(const Value &kv, int64_t va, const std::string &hint) {
    const Value koff = b_.mul(kv, ci32(va), hint + "_koff");
    const Value r0 = b_.add(k_begin_, koff, hint + "_rk");
    return k_state_of(koff, r0, false, hint);
}

// The K state at the literal vector index kv (row_slots' uniform states): koff =
// kv*va; kv 0: element k_begin itself and the K limit k_end. Twin: Slots.k_state
// with an int kv.
KState Kernel::k_state(int64_t kv, int64_t va, const std::string &hint) {
    const Value koff = ci32(kv * va);
    const Value r0 = kv ? b_.add(k_begin_, koff, hint + "_rk") : k_begin_;
    return k_state_of(koff, r0, kv == 0, hint);
}

// The divisions of k_state for element r0 = k_begin + koff; `at_begin`: koff is 0,
// the K limit is k_end.
KState Kernel::k_state_of(const Value &koff, const Value &r0, bool at_begin, const std::string &hint) {
    const Value c = b_.binop("urem", r0, kcpg_, hint + "_ck");
    const Value q = b_.binop("udiv", r0, kcpg_, hint + "_qk");
    const Value x = b_.binop("urem", q, p("X"), hint + "_xk");
    const Value y = b_.binop("udiv", q, p("X"), hint + "_yk");
    const Value xd = b_.mul(x, p("dil_w"), hint + "_xdk");
    const Value yd = b_.mul(y, p("dil_h"), hint + "_ydk");
    const Value kyb = b_.mul(yd, rowb_, hint + "_kyb");
    const Value kxb = b_.mul(xd, c2_, hint + "_kxb");
    const Value kxy = b_.add(kyb, kxb, hint + "_kxy");
    const Value kcb = b_.mul(c, ci32(2), hint + "_kcb");
    const Value ko = b_.add(kxy, kcb, hint + "_ko");
    const Value klim = at_begin ? k_end_ : k_limit(koff, hint);
    return KState{koff, klim, c, xd, yd, ko};
}

// The K states of the next tile: c += sb with one wrap (carry into x),
// x += ax (+1) with one wrap (carry into y), y += ay (+1); ko follows with the
// uniform byte steps. No division.
std::vector<KState> Kernel::advance(const std::vector<KState> &states, bool carry_steps) {
    const KStep &st = step_;
    std::vector<KState> out;
    for (const KState &s0 : states) {
        const Value c1 = b_.add(s0.c, st.sb, "k_cn");
        const Value cy1 = b_.icmp("uge", c1, st.cpg, "k_cyc");
        const Value cw = b_.select(cy1, st.cpg, ci32(0), "k_cw");
        const Value c = b_.sub(c1, cw, "k_c");
        Value xd1;
        if (carry_steps) {
            const Value xd0 = b_.add(s0.xd, st.xs0, "k_xdn");
            xd1 = b_.add(xd0, b_.select(cy1, st.dw, ci32(0), "k_xs"), "k_xdn");
        } else {
            const Value xs = b_.select(cy1, st.xs1, st.xs0, "k_xs");
            xd1 = b_.add(s0.xd, xs, "k_xdn");
        }
        const Value cy2 = b_.icmp("uge", xd1, st.xlim, "k_cyx");
        const Value xw = b_.select(cy2, st.xlim, ci32(0), "k_xw");
        const Value xd = b_.sub(xd1, xw, "k_xd");
        Value yd, ko1;
        if (carry_steps) {
            const Value yd0 = b_.add(s0.yd, st.ys0, "k_ydn");
            yd = b_.add(yd0, b_.select(cy2, st.dh, ci32(0), "k_ys"), "k_yd");
            const Value ko0 = b_.add(s0.ko, st.ko0, "k_kon");
            ko1 = b_.add(ko0, b_.select(cy1, st.d1, ci32(0), "k_ks"), "k_kon");
        } else {
            const Value ys = b_.select(cy2, st.ys1, st.ys0, "k_ys");
            yd = b_.add(s0.yd, ys, "k_yd");
            const Value ks = b_.select(cy1, st.ko1, st.ko0, "k_ks");
            ko1 = b_.add(s0.ko, ks, "k_kon");
        }
        const Value kw = b_.select(cy2, st.d2, ci32(0), "k_kw");
        const Value ko = b_.add(ko1, kw, "k_ko");
        out.push_back(KState{s0.koff, s0.klim, c, xd, yd, ko});
    }
    return out;
}

// Global loads of the K tile starting at k0 (the A K states `states` describe
// the same tile) into registers; returns the raw values of the A slots then the
// B slots.
TileVals Kernel::load_tile(const Value &k0, const std::vector<KState> &states) {
    TileVals out;
    const int64_t va = s_.vector_a, vb = s_.vector_b;
    std::vector<Value> roks;
    for (const KState &st : a_states_) roks.push_back(b_.icmp("ult", k0, st.klim, "a_rok"));
    for (const ASlot &sl : a_slots_) {
        const KState &st = states[sl.st];
        const Value hi = b_.add(sl.hb, st.yd, "a_hi");
        const Value wi = b_.add(sl.wb, st.xd, "a_wi");
        const Value hok = b_.icmp("ult", hi, p("H"), "a_hok");  // unsigned: negative is out
        const Value wok = b_.icmp("ult", wi, p("W"), "a_wok");
        Value ok = b_.binop("and", roks[sl.st], hok, "a_ok");
        ok = b_.binop("and", ok, wok, "a_ok");
        Value off = b_.add(sl.pbase, st.ko, "a_byte");
        off = b_.select(ok, off, oob_x_, "a_off");
        out.a.push_back(load_slot(rx_, off, va, "a"));
    }
    roks.clear();
    for (const BState &st : b_states_) roks.push_back(b_.icmp("ult", k0, st.klim, "b_rok"));
    Value kb;
    if (pix_) {  // tap k0/slot of w: 2*pix bytes per tap
        int64_t sh = 0;
        while ((int64_t(1) << (sh + 1)) <= slot_b_) ++sh;
        const Value tap = b_.binop("lshr", k0, ci32(sh), "b_ktap");
        kb = b_.mul(tap, ci32(2 * pix_), "b_kbyte");
    } else {
        kb = b_.mul(k0, ci32(2), "b_kbyte");
    }
    for (const BSlot &sl : b_slots_) {
        const Value ok = b_.binop("and", sl.nok, roks[sl.st], "b_ok");
        Value off = b_.add(sl.wbyte, kb, "b_byte");
        off = b_.select(ok, off, oob_w_, "b_off");
        out.b.push_back(load_slot(rw_, off, vb, "b"));
    }
    return out;
}

// The raw value of one load slot at byte `off`: one 2*v-byte buffer load, or for
// a padded pixel (v in 3, 5, 6, 7) the pieces of pixel_pieces at off, off+8, ...
// (the constant as soffset) as i32 words, the 2-byte piece zero-extended (its
// high half is the first padding channel), the words past them zero:
// pixel_slot(v) elements. The pieces lie inside the pixel, so each is wholly in
// or out of the buffer range with it.
Value Kernel::load_slot(const Value &rsrc, const Value &off, int64_t v, const std::string &hint) {
    if (!is_pixel_vector(v)) return b_.call(load_key(2 * v), {rsrc, off, ci32(0), ci32(0)}, hint + "_val");
    std::vector<Value> words;
    int64_t at = 0;
    for (int64_t nb : pixel_pieces(v)) {
        const Value x = b_.call(load_key(nb), {rsrc, off, ci32(at), ci32(0)}, hint + "_pc");
        if (nb == 8) {
            const Value xw = b_.cast("bitcast", x, vec(2, i32()), hint + "_pcw");
            const Value w0 = b_.extractelement(xw, ci32(0), hint + "_w");
            const Value w1 = b_.extractelement(xw, ci32(1), hint + "_w");
            words.push_back(w0);
            words.push_back(w1);
        } else if (nb == 4) {
            words.push_back(b_.cast("bitcast", x, i32(), hint + "_w"));
        } else {
            words.push_back(b_.cast("zext", x, i32(), hint + "_w"));
        }
        at += nb;
    }
    const int64_t nw = pixel_slot(v) / 2;
    Value vv = zeroinit(vec(nw, i32()));
    for (size_t k = 0; k < words.size(); ++k)
        vv = b_.insertelement(vv, words[k], ci32(int64_t(k)), hint + "_pix");
    return b_.cast("bitcast", vv, raw_type(2 * pixel_slot(v)), hint + "_val");
}

// Store loaded registers into LDS buffer `buf` (i32 0 or 1); `a_slots`: the A slots the
// values were loaded for (nullptr: the K walk's, a_slots_).
void Kernel::store_tile(const TileVals &vals, const Value &buf, const std::vector<ASlot> *a_slots) {
    const std::vector<ASlot> &as = a_slots ? *a_slots : a_slots_;
    const Value abase = b_.mul(buf, ci32(tm_ * tk_), "a_buf");
    for (size_t i = 0; i < as.size(); ++i) {
        const Value idx = b_.add(abase, as[i].lds, "a_lidx");
        const Value ptr = b_.gep(et_, lds_a_, {idx}, "a_lp");
        b_.store(vals.a[i], ptr, 2 * slot_a_);
    }
    const Value bbase = b_.mul(buf, ci32(tn_ * tk_), "b_buf");
    for (size_t i = 0; i < b_slots_.size(); ++i) {
        const Value idx = b_.add(bbase, b_slots_[i].lds, "b_lidx");
        const Value ptr = b_.gep(et_, lds_b_, {idx}, "b_lp");
        b_.store(vals.b[i], ptr, 2 * slot_b_);
    }
}

}  // namespace cpe::kernels::conv_implicit_gemm

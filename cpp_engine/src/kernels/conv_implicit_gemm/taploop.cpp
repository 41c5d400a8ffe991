// The uniform-tap K loop of family conv_implicit_gemm (methods of Kernel; twin:
// python_engine/kernels/conv_implicit_gemm/taploop.py, mixin TapLoop): the two-deep
// pipelined K loop when every K tile pair lies in one filter tap, so the K walk is
// wave-uniform (SGPRs) and the per-tile A/B addressing is a scalar offset
// (docs/conv_implicit_gemm.md, "Uniform-tap loop").
#include "kernels/conv_implicit_gemm/emitter.h"

#include <algorithm>

#include "ir/constants.h"
#include "ir/values.h"
#include "kernels/conv_implicit_gemm/lds.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

// Branch (wave-uniform, on kernel arguments) between the uniform-tap loop and the
// K walk of pipelined_loop; emits the former, pushes its exit onto `exits` and
// leaves the builder at the start of the latter (block kwalk). The condition is
// cpg % (2*tile_k) == 0; split-K adds k_begin % (2*tile_k) == 0 and an even ntiles.
// Then every pair of K tiles lies in one filter tap and k_end needs no mask: the
// walk state (cb = 2*c0, kb = 2*k0, xd, yd, kox) is uniform, stepped once per pair;
// an A slot's voffset (ok ? pbase + 2*koff + kox : x_bytes) is recomputed once per
// pair, a B slot's (nok ? wbyte : w_bytes) is invariant, and tile h of a pair loads
// with the uniform soffset cb + 2*h*tile_k (A) or kb + 2*h*tile_k (B). An
// out-of-range voffset stays out of range with any soffset added (all below 2^31),
// an in-range one plus soffset is the element's own address, so the result does not
// depend on whether the range check counts soffset. The loop runs ntiles/2
// iterations of two halves (the held tile as in pipelined_loop); the last
// iteration's loads (two tiles past k_end) are never computed. Each half waits once
// for the held tile's loads (s_wait_loadcnt 0), stores them, issues its loads A, B,
// A, B (no hard clause), then computes. In a tap_tile_kernel the walk's side is
// block taptile_gate: the tap-tile loop (taptile_loop, which pushes its exit too),
// then the K walk (block kwalk).
void Kernel::tap_loop(size_t nacc, const Value &zero, Block &done, std::vector<LoopExit> &exits) {
    const int64_t tk2 = 2 * tk_;
    const bool taptile = tap_tile_kernel();
    Block &walk = tap_branch(taptile ? "taptile_gate" : "kwalk");
    tap_invariants();
    const TapState st0 = split_ ? tap_state(&k_begin_) : tap_state(nullptr);
    const std::vector<Value> voffs = tap_offsets(st0);
    store_tile(tap_tile(voffs, st0, 0), ci32(0), &tap_a_slots_);
    const TileVals held = tap_tile(voffs, st0, 1);
    const Value k1 = split_ ? b_.add(k_begin_, ci32(tk2), "tp_knext") : ci32(tk2);
    const TapState st1 = tap_state(&k1, true);
    const std::vector<Value> voffs1 = tap_offsets(st1);
    Block &loop = b_.new_block("tap_loop");
    const LoopEntry in = enter_loop(loop, nacc);
    Block &pro_end = *in.pro_end;
    Phi &t = *in.t;
    const std::vector<Phi *> &acc_phis = in.acc_phis;
    std::array<Phi *, 5> st_phis{};
    for (size_t f = 0; f < 5; ++f) st_phis[f] = &b_.phi(i32(), std::string("tp_") + kTapState[f]);
    std::vector<Phi *> vo_phis;
    for (size_t j = 0; j < voffs1.size(); ++j) vo_phis.push_back(&b_.phi(i32(), "tp_voff"));
    TileVals vals;
    const HeldPhis val_phis = held_phis(held, vals);
    TapState st;
    for (size_t f = 0; f < 5; ++f) tap_field(st, f) = st_phis[f]->result();
    std::vector<Value> vo, accs;
    for (Phi *ph : vo_phis) vo.push_back(ph->result());
    for (Phi *ph : acc_phis) accs.push_back(ph->result());
    // the next pair's scalar walk first; its A voffsets after the last WMMA
    const TapState nst = tap_step(st);
    b_.call_void("sched_barrier", {ci32(0)});
    const std::vector<Value> nvo = tap_pair(vals, vo, st, nst, accs);
    st = nst;
    vo = nvo;
    const Value t2 = b_.add(t.result(), ci32(2), "t_next", {"nuw", "nsw"});
    Block &loop_end = close_trip(loop, done, pro_end, t, t2, acc_phis, zero, accs);
    for (size_t f = 0; f < 5; ++f) {
        st_phis[f]->add_incoming(tap_field(st1, f), pro_end);
        st_phis[f]->add_incoming(tap_field(st, f), loop_end);
    }
    for (size_t j = 0; j < vo_phis.size(); ++j) {
        vo_phis[j]->add_incoming(voffs1[j], pro_end);
        vo_phis[j]->add_incoming(vo[j], loop_end);
    }
    close_held(val_phis, held, vals, pro_end, loop_end);
    b_.position(walk);
    exits.push_back(LoopExit{accs, &loop_end});
    if (taptile) taptile_loop(nacc, zero, done, exits);  // the tap-tile loop, then the K walk (block kwalk)
}

// The wave-uniform branch of tap_loop: cpg % (2*tile_k) (split-K: or'ed with
// k_begin % (2*tile_k) and ntiles & 1) nonzero takes the fallback: block `fallback`
// (kwalk, the K walk, or taptile_gate, the tap-tile loop's test). Returns that
// block; leaves the builder in tap_pro. Twin: TapLoop.tap_branch.
Block &Kernel::tap_branch(const std::string &fallback) {
    const int64_t tk2 = 2 * tk_;
    Value cr = b_.binop("urem", p("cpg"), ci32(tk2), "tp_cr");
    if (split_) {  // and the slice starts on a pair and has whole pairs
        const Value kr = b_.binop("urem", k_begin_, ci32(tk2), "tp_kr");
        cr = b_.binop("or", cr, kr, "tp_r");
        const Value odd = b_.binop("and", ntiles_, ci32(1), "tp_odd");
        cr = b_.binop("or", cr, odd, "tp_r");
    }
    return uniform_branch(cr, "tp", fallback, "tap_pro");
}

// A wave-uniform branch between a fast path (block `fast`, taken when `rem` is 0)
// and its fallback (block `fallback`): beside the two-deep loop the fallback is the
// true side of <hint>_gen = rem != 0, beside the one-tile loop the false side of
// <hint>_uni = rem == 0. Beside the two-deep loop the K walk on the true side makes
// LLVM 22 allocate 108 VGPRs at 64x64x32, not 118 (occupancy 9, not 8); beside the
// one-tile loop LLVM's structurizer then places the walk first, so the fast loop
// does not hold the walk's values (tap_beside). Returns the fallback block; leaves
// the builder in `fast`. Twin: TapLoop.uniform_branch.
Block &Kernel::uniform_branch(const Value &rem, const std::string &hint, const std::string &fallback,
                              const std::string &fast) {
    const bool two_deep = pipelines_two_deep();
    const Value cond = two_deep ? b_.icmp("ne", rem, ci32(0), hint + "_gen") : b_.icmp("eq", rem, ci32(0), hint + "_uni");
    Block &slow = b_.new_block(fallback);
    Block &go = b_.new_block(fast);
    if (two_deep) {
        b_.cond_br(cond, slow, go);
    } else {
        b_.cond_br(cond, go, slow);
    }
    b_.position(go);
    return slow;
}

// One iteration's two halves (K tiles t, t+1 from LDS buffers 0, 1): store the held
// tile `vals`, load the next from voffsets `vo` and state `st` (into `vals`),
// compute (into `accs`); the second half also makes the next pair's A voffsets from
// `nst`, which it returns. Twin: TapLoop.tap_pair.
std::vector<Value> Kernel::tap_pair(TileVals &vals, const std::vector<Value> &vo, const TapState &st,
                                    const TapState &nst, std::vector<Value> &accs) {
    std::vector<Value> nvo;
    for (int64_t h = 0; h < 2; ++h) {
        // one wait for the held tile's loads (the only ones in flight), not a
        // graded wait before each LDS store
        b_.call_void("s_wait_loadcnt", {const_int(i16(), 0)});
        store_tile(vals, ci32(1 - h), &tap_a_slots_);
        b_.call_void("sched_barrier", {ci32(0)});
        vals = tap_tile(vo, st, h);
        b_.call_void("sched_barrier", {ci32(0)});
        accs = compute(ci32(h), accs);
        b_.call_void("sched_barrier", {ci32(0)});
        if (h) {
            nvo = tap_offsets(nst);
            b_.call_void("sched_barrier", {ci32(0)});
        }
        // nothing between s_barrier_signal and s_barrier_wait: llvm-mca's gfx1250
        // model retires in order behind the signal's guessed 2000-cycle latency,
        // so work LLVM moves into that gap costs a second barrier latency there
        barrier(true);
        b_.call_void("sched_barrier", {ci32(0)});
    }
    return nvo;
}

// Once, in the uniform-tap prologue (and again in the tap-tile loop's): per A slot
// a_tap = pbase + 2*koff, per B slot b_voff = nok ? wbyte : w_bytes, the uniform
// steps cpg_b = 2*cpg (bytes of a tap's channels), dw_b = dil_w*2*C (one dilated
// pixel), and kb_last = 2*(k_end - tiles*tile_k), the B offset of the last step's
// first tile (`tiles` K tiles a step: 2 the pair loop, 1 the tap-tile loop), at which
// cap_kb holds the look-ahead states. Each call makes them anew (the twin assigns
// new lists). Twin: TapLoop.tap_invariants.
void Kernel::tap_invariants(int64_t tiles) {
    const Value kendb = b_.mul(k_end_, ci32(2), "tp_kendb");
    tap_kb_last_ = b_.sub(kendb, ci32(2 * tiles * tk_), "tp_kblast");
    a_tap_.clear();
    b_voff_.clear();
    tap_cpgb_ = b_.mul(p("cpg"), ci32(2), "tp_cpgb");
    tap_dwb_ = b_.mul(p("dil_w"), c2_, "tp_dwb");
    tap_a_slots_ = a_slots_;  // the tap loop's A slots: the walk's, or tap_rows' own
    if (row_slots(s_)) {  // one pixel a thread: slot 0's (chunk 0) base; chunk j at +16*j
        a_tap_.push_back(a_slots_[0].pbase);
    } else if (tap_rows(s_)) {  // the tap loop's own slots; slot 0's chunk at 2*koff past the pixel
        tap_a_slots_.clear();
        const Value koff = tap_row_slots(tap_a_slots_);
        const Value kb = b_.mul(koff, ci32(2), "tp_koffb");
        a_tap_.push_back(b_.add(tap_a_slots_[0].pbase, kb, "tp_abase"));
    } else {
        std::vector<Value> kb;
        for (const KState &s : a_states_) kb.push_back(b_.mul(s.koff, ci32(2), "tp_koffb"));
        for (const ASlot &sl : a_slots_) a_tap_.push_back(b_.add(sl.pbase, kb[sl.st], "tp_abase"));
    }
    for (const BSlot &sl : b_slots_) b_voff_.push_back(b_.select(sl.nok, sl.wbyte, oob_w_, "tp_bvoff"));
}

// tap_rows' A slots of the tap loop (into `slots`): slot j is chunk (ltid % r)*s + j
// of row ltid / r (r row_threads, s = tile_k/8/r), one pixel for all. Returns slot
// 0's element offset in the row, 8*(ltid % r)*s. Twin: TapLoop.tap_row_slots.
Value Kernel::tap_row_slots(std::vector<ASlot> &slots) {
    const int64_t r = row_threads(s_);
    const int64_t s = tk_ / kChunk / r;
    const Value row = b_.binop("udiv", ltid_, ci32(r), "tp_row");
    const Value rk = b_.binop("urem", ltid_, ci32(r), "tp_rk");
    const Value koff = b_.mul(rk, ci32(s * kChunk), "tp_rkoff");
    const std::array<Value, 3> pix = a_pixel(row);
    for (int64_t j = 0; j < s; ++j) {
        const Value kj = j ? b_.add(koff, ci32(j * kChunk), "tp_rkoffj") : koff;
        slots.push_back(ASlot{0, pix[0], pix[1], pix[2], slot_lds(row, kj, kChunk, "tp_a")});
    }
    return koff;
}

// The uniform walk state of the pair starting at element *k (nullptr: 0, all fields
// 0) with divisions: cb = 2*(k % cpg), kb = 2*k, tap k / cpg = y*X + x, xd = x*dil_w,
// yd = y*dil_h, kox = yd*rowb + xd*2*C.
TapState Kernel::tap_state(const Value *k, bool cap) {
    if (k == nullptr) {
        const Value z = ci32(0);
        return TapState{z, z, z, z, z};
    }
    const Value cpg = p("cpg"), X = p("X");
    const Value tap = b_.binop("udiv", *k, cpg, "tp_tap");
    const Value c = b_.binop("urem", *k, cpg, "tp_c");
    const Value x = b_.binop("urem", tap, X, "tp_x");
    const Value y = b_.binop("udiv", tap, X, "tp_y");
    const Value xd = b_.mul(x, p("dil_w"), "tp_xd");
    const Value yd = b_.mul(y, p("dil_h"), "tp_yd");
    const Value yb = b_.mul(yd, rowb_, "tp_yb");
    const Value xb = b_.mul(xd, c2_, "tp_xb");
    const Value kox = b_.add(yb, xb, "tp_kox");
    const Value cb = b_.mul(c, ci32(2), "tp_cb");
    const Value kb = b_.mul(*k, ci32(2), "tp_kb");
    return TapState{cb, cap ? cap_kb(kb) : kb, xd, yd, kox};
}

// Per A slot, the voffset of the pair's tap: pbase + 2*koff + kox when the tap's
// pixel (hb + yd, wb + xd) lies in the image (unsigned compares), else x_bytes.
std::vector<Value> Kernel::tap_offsets(const TapState &st) {
    std::vector<Value> out;
    for (size_t j = 0; j < a_tap_.size(); ++j) {  // row_slots: one (the slots' one pixel)
        const ASlot &sl = tap_a_slots_[j];
        const Value hi = b_.add(sl.hb, st.yd, "tp_hi");
        const Value wi = b_.add(sl.wb, st.xd, "tp_wi");
        const Value hok = b_.icmp("ult", hi, p("H"), "tp_hok");
        const Value wok = b_.icmp("ult", wi, p("W"), "tp_wok");
        const Value ok = b_.binop("and", hok, wok, "tp_ok");
        const Value off = b_.add(a_tap_[j], st.kox, "tp_abyte");
        out.push_back(b_.select(ok, off, oob_x_, "tp_aoff"));
    }
    return out;
}

// The uniform walk state `tiles` K tiles on (2: the next pair; 1: the next tile,
// taptile_loop): cb += 2*tiles*tile_k (bytes); at 2*cpg it wraps to 0 and the tap
// moves one dilated pixel right (xd, kox), wrapping at X*dil_w into the next filter
// row (yd, kox by the x carry); kb += 2*tiles*tile_k. Every step is a uniform select
// against 0 (s_cselect). One wrap a step: 2*cpg is a multiple of the step (the
// loops' entry conditions).
TapState Kernel::tap_step(const TapState &st, int64_t tiles) {
    const Value step = ci32(2 * tiles * tk_);
    const Value cb1 = b_.add(st.cb, step, "tp_cbn");
    const Value wrap = b_.icmp("eq", cb1, tap_cpgb_, "tp_wrap");
    const Value cb = b_.select(wrap, ci32(0), cb1, "tp_cb");
    const Value xs = b_.select(wrap, step_.dw, ci32(0), "tp_xs");
    const Value xd1 = b_.add(st.xd, xs, "tp_xdn");
    const Value wx = b_.icmp("eq", xd1, step_.xlim, "tp_wx");
    const Value xd = b_.select(wx, ci32(0), xd1, "tp_xd");
    const Value ys = b_.select(wx, step_.dh, ci32(0), "tp_ys");
    const Value yd = b_.add(st.yd, ys, "tp_yd");
    const Value ks = b_.select(wrap, tap_dwb_, ci32(0), "tp_ks");
    const Value kox1 = b_.add(st.kox, ks, "tp_koxn");
    const Value kw = b_.select(wx, step_.d2, ci32(0), "tp_kw");
    const Value kox = b_.add(kox1, kw, "tp_kox");
    const Value kb = cap_kb(b_.add(st.kb, step, "tp_kbn"));
    return TapState{cb, kb, xd, yd, kox};
}

// min(kb, kb_last) (unsigned; tap_invariants): a look-ahead state past the slice's
// last step keeps the last step's B offset. B's voffset wbyte is a filter row's start,
// in range, so its soffset kb alone would carry a look-ahead load past w_bytes where
// the hardware's range check leaves soffset out (LLVM IntrinsicsAMDGPU.td: the raw
// buffer loads' soffset is "excluded from bounds checking"; docs/hardware_facts.md
// BUFFER-OOB-SOFFSET). The capped loads read the last step's tiles again; no half
// computes them. Twin: TapLoop.cap_kb.
Value Kernel::cap_kb(const Value &kb) {
    const Value kin = b_.icmp("ult", kb, tap_kb_last_, "tp_kbin");
    return b_.select(kin, kb, tap_kb_last_, "tp_kb");
}

// The raw values of tile h (0, 1) of the pair st: per A slot a 16-byte load at
// voffset voffs[j] with soffset cb + 2*h*tile_k, per B slot at b_voff[j] with soffset
// kb + 2*h*tile_k (bytes), issued A, B, A, B with a scheduling barrier between any
// two, so that no two loads of one resource are adjacent (no hard clause).
TileVals Kernel::tap_tile(const std::vector<Value> &voffs, const TapState &st, int64_t h) {
    const int64_t d = 2 * h * tk_;
    const Value sa = d ? b_.add(st.cb, ci32(d), "tp_as") : st.cb;
    const Value sb = d ? b_.add(st.kb, ci32(d), "tp_bs") : st.kb;
    return tap_loads(voffs, sa, sb);
}

// One K tile's loads: per A slot 16 bytes at voffset voffs[j] with soffset sa, per B
// slot at (*bvoffs)[j] (default, null: b_voff[j]) with soffset sb (bytes), issued A,
// B, A, B with a scheduling barrier between any two. Twin: TapLoop.tap_loads.
TileVals Kernel::tap_loads(std::vector<Value> voffs, const Value &sa, const Value &sb,
                           const std::vector<Value> *bvoffs) {
    const std::vector<Value> &bv = bvoffs ? *bvoffs : b_voff_;
    const std::string key = load_key(2 * kChunk);
    if (voffs.size() < tap_a_slots_.size()) {  // row_slots: chunk j at the immediate offset 16*j
        // (nuw: a voffset is below 2^31, so LLVM folds the constant into the load)
        const Value v0 = voffs[0];
        for (size_t j = 1; j < tap_a_slots_.size(); ++j) {
            voffs.push_back(b_.add(v0, ci32(2 * kChunk * static_cast<int64_t>(j)), "tp_aoffj", {"nuw"}));
        }
    }
    TileVals out;
    const size_t n = std::max(voffs.size(), bv.size());
    for (size_t j = 0; j < n; ++j) {
        if (j < voffs.size()) {
            if (j) b_.call_void("sched_barrier", {ci32(0)});
            out.a.push_back(b_.call(key, {rx_, voffs[j], sa, ci32(0)}, "a_val"));
        }
        if (j < bv.size()) {
            b_.call_void("sched_barrier", {ci32(0)});
            out.b.push_back(b_.call(key, {rw_, bv[j], sb, ci32(0)}, "b_val"));
        }
    }
    return out;
}

}  // namespace cpe::kernels::conv_implicit_gemm

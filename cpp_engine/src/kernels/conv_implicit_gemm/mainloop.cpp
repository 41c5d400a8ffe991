// WMMA fragments and the K loop of family conv_implicit_gemm (methods of
// Kernel; twin: python_engine/kernels/conv_implicit_gemm/mainloop.py, mixin
// MainLoop).
#include "kernels/conv_implicit_gemm/emitter.h"

#include <algorithm>
#include <iterator>

#include "ir/constants.h"
#include "ir/values.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

// The 16-element A/B fragment of `row` (tile row) at K step kk: lane l holds
// K = 8*(l/16) + [0,8) and 16 + 8*(l/16) + [0,8) of the 32, i.e. chunks
// 4*kk + l/16 and 4*kk + 2 + l/16 of the (swizzled) row.
Value Kernel::fragment(const Value &lds, const Value &base, const Value &row, int64_t kk, const std::string &hint) {
    const Type *v8 = vec(8, et_);
    const Value ch = kk ? b_.add(half_, ci32(4 * kk), "f_ch") : half_;
    const Value i0 = swz_index(row, ch, nullptr, "f");
    const Value idx = b_.add(base, i0, "f_idx");
    const Value p0 = b_.gep(et_, lds, {idx}, hint);
    const Value lo = b_.load(v8, p0, 16, "f_lo");
    const Value ch2 = b_.add(half_, ci32(4 * kk + 2), "f_chh");
    const Value i1 = swz_index(row, ch2, nullptr, "fh");
    const Value idx2 = b_.add(base, i1, "f_idxh");
    const Value p1 = b_.gep(et_, lds, {idx2}, hint);
    const Value hi = b_.load(v8, p1, 16, "f_hi");
    std::vector<int> mask;
    for (int i = 0; i < 16; ++i) mask.push_back(i);
    return b_.shufflevector(lo, hi, mask, "frag");
}

// All WMMAs of one K tile from LDS buffer `buf`; returns the new accumulators.
std::vector<Value> Kernel::compute(const Value &buf, std::vector<Value> accs) {
    const Value abase = b_.mul(buf, ci32(tm_ * tk_), "c_abuf");
    const Value bbase = b_.mul(buf, ci32(tn_ * tk_), "c_bbuf");
    const std::string key = wmma_key(*s_.dtype);
    const bool beside = tap_beside(s_);
    std::vector<Value> ra(static_cast<size_t>(fm_), abase), rb(static_cast<size_t>(fn_), bbase);
    std::vector<Value> rows_a = a_rows_, rows_b = b_rows_;
    if (beside) {
        // fragment rows 16 apart share the swizzle phase (its period, rows_per_phase *
        // period of swizzle(), is 16 rows at tile_k 64 and 32), so row i's fragment is row
        // 0's at a constant element offset, which LLVM folds into the ds_load offset
        // (8 fewer address VGPRs at 64x64x64: the kernel fits tap_beside_waves unspilled)
        for (int64_t i = 1; i < fm_; ++i) ra[static_cast<size_t>(i)] = b_.add(abase, ci32(i * kWmmaM * tk_), "c_arow");
        for (int64_t j = 1; j < fn_; ++j) rb[static_cast<size_t>(j)] = b_.add(bbase, ci32(j * kWmmaN * tk_), "c_brow");
        rows_a.assign(static_cast<size_t>(fm_), a_rows_[0]);
        rows_b.assign(static_cast<size_t>(fn_), b_rows_[0]);
    }
    for (int64_t kk = 0; kk < tk_ / kWmmaK; ++kk) {
        if (kk && beside) b_.call_void("sched_barrier", {ci32(0)});  // one K step's fragments live at a time
        std::vector<Value> fa, fb;
        for (int64_t i = 0; i < fm_; ++i) fa.push_back(fragment(lds_a_, ra[i], rows_a[i], kk, "fa_p"));
        for (int64_t j = 0; j < fn_; ++j) fb.push_back(fragment(lds_b_, rb[j], rows_b[j], kk, "fb_p"));
        for (int64_t i = 0; i < fm_; ++i) {
            for (int64_t j = 0; j < fn_; ++j) {
                const size_t k = static_cast<size_t>(i * fn_ + j);
                accs[k] = b_.call(key,
                                  {ci1(false), fa[i], ci1(false), fb[j], const_int(i16(), 0), accs[k], ci1(false),
                                   ci1(false)},
                                  "acc");
            }
        }
    }
    return accs;
}

void Kernel::main_loop() {
    // Fragment rows (tile rows of this wave's fragments) and the lane's K offset.
    half_ = b_.binop("lshr", lane_, ci32(4), "half");
    lrow_ = b_.binop("and", lane_, ci32(15), "lrow");
    lane_k_ = b_.mul(half_, ci32(8), "lane_k");
    wm0_ = b_.mul(wave_m_, ci32(wm_), "wm_org");
    wn0_ = b_.mul(wave_n_, ci32(wn_), "wn_org");
    for (int64_t i = 0; i < fm_; ++i) {
        const Value ar = b_.add(wm0_, ci32(i * kWmmaM), "ar");
        a_rows_.push_back(b_.add(ar, lrow_, "arow"));
    }
    for (int64_t j = 0; j < fn_; ++j) {
        const Value br = b_.add(wn0_, ci32(j * kWmmaN), "br");
        b_rows_.push_back(b_.add(br, lrow_, "brow"));
    }
    const size_t nacc = static_cast<size_t>(fm_ * fn_);
    const Type *v8f = vec(8, float_());
    const Value zero = zeroinit(v8f);
    const Value any_tile = b_.icmp("ugt", ntiles_, ci32(0), "any_tile");
    Block &entry = *b_.block();
    Block &pro = b_.new_block("prologue");
    std::vector<LoopExit> exits;
    Block &done = pipelines_two_deep() ? pipelined_loop(any_tile, pro, nacc, zero, exits)
                                       : double_buffer_loop(any_tile, pro, nacc, zero, exits);
    b_.position(done);
    for (size_t k = 0; k < nacc; ++k) {
        Phi &ph = b_.phi(v8f, "acc_out");
        ph.add_incoming(zero, entry);
        for (const LoopExit &ex : exits) ph.add_incoming(ex.accs[k], *ex.block);
        accs_.push_back(ph.result());
    }
}

// Whether the K loop is pipelined_loop: the mem pipeline with kPipelineWmmasMin to
// kPipelineWmmasMax WMMAs per wave and K tile and 16-byte A and B slots (whole
// vectors, not padded pixels), at most kPipelineHeldSlots of them per thread. Other
// tiles keep double_buffer_loop, measured with bench/mainloop.py and parity perf:
// larger wave tiles (128x128x64: 32 WMMAs, 316 VGPRs, 3 waves) lose a wave to the
// unrolled body's registers, the one-WMMA 16x16 tile drops from 16 to 12 waves for
// no cycle gain, the one-wave 32x32x32 tile (8 slots per thread: 32 held VGPRs)
// from 8 to 6 waves and 1299 to 1605 modelled cycles per K tile, and the
// narrow-slot paths issue more, smaller
// loads whose address registers the unrolled body reuses (more s_wait_xcnt).
bool Kernel::pipelines_two_deep() const {
    const int64_t wmmas = fm_ * fn_ * (tk_ / kWmmaK);
    return !wavelet_ && wmmas >= kPipelineWmmasMin && wmmas <= kPipelineWmmasMax && pix_ == 0 &&
           slot_a_ == kChunk && slot_b_ == kChunk && a_slots_.size() + b_slots_.size() <= kPipelineHeldSlots;
}

// Whether the kernel carries the tap-tile K loop (taptile_loop): the spec's
// tap_tile_kernel (emitter.h).
bool Kernel::tap_tile_kernel() const { return conv_implicit_gemm::tap_tile_kernel(s_); }

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The row of a tile table (kTapBesideTiles, kTapTileTiles) whose tile {tile_m, tile_n,
// tile_k, waves_m, waves_n} is the spec's, or nullptr. Twin: _tile(spec) in a dict.
template <typename Row, size_t N>
const Row *tile_row(const ConvSpec &spec, const Row (&table)[N]) {
    const int64_t t[5] = {spec.tile_m, spec.tile_n, spec.tile_k, spec.waves_m, spec.waves_n};
    for (const Row &c : table) {
        if (std::equal(std::begin(t), std::end(t), std::begin(c.tile))) return &c;
    }
    return nullptr;
}
}  // namespace

bool two_deep(const ConvSpec &spec) {
    const int64_t wmmas = (spec.tile_m / (kWmmaM * spec.waves_m)) * (spec.tile_n / (kWmmaN * spec.waves_n)) *
                          (spec.tile_k / kWmmaK);
    const int64_t t = threads(spec);
    const int64_t slots = ceil_div(spec.tile_m * spec.tile_k, kChunk * t) + ceil_div(spec.tile_n * spec.tile_k, kChunk * t);
    return *spec.pipeline == "mem" && wmmas >= kPipelineWmmasMin && wmmas <= kPipelineWmmasMax &&
           spec.vector_a == kChunk && spec.vector_b == kChunk && slots <= static_cast<int64_t>(kPipelineHeldSlots);
}

bool tap_tile_kernel(const ConvSpec &spec) {
    if (spec.split_k_cluster != 0 && *spec.epilogue == "default") return false;
    return (two_deep(spec) || tap_beside(spec)) && tile_row(spec, kTapTileTiles) != nullptr;
}

bool tap_beside(const ConvSpec &spec) {
    return *spec.pipeline == "mem" && spec.vector_a == kChunk && spec.vector_b == kChunk &&
           tile_row(spec, kTapBesideTiles) != nullptr;
}

std::optional<int64_t> tap_beside_waves(const ConvSpec &spec) {
    if (tap_tile_kernel(spec) && tile_row(spec, kTapTileTiles)->waves != 0) return tile_row(spec, kTapTileTiles)->waves;
    if (!tap_beside(spec)) return std::nullopt;
    const TapBesideTile &c = *tile_row(spec, kTapBesideTiles);
    if (*spec.epilogue != "cshuffle") return c.waves_default;
    const bool plain = spec.split_k == 1 && spec.split_k_cluster == 0;
    return plain ? c.waves_plain_cshuffle : c.waves_split_cshuffle;
}

int64_t row_threads(const ConvSpec &spec) {
    if (!tap_beside(spec)) return 0;
    const int64_t t = threads(spec), tm = spec.tile_m, per_row = spec.tile_k / kChunk;
    if (t % tm || per_row % (t / tm)) return 0;
    return t / tm;
}

bool row_slots(const ConvSpec &spec) { return row_threads(spec) == 1 && spec.tile_k / kChunk <= kRowSlotChunks; }

bool tap_rows(const ConvSpec &spec) { return row_threads(spec) > 0 && !row_slots(spec); }

// End the prologue (barrier, branch into `loop`) and open `loop` with the phis of
// the tile index t and the `nacc` accumulators.
LoopEntry Kernel::enter_loop(Block &loop, size_t nacc) {
    barrier();
    LoopEntry in{b_.block(), nullptr, {}};
    b_.br(loop);
    b_.position(loop);
    in.t = &b_.phi(i32(), "t");
    for (size_t k = 0; k < nacc; ++k) in.acc_phis.push_back(&b_.phi(vec(8, float_()), "acc_in"));
    return in;
}

// Loop-carried phis of the carried fields of the A K `states`; `cur` gets the
// states with the phi results in those fields.
std::vector<std::array<Phi *, 4>> Kernel::k_state_phis(const std::vector<KState> &states, std::vector<KState> &cur) {
    std::vector<std::array<Phi *, 4>> phis;
    for (const KState &s0 : states) {
        std::array<Phi *, 4> ph{};
        for (size_t f = 0; f < 4; ++f) ph[f] = &b_.phi(i32(), std::string("k_") + kCarried[f]);
        phis.push_back(ph);
        cur.push_back(KState{s0.koff, s0.klim, ph[0]->result(), ph[1]->result(), ph[2]->result(),
                             ph[3]->result()});
    }
    return phis;
}

// The mem pipeline's K loop: unrolled by two (LDS buffer 0, then buffer 1, both
// constants, so fragment and store addresses fold into ds offsets) and
// software-pipelined two tiles deep. The prologue stores tile 0 and holds tile 1
// in registers; the half computing tile t (buffer t&1) first stores the held tile
// t+1 into the other buffer, then issues tile t+2's global loads, which the next
// half's LDS stores use first: a whole half (every WMMA and LDS load of a tile)
// lies between issue and use. Register cost: the held tile's raw values are
// loop-carried in the registers the loads in flight occupied before. An
// iteration runs tiles t and t+1 with no exit between them: for an odd tile count
// the last half computes tile ntiles, which lies past k_end, so every one of its
// loads took the out-of-range offset and read zeros (its WMMAs add 0).
Block &Kernel::pipelined_loop(const Value &any_tile, Block &pro, size_t nacc, const Value &zero,
                              std::vector<LoopExit> &exits) {
    Block &loop = b_.new_block("kloop");
    Block &done = b_.new_block("kdone");
    b_.cond_br(any_tile, pro, done);
    b_.position(pro);
    tap_loop(nacc, zero, done, exits);
    store_tile(load_tile(k_begin_, a_states_), ci32(0));
    const std::vector<KState> st1 = advance(a_states_, true);
    const TileVals held = load_tile(b_.add(k_begin_, ci32(tk_), "k_one"), st1);
    const std::vector<KState> st2 = advance(st1, true);
    const LoopEntry in = enter_loop(loop, nacc);
    Block &pro_end = *in.pro_end;
    Phi &t = *in.t;
    const std::vector<Phi *> &acc_phis = in.acc_phis;
    // The A K states of tile t+2 and the held raw values of tile t+1 (loop-carried).
    std::vector<KState> cur;
    const std::vector<std::array<Phi *, 4>> st_phis = k_state_phis(st2, cur);
    TileVals vals;
    const HeldPhis val_phis = held_phis(held, vals);
    std::vector<Value> accs;
    for (Phi *ph : acc_phis) accs.push_back(ph->result());
    for (int64_t buf = 0; buf < 2; ++buf) {
        const Value tb = buf ? b_.add(t.result(), ci32(buf), "t_half", {"nuw", "nsw"}) : t.result();
        k_half(tb, accs, cur, vals, buf);
    }
    const Value t2 = b_.add(t.result(), ci32(2), "t_next", {"nuw", "nsw"});
    Block &loop_end = close_loop(loop, done, pro_end, {&t, t2, acc_phis, zero, accs, st_phis}, st2, cur);
    close_held(val_phis, held, vals, pro_end, loop_end);
    exits.push_back(LoopExit{accs, &loop_end});
    return done;
}

// Loop phis of the held tile's raw values (`held`: the prologue's A and B values);
// `vals` gets their results in the same shape.
HeldPhis Kernel::held_phis(const TileVals &held, TileVals &vals) {
    HeldPhis phis;
    for (const Value &v : held.a) phis.a.push_back(&b_.phi(v.type, "a_held"));
    for (const Value &v : held.b) phis.b.push_back(&b_.phi(v.type, "b_held"));
    for (Phi *ph : phis.a) vals.a.push_back(ph->result());
    for (Phi *ph : phis.b) vals.b.push_back(ph->result());
    return phis;
}

// The incoming edges of held_phis' phis: `held` from `pro_end`, `vals` from `loop_end`.
void Kernel::close_held(const HeldPhis &phis, const TileVals &held, const TileVals &vals, Block &pro_end,
                        Block &loop_end) {
    for (size_t i = 0; i < phis.a.size(); ++i) {
        phis.a[i]->add_incoming(held.a[i], pro_end);
        phis.a[i]->add_incoming(vals.a[i], loop_end);
    }
    for (size_t i = 0; i < phis.b.size(); ++i) {
        phis.b[i]->add_incoming(held.b[i], pro_end);
        phis.b[i]->add_incoming(vals.b[i], loop_end);
    }
}

// One half of pipelined_loop: tile t (i32) is in LDS buffer `buf` (0 or 1), `vals`
// holds tile t+1, `cur` the A K states of tile t+2. Stores `vals` into buffer
// 1-buf, issues tile t+2's loads, then (fenced by scheduling barriers, mask 0:
// nothing crosses) the WMMAs, then the K-state step and the barrier. On return
// `accs` are the new accumulators, `cur` the K states of tile t+3 and `vals` the
// raw values of tile t+2.
void Kernel::k_half(const Value &t, std::vector<Value> &accs, std::vector<KState> &cur, TileVals &vals,
                    int64_t buf) {
    store_tile(vals, ci32(1 - buf));
    const Value t2 = b_.add(t, ci32(2), "t_pre", {"nuw", "nsw"});
    const Value kstep = b_.mul(t2, ci32(tk_), "k_step");
    const Value kpre = b_.add(k_begin_, kstep, "k_pre");
    vals = load_tile(kpre, cur);
    b_.call_void("sched_barrier", {ci32(0)});
    accs = compute(ci32(buf), accs);
    b_.call_void("sched_barrier", {ci32(0)});
    cur = advance(cur, true);
    barrier(true);
}

// The wavelet pipeline's K-loop step (double_buffer_loop): the loader waves load tile
// t+1 (K offset `knext`, A K states `cur`) into LDS buffer `nbuf` and step the K
// states while the other waves compute buffer `buf`; the join's phis merge the two
// sides' accumulators into `nw` and K states into `nxt`.
void Kernel::wavelet_step(const Value &buf, const Value &nbuf, const Value &knext, const std::vector<Value> &accs,
                          const std::vector<KState> &cur, std::vector<Value> &nw, std::vector<KState> &nxt) {
    const Type *v8f = vec(8, float_());
    Block &ld = b_.new_block("wl_load");
    Block &cp = b_.new_block("wl_compute");
    Block &jn = b_.new_block("wl_join");
    b_.cond_br(is_loader_, ld, cp);
    b_.position(ld);
    const TileVals v1 = load_tile(knext, cur);
    store_tile(v1, nbuf);
    const std::vector<KState> adv = advance(cur);
    b_.br(jn);
    b_.position(cp);
    const std::vector<Value> computed = compute(buf, accs);
    Block &cp_end = *b_.block();
    b_.br(jn);
    b_.position(jn);
    for (size_t k = 0; k < accs.size(); ++k) {
        Phi &ph = b_.phi(v8f, "acc_j");
        ph.add_incoming(accs[k], ld);
        ph.add_incoming(computed[k], cp_end);
        nw.push_back(ph.result());
    }
    for (size_t i = 0; i < adv.size(); ++i) {
        KState d = adv[i];
        for (size_t f = 0; f < 4; ++f) {
            Phi &ph = b_.phi(i32(), std::string("k_j") + kCarried[f]);
            ph.add_incoming(carried(adv[i], f), ld);
            ph.add_incoming(carried(cur[i], f), cp_end);
            carried(d, f) = ph.result();
        }
        nxt.push_back(d);
    }
}

// The K loop of the wavelet pipeline, and of the mem pipeline where
// pipelines_two_deep is false: iteration t computes LDS buffer t&1 while tile t+1
// goes to buffer (t+1)&1 (mem: its loads issued before the WMMAs and stored after
// them).
Block &Kernel::double_buffer_loop(const Value &any_tile, Block &pro, size_t nacc, const Value &zero,
                                  std::vector<LoopExit> &exits) {
    Block &loop = b_.new_block("kloop");
    Block &done = b_.new_block("kdone");
    b_.cond_br(any_tile, pro, done);
    // Prologue: tile 0 -> buffer 0, barrier.
    b_.position(pro);
    if (wavelet_) {
        Block &pl = b_.new_block("pro_load");
        Block &pj = b_.new_block("pro_join");
        b_.cond_br(is_loader_, pl, pj);
        b_.position(pl);
        const TileVals v0 = load_tile(k_begin_, a_states_);
        store_tile(v0, ci32(0));
        b_.br(pj);
        b_.position(pj);
    } else {
        if (tap_beside(s_)) tap_loop(nacc, zero, done, exits);
        const TileVals v0 = load_tile(k_begin_, a_states_);
        store_tile(v0, ci32(0));
    }
    const std::vector<KState> st1 = advance(a_states_);
    // Loop: iteration t computes buffer t&1 while tile t+1 goes to buffer (t+1)&1.
    const LoopEntry in = enter_loop(loop, nacc);
    Block &pro_end = *in.pro_end;
    Phi &t = *in.t;
    const std::vector<Phi *> &acc_phis = in.acc_phis;
    std::vector<Value> accs;
    for (Phi *ph : acc_phis) accs.push_back(ph->result());
    // The A K states of tile t+1 (loop-carried).
    std::vector<KState> cur;
    const std::vector<std::array<Phi *, 4>> st_phis = k_state_phis(st1, cur);
    const Value buf = b_.binop("and", t.result(), ci32(1), "buf");
    const Value nbuf = b_.binop("xor", buf, ci32(1), "nbuf");
    const Value t1 = b_.add(t.result(), ci32(1), "t_next", {"nuw", "nsw"});
    const Value kstep = b_.mul(t1, ci32(tk_), "k_step");
    const Value knext = b_.add(k_begin_, kstep, "k_next");
    std::vector<Value> nw;
    std::vector<KState> nxt;
    if (wavelet_) {
        wavelet_step(buf, nbuf, knext, accs, cur, nw, nxt);
    } else {
        // Software pipeline: tile t+1's global loads are issued first and fenced
        // from the WMMAs by a scheduling barrier (mask 0: nothing crosses), so the
        // machine scheduler cannot sink them; their wait lands at the LDS stores
        // after the WMMAs, which a second scheduling barrier keeps below the math
        // together with the K-state step (so no load-address register is reused
        // while the loads are in flight).
        const TileVals v1 = load_tile(knext, cur);
        b_.call_void("sched_barrier", {ci32(0)});
        nw = compute(buf, accs);
        b_.call_void("sched_barrier", {ci32(0)});
        nxt = advance(cur);
        store_tile(v1, nbuf);
    }
    barrier();
    Block &loop_end = close_loop(loop, done, pro_end, {&t, t1, acc_phis, zero, nw, st_phis}, st1, nxt);
    exits.push_back(LoopExit{nw, &loop_end});
    return done;
}

// The back-edge of a K-walk loop (close_trip) and the incoming edges of its K-state
// phis from the prologue (`st_pro`) and the latch (`st_next`). Returns the latch
// block. Twin: MainLoop.close_loop.
Block &Kernel::close_loop(Block &loop, Block &done, Block &pro_end, const LoopLatch &l,
                          const std::vector<KState> &st_pro, const std::vector<KState> &st_next) {
    Block &loop_end = close_trip(loop, done, pro_end, *l.t, l.t_next, l.acc_phis, l.zero, l.accs);
    for (size_t i = 0; i < l.st_phis.size(); ++i) {
        for (size_t f = 0; f < 4; ++f) {
            l.st_phis[i][f]->add_incoming(carried(st_pro[i], f), pro_end);
            l.st_phis[i][f]->add_incoming(carried(st_next[i], f), loop_end);
        }
    }
    return loop_end;
}

// The back-edge of a K loop: branch to `loop` while t_next < bound (default, null:
// ntiles), else to `done`, and the incoming edges of its trip phi `t` and the
// accumulator phis from the prologue (`pro_end`: 0 and `zero`) and the latch
// (`t_next`, `accs`). Returns the latch block. Twin: MainLoop.close_trip.
Block &Kernel::close_trip(Block &loop, Block &done, Block &pro_end, Phi &t, const Value &t_next,
                          const std::vector<Phi *> &acc_phis, const Value &zero, const std::vector<Value> &accs,
                          const Value *bound) {
    const Value again = b_.icmp("ult", t_next, bound ? *bound : ntiles_, "again");
    Block &loop_end = *b_.block();
    b_.cond_br(again, loop, done);
    t.add_incoming(ci32(0), pro_end);
    t.add_incoming(t_next, loop_end);
    for (size_t k = 0; k < acc_phis.size(); ++k) {
        acc_phis[k]->add_incoming(zero, pro_end);
        acc_phis[k]->add_incoming(accs[k], loop_end);
    }
    return loop_end;
}

}  // namespace cpe::kernels::conv_implicit_gemm

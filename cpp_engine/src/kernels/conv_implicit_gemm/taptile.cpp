// The tap-tile K loop of family conv_implicit_gemm (methods of Kernel; twin:
// python_engine/kernels/conv_implicit_gemm/taptile.py, mixin TapTile): the
// uniform-tap loop stepped one K tile at a time, for the channel counts and split-K
// slices the pair loop (taploop.cpp) leaves to the K walk but whose every K tile
// still lies in one filter tap (docs/conv_implicit_gemm.md, "Tap-tile loop").
#include "kernels/conv_implicit_gemm/emitter.h"

#include "ir/constants.h"
#include "ir/values.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

// In block taptile_gate (the uniform-tap loop's fallback): branch (wave-uniform, on
// kernel arguments) between the tap-tile loop and the K walk; emits the former,
// pushes its exit onto `exits` and leaves the builder at the start of the latter
// (block kwalk).
//
// The condition is cpg % tile_k == 0 (split-K: and ks % tile_k == 0, so that every
// slice starts and ends on a tile). Then every K tile [k0, k0 + tile_k) lies in one
// filter tap with channels [c0, c0 + tile_k): the walk state (cb, kb, xd, yd, kox of
// tap_state) is uniform and stepped once per tile (tap_step with tiles 1), and each
// tile has its own A voffsets (tap_offsets), loop-carried two deep (tiles t+2 and
// t+3). The schedule is the pair loop's (held tile, two halves from LDS buffers 0
// and 1, ceil(ntiles/2) iterations). ntiles may be odd: then the run starts with a
// phantom tile, loaded with the voffsets x_bytes and w_bytes (out of range with any
// soffset added, whether the hardware's range check counts soffset or not: each of
// its loads reads 0) and computed first (adds 0), and the loop computes the
// ntiles + 1 tiles in pairs: no tile past k_end is computed, and the loop body
// carries no K mask.
// Twin: TapTile.taptile_loop.
void Kernel::taptile_loop(size_t nacc, const Value &zero, Block &done, std::vector<LoopExit> &exits) {
    Block &walk = taptile_branch();
    tap_invariants(1);
    const TapTilePrologue pro = taptile_prologue();
    const Value &n_even = pro.n_even;
    const TileVals &held = pro.held;
    const TapState &st2 = pro.st2, &st3 = pro.st3;
    const std::vector<Value> &vo2 = pro.vo2, &vo3 = pro.vo3;
    Block &loop = b_.new_block("taptile_loop");
    const LoopEntry in = enter_loop(loop, nacc);
    Block &pro_end = *in.pro_end;
    Phi &t = *in.t;
    const std::vector<Phi *> &acc_phis = in.acc_phis;
    std::array<std::array<Phi *, 5>, 2> st_phis{};
    for (auto &sp : st_phis) {
        for (size_t f = 0; f < 5; ++f) sp[f] = &b_.phi(i32(), std::string("tt_") + kTapState[f]);
    }
    std::array<std::vector<Phi *>, 2> vo_phis;
    for (auto &vp : vo_phis) {
        for (size_t j = 0; j < vo2.size(); ++j) vp.push_back(&b_.phi(i32(), "tt_voff"));
    }
    TileVals vals;
    const HeldPhis val_phis = held_phis(held, vals);
    std::array<TapState, 2> st;
    for (size_t h = 0; h < 2; ++h) {
        for (size_t f = 0; f < 5; ++f) tap_field(st[h], f) = st_phis[h][f]->result();
    }
    std::array<std::vector<Value>, 2> vo;
    for (size_t h = 0; h < 2; ++h) {
        for (Phi *ph : vo_phis[h]) vo[h].push_back(ph->result());
    }
    std::vector<Value> accs;
    for (Phi *ph : acc_phis) accs.push_back(ph->result());
    // the next iteration's scalar walk first (tiles t+4, t+5); each half's A
    // voffsets for its next tile after its WMMAs
    const TapState n0 = tap_step(st[1], 1);
    const TapState n2 = tap_step(n0, 1);
    const std::array<TapState, 2> nst{n0, n2};
    b_.call_void("sched_barrier", {ci32(0)});
    std::array<std::vector<Value>, 2> nvo;
    for (int64_t h = 0; h < 2; ++h) {
        const size_t i = static_cast<size_t>(h);
        b_.call_void("s_wait_loadcnt", {const_int(i16(), 0)});
        store_tile(vals, ci32(1 - h), &tap_a_slots_);
        b_.call_void("sched_barrier", {ci32(0)});
        vals = tile_loads(vo[i], st[i]);
        b_.call_void("sched_barrier", {ci32(0)});
        accs = compute(ci32(h), accs);
        b_.call_void("sched_barrier", {ci32(0)});
        nvo[i] = tap_offsets(nst[i]);
        b_.call_void("sched_barrier", {ci32(0)});
        barrier(true);
        b_.call_void("sched_barrier", {ci32(0)});
    }
    const Value t2 = b_.add(t.result(), ci32(2), "t_next", {"nuw", "nsw"});
    Block &loop_end = close_trip(loop, done, pro_end, t, t2, acc_phis, zero, accs, &n_even);
    const std::array<const TapState *, 2> st_pro{&st2, &st3};
    for (size_t h = 0; h < 2; ++h) {
        for (size_t f = 0; f < 5; ++f) {
            st_phis[h][f]->add_incoming(tap_field(*st_pro[h], f), pro_end);
            st_phis[h][f]->add_incoming(tap_field(nst[h], f), loop_end);
        }
    }
    const std::array<const std::vector<Value> *, 2> vo_pro{&vo2, &vo3};
    for (size_t h = 0; h < 2; ++h) {
        for (size_t j = 0; j < vo_phis[h].size(); ++j) {
            vo_phis[h][j]->add_incoming((*vo_pro[h])[j], pro_end);
            vo_phis[h][j]->add_incoming(nvo[h][j], loop_end);
        }
    }
    close_held(val_phis, held, vals, pro_end, loop_end);
    b_.position(walk);
    exits.push_back(LoopExit{accs, &loop_end});
}

// The tap-tile prologue after taptile_branch (docs/conv_implicit_gemm.md, "Tap-tile
// loop"): tile 0 of the run into LDS buffer 0 (the phantom tile, all loads out of
// range, when ntiles is odd), tile 1 held in registers (tile 0 then), and the states
// and A voffsets of the run's tiles 2 and 3, with ntiles rounded up to even.
// Twin: TapTile.taptile_prologue.
TapTilePrologue Kernel::taptile_prologue() {
    const int64_t tk = tk_;
    // an odd tile count runs one phantom tile first (its loads out of range: zeros)
    const Value odd = b_.binop("and", ntiles_, ci32(1), "tt_odd");
    const Value phantom = b_.icmp("ne", odd, ci32(0), "tt_phantom");
    TapTilePrologue out;
    out.n_even = b_.add(ntiles_, odd, "tt_ntiles", {"nuw", "nsw"});
    const TapState st0 = split_ ? tap_state(&k_begin_) : tap_state(nullptr);
    const std::vector<Value> vo0 = tap_offsets(st0);
    // the phantom's voffsets are out of range (x_bytes, w_bytes, below 2^31): so is every
    // voffset + soffset, whether the range check counts soffset or not (LLVM's
    // IntrinsicsAMDGPU.td: soffset excluded from bounds checking; MLIR's AMDGPU dialect:
    // it may or may not be)
    std::vector<Value> vz, bz;
    for (const Value &v : vo0) vz.push_back(b_.select(phantom, oob_x_, v, "tt_avoff"));
    for (const Value &v : b_voff_) bz.push_back(b_.select(phantom, oob_w_, v, "tt_bvoff"));
    store_tile(tap_loads(vz, st0.cb, st0.kb, &bz), ci32(0), &tap_a_slots_);
    const TapState n1 = tap_step(st0, 1);
    TapState st1;
    for (size_t f = 0; f < 5; ++f) {
        tap_field(st1, f) = b_.select(phantom, tap_field(st0, f), tap_field(n1, f), std::string("tt_") + kTapState[f]);
    }
    const std::vector<Value> vo1 = tap_offsets(st1);
    out.held = tile_loads(vo1, st1);
    // tile 2 of the run: k_begin + (2 - odd)*tile_k
    const Value oddk = b_.mul(odd, ci32(tk), "tt_oddk");
    const Value k2 = b_.sub(ci32(2 * tk), oddk, "tt_ktwo");
    const Value kn = split_ ? b_.add(k_begin_, k2, "tt_knext") : k2;
    out.st2 = tap_state(&kn, true);
    out.st3 = tap_step(out.st2, 1);
    out.vo2 = tap_offsets(out.st2);
    out.vo3 = tap_offsets(out.st3);
    return out;
}

// The wave-uniform branch of taptile_loop: cpg % tile_k (split-K: or'ed with
// ks % tile_k) nonzero takes the K walk. Returns the walk's block (kwalk); leaves
// the builder in block taptile_pro. The walk is the true side beside the two-deep
// loop, the false side beside the one-tile loop, as in tap_branch.
// Twin: TapTile.taptile_branch.
Block &Kernel::taptile_branch() {
    Value cr = b_.binop("urem", p("cpg"), ci32(tk_), "tt_cr");
    if (split_) {  // and every slice starts and ends on a tile
        const Value kr = b_.binop("urem", p("ks"), ci32(tk_), "tt_kr");
        cr = b_.binop("or", cr, kr, "tt_r");
    }
    return uniform_branch(cr, "tt", "kwalk", "taptile_pro");
}

// The raw values of the K tile of uniform state st (A voffsets voffs): tap_loads
// with the soffsets cb (A) and kb (B). Twin: TapTile.tile_loads.
TileVals Kernel::tile_loads(const std::vector<Value> &voffs, const TapState &st) {
    return tap_loads(voffs, st.cb, st.kb);
}

}  // namespace cpe::kernels::conv_implicit_gemm

// The emitter of family conv_implicit_gemm: class Kernel, its per-thread
// state and the K-walk records (twin: python_engine/kernels/conv_implicit_gemm/
// emitter.py, class Kernel, whose phase methods come from one mixin per phase).
// Every builder call is a statement of its own (operands that are themselves
// builder calls are hoisted into locals, left operand first), so the SSA names
// are numbered in emission order, which fixes the bytes; each method has the
// name of its twin method, so a reader finds one from the other.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "kernels/conv_implicit_gemm/lds.h"

namespace cpe::kernels::conv_implicit_gemm {

// The uniform per-K-tile step of the im2col walk (tile_k = sa*cpg + sb, sa = ay*X + ax):
// sb, cpg; x step without/with the channel carry and the wrap limit X*dil_w; y step
// without/with the x carry; byte step without/with the channel carry; the extra
// byte step of the x carry.
struct KStep {
    ir::Value sb, cpg, xs0, xs1, xlim, ys0, ys1, ko0, ko1, d2, dw, dh, d1;
};
// An A K state: the element offset koff inside the tile row, the bound klim
// (k0 < klim <=> k0 + koff < k_end), and the loop-carried c, xd, yd, ko.
struct KState {
    ir::Value koff, klim, c, xd, yd, ko;
};
// A B K state: koff and klim.
struct BState {
    ir::Value kv, koff, klim;
};
// Per-thread A load slot values, fixed for the whole K loop: the K state index,
// hbase (2^30 for a row past M), wbase, the pixel byte base, the LDS offset.
struct ASlot {
    size_t st;
    ir::Value hb, wb, pbase, lds;
};
// Per-thread B load slot values: the K state index, n < kpg, the byte offset of
// (row, koff) in w, the LDS offset.
struct BSlot {
    size_t st;
    ir::Value nok, wbyte, lds;
};
// The loop-carried fields of a KState, in phi order.
inline constexpr const char *kCarried[4] = {"c", "xd", "yd", "ko"};
inline ir::Value &carried(KState &s, size_t f) { return f == 0 ? s.c : f == 1 ? s.xd : f == 2 ? s.yd : s.ko; }
inline const ir::Value &carried(const KState &s, size_t f) {
    return f == 0 ? s.c : f == 1 ? s.xd : f == 2 ? s.yd : s.ko;
}

// The uniform walk state of one K tile pair of the uniform-tap loop (taploop.cpp; one
// K tile of the tap-tile loop, taptile.cpp):
// the channel byte offset cb = 2*c0, the B byte offset kb = 2*k0, the tap's xd =
// x*dil_w, yd = y*dil_h and byte offset kox inside the pixel window.
struct TapState {
    ir::Value cb, kb, xd, yd, kox;
};
// The fields of a TapState, in phi order.
inline constexpr const char *kTapState[5] = {"cb", "kb", "xd", "yd", "kox"};
inline ir::Value &tap_field(TapState &s, size_t f) {
    return f == 0 ? s.cb : f == 1 ? s.kb : f == 2 ? s.xd : f == 3 ? s.yd : s.kox;
}
inline const ir::Value &tap_field(const TapState &s, size_t f) {
    return f == 0 ? s.cb : f == 1 ? s.kb : f == 2 ? s.xd : f == 3 ? s.yd : s.kox;
}

// Registers loaded for one K tile: the A slots then the B slots.
struct TileVals {
    std::vector<ir::Value> a, b;
};

// The loop phis of a held tile's raw values (Kernel::held_phis): A then B.
struct HeldPhis {
    std::vector<ir::Phi *> a, b;
};

// The accumulators a K loop leaves with, and the block it leaves from.
struct LoopExit {
    std::vector<ir::Value> accs;
    ir::Block *block;
};

// What the tap-tile prologue leaves the loop (Kernel::taptile_prologue): ntiles
// rounded up to even, the held tile's raw values, and the states and A voffsets of
// the run's tiles 2 and 3.
struct TapTilePrologue {
    ir::Value n_even;
    TileVals held;
    TapState st2, st3;
    std::vector<ir::Value> vo2, vo3;
};

// The prologue's last block and the first phis of a K loop (Kernel::enter_loop).
struct LoopEntry {
    ir::Block *pro_end;
    ir::Phi *t;
    std::vector<ir::Phi *> acc_phis;
};

// The phis of a K loop and their latch values (Kernel::close_loop).
struct LoopLatch {
    ir::Phi *t;
    ir::Value t_next;
    const std::vector<ir::Phi *> &acc_phis;
    ir::Value zero;
    const std::vector<ir::Value> &accs;
    const std::vector<std::array<ir::Phi *, 4>> &st_phis;
};

// WMMAs per wave and K tile (least, most) for the two-deep pipelined K loop.
inline constexpr int64_t kPipelineWmmasMin = 2;
inline constexpr int64_t kPipelineWmmasMax = 4;
// The most load slots per thread (A + B) the pipelined loop holds in registers
// across a half (4 VGPRs each).
inline constexpr size_t kPipelineHeldSlots = 4;
// The most chunks a row (tile_k/8) for row slots shared by both K loops (row_slots): each is
// a K state of the walk; at 128x128x64 its 8 uniform states cost 5076 llvm-mca cycles per K
// tile, not 1941 (issue 40). Twin: ROW_SLOT_CHUNKS.
inline constexpr int64_t kRowSlotChunks = 4;
// The tiles (tile_m, tile_n, tile_k, waves_m, waves_n) whose one-tile K loop has the
// uniform-tap loop beside it, and the waves per SIMD their kernel asks LLVM for: the
// occupancy of the class's one-tile kernel before the tap loop (LLVM 22.1, parity
// perf), by form (default epilogue, split-K cshuffle, plain cshuffle). 64x64x64 w2x2
// (issue 40): 7, 7, 6; 32x32x32 w1x1 (issue 40, the AOT grid's one-wave two-stage
// tile): 8, 7, 7; 16x16x32 w1x1 (issue 40, the AOT grid's small tile): 16, 12, 12;
// 128x128x64 w2x2 (issue 40, the AOT grid's cluster S=15 tile): 3, 3, 3.
// Twin: TAP_BESIDE_WAVES.
struct TapBesideTile {
    int64_t tile[5];
    int64_t waves_default, waves_split_cshuffle, waves_plain_cshuffle;
};
inline constexpr TapBesideTile kTapBesideTiles[4] = {
    {{64, 64, 64, 2, 2}, 7, 7, 6},
    {{32, 32, 32, 1, 1}, 8, 7, 7},
    {{16, 16, 32, 1, 1}, 16, 12, 12},
    {{128, 128, 64, 2, 2}, 3, 3, 3},
};

// Whether a valid spec's one-tile K loop (double_buffer_loop) has the uniform-tap
// loop beside it: the mem pipeline with 16-byte A and B slots on a tile of
// kTapBesideTiles (64x64x64 w2x2, 32x32x32 w1x1, 16x16x32 w1x1, 128x128x64 w2x2;
// plain, fused, two-stage and cluster). Measured with llc-22 -O3 (bench/mainloop.py, docs/conv_implicit_gemm.md
// "Uniform-tap loop"): at 64x64x64 the two-deep K walk would cost a wave (146 VGPRs
// alone, 160 beside the tap loop: 6 waves, not 7) and more cycles than the one-tile
// loop (2490 vs 1366 llvm-mca cycles per K tile); 32x32x32 w1x1 holds 8 load slots a
// thread, past the two-deep loop's kPipelineHeldSlots. Twin: tap_beside.
bool tap_beside(const ConvSpec &spec);
// Whether a valid spec's K loop is the two-deep pipelined loop (Kernel::pipelined_loop,
// with the uniform-tap loop beside it): the mem pipeline with kPipelineWmmasMin to
// kPipelineWmmasMax WMMAs per wave and K tile and 16-byte A and B slots, at most
// kPipelineHeldSlots of them per thread (ceil(tile*tile_k/8 / threads) per side), as
// Kernel::pipelines_two_deep finds from the kernel's slots. Twin: two_deep.
bool two_deep(const ConvSpec &spec);
// The tiles {tile_m, tile_n, tile_k, waves_m, waves_n} whose kernel carries the
// tap-tile loop (tap_tile_kernel) -> the waves per SIMD its kernel asks LLVM for
// (amdgpu-waves-per-eu; 0: the one-tile loop's tap_beside_waves). 64x64x32 w2x2
// (two-deep): 9, the occupancy of its kernels before the tap-tile loop (without the
// attribute LLVM 22.1 allocates 113 to 115 VGPRs, 8 waves, for 46 of its 55 kernels);
// 64x64x64 w2x2 (beside the one-tile loop). Left out, measured with LLVM 22.1 (parity
// perf; docs/conv_implicit_gemm.md, "Tap-tile loop"): the 16x16x32 and 32x32x32 w1x1
// kernels spill at their waves (5 and 7 VGPRs), the 128x128x64 loop takes 5654
// llvm-mca cycles per K tile (66 s_set_vgpr_msb); and the cluster kernels with the
// default epilogue, 112 VGPRs before, spill 4 to 9 VGPRs at 9 waves (tap_tile_kernel).
// Twin: TAP_TILE_WAVES.
struct TapTileTile {
    int64_t tile[5];
    int64_t waves;
};
inline constexpr TapTileTile kTapTileTiles[2] = {
    {{64, 64, 32, 2, 2}, 9},
    {{64, 64, 64, 2, 2}, 0},
};
// Whether a valid spec's kernel carries the tap-tile K loop (Kernel::taptile_loop)
// between the uniform-tap loop and the K walk: a kernel with the uniform-tap loop
// (two_deep or tap_beside) of a kTapTileTiles tile, but a cluster kernel with the
// default epilogue. It takes the channel counts with an odd number of K tiles a tap
// (cpg % tile_k == 0, cpg % (2*tile_k) != 0: cpg 64 at tile_k 64, 32 and 96 at
// tile_k 32) and the split-K slices the pair loop leaves (with ks % tile_k == 0).
// Twin: tap_tile_kernel.
bool tap_tile_kernel(const ConvSpec &spec);
// The amdgpu-waves-per-eu of a valid spec's kernel: for tap_tile_kernel kernels of a
// two-deep tile the kTapTileTiles value (the occupancy they had before the tap-tile
// loop); for tap_beside kernels the
// occupancy their one-tile kernel had before the tap loop (kTapBesideTiles: by
// epilogue, and for cshuffle plain or split-K), which LLVM 22.1 then meets with no
// spill (without it LLVM allocates 150 to 162 VGPRs at 64x64x64, 138 at 32x32x32: a
// wave fewer); else nullopt. Twin: tap_beside_waves.
std::optional<int64_t> tap_beside_waves(const ConvSpec &spec);
// The load threads per tile row of a valid spec whose A load slots are rows in the
// uniform-tap loop (row_slots, tap_rows), else 0: threads / tile_m for a tap_beside
// kernel whose threads are a multiple of tile_m and split a row's tile_k/8 chunks
// evenly (32x32x32 w1x1: 1; 16x16x32 w1x1: 2). Twin: row_threads.
int64_t row_threads(const ConvSpec &spec);
// Whether a valid spec's A load slots are rows in both K loops: a tap_beside kernel
// with one load thread per tile row (row_threads 1) and at most 4 chunks a row (each
// row slot is a K state of the walk; 32x32x32 w1x1), whose A slot j is chunk j of
// the thread's row (vector ltid*tile_k/8 + j), not vector ltid + j*threads: the
// slots share one pixel, so the uniform-tap loop tests one pixel per thread and pair
// (one voffset, chunk j at the load's immediate offset 16*j), and their K states are
// uniform. Twin: row_slots.
bool row_slots(const ConvSpec &spec);
// Whether a valid spec's uniform-tap loop has A load slots of its own: row_threads
// r > 0 and not row_slots (16x16x32 w1x1: 32 threads, 16 rows, r = 2; 64x64x64 w2x2:
// r = 2; 128x128x64 w2x2: r = 1, 8 chunks a row). The tap loop's slot j is vector
// ltid*s + j (s = tile_k/8/r), chunk (ltid % r)*s + j of row ltid / r, one pixel a
// thread as with row_slots; the K walk beside it keeps the slots ltid + j*threads
// (their shared K state: row slots would give the walk one K state per slot; at
// 16x16x32 its VGPRs more spill values that live across it, at 128x128x64 its 8
// uniform states cost 5076 llvm-mca cycles per K tile, not 1941). Twin: tap_rows.
bool tap_rows(const ConvSpec &spec);

// Emits one kernel. Its methods are defined in the .cpp file of their phase
// (the twin module has the same name: emitter.py, slots.py, ...); within each file
// they are in emission order (the bytes depend on it).
class Kernel {
public:
    Kernel(ir::IRBuilder &b, const ConvSpec &spec);
    void emit();

private:
    // -- emitter.cpp (twin emitter.py): state, small helpers, the prologue values
    ir::Value p(const std::string &name) const;
    ir::Value umin_const(const ir::Value &v, int64_t c, const std::string &hint);
    void barrier(bool lds_only = false);
    std::string lds_fence_mmra();
    ir::Value rsrc(const std::string &ptr_name, const ir::Value &nbytes, const std::string &hint);
    ir::Value kgemm();
    void prologue_values();

    // -- slots.cpp (twin slots.py, mixin Slots): global -> LDS load slots, the K walk
    void slot_setup();
    void k_step_setup();
    void a_slot_setup();
    void b_slot_setup();
    std::array<ir::Value, 3> a_pixel(const ir::Value &row);
    ir::Value swz_index(const ir::Value &row, const ir::Value &ch, const ir::Value *within, const std::string &hint);
    ir::Value slot_lds(const ir::Value &row, const ir::Value &koff, int64_t vec, const std::string &hint);
    ir::Value k_limit(const ir::Value &koff, const std::string &hint);
    KState k_state(const ir::Value &kv, int64_t va, const std::string &hint);
    KState k_state(int64_t kv, int64_t va, const std::string &hint);
    KState k_state_of(const ir::Value &koff, const ir::Value &r0, bool at_begin, const std::string &hint);
    std::vector<KState> advance(const std::vector<KState> &states, bool carry_steps = false);
    TileVals load_tile(const ir::Value &k0, const std::vector<KState> &states);
    ir::Value load_slot(const ir::Value &rsrc, const ir::Value &off, int64_t v, const std::string &hint);
    void store_tile(const TileVals &vals, const ir::Value &buf, const std::vector<ASlot> *a_slots = nullptr);

    // -- mainloop.cpp (twin mainloop.py, mixin MainLoop): WMMA and the K loop
    ir::Value fragment(const ir::Value &lds, const ir::Value &base, const ir::Value &row, int64_t kk,
                       const std::string &hint);
    std::vector<ir::Value> compute(const ir::Value &buf, std::vector<ir::Value> accs);
    void main_loop();
    bool pipelines_two_deep() const;
    bool tap_tile_kernel() const;
    LoopEntry enter_loop(ir::Block &loop, size_t nacc);
    std::vector<std::array<ir::Phi *, 4>> k_state_phis(const std::vector<KState> &states, std::vector<KState> &cur);
    ir::Block &pipelined_loop(const ir::Value &any_tile, ir::Block &pro, size_t nacc, const ir::Value &zero,
                              std::vector<LoopExit> &exits);
    HeldPhis held_phis(const TileVals &held, TileVals &vals);
    void close_held(const HeldPhis &phis, const TileVals &held, const TileVals &vals, ir::Block &pro_end,
                    ir::Block &loop_end);
    void k_half(const ir::Value &t, std::vector<ir::Value> &accs, std::vector<KState> &cur, TileVals &vals,
                int64_t buf);
    ir::Block &close_loop(ir::Block &loop, ir::Block &done, ir::Block &pro_end, const LoopLatch &l,
                          const std::vector<KState> &st_pro, const std::vector<KState> &st_next);
    ir::Block &close_trip(ir::Block &loop, ir::Block &done, ir::Block &pro_end, ir::Phi &t, const ir::Value &t_next,
                          const std::vector<ir::Phi *> &acc_phis, const ir::Value &zero,
                          const std::vector<ir::Value> &accs, const ir::Value *bound = nullptr);
    ir::Block &double_buffer_loop(const ir::Value &any_tile, ir::Block &pro, size_t nacc, const ir::Value &zero,
                                  std::vector<LoopExit> &exits);
    void wavelet_step(const ir::Value &buf, const ir::Value &nbuf, const ir::Value &knext,
                      const std::vector<ir::Value> &accs, const std::vector<KState> &cur, std::vector<ir::Value> &nw,
                      std::vector<KState> &nxt);

    // -- taploop.cpp (twin taploop.py, mixin TapLoop): the uniform-tap K loop
    void tap_loop(size_t nacc, const ir::Value &zero, ir::Block &done, std::vector<LoopExit> &exits);
    ir::Block &uniform_branch(const ir::Value &rem, const std::string &hint, const std::string &fallback,
                              const std::string &fast);
    ir::Block &tap_branch(const std::string &fallback);
    std::vector<ir::Value> tap_pair(TileVals &vals, const std::vector<ir::Value> &vo, const TapState &st,
                                    const TapState &nst, std::vector<ir::Value> &accs);
    void tap_invariants(int64_t tiles = 2);
    ir::Value tap_row_slots(std::vector<ASlot> &slots);
    TapState tap_state(const ir::Value *k, bool cap = false);
    ir::Value cap_kb(const ir::Value &kb);
    std::vector<ir::Value> tap_offsets(const TapState &st);
    TapState tap_step(const TapState &st, int64_t tiles = 2);
    TileVals tap_tile(const std::vector<ir::Value> &voffs, const TapState &st, int64_t h);
    TileVals tap_loads(std::vector<ir::Value> voffs, const ir::Value &sa, const ir::Value &sb,
                       const std::vector<ir::Value> *bvoffs = nullptr);

    // -- taptile.cpp (twin taptile.py, mixin TapTile): the tap-tile K loop
    void taptile_loop(size_t nacc, const ir::Value &zero, ir::Block &done, std::vector<LoopExit> &exits);
    ir::Block &taptile_branch();
    TapTilePrologue taptile_prologue();
    TileVals tile_loads(const std::vector<ir::Value> &voffs, const TapState &st);

    // -- epilogue.cpp (twin epilogue.py, mixin Epilogue): the epilogues
    ir::Value acc_epi(const ir::Value &x, const ir::Value &n_elem, int64_t width);
    void store_d(const ir::Value &x, const ir::Value &m, const ir::Value &n, const ir::Value &ok, int64_t width);
    void store_d_raw(const ir::Value &y, const ir::Value &m, const ir::Value &n, const ir::Value &ok, int64_t width);
    ir::Value ws_offset(const ir::Value &slab, const ir::Value &m, const ir::Value &n, const ir::Value &ok,
                        const std::string &hint);
    void out_elem(const ir::Value &x, const ir::Value &m, const ir::Value &n, const ir::Value &ok, int64_t width);
    void epilogue();
    ir::Value d_vec_ok(int64_t vec = kDVec, const std::string &hint = "d");
    void d_branch(const std::function<void()> &vec_fn, const std::function<void()> &scalar_fn,
                  const std::string &hint, int64_t vec = kDVec, const std::string &ok_hint = "d");
    void epilogue_default();
    void default_scalar();
    void wave_barrier();
    void default_v16();
    void slab_v4();
    void epilogue_cshuffle();
    void cshuffle_out(int64_t width);

    // -- cluster_fold.cpp (twin cluster_fold.py, mixin ClusterFold): the cluster fold
    void cluster_fold();
    ir::Value fold_epi(const ir::Value &total, const ir::Value &n, int64_t width);
    void fold_out(int64_t width);

    ir::IRBuilder &b_;
    const ConvSpec &s_;
    const ir::Type *et_;
    int64_t tm_, tn_, tk_, wm_, wn_, fm_, fn_, ncw_;
    bool wavelet_;
    int64_t threads_, load_threads_;
    bool split_;
    int64_t cluster_;
    std::pair<int64_t, int64_t> swz_;
    int64_t ncp_;
    int64_t pix_, slot_a_, slot_b_;
    std::string mmra_local_;  // metadata id of the LDS-only fence annotation, once emitted

    ir::Value tid_, lane_, wave_, group_, slice_, k_begin_, k_end_, ntiles_;
    ir::Value m0_, n0_, cbase_, kbase_;
    ir::Value rx_, rw_, oob_x_, oob_w_, rd_, oob_d_, rws_, oob_ws_, rbias_, oob_bias_;
    ir::Value is_loader_, ltid_, wave_m_, wave_n_;
    std::map<std::string, ir::Value> lds_;
    KStep step_;
    ir::Value c2_, rowb_, kcpg_;
    std::vector<KState> a_states_;
    std::vector<BState> b_states_;
    ir::Value lds_a_, lds_b_;
    std::vector<ASlot> a_slots_;
    std::vector<BSlot> b_slots_;
    ir::Value half_, lrow_, lane_k_, wm0_, wn0_;
    std::vector<ir::Value> a_rows_, b_rows_;
    std::vector<ir::Value> accs_;
    // the uniform-tap loop's invariants (tap_invariants)
    ir::Value tap_cpgb_, tap_dwb_, tap_kb_last_;
    std::vector<ir::Value> a_tap_, b_voff_;
    // the tap loop's A slots: the walk's (a_slots_), or tap_rows' own
    std::vector<ASlot> tap_a_slots_;
};

}  // namespace cpe::kernels::conv_implicit_gemm

// LDS layout and the load/store widths of family conv_implicit_gemm (twin:
// python_engine/kernels/conv_implicit_gemm/lds.py): the A/B XOR swizzle, the
// one LDS allocation and the epilogue regions aliasing it, the padded-pixel
// load widths, and the raw buffer load/store types and keys by byte count.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/conv_implicit_gemm/spec.h"

namespace cpe::kernels::conv_implicit_gemm {

// A/B LDS layout: rows of tile_k elements (no padding), XOR-swizzled in 16-byte
// chunks of kChunk elements (see swizzle()); the C-shuffle rows are tile_n +
// kPadC fp32 (16 bytes) apart. Bank model (64 banks x 4 bytes, a 256-byte phase
// = kSweepChunks chunks): parity/sim/lds_banks.py.
constexpr int64_t kChunk = 8;
constexpr int64_t kSweepChunks = 16;
constexpr int64_t kPadC = 4;
// Elements per lane in the C-shuffle store phase and the cluster fold (fp32
// slabs, and D when kpg or K is not a multiple of kDVec).
constexpr int64_t kOutVec = 4;
// Elements per lane of a 16-byte D store (both epilogues, when K and kpg are
// multiples of kDVec: a wave-uniform run-time branch on the kernel arguments).
constexpr int64_t kDVec = 8;
// Per-wave D transpose region of the default epilogue: 16 rows of kDtRow
// elements (row stride 48 bytes: conflict-free b16 writes and b128 reads).
constexpr int64_t kDtRow = 24;
// Per-wave fp32 slab transpose region of the default epilogue with split-K: 16
// rows of kWtRow floats (row stride 80 bytes: the half-waves' b32 rows sit 32
// banks apart, the 16 rows of a b128 phase start at 16 distinct multiples of 4
// banks; 0 conflicts in parity/sim/lds_banks.py).
constexpr int64_t kWtRow = 20;
// 16-byte cshuffle D slots per row segment: with more per row, two rows share a
// 16-lane phase (kPairSlots slots each) so the b128 C loads do not collide.
constexpr int64_t kPairSlots = 8;

// (rows_per_phase, period) of the A/B XOR swizzle (twin: swizzle).
std::pair<int64_t, int64_t> swizzle(int64_t tile_k);

// Byte offsets and sizes inside the one LDS allocation (twin: lds_parts).
struct LdsParts {
    int64_t a_off, a_bytes, b_off, b_bytes;
    bool has_c, has_dt;
    int64_t c_bytes, dt_bytes;  // both at offset 0 (aliasing A/B)
    int64_t end() const {
        int64_t n = std::max(a_off + a_bytes, b_off + b_bytes);
        if (has_c) n = std::max(n, c_bytes);
        if (has_dt) n = std::max(n, dt_bytes);
        return n;
    }
};
LdsParts lds_parts(const ConvSpec &spec);

// One LDS global: name, element type, element count.
struct LdsBuffer {
    std::string name;
    const ir::Type *elem;
    int64_t count;
};

// LDS globals in declaration order: one `lds` of the dtype holding A
// [2][tile_m][tile_k] at 0, B [2][tile_n][tile_k] after it (double buffers,
// XOR-swizzled), and aliasing them from offset 0 the cshuffle fp32 tile
// [tile_m][tile_n+4] or the default epilogue's per-wave D transpose regions
// (waves_m*waves_n x [16][24] dtype, split_k == 1); the element count covers
// the largest (bytes: docs/conv_implicit_gemm.md). Valid dtype required.
std::vector<LdsBuffer> lds_layout(const ConvSpec &spec);

// Total LDS bytes of lds_layout(spec) (bytes; exact for a spec that passed the
// tile and wave-grid rules).
int64_t lds_bytes(const ConvSpec &spec);

// Padded-pixel vector widths (the small-channel path): 3, 5, 6, 7. A load slot
// is then one pixel's cpg = v channels, zero-padded to pixel_slot(v) elements
// along K; the reduction runs over Y*X*pixel_slot(v).
bool is_pixel_vector(int64_t v);
// Elements one load slot fills along K: v, or 4 (v = 3) / 8 (v = 5, 6, 7).
int64_t pixel_slot(int64_t v);

// The A/B load width (elements) the launch side picks for `cpg` >= 1 channels per
// group: cpg itself for 3, 5, 6, 7 (the padded-pixel path), else the widest of 8,
// 4, 2, 1 dividing cpg (every vector of a slot stays inside one pixel). Twin of
// python_engine/kernels/conv_implicit_gemm/lds.py `load_vector`.
int64_t load_vector(int64_t cpg);
// Byte sizes of the buffer loads of one v-element slot, in address order: {2*v},
// or for a padded pixel the widest first (3: 4+2, 5: 8+2, 6: 8+4, 7: 8+4+2).
std::vector<int64_t> pixel_pieces(int64_t v);

// The raw buffer load/store type of `nbytes` (2, 4, 8 or 16).
const ir::Type *raw_type(int64_t nbytes);
// The raw buffer load / store intrinsic key of `nbytes` (2, 4, 8 or 16).
const char *load_key(int64_t nbytes);
const char *store_key(int64_t nbytes);

}  // namespace cpe::kernels::conv_implicit_gemm

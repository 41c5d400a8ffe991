// LDS layout and the load/store widths of family conv_implicit_gemm (twin:
// python_engine/kernels/conv_implicit_gemm/lds.py).
#include "kernels/conv_implicit_gemm/lds.h"

#include <algorithm>
#include <stdexcept>

#include "ir/constants.h"
#include "ir/types.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

std::pair<int64_t, int64_t> swizzle(int64_t tile_k) {
    const int64_t cpr = tile_k / kChunk;
    return {std::max<int64_t>(1, kSweepChunks / cpr), std::min<int64_t>(cpr & -cpr, kSweepChunks)};
}

LdsParts lds_parts(const ConvSpec &spec) {
    const int64_t es = byte_size(dtype_type(*spec.dtype));
    LdsParts p{};
    p.a_off = 0;
    p.a_bytes = 2 * spec.tile_m * spec.tile_k * es;
    p.b_off = p.a_bytes;
    p.b_bytes = 2 * spec.tile_n * spec.tile_k * es;
    p.has_c = *spec.epilogue == "cshuffle";
    p.has_dt = !p.has_c;
    p.c_bytes = spec.tile_m * (spec.tile_n + kPadC) * 4;
    // D (fp16/bf16, kDtRow) or, with split-K, fp32 slab (kWtRow) transpose regions.
    p.dt_bytes = spec.split_k == 1 ? spec.waves_m * spec.waves_n * 16 * kDtRow * es
                                   : spec.waves_m * spec.waves_n * 16 * kWtRow * 4;
    return p;
}

std::vector<LdsBuffer> lds_layout(const ConvSpec &spec) {
    const Type *et = dtype_type(*spec.dtype);
    return {{"lds", et, lds_parts(spec).end() / byte_size(et)}};
}

int64_t lds_bytes(const ConvSpec &spec) {
    int64_t n = 0;
    for (const auto &b : lds_layout(spec)) n += byte_size(b.elem) * b.count;
    return n;
}

bool is_pixel_vector(int64_t v) { return v == 3 || v == 5 || v == 6 || v == 7; }

int64_t pixel_slot(int64_t v) { return v == 3 ? 4 : is_pixel_vector(v) ? 8 : v; }

int64_t load_vector(int64_t cpg) {
    if (is_pixel_vector(cpg)) return cpg;
    for (int64_t x : {8, 4, 2}) {
        if (cpg % x == 0) return x;
    }
    return 1;
}

std::vector<int64_t> pixel_pieces(int64_t v) {
    if (!is_pixel_vector(v)) return {2 * v};
    std::vector<int64_t> out;
    int64_t n = 2 * v;
    for (int64_t w : {8, 4, 2}) {
        if (n >= w) {
            out.push_back(w);
            n -= w;
        }
    }
    return out;
}

// The raw buffer load/store type of `nbytes` (2, 4, 8 or 16).
const Type *raw_type(int64_t nbytes) {
    switch (nbytes) {
        case 2: return i16();
        case 4: return float_();
        case 8: return vec(2, float_());
        case 16: return vec(4, float_());
        default: throw std::logic_error("no raw buffer type of " + dec(nbytes) + " bytes");
    }
}

const char *load_key(int64_t nbytes) {
    switch (nbytes) {
        case 2: return "raw_buffer_load_i16";
        case 4: return "raw_buffer_load_f32";
        case 8: return "raw_buffer_load_v2f32";
        case 16: return "raw_buffer_load_v4f32";
        default: throw std::logic_error("no raw buffer load of " + dec(nbytes) + " bytes");
    }
}

const char *store_key(int64_t nbytes) {
    switch (nbytes) {
        case 2: return "raw_buffer_store_i16";
        case 4: return "raw_buffer_store_f32";
        case 8: return "raw_buffer_store_v2f32";
        case 16: return "raw_buffer_store_v4f32";
        default: throw std::logic_error("no raw buffer store of " + dec(nbytes) + " bytes");
    }
}

}  // namespace cpe::kernels::conv_implicit_gemm

// The rules of family conv_implicit_gemm: validate (twin:
// python_engine/kernels/conv_implicit_gemm/rules.py).
#include "kernels/conv_implicit_gemm/rules.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "ir/constants.h"
#include "kernels/acc_epilogue.h"
#include "kernels/conv_implicit_gemm/lds.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

namespace {

// A tile side above this can never fit the LDS of any arch; the bound also keeps
// every size the rules compute (threads, LDS bytes) well inside 64 bits.
constexpr int64_t kMaxTile = 1024;

bool is_dtype(const std::optional<std::string> &d) { return d && (*d == "bf16" || *d == "fp16"); }

bool one_of(const std::optional<std::string> &v, std::initializer_list<const char *> set) {
    if (!v) return false;
    for (const char *s : set)
        if (*v == s) return true;
    return false;
}

bool is_identifier(const std::string &s) {
    // [A-Za-z_][A-Za-z0-9_]* (ASCII)
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        const bool digit = c >= '0' && c <= '9';
        if (!(alpha || (i > 0 && digit))) return false;
    }
    return true;
}

}  // namespace

std::optional<std::string> validate(const ConvSpec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor) {
    if (!is_dtype(spec.dtype)) return "dtype must be bf16 or fp16, got " + spec::show(spec.dtype);
    const int64_t tm = spec.tile_m, tn = spec.tile_n, tk = spec.tile_k;
    if (tm < kWmmaM || tm % kWmmaM || tn < kWmmaN || tn % kWmmaN || tk < kWmmaK || tk % kWmmaK ||
        std::max({tm, tn, tk}) > kMaxTile)
        return "tile must be a multiple of the WMMA shape 16x16x32 (tile_m, tile_n multiples of 16, "
               "tile_k a multiple of 32, each at most 1024), got " +
               dec(tm) + "x" + dec(tn) + "x" + dec(tk);
    const int64_t wm = spec.waves_m, wn = spec.waves_n;
    // tm % (wm*16) without overflow: wm > tm/16 leaves a remainder of tm != 0.
    if (wm < 1 || wn < 1 || wm > tm / kWmmaM || tm % (wm * kWmmaM) || wn > tn / kWmmaN || tn % (wn * kWmmaN))
        return "waves " + dec(wm) + "x" + dec(wn) + " must divide the tile " + dec(tm) + "x" + dec(tn) +
               " into per-wave tiles that are multiples of 16x16";
    if (!one_of(spec.pipeline, {"mem", "wavelet"}))
        return "pipeline must be mem or wavelet, got " + spec::show(spec.pipeline);
    const int64_t lw = spec.num_load_waves;
    if (*spec.pipeline == "wavelet" && (lw < 1 || lw > kMaxLoadWaves))
        return "num_load_waves must be 1.." + dec(kMaxLoadWaves) + " for the wavelet pipeline, got " + dec(lw);
    if (!one_of(spec.epilogue, {"default", "cshuffle"}))
        return "epilogue must be default or cshuffle, got " + spec::show(spec.epilogue);
    // Bounded by the tile rule (waves <= 1024/16 per axis), so int64 is exact.
    const int64_t t = threads(spec);
    if (t > 1024) return "work-group of " + dec(t) + " threads exceeds 1024";
    const std::pair<const char *, int64_t> vecs[] = {{"vector_a", spec.vector_a}, {"vector_b", spec.vector_b}};
    for (const auto &fv : vecs) {
        const int64_t v = fv.second;
        if (v < 1 || v > 8) return std::string(fv.first) + " must be 1 to 8 elements, got " + dec(v);
    }
    if ((is_pixel_vector(spec.vector_a) || is_pixel_vector(spec.vector_b)) && spec.vector_a != spec.vector_b)
        return "padded-pixel loads (vector 3, 5, 6 or 7) need vector_a = vector_b (A and B share the padded K "
               "order), got " +
               dec(spec.vector_a) + " and " + dec(spec.vector_b);
    if (!acc_epilogue::known(spec.acc_epilogue))
        return std::string("acc_epilogue must be ") + acc_epilogue::kNamesText + ", got " + spec::show(spec.acc_epilogue);
    if (!targets::in_table(arch)) return targets::outside_table_reason(arch, "conv_implicit_gemm");
    const int64_t nb = lds_bytes(spec);
    if (nb > arch.lds_bytes)
        return "LDS use of " + dec(nb) + " bytes exceeds the " + dec(arch.lds_bytes) + " bytes of " + arch.name;
    if (!targets::has_wmma_16x16x32(arch))
        return "arch " + arch.name + " has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)";
    const int64_t sk = spec.split_k;
    if (sk == -1) return std::string("split_k = -1 (auto) must be resolved before lowering");
    if (sk < 1) return "split_k must be 1 (off) or greater than 1 (two-stage), got " + dec(sk);
    const int64_t s = spec.split_k_cluster;
    if (s) {
        if (!flavor.clusters) return std::string("split_k_cluster requires flavor llvm23");
        if (!arch.clusters) return std::string("split_k_cluster requires arch gfx1250");
        if (*spec.pipeline != "mem") return std::string("split_k_cluster requires the mem pipeline");
        if (s < 2 || s > 15) return "split_k_cluster must be 0 (off) or 2..15, got " + dec(s);
        if (sk == 1) return std::string("split_k_cluster requires split_k > 1 (the two-stage ABI)");
    }
    const std::optional<std::string> &p = spec.name_prefix;
    if (!p || (!p->empty() && !is_identifier(*p)))
        return "name_prefix must be empty or an identifier, got " + spec::show(p);
    return std::nullopt;
}

}  // namespace cpe::kernels::conv_implicit_gemm

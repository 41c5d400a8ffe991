// Spec fields, constants and naming of family conv_implicit_gemm (twin:
// python_engine/kernels/conv_implicit_gemm/spec.py): the fields, ConvSpec, the
// dtype and WMMA tables, the work-group size and the kernel name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/function.h"
#include "spec/fields.h"

namespace cpe::kernels::conv_implicit_gemm {

extern const char *const kFamily;  // "conv_implicit_gemm"

// The fields in spec order (names and kinds; defaults are ConvSpec's).
const std::vector<spec::Field> &fields();

// Spec ImplicitGemmConvSpec. A str field holding std::nullopt is JSON null.
struct ConvSpec {
    std::optional<std::string> dtype = std::string("bf16");  // A, B, D: "bf16" | "fp16"; fp32 accumulation
    int64_t tile_m = 64;          // output pixels per workgroup (multiple of 16)
    int64_t tile_n = 64;          // output channels per workgroup (multiple of 16)
    int64_t tile_k = 32;          // reduction step (multiple of 32)
    int64_t waves_m = 2;          // compute waves along m
    int64_t waves_n = 2;          // compute waves along n
    std::optional<std::string> pipeline = std::string("mem");  // "mem" | "wavelet"
    int64_t num_load_waves = 1;   // load waves of wavelet (1..8); ignored by mem
    std::optional<std::string> epilogue = std::string("default");  // "default" | "cshuffle"
    int64_t vector_a = 8;         // elements per global load of A: 1, 2, 4, 8; 3, 5, 6, 7 a padded pixel
    int64_t vector_b = 8;         // elements per global load of B: 1, 2, 4, 8; 3, 5, 6, 7 (= vector_a)
    std::optional<std::string> acc_epilogue = std::string("identity");  // identity|bias|scale|relu|clamp|bias_relu|bias_clamp
    int64_t split_k = 1;          // 1 off; > 1 two-stage binary; -1 auto (rejected)
    int64_t split_k_cluster = 0;  // 0 off; S in 2..15 cluster split-K (S baked in)
    std::optional<std::string> name_prefix = std::string("");  // "" or an identifier
};

constexpr int64_t kWmmaM = 16, kWmmaN = 16, kWmmaK = 32;
constexpr int64_t kWave = 32;
constexpr int64_t kMaxLoadWaves = 8;

// The IR element type of a valid dtype ("bf16" or "fp16"; twin: DTYPES).
const ir::Type *dtype_type(const std::string &d);
// The WMMA intrinsic key of a valid dtype (twin: WMMA_KEY).
const char *wmma_key(const std::string &d);

// Work-group size in threads of a spec whose wave grid and pipeline passed:
// 32*(waves_m*waves_n + (wavelet ? num_load_waves : 0)).
int64_t threads(const ConvSpec &spec);

// [<prefix>_]conv_implicit_gemm_<dtype>_<tm>x<tn>x<tk>_w<wm>x<wn>_<pipe>_<epi>
// _va<a>_vb<b>_<acc>[_spk][_skc<S>] of a valid spec; <pipe> is mem or wavelet<L>.
std::string kernel_name(const ConvSpec &spec);

// The epilogue the kernel applies: acc_epilogue, but "identity" for two-stage
// Stage 1 (split_k > 1 without a cluster stores raw partials; Stage 2 applies
// it), so a fused layer's Stage 1 is the unfused binary (same name and bytes).
std::string stage1_acc(const ConvSpec &spec);

}  // namespace cpe::kernels::conv_implicit_gemm

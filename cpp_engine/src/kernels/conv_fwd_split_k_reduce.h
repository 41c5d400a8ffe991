// Family `conv_fwd_split_k_reduce`: Stage 2 of two-stage split-K.
// Twin of python_engine/kernels/conv_fwd_split_k_reduce.py.
//
// D[M][K] (bf16 or fp16) = fptrunc(sum over s of ws[s][M][K]) where ws is the
// fp32 workspace of ks_count contiguous slabs. The sum runs in slab order from
// slab 0, so the result is bit-exact with a sequential fp32 reference; the
// cast is fptrunc (round to nearest even). Grid: ceil(M*K/(threads*vector))
// workgroups along x; every branch is wave-uniform (see docs/families.md).
//
// Spec fields (in order): dtype (str "bf16"|"fp16", default "bf16"), vector
// (int elements per lane: 1, 2, 4, 8; default 8), threads (int, multiple of the
// arch wave size, at most 1024; default 256), degree (int, 1..32 unrolls the
// slab sum for that many slabs, 0 loops over the ks_count argument; default 0),
// acc_epilogue (str "identity"|"bias"|"scale"|"relu"|"clamp"|"bias_relu"|"bias_clamp", default
// "identity": applied once to the fp32 sum before the cast; docs/families.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/function.h"
#include "spec/fields.h"

namespace cpe::kernels::conv_fwd_split_k_reduce {

extern const char *const kFamily;  // "conv_fwd_split_k_reduce"

// The fields in spec order (names and kinds; defaults are ReduceSpec's).
const std::vector<spec::Field> &fields();

struct ReduceSpec {
    std::optional<std::string> dtype = std::string("bf16");  // nullopt = JSON null
    int64_t vector = 8;
    int64_t threads = 256;
    int64_t degree = 0;
    std::optional<std::string> acc_epilogue = std::string("identity");
};

// One kernel argument: name and kind ("in_ptr", "out_ptr", "i64", "i32").
struct Arg {
    const char *name;
    const char *kind;
};

// The kernel argument list, defined once: ws_ptr, ws_bytes (bytes), d_ptr,
// d_bytes (bytes), M, K (elements), ks_count.
const std::vector<Arg> &args();

// The accumulator epilogue's arguments appended to args(): bias: bias_ptr,
// bias_bytes (i64 bytes); scale: scale (f32); clamp: clamp_lo, clamp_hi (f32);
// identity and relu: none; bias_relu, bias_clamp: their steps' arguments in order
// (kernels/acc_epilogue.h). std::logic_error for an unknown epilogue.
const std::vector<Arg> &epilogue_args(const std::string &acc);

// args() then epilogue_args(acc).
std::vector<Arg> args(const std::string &acc);

// First failing rule's reason, or nullopt. Order: dtype, vector, threads,
// degree, acc_epilogue, arch.
std::optional<std::string> validate(const ReduceSpec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor);

// conv_fwd_split_k_reduce_<dtype>_v<vector>_t<threads>_d<degree>[_<acc_epilogue>]
// of a valid spec (no suffix for identity).
std::string kernel_name(const ReduceSpec &spec);

// Build the module of a valid spec; returns (kernel name, module).
std::pair<std::string, std::unique_ptr<ir::Module>> build(const ReduceSpec &spec, const targets::Arch &arch,
                                                         const targets::Flavor &flavor);

}  // namespace cpe::kernels::conv_fwd_split_k_reduce

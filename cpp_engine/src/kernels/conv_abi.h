// The convolution kernel argument lists, defined once as data (DESIGN §4,
// family conv_abi): one list per variant, printed as text so both engines'
// argument order, types and attributes compare byte for byte.
// Twin of python_engine/kernels/conv_abi.py.
// Twin of python_engine/kernels/conv_abi.py.
//
// Variants:
// - "plain": the forward kernel with split_k == 1: HEAD + problem block.
// - "two_stage": the forward kernel with split_k > 1 (Stage 1): the plain list
//   plus the split-K tail ws_ptr (writeonly), ws_bytes, ks, ks_count.
// - "cluster": the forward kernel with split_k_cluster = S: the same list as
//   two-stage, but the workspace is read back (folded), so ws_ptr is not
//   writeonly.
// - "reduce": the Stage-2 kernel (conv_fwd_split_k_reduce::args()).
//
// HEAD: x_ptr, x_bytes, w_ptr, w_bytes, d_ptr, d_bytes (global pointers and
// their i64 byte counts), bias_ptr (fp32[K], acc_epilogue bias only), scale,
// clamp_lo, clamp_hi (float). Byte counts size the buffer resources: every
// forward-kernel access is a raw buffer access whose offset is replaced by the
// byte count when the element is outside the tensor (zero on load, dropped store).
#pragma once

#include <string>
#include <vector>

#include "ir/function.h"
#include "targets/flavors.h"

namespace cpe::kernels::conv_abi {

// One argument: name and kind ("in_ptr", "out_ptr", "inout_ptr", "i64", "i32", "f32").
struct Arg {
    std::string name;
    std::string kind;
};

// The variant names in order: plain, two_stage, cluster, reduce.
const std::vector<std::string> &variants();

// (name, kind) of every argument of `variant`, in order; std::invalid_argument
// ("unknown conv ABI variant <v>") for any other name. acc_epilogue: the
// reduce kernel's accumulator epilogue (its arguments follow ks_count; the
// forward variants take every epilogue argument whatever it is).
std::vector<Arg> args(const std::string &variant, const std::string &acc_epilogue = "identity");

// Kernel parameters of `variant`.
std::vector<ir::Param> params(const std::string &variant, const std::string &acc_epilogue = "identity");

// The forward variant a (valid) spec builds: cluster when split_k_cluster != 0,
// else two_stage when split_k > 1, else plain.
std::string variant_of(int64_t split_k, int64_t split_k_cluster);

// The argument list as text: "conv_abi <variant>" then one line per argument
// "<index> <name>: <llvm type>[ <attrs>]" (attributes in print order, the
// capture attribute spelled as `flavor` spells it); LF, trailing newline. A
// non-identity acc_epilogue adds " acc_epilogue=<e>" to the first line.
std::string text(const std::string &variant, const targets::Flavor &flavor,
                 const std::string &acc_epilogue = "identity");

// The argument names of `variant`, in order.
std::vector<std::string> param_names(const std::string &variant, const std::string &acc_epilogue = "identity");

}  // namespace cpe::kernels::conv_abi

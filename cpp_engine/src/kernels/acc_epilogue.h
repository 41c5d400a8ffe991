// The accumulator epilogues, defined once (twin of python_engine/kernels/acc_epilogue.py).
//
// An accumulator epilogue runs on the fp32 accumulator after the full fold and
// before the cast to the output dtype, in every kernel that writes D (the plain
// forward kernel, the cluster fold, the Stage-2 reduce kernel). Each epilogue is
// a sequence of steps applied in order: "bias" (x + bias[c], c the global output
// channel; a read past the bias buffer returns 0), "scale" (x * scale), "relu"
// (x olt 0 ? 0 : x; NaN passes), "clamp" (x olt lo ? lo : x, then ogt hi ? hi).
// The fused inference forms (MIOpenDriver -F 4) compose two steps: "bias_relu"
// (bias then relu) and "bias_clamp" (bias then clamp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/builder.h"

namespace cpe::kernels::acc_epilogue {

// identity, bias, scale, relu, clamp, bias_relu, bias_clamp (in that order).
const std::vector<std::string> &names();

// "identity, bias, scale, relu, clamp, bias_relu or bias_clamp" (rejection reasons).
extern const char *const kNamesText;

// Whether `kind` is one of names().
bool known(const std::optional<std::string> &kind);

// The steps of `kind` in order; std::logic_error for an unknown kind.
const std::vector<std::string> &steps(const std::string &kind);

// Whether epilogue `kind` has `step`; false for an unknown kind.
bool has(const std::optional<std::string> &kind, const std::string &step);

// One argument a step takes as a separate kernel's argument (the reduce tail).
struct StepArg {
    const char *name;
    const char *kind;  // "in_ptr", "i64", "f32"
};

// The arguments of `kind`'s steps in step order (bias: bias_ptr, bias_bytes;
// scale: scale; clamp: clamp_lo, clamp_hi); std::logic_error for an unknown kind.
std::vector<StepArg> args(const std::string &kind);

// Emit the steps of `kind` on fp32 x (scalar, or <width x float> when width > 1)
// and return the result (x itself for identity). bias() emits and returns the
// fp32 bias of x's elements; param(name) returns the fp32 scalar argument `name`
// (broadcast here).
ir::Value emit(ir::IRBuilder &b, const std::string &kind, const ir::Value &x, int64_t width,
               const std::function<ir::Value()> &bias, const std::function<ir::Value(const char *)> &param);

}  // namespace cpe::kernels::acc_epilogue

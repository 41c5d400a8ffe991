// Twin of python_engine/families/conv_abi.py.
// Family `conv_abi`: the convolution kernels' argument lists as text (DESIGN
// §4), so both engines' argument order, types and attributes compare byte for
// byte and sit in a golden shard like any kernel.
//
// The argument lists are data in kernels/conv_abi.h; this is the family
// wrapper: spec, rules, name. build() returns the text, not an LLVM module.
//
// Spec fields (in order): direction (str "fwd"; "bwd_data" and "bwd_weight"
// are known directions without kernels, rejected with a reason; default
// "fwd"), variant (str "plain" | "two_stage" | "cluster" | "reduce"; default
// "plain"), spatial_dims (int 2; 3 is rejected with its own reason; default 2).
// The capture attribute of pointer arguments is spelled per flavor; the
// cluster variant exists only at flavor llvm23 (where the cluster kernel does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/fields.h"
#include "targets/arch.h"
#include "targets/flavors.h"

namespace cpe::families::conv_abi {

extern const char *const kFamily;  // "conv_abi"

// The fields in spec order (names and kinds; defaults are AbiSpec's).
const std::vector<spec::Field> &fields();

struct AbiSpec {
    std::optional<std::string> direction = std::string("fwd");  // nullopt = JSON null
    std::optional<std::string> variant = std::string("plain");
    int64_t spatial_dims = 2;
    std::optional<std::string> acc_epilogue = std::string("identity");  // non-identity: variant reduce only
};

// First failing rule's reason, or nullopt. Order: direction (known, then
// implemented), variant, spatial_dims, acc_epilogue (known, then variant
// reduce only), arch (gfx1250), cluster flavor.
std::optional<std::string> validate(const AbiSpec &spec, const targets::Arch &arch, const targets::Flavor &flavor);

// conv_abi_<direction>_<variant> of a valid spec.
std::string kernel_name(const AbiSpec &spec);

// (name, kernels::conv_abi::text(variant, flavor)) of a valid spec.
std::pair<std::string, std::string> build(const AbiSpec &spec, const targets::Arch &arch,
                                          const targets::Flavor &flavor);

}  // namespace cpe::families::conv_abi

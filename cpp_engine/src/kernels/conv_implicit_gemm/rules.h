// The rules of family conv_implicit_gemm: validate (twin:
// python_engine/kernels/conv_implicit_gemm/rules.py).
#pragma once

#include <optional>
#include <string>

#include "kernels/conv_implicit_gemm/spec.h"

namespace cpe::kernels::conv_implicit_gemm {

// First failing rule's reason, or nullopt. Order (docs/conv_implicit_gemm.md):
// dtype; tile shape; wave grid; pipeline (and num_load_waves); epilogue;
// threads; vector widths; acc_epilogue; LDS; arch WMMA; split_k;
// cluster (flavor, arch, pipeline, range, two-stage); name_prefix.
std::optional<std::string> validate(const ConvSpec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor);

}  // namespace cpe::kernels::conv_implicit_gemm

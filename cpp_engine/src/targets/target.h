// Twin of python_engine/targets/target.py.
// The target of a lowering request: the flavor row (aliases included) and the
// arch row, resolved in the order of python_engine/api.py `_prepare` (flavor
// first, then arch). Moved out of the spec layer because it needs the tables.
#pragma once

#include <string>

#include "spec/fields.h"
#include "targets/arch.h"
#include "targets/flavors.h"

namespace cpe::targets {

// The resolved flavor and arch rows of a lowering request.
struct Target {
    const Flavor *flavor;
    const Arch *arch;
};

// Resolve `flavor` (aliases included) then `arch`; throws spec::SpecRejected
// with the unknown-flavor / unknown-arch reason of targets/flavors.h, arch.h.
// With any_processor (the families built on the split-K resolver), an LLVM
// AMDGPU processor outside the arch table gets its processor-only row
// (arch.h processor_arch).
Target resolve_target(const std::string &arch, const std::string &flavor, bool any_processor = false);

}  // namespace cpe::targets

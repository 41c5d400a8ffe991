// Family `ir_core`: small kernels that between them exercise every printer
// rule of DESIGN §2 and every flavor-dependent line of §3.
// Twin of python_engine/kernels/ir_core.py.
//
// Spec fields (in order): `kernel` (str, one of kKernels; default
// "constants_f32"), `threads` (int, work-items per workgroup: a multiple of the
// arch wave size, at most 1024; default 256), `cluster` (int, 0 = off, else
// 1..16 workgroups along z: `amdgpu-cluster-dims` `1,1,cluster`; needs flavor
// llvm23 and arch gfx1250; default 0), `value` (float, a double; not NaN: the
// IR prints every NaN as the canonical NaN; default 0.0; only kernel
// float_field uses it: stored as a float and a double constant, and named in
// the kernel name as spec::float_text).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/function.h"
#include "spec/fields.h"

namespace cpe::kernels::ir_core {

extern const char *const kFamily;  // "ir_core"

// The fields in spec order (names and kinds; defaults are IrCoreSpec's).
const std::vector<spec::Field> &fields();

// The kernel names, in the order the rejection reason lists them.
const std::vector<std::string> &kernels();

// Kernels accepted besides kernels() but not listed in the unknown-kernel
// reason, whose text golden/ir_core.json holds: float_field.
const std::vector<std::string> &unlisted_kernels();

struct IrCoreSpec {
    std::optional<std::string> kernel = std::string("constants_f32");  // nullopt = JSON null
    int64_t threads = 256;
    int64_t cluster = 0;
    double value = 0.0;
};

// First failing rule's reason, or nullopt. Rules, in order: kernel name,
// thread count, cluster range, cluster flavor, cluster arch, value not NaN.
std::optional<std::string> validate(const IrCoreSpec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor);

// `ir_core_<kernel>_t<threads>[_c<cluster>]` of a valid spec, then
// `_v<spec::float_text(value)>` for kernel float_field.
std::string kernel_name(const IrCoreSpec &spec);

// Build the module of a valid spec; returns (kernel name, module).
std::pair<std::string, std::unique_ptr<ir::Module>> build(const IrCoreSpec &spec, const targets::Arch &arch,
                                                         const targets::Flavor &flavor);

}  // namespace cpe::kernels::ir_core

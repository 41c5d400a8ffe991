// Helpers shared by kernel families: module creation, kernel attributes, params.
// Twin of python_engine/kernels/common.py.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/function.h"
#include "ir/types.h"

namespace cpe::kernels {

// Kernel attribute keys in the one order the printer writes them:
// amdgpu-flat-work-group-size, amdgpu-cluster-dims, amdgpu-waves-per-eu,
// uniform-work-group-size.
extern const char *const kKernelAttrOrder[4];

// Module flags: code object version 6 (LLVM AMDGPUUsage.rst, "Code Object V6 Metadata").
extern const char *const kModuleFlags[2];

using ClusterDims = std::array<int64_t, 3>;

// Ordered kernel attribute pairs: the exact flat work-group size
// `threads,threads` (threads = work-items per workgroup) and, when given,
// `amdgpu-cluster-dims` `x,y,z` (workgroups per cluster along each axis) and
// `amdgpu-waves-per-eu` `n` (at least n waves per SIMD: LLVM limits the registers to
// that occupancy; AMDGPUUsage "LLVM IR Attributes"; the emulator's promise checker
// holds it to the launch's workgroup).
ir::Function::Attrs kernel_attrs(int64_t threads, const std::optional<ClusterDims> &cluster_dims = std::nullopt,
                                 const std::optional<int64_t> &waves_per_eu = std::nullopt);

// Read-only global buffer parameter (`noalias`, no capture, `readonly`).
ir::Param in_ptr(const std::string &name);
// Write-only global buffer parameter (`noalias`, no capture, `writeonly`).
ir::Param out_ptr(const std::string &name);
// Read-write global buffer parameter (`noalias`, no capture).
ir::Param inout_ptr(const std::string &name);
// Plain scalar kernel argument (i32 unless given).
ir::Param scalar(const std::string &name, const ir::Type *t = ir::i32());

// A module with one `amdgpu_kernel` function `name` and the module flags.
std::unique_ptr<ir::Module> new_module(const targets::Flavor &flavor, const targets::Arch &arch,
                                       const std::string &name, std::vector<ir::Param> params,
                                       ir::Function::Attrs attrs);

}  // namespace cpe::kernels

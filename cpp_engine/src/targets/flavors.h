// The flavor table (DESIGN §3): one row per LLVM toolchain generation.
// Twin of python_engine/targets/flavors.py.
//
// Facts and their sources:
// - datalayout strings: LLVM `AMDGPUTargetMachine.cpp` (computeDataLayout).
//   LLVM 20 gives buffer resources `p8:128:128`; LLVM 21 added the 48-bit index
//   width (`p8:128:128:128:48`); the LLVM 22.1 amdgcn string adds `m:e`
//   (ELF mangling). The llvm23 string is the one llvmlite 0.50 (LLVM 22.1)
//   reports for `amdgcn-amd-amdhsa`.
// - pointer capture attribute: LLVM 21 replaced `nocapture` with
//   `captures(none)` (LLVM LangRef, "captures" parameter attribute).
// - buffer resource intrinsic: LLVM 20 `llvm.amdgcn.make.buffer.rsrc.p1`
//   with an i32 num_records; LLVM 22 overloads the result (`.p8.p1`) and takes
//   an i64 num_records (`IntrinsicsAMDGPU.td`).
// - workgroup clusters: gfx1250 `amdgpu-cluster-dims` and the cluster id
//   intrinsics are written for LLVM 22.1 and later; we only emit them at llvm23.
#pragma once

#include <string>
#include <vector>

namespace cpe::targets {

// The target triple every module is written for.
extern const char *const kTriple;  // "amdgcn-amd-amdhsa"

struct Flavor {
    std::string name;        // row name (`llvm24` is an alias row)
    std::string canonical;   // the row an alias resolves to
    std::string datalayout;  // `target datalayout` text
    std::string capture_attr;  // `nocapture` or `captures(none)`
    int rsrc_num_records_bits;  // width of make.buffer.rsrc's num_records (32 or 64)
    bool clusters;           // workgroup clusters may be emitted
};

// Every flavor row (aliases included), in table order.
const std::vector<Flavor> &flavors();

// The row named `name` (aliases included), or nullptr.
const Flavor *find_flavor(const std::string &name);

// Rejection reason for a flavor name that is not in the table:
// "flavor '<name>' is not one of llvm20, llvm22, llvm23, llvm24".
std::string unknown_flavor_reason(const std::string &name);

}  // namespace cpe::targets

// The arch table: the GPU targets the engine knows. Twin of
// python_engine/targets/arch.py.
//
// Only gfx1250 has the kernels of this project; the others are known so that a
// request for them is rejected with a reason rather than an unknown-arch error.
//
// Sources:
// - wave size, LDS bytes per workgroup: LLVM `AMDGPU.td` / `GCNSubtarget`
//   (FeatureWavefrontSize32/64, FeatureAddressableLocalMemorySize*), and
//   LLVM `AMDGPUUsage.rst` processor table.
//   gfx1250: wave32, 327680 bytes (320 KiB) of LDS per workgroup.
//   gfx950: wave64, 163840 bytes. gfx942: wave64, 65536 bytes.
//   gfx1100, gfx1201: wave32 (default), 65536 bytes.
// - matrix units: gfx1250 WMMA `v_wmma_f32_16x16x32_{bf16,f16}`
//   (LLVM `IntrinsicsAMDGPU.td`, gfx1250 WMMA); gfx11/gfx12 have only
//   16x16x16 WMMA; gfx942/gfx950 have MFMA, no WMMA.
// - workgroup clusters: gfx1250 only (LLVM FeatureClusters).
// - CUs per device (`cus`, used by the split-K degree policy; the runtime may
//   pass the device's real count instead): gfx942 304 (AMD Instinct MI300X
//   data sheet), gfx950 256 (AMD Instinct MI355X data sheet), gfx1100 96 (AMD
//   Radeon RX 7900 XTX specifications), gfx1201 64 (AMD Radeon RX 9070 XT
//   specifications). gfx1250: ASSUMPTION 256 (no public device specification;
//   docs/targets.md, docs/policy.md).
// - raw buffer resource (V#): one layout per arch (`rsrc_layout`, fields in
//   rsrc_fields()): gfx9 (gfx942, gfx950) and gfx11 (gfx1100, gfx1201) are
//   base 47:0, stride 61:48, num_records 95:64, word 3 = make.buffer.rsrc's
//   flags verbatim; 0x00020000 (gfx9) and 0x31004000 (gfx11/gfx12: FORMAT
//   32-bit, RESOURCE_LEVEL 1, OOB_SELECT 3 = raw check) are AMD Composable
//   Kernel's CK_BUFFER_RESOURCE_3RD_DWORD. gfx1250: LLVM 22.1 lowers
//   make.buffer.rsrc (Feature45BitNumRecordsBufferResource,
//   SIISelLowering lowerPointerAsRsrcIntrin) into base 56:0, num_records
//   101:57, stride 121:108 and flags bits 3:0 at bits 127:124 (the rest of
//   flags is dropped); bit 0 SWIZZLE_ENABLE, bit 1 OOB_SELECT (1 = offset-only
//   raw check), bits 3:2 TYPE (0 = buffer), from the Triton AMD backend
//   (BufferOpsEmitter.cpp) and rocMLIR (flagsKeepBoundsCheck): ASSUMPTION until
//   checked against a gfx1250 ISA document or hardware. flags 0x2 compiles to
//   word 3 0x20000000 (`rsrc_word3`, what parity verify expects).
// - roofline (`roofline`, the perf model's constants, gfx1250 only; the
//   reasoning in python_engine/targets/arch.py and docs/perf_model.md):
//   clock_mhz 2400 ASSUMPTION (MI355X peak engine clock, AMD at Hot Chips
//   2025); simds_per_cu 2 (gfx1250 is CU mode only, LLVM PR 153680, and
//   getEUsPerCU counts 2 SIMDs per CU in CU mode); wmma_cycles 8 (LLVM 22.1
//   gfx1250 SchedModel, llvm-mca-22: v_wmma_f32_16x16x32_bf16 latency 8,
//   reciprocal throughput 8 on HWXDL); max_waves_per_simd 4 ASSUMPTION (up
//   to 370 VGPRs of a 1536-entry wave32 file); hbm_bytes_per_us 8000000
//   ASSUMPTION (MI355X HBM3E 8 TB/s); l2_bytes_per_clk_per_cu 64 ASSUMPTION
//   (CDNA 3 white paper: 128 B/clk per L2 channel, 16 channels per 38-CU XCD);
//   launch_ns 2000, cluster_barrier_cycles 500 ASSUMPTIONS; kstep_issue_cycles
//   93 MEASURED by parity perf (LLVM 22.1, llvm23): instructions of the
//   64x64x32 main loop per K step after issue 16's kernel changes (118 before),
//   at one instruction per clock per wave (ASSUMPTION).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cpe::targets {

// One WMMA shape with fp32 accumulation: M x N x K, input dtype (`bf16`, `fp16`).
struct WmmaShape {
    int m, n, k;
    std::string dtype;
};

struct Arch {
    std::string name;
    int wave_size;               // lanes per wave (32 or 64)
    long long lds_bytes;         // LDS bytes per workgroup
    std::string matrix;          // `wmma` or `mfma`
    std::vector<WmmaShape> wmma;  // WMMA shapes, empty for MFMA archs
    bool clusters;               // workgroup clusters supported
    long long cus;               // compute units per device (gfx1250: an assumption)
    long long rsrc_flags;        // make.buffer.rsrc's flags operand (see above)
    std::string rsrc_layout;     // buffer resource layout: gfx9, gfx11 or gfx1250
    long long rsrc_word3;        // descriptor word 3 LLVM 22.1 compiles (stride 0, num_records < 2^32)
    // The perf model's roofline constants (name, value) in kRooflineFields
    // order; empty when the arch has none (gfx1250 only; sources in arch.cpp).
    std::vector<std::pair<std::string, long long>> roofline{};
};

// Every arch row, in table order.
const std::vector<Arch> &arches();

// The row named `name`, or nullptr.
const Arch *find_arch(const std::string &name);

// LLVM's AMDGPU processor names: every ProcessorModel of LLVM 22.1's
// llvm/lib/Target/AMDGPU/GCNProcessors.td (the "Processors" table of
// llvm/docs/AMDGPUUsage.rst, alternative names such as tahiti included), in
// the order `llc-22 -mtriple=amdgcn -mcpu=help` prints them. Twin of
// LLVM_PROCESSORS in python_engine/targets/arch.py.
const std::vector<std::string> &llvm_processors();

// The arch-table row named `name`; else, for a name in llvm_processors(), a
// row that knows only the name (wave size, LDS bytes, CUs 0, matrix "none", no
// WMMA, no clusters, rsrc layout "none": in_table() is false); else nullptr.
// Only the split-K resolver and the families built on it take such a row (it
// resolves to degree 1, rule arch); the kernels reject it (outside_table_reason).
const Arch *processor_arch(const std::string &name);

// True when `arch` is a row of the arch table (not a processor-only row).
bool in_table(const Arch &arch);

// The rejection reason of a processor-only row for `what` (a kernel family).
std::string outside_table_reason(const Arch &arch, const std::string &what);

// Rejection reason for an arch name that is not in the table:
// "arch '<name>' is not one of gfx1250, gfx942, gfx950, gfx1100, gfx1201".
std::string unknown_arch_reason(const std::string &name);

// One buffer resource field: name, low bit, width (bits of the 128-bit V#).
struct RsrcField {
    std::string name;
    int lo, width;
};

// The fields of a buffer resource layout (`gfx9`, `gfx11`, `gfx1250`), in
// table order; empty for an unknown layout name.
std::vector<RsrcField> rsrc_fields(const std::string &layout);

// True when the arch has the gfx1250 16x16x32 WMMA.
bool has_wmma_16x16x32(const Arch &arch);

}  // namespace cpe::targets

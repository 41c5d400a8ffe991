// Family `conv_implicit_gemm`: the forward implicit-GEMM convolution on gfx1250
// (WMMA 16x16x32, wave32), plain, two-stage split-K (Stage 1) and cluster
// split-K. Twin of python_engine/kernels/conv_implicit_gemm.py, mirrored call
// for call (the builder call order and SSA hints decide the bytes);
// docs/conv_implicit_gemm.md is the normative description.
//
// Per workgroup: an output tile of tile_m pixels x tile_n channels of one
// group, reduced over the slice [k_begin, k_end) of Kgemm in steps of tile_k.
// Grid (ceil(M/tile_m), ceil(kpg/tile_n), G*ks_count); z decodes as
// group = z / ks_count, slice = z % ks_count (plain: group = z, one slice
// covering [0, Kgemm)). Kernel arguments: conv_abi.h.
//
// Bounds: every global access is a raw buffer access; an element outside its
// tensor gets the buffer's byte count as its offset (zero load, dropped store).
// Every branch condition is wave-uniform (K-tile count from z, wavelet role
// from readfirstlane of the wave index).
//
// Hardware facts and their sources:
// - WMMA: llvm.amdgcn.wmma.f32.16x16x32.{bf16,f16}.v8f32.v16{bf16,f16},
//   D(16x16 f32) = A(16x32) * B(32x16) + C, the 8-operand form of LLVM 22
//   IntrinsicsAMDGPU.td AMDGPUWmmaIntrinsicModsAllReuse (i1 neg_a, A, i1 neg_b,
//   B, i16 c_mod, C, i1 reuse_a, i1 reuse_b; immargs); LLVM 22.1 rejects the
//   6-operand form (checked with llvmlite 0.50).
// - WMMA fragment layouts (wave32, 16-bit inputs; gfx1250 ISA WMMA operand
//   layout and the GPU-checked layouts used by public gfx1250 kernels):
//   A (16x32) lane l holds row l%16, elements 0..7 are K = 8*(l/16)+0..7,
//   8..15 are K = 16+8*(l/16)+0..7; B (32x16) lane l holds column l%16 with the
//   same K split; C/D (16x16 fp32, <8 x float>) lane l element e is row
//   8*(l/16)+e, column l%16.
// - Cluster barrier: llvm.amdgcn.s.cluster.barrier (gfx1250 workgroup
//   clusters, LLVM 22.1: a workgroup barrier, then the cluster barrier
//   s_barrier_signal/wait -3), paired with syncscope("cluster") release /
//   acquire fences; "amdgpu-cluster-dims"="1,1,S" (written at flavor llvm23 only).
// - readfirstlane.i32 makes the wave index an SGPR value, so role branches are
//   scalar (wave-uniform).
// - LDS per workgroup (arch table, targets/arch.h): 327680 bytes on gfx1250.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/function.h"
#include "spec/fields.h"

namespace cpe::kernels::conv_implicit_gemm {

extern const char *const kFamily;  // "conv_implicit_gemm"

// The fields in spec order (names and kinds; defaults are ConvSpec's).
const std::vector<spec::Field> &fields();

// Spec ImplicitGemmConvSpec. A str field holding std::nullopt is JSON null.
struct ConvSpec {
    std::optional<std::string> dtype = std::string("bf16");  // A, B, D: "bf16" | "fp16"; fp32 accumulation
    int64_t tile_m = 64;          // output pixels per workgroup (multiple of 16)
    int64_t tile_n = 64;          // output channels per workgroup (multiple of 16)
    int64_t tile_k = 32;          // reduction step (multiple of 32)
    int64_t waves_m = 2;          // compute waves along m
    int64_t waves_n = 2;          // compute waves along n
    std::optional<std::string> pipeline = std::string("mem");  // "mem" | "wavelet"
    int64_t num_load_waves = 1;   // load waves of wavelet (1..8); ignored by mem
    std::optional<std::string> epilogue = std::string("default");  // "default" | "cshuffle"
    int64_t vector_a = 8;         // elements per global load of A: 1, 2, 4, 8; 3, 5, 6, 7 a padded pixel
    int64_t vector_b = 8;         // elements per global load of B: 1, 2, 4, 8; 3, 5, 6, 7 (= vector_a)
    std::optional<std::string> acc_epilogue = std::string("identity");  // identity|bias|scale|relu|clamp
    int64_t split_k = 1;          // 1 off; > 1 two-stage binary; -1 auto (rejected)
    int64_t split_k_cluster = 0;  // 0 off; S in 2..15 cluster split-K (S baked in)
    std::optional<std::string> name_prefix = std::string("");  // "" or an identifier
};

// Work-group size in threads of a spec whose wave grid and pipeline passed:
// 32*(waves_m*waves_n + (wavelet ? num_load_waves : 0)).
int64_t threads(const ConvSpec &spec);

// One LDS global: name, element type, element count.
struct LdsBuffer {
    std::string name;
    const ir::Type *elem;
    int64_t count;
};

// LDS globals in declaration order: one `lds` of the dtype holding A
// [2][tile_m][tile_k] at 0, B [2][tile_n][tile_k] after it (double buffers,
// XOR-swizzled), and aliasing them from offset 0 the cshuffle fp32 tile
// [tile_m][tile_n+4] or the default epilogue's per-wave D transpose regions
// (waves_m*waves_n x [16][24] dtype, split_k == 1); the element count covers
// the largest (bytes: docs/conv_implicit_gemm.md). Valid dtype required.
std::vector<LdsBuffer> lds_layout(const ConvSpec &spec);

// Total LDS bytes of lds_layout(spec) (bytes; exact for a spec that passed the
// tile and wave-grid rules).
int64_t lds_bytes(const ConvSpec &spec);

// Padded-pixel vector widths (the small-channel path): 3, 5, 6, 7. A load slot
// is then one pixel's cpg = v channels, zero-padded to pixel_slot(v) elements
// along K; the reduction runs over Y*X*pixel_slot(v).
bool is_pixel_vector(int64_t v);
// Elements one load slot fills along K: v, or 4 (v = 3) / 8 (v = 5, 6, 7).
int64_t pixel_slot(int64_t v);
// Byte sizes of the buffer loads of one v-element slot, in address order: {2*v},
// or for a padded pixel the widest first (3: 4+2, 5: 8+2, 6: 8+4, 7: 8+4+2).
std::vector<int64_t> pixel_pieces(int64_t v);

// First failing rule's reason, or nullopt. Order (docs/conv_implicit_gemm.md):
// dtype; tile shape; wave grid; pipeline (and num_load_waves); epilogue;
// threads; vector widths; acc_epilogue; LDS; arch WMMA; split_k; split-K
// epilogue; cluster (flavor, arch, pipeline, range, two-stage); name_prefix.
std::optional<std::string> validate(const ConvSpec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor);

// [<prefix>_]conv_implicit_gemm_<dtype>_<tm>x<tn>x<tk>_w<wm>x<wn>_<pipe>_<epi>
// _va<a>_vb<b>_<acc>[_spk][_skc<S>] of a valid spec; <pipe> is mem or wavelet<L>.
std::string kernel_name(const ConvSpec &spec);

// Build the module of a valid spec; returns (kernel name, module).
std::pair<std::string, std::unique_ptr<ir::Module>> build(const ConvSpec &spec, const targets::Arch &arch,
                                                         const targets::Flavor &flavor);

}  // namespace cpe::kernels::conv_implicit_gemm

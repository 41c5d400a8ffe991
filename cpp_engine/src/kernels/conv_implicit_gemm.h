// Family `conv_implicit_gemm`: the forward implicit-GEMM convolution on gfx1250
// (WMMA 16x16x32, wave32), plain, two-stage split-K (Stage 1) and cluster
// split-K. The family header (twin: python_engine/kernels/conv_implicit_gemm/
// __init__.py, the family surface): it includes the phase headers under
// kernels/conv_implicit_gemm/ that declare the public names (spec.h: fields,
// ConvSpec, threads, kernel_name; lds.h: LDS layout, pixel widths; rules.h:
// validate) and declares build (emitter.cpp). The C++ tree mirrors the Python
// package file for file and call for call (the builder call order and SSA
// hints decide the bytes); docs/conv_implicit_gemm.md is the normative
// description.
//
// Per workgroup: an output tile of tile_m pixels x tile_n channels of one
// group, reduced over the slice [k_begin, k_end) of Kgemm in steps of tile_k.
// Grid (ceil(M/tile_m), ceil(kpg/tile_n), G*ks_count); z decodes as
// group = z / ks_count, slice = z % ks_count (plain: group = z, one slice
// covering [0, Kgemm)). Kernel arguments: conv_abi.h.
//
// Bounds: every global access is a raw buffer access; an element outside its
// tensor gets the buffer's byte count as its offset (zero load, dropped store).
// Every branch condition is wave-uniform (K-tile count from z, the choice of the
// uniform-tap K loop from kernel arguments and z (taploop.cpp), wavelet role
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
// - Raw buffer loads with a uniform soffset (the uniform-tap loop): whether the
//   hardware's range check counts soffset is not relied on (an out-of-range
//   voffset stays out with any soffset below 2^31 added; an in-range one plus
//   soffset is the element's own address). s_wait_loadcnt: the gfx12+ intrinsic
//   llvm.amdgcn.s.wait.loadcnt (i16 immarg), present in LLVM 19.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "kernels/conv_implicit_gemm/lds.h"
#include "kernels/conv_implicit_gemm/rules.h"
#include "kernels/conv_implicit_gemm/spec.h"

namespace cpe::kernels::conv_implicit_gemm {

// Build the module of a valid spec; returns (kernel name, module).
std::pair<std::string, std::unique_ptr<ir::Module>> build(const ConvSpec &spec, const targets::Arch &arch,
                                                         const targets::Flavor &flavor);

}  // namespace cpe::kernels::conv_implicit_gemm

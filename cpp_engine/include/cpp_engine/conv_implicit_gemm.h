/* C API of family conv_implicit_gemm: the forward implicit-GEMM convolution on
 * gfx1250 (WMMA 16x16x32, wave32), plain, two-stage split-K (Stage 1) and
 * cluster split-K. See docs/conv_implicit_gemm.md (normative).
 *
 * Convention: input x NHWC, weights w KYXC (per group [kpg][Y][X][cpg]), output
 * D NHWK, G groups packed in the channel dimension (C = G*cpg, K = G*kpg). Per
 * group the GEMM is M = N*Ho*Wo output pixels by kpg output channels over
 * Kgemm = Y*X*cpg (c fastest). Launch grid (ceil(M/tile_m), ceil(kpg/tile_n),
 * G*ks_count) of threads = 32*(waves_m*waves_n + (wavelet ? num_load_waves : 0))
 * lanes; z decodes as group = z / ks_count, slice = z % ks_count.
 *
 * Kernel arguments, in order: x_ptr, x_bytes, w_ptr, w_bytes, d_ptr, d_bytes
 * (global pointers and their i64 byte counts), bias_ptr (fp32[K]), scale,
 * clamp_lo, clamp_hi (float), then the problem block of 20 i32: N C H W K Y X
 * stride_h stride_w pad_h pad_w dil_h dil_w groups Ho Wo M kpg cpg Kgemm;
 * split_k > 1 adds ws_ptr (fp32 [ks_count][M][K] workspace), ws_bytes (i64),
 * ks (slice width in reduction elements, a multiple of tile_k), ks_count
 * (slices). With split_k_cluster = S launch ks_count = S: the S slices of a
 * tile form one (1,1,S) workgroup cluster and fold into D themselves (no
 * Stage 2); otherwise split_k > 1 needs Stage 2 (conv_fwd_split_k_reduce.h).
 *
 * Hardware facts: WMMA llvm.amdgcn.wmma.f32.16x16x32.{bf16,f16} (8-operand form
 * of LLVM 22 IntrinsicsAMDGPU.td; fragment layouts per the gfx1250 ISA WMMA
 * operand layout); cluster barrier llvm.amdgcn.s.cluster.barrier between
 * syncscope("cluster") fences (gfx1250, LLVM 22.1), emitted at flavor llvm23 only. */
#ifndef CPP_ENGINE_CONV_IMPLICIT_GEMM_H
#define CPP_ENGINE_CONV_IMPLICIT_GEMM_H

#include "cpp_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The spec, fields in spec order. Strings: NULL is JSON null (rejected by the
 * field's rule, "... got null"); the defaults point at static storage. */
typedef struct cpe_conv_spec {
    const char *dtype;        /* A, B and D element type: "bf16" or "fp16" (fp32 accumulation). Default "bf16" */
    int64_t tile_m;           /* output pixels per workgroup, multiple of 16. Default 64 */
    int64_t tile_n;           /* output channels per workgroup, multiple of 16. Default 64 */
    int64_t tile_k;           /* reduction elements per K step, multiple of 32. Default 32 */
    int64_t waves_m;          /* compute waves along m, >= 1, tile_m % (16*waves_m) == 0. Default 2 */
    int64_t waves_n;          /* compute waves along n, >= 1, tile_n % (16*waves_n) == 0. Default 2 */
    const char *pipeline;     /* "mem" (all waves load and compute) or "wavelet" (dedicated load waves). Default "mem" */
    int64_t num_load_waves;   /* load waves of "wavelet", 1..8; ignored by "mem". Default 1 */
    const char *epilogue;     /* "default" (fragment stores) or "cshuffle" (through LDS, 4-wide stores). Default "default" */
    int64_t vector_a;         /* elements per global load of A: 1, 2, 4 or 8; 3, 5, 6 or 7 loads one pixel of
                                 cpg = vector_a channels zero-padded to 4 / 8 (small-channel path). Default 8 */
    int64_t vector_b;         /* elements per global load of B: as vector_a; a padded width needs
                                 vector_b = vector_a. Default 8 */
    const char *acc_epilogue; /* "identity", "bias", "scale", "relu", "clamp", "bias_relu" or "bias_clamp"
                                 (fp32, before the cast; bias_*: bias then the activation). Default "identity" */
    int64_t split_k;          /* 1 off; > 1 the two-stage binary (degree = run-time ks_count); -1 auto is rejected. Default 1 */
    int64_t split_k_cluster;  /* 0 off; S in 2..15: cluster split-K, S baked in (needs split_k > 1, llvm23). Default 0 */
    const char *name_prefix;  /* "" or an identifier [A-Za-z_][A-Za-z0-9_]*, prepended as "<prefix>_". Default "" */
} cpe_conv_spec;

/* The default spec (bf16, 64x64x32, waves 2x2, mem, default, va8, vb8,
 * identity, split_k 1, no cluster, no prefix). */
CPE_API cpe_conv_spec cpe_conv_spec_default(void);

/* The A/B load width in elements (the spec's vector_a / vector_b) for a layer
 * with `cpg` channels per group, as the launch side picks it: cpg itself for 3,
 * 5, 6, 7 (one zero-padded pixel per load), else the widest of 8, 4, 2, 1
 * dividing cpg. Returns 0 when cpg < 1 (no width). */
CPE_API int64_t cpe_conv_load_vector(int64_t cpg);

/* CPE_OK when (spec, arch, flavor) lowers; else CPE_REJECTED with the first
 * failing rule's reason written NUL-terminated into reason[reason_len]. After
 * the unknown flavor/arch checks the rules are, in order: dtype; tile (WMMA
 * 16x16x32 multiples); wave grid; pipeline; num_load_waves (wavelet); epilogue;
 * work-group <= 1024 threads; vector_a, vector_b (1..8, padded widths equal); acc_epilogue; LDS bytes
 * (2*(tile_m+tile_n)*(tile_k+8)*2 + cshuffle tile_m*(tile_n+4)*4) within the
 * arch's LDS; arch has the 16x16x32 WMMA (gfx1250); split_k (-1 auto, < 1);
 * split-K needs the identity acc_epilogue; cluster: flavor llvm23, arch
 * gfx1250, mem pipeline, 2..15, split_k > 1; name_prefix. Texts: docs/conv_implicit_gemm.md.
 * CPE_INTERNAL_ERROR when spec is NULL. */
CPE_API cpe_status cpe_conv_validate(const cpe_conv_spec *spec, const char *arch, const char *flavor, char *reason,
                                     size_t reason_len);

/* Lower to LLVM IR text. On CPE_OK *out holds the malloc'd kernel name
 * ([<prefix>_]conv_implicit_gemm_<dtype>_<tm>x<tn>x<tk>_w<wm>x<wn>_<pipe>_<epi>_va<a>_vb<b>_<acc>[_spk][_skc<S>])
 * and module text (free with cpe_output_free); otherwise out is zeroed and the
 * reason is written like cpe_conv_validate (CPE_INTERNAL_ERROR when out is NULL). */
CPE_API cpe_status cpe_conv_lower(const cpe_conv_spec *spec, const char *arch, const char *flavor, cpe_output *out,
                                  char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif /* CPP_ENGINE_CONV_IMPLICIT_GEMM_H */

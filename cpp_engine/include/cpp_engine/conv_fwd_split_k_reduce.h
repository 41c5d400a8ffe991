/* C API of family conv_fwd_split_k_reduce: Stage 2 of two-stage split-K.
 *
 * The kernel computes D[M][K] = fptrunc(sum over s < ks_count of ws[s][M][K])
 * with ws fp32 and D bf16 or fp16, summing in slab order from slab 0 (bit-exact
 * with a sequential fp32 reference) and rounding to nearest even. Kernel
 * arguments, in order: ws_ptr (global, fp32), ws_bytes (i64, bytes), d_ptr
 * (global, bf16/fp16), d_bytes (i64, bytes), M, K (i32, elements), ks_count
 * (i32, >= 1; ignored when the kernel is built for a fixed degree). Launch
 * ceil(M*K / (threads*vector)) workgroups of `threads` lanes along x.
 * A fused spec (acc_epilogue other than "identity") appends its arguments:
 * bias_ptr (global, fp32[K]), bias_bytes (i64); scale (float); clamp_lo,
 * clamp_hi (float); bias_relu and bias_clamp (bias, then the activation)
 * take bias's then clamp's.
 * See docs/families.md. */
#ifndef CPP_ENGINE_CONV_FWD_SPLIT_K_REDUCE_H
#define CPP_ENGINE_CONV_FWD_SPLIT_K_REDUCE_H

#include "cpp_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cpe_reduce_spec {
    const char *dtype; /* "bf16" or "fp16"; NULL (null) is rejected. Default "bf16" (static storage) */
    int64_t vector;    /* elements per lane: 1, 2, 4 or 8. Default 8 */
    int64_t threads;   /* lanes per workgroup: multiple of the wave size (32 on gfx1250), <= 1024. Default 256 */
    int64_t degree;    /* 1..32: slab sum unrolled for that many slabs; 0: runtime loop over ks_count. Default 0 */
    const char *acc_epilogue; /* "identity", "bias", "scale", "relu", "clamp", "bias_relu" or "bias_clamp":
                                 applied once to the fp32 sum before the cast; adds kernel arguments after
                                 ks_count (bias: bias_ptr, bias_bytes; scale: scale; clamp: clamp_lo,
                                 clamp_hi; bias_relu, bias_clamp: bias's then clamp's). Default "identity" */
} cpe_reduce_spec;

/* The default spec (bf16, vector 8, 256 threads, degree 0, identity). */
CPE_API cpe_reduce_spec cpe_reduce_spec_default(void);

/* CPE_OK when (spec, arch, flavor) lowers; CPE_REJECTED with the first failing
 * rule's reason (dtype, vector, threads, degree, acc_epilogue, arch; after the unknown
 * flavor/arch checks) written NUL-terminated into reason[reason_len]. */
CPE_API cpe_status cpe_reduce_validate(const cpe_reduce_spec *spec, const char *arch, const char *flavor,
                                       char *reason, size_t reason_len);

/* Lower to LLVM IR text. On CPE_OK *out holds the malloc'd kernel name and
 * module text (free with cpe_output_free); otherwise out is zeroed and the
 * reason is written like cpe_reduce_validate. */
CPE_API cpe_status cpe_reduce_lower(const cpe_reduce_spec *spec, const char *arch, const char *flavor,
                                    cpe_output *out, char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif /* CPP_ENGINE_CONV_FWD_SPLIT_K_REDUCE_H */

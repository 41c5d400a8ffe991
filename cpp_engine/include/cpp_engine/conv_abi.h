/* C API of family conv_abi: the argument lists of the convolution kernels as
 * text, so a launcher can check the argument order, LLVM types and attributes
 * it was written against. See docs/families.md (conv_abi) and
 * docs/conv_implicit_gemm.md (ABI).
 *
 * The text is "conv_abi <variant>" then one line per argument
 * "<index> <name>: <llvm type>[ <attrs>]", LF, trailing newline; the kernel
 * name of the output is "conv_abi_<direction>_<variant>". Variants: plain
 * (forward, split_k 1), two_stage (forward, split_k > 1: the split-K tail
 * ws_ptr, ws_bytes, ks, ks_count after the problem block), cluster (forward,
 * split_k_cluster: the same tail, ws_ptr read-write; flavor llvm23 only) and
 * reduce (Stage 2, conv_fwd_split_k_reduce.h). Pointer arguments carry the
 * flavor's capture attribute (nocapture at llvm20, captures(none) after). */
#ifndef CPP_ENGINE_CONV_ABI_H
#define CPP_ENGINE_CONV_ABI_H

#include "cpp_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cpe_conv_abi_spec {
    const char *direction; /* "fwd"; "bwd_data" and "bwd_weight" are rejected (no kernels). Default "fwd" */
    const char *variant;   /* "plain", "two_stage", "cluster" or "reduce". Default "plain" */
    int64_t spatial_dims;  /* 2; 3 (3-D convolution) is rejected (no kernels). Default 2 */
    const char *acc_epilogue; /* "identity"; "bias", "scale", "relu", "clamp", "bias_relu", "bias_clamp"
                                 with variant "reduce" only (the fused Stage 2's arguments after ks_count). Default "identity" */
} cpe_conv_abi_spec;

/* The default spec (fwd, plain, 2-D). Strings point at static storage. */
CPE_API cpe_conv_abi_spec cpe_conv_abi_spec_default(void);

/* CPE_OK when (spec, arch, flavor) is accepted; CPE_REJECTED with the first
 * failing rule's reason (after the unknown flavor/arch checks: direction,
 * variant, spatial_dims, acc_epilogue, arch gfx1250, cluster needs flavor llvm23) written
 * NUL-terminated into reason[reason_len]; CPE_INTERNAL_ERROR when spec is NULL. */
CPE_API cpe_status cpe_conv_abi_validate(const cpe_conv_abi_spec *spec, const char *arch, const char *flavor,
                                         char *reason, size_t reason_len);

/* On CPE_OK *out holds the malloc'd name and ABI text (free with
 * cpe_output_free); otherwise out is zeroed and the reason is written like
 * cpe_conv_abi_validate. */
CPE_API cpe_status cpe_conv_abi_lower(const cpe_conv_abi_spec *spec, const char *arch, const char *flavor,
                                      cpe_output *out, char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif /* CPP_ENGINE_CONV_ABI_H */

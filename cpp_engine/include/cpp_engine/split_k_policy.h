/* C API of family split_k_policy and the AOT job grid (docs/policy.md).
 *
 * The spec is flat: the fields of cpe_conv_spec (conv_implicit_gemm.h) in the
 * same order, except that split_k defaults to -1 (auto); then the problem
 * (N C H W K Y X stride_h stride_w pad_h pad_w dil_h dil_w groups; input NHWC,
 * weights KYXC, output NHWK); then cus (0: the arch table's CU count, else the
 * device's real count, 1..65536).
 *
 * cpe_split_k_policy_lower returns, as text (not LLVM IR), the decision a
 * runtime or an emitter acts on: width folding, the resolved split-K degree
 * and the rule that decided it, the selected binary (plain, two_stage,
 * cluster; kernel name, identity hash and label, spec), the launch degree and
 * its admission reason, the reduce kernel when Stage 2 runs, and whether every
 * binary is an AOT job. Lines: "split_k_policy <arch> <flavor>", "problem
 * ...", "fold <f>", ["folded ..."], "gemm ...", "cus <n>", "degree <d>",
 * "rule <id>: <detail>", "binary <kind>", "cluster <note>", "launch_degree
 * <d>", "admission ok|<reason>", "kernel <name>|none", ["identity <hash>
 * <label>", "spec k=v;..."], "reduce <name>|none", ["reduce_identity ...",
 * "reduce_spec ..."], "aot yes|no". */
#ifndef CPP_ENGINE_SPLIT_K_POLICY_H
#define CPP_ENGINE_SPLIT_K_POLICY_H

#include "cpp_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cpe_split_k_policy_spec {
    /* the binary: the fields of cpe_conv_spec, same order; split_k defaults to -1 (auto) */
    const char *dtype;
    int64_t tile_m;
    int64_t tile_n;
    int64_t tile_k;
    int64_t waves_m;
    int64_t waves_n;
    const char *pipeline;
    int64_t num_load_waves;
    const char *epilogue;
    int64_t vector_a;
    int64_t vector_b;
    const char *acc_epilogue;
    int64_t split_k;
    int64_t split_k_cluster;
    const char *name_prefix;
    /* the problem (defaults: 1x64x56x56, K 64, 3x3, stride 1, pad 1, dil 1, 1 group) */
    int64_t N;
    int64_t C;
    int64_t H;
    int64_t W;
    int64_t K;
    int64_t Y;
    int64_t X;
    int64_t stride_h;
    int64_t stride_w;
    int64_t pad_h;
    int64_t pad_w;
    int64_t dil_h;
    int64_t dil_w;
    int64_t groups;
    /* compute units of the device: 0 = the arch table's count */
    int64_t cus;
} cpe_split_k_policy_spec;

CPE_API cpe_split_k_policy_spec cpe_split_k_policy_spec_default(void);

/* CPE_OK when the problem and cus are valid; else CPE_REJECTED with the reason. */
CPE_API cpe_status cpe_split_k_policy_validate(const cpe_split_k_policy_spec *spec, const char *arch,
                                               const char *flavor, char *reason, size_t reason_len);

/* On CPE_OK *out holds the malloc'd name "split_k_policy_d<degree>_<binary>"
 * and the decision text (free with cpe_output_free). */
CPE_API cpe_status cpe_split_k_policy_lower(const cpe_split_k_policy_spec *spec, const char *arch,
                                            const char *flavor, cpe_output *out, char *reason, size_t reason_len);

/* The AOT job grid of `flavor` (aliases resolved), one line per job in grid
 * order: family\thash\tlabel\tspec (spec as name=value;... in field order).
 * On CPE_OK *out receives malloc'd text (free with cpe_free) and *count the
 * arithmetic job count (either may be NULL). */
CPE_API cpe_status cpe_aot_jobs_text(const char *flavor, char **out, int64_t *count, char *reason,
                                     size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif /* CPP_ENGINE_SPLIT_K_POLICY_H */

/* C API of family perf_model: the gfx1250 perf model (docs/perf_model.md).
 *
 * The spec has the members of cpe_split_k_policy_spec, same order, same
 * defaults and the same rules (split_k defaults to -1: the seed policy's
 * choice, which the text evaluates too; the tile, split_k and cluster
 * members steer only that seed choice; the other binary members -- dtype,
 * tile_k, pipeline, epilogue, vectors, acc_epilogue, name_prefix -- are kept
 * by every candidate).
 *
 * cpe_perf_model_lower returns, as text (not LLVM IR), every admitted
 * candidate (tile x split-K degree x binary: plain, two_stage with its
 * Stage-2 reduce, cluster with S = degree slices) with its predicted terms
 * (integers: cycles, bytes, picoseconds), the selected candidate (the lowest
 * total_ps; ties: less L2 traffic, fewer workgroups, the earlier candidate)
 * and the runner-up, the seed
 * policy's choice evaluated by the same model, then the selected binary in
 * split_k_policy's words. Lines: "perf_model <arch> <flavor>", "problem ...",
 * "fold <f>", ["folded ..."], "gemm ...", "cus <n>", "roofline k=v ...|none",
 * "candidates <admitted> of <tried> admitted", "c<i> <binary>
 * <tm>x<tn>x<tk> w<wm>x<wn> d<degree> ks=.. ks_count=.. data=.. wgs=..
 * occupancy=.. rounds=.. wmma=.. useful=.. compute_cycles=.. l2_bytes=..
 * hbm_bytes=.. compute_ps=.. l2_ps=.. hbm_ps=.. bound=compute|l2|hbm
 * stage1_ps=.. stage2_ps=.. total_ps=..[ selected| runner_up]" per admitted
 * candidate, "selected c<i> ...|none", "runner_up c<j> ...|none", "seed
 * <label> total_ps=..|seed none: <why>", "degree <d>", "rule model: ...",
 * "binary <kind>", "cluster ...", "launch_degree <d>", "admission
 * ok|<reason>", "kernel <name>|none", ["identity <hash> <label>", "spec
 * k=v;..."], "reduce <name>|none", ["reduce_identity ...", "reduce_spec
 * ..."], "aot yes|no: ...". Constants: the arch table's roofline column
 * (cpe_arch_table_text). */
#ifndef CPP_ENGINE_PERF_MODEL_H
#define CPP_ENGINE_PERF_MODEL_H

#include "cpp_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cpe_perf_model_spec {
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
    /* 0: every admitted candidate; 1: only the candidates the reference's rules
     * admit (the split-K policy splits at the candidate's tile, degree <= its
     * degree; a cluster binary only under the cluster offer rule); the text
     * then adds "admitted_by <rule>" after "rule model: ..." */
    int64_t rules;
} cpe_perf_model_spec;

CPE_API cpe_perf_model_spec cpe_perf_model_spec_default(void);

/* CPE_OK when the problem and cus are valid (split_k_policy's rules and
 * texts) and rules is 0 or 1; else CPE_REJECTED with the reason. */
CPE_API cpe_status cpe_perf_model_validate(const cpe_perf_model_spec *spec, const char *arch, const char *flavor,
                                           char *reason, size_t reason_len);

/* On CPE_OK *out holds the malloc'd name "perf_model_<binary>_<tm>x<tn>_d<degree>"
 * ("perf_model_none" when no candidate is admitted) and the text above (free
 * with cpe_output_free). */
CPE_API cpe_status cpe_perf_model_lower(const cpe_perf_model_spec *spec, const char *arch, const char *flavor,
                                        cpe_output *out, char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif /* CPP_ENGINE_PERF_MODEL_H */

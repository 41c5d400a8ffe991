/* C API of family conv_launch: may this conv_implicit_gemm binary run this
 * problem at this split-K degree, and if so, how to launch it.
 * See docs/conv_launch.md.
 *
 * The spec is flat: the fields of cpe_conv_spec (the binary,
 * conv_implicit_gemm.h) in the same order, then the problem (N C H W K Y X
 * stride_h stride_w pad_h pad_w dil_h dil_w groups; input NHWC, weights KYXC,
 * output NHWK, groups packed in the channel dimension), then degree.
 *
 * Rejection (CPE_REJECTED) is the admission reason: the binary's own rule
 * first, then degree, the problem, and the limits of the kernel (vector widths
 * dividing the channels per group, 4-wide stores need kpg and K multiples of
 * 4, every byte count below 2^31, the HIP grid limits; a cluster binary
 * launches ks_count = S and may have trailing empty slices). On CPE_OK the
 * output's kernel is the forward kernel's name and its text is the launch plan: "conv_launch <kernel>", then lines
 * "variant", "degree", "ks", "ks_count", "data_slices" (cluster binaries
 * only: the slices that carry data), "grid x y z", "block t 1 1",
 * "lds_bytes", "cluster 1 1 S" or "cluster none", "workspace_bytes",
 * "needs_stage2 true|false", then "args <variant>" and one line
 * "<index> <name> = <value>" per kernel argument in ABI order (pointers
 * "buffer <tensor>" or "unused", epilogue scalars "caller" or "unused"), and,
 * when Stage 2 runs, "stage2_args reduce" and the reduce kernel's arguments.
 * The same plan as values: cpe_conv_launch_lower_plan (cpe_conv_launch_plan, below).
 * Slicing: ks = ceil(ceil(Kgemm/degree)/tile_k)*tile_k, data = ceil(Kgemm/ks);
 * ks_count = data (two-stage) or S (cluster, data <= S). */
#ifndef CPP_ENGINE_CONV_LAUNCH_H
#define CPP_ENGINE_CONV_LAUNCH_H

#include "cpp_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cpe_conv_launch_spec {
    /* the binary: the fields of cpe_conv_spec, same order, meaning and defaults */
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
    /* the problem, each field 1..2^31-1 (pads 0..2^31-1). Default: 1x64x56x56, K 64, 3x3, stride 1, pad 1, dil 1 */
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
    /* split-K degree of this launch: 1 for a plain binary, S for a cluster binary, >= 1 for two-stage. Default 1 */
    int64_t degree;
} cpe_conv_launch_spec;

/* The default spec (cpe_conv_spec_default's binary, the default problem, degree 1). */
CPE_API cpe_conv_launch_spec cpe_conv_launch_spec_default(void);

/* CPE_OK when the launch is admitted; else CPE_REJECTED with the admission
 * reason written NUL-terminated into reason[reason_len] (CPE_INTERNAL_ERROR
 * when spec is NULL). */
CPE_API cpe_status cpe_conv_launch_validate(const cpe_conv_launch_spec *spec, const char *arch, const char *flavor,
                                            char *reason, size_t reason_len);

/* On CPE_OK *out holds the malloc'd forward kernel name and launch plan text
 * (free with cpe_output_free); otherwise out is zeroed and the reason is
 * written like cpe_conv_launch_validate. */
CPE_API cpe_status cpe_conv_launch_lower(const cpe_conv_launch_spec *spec, const char *arch, const char *flavor,
                                         cpe_output *out, char *reason, size_t reason_len);

/* How a kernel argument of a launch plan is passed (the value text of the plan's
 * argument line in brackets):
 *   CPE_LAUNCH_ARG_VALUE   the integer `value` (byte counts, extents, ks, ks_count; [decimal])
 *   CPE_LAUNCH_ARG_BUFFER  a device pointer to the tensor named `tensor`: "x", "w", "d", "bias"
 *                          or "ws" (the split-K workspace, fp32) ["buffer <tensor>"]
 *   CPE_LAUNCH_ARG_UNUSED  the kernel never touches it: pass NULL / 0 ["unused"]
 *   CPE_LAUNCH_ARG_CALLER  an epilogue scalar the caller chooses: scale, clamp_lo, clamp_hi ["caller"]
 * The argument types (i32, i64, ptr addrspace(1), float) are conv_abi's (conv_abi.h). */
typedef enum cpe_launch_arg_kind {
    CPE_LAUNCH_ARG_VALUE = 0,
    CPE_LAUNCH_ARG_BUFFER = 1,
    CPE_LAUNCH_ARG_UNUSED = 2,
    CPE_LAUNCH_ARG_CALLER = 3
} cpe_launch_arg_kind;

/* One kernel argument, in ABI order: its name, how it is passed, the value
 * (VALUE only, else 0) and the tensor (BUFFER only, else NULL). */
typedef struct cpe_launch_arg {
    const char *name;
    cpe_launch_arg_kind kind;
    int64_t value;
    const char *tensor;
} cpe_launch_arg;

/* The launch plan as values: the same values as the plan text of
 * cpe_conv_launch_lower and as the Python engine's plan
 * (parity/runtime/plan.py LaunchPlan). Counts are exact (each below
 * 2^31 once admitted); sizes in bytes; grid in workgroups, block in work-items.
 * Strings and arrays are owned by the plan: release with cpe_conv_launch_plan_free. */
typedef struct cpe_conv_launch_plan {
    char *kernel;             /* the forward kernel's symbol name */
    char *variant;            /* conv_abi variant: "plain", "two_stage" or "cluster" */
    int64_t degree;           /* the split-K degree of this launch */
    int64_t ks;               /* K-slice length (a multiple of tile_k) */
    int64_t ks_count;         /* slices launched (grid z = groups * ks_count) */
    int64_t data_slices;      /* slices that carry data, ceil(Kgemm/ks) <= ks_count (cluster: may be < S) */
    int64_t grid[3];          /* workgroups in x, y, z */
    int64_t block[3];         /* work-items per workgroup in x, y, z */
    int64_t lds_bytes;        /* LDS bytes per workgroup */
    int64_t cluster[3];       /* workgroup cluster shape (1, 1, S); all 0 when not a cluster binary */
    int64_t workspace_bytes;  /* fp32 split-K workspace bytes (0: none) */
    int needs_stage2;         /* 1: launch the reduce kernel after the forward kernel */
    size_t num_args;          /* the forward kernel's arguments */
    cpe_launch_arg *args;
    size_t num_stage2_args;   /* the reduce kernel's arguments (0 unless needs_stage2) */
    cpe_launch_arg *stage2_args;
} cpe_conv_launch_plan;

/* The launch plan of an admitted spec as values. On CPE_OK *out holds it
 * (free with cpe_conv_launch_plan_free); otherwise *out is zeroed and the
 * reason is written like cpe_conv_launch_validate (CPE_INTERNAL_ERROR when
 * spec or out is NULL). */
CPE_API cpe_status cpe_conv_launch_lower_plan(const cpe_conv_launch_spec *spec, const char *arch, const char *flavor,
                                              cpe_conv_launch_plan *out, char *reason, size_t reason_len);

/* Frees everything a plan owns and zeroes it; NULL-safe. */
CPE_API void cpe_conv_launch_plan_free(cpe_conv_launch_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* CPP_ENGINE_CONV_LAUNCH_H */

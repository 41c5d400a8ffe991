/* ir_core.h -- C API of family `ir_core` (small kernels that exercise every
 * printer rule and every flavor-dependent line; see src/kernels/ir_core.h).
 *
 * Spec fields, in spec order:
 *   kernel  -- one of constants_f32, constants_f16, constants_bf16,
 *              constants_int, buffer_copy, lds_barrier, loop_phi, vector_ops,
 *              casts, workgroup_ids, float_field (UTF-8; NULL means JSON
 *              null and is rejected: "kernel must be one of ..., got null";
 *              the reason lists every kernel but float_field)
 *   threads -- work-items per workgroup: a multiple of the arch wave size
 *              (32 or 64) in wave_size..1024
 *   cluster -- 0 = off, else 1..16 workgroups per cluster along z
 *              (`amdgpu-cluster-dims`="1,1,cluster"); needs flavor llvm23
 *              (or its alias llvm24) and arch gfx1250
 *   value   -- any double but NaN ("value must not be NaN (the IR prints
 *              every NaN as the canonical NaN), got 0x7FF8000000000000", the
 *              bits as 0x + 16 hex digits); only kernel float_field uses it:
 *              it stores the value as a float (rounded to nearest even) at
 *              byte 0 and as a double at byte 8 of `out`, and its kernel name
 *              ends in _v0x<16 hex digits of the bits>
 *
 * Checks, in order (first failure is the reason): flavor known, arch known,
 * then the family rules kernel, threads, cluster range, cluster flavor,
 * cluster arch, value. Status and reason conventions: see cpp_engine.h.
 */
#ifndef CPP_ENGINE_IR_CORE_H
#define CPP_ENGINE_IR_CORE_H

#include "cpp_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cpe_ir_core_spec {
    const char *kernel; /* default "constants_f32" (static storage) */
    int64_t threads;    /* default 256 */
    int64_t cluster;    /* default 0 */
    double value;       /* default 0.0 */
} cpe_ir_core_spec;

/* The default spec. */
CPE_API cpe_ir_core_spec cpe_ir_core_spec_default(void);

/* CPE_OK if (spec, arch, flavor) would lower; else CPE_REJECTED with the first
 * failing rule's reason. A NULL spec, arch or flavor is CPE_INTERNAL_ERROR
 * (spec) or the unknown-arch/flavor rejection (arch, flavor). */
CPE_API cpe_status cpe_ir_core_validate(const cpe_ir_core_spec *spec, const char *arch, const char *flavor,
                                        char *reason, size_t reason_len);

/* Lower (spec, arch, flavor) to LLVM IR. On CPE_OK `out` receives the kernel
 * name and module text (free with cpe_output_free); on any other status
 * `out`'s fields are set NULL. */
CPE_API cpe_status cpe_ir_core_lower(const cpe_ir_core_spec *spec, const char *arch, const char *flavor,
                                     cpe_output *out, char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif /* CPP_ENGINE_IR_CORE_H */

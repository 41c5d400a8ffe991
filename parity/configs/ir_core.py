"""ir_core: small kernels that between them exercise every printer rule and
every flavor-dependent line (python_engine/kernels/ir_core.py)."""

from parity.config import Config, reject, reject_before_llvm23

FAMILY = "ir_core"

_KERNELS = ("constants_f32", "constants_f16", "constants_bf16", "constants_int", "buffer_copy",
            "lds_barrier", "loop_phi", "vector_ops", "casts", "workgroup_ids")
_CLUSTER_FLAVOR = "amdgpu-cluster-dims requires flavor llvm23"

CONFIGS = [Config(k, arch="gfx1250", spec={"kernel": k}) for k in _KERNELS] + [
    Config("lds_barrier_t64", arch="gfx1250", spec={"kernel": "lds_barrier", "threads": 64}),
    Config("loop_phi_t1024", arch="gfx1250", spec={"kernel": "loop_phi", "threads": 1024}),
    Config("lds_barrier_cluster4", arch="gfx1250", spec={"kernel": "lds_barrier", "cluster": 4},
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("workgroup_ids_cluster16", arch="gfx1250", spec={"kernel": "workgroup_ids", "cluster": 16},
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("casts_gfx1100", arch="gfx1100", spec={"kernel": "casts"}),
    # the buffer resource of every arch in the table (parity verify compares the
    # compiled descriptor words with the arch table; docs/targets.md)
    Config("buffer_copy_gfx1100", arch="gfx1100", spec={"kernel": "buffer_copy"}),
    Config("buffer_copy_gfx1201", arch="gfx1201", spec={"kernel": "buffer_copy"}),
    Config("buffer_copy_gfx942", arch="gfx942", spec={"kernel": "buffer_copy", "threads": 64}),
    Config("buffer_copy_gfx950", arch="gfx950", spec={"kernel": "buffer_copy", "threads": 64}),
    # must-reject
    Config("reject_cluster_gfx1100", arch="gfx1100", spec={"kernel": "lds_barrier", "cluster": 4},
           expect=reject("amdgpu-cluster-dims requires arch gfx1250"), per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("reject_cluster17", arch="gfx1250", spec={"kernel": "lds_barrier", "cluster": 17},
           expect=reject("cluster must be 0 (off) or 1..16, got 17")),
    Config("reject_threads48", arch="gfx1250", spec={"kernel": "loop_phi", "threads": 48},
           expect=reject("threads must be a multiple of the wave size 32 in 32..1024, got 48")),
    Config("reject_unknown_kernel", arch="gfx1250", spec={"kernel": "gemm"},
           expect=reject("kernel must be one of " + ", ".join(_KERNELS) + ", got 'gemm'")),
    Config("reject_null_kernel", arch="gfx1250", spec={"kernel": None},
           expect=reject("kernel must be one of " + ", ".join(_KERNELS) + ", got null")),
    Config("reject_unknown_arch", arch="gfx9000", spec={"kernel": "casts"},
           expect=reject("arch 'gfx9000' is not one of gfx1250, gfx942, gfx950, gfx1100, gfx1201")),
]

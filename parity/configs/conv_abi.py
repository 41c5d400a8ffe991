"""conv_abi: the conv kernels' argument lists as text
(python_engine/families/conv_abi.py, docs/families.md)."""

from parity.config import Config, reject, reject_before_llvm23

FAMILY = "conv_abi"
OUTPUT = "text"  # lower() returns text, not an LLVM module: parity verify skips it
NUMERICS_OPT_OUT = ("text family (argument lists): no IR to run; the conv_implicit_gemm plan launches with these lists")

CONFIGS = [
    Config("fwd_plain", arch="gfx1250", spec={"variant": "plain"}),
    Config("fwd_two_stage", arch="gfx1250", spec={"variant": "two_stage"}),
    Config("fwd_cluster", arch="gfx1250", spec={"variant": "cluster"},
           per_flavor=reject_before_llvm23("variant cluster requires flavor llvm23")),
    Config("fwd_reduce", arch="gfx1250", spec={"variant": "reduce"}),
    Config("defaults", arch="gfx1250", spec={}),
    # the fused Stage 2's arguments after ks_count (issue 36)
    Config("fwd_reduce_bias", arch="gfx1250", spec={"variant": "reduce", "acc_epilogue": "bias"}),
    Config("fwd_reduce_scale", arch="gfx1250", spec={"variant": "reduce", "acc_epilogue": "scale"}),
    Config("fwd_reduce_relu", arch="gfx1250", spec={"variant": "reduce", "acc_epilogue": "relu"}),
    Config("fwd_reduce_clamp", arch="gfx1250", spec={"variant": "reduce", "acc_epilogue": "clamp"}),
    Config("fwd_reduce_bias_relu", arch="gfx1250", spec={"variant": "reduce", "acc_epilogue": "bias_relu"}),
    Config("fwd_reduce_bias_clamp", arch="gfx1250", spec={"variant": "reduce", "acc_epilogue": "bias_clamp"}),
    Config("fwd_reduce_identity", arch="gfx1250", spec={"variant": "reduce", "acc_epilogue": "identity"}),
    Config("reject_acc_epilogue_plain", arch="gfx1250", spec={"variant": "plain", "acc_epilogue": "bias"},
           expect=reject("acc_epilogue 'bias' applies to variant reduce only (the forward kernels take every "
                         "epilogue argument)")),
    Config("reject_acc_epilogue_gelu", arch="gfx1250", spec={"variant": "reduce", "acc_epilogue": "gelu"},
           expect=reject("acc_epilogue must be identity, bias, scale, relu, clamp, bias_relu or bias_clamp, got 'gelu'")),
    Config("reject_bwd_data", arch="gfx1250", spec={"direction": "bwd_data", "variant": "two_stage"},
           expect=reject("direction 'bwd_data' has no kernels (only fwd is implemented)")),
    Config("reject_bwd_weight", arch="gfx1250", spec={"direction": "bwd_weight"},
           expect=reject("direction 'bwd_weight' has no kernels (only fwd is implemented)")),
    Config("reject_direction_bwd", arch="gfx1250", spec={"direction": "bwd"},
           expect=reject("direction must be fwd, bwd_data or bwd_weight, got 'bwd'")),
    Config("reject_direction_null", arch="gfx1250", spec={"direction": None},
           expect=reject("direction must be fwd, bwd_data or bwd_weight, got null")),
    Config("reject_variant_split", arch="gfx1250", spec={"variant": "split"},
           expect=reject("variant must be plain, two_stage, cluster or reduce, got 'split'")),
    Config("reject_variant_null", arch="gfx1250", spec={"variant": None},
           expect=reject("variant must be plain, two_stage, cluster or reduce, got null")),
    Config("reject_3d", arch="gfx1250", spec={"spatial_dims": 3, "variant": "two_stage"},
           expect=reject("spatial_dims 3 (3-D convolution) has no kernels (only 2-D is implemented)")),
    Config("reject_1d", arch="gfx1250", spec={"spatial_dims": 1},
           expect=reject("spatial_dims must be 2 or 3, got 1")),
    Config("reject_0d", arch="gfx1250", spec={"spatial_dims": 0},
           expect=reject("spatial_dims must be 2 or 3, got 0")),
    Config("reject_gfx950", arch="gfx950", spec={"variant": "two_stage"},
           expect=reject("arch gfx950 has no conv kernels (requires gfx1250)")),
    Config("reject_gfx1100_reduce", arch="gfx1100", spec={"variant": "reduce"},
           expect=reject("arch gfx1100 has no conv kernels (requires gfx1250)")),
    Config("reject_unknown_field", arch="gfx1250", spec={"split_k": 4},
           expect=reject("spec field 'split_k' is not a field of family 'conv_abi'")),
    Config("reject_spatial_dims_str", arch="gfx1250", spec={"spatial_dims": "2"},
           expect=reject("spec field 'spatial_dims' must be an integer")),
]

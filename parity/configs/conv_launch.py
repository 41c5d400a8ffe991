"""conv_launch: admission and launch plan of a conv_implicit_gemm binary for a
(problem, degree) (python_engine/families/conv_launch.py, docs/conv_launch.md).

A config is binary x problem x degree. Problems: strided, dilated, padded,
grouped, depthwise, 1x1, patch embedding (16x16 stride 16), a small-output
layer with a long reduction (the split-K case); then the admission boundaries
(K = 6 for a cluster binary, cluster launches with trailing empty slices and
the workspace / grid z they still count, a workspace just under / at / over
2^31 bytes, grid z at 65535 / 65536, ...)."""

from parity.config import Config, reject, reject_before_llvm23

FAMILY = "conv_launch"
OUTPUT = "text"  # lower() returns text, not an LLVM module: parity verify skips it
NUMERICS_OPT_OUT = ("text family (launch plans): no IR to run; every conv_implicit_gemm numerics case launches by this family's plan")

CLUSTER_FLAVOR = "split_k_cluster requires flavor llvm23"

# Binaries (conv_implicit_gemm spec fields).
PLAIN = {}
PLAIN_CSH = {"epilogue": "cshuffle"}
PLAIN_WAVELET_BIAS = {"pipeline": "wavelet", "num_load_waves": 2, "epilogue": "cshuffle", "acc_epilogue": "bias"}
PLAIN_FP16_RELU = {"dtype": "fp16", "tile_m": 128, "tile_n": 64, "acc_epilogue": "relu"}
PLAIN_CLAMP_SCALE_V1 = {"acc_epilogue": "clamp", "vector_a": 1, "vector_b": 1}
SPK = {"split_k": 2, "split_k_cluster": 0}
SPK_CSH = {"split_k": 2, "split_k_cluster": 0, "epilogue": "cshuffle"}
SPK_WAVELET = {"split_k": 2, "split_k_cluster": 0, "pipeline": "wavelet", "num_load_waves": 1, "epilogue": "cshuffle"}
SPK_K64 = {"split_k": 2, "split_k_cluster": 0, "tile_k": 64, "epilogue": "cshuffle"}


def skc(s, **kw):
    return dict({"split_k": 2, "split_k_cluster": s, "epilogue": "cshuffle"}, **kw)


# Problems (ConvProblem fields).
RESNET_3X3 = {"N": 1, "C": 64, "H": 56, "W": 56, "K": 64, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1}
STRIDED = {"N": 2, "C": 64, "H": 56, "W": 56, "K": 128, "Y": 3, "X": 3, "stride_h": 2, "stride_w": 2,
           "pad_h": 1, "pad_w": 1}
DILATED = {"N": 1, "C": 64, "H": 33, "W": 29, "K": 96, "Y": 3, "X": 3, "dil_h": 2, "dil_w": 3,
           "pad_h": 2, "pad_w": 3}
PADDED = {"N": 3, "C": 32, "H": 17, "W": 23, "K": 48, "Y": 5, "X": 3, "pad_h": 2, "pad_w": 0}
GROUPED = {"N": 2, "C": 128, "H": 28, "W": 28, "K": 256, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1, "groups": 4}
DEPTHWISE8 = {"N": 1, "C": 256, "H": 14, "W": 14, "K": 256, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1,
              "groups": 32}
ONE_BY_ONE = {"N": 4, "C": 256, "H": 14, "W": 14, "K": 512, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0}
PATCH16 = {"N": 2, "C": 3, "H": 224, "W": 224, "K": 768, "Y": 16, "X": 16, "stride_h": 16, "stride_w": 16,
           "pad_h": 0, "pad_w": 0}
PATCH16_C8 = dict(PATCH16, C=8)
SMALL_OUT = {"N": 1, "C": 512, "H": 7, "W": 7, "K": 512, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1}
SMALL_OUT_G2 = dict(SMALL_OUT, groups=2)


def cfg(name, binary, problem, degree=1, **kw):
    return Config(name, arch="gfx1250", spec=dict(binary, **problem, degree=degree), **kw)


def cluster_cfg(name, binary, problem, degree, **kw):
    return cfg(name, binary, problem, degree, per_flavor=reject_before_llvm23(CLUSTER_FLAVOR), **kw)


CONFIGS = [
    Config("defaults", arch="gfx1250", spec={}),
    # -- plain binaries over the problem kinds
    cfg("plain_resnet3x3", PLAIN, RESNET_3X3),
    cfg("plain_cshuffle_strided", PLAIN_CSH, STRIDED),
    cfg("plain_dilated", PLAIN, DILATED),
    cfg("plain_cshuffle_padded", PLAIN_CSH, PADDED),
    cfg("plain_cshuffle_grouped", PLAIN_CSH, GROUPED),
    cfg("plain_depthwise8", PLAIN, DEPTHWISE8),
    cfg("plain_1x1", PLAIN, ONE_BY_ONE),
    cfg("plain_wavelet_bias_1x1", PLAIN_WAVELET_BIAS, ONE_BY_ONE),
    cfg("plain_fp16_relu_strided", PLAIN_FP16_RELU, STRIDED),
    cfg("plain_clamp_v1_patch16", PLAIN_CLAMP_SCALE_V1, PATCH16),
    cfg("plain_patch16_c8", PLAIN, PATCH16_C8),
    # -- two-stage binaries, degrees 2, 4, 8, 32 (ks_count can come out below the degree)
    cfg("spk_small_out_d2", SPK, SMALL_OUT, 2),
    cfg("spk_small_out_d4", SPK, SMALL_OUT, 4),
    cfg("spk_cshuffle_small_out_d8", SPK_CSH, SMALL_OUT, 8),
    cfg("spk_wavelet_small_out_d32", SPK_WAVELET, SMALL_OUT, 32),
    cfg("spk_k64_small_out_d32", SPK_K64, SMALL_OUT, 32),
    cfg("spk_small_out_d1", SPK, SMALL_OUT, 1),
    cfg("spk_grouped_d4", SPK_CSH, GROUPED, 4),
    cfg("spk_small_out_g2_d8", SPK, SMALL_OUT_G2, 8),
    cfg("spk_strided_d3", SPK, STRIDED, 3),
    cfg("spk_dilated_d4", SPK, DILATED, 4),
    cfg("spk_1x1_d8", SPK, ONE_BY_ONE, 8),
    cfg("spk_1x1_d1000", SPK, ONE_BY_ONE, 1000),
    cfg("spk_patch16_c8_d16", SPK, PATCH16_C8, 16),
    # -- cluster binaries (compared at llvm23, rejected by the binary's rule before)
    cluster_cfg("skc4_small_out", skc(4), SMALL_OUT, 4),
    cluster_cfg("skc8_small_out", skc(8), SMALL_OUT, 8),
    cluster_cfg("skc12_small_out", skc(12), SMALL_OUT, 12),
    cluster_cfg("skc15_small_out", skc(15), SMALL_OUT, 15),
    cluster_cfg("skc4_default_grouped", skc(4, epilogue="default"), dict(GROUPED, C=256), 4),
    # a cluster launches ks_count = S; trailing slices past Kgemm are empty (zero slabs)
    cluster_cfg("skc4_grouped_3_of_4_slices", skc(4, epilogue="default"), GROUPED, 4),
    cluster_cfg("skc2_resnet3x3", skc(2), RESNET_3X3, 2),
    cluster_cfg("skc8_tile128x64", skc(8, tile_m=128), SMALL_OUT_G2, 8),
    # -- admission boundaries
    cluster_cfg("reject_cluster_k6", skc(4, epilogue="default"), dict(SMALL_OUT, K=6), 4,
                expect=reject("the cluster fold stores 4 output channels per vector: kpg and K must be "
                              "multiples of 4, got kpg 6, K 6")),
    cluster_cfg("cluster_k8_g2_kpg4", skc(4, epilogue="default"), dict(SMALL_OUT, K=8, groups=2), 4),
    cluster_cfg("reject_cluster_k12_g2_kpg6", skc(4, epilogue="default"), dict(SMALL_OUT, K=12, groups=2), 4,
                expect=reject("the cluster fold stores 4 output channels per vector: kpg and K must be "
                              "multiples of 4, got kpg 6, K 12")),
    cfg("reject_cshuffle_k6", PLAIN_CSH, dict(SMALL_OUT, K=6),
        expect=reject("the cshuffle epilogue stores 4 output channels per vector: kpg and K must be "
                      "multiples of 4, got kpg 6, K 6")),
    cfg("default_epilogue_k6", PLAIN, dict(SMALL_OUT, K=6)),
    # cluster slices: ks_count = S with trailing empty slices (formerly rejected: ks_count != S)
    cluster_cfg("skc4_1x1_c64_2_of_4_slices", skc(4), dict(ONE_BY_ONE, C=64), 4),
    cluster_cfg("skc15_7x7_pad6_13_of_15_slices", skc(15, tile_k=64),
                {"N": 1, "C": 64, "H": 5, "W": 5, "K": 64, "Y": 7, "X": 7, "pad_h": 6, "pad_w": 6}, 15),
    cluster_cfg("skc15_kgemm_under_tile_1_of_15_slices", skc(15, tile_k=64), dict(ONE_BY_ONE, C=16), 15),
    # ... the empty slices still count: workspace S*M*K*4 bytes and grid z = groups*S
    cluster_cfg("skc4_ws_just_under_2g_2_of_4_slices", skc(4),
                {"N": 1, "C": 64, "H": 2048, "W": 1023, "K": 64, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0}, 4),
    cluster_cfg("reject_skc4_ws_2g_2_of_4_slices", skc(4),
                {"N": 1, "C": 64, "H": 2048, "W": 1024, "K": 64, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0}, 4,
                expect=reject("ws_bytes = 2147483648 must be below 2^31 (the kernel's buffer offsets are "
                              "32-bit)")),
    cluster_cfg("skc15_grid_z_65535_1_of_15_slices", skc(15),
                {"N": 1, "C": 34952, "H": 2, "W": 2, "K": 17476, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0,
                 "groups": 4369}, 15),
    cluster_cfg("reject_skc15_grid_z_1_of_15_slices", skc(15),
                {"N": 1, "C": 34960, "H": 2, "W": 2, "K": 17480, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0,
                 "groups": 4370}, 15,
                expect=reject("grid z = 65550 (groups * ks_count) exceeds the HIP limit 65535")),
    # workspace = ks_count * M * K * 4 bytes; 1x1, C = K = 64, degree 2 -> ks_count 2
    cfg("ws_just_under_2g", SPK, {"N": 1, "C": 64, "H": 2048, "W": 2047, "K": 64, "Y": 1, "X": 1,
                                  "pad_h": 0, "pad_w": 0}, 2),
    cfg("reject_ws_exactly_2g", SPK, {"N": 1, "C": 64, "H": 2048, "W": 2048, "K": 64, "Y": 1, "X": 1,
                                      "pad_h": 0, "pad_w": 0}, 2,
        expect=reject("ws_bytes = 2147483648 must be below 2^31 (the kernel's buffer offsets are 32-bit)")),
    cfg("reject_ws_just_over_2g", SPK, {"N": 1, "C": 64, "H": 2048, "W": 2049, "K": 64, "Y": 1, "X": 1,
                                        "pad_h": 0, "pad_w": 0}, 2,
        expect=reject("ws_bytes = 2148532224 must be below 2^31 (the kernel's buffer offsets are 32-bit)")),
    cfg("plain_same_problem_as_ws_over", PLAIN, {"N": 1, "C": 64, "H": 2048, "W": 2049, "K": 64, "Y": 1,
                                                 "X": 1, "pad_h": 0, "pad_w": 0}),
    cfg("reject_x_bytes_2g", PLAIN, {"N": 1, "C": 64, "H": 4096, "W": 4096, "K": 64, "Y": 1, "X": 1,
                                     "pad_h": 0, "pad_w": 0},
        expect=reject("x_bytes = 2147483648 must be below 2^31 (the kernel's buffer offsets are 32-bit)")),
    cfg("reject_w_bytes_2g", PLAIN, {"N": 1, "C": 8192, "H": 64, "W": 64, "K": 8192, "Y": 4, "X": 4,
                                     "pad_h": 0, "pad_w": 0},
        expect=reject("w_bytes = 2147483648 must be below 2^31 (the kernel's buffer offsets are 32-bit)")),
    cfg("reject_bias_bytes", {"acc_epilogue": "bias", "vector_a": 1, "vector_b": 1},
        {"N": 1, "C": 1, "H": 1, "W": 1, "K": 536870912, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0},
        expect=reject("bias_bytes = 2147483648 must be below 2^31 (the kernel's buffer offsets are 32-bit)")),
    # grid z = groups * ks_count: depthwise with one channel per group
    cfg("grid_z_65535", {"vector_a": 1, "vector_b": 1},
        {"N": 1, "C": 65535, "H": 4, "W": 4, "K": 65535, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0,
         "groups": 65535}),
    cfg("reject_grid_z_65536", {"vector_a": 1, "vector_b": 1},
        {"N": 1, "C": 65536, "H": 4, "W": 4, "K": 65536, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0,
         "groups": 65536},
        expect=reject("grid z = 65536 (groups * ks_count) exceeds the HIP limit 65535")),
    cfg("reject_grid_z_spk", {"split_k": 2, "split_k_cluster": 0, "vector_a": 1, "vector_b": 1},
        {"N": 1, "C": 196608, "H": 4, "W": 4, "K": 196608, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1,
         "groups": 24576}, 32,
        expect=reject("grid z = 73728 (groups * ks_count) exceeds the HIP limit 65535")),
    cfg("grid_z_plain_same_problem", {"vector_a": 1, "vector_b": 1},
        {"N": 1, "C": 196608, "H": 4, "W": 4, "K": 196608, "Y": 3, "X": 3, "pad_h": 1, "pad_w": 1,
         "groups": 24576}),
    cfg("reject_grid_y", {"tile_n": 16, "waves_n": 1, "vector_a": 1, "vector_b": 1},
        {"N": 1, "C": 1, "H": 1, "W": 1, "K": 1048592, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0},
        expect=reject("grid y = 65537 exceeds the HIP limit 65535")),
    cfg("reject_grid_x_aql", {"tile_m": 16, "tile_n": 512, "waves_m": 1, "waves_n": 32,
                              "vector_a": 1, "vector_b": 1},
        {"N": 1, "C": 1, "H": 8192, "W": 8192, "K": 1, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0},
        expect=reject("grid x * block = 4294967296 work-items exceeds the 32-bit AQL grid size 4294967295")),
    # vector widths must divide the channels per group
    cfg("reject_patch16_c3_va8", PLAIN, PATCH16,
        expect=reject("vector_a 8 must divide the channels per group cpg 3")),
    cfg("reject_patch16_c3_vb8", {"vector_a": 1}, PATCH16,
        expect=reject("vector_b 8 must divide the channels per group cpg 3")),
    cfg("reject_grouped_cpg4_va8", PLAIN, dict(GROUPED, C=16),
        expect=reject("vector_a 8 must divide the channels per group cpg 4")),
    cfg("grouped_cpg4_va4_vb4", {"vector_a": 4, "vector_b": 4}, dict(GROUPED, C=16)),
    # degree
    cfg("reject_plain_degree4", PLAIN, SMALL_OUT, 4,
        expect=reject("the plain binary (split_k = 1) launches with degree 1, got 4")),
    cluster_cfg("reject_cluster_degree8", skc(4), SMALL_OUT, 8,
                expect=reject("the cluster binary (split_k_cluster = 4) launches with degree 4, got 8")),
    cfg("reject_degree0", SPK, SMALL_OUT, 0,
        expect=reject("degree must be >= 1 (the split-K degree of this launch), got 0")),
    cfg("reject_degree_auto", SPK, SMALL_OUT, -1,
        expect=reject("degree must be >= 1 (the split-K degree of this launch), got -1")),
    # the problem itself
    cfg("reject_n0", PLAIN, dict(RESNET_3X3, N=0),
        expect=reject("problem field N must be in 1..2147483647, got 0")),
    cfg("reject_pad_neg", PLAIN, dict(RESNET_3X3, pad_w=-1),
        expect=reject("problem field pad_w must be in 0..2147483647, got -1")),
    cfg("reject_h_2g", PLAIN, dict(RESNET_3X3, H=2147483648),
        expect=reject("problem field H must be in 1..2147483647, got 2147483648")),
    cfg("reject_stride0", PLAIN, dict(RESNET_3X3, stride_h=0),
        expect=reject("problem field stride_h must be in 1..2147483647, got 0")),
    cfg("reject_groups3", PLAIN, dict(RESNET_3X3, groups=3),
        expect=reject("groups 3 must divide C 64 and K 64")),
    cfg("reject_filter_too_big", PLAIN, dict(RESNET_3X3, H=4, W=4, Y=3, X=3, dil_h=3, pad_h=0),
        expect=reject("the dilated filter 7x3 does not fit the padded input 4x6")),
    cfg("reject_m_i32", {"vector_a": 1, "vector_b": 1},
        {"N": 1048576, "C": 1, "H": 64, "W": 64, "K": 1, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0},
        expect=reject("kernel argument M = 4294967296 exceeds the i32 range (max 2147483647)")),
    cfg("reject_ho_i32", {"vector_a": 1, "vector_b": 1},
        {"N": 1, "C": 1, "H": 2147483647, "W": 1, "K": 1, "Y": 1, "X": 1, "pad_h": 1, "pad_w": 0},
        expect=reject("kernel argument Ho = 2147483649 exceeds the i32 range (max 2147483647)")),
    # the binary must itself validate (conv_implicit_gemm's reason)
    cfg("reject_binary_split_k_auto", {"split_k": -1, "split_k_cluster": 0}, SMALL_OUT, 4,
        expect=reject("degree must be left at 1 when split_k = -1 (the policy picks it), got 4")),
    # split_k = -1 (auto) is resolved for the problem before validation (docs/policy.md)
    cfg("auto_small_out", {"split_k": -1, "split_k_cluster": 0}, SMALL_OUT),
    cfg("auto_cshuffle_small_out", {"split_k": -1, "split_k_cluster": 0, "epilogue": "cshuffle"}, SMALL_OUT),
    cfg("auto_resnet3x3", {"split_k": -1, "split_k_cluster": 0}, RESNET_3X3),
    cfg("auto_pointwise_plain", {"split_k": -1, "split_k_cluster": 0}, ONE_BY_ONE),
    cfg("auto_bias_plain", {"split_k": -1, "split_k_cluster": 0, "acc_epilogue": "bias"}, SMALL_OUT),
    cfg("auto_patch16_c8_plain", {"split_k": -1, "split_k_cluster": 0}, PATCH16_C8),
    cluster_cfg("auto_cluster_s4", skc(4, split_k=-1), SMALL_OUT, 1),
    # the explicit cluster request on a pointwise problem is rejected with the cluster reason before
    # llvm23 (never resolved to the plain binary); at llvm23 the pointwise rule resolves it to split_k 1,
    # which the cluster binary refuses
    cluster_cfg("auto_cluster_s4_pointwise", skc(4, split_k=-1), ONE_BY_ONE, 1,
                expect=reject("split_k_cluster requires split_k > 1 (the two-stage ABI)")),
    Config("reject_auto_gfx950", arch="gfx950", spec=dict(SMALL_OUT, split_k=-1, split_k_cluster=0),
           expect=reject("arch gfx950 has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)")),
    cfg("reject_auto_groups3", {"split_k": -1, "split_k_cluster": 0}, dict(RESNET_3X3, groups=3),
        expect=reject("groups 3 must divide C 64 and K 64")),
    # fused split-K (issue 36): Stage 2 / the cluster fold carry the epilogue's arguments
    cfg("binary_spk_bias", {"split_k": 4, "split_k_cluster": 0, "acc_epilogue": "bias"}, SMALL_OUT, 4),
    cfg("binary_spk_scale", {"split_k": 4, "split_k_cluster": 0, "acc_epilogue": "scale"}, SMALL_OUT, 4),
    cfg("binary_spk_relu", {"split_k": 4, "split_k_cluster": 0, "acc_epilogue": "relu"}, SMALL_OUT, 4),
    cfg("binary_spk_clamp", {"split_k": 4, "split_k_cluster": 0, "acc_epilogue": "clamp"}, SMALL_OUT, 4),
    cluster_cfg("binary_skc4_bias", skc(4, acc_epilogue="bias"), SMALL_OUT, 4),
    cluster_cfg("binary_skc4_clamp", skc(4, acc_epilogue="clamp"), SMALL_OUT, 4),
    # bias then an activation (MIOpen -F 4 -m 3 / -m 7): bias and clamp arguments together
    cfg("plain_bias_clamp_resnet", {"acc_epilogue": "bias_clamp"}, RESNET_3X3),
    cfg("binary_spk_bias_relu", {"split_k": 4, "split_k_cluster": 0, "acc_epilogue": "bias_relu"}, SMALL_OUT, 4),
    cfg("binary_spk_bias_clamp", {"split_k": 4, "split_k_cluster": 0, "acc_epilogue": "bias_clamp"}, SMALL_OUT, 4),
    cluster_cfg("binary_skc4_bias_relu", skc(4, acc_epilogue="bias_relu"), SMALL_OUT, 4),
    # the seed keeps the reference rule: an auto fused layer resolves to 1 (docs/policy.md)
    cfg("auto_clamp_plain", {"split_k": -1, "split_k_cluster": 0, "acc_epilogue": "clamp"}, SMALL_OUT),
    cfg("reject_binary_tile_k16", {"tile_k": 16}, SMALL_OUT,
        expect=reject("tile must be a multiple of the WMMA shape 16x16x32 (tile_m, tile_n multiples of 16, "
                      "tile_k a multiple of 32, each at most 1024), got 64x64x16")),
    cfg("reject_binary_cluster_wavelet", skc(4, pipeline="wavelet"), SMALL_OUT, 4,
        per_flavor=reject_before_llvm23(CLUSTER_FLAVOR),
        expect=reject("split_k_cluster requires the mem pipeline")),
    Config("reject_binary_gfx950", arch="gfx950", spec=dict(SPK, **SMALL_OUT, degree=2),
           expect=reject("arch gfx950 has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)")),
    cfg("reject_binary_dtype_null", {"dtype": None}, SMALL_OUT,
        expect=reject("dtype must be bf16 or fp16, got null")),
    Config("reject_unknown_field", arch="gfx1250", spec={"Z": 3},
           expect=reject("spec field 'Z' is not a field of family 'conv_launch'")),
]

# -- the small-channel path (padded-pixel vector_a = vector_b = cpg in 3, 5, 6, 7):
# the K loop runs over Y*X*pixel_slot(v), so ks is sliced in that padded reduction
STEM = {"N": 1, "C": 3, "H": 224, "W": 224, "K": 64, "Y": 7, "X": 7, "stride_h": 2, "stride_w": 2,
        "pad_h": 3, "pad_w": 3}
CONFIGS += [
    cfg("plain_stem_va3", {"vector_a": 3, "vector_b": 3}, STEM),
    cfg("spk4_stem_va3", {"split_k": 4, "split_k_cluster": 0, "vector_a": 3, "vector_b": 3, "epilogue": "cshuffle"},
        STEM, 4),
    cfg("plain_c6_groups2_va6", {"vector_a": 6, "vector_b": 6}, dict(STEM, C=12, K=64, groups=2)),
    cfg("reject_va3_cpg6", {"vector_a": 3, "vector_b": 3}, dict(STEM, C=6),
        expect=reject("vector_a 3 loads one padded pixel of 3 channels: it needs cpg = 3, got cpg 6")),
    cfg("reject_va3_cpg1", {"vector_a": 3, "vector_b": 3}, dict(STEM, C=3, groups=3, K=63),
        expect=reject("vector_a 3 loads one padded pixel of 3 channels: it needs cpg = 3, got cpg 1")),
]

"""split_k_policy: both engines' split-K decisions over a grid of problems
(python_engine/policy/, docs/policy.md). Text, not LLVM IR: the width fold,
the resolved degree and the rule that decided it, the selected binary with
its KernelIdentity hash and label, the launch degree and admission, the
reduce kernel, AOT membership.

Problems: ResNet-50 layers (He et al. 2015, table 1) at batch 1 (small
outputs that split) and batch 32 (big grids that do not), pointwise layers,
short reductions, fused epilogues (resolve to the plain kernel), other
arches, cluster specs and cluster launches with trailing empty slices,
real-CU-count overrides, the gridDim.z and workspace
limits, patch embeddings that fold, the reference's documented outcomes
(``doc_*``: 16, 8, 4, 4, fused 1, other arches 1 at the 16x16x32 tile) and
the problem rules."""

from parity.config import Config, reject

FAMILY = "split_k_policy"
OUTPUT = "text"  # lower() returns text, not an LLVM module: parity verify skips it
NUMERICS_OPT_OUT = ("text family (degree decisions): no IR to run; parity layers emulates the kernels it selects")


def prob(N, C, H, K, Y, stride=1, pad=None, W=None, groups=1, **kw):
    pad = (Y // 2) if pad is None else pad
    return dict({"N": N, "C": C, "H": H, "W": H if W is None else W, "K": K, "Y": Y, "X": Y,
                 "stride_h": stride, "stride_w": stride, "pad_h": pad, "pad_w": pad, "groups": groups}, **kw)


# ResNet-50 (He et al. 2015, table 1; stride 2 on the first 1x1 of conv3_1/4_1/5_1 as in the paper)
def resnet(N):
    return {
        "conv1": prob(N, 3, 224, 64, 7, stride=2, pad=3),
        "conv2_3x3": prob(N, 64, 56, 64, 3),
        "conv2_1x1_reduce": prob(N, 256, 56, 64, 1),
        "conv3_3x3": prob(N, 128, 28, 128, 3),
        "conv3_1x1_s2": prob(N, 256, 56, 128, 1, stride=2),
        "conv4_3x3": prob(N, 256, 14, 256, 3),
        "conv4_1x1_expand": prob(N, 256, 14, 1024, 1),
        "conv5_3x3": prob(N, 512, 7, 512, 3),
        "conv5_1x1_expand": prob(N, 512, 7, 2048, 1),
    }


def cfg(name, problem, arch="gfx1250", expect=None, **spec):
    kw = {"expect": expect} if expect is not None else {}
    if "split_k" in spec or "split_k_cluster" in spec:
        # a spec gives both split-K fields or neither (spec_front.SPLIT_K_FIELDS): the family's defaults
        spec = dict({"split_k": -1, "split_k_cluster": 0}, **spec)
    return Config(name, arch=arch, spec=dict(problem, **spec), **kw)


SMALL = prob(1, 512, 7, 512, 3)          # 7x7x512 3x3: 8 tiles, Kgemm 4608
SHORT = prob(1, 16, 7, 64, 3)            # Kgemm 144
VIT_PATCH = prob(1, 3, 224, 768, 16, stride=16, pad=0)      # ViT-B/16 patch embedding (Dosovitskiy et al. 2020)
SWIN_PATCH = prob(1, 3, 224, 96, 4, stride=4, pad=0)        # Swin-T 4x4 patch embedding (Liu et al. 2021)
DOWN2 = prob(1, 64, 56, 128, 2, stride=2, pad=0)            # a 2x2 stride-2 downsampling conv
SMALL_7X7_PAD6 = prob(1, 64, 5, 64, 7, pad=6)  # 2 tiles, Kgemm 3136: no S in 4..15 divides it into 64-aligned slices
GROUPED_PATCH = prob(1, 8, 32, 16, 4, stride=4, pad=0, groups=2)  # grouped: does not fold

# The reference's outcomes (docs/policy.md "Reproducing the reference's outcomes"): at the 16x16x32 tile
TILE16 = dict(tile_m=16, tile_n=16, tile_k=32, waves_m=1, waves_n=1)
DOC_K10 = prob(1, 64, 8, 10, 3)                # K = 10: M 64, Kgemm 576 (18 K tiles): rule slice, 8
DOC_KPG6 = prob(1, 128, 48, 12, 3, groups=2)   # kpg = 6: 144 x 1 x 2 = 288 tiles: rule target, 4
DOC_IDENTITY = prob(1, 64, 32, 128, 3)         # 32x32x64 -> 128: 64 x 8 = 512 tiles: rule target, 4

CONFIGS = [Config("defaults", arch="gfx1250", spec={})]
for n in (1, 32):
    for lname, p in resnet(n).items():
        CONFIGS.append(cfg(f"resnet50_b{n}_{lname}", p))
CONFIGS += [
    # tiles and epilogues of the binary (split_k -1 unless said)
    cfg("small_tile16x32", SMALL, tile_m=16, tile_n=32, waves_m=1, waves_n=2),
    cfg("small_tile128x128_k64_cshuffle", SMALL, tile_m=128, tile_n=128, tile_k=64, epilogue="cshuffle"),
    cfg("small_tile32x32_fp16", SMALL, dtype="fp16", tile_m=32, tile_n=32, waves_m=2, waves_n=2),
    cfg("small_tile48x48_no_cluster_tile", SMALL, tile_m=48, tile_n=48, waves_m=1, waves_n=1),
    cfg("small_wavelet", SMALL, pipeline="wavelet"),
    cfg("short_reduction", SHORT),
    cfg("small_k6_no_cluster", prob(1, 512, 7, 6, 3), vector_a=8, vector_b=8),
    # fused epilogues resolve to 1 and build the plain kernel
    cfg("fused_bias", SMALL, acc_epilogue="bias"),
    cfg("fused_scale", SMALL, acc_epilogue="scale"),
    cfg("fused_relu", SMALL, acc_epilogue="relu"),
    cfg("fused_clamp", SMALL, acc_epilogue="clamp"),
    cfg("fused_bias_relu", SMALL, acc_epilogue="bias_relu"),
    cfg("fused_bias_clamp", SMALL, acc_epilogue="bias_clamp"),
    # other arches resolve to 1 (no split form)
    cfg("arch_gfx950", SMALL, arch="gfx950"),
    cfg("arch_gfx942", SMALL, arch="gfx942"),
    cfg("arch_gfx1100", SMALL, arch="gfx1100"),
    cfg("arch_gfx1201", SMALL, arch="gfx1201"),
    # given degrees and cluster specs
    cfg("given_split_k1", SMALL, split_k=1),
    cfg("given_split_k4", SMALL, split_k=4),
    cfg("given_split_k0", SMALL, split_k=0),
    cfg("cluster_spec_s4_auto", SMALL, split_k_cluster=4, epilogue="cshuffle"),
    cfg("cluster_spec_s8_given", SMALL, split_k=8, split_k_cluster=8, epilogue="cshuffle"),
    # an explicit cluster request under split_k = -1 where the flavor has no clusters is rejected with
    # the cluster reason (binary none), never built plain -- also on a pointwise or short problem
    cfg("cluster_spec_s4_auto_pointwise", prob(1, 256, 14, 512, 1, pad=0), split_k_cluster=4,
        epilogue="cshuffle"),
    cfg("cluster_spec_s4_auto_short", SHORT, split_k_cluster=4, epilogue="cshuffle"),
    # cluster launches with trailing empty slices (ks_count = S, ceil(Kgemm/ks) < S): the offered S is
    # the shortest slice ks, then the smallest S (resnet50_b1_conv4_3x3: S 12 and 15 tie at ks 192)
    cfg("cluster_7x7_pad6_13_of_15_slices", SMALL_7X7_PAD6),
    cfg("cluster_spec_s15_7x7_pad6_14_of_15_slices", SMALL_7X7_PAD6, split_k_cluster=15, epilogue="cshuffle"),
    # the device's real CU count
    cfg("cus1_small", SMALL, cus=1),
    cfg("cus16_conv4", resnet(1)["conv4_3x3"], cus=16),
    cfg("cus304_conv3", resnet(1)["conv3_3x3"], cus=304),
    cfg("cus8_conv2_b1", resnet(1)["conv2_3x3"], cus=8),
    # the gridDim.z budget and the workspace limit
    cfg("grid_z_budget", prob(1, 32768 * 64, 4, 32768, 3, groups=32768), cus=65536, vector_a=8, vector_b=8),
    cfg("workspace_limit", prob(128, 256, 32, 256, 3), cus=65536, tile_m=128, tile_n=128),
    # width folding
    cfg("fold_vit_patch16", VIT_PATCH),
    cfg("fold_swin_patch4", SWIN_PATCH),
    cfg("fold_down2x2", DOWN2),
    cfg("fold_grouped_none", GROUPED_PATCH, vector_a=4, vector_b=4),
    cfg("fold_dilated_none", prob(1, 64, 32, 64, 2, stride=2, pad=0, dil_w=2)),
    # identities with non-default pipeline, load waves, name prefix, epilogues (hash + label compared)
    cfg("identity_wavelet3_prefix", SMALL, split_k=1, pipeline="wavelet", num_load_waves=3, name_prefix="net"),
    cfg("identity_relu_cshuffle_fp16", SMALL, split_k=1, dtype="fp16", epilogue="cshuffle", acc_epilogue="relu"),
    cfg("identity_wavelet_spk8_prefix", SMALL, split_k=8, pipeline="wavelet", num_load_waves=2,
        name_prefix="x_1"),
    # the reference's documented outcomes under the reading of docs/policy.md ("Reproducing the
    # reference's outcomes"): the policy's tile is the 16x16x32 WMMA tile (a K tile = tile_k = 32, one
    # WMMA K step), at the arch table's 256 CUs (target 2048 workgroups)
    cfg("doc_7x7_512_3x3_gives_16", SMALL, **TILE16),
    cfg("doc_k10_gives_8", DOC_K10, **TILE16),
    cfg("doc_kpg6_gives_4", DOC_KPG6, **TILE16),
    cfg("doc_identity_small_gives_4", DOC_IDENTITY, **TILE16),
    cfg("doc_fused_bias_gives_1", SMALL, acc_epilogue="bias", **TILE16),
    cfg("doc_fused_scale_gives_1", SMALL, acc_epilogue="scale", **TILE16),
    cfg("doc_fused_relu_gives_1", SMALL, acc_epilogue="relu", **TILE16),
    cfg("doc_fused_clamp_gives_1", SMALL, acc_epilogue="clamp", **TILE16),
    cfg("doc_arch_gfx1201_gives_1", SMALL, arch="gfx1201", **TILE16),
    cfg("doc_arch_gfx1100_gives_1", SMALL, arch="gfx1100", **TILE16),
    cfg("doc_arch_gfx950_gives_1", SMALL, arch="gfx950", **TILE16),
    cfg("doc_arch_gfx942_gives_1", SMALL, arch="gfx942", **TILE16),
    # the problem rules and cus
    cfg("reject_n0", dict(SMALL, N=0), expect=reject("problem field N must be in 1..2147483647, got 0")),
    cfg("reject_groups3", dict(SMALL, groups=3), expect=reject("groups 3 must divide C 512 and K 512")),
    cfg("reject_filter", prob(1, 8, 2, 8, 5, pad=0),
        expect=reject("the dilated filter 5x5 does not fit the padded input 2x2")),
    cfg("reject_m_i32", prob(1048576, 8, 64, 8, 1),
        expect=reject("kernel argument M = 4294967296 exceeds the i32 range (max 2147483647)")),
    cfg("reject_cus_neg", SMALL, cus=-1,
        expect=reject("cus must be 0 (the arch table's count) or 1..65536, got -1")),
    cfg("reject_cus_big", SMALL, cus=65537,
        expect=reject("cus must be 0 (the arch table's count) or 1..65536, got 65537")),
    cfg("reject_unknown_field", SMALL, degree=4,
        expect=reject("spec field 'degree' is not a field of family 'split_k_policy'")),
]

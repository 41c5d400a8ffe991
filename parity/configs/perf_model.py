"""perf_model: both engines' perf-model predictions and model-driven choice
(python_engine/policy/perf_model.py, docs/perf_model.md). Text, not LLVM IR:
every admitted candidate (tile x split-K degree x binary) with its predicted
terms (integer cycles, bytes, picoseconds), the selected candidate and the
runner-up, the seed policy's choice evaluated by the same model, and the
selected binary (kernel, identity, spec, reduce kernel, AOT membership).

Problems: every layer of the shipped catalog (parity/data/layers.txt: ResNet-50
at batch 1 and 32, ViT-B/16 patch embeddings, VGG-16 conv5 in fp16) and issue
13's c80 layer, MobileNetV2's last pointwise layer (Sandler et al. 2018: 7x7,
320 -> 1280), grouped layers with 8 and 16 output channels per group
(ResNeXt-style, Xie et al. 2017) and a depthwise one, then edge cases (fused
epilogues, other arches, small vectors, the device's CU count, the gridDim.z
budget), the problem rules (rejected with split_k_policy's texts) and the
selection within the reference's rules (``rules = 1``, ``rules_*``)."""

import os

from parity.config import Config, reject
from parity.catalog.miopen import read_catalog
from python_engine import load_vector
from python_engine.facts import fold_width

FAMILY = "perf_model"
OUTPUT = "text"  # lower() returns text, not an LLVM module: parity verify skips it
NUMERICS_OPT_OUT = ("text family (model predictions): no IR to run; a prediction is a number, not a kernel")

# The catalog next to this configs module, not the installed package's data: the gate may load
# another checkout's parity/configs (parity/base/project.py), and its configs go with its catalog.
_HERE = os.path.dirname(os.path.abspath(__file__))
_PROBLEM = ("N", "C", "H", "W", "K", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w", "dil_h", "dil_w", "groups")


def _catalog(path: str) -> list:
    """(name, spec) of every layer of a catalog, with emit's vector widths
    (``conv_implicit_gemm.load_vector`` of the folded channels per group)."""
    layers = read_catalog(path)
    out = []
    for l in layers:
        v = load_vector(fold_width(l.problem)[1].cpg)
        fused = {"acc_epilogue": l.acc_epilogue} if l.acc_epilogue != "identity" else {}  # CBAInfer lines
        out.append((l.name, dict({n: getattr(l.problem, n) for n in _PROBLEM}, dtype=l.dtype, vector_a=v,
                                 vector_b=v, **fused)))
    return out


def prob(N, C, H, K, Y, stride=1, pad=None, W=None, groups=1, **kw):
    pad = (Y // 2) if pad is None else pad
    return dict({"N": N, "C": C, "H": H, "W": H if W is None else W, "K": K, "Y": Y, "X": Y,
                 "stride_h": stride, "stride_w": stride, "pad_h": pad, "pad_w": pad, "groups": groups}, **kw)


def cfg(name, problem, arch="gfx1250", expect=None, **spec):
    kw = {"expect": expect} if expect is not None else {}
    if "split_k" in spec or "split_k_cluster" in spec:
        # a spec gives both split-K fields or neither (spec_front.SPLIT_K_FIELDS): the family's defaults
        spec = dict({"split_k": -1, "split_k_cluster": 0}, **spec)
    return Config(name, arch=arch, spec=dict(problem, **spec), **kw)


SMALL = prob(1, 512, 7, 512, 3)                       # 7x7x512 3x3: Kgemm 4608
MOBILENETV2_LAST_PW = prob(1, 320, 7, 1280, 1)        # MobileNetV2's last 1x1 (Sandler et al. 2018)
GROUPED_KPG8 = prob(1, 256, 14, 256, 3, groups=32)    # 32 groups of 8 channels (ResNeXt-style cardinality 32)
GROUPED_KPG16 = prob(1, 512, 14, 512, 3, groups=32)   # 32 groups of 16 channels
DEPTHWISE = prob(1, 32, 56, 32, 3, groups=32)         # kpg 1: depthwise

CONFIGS = [Config("defaults", arch="gfx1250", spec={})]
CONFIGS += [cfg(f"catalog_{n}", p) for n, p in _catalog(os.path.join(_HERE, "..", "data", "layers.txt"))]
# issue 13's one-line catalog, tests/data/layers_c80.txt (not read: configs need only parity/ itself)
CONFIGS.append(cfg("c80_c80", prob(1, 80, 14, 80, 3, dtype="bf16", vector_a=8, vector_b=8, dil_h=1, dil_w=1)))
CONFIGS += [
    cfg("mobilenetv2_last_pointwise", MOBILENETV2_LAST_PW),
    cfg("mobilenetv2_last_pointwise_b8", dict(MOBILENETV2_LAST_PW, N=8)),
    cfg("grouped_kpg8", GROUPED_KPG8, vector_a=8, vector_b=8),
    cfg("grouped_kpg16", GROUPED_KPG16),
    cfg("depthwise_kpg1", DEPTHWISE, vector_a=1, vector_b=1),
    # the spec's own binary: the seed evaluates it, the candidates keep its other fields
    cfg("seed_given_split_k4", SMALL, split_k=4),
    cfg("seed_cluster_s8", SMALL, split_k=8, split_k_cluster=8, epilogue="cshuffle"),
    cfg("tile_k64_cshuffle", SMALL, tile_k=64, epilogue="cshuffle"),
    cfg("wavelet2", SMALL, pipeline="wavelet", num_load_waves=2),
    cfg("fp16", SMALL, dtype="fp16"),
    cfg("vectors2", prob(1, 6, 28, 64, 3), vector_a=2, vector_b=2),
    # a fused epilogue: no split form, plain candidates only
    cfg("fused_bias_plain_only", SMALL, acc_epilogue="bias"),
    # arches without the model (no roofline, no 16x16x32 WMMA): no candidate
    cfg("arch_gfx950_none", SMALL, arch="gfx950"),
    cfg("arch_gfx1201_none", SMALL, arch="gfx1201"),
    # the device's CU count
    cfg("cus1", SMALL, cus=1),
    cfg("cus32", SMALL, cus=32),
    cfg("cus65536", prob(32, 256, 14, 256, 3), cus=65536),
    # big and odd problems
    cfg("grid_z_budget", prob(1, 32768 * 64, 4, 32768, 3, groups=32768), cus=65536),
    cfg("odd_k7", prob(1, 64, 9, 7, 3), vector_a=8, vector_b=8),
    cfg("short_reduction", prob(1, 16, 7, 64, 3)),
    cfg("fold_swin_patch4", prob(1, 3, 224, 96, 4, stride=4, pad=0)),
    # the problem rules and cus (split_k_policy's texts)
    cfg("reject_n0", dict(SMALL, N=0), expect=reject("problem field N must be in 1..2147483647, got 0")),
    cfg("reject_groups3", dict(SMALL, groups=3), expect=reject("groups 3 must divide C 512 and K 512")),
    cfg("reject_filter", prob(1, 8, 2, 8, 5, pad=0),
        expect=reject("the dilated filter 5x5 does not fit the padded input 2x2")),
    cfg("reject_cus_neg", SMALL, cus=-1,
        expect=reject("cus must be 0 (the arch table's count) or 1..65536, got -1")),
    cfg("reject_split_k_huge", SMALL, split_k=1 << 40,
        expect=reject("split_k must be in -1..2147483647 (-1: auto), got 1099511627776")),
    cfg("reject_unknown_field", SMALL, degree=4,
        expect=reject("spec field 'degree' is not a field of family 'perf_model'")),
    cfg("reject_rules2", SMALL, rules=2,
        expect=reject("rules must be 0 (every admitted candidate) or 1 (the reference's rules), got 2")),
]

# rules = 1 (emit's default, docs/policy.md "Binary selection within the reference's rules"): only the
# candidates the reference's split-K rules admit, and the admitting rule. The catalog layers whose
# choice the rules change at llvm23 (pointwise layers the model gave a cluster binary, the Kgemm-768
# patch embedding, a Kgemm-1152 3x3), plus edge cases.
RULES_CATALOG = ("resnet50_b1_conv3_1_3x3", "resnet50_b1_conv3_2_1x1_reduce", "resnet50_b1_conv4_2_1x1_reduce",
                 "resnet50_b1_conv5_2_1x1_reduce", "resnet50_b32_conv5_2_1x1_reduce", "vit_b16_b1_patch_embed",
                 "resnet50_b1_conv4_1_3x3")
CONFIGS += [cfg(f"rules_catalog_{n}", p, rules=1)
            for n, p in _catalog(os.path.join(_HERE, "..", "data", "layers.txt")) if n in RULES_CATALOG]
CONFIGS += [
    cfg("rules_small", SMALL, rules=1),
    cfg("rules_mobilenetv2_last_pointwise", MOBILENETV2_LAST_PW, rules=1),
    # K 12 is a multiple of 4, kpg 6 is not: no cluster offer (Kgemm 2304, 1 output tile)
    cfg("rules_kpg6_no_cluster", prob(1, 512, 7, 12, 3, groups=2), rules=1),
    cfg("rules_short_reduction", prob(1, 16, 7, 64, 3), rules=1),
    cfg("rules_fused_bias", SMALL, acc_epilogue="bias", rules=1),
    cfg("rules_cus16", SMALL, cus=16, rules=1),
    cfg("rules_arch_gfx950_none", SMALL, arch="gfx950", rules=1),
]

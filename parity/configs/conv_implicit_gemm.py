"""conv_implicit_gemm: the forward implicit-GEMM convolution on gfx1250
(python_engine/kernels/conv_implicit_gemm/, cpp_engine/src/kernels/conv_implicit_gemm/,
docs/conv_implicit_gemm.md).

Grouped convolution, strides, padding and dilation are run-time properties (the
problem block of kernel arguments), so they do not appear here: these configs
vary what the spec varies. Any ``split_k > 1`` builds the one ``_spk`` binary
(its degree is the run-time ``ks_count``), so ``spk2``/``spk4``/``spk8``/``spk32``
of one shape must all be IDENTICAL with the same bytes. Cluster configs compare at
llvm23 and are rejected with the cluster flavor reason at llvm20 and llvm22.
Names are stable: new configs are appended, never renumbered.
"""

from parity.config import Config, reject, reject_before_llvm23

FAMILY = "conv_implicit_gemm"

_CLUSTER_FLAVOR = "split_k_cluster requires flavor llvm23"
_TILE = ("tile must be a multiple of the WMMA shape 16x16x32 (tile_m, tile_n multiples of 16, "
         "tile_k a multiple of 32, each at most 1024), got {}")

# (name part, tile_m, tile_n, tile_k, waves_m, waves_n)
_TILES = (
    ("64x64x32_w2x2", 64, 64, 32, 2, 2),
    ("128x128x32_w2x2", 128, 128, 32, 2, 2),
    ("64x64x64_w2x2", 64, 64, 64, 2, 2),
    ("32x32x32_w1x1", 32, 32, 32, 1, 1),
)
# (name part, pipeline, num_load_waves)
_PIPES = (("mem", "mem", 1), ("wavelet1", "wavelet", 1))
_EPIS = ("default", "cshuffle")
_DTYPES = ("bf16", "fp16")


def _tile(t):
    _, tm, tn, tk, wm, wn = t
    return {"tile_m": tm, "tile_n": tn, "tile_k": tk, "waves_m": wm, "waves_n": wn}


CONFIGS = []

# -- plain kernels: pipeline x epilogue x dtype x tile --------------------------------
for _pn, _pipe, _lw in _PIPES:
    for _epi in _EPIS:
        for _dt in _DTYPES:
            for _t in _TILES:
                CONFIGS.append(Config(
                    f"plain_{_pn}_{_epi}_{_t[0]}_{_dt}", arch="gfx1250",
                    spec={"dtype": _dt, "pipeline": _pipe, "num_load_waves": _lw, "epilogue": _epi, **_tile(_t)}))

CONFIGS += [
    Config("plain_wavelet2_cshuffle_64x64x32_w2x2_bf16", arch="gfx1250",
           spec={"pipeline": "wavelet", "num_load_waves": 2, "epilogue": "cshuffle"}),
    Config("plain_wavelet2_cshuffle_128x128x32_w2x4_bf16", arch="gfx1250",
           spec={"pipeline": "wavelet", "num_load_waves": 2, "epilogue": "cshuffle",
                 "tile_m": 128, "tile_n": 128, "waves_m": 2, "waves_n": 4}),
    Config("plain_wavelet4_default_64x64x32_w2x2_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "pipeline": "wavelet", "num_load_waves": 4}),
    Config("plain_mem_default_128x64x32_w2x2_bf16", arch="gfx1250",
           spec={"tile_m": 128, "tile_n": 64}),
    Config("plain_mem_cshuffle_64x128x32_w1x4_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "epilogue": "cshuffle", "tile_m": 64, "tile_n": 128, "waves_m": 1, "waves_n": 4}),
    # vector widths of the global loads
    Config("plain_mem_default_va1_vb2_bf16", arch="gfx1250", spec={"vector_a": 1, "vector_b": 2}),
    Config("plain_mem_cshuffle_va4_vb4_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "epilogue": "cshuffle", "vector_a": 4, "vector_b": 4}),
    Config("plain_wavelet1_default_va2_vb8_bf16", arch="gfx1250",
           spec={"pipeline": "wavelet", "vector_a": 2, "vector_b": 8},
           allow_spill="SGPR spills to VGPR lanes outside the K loop, no scratch: 32 A slots per thread of the "
                       "one load wave keep 32 pixel bases live, and the default epilogue's 16-byte D path adds to "
                       "the 107 SGPRs this wavelet va2 kernel already used"),
    # num_load_waves is ignored by mem: same bytes as the default spec
    Config("plain_mem_default_lw3_bf16", arch="gfx1250", spec={"num_load_waves": 3}),
    Config("defaults", arch="gfx1250", spec={}),
    Config("prefix_net_mem_cshuffle_bf16", arch="gfx1250", spec={"name_prefix": "net", "epilogue": "cshuffle"}),
]

# -- fused accumulator epilogues (split_k 1 only) ----------------------------------------
for _acc in ("bias", "scale", "relu", "clamp"):
    for _pn, _pipe, _lw in _PIPES:
        for _epi in _EPIS:
            CONFIGS.append(Config(
                f"fused_{_acc}_{_pn}_{_epi}_64x64_bf16", arch="gfx1250",
                spec={"acc_epilogue": _acc, "pipeline": _pipe, "num_load_waves": _lw, "epilogue": _epi}))
CONFIGS += [
    Config("fused_bias_mem_cshuffle_128x128_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "acc_epilogue": "bias", "epilogue": "cshuffle", "tile_m": 128, "tile_n": 128}),
    Config("fused_clamp_mem_default_128x128_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "acc_epilogue": "clamp", "tile_m": 128, "tile_n": 128}),
]
# bias then an activation (MIOpen -F 4 -m 3 / -m 7): each pipeline and each epilogue once
for _acc, _pipes in (("bias_relu", (_PIPES[0], _PIPES[1])), ("bias_clamp", (_PIPES[1], _PIPES[0]))):
    for (_pn, _pipe, _lw), _epi in zip(_pipes, _EPIS):
        CONFIGS.append(Config(
            f"fused_{_acc}_{_pn}_{_epi}_64x64_bf16", arch="gfx1250",
            spec={"acc_epilogue": _acc, "pipeline": _pipe, "num_load_waves": _lw, "epilogue": _epi}))
CONFIGS.append(Config("fused_bias_relu_mem_cshuffle_128x128_fp16", arch="gfx1250",
                      spec={"dtype": "fp16", "acc_epilogue": "bias_relu", "epilogue": "cshuffle",
                            "tile_m": 128, "tile_n": 128}))

# -- two-stage split-K: every degree > 1 builds the same _spk binary ---------------------
for _sk in (2, 4, 8, 32):
    for _pn, _pipe, _lw in _PIPES:
        for _epi in _EPIS:
            CONFIGS.append(Config(
                f"spk{_sk}_{_pn}_{_epi}_64x64_bf16", arch="gfx1250",
                spec={"split_k": _sk, "split_k_cluster": 0, "pipeline": _pipe, "num_load_waves": _lw,
                      "epilogue": _epi}))
CONFIGS += [
    Config("spk4_mem_cshuffle_128x128_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle", "tile_m": 128,
                 "tile_n": 128}),
    Config("spk4_mem_default_64x64x64_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "split_k": 4, "split_k_cluster": 0, "tile_k": 64}),
    Config("spk8_wavelet2_cshuffle_64x64_bf16", arch="gfx1250",
           spec={"split_k": 8, "split_k_cluster": 0, "pipeline": "wavelet", "num_load_waves": 2,
                 "epilogue": "cshuffle"}),
]

# -- cluster split-K (llvm23 only) ----------------------------------------------------------
for _s in (4, 8, 12, 15):
    for _epi in _EPIS:
        CONFIGS.append(Config(
            f"skc{_s}_mem_{_epi}_64x64_bf16", arch="gfx1250",
            spec={"split_k": _s, "split_k_cluster": _s, "epilogue": _epi},
            per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)))
CONFIGS += [
    Config("skc2_mem_cshuffle_64x64_bf16", arch="gfx1250",
           spec={"split_k": 2, "split_k_cluster": 2, "epilogue": "cshuffle"},
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("skc8_mem_cshuffle_128x64_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "split_k": 8, "split_k_cluster": 8, "epilogue": "cshuffle",
                 "tile_m": 128, "tile_n": 64},
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    # the cluster degree is baked in; split_k only selects the two-stage ABI
    Config("skc4_spk32_mem_default_64x64_bf16", arch="gfx1250",
           spec={"split_k": 32, "split_k_cluster": 4},
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
]

# -- issue 16's perf targets that no config above covers (parity/perf/targets.py) --------------
CONFIGS += [
    # the AOT grid's 128x128 cluster job at S=15 (mem, cshuffle, tile_k 64, 16-byte vectors, waves 2x2)
    Config("skc15_mem_cshuffle_128x128x64_bf16", arch="gfx1250",
           spec={"split_k": 15, "split_k_cluster": 15, "epilogue": "cshuffle",
                 "tile_m": 128, "tile_n": 128, "tile_k": 64},
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    # a 16x16 two-stage job of the AOT grid (mem, default epilogue, 16-byte vectors, one wave)
    Config("aot_spk2_mem_default_16x16x32_w1x1_bf16", arch="gfx1250",
           spec={"split_k": 2, "split_k_cluster": 0, "tile_m": 16, "tile_n": 16, "tile_k": 32, "waves_m": 1,
                 "waves_n": 1}),
    # the tap-rows tiles' other forms (stop 52's helper: no golden entry pinned them): the 16x16
    # cshuffle job (amdgpu-waves-per-eu 12, not the default epilogue's 16) and the 128x128x64 tile
    # without a cluster (its tap loop's rows r = 1 beside the two-deep K walk)
    Config("aot_spk2_mem_cshuffle_16x16x32_w1x1_bf16", arch="gfx1250",
           spec={"split_k": 2, "split_k_cluster": 0, "epilogue": "cshuffle", "tile_m": 16, "tile_n": 16,
                 "tile_k": 32, "waves_m": 1, "waves_n": 1}),
    Config("plain_mem_default_128x128x64_w2x2_bf16", arch="gfx1250",
           spec={"tile_m": 128, "tile_n": 128, "tile_k": 64}),
]

# -- fused split-K (issue 36): Stage 1 stores raw partials (the Stage-2 reduce applies the
# epilogue), the cluster fold applies it once to its folded rows; every epilogue at both
# epilogues of the two-stage form and of the cluster form (llvm23 only) ----------------------
for _i, _acc in enumerate(("bias", "scale", "relu", "clamp")):
    for _epi in _EPIS:
        CONFIGS.append(Config(f"fused_spk4_{_acc}_mem_{_epi}_64x64_bf16", arch="gfx1250",
                              spec={"split_k": 4, "split_k_cluster": 0, "acc_epilogue": _acc, "epilogue": _epi}))
        _s = (4, 3, 2, 8)[_i]
        CONFIGS.append(Config(f"fused_skc{_s}_{_acc}_mem_{_epi}_64x64_bf16", arch="gfx1250",
                              spec={"split_k": _s, "split_k_cluster": _s, "acc_epilogue": _acc, "epilogue": _epi},
                              per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)))
# bias then an activation: two-stage and the cluster fold at both epilogues, one each
for _acc, _epis, _s in (("bias_relu", _EPIS, 4), ("bias_clamp", _EPIS[::-1], 2)):
    CONFIGS.append(Config(f"fused_spk4_{_acc}_mem_{_epis[0]}_64x64_bf16", arch="gfx1250",
                          spec={"split_k": 4, "split_k_cluster": 0, "acc_epilogue": _acc, "epilogue": _epis[0]}))
    CONFIGS.append(Config(f"fused_skc{_s}_{_acc}_mem_{_epis[1]}_64x64_bf16", arch="gfx1250",
                          spec={"split_k": _s, "split_k_cluster": _s, "acc_epilogue": _acc, "epilogue": _epis[1]},
                          per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)))

# -- must-reject: one or more per rule, in rule order -------------------------------------
CONFIGS += [
    Config("reject_null_dtype", arch="gfx1250", spec={"dtype": None},
           expect=reject("dtype must be bf16 or fp16, got null")),
    Config("reject_fp32_dtype", arch="gfx1250", spec={"dtype": "fp32"},
           expect=reject("dtype must be bf16 or fp16, got 'fp32'")),
    Config("reject_tile_k16", arch="gfx1250", spec={"tile_k": 16},
           expect=reject(_TILE.format("64x64x16"))),
    Config("reject_tile_m40", arch="gfx1250", spec={"tile_m": 40},
           expect=reject(_TILE.format("40x64x32"))),
    Config("reject_tile_m2048", arch="gfx1250", spec={"tile_m": 2048},
           expect=reject(_TILE.format("2048x64x32"))),
    Config("reject_tile_n0", arch="gfx1250", spec={"tile_n": 0},
           expect=reject(_TILE.format("64x0x32"))),
    Config("reject_waves8x2", arch="gfx1250", spec={"waves_m": 8},
           expect=reject("waves 8x2 must divide the tile 64x64 into per-wave tiles that are multiples of 16x16")),
    Config("reject_waves2x0", arch="gfx1250", spec={"waves_n": 0},
           expect=reject("waves 2x0 must divide the tile 64x64 into per-wave tiles that are multiples of 16x16")),
    Config("reject_waves3x2", arch="gfx1250", spec={"waves_m": 3},
           expect=reject("waves 3x2 must divide the tile 64x64 into per-wave tiles that are multiples of 16x16")),
    Config("reject_pipeline_lds", arch="gfx1250", spec={"pipeline": "lds"},
           expect=reject("pipeline must be mem or wavelet, got 'lds'")),
    Config("reject_pipeline_null", arch="gfx1250", spec={"pipeline": None},
           expect=reject("pipeline must be mem or wavelet, got null")),
    Config("reject_load_waves0", arch="gfx1250", spec={"pipeline": "wavelet", "num_load_waves": 0},
           expect=reject("num_load_waves must be 1..8 for the wavelet pipeline, got 0")),
    Config("reject_load_waves9", arch="gfx1250", spec={"pipeline": "wavelet", "num_load_waves": 9},
           expect=reject("num_load_waves must be 1..8 for the wavelet pipeline, got 9")),
    Config("reject_epilogue_null", arch="gfx1250", spec={"epilogue": None},
           expect=reject("epilogue must be default or cshuffle, got null")),
    Config("reject_epilogue_direct", arch="gfx1250", spec={"epilogue": "direct"},
           expect=reject("epilogue must be default or cshuffle, got 'direct'")),
    Config("reject_threads2048", arch="gfx1250", spec={"tile_m": 256, "tile_n": 256, "waves_m": 8, "waves_n": 8},
           expect=reject("work-group of 2048 threads exceeds 1024")),
    Config("reject_threads1056_wavelet", arch="gfx1250",
           spec={"tile_m": 256, "tile_n": 256, "waves_m": 4, "waves_n": 8, "pipeline": "wavelet",
                 "num_load_waves": 1},
           expect=reject("work-group of 1056 threads exceeds 1024")),
    Config("reject_vector_a9", arch="gfx1250", spec={"vector_a": 9},
           expect=reject("vector_a must be 1 to 8 elements, got 9")),
    Config("reject_vector_b16", arch="gfx1250", spec={"vector_b": 16},
           expect=reject("vector_b must be 1 to 8 elements, got 16")),
    Config("reject_vector_a3_vb8", arch="gfx1250", spec={"vector_a": 3},
           expect=reject("padded-pixel loads (vector 3, 5, 6 or 7) need vector_a = vector_b "
                         "(A and B share the padded K order), got 3 and 8")),
    Config("reject_vector_a4_vb6", arch="gfx1250", spec={"vector_a": 4, "vector_b": 6},
           expect=reject("padded-pixel loads (vector 3, 5, 6 or 7) need vector_a = vector_b "
                         "(A and B share the padded K order), got 4 and 6")),
    Config("reject_acc_gelu", arch="gfx1250", spec={"acc_epilogue": "gelu"},
           expect=reject("acc_epilogue must be identity, bias, scale, relu, clamp, bias_relu or bias_clamp, got 'gelu'")),
    Config("reject_acc_null", arch="gfx1250", spec={"acc_epilogue": None},
           expect=reject("acc_epilogue must be identity, bias, scale, relu, clamp, bias_relu or bias_clamp, got null")),
    Config("reject_lds_overflow", arch="gfx1250",
           spec={"tile_m": 256, "tile_n": 256, "tile_k": 256, "waves_m": 4, "waves_n": 4},
           expect=reject("LDS use of 524288 bytes exceeds the 327680 bytes of gfx1250")),
    Config("reject_lds_overflow_cshuffle", arch="gfx1250",
           spec={"tile_m": 512, "tile_n": 256, "tile_k": 32, "waves_m": 4, "waves_n": 4, "epilogue": "cshuffle"},
           expect=reject("LDS use of 532480 bytes exceeds the 327680 bytes of gfx1250")),
    Config("reject_spk4_gfx950", arch="gfx950", spec={"split_k": 4, "split_k_cluster": 0},
           expect=reject("arch gfx950 has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)")),
    Config("reject_gfx942", arch="gfx942", spec={},
           expect=reject("arch gfx942 has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)")),
    Config("reject_gfx1100", arch="gfx1100", spec={},
           expect=reject("arch gfx1100 has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)")),
    Config("reject_split_k_auto", arch="gfx1250", spec={"split_k": -1, "split_k_cluster": 0},
           expect=reject("split_k = -1 (auto) must be resolved before lowering")),
    Config("reject_split_k0", arch="gfx1250", spec={"split_k": 0, "split_k_cluster": 0},
           expect=reject("split_k must be 1 (off) or greater than 1 (two-stage), got 0")),
    Config("reject_split_k_neg2", arch="gfx1250", spec={"split_k": -2, "split_k_cluster": 0},
           expect=reject("split_k must be 1 (off) or greater than 1 (two-stage), got -2")),
]
CONFIGS += [
    Config("reject_skc4_at_llvm22", arch="gfx1250", spec={"split_k": 4, "split_k_cluster": 4},
           flavors=("llvm22",), expect=reject(_CLUSTER_FLAVOR)),
    Config("reject_skc4_at_llvm20", arch="gfx1250", spec={"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle"},
           flavors=("llvm20",), expect=reject(_CLUSTER_FLAVOR)),
    Config("reject_skc4_wavelet", arch="gfx1250",
           spec={"split_k": 4, "split_k_cluster": 4, "pipeline": "wavelet"},
           expect=reject("split_k_cluster requires the mem pipeline"),
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("reject_skc1", arch="gfx1250", spec={"split_k": 4, "split_k_cluster": 1},
           expect=reject("split_k_cluster must be 0 (off) or 2..15, got 1"),
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("reject_skc16", arch="gfx1250", spec={"split_k": 16, "split_k_cluster": 16},
           expect=reject("split_k_cluster must be 0 (off) or 2..15, got 16"),
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("reject_skc_neg1", arch="gfx1250", spec={"split_k": 4, "split_k_cluster": -1},
           expect=reject("split_k_cluster must be 0 (off) or 2..15, got -1"),
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("reject_skc4_without_split", arch="gfx1250", spec={"split_k": 1, "split_k_cluster": 4},
           expect=reject("split_k_cluster requires split_k > 1 (the two-stage ABI)"),
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("reject_name_prefix_digit", arch="gfx1250", spec={"name_prefix": "9x"},
           expect=reject("name_prefix must be empty or an identifier, got '9x'")),
    Config("reject_name_prefix_dash", arch="gfx1250", spec={"name_prefix": "my-net"},
           expect=reject("name_prefix must be empty or an identifier, got 'my-net'")),
    Config("reject_name_prefix_null", arch="gfx1250", spec={"name_prefix": None},
           expect=reject("name_prefix must be empty or an identifier, got null")),
    # the common front: unknown fields and field kinds (binding / api.py)
    Config("reject_unknown_field", arch="gfx1250", spec={"degree": 4},
           expect=reject("spec field 'degree' is not a field of family 'conv_implicit_gemm'")),
    Config("reject_tile_m_str", arch="gfx1250", spec={"tile_m": "64"},
           expect=reject("spec field 'tile_m' must be an integer")),
    Config("reject_split_k_bool", arch="gfx1250", spec={"split_k": True, "split_k_cluster": 0},
           expect=reject("spec field 'split_k' must be an integer")),
    Config("reject_dtype_int", arch="gfx1250", spec={"dtype": 16},
           expect=reject("spec field 'dtype' must be a string or null")),
]

# -- element-wise loads (vector_a = vector_b = 1): the only widths that admit cpg 1
# (depthwise) and cpg 3 (the 3-channel stem), so the numerics oracle runs the
# strength-reduced im2col walk on them (parity/sim/plans/conv_implicit_gemm.py CONV_PROBLEMS) ----------
CONFIGS += [
    Config("plain_mem_default_va1_vb1_bf16", arch="gfx1250", spec={"vector_a": 1, "vector_b": 1}),
    Config("spk4_mem_cshuffle_va1_vb1_bf16", arch="gfx1250",
           spec={"vector_a": 1, "vector_b": 1, "split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"}),
    Config("plain_wavelet4_cshuffle_va1_vb1_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "pipeline": "wavelet", "num_load_waves": 4, "epilogue": "cshuffle",
                 "vector_a": 1, "vector_b": 1}),
]

# -- the small-channel path: padded-pixel widths 3, 5, 6, 7 (a slot is one pixel of
# cpg = v channels, zero-padded to 4 or 8 along K; conv_launch admits v = cpg only).
# The numerics oracle runs the 3-channel stem and cpg 5/6/7 problems on them ---------
CONFIGS += [
    Config("plain_mem_default_va3_vb3_bf16", arch="gfx1250", spec={"vector_a": 3, "vector_b": 3}),
    Config("spk4_mem_cshuffle_va3_vb3_bf16", arch="gfx1250",
           spec={"vector_a": 3, "vector_b": 3, "split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"}),
    Config("plain_wavelet1_default_va3_vb3_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "pipeline": "wavelet", "vector_a": 3, "vector_b": 3}),
    Config("plain_mem_cshuffle_va5_vb5_bf16", arch="gfx1250",
           spec={"vector_a": 5, "vector_b": 5, "epilogue": "cshuffle"}),
    Config("plain_mem_default_va6_vb6_fp16", arch="gfx1250", spec={"dtype": "fp16", "vector_a": 6, "vector_b": 6}),
    Config("plain_mem_default_va7_vb7_bf16", arch="gfx1250", spec={"vector_a": 7, "vector_b": 7}),
]

# -- issue 40's 32x32x32 w1x1 tile class (parity/perf/targets.py): the AOT grid's one-wave
# two-stage job of that tile (mem, default epilogue, 16-byte vectors), the uniform-tap loop
# beside its one-tile K walk -------------------------------------------------------------------
_W1X1 = {"tile_m": 32, "tile_n": 32, "tile_k": 32, "waves_m": 1, "waves_n": 1}
CONFIGS += [
    Config("aot_spk2_mem_default_32x32x32_w1x1_bf16", arch="gfx1250",
           spec={"split_k": 2, "split_k_cluster": 0, **_W1X1}),
    # the class's other forms (no AOT job): the cluster fold and a fused epilogue
    Config("skc4_mem_cshuffle_32x32x32_w1x1_bf16", arch="gfx1250",
           spec={"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle", **_W1X1},
           per_flavor=reject_before_llvm23(_CLUSTER_FLAVOR)),
    Config("fused_relu_mem_default_32x32x32_w1x1_fp16", arch="gfx1250",
           spec={"dtype": "fp16", "acc_epilogue": "relu", **_W1X1}),
]

# -- branches and selects no admitted problem can send both ways (parity numerics --coverage,
# docs/sim.md "Coverage"): declared per config from its spec ---------------------------------
_ONE_SLICE_LIVE = ("the launch plan gives every slice data (plain: one slice over Kgemm >= 1; two-stage: "
                   "ks_count = the slices with data), so `{}` never sees an empty slice; only the cluster "
                   "form launches trailing empty slices")
_CLUSTER_SLAB = ("the cluster form admits kpg and K multiples of 4 only (its fold stores 4 channels), so the "
                 "slab store never takes its narrow (scalar) path `slab_narrow` (`ws_wide` is always true)")
_PIXEL_STEP = ("padded-pixel width {}: a K tile of tile_k elements is a whole number of {}-element pixel "
               "slots, so the channel carry `{}` of the im2col walk never fires (tile_k % slot == 0)")

_LOOKAHEAD_LAST = ("the K loop's last trip: its look-ahead {} tile (t+1 .. t+3, past the tiles the trip "
                   "computes) starts at or past the slice end, since the back edge's `again = t_next < ntiles` "
                   "is false there and the K limit `{}_klim` is at most ntiles*tile_k, so the K-range test "
                   "`{}_rok` fails in every lane and `{}_off` picks the out-of-range offset")

_ROW_SLOTS_FIRST = ("row slots (plain 32x32x32 w1x1, the uniform-tap tile of one wave: A slot j is chunk j of "
                    "the thread's row, docs/conv_implicit_gemm.md): A K state 0 starts at element 0 (channel 0) "
                    "and one K tile's step from there (channel tile_k % cpg < cpg) never wraps, so the K walk's "
                    "first advance (block kwalk) never carries state 0's `{}`")


def _row_slots_plain(s: dict) -> bool:
    """The plain (split_k 1) kernels with row slots (python_engine's ``row_slots``: the
    mem pipeline, 16-byte slots, 32x32x32 at 1x1 waves)."""
    tile = tuple(s.get(k, d) for k, d in (("tile_m", 64), ("tile_n", 64), ("tile_k", 32), ("waves_m", 2),
                                          ("waves_n", 2)))
    return (tile == (32, 32, 32, 1, 1) and s.get("pipeline", "mem") == "mem" and s.get("split_k", 1) == 1
            and s.get("vector_a", 8) == s.get("vector_b", 8) == 8)


def _uncovered(c: Config) -> Config:
    s = c.spec
    if c.expect.kind != "ok" and "llvm23" not in c.per_flavor:
        return c
    out = {f"{x}_off@last": _LOOKAHEAD_LAST.format(x.upper(), x, x, x) for x in ("a", "b")}
    if not s.get("split_k_cluster"):
        out["k_span_nz"] = _ONE_SLICE_LIVE.format("k_live")
        out["any_tile"] = _ONE_SLICE_LIVE.format("any_tile")
    if s.get("split_k_cluster") and s.get("epilogue", "default") == "default":
        out["ws_wide"] = out["slab_narrow"] = _CLUSTER_SLAB
    if _row_slots_plain(s):
        for h in ("k_cw", "k_xs", "k_xw", "k_ys", "k_ks", "k_kw"):
            out[h] = _ROW_SLOTS_FIRST.format(h)
    if s.get("vector_a") in (3, 5, 6, 7):
        slot = 4 if s["vector_a"] == 3 else 8
        for h in ("k_cw", "k_xs", "k_ks"):
            out[h] = _PIXEL_STEP.format(s["vector_a"], slot, "k_cyc")
    return Config(**{**c.__dict__, "uncovered": out})


CONFIGS = [_uncovered(_c) for _c in CONFIGS]

"""conv_fwd_split_k_reduce: Stage 2 of two-stage split-K
(python_engine/kernels/conv_fwd_split_k_reduce.py)."""

from parity.config import Config, reject

FAMILY = "conv_fwd_split_k_reduce"

# parity numerics --coverage (docs/sim.md "Coverage"): a branch no problem can send both ways
_ONE_ELEMENT_TAIL = ("vector 1: the tail loop handles one element per thread, so its back edge `again` "
                     "(i + 1 < vector) is never taken")
_DEGREES = (0, 1, 2, 4, 16, 32, 7, 8)  # 7: an odd degree; 8: the AOT grid ships d8 reduce kernels
CONFIGS = []
for _dt in ("bf16", "fp16"):
    for _v in (1, 2, 4, 8):
        for _d in _DEGREES:
            for _t in (64, 256):
                CONFIGS.append(Config(f"{_dt}_v{_v}_t{_t}_d{_d}", arch="gfx1250",
                                      spec={"dtype": _dt, "vector": _v, "threads": _t, "degree": _d},
                                      uncovered={"again": _ONE_ELEMENT_TAIL} if _v == 1 else {}))
# fused Stage 2 (issue 36): every accumulator epilogue at every vector width, unrolled and loop;
# bias_relu, bias_clamp: MIOpen's -F 4 (cba) with -m 3 / -m 7 (bias, then the activation)
for _acc in ("bias", "scale", "relu", "clamp", "bias_relu", "bias_clamp"):
    for _v in (1, 2, 4, 8):
        for _d in (0, 4):
            CONFIGS.append(Config(f"fused_{_acc}_bf16_v{_v}_t64_d{_d}", arch="gfx1250",
                                  spec={"dtype": "bf16", "vector": _v, "threads": 64, "degree": _d,
                                        "acc_epilogue": _acc},
                                  uncovered={"again": _ONE_ELEMENT_TAIL} if _v == 1 else {}))
    CONFIGS.append(Config(f"fused_{_acc}_fp16_v8_t256_d2", arch="gfx1250",
                          spec={"dtype": "fp16", "vector": 8, "threads": 256, "degree": 2, "acc_epilogue": _acc}))
CONFIGS += [
    Config("reject_acc_epilogue_gelu", arch="gfx1250", spec={"acc_epilogue": "gelu"},
           expect=reject("acc_epilogue must be identity, bias, scale, relu, clamp, bias_relu or bias_clamp, got 'gelu'")),
    Config("reject_acc_epilogue_null", arch="gfx1250", spec={"acc_epilogue": None},
           expect=reject("acc_epilogue must be identity, bias, scale, relu, clamp, bias_relu or bias_clamp, got null")),
]
CONFIGS += [
    Config("t1024_bf16_v8_d4", arch="gfx1250", spec={"dtype": "bf16", "vector": 8, "threads": 1024, "degree": 4}),
    Config("reject_null_dtype", arch="gfx1250", spec={"dtype": None},
           expect=reject("dtype must be bf16 or fp16, got null")),
    Config("reject_fp32_dtype", arch="gfx1250", spec={"dtype": "fp32"},
           expect=reject("dtype must be bf16 or fp16, got 'fp32'")),
    Config("reject_vector3", arch="gfx1250", spec={"vector": 3},
           expect=reject("vector must be 1, 2, 4 or 8 elements, got 3")),
    Config("reject_threads48", arch="gfx1250", spec={"threads": 48},
           expect=reject("threads must be a multiple of the wave size 32 in 32..1024, got 48")),
    Config("reject_threads2048", arch="gfx1250", spec={"threads": 2048},
           expect=reject("threads must be a multiple of the wave size 32 in 32..1024, got 2048")),
    Config("reject_degree33", arch="gfx1250", spec={"degree": 33},
           expect=reject("degree must be 0 (runtime ks_count) or 1..32, got 33")),
    Config("reject_degree_neg1", arch="gfx1250", spec={"degree": -1},
           expect=reject("degree must be 0 (runtime ks_count) or 1..32, got -1")),
    Config("reject_gfx942_mfma", arch="gfx942", spec={"threads": 256},
           expect=reject("arch gfx942 has no conv_fwd_split_k_reduce kernel (requires gfx1250)")),
    Config("reject_gfx1100", arch="gfx1100", spec={},
           expect=reject("arch gfx1100 has no conv_fwd_split_k_reduce kernel (requires gfx1250)")),
    Config("reject_unknown_field", arch="gfx1250", spec={"split_k": 4},
           expect=reject("spec field 'split_k' is not a field of family 'conv_fwd_split_k_reduce'")),
]

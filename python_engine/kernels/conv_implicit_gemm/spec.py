"""Spec fields, constants and naming of family ``conv_implicit_gemm`` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/spec.h, spec.cpp).

The bottom module of the family: the spec fields, the dtype and WMMA tables,
the work-group size and the kernel name. LDS geometry and the load/store widths
are in :mod:`.lds`, the rules in :mod:`.rules`."""
from __future__ import annotations

from ...ir import types as T
from ...spec.fields import Field
from .. import acc_epilogue

FAMILY = "conv_implicit_gemm"
FIELDS = (
    Field("dtype", "str", "bf16"),
    Field("tile_m", "int", 64),
    Field("tile_n", "int", 64),
    Field("tile_k", "int", 32),
    Field("waves_m", "int", 2),
    Field("waves_n", "int", 2),
    Field("pipeline", "str", "mem"),
    Field("num_load_waves", "int", 1),
    Field("epilogue", "str", "default"),
    Field("vector_a", "int", 8),
    Field("vector_b", "int", 8),
    Field("acc_epilogue", "str", "identity"),
    Field("split_k", "int", 1),
    Field("split_k_cluster", "int", 0),
    Field("name_prefix", "str", ""),
)

DTYPES = {"bf16": T.BFLOAT, "fp16": T.HALF}
WMMA_KEY = {"bf16": "wmma_f32_16x16x32_bf16", "fp16": "wmma_f32_16x16x32_f16"}
PIPELINES = ("mem", "wavelet")
EPILOGUES = ("default", "cshuffle")
ACC_EPILOGUES = acc_epilogue.ACC_EPILOGUES
VECTORS = (1, 2, 3, 4, 5, 6, 7, 8)
MAX_LOAD_WAVES = 8
WMMA_M, WMMA_N, WMMA_K = 16, 16, 32
WAVE = 32


# -- derived sizes -------------------------------------------------------------------

def threads(spec: dict) -> int:
    """Work-group size: the compute waves, plus the load waves of ``wavelet``."""
    w = spec["waves_m"] * spec["waves_n"]
    if spec["pipeline"] == "wavelet":
        w += spec["num_load_waves"]
    return w * WAVE


def stage1_acc(spec: dict) -> str:
    """The epilogue the kernel applies: ``acc_epilogue``, but ``identity`` for
    two-stage Stage 1 (``split_k > 1`` without a cluster: raw partials)."""
    return "identity" if spec["split_k"] > 1 and not spec["split_k_cluster"] else spec["acc_epilogue"]


def kernel_name(spec: dict, arch, flavor) -> str:
    """``[<prefix>_]conv_implicit_gemm_<dtype>_<tm>x<tn>x<tk>_w<wm>x<wn>_<pipe>_<epi>
    _va<a>_vb<b>_<acc>[_spk][_skc<S>]``; ``<pipe>`` is ``mem`` or ``wavelet<L>``
    (num_load_waves only changes the code of ``wavelet``). ``<acc>`` is
    ``identity`` for two-stage Stage 1 whatever ``acc_epilogue`` says: it
    stores raw fp32 partials (Stage 2 applies the epilogue), so a fused
    layer's Stage 1 is the unfused binary, same name and bytes."""
    pipe = "mem" if spec["pipeline"] == "mem" else f"wavelet{spec['num_load_waves']}"
    acc = stage1_acc(spec)
    name = (f"conv_implicit_gemm_{spec['dtype']}_{spec['tile_m']}x{spec['tile_n']}x{spec['tile_k']}"
            f"_w{spec['waves_m']}x{spec['waves_n']}_{pipe}_{spec['epilogue']}"
            f"_va{spec['vector_a']}_vb{spec['vector_b']}_{acc}")
    if spec["split_k"] > 1:
        name += "_spk"
    if spec["split_k_cluster"]:
        name += f"_skc{spec['split_k_cluster']}"
    if spec["name_prefix"]:
        name = f"{spec['name_prefix']}_{name}"
    return name

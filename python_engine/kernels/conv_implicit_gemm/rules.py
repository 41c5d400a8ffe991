"""The rules of family ``conv_implicit_gemm``: :func:`validate` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/rules.h, rules.cpp)."""
from __future__ import annotations

import re

from ...targets.arch import in_table, outside_table_reason
from .lds import PIXEL_VECTORS, lds_bytes
from ..acc_epilogue import NAMES_TEXT as ACC_NAMES_TEXT
from .spec import (ACC_EPILOGUES, DTYPES, EPILOGUES, MAX_LOAD_WAVES, PIPELINES, VECTORS, WMMA_K, WMMA_M,
                   WMMA_N, threads)

# A tile side above this can never fit the LDS of any arch; the bound also keeps
# every size the rules compute (threads, LDS bytes) well inside 64 bits.
MAX_TILE = 1024
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _show(v) -> str:
    return "null" if v is None else f"'{v}'"


def validate(spec: dict, arch, flavor) -> str | None:
    """First failing rule's reason, or None. Order: dtype; tile shape; wave grid;
    pipeline (and num_load_waves); epilogue; threads; vector widths;
    acc_epilogue; arch in the table (a processor-only row: conv_launch and
    selection only, targets/arch.py ``processor_arch``); LDS; arch WMMA; split_k; cluster (flavor,
    arch, pipeline, range, two-stage); name_prefix."""
    if spec["dtype"] not in DTYPES:
        return f"dtype must be bf16 or fp16, got {_show(spec['dtype'])}"
    tm, tn, tk = spec["tile_m"], spec["tile_n"], spec["tile_k"]
    if (tm < WMMA_M or tm % WMMA_M or tn < WMMA_N or tn % WMMA_N or tk < WMMA_K or tk % WMMA_K
            or max(tm, tn, tk) > MAX_TILE):
        return (f"tile must be a multiple of the WMMA shape 16x16x32 (tile_m, tile_n "
                f"multiples of 16, tile_k a multiple of 32, each at most 1024), got {tm}x{tn}x{tk}")
    wm, wn = spec["waves_m"], spec["waves_n"]
    if wm < 1 or wn < 1 or tm % (wm * WMMA_M) or tn % (wn * WMMA_N):
        return (f"waves {wm}x{wn} must divide the tile {tm}x{tn} into per-wave tiles "
                f"that are multiples of 16x16")
    if spec["pipeline"] not in PIPELINES:
        return f"pipeline must be mem or wavelet, got {_show(spec['pipeline'])}"
    lw = spec["num_load_waves"]
    if spec["pipeline"] == "wavelet" and (lw < 1 or lw > MAX_LOAD_WAVES):
        return f"num_load_waves must be 1..{MAX_LOAD_WAVES} for the wavelet pipeline, got {lw}"
    if spec["epilogue"] not in EPILOGUES:
        return f"epilogue must be default or cshuffle, got {_show(spec['epilogue'])}"
    t = threads(spec)
    if t > 1024:
        return f"work-group of {t} threads exceeds 1024"
    for f in ("vector_a", "vector_b"):
        if spec[f] not in VECTORS:
            return f"{f} must be 1 to 8 elements, got {spec[f]}"
    va, vb = spec["vector_a"], spec["vector_b"]
    if (va in PIXEL_VECTORS or vb in PIXEL_VECTORS) and va != vb:
        return (f"padded-pixel loads (vector 3, 5, 6 or 7) need vector_a = vector_b "
                f"(A and B share the padded K order), got {va} and {vb}")
    if spec["acc_epilogue"] not in ACC_EPILOGUES:
        return f"acc_epilogue must be {ACC_NAMES_TEXT}, got {_show(spec['acc_epilogue'])}"
    if not in_table(arch):
        return outside_table_reason(arch, "conv_implicit_gemm")
    nb = lds_bytes(spec)
    if nb > arch.lds_bytes:
        return f"LDS use of {nb} bytes exceeds the {arch.lds_bytes} bytes of {arch.name}"
    if not any(s[:3] == (WMMA_M, WMMA_N, WMMA_K) for s in arch.wmma):
        return f"arch {arch.name} has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)"
    sk = spec["split_k"]
    if sk == -1:
        return "split_k = -1 (auto) must be resolved before lowering"
    if sk < 1:
        return f"split_k must be 1 (off) or greater than 1 (two-stage), got {sk}"
    s = spec["split_k_cluster"]
    if s:
        if not flavor.clusters:
            return "split_k_cluster requires flavor llvm23"
        if not arch.clusters:
            return "split_k_cluster requires arch gfx1250"
        if spec["pipeline"] != "mem":
            return "split_k_cluster requires the mem pipeline"
        if s < 2 or s > 15:
            return f"split_k_cluster must be 0 (off) or 2..15, got {s}"
        if sk == 1:
            return "split_k_cluster requires split_k > 1 (the two-stage ABI)"
    p = spec["name_prefix"]
    if p is None or (p != "" and not NAME_RE.match(p)):
        return f"name_prefix must be empty or an identifier, got {_show(p)}"
    return None

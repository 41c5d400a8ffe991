"""Family ``conv_implicit_gemm``: the forward implicit-GEMM convolution on gfx1250
(WMMA 16x16x32, wave32), plain, two-stage split-K (Stage 1) and cluster split-K.
Twin: cpp_engine/src/kernels/conv_implicit_gemm.h (the family header).

The family surface (twin: cpp_engine/src/kernels/conv_implicit_gemm.h, the
family header). docs/conv_implicit_gemm.md is the full description (the C++
twin mirrors this package call for call, file for file); this docstring is the
summary.

Per workgroup: an output tile of ``tile_m`` pixels x ``tile_n`` channels of one
group, reduced over the slice ``[k_begin, k_end)`` of ``Kgemm`` in steps of
``tile_k``. Grid ``(ceil(M/tile_m), ceil(kpg/tile_n), G*ks_count)``; z decodes
as ``group = z / ks_count``, ``slice = z % ks_count`` (plain: ``group = z``,
one slice covering ``[0, Kgemm)``).

Bounds: every global access is a raw buffer access; an element outside its
tensor (pixel padding, ``m >= M``, ``n >= kpg``, ``r >= k_end``, a cluster fold
row past the tile) gets the buffer's byte count as its offset, which the
buffer range check turns into a zero load or a dropped store. Surplus
load/store slots (a slot count that is not a multiple of the thread count) are
clamped to the last slot, so they re-store the identical bytes to the same
address. Every branch condition is wave-uniform: the K-tile loop count
(derived from z), the choice of the uniform-tap K loop (kernel arguments and
z, :mod:`.taploop`), the wavelet role (``readfirstlane`` of the wave index).

Spec fields are :data:`FIELDS`; rules :func:`validate`; name :func:`kernel_name`.

The package is split by phase, one module per phase, each named like its C++
twin under cpp_engine/src/kernels/conv_implicit_gemm/: :mod:`.spec` (fields,
constants, size, name), :mod:`.lds` (LDS layout, load/store widths),
:mod:`.rules` (validate), :mod:`.emitter` (the kernel state, prologue, build),
:mod:`.slots` (global -> LDS load slots, the K walk), :mod:`.mainloop` (WMMA,
the K loop), :mod:`.taploop` (the uniform-tap K loop), :mod:`.epilogue`, :mod:`.cluster_fold`. This module re-exports
the public names, so ``conv_implicit_gemm.load_vector`` etc. keep working.
"""
from __future__ import annotations

from .emitter import build
from .lds import (CHUNK, D_VEC, DT_ROW, OUT_VEC, PAD_C, PAIR_SLOTS, PIXEL_VECTORS, SWEEP_CHUNKS, WT_ROW,
                  lds_bytes, lds_layout, lds_parts, load_vector, pixel_pieces, pixel_slot, swizzle)
from .mainloop import row_slots, row_threads, tap_beside, tap_loop_kernel, tap_rows, tap_tile_kernel, two_deep
from .rules import MAX_TILE, NAME_RE, validate
from .spec import (ACC_EPILOGUES, DTYPES, EPILOGUES, FAMILY, FIELDS, MAX_LOAD_WAVES, PIPELINES, VECTORS, WAVE,
                   WMMA_K, WMMA_KEY, WMMA_M, WMMA_N, kernel_name, stage1_acc, threads)

__all__ = [
    "FAMILY", "FIELDS", "validate", "kernel_name", "stage1_acc", "build",
    "threads", "swizzle", "lds_parts", "lds_layout", "lds_bytes", "load_vector", "pixel_slot", "pixel_pieces",
    "DTYPES", "WMMA_KEY", "PIPELINES", "EPILOGUES", "ACC_EPILOGUES", "VECTORS", "PIXEL_VECTORS",
    "MAX_LOAD_WAVES", "MAX_TILE", "NAME_RE", "WMMA_M", "WMMA_N", "WMMA_K", "WAVE",
    "CHUNK", "SWEEP_CHUNKS", "PAD_C", "OUT_VEC", "D_VEC", "DT_ROW", "WT_ROW", "PAIR_SLOTS", "two_deep",
    "tap_beside", "tap_loop_kernel", "tap_tile_kernel", "row_slots", "row_threads", "tap_rows",
]

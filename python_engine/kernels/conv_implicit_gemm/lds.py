"""LDS layout and the load/store widths of family ``conv_implicit_gemm`` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/lds.h, lds.cpp).

The A/B tile geometry (XOR swizzle), the one LDS allocation and the epilogue
regions that alias it, the load width of the small-channel (padded-pixel) path,
and the raw buffer load/store types and intrinsic keys by byte count."""
from __future__ import annotations

from ...ir import types as T
from .spec import DTYPES

# Padded-pixel widths (the small-channel path): a load slot is one pixel's cpg = v
# channels, zero-padded to pixel_slot(v) elements along K.
PIXEL_VECTORS = (3, 5, 6, 7)
# A/B LDS layout: rows of tile_k elements (no padding), XOR-swizzled in 16-byte
# chunks of CHUNK elements (see swizzle()); the C-shuffle rows are tile_n + PAD_C
# fp32 (16 bytes) apart. Bank model (64 banks x 4 bytes, a 256-byte phase =
# SWEEP_CHUNKS chunks): parity/sim/lds_banks.py.
CHUNK = 8
SWEEP_CHUNKS = 16
PAD_C = 4
# Elements per lane in the C-shuffle store phase and the cluster fold (fp32 slabs,
# and D when kpg or K is not a multiple of D_VEC).
OUT_VEC = 4
# Elements per lane of a 16-byte D store (both epilogues, when K and kpg are
# multiples of D_VEC: a wave-uniform run-time branch on the kernel arguments).
D_VEC = 8
# Per-wave D transpose region of the default epilogue: 16 rows of DT_ROW elements
# (16 + 8 padding: row stride 48 bytes, conflict-free b16 writes and b128 reads).
DT_ROW = 24
# Per-wave slab transpose region of the default epilogue with split-K (fp32): 16
# rows of WT_ROW floats (16 + 4 padding: row stride 80 bytes). b32 writes: the two
# half-waves' rows are 8*80 = 640 bytes apart (bank offset 32), 16 dwords each, no
# overlap; b128 reads: the 16 rows of a 16-lane phase start at 20*r mod 64, 16
# distinct multiples of 4 (parity/sim/lds_banks.py counts 0 conflicts).
WT_ROW = 20
# 16-byte cshuffle D slots per row segment: with more per row, two rows share a
# 16-lane phase (PAIR_SLOTS slots each) so the two b128 C loads per slot do not
# collide (row stride tile_n + 4 fp32 puts the second row 4 banks over).
PAIR_SLOTS = 8


def swizzle(tile_k: int) -> tuple:
    """``(rows_per_phase, period)`` of the A/B XOR swizzle: 16-byte chunk ``c`` of
    tile row ``r`` is stored at chunk ``c ^ ((r / rows_per_phase) % period)`` of the
    row. ``rows_per_phase = max(1, 16 / chunks_per_row)`` rows share one 256-byte
    bank sweep; ``period`` is the largest power of two dividing the chunks per row,
    at most 16, so the XOR stays inside the row. With 64 4-byte banks and 16-lane
    b128 phases (parity/sim/lds_banks.py) the 16 fragment rows a phase reads hit
    16 distinct chunk slots of the sweep, and the row-major A/B stores write whole
    rows (a permutation of each row's chunks): 0 conflicts for tile_k a power of two."""
    cpr = tile_k // CHUNK
    return max(1, SWEEP_CHUNKS // cpr), min(cpr & -cpr, SWEEP_CHUNKS)


def lds_parts(spec: dict) -> dict:
    """Byte offsets and sizes inside the one LDS allocation: ``a`` and ``b`` (the
    double-buffered ``[2][rows][tile_k]`` A/B tiles, B after A), ``c`` (cshuffle:
    the ``[tile_m][tile_n + PAD_C]`` fp32 tile) and ``dt`` (default epilogue with
    D: the per-wave ``[16][DT_ROW]`` transpose regions of the compute waves). ``c``
    and ``dt`` start at 0: they alias A/B, used only after the main loop's last
    barrier. With split-K the default epilogue's ``dt`` holds the fp32 ``[16][WT_ROW]``
    slab transpose regions instead. name -> (offset, bytes)."""
    es = T.byte_size(DTYPES[spec["dtype"]])
    tk = spec["tile_k"]
    a = 2 * spec["tile_m"] * tk * es
    out = {"a": (0, a), "b": (a, 2 * spec["tile_n"] * tk * es)}
    if spec["epilogue"] == "cshuffle":
        out["c"] = (0, spec["tile_m"] * (spec["tile_n"] + PAD_C) * 4)
    elif spec["split_k"] == 1:
        out["dt"] = (0, spec["waves_m"] * spec["waves_n"] * 16 * DT_ROW * es)
    else:
        out["dt"] = (0, spec["waves_m"] * spec["waves_n"] * 16 * WT_ROW * 4)
    return out


def lds_layout(spec: dict) -> dict:
    """LDS globals, in declaration order: name -> (element type, element count).
    One allocation ``lds`` of the dtype holding every part of :func:`lds_parts`
    (the epilogue's parts alias the A/B tiles)."""
    et = DTYPES[spec["dtype"]]
    n = max(o + nb for o, nb in lds_parts(spec).values())
    return {"lds": (et, n // T.byte_size(et))}


def load_vector(cpg: int) -> int:
    """The A/B load width (elements) the launch side picks for ``cpg`` channels per
    group: ``cpg`` itself for 3, 5, 6, 7 (the padded-pixel path), else the widest of
    8, 4, 2, 1 dividing ``cpg`` (every vector of a slot stays inside one pixel)."""
    return cpg if cpg in PIXEL_VECTORS else next(x for x in (8, 4, 2, 1) if cpg % x == 0)


def pixel_slot(v: int) -> int:
    """Elements one load slot fills along K: ``v``, or for a padded-pixel width
    (3, 5, 6, 7) the next power of two (4 or 8): the GEMM reduction runs over
    ``Y*X*pixel_slot(v)`` with the padding channels zero in A and B."""
    return 4 if v == 3 else 8 if v in PIXEL_VECTORS else v


def pixel_pieces(v: int) -> tuple:
    """Byte sizes of the buffer loads of one ``v``-element slot, in address order:
    one ``2*v``-byte load for 1, 2, 4, 8; for a padded pixel the widest first
    (3: 4+2, 5: 8+2, 6: 8+4, 7: 8+4+2), all 2-byte aligned."""
    if v not in PIXEL_VECTORS:
        return (2 * v,)
    out, n = [], 2 * v
    for w in (8, 4, 2):
        if n >= w:
            out.append(w)
            n -= w
    return tuple(out)


def lds_bytes(spec: dict) -> int:
    return sum(T.byte_size(t) * n for t, n in lds_layout(spec).values())


def raw_type(nbytes: int) -> T.Type:
    """The raw buffer load/store type of ``nbytes`` (2, 4, 8 or 16)."""
    return {2: T.I16, 4: T.FLOAT, 8: T.vec(2, T.FLOAT), 16: T.vec(4, T.FLOAT)}[nbytes]


LOAD_KEY = {2: "raw_buffer_load_i16", 4: "raw_buffer_load_f32", 8: "raw_buffer_load_v2f32",
             16: "raw_buffer_load_v4f32"}
STORE_KEY = {2: "raw_buffer_store_i16", 4: "raw_buffer_store_f32", 8: "raw_buffer_store_v2f32",
              16: "raw_buffer_store_v4f32"}

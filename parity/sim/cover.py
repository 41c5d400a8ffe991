"""Covering problem sets: problems derived from a config's geometry, and the
tile classes each case hits (docs/sim.md, "Coverage").

The numerics plans run a fixed problem list (parity/sim/numerics.py) plus the
few problems derived here from the config's tile, vector widths, degree,
cluster size and padded-pixel width, chosen so that, together, every
conditional branch and select of the kernel goes both ways in the emulator
(recorded by :mod:`parity.sim.coverage`) and every tile class is hit:

=================  ===================================================================
class              hit by a case when
=================  ===================================================================
``interior``       a tile full in M, N and K runs (conv: M >= tile_m, kpg >= tile_n,
                   a slice of at least tile_k; reduce: a wave on the vector path)
``last_m``         the last M tile is partial (M % tile_m != 0)
``last_n``         the last N tile is partial (kpg % tile_n != 0)
``last_k``         the last K tile of a slice is partial (reduction % tile_k != 0)
``partial_vector`` conv: D channels not a multiple of the 16-byte store (kpg % 8);
                   reduce: M*K not a multiple of the vector (the tail path)
``odd_slab``       slab s >= 1 starts at an odd element (4*s*M*K bytes, M*K odd) on
                   the vector path: the reduce's slab loads, conv two-stage slabs
``fold_rows``      cluster: an M tile full, so every fold row ceil(tile_m / S) of
                   every rank holds data (rows 120-127 of a 128-row tile at S 15)
``every_slice``    cluster: all S slices carry data
``empty_slices``   cluster: trailing slices without data (k_begin >= Kgemm)
=================  ===================================================================

A class is *required* only where an admitted problem can reach it
(:func:`conv_required` / :func:`reduce_required`): ``odd_slab`` needs an odd
``K``, which the cshuffle and cluster epilogues do not admit (kpg % 4); the
cluster classes need a cluster binary. The derived problems are deterministic:
they depend only on the spec (no random choice), and their data comes from the
plan's seeded generator.
"""
from __future__ import annotations

import math

import numpy as np

from parity.sim.cover_unit import unit_problems
from python_engine.facts import conv_kernel as C

WAVE = 32

CONV_CLASSES = ("interior", "last_m", "last_n", "last_k", "partial_vector", "odd_slab", "fold_rows",
                "every_slice", "empty_slices")
REDUCE_CLASSES = ("interior", "partial_vector", "odd_slab")


# -- conv_fwd_split_k_reduce -----------------------------------------------------------------

def reduce_cover_problems(spec: dict) -> tuple:
    """(M, K) problems added to REDUCE_PROBLEMS for one reduce spec: M*K =
    32*vector + 1, odd, so wave 0 runs the vector path over slab 1 starting at
    element 32*vector + 1 (byte 4*(32*vector+1): a 4-, never 8-byte boundary), and
    the next wave takes the one-element tail; M*K = 64*vector - 1, so wave 1 ends one
    element past M*K (a wave-end bound one short takes the vector path out of bounds);
    M*K = 2*threads*vector, two full workgroups (a workgroup base off by one leaves
    the last elements unwritten)."""
    v, t = spec["vector"], spec["threads"]
    return ((WAVE * v + 1, 1), (2 * WAVE * v - 1, 1), (2 * t * v, 1))


def reduce_classes(spec: dict, M: int, K: int, ks: int) -> frozenset:
    """Tile classes a reduce launch over M*K elements and ``ks`` slabs hits."""
    mk, v = M * K, spec["vector"]
    vector_path = mk >= WAVE * v
    out = set()
    if vector_path:
        out.add("interior")
    if mk % (WAVE * v):
        out.add("partial_vector")
    if vector_path and mk % 2 and ks >= 2:
        out.add("odd_slab")
    return frozenset(out)


def reduce_required(spec: dict) -> tuple:
    """The reduce classes an admitted launch of ``spec`` can reach (odd slab
    starts need two slabs: degree 0 or >= 2)."""
    return tuple(c for c in REDUCE_CLASSES if c != "odd_slab" or spec["degree"] != 1)


# -- conv_implicit_gemm ----------------------------------------------------------------------

# The problems of conv_cover_problems, and why each is there:
#
# * ``cover_full_tile``: a full M tile and one of 7 rows (M = tile_m + 7; cluster:
#   M = tile_m, the full tile only), one
#   full N tile (kpg = tile_n), a reduction that gives each slice two K tiles
#   with the last one partial (padded-pixel widths: 5x5, padding 2, cpg =
#   vector_a); 1x1: plain four (cpg = 3*tile_k + 8), two-stage at degree 2 a
#   first slice of four and a second of three (cpg = 6*tile_k + 8), cluster
#   slices of at least four (cpg = 4*S*tile_k + 8): the two-deep pipelined K
#   loop's halves load tiles t+2 and t+3 of their slice, so the second half's
#   loads hold data, and the loop branches back, only from a fourth tile on;
#   so every
#   A/B load slot holds data in the prologue and the K loop, every row mask
#   goes both ways, and every fold row of every cluster rank holds data;
# * ``cover_narrow``: a full N tile and a 4-column one (kpg = tile_n + 4: the
#   narrow D / slab stores on a full tile), M = tile_m + 1 (a one-row tile: every
#   A row slot's mask goes false), the shortest
#   reduction (1x1, cpg 8, or cpg = vector_a: shorter than one K tile);
# * ``cover_odd_slab`` (split forms that admit an odd K: the default epilogue,
#   no cluster): M = tile_m + 5, K = tile_n + 3, both odd, so slab 1 starts at
#   an odd element, and the scalar D / slab stores run on a full tile;
# * ``cover_pad_images``: 2 images of 1 x (tile_m/2 - 2), 3x3 padding 2, 8 output
#   channels (cpg 8, or vector_a): the bottom padding taps at ``hi == H`` (filter
#   rows 1 and 2: in the first K tile and in the K loop) lie on image 1's row 0, so
#   an input row mask one long reads data, not zero; image 0's last two output rows
#   (tile_m rows) give every A row slot such a tap;
# * ``cover_rows`` (split forms): M = tile_m + 2, kpg 8, the shortest reduction;
# * ``cover_taps`` (kernels with the uniform-tap K loop, ``C.tap_loop_kernel``): a 2x2
#   filter, padding 1 on every side, cpg = 4*d*tile_k (d: 1 plain, 2 two-stage,
#   S cluster), so every slice is 16 K tiles starting on a tile pair and takes the
#   uniform-tap loop (the fixed problems take the K walk: the run-time branch goes
#   both ways); a tap holds 2*d pairs, so the channel wrap goes both ways, and
#   the x wrap too. 2 images of 1 x w (w = tile_m/4 + 4, output 2 x (w+1): M =
#   4*(w+1), a partial M tile): each A slot's rows (tile rows [0, 32) and
#   [32, 64) at 64x64) hold an output pixel of image 0 whose right padding tap
#   (wi == W) and one whose bottom padding tap (hi == H) lie on data (the next
#   row's pixel 0, image 1's row 0), so a pixel test one long reads data, not
#   zero; the left and top padding make each test go both ways in the prologue
#   and the loop; kpg = tile_n + 4 makes each B slot's row test go both ways.
# * ``cover_taps_slots`` (with ``cover_taps``, every tap-loop kernel but the row-slot and tap-rows ones;
#   drawn first for 64x64x64, 4 slots of R = 16 rows, then for 64x64x32's 2 slots of 32 rows by
#   its every-site run: cover_taps left both slots' tap tests one long alive): tile_m/R + 1 images of
#   1 x (R/2 - 1), 2x2, padding 1, so each A slot's rows of M tile 0 are one image's
#   2 x R/2 output pixels, with a right and a bottom padding tap on the next image's
#   data; ``cover_taps_slots_pro`` the same for the prologue's pairs (a slice's
#   first tap): a 1x1 filter with padding 1 on tile_m/R + 1 images of 1 x (R/3 - 2)
#   (3 x R/3 output pixels each), so the right (wi == W) and bottom (hi == H)
#   padding pixels of each slot's rows read the next image (drawn by `parity
#   mutate` against the 64x64x64 prologue's `tp_wok` / `tp_hok` survivors).
# * ``cover_pad_deep`` (padded-pixel widths): 4 images of 4x4, an 8x8 filter with
#   padding 4, C = vector_a, K 8: a slice's K-loop tiles (past its first) meet a
#   bottom padding tap at ``hi == H`` on every A slot with the next image behind.
# * ``cover_rows_first``, ``cover_rows_tap`` (row-slot kernels, ``C.row_slots``): a 1x1
#   filter with padding 1 on 2 images of 2 x 3: the first K tile's four slots (and the
#   tap prologue's and loop's) on the last output row / column's padding pixels with
#   data behind (:func:`_row_slot_problems`); ``cover_rows_tap`` alone for kernels whose
#   tap loop only has row slots (``C.tap_rows``: 16x16x32, 64x64x64, 128x128x64).
# * ``cover_taps_x3`` (with ``cover_taps``): a 3x3 filter, padding 1, on one 3x3
#   image, cpg = 2*d*tile_k: Kgemm = 18*d*tile_k, so each of the d slices is 18 K
#   tiles (9 pairs, the uniform-tap loop) and a tap holds d pairs: the slice starts
#   and the second pair's tap (``tp_tap`` at ``k_begin`` and ``k_begin + 2*tile_k``)
#   are not multiples of X = 3 (plain: tap 1; degree 2: slice 1 starts inside tap
#   4), so ``tp_y = tp_tap / X`` has a remainder (``cover_taps``'s 2x2 taps always
#   divide) and the loop's x wrap at X*dil_w runs with X > 2, moving y.
# * ``cover_kwalk_drift`` (channel vectors, plain and cluster; two-stage has
#   ``cover_diff_hok``'s slices of 25 tiles): cpg 8 on a Y x 5 filter, at least 12 K tiles
#   in slice 0: no tile carries a channel (tile_k mod 8 = 0), so a channel wrap that leaves
#   ``k_c`` one high on every tile without a carry (``k_cw``'s 0 made -1 in the K loop)
#   reaches cpg on tile 10 or 11 and carries a tap early (:func:`_kwalk_carry_problems`).
# * ``cover_kwalk_c<j>``, ``cover_kwalk_x<j>`` (row-slot kernels, j = 1 .. tile_k/8 - 1):
#   the first K step (block kwalk) of slot j (K offset 8j) meets its channel carry with
#   ``k_cn == cpg`` (cpg = tile_k + 8j, a d x 2 filter with right padding: a missed carry
#   keeps x, so a padding pixel reads data) and its x carry with ``k_xdn == X`` (cpg 8,
#   X = tile_k/8 + j, full padding: a missed x wrap reads X pixels on, not the next row);
#   drawn by `parity mutate --per-kind 0` against the 32x32x32 w1x1 kwalk's `k_cyc`
#   (slots 1, 3) and `k_cyx` (slot 1) ``uge -> ugt`` survivors.
# * ``cover_taps_cr<r>`` (tap-loop kernels, r = 2 tile_k -+ 1): cpg = lcm(8, r) (504, 520 at
#   tile_k 32), a Y x 1 filter, Y the least that gives a slice the tap loop's other entry
#   conditions with a tap boundary inside a tile pair (:func:`tap_test_rows`; plain Y 2,
#   degree 2 Y 2 and 9, S 4 Y 2 and 17, S 8 Y 2 and 33): the uniform-tap test ``cpg urem
#   2*tile_k`` made ``urem r`` takes the tap loop there, wrong. A tile count ``ntiles =
#   (span + tile_k - 1) udiv tile_k`` made ``udiv tile_k + 1`` is one short on a slice of q
#   K tiles whose last tile holds s <= q K indices (span = (q-1) tile_k + s): plain these
#   two (q 32 and 33, s 16) and ``cover_kwalk_drift`` (q 17, s 8; at every degree its Y
#   is grown until a slice has one, :func:`short_last_tile`) give one.
# * ``cover_taps_odd`` (tap-loop kernels at degree d > 1): cpg = 2 tile_k on a
#   (5d/2) x 1 filter: slices of five K tiles, on tile pairs in a tap-loop cpg, so the
#   tap loop's odd-count test ``tp_odd = ntiles & 1`` sends them to the K walk; made
#   ``& 0`` or ``& 2`` (5 & 2 == 0), or a tile count ``udiv tile_k - 1`` (six tiles), the
#   tap loop runs a tile pair past the slice end (no K mask there): drawn against
#   spk2 64x64's survivors. ``cover_taps_empty`` (cluster, S >= 3): one tile pair (cpg
#   2 tile_k, 1x1): slices 0 and 1 of one K tile, slice 2 empty at k_begin = 2 tile_k,
#   where the prologue's ``any_tile = ntiles > 0`` made ``>=`` enters the tap loop (ntiles
#   0 is even) and reads past Kgemm (skc4 32x32x32's survivor).
# * ``cover_kwalk_dil`` (two-stage, channel vectors): ``cover_kwalk_mid`` at dilation (1, 2), so
#   the carry's byte step k_dcy is not 0 in the two-stage K walk (spk4 64x64x64's `k_ks` survivor).
# * ``cover_odd_k9`` (padded pixel): K = kpg = 9, the 16-byte D test's K = 1 mod 8 edge.
# * ``cover_k1``, ``cover_k_tile1`` (vector_a = vector_b = 1): Kgemm = 1 and tile_k + 1, the
#   tile count's edges where the span is one K index past a tile boundary.
# * ``cover_unit_first``, ``cover_unit_loop``: 1 x 1 images, every A slot's pixel tests one long in
#   the first K tile and in the K loop (:mod:`parity.sim.cover_unit`).
# With the fixed problems the last M tile ends at every row phase M % 8 (a
# lane's WMMA rows are 8h + e): a row mask off by one stores row M, which in a
# workspace is the next slab's row 0 (a race the shadow detector names).
# The fixed problems supply partial M and N tiles with several rows and columns.
def conv_cover_problems(full: dict) -> tuple:
    """Problems (the CONV_PROBLEMS tuple layout) derived from one conv spec; with
    :func:`problem_degree` (two-stage binaries run them at degree 2: the ``_spk``
    binary is the same for every degree, and 2 gives a first slice of two K tiles):

    Each problem's reason is in the comment block above this function."""
    tm, tn, va = full["tile_m"], full["tile_n"], full["vector_a"]
    S = full["split_k_cluster"]
    pix = va in C.PIXEL_VECTORS
    big, small, odd = _cover_geometries(full)

    def prob(name, g, W, K):
        return (name, 1, g["C"], 1, W, K, g["Y"], g["X"], (1, 1), g["pad"], (1, 1), 1)
    # cluster: one full M tile (its S slices and the two-stage twin make it the dearest
    # problem; cover_narrow and the cl problems give the partial M tiles)
    out = [prob("cover_full_tile", big, tm if S else tm + 7, tn), prob("cover_narrow", small, tm + 1, tn + 4)]
    # two images, padding at both ends: a bottom (right) padding tap one past H (W) reads
    # image 1's row 0 (the next row's pixel 0), not zero, when an input mask is one long
    out.append(("cover_pad_images", 2, small["C"] if pix else 8, 1, tm // 2 - 2, 8, 3, 3, (1, 1), (2, 2), (1, 1),
                1))
    if pix:
        out.append(_pad_deep_problem(full))
        # kpg 16: the 16-byte D chunk at columns 16..23 starts at kpg, so its column mask
        # `e_nok = e_n < kpg` one long writes the next row's columns 0..7 (the padded-pixel
        # class's every-site run: no other problem of it has kpg = 16 mod 32 on the wide path)
        out.append(("cover_wide_n16", 1, va, 8, 8, 16, 3, 3, (1, 1), (1, 1), (1, 1), 1))
        # K = kpg = 9 at cpg = vector_a: (K | kpg) & 7 == 1, so a 16-byte D test that admits
        # K = 1 mod 8 (`d_klow` and 7 -> 6, `d_wide` == 1) stores 8 columns past a 9-wide row
        # (odd_k9's C = 8 is not admitted here: the padded-pixel class's every-site run)
        out.append(("cover_odd_k9", 1, va, 3, 3, 9, 1, 1, (1, 1), (0, 0), (1, 1), 1))
    if conv_split(full) and not S and full["epilogue"] == "default":
        out.append(prob("cover_odd_slab", odd, tm + 5, tn + 3))
    if conv_split(full):
        out.append(prob("cover_rows", small, tm + 2, C.OUT_VEC * 2))
    if C.tap_loop_kernel(full):
        out += _tap_loop_problems(full)
    if C.row_slots(full):
        out += _row_slot_problems(full)
    elif C.tap_rows(full):   # row slots in the tap loop only: its pixel tests on padding with data behind
        out += _row_slot_problems(full)[1:]
    if not S and not pix:
        out += _kwalk_problems(full)
    if not pix and not C.row_slots(full):
        out.append(_first_tile_hok_problem(full))
    if not pix and full["vector_a"] == full["vector_b"] == 1:
        # element loads on both sides admit every cpg, so Kgemm = Y*X*cpg takes every value:
        # Kgemm = 1 (k_live = Kgemm > 0 made > 1 skips the only tile) and tile_k + 1 (the
        # tile count's span one short, `k_span = Kgemm - 1` or `k_span_up`'s tile_k - 1 made
        # tile_k - 2, drops the last tile, which holds one K index: wavelet4 va1's every-site
        # survivors); K = 8 suits every epilogue
        out.append(("cover_k1", 1, 1, 3, 3, 8, 1, 1, (1, 1), (0, 0), (1, 1), 1))
        out.append(("cover_k_tile1", 1, full["tile_k"] + 1, 3, 3, 8, 1, 1, (1, 1), (0, 0), (1, 1), 1))
    # three full N tiles (kpg = 3 tile_n) on one M tile: an N tile origin `by * tile_n` made
    # `by * (tile_n - 1)` recomputes overlapping columns identically with two tiles, but leaves
    # the last two columns of the third unwritten (drawn by the every-site run of plain 64x64x32)
    out.append(("cover_n_tiles", 1, small["C"] if pix else 8, 1, 8, 3 * tn, 1, 1, (1, 1), (0, 0), (1, 1), 1))
    if "clamp" in full["acc_epilogue"]:
        # clamp bounds of -0 (checks.CONV_ZERO_BOUNDS) over zero weights and bias: every
        # result is +0 exactly, and a bound compare made non-strict stores -0. M = tile_m + 1
        # and kpg = tile_n + 8 put such results on every row and every column of the first
        # tile, so every epilogue element's compare meets one, whatever the epilogue's
        # element-to-channel map (the cshuffle stores' 4-wide chunks too)
        # (bit-exact data; the reduce's twin is numerics_fused.ZERO_BOUNDS)
        out.append(prob("cover_clamp_zero", small, tm + 1, tn + 8))
        # the same on the narrow D paths ((K | kpg) & 7 == 4: the default epilogue's scalar
        # stores, the cshuffle epilogue's 4-wide stores; admitted where kpg must be a multiple of 4)
        out.append(prob("cover_clamp_zero_narrow", small, tm + 1, tn + 4))
    if not pix:
        out += _kwalk_carry_problems(full)
    if C.tap_loop_kernel(full):
        out += _tap_test_problems(full)
    if C.tap_tile_kernel(full):
        out += _tap_tile_problems(full)
    if conv_split(full) and not S:
        out += [prob(f"cover_bound_m{r}", _bound_geometry(full, odd), r, k) for r, k in boundary_phases(full)]
    # every A slot's pixel tests one long, first K tile and K loop (parity/sim/cover_unit.py)
    out += unit_problems(full, S or (2 if conv_split(full) else 1))
    return tuple(out)


def _first_tile_hok_problem(full: dict) -> tuple:
    """``cover_first_hok``: 2 images of 8 x tile_m/8 (image 0 is M tile 0; its last output
    row lies in the tile's bottom rows, the highest A row slot), a 3x1 filter with padding
    (1, 0), cpg 8: the first K tile (the K walk's prologue) puts filter row 2 at K offset 16
    on those rows, a bottom padding tap at ``hi == H`` with image 1's row 0 behind, so a
    first-tile pixel test one long (``a_hok`` ult -> ule) reads data, not zero (drawn by
    the every-site run of plain 64x64x32, docs/sim.md)."""
    tm = full["tile_m"]
    return ("cover_first_hok", 2, 8, 8, max(1, tm // 8), 8, 3, 1, (1, 1), (1, 0), (1, 1), 1)


def _pad_deep_problem(full: dict) -> tuple:
    """``cover_pad_deep``, the padded-pixel K loop: an 8x8 filter, padding 4, on 4 images of
    4x4 (K tiles of tile_k / slot taps: every slice has K-loop tiles, also at degree 4), so
    the K loop's filter rows reach a bottom padding tap at hi == H on every A slot's rows
    with the next image's row 0 behind (an `a_hok` one long reads data, not zero)."""
    return ("cover_pad_deep", 4, full["vector_a"], 4, 4, 8, 8, 8, (1, 1), (4, 4), (1, 1), 1)


def _bound_geometry(full: dict, odd: dict) -> dict:
    """The reduction of the ``cover_bound_m*`` problems: two slices with data in row 0 (else
    slab 1's row 0 may equal a stray row M: no race)."""
    tk, va = full["tile_k"], full["vector_a"]
    if va not in C.PIXEL_VECTORS:
        return odd
    xs = 2 * -(-tk // C.pixel_slot(va)) - 1  # two K tiles, slice 1 from the centre + 1
    return dict(C=va, Y=1, X=xs, pad=(0, xs // 2))


def _cover_geometries(full: dict) -> tuple[dict, dict, dict]:
    """(big, small, odd) of :func:`conv_cover_problems`: channels per group ``C``, filter
    ``Y`` x ``X`` and padding of its full-tile, shortest and odd-slab reductions."""
    tk, va, S = full["tile_k"], full["vector_a"], full["split_k_cluster"]
    if va in C.PIXEL_VECTORS:
        return (dict(C=va, Y=5, X=5, pad=(2, 2)), dict(C=va, Y=1, X=1, pad=(0, 0)),
                dict(C=va, Y=3, X=3, pad=(1, 1)))
    c = 4 * S * tk + 8 if S else (6 * tk + 8 if conv_split(full) else 3 * tk + 8)
    return (dict(C=c, Y=1, X=1, pad=(0, 0)), dict(C=8, Y=1, X=1, pad=(0, 0)),
            dict(C=tk + 8, Y=1, X=1, pad=(0, 0)))


def _tap_loop_problems(full: dict) -> list:
    """The ``cover_taps*`` problems of :func:`conv_cover_problems` (kernels with the uniform-tap K loop)."""
    tm, tn, tk, S = full["tile_m"], full["tile_n"], full["tile_k"], full["split_k_cluster"]
    d = S or (2 if conv_split(full) else 1)
    w = tm // 4 + 4
    return [
        ("cover_taps", 2, 4 * d * tk, 1, w, tn + 4, 2, 2, (1, 1), (1, 1), (1, 1), 1),
        # a 3x3 on the tap loop: slices start at taps that are not multiples of X
        ("cover_taps_x3", 1, 2 * d * tk, 3, 3, 8, 3, 3, (1, 1), (1, 1), (1, 1), 1),
        # the first trip of the tap loop steps to the slice's third tile pair: no channel
        # wrap there (three pairs a tap), and a channel and x wrap there (one pair a tap, X 2)
        ("cover_taps_first", 1, 6 * tk, d, 1, 8, d, 1, (1, 1), (0, 0), (1, 1), 1),
        ("cover_taps_xwrap", 1, 2 * tk, 2 * d, 2, 8, 2 * d, 2, (1, 1), (0, 0), (1, 1), 1),
    ] + _tap_slot_problems(full, d)


def _tap_slot_problems(full: dict, d: int) -> list:
    """A slot j holds tile rows [j*R, (j+1)*R); cover_taps does not put a padding tap with
    data behind into every slot's rows (64x64x64: 4 slots of 16 rows; 64x64x32: 2 of 32, by
    the every-site run of plain 64x64x32), so each slot's rows get
    their own image of 2 x R/2 output pixels (1 x (R/2 - 1) input, 2x2, padding 1),
    tile_m/R + 1 images, so that every slot of M tile 0 holds a right (wi == W) and a
    bottom (hi == H) padding tap that lies on data (the next image). The prologue's pairs
    sit on every slice's first tap; ``cover_taps_slots_pro``: a 1x1 filter with padding 1
    puts right and bottom padding pixels (3 x (W+2) output a 1 x W image, W = R/3 - 2)
    into every slot's rows there."""
    tm, tn, tk = full["tile_m"], full["tile_n"], full["tile_k"]
    rows = tm // -(-tm * tk // C.CHUNK // (C.WAVE * full["waves_m"] * full["waves_n"]))
    if C.row_slots(full) or C.tap_rows(full):
        # row slots share one pixel, and a tap-rows kernel's tap loop has one pixel a thread
        # (its rows: r threads a row): the per-slot row layout these problems are drawn for is
        # the K walk's, which their cpg = 4 d tile_k never runs; _row_slot_problems'
        # cover_rows_tap puts the padding pixels with data behind into the tap loop's rows
        # (stop 53: at 16x16x32 cover_taps_slots_pro was not even admitted, W = 0; dropping
        # both took the skc15 128x128x64 plan from 118 to 85 s, mutation and coverage below)
        return []
    return [("cover_taps_slots", tm // rows + 1, 4 * d * tk, 1, rows // 2 - 1, tn + 4, 2, 2, (1, 1), (1, 1), (1, 1), 1),
            ("cover_taps_slots_pro", tm // rows + 1, 4 * d * tk, 1, rows // 3 - 2, tn + 4, 1, 1, (1, 1), (1, 1),
             (1, 1), 1)]


def _row_slot_problems(full: dict) -> list:
    """Row-slot kernels (32x32x32 w1x1: a thread's four A slots are the four chunks of
    its own tile row, one pixel): a 1x1 filter with padding 1 on 2 images of 2 x 3, so
    every chunk of a row lies on the same tap and the last output row (``hi == H``: image
    1's row 0 behind) and column (``wi == W``: the next row's pixel 0 behind) are padding
    pixels on data: a pixel test one long reads data, not zero. ``cover_rows_first``:
    cpg = (2d - 1) tile_k (an odd number of K tiles: the K walk) puts those pixels into
    the first K tile's four slots (the other problems' first tile holds filter row 0 on
    slots 0-2, which never meets the bottom padding); ``cover_rows_tap``: cpg = 4 d
    tile_k, the tap prologue's pair and a trip of the uniform-tap loop on the same
    pixels (drawn by `parity mutate --per-kind 0` against the class's `a_hok`, `a_wok`,
    `tp_hok`, `tp_wok` survivors, docs/sim.md)."""
    tk, S = full["tile_k"], full["split_k_cluster"]
    d = S or (2 if conv_split(full) else 1)
    return [("cover_rows_first", 2, (2 * d - 1) * tk, 2, 3, 8, 1, 1, (1, 1), (1, 1), (1, 1), 1),
            ("cover_rows_tap", 2, 4 * d * tk, 2, 3, 8, 1, 1, (1, 1), (1, 1), (1, 1), 1)]


def _kwalk_problems(full: dict) -> list:
    """The K walk's problems of :func:`conv_cover_problems` (two-stage, channel vectors)."""
    tn = full["tile_n"]
    return [
        # the K walk's middle trips (per K-loop iteration class): at degree 2 each slice is
        # ten or nine K tiles (five trips) of a 5x5 at cpg 24 (a filter row every 3.75
        # tiles: x wraps in the middle trips' first halves), and a 4-column N tile (the
        # B row mask false in every trip)
        ("cover_kwalk_mid", 1, 24, 5, 5, tn + 4, 5, 5, (1, 1), (2, 2), (1, 1), 1),
        # drawn by `parity mutate --differential` (seed 0) against the K-loop survivors of
        # spk2 64x64 (docs/sim.md): a bottom padding tap at hi == H on A slot 1's rows (the
        # K walk's `a_hok`)
        ("cover_diff_hok", 2, 56, 12, 10, 5, 4, 7, (2, 1), (3, 6), (1, 1), 1),
        # a right padding tap at wi == W in the tap prologue (`tp_wok`) on both A slots and
        # both tile pairs: the drawn (2, 2)-stride, pad-(3, 5) problem with stride_w 1 and
        # pad_w 4 (Wo 9, M 36: slot 1 holds image 1's pixels wo 5..8 of row ho 1; at degree
        # 2, cpg 64, slice 1 starts at tap 15 = (y 2, x 3), its second pair is x 4, so
        # wo 7 and wo 6 reach wi == W on a valid row hi 3 with the next row's data behind;
        # K 20, not 18: the cshuffle epilogue admits it too)
        ("cover_tap_wok", 2, 64, 5, 6, 20, 5, 6, (2, 1), (3, 4), (2, 1), 1),
        # (two-stage) cover_kwalk_mid at dilation (1, 2): the channel carry's byte step k_dcy =
        # dil_w*C*2 - cpg*2 is not 0, so a `k_ks = select k_cyc, k_kstepc, k_kstep` with its arms
        # swapped walks the wrong pixels (drawn against spk4 64x64x64's kloop_cmp survivor; plain
        # has cover_kwalk_drift at dilation (1, 2))
    ] + ([("cover_kwalk_dil", 1, 24, 5, 9, tn + 4, 5, 5, (1, 1), (2, 2), (1, 2), 1)] if conv_split(full) else [])


def _kwalk_carry_problems(full: dict) -> list:
    """The K walk's carries (channel ``k_cyc``, x ``k_cyx``, ``k_cw`` the channel wrap) of
    :func:`conv_cover_problems` (channel vectors: plain, two-stage at degree 2, cluster at S;
    d = 1, 2, S). ``cover_kwalk_drift`` (plain, cluster): cpg 8 (sb = tile_k mod cpg = 0: no tile carries a
    channel) on a Y x 5 filter, padding 0, Y the least with Kgemm = 40 Y > 11 d tile_k and
    a slice whose last K tile is short (:func:`short_last_tile`), so slice 0 is at least 12
    K tiles: a wrap that leaves k_c one high on each tile without a carry (``k_cw``'s 0
    made -1) reaches cpg after 8 K-loop steps and carries a tap early (tile 10 of the
    one-tile walk, 11 of the two-deep walk, whose kwalk steps tiles 1 and 2). A side x side
    output (side = isqrt(tile_m - 1): one M tile) of a (Y + side - 1) x (side + 8) image,
    dilation (1, 2): every tap on data, so the early tap and a missing last tile show in D,
    and the carry's byte step ``k_dcy = dil_w*C*2 - cpg*2`` is not 0 (a ``k_ks`` select with
    its arms swapped adds it on every tile). Row-slot
    kernels (slot j at K offset 8j of every row: one K state per slot for all threads) also
    the first step's (kwalk) carries exactly at the limit, with right padding so that a
    missed carry (x one short, same byte offset at dilation 1) reads data, not zero:
    ``cover_kwalk_c<j>`` cpg = tile_k + 8j (slot j's k_cn = 8j + tile_k == cpg), a d x 2
    filter, padding (0, 1); ``cover_kwalk_x<j>`` cpg 8 (slot j on tap j, a K tile sa =
    tile_k / 8 taps) on a 2d x (sa + j) filter, full padding, a 2 x 3 image: slot j's x
    steps from j to sa + j == X (a missed x wrap reads the pixel X to the right, W != X,
    not the next row's). Slot 0 starts at (c 0, x 0) and never carries in the first step
    (x + tile_k / cpg mod X < X): its strict and non-strict compares agree there."""
    tm, tk, S = full["tile_m"], full["tile_k"], full["split_k_cluster"]
    d = S or (2 if conv_split(full) else 1)
    Y = -(-(11 * d * tk + 1) // (8 * 5))  # Y x 5 taps of 8 channels: 11 d tile_k < Kgemm
    while not short_last_tile(40 * Y, d, tk):
        Y += 1
    side = math.isqrt(tm - 1)
    out = []
    if S or not conv_split(full):  # two-stage: cover_kwalk_mid, cover_diff_hok (slices of 25 tiles)
        out.append(("cover_kwalk_drift", 1, 8, Y + side - 1, side + 8, 8, Y, 5, (1, 1), (0, 0), (1, 2), 1))
    if C.row_slots(full):
        out += [(f"cover_kwalk_c{j}", 1, tk + 8 * j, d + 1, 3, 8, d, 2, (1, 1), (0, 1), (1, 1), 1)
                for j in range(1, tk // 8)]
        sa = tk // 8  # taps a K tile steps at cpg 8
        out += [(f"cover_kwalk_x{j}", 1, 8, 2, 3, 8, 2 * d, sa + j, (1, 1), (2 * d - 1, sa + j - 1), (1, 1), 1)
                for j in range(1, tk // 8)]
    return out


def _tap_test_problems(full: dict) -> list:
    """The uniform-tap loop's entry test ``tp_cr = cpg urem 2*tile_k`` (kernels with the
    tap loop): ``cover_taps_cr<r>`` for r = 2 tile_k - 1 and 2 tile_k + 1, cpg = lcm(8, r)
    (504 and 520 at tile_k 32: not multiples of 2 tile_k, so a tile pair crosses a tap
    boundary) on the shortest Y x 1 filter (:func:`tap_test_rows`) that gives a slice the
    loop's other entry conditions (a slice start on a tile pair, an even tile count at
    degree > 1) with a tap boundary inside: a test by r takes the uniform-tap loop there,
    wrong. ``cover_taps_odd`` (degree > 1, the comment block above). One image of Y x 7,
    padding 0 (every tap on data). Their slices of q K tiles
    with a last tile of s <= q K indices (plain: q 32 and 33, s 16) also make a tile count
    ``(span + tile_k - 1) / (tile_k + 1)`` one short."""
    tk, S = full["tile_k"], full["split_k_cluster"]
    d = S or (2 if conv_split(full) else 1)
    out = []
    for r in (2 * tk - 1, 2 * tk + 1):
        cpg = 8 * r // math.gcd(8, r)
        Y = tap_test_rows(tk, d, cpg)
        if Y:
            out.append((f"cover_taps_cr{r}", 1, cpg, Y, 7, 8, Y, 1, (1, 1), (0, 0), (1, 1), 1))
    if d > 1:  # slices of five K tiles: odd (the K walk), 5 & 2 == 0
        Y = 5 * d // 2
        out.append(("cover_taps_odd", 1, 2 * tk, Y, 7, 8, Y, 1, (1, 1), (0, 0), (1, 1), 1))
    if S >= 3:  # one tile pair: slices 0 and 1 of one K tile, slice 2 empty at k_begin 2 tile_k
        out.append(("cover_taps_empty", 1, 2 * tk, 2, 7, 8, 1, 1, (1, 1), (0, 0), (1, 1), 1))
    return out


def _tap_tile_problems(full: dict) -> list:
    """The tap-tile loop's problems (kernels with it, ``C.tap_tile_kernel``; d = 1 plain, 2
    two-stage, S cluster): cpg an odd multiple of tile_k, so no tile pair lies in one tap
    and every tile does. ``cover_tt_odd``: cpg = tile_k on a 3 x 3d filter (one tile a tap:
    every step wraps the channel; x wraps every 3d tiles), 9 tiles a slice, odd: the
    phantom tile; ``cover_tt_even``: cpg = 3 tile_k on a 2 x 2d filter, 12 tiles a slice
    (even: no phantom), a channel wrap every third step; ``cover_tt_x1``: cpg = tile_k on
    a 5d x 1 filter (every tap step wraps x); ``cover_tt_odd3``: the same at cpg = 3 tile_k
    (15 tiles a slice, odd, the first steps within a tap); ``cover_tt_left``: cpg = tile_k on
    a 1 x 5d filter, padding (0, 1): every slice's first tile (the phantom's partner) is a
    tap whose rows are valid, so its x (``xd``, the ``wi`` test) matters at the left and
    right padding (drawn against plain 64x64x32's ``tt_xd`` select_swap survivor: the first
    tile's taps of the other problems lie in the top padding); ``cover_tt_cr<r>``, r =
    tile_k -+ 1: cpg = 8r (248 and 264 at tile_k 32), a 2d x 1 filter: a tap-tile test
    ``cpg urem r`` takes the loop there, where tiles cross taps; ``cover_tt_xstep``: cpg =
    tile_k on a 2d x 1 filter, padding 1, slices of two tiles: the prologue's step to the
    second tile wraps x (X = 1), at the left and right padding (a wrong ``xd`` there reads
    data, not zero); ``cover_tt_slots`` (:func:`_tap_tile_slot_problems`). Padding 1 on 2 images of 1 x w (w = tile_m/4
    + 4, as ``cover_taps``): right and bottom padding taps on data (the next row's pixel 0,
    image 1's row 0), so a pixel test one long reads data, not zero. ``cover_tt_even`` has
    tile_n + 4 output channels (every B slot's row test both ways, a partial second N
    tile), the others 8 (one N tile)."""
    tm, tn, tk, S = full["tile_m"], full["tile_n"], full["tile_k"], full["split_k_cluster"]
    d = S or (2 if conv_split(full) else 1)
    w = max(tm // 4 + 4, 3 * d)
    return [("cover_tt_odd", 2, tk, 1, w, 8, 3, 3 * d, (1, 1), (1, 1), (1, 1), 1),
            ("cover_tt_even", 2, 3 * tk, 1, w, tn + 4, 2, 2 * d, (1, 1), (1, 1), (1, 1), 1),
            ("cover_tt_x1", 2, tk, 5 * d, w, 8, 5 * d, 1, (1, 1), (1, 0), (1, 1), 1),
            ("cover_tt_odd3", 2, 3 * tk, 5 * d, w, 8, 5 * d, 1, (1, 1), (1, 0), (1, 1), 1),
            ("cover_tt_left", 2, tk, 1, w, 8, 1, 5 * d, (1, 1), (0, 1), (1, 1), 1),
            ("cover_tt_xstep", 2, tk, 2, 6, 8, 2 * d, 1, (1, 1), (1, 1), (1, 1), 1)] + _tap_tile_slot_problems(full, d) + [
        (f"cover_tt_cr{r}", 1, 8 * r, 2 * d, 7, 8, 2 * d, 1, (1, 1), (0, 0), (1, 1), 1) for r in (tk - 1, tk + 1)]


def _tap_tile_slot_problems(full: dict, d: int) -> list:
    """``cover_tt_slots`` (d <= 2): the tap-tile prologue's four tiles (its four voffset sets)
    on taps that each hold a right (``wi == W``) and a bottom (``hi == H``) padding pixel
    on data, in every A slot's rows. cpg = tile_k (a tap a tile) on a Y x X filter with
    full padding (Y, X), so every tap has both; 2 x 2 (4 tiles) at d = 1, 2 x 4 (two
    slices of 4) at d = 2, even counts (no phantom). tile_m/R + 1 images of R = 32 output
    pixels ((H + Y + 1) x (W + X + 1) = 4 x 8), so slot j's rows (R = 32 at 64x64x32;
    64x64x64's tap rows test one pixel a thread) are image j's pixels, its last row and
    column the padding, the next image's data behind. Drawn against plain 64x64x32's
    and 64x64x64's ``tp_hok`` / ``tp_wok`` boundary survivors in block ``taptile_pro``;
    at d > 2 no 32-pixel image holds a 2 x 2d filter's padding (not drawn)."""
    tm, tn, tk = full["tile_m"], full["tile_n"], full["tile_k"]
    if d > 2:
        return []
    X = 2 * d
    return [("cover_tt_slots", tm // 32 + 1, tk, 1, 7 - X, tn + 4, 2, X, (1, 1), (2, X), (1, 1), 1)]


def short_last_tile(kg: int, d: int, tk: int) -> bool:
    """Whether a reduction of ``kg`` sliced by the rule ks = ceil(ceil(kg / d) / tk) * tk
    has a slice of q K tiles, q odd, whose last tile holds s <= q K indices: there a tile
    count ``(span + tk - 1) udiv (tk + 1)`` is q - 1, one short (span + tk - 1 = tk q + s -
    1), and even, so a two-deep loop (two tiles a trip) also runs one trip fewer."""
    ks = -(-(-(-kg // d)) // tk) * tk
    for kb in range(0, kg, ks):
        span = min(ks, kg - kb)
        q = -(-span // tk)
        if q % 2 and span - (q - 1) * tk <= q:
            return True
    return False


def tap_test_rows(tk: int, d: int, cpg: int, most: int = 40):
    """The least Y in [2, most] such that a Y x 1 filter at ``cpg`` (cpg mod 2*tk != 0),
    sliced by the rule ks = ceil(ceil(Y*cpg / d) / tk) * tk, has a slice with data that
    starts on a tile pair, holds an even number of K tiles (degree > 1) and has a tap
    boundary that is not on a tile pair strictly inside; None when none does."""
    for Y in range(2, most + 1):
        kg = Y * cpg
        ks = -(-(-(-kg // d)) // tk) * tk
        for s in range(d):
            kb, ke = s * ks, min(kg, (s + 1) * ks)
            if kb >= ke or (d > 1 and (kb % (2 * tk) or -(-(ke - kb) // tk) % 2)):
                continue
            if any(kb < t * cpg < ke and t * cpg % (2 * tk) for t in range(1, Y)):
                return Y
    return None


def boundary_phases(full: dict) -> tuple:
    """(M, kpg) of the *boundary* problems of a two-stage binary: one M tile whose
    last row is each row phase a lane element's mask can end on, so every row mask
    compare ``m < M`` of the epilogue sees ``m == M`` (boundary coverage,
    parity.sim.coverage): a mask one long then stores row M of slab s, which is row 0
    of slab s + 1 (a race the shadow detector names). The default epilogue's lane
    holds rows ``w*wr + 16*b + 8*h + e`` of its wave's ``wr = tile_m / waves_m`` rows
    (WMMA block b, lane half h, element e: one compare per (b, e)), so it needs the
    wr / 2 phases (b, e), each with a (w, h) chosen in turn so that its 16-row wide
    stores are all reached too; the cshuffle epilogue needs only one per store slot
    (rows ``step*q + tid / (tile_n / 4)``, step = threads * 4 / tile_n: one compare
    per q).
    cshuffle: kpg steps through the multiples of 4 below tile_n (the column masks'
    phases); default: kpg odd (its per-element slab stores, one row compare per
    element and N block; the fixed problems reach the 16-row wide stores' few) and
    above tile_n - 16, so every N block's lanes store (a row mask is visible only
    where the column mask holds). Plain binaries need none (a row M store lies past D's
    num_records, dropped: the argued equivalence of docs/sim.md), nor cluster ones
    (they store D)."""
    tm, tn, wm = full["tile_m"], full["tile_n"], full["waves_m"]
    wr = tm // wm
    if full["epilogue"] == "cshuffle":
        step = WAVE * wm * full["waves_n"] * C.OUT_VEC // tn  # rows one store slot of the workgroup spans
        rows = [max(step * q + (step - 1 - q % step), 1) for q in range(tm // step)]
    else:
        rows = []
        for i in range(wr // 2):
            b, e = divmod(i, 8)
            w, h = divmod((e + 1) % (2 * wm), 2)
            rows.append(w * wr + 16 * b + 8 * h + e)
    if full["epilogue"] == "cshuffle":  # every slot's lanes span the columns: kpg steps its phases
        return tuple((r, 4 * (1 + i % (tn // 4 - 1))) for i, r in enumerate(rows))
    # default: an odd K takes the per-element (narrow) slab stores; every N block holds data
    return tuple((r, tn - 1 - 2 * (i % 7)) for i, r in enumerate(rows))


def problem_orders(name: str) -> tuple:
    """The wave orders a problem runs in: the boundary problems (``cover_bound_m*``, a
    dozen per two-stage config, each there for one row phase's race on slab 1's row
    0, which the shadow detector names in either order) only forward; the others both."""
    return ("forward",) if name.startswith("cover_bound_m") else ("forward", "reverse")


def problem_degree(full: dict, name: str, degree: int) -> int:
    """The degree a problem runs at: the config's, but 2 for the derived
    (``cover_*``) problems of a two-stage binary (any degree > 1 launches the
    same ``_spk`` binary)."""
    if name.startswith("cover_") and conv_split(full) and not full["split_k_cluster"]:
        return 2
    return degree


def conv_split(full: dict) -> bool:
    return full["split_k"] > 1


def conv_classes(full: dict, plan: dict, reduction: int) -> frozenset:
    """Tile classes one conv launch (its plan, parity.sim.numerics.parse_launch_plan)
    hits. ``reduction``: the K loop's length (Kgemm, or Y*X*pixel slot)."""
    a = plan["args"]
    M, kpg, K = int(a["M"]), int(a["kpg"]), int(a["K"])
    tm, tn, tk = full["tile_m"], full["tile_n"], full["tile_k"]
    ks = plan.get("ks", reduction) if conv_split(full) else reduction
    out = set()
    if M >= tm and kpg >= tn and min(ks, reduction) >= tk:
        out.add("interior")
    if M % tm:
        out.add("last_m")
    if kpg % tn:
        out.add("last_n")
    if reduction % tk or (conv_split(full) and (reduction % ks) % tk):
        out.add("last_k")
    if kpg % C.D_VEC:
        out.add("partial_vector")
    if conv_split(full) and (M * K) % 2 and plan["ks_count"] >= 2:
        out.add("odd_slab")
    if full["split_k_cluster"]:
        S = full["split_k_cluster"]
        if M >= tm:
            out.add("fold_rows")
        data = plan.get("data_slices", S)
        out.add("every_slice" if data == S else "empty_slices")
    return frozenset(out)


def conv_required(full: dict) -> tuple:
    """The conv classes an admitted problem of ``full`` can reach: ``odd_slab``
    only for split forms with the default epilogue (cshuffle and the cluster fold
    store 4 channels per vector, so kpg % 4 == 0 and M*K is even); the cluster
    classes only for cluster binaries; ``every_slice`` needs the cluster's
    S slices (always reachable: cpg = S*tile_k)."""
    out = ["interior", "last_m", "last_n", "last_k", "partial_vector"]
    if conv_split(full) and not full["split_k_cluster"] and full["epilogue"] == "default":
        out.append("odd_slab")
    if full["split_k_cluster"]:
        out += ["fold_rows", "every_slice", "empty_slices"]
    return tuple(out)


def required_classes(family: str, spec: dict) -> tuple:
    """The tile classes ``family``'s plan must hit for ``spec`` (a full spec, defaults
    filled); none for a family without tile classes (ir_core)."""
    if family == "conv_implicit_gemm":
        return conv_required(spec)
    if family == "conv_fwd_split_k_reduce":
        return reduce_required(spec)
    return ()


#: the large term of the order probes: exact in bf16 (2^20) and, as 2 * 2^14, in fp16
ORDER_BIG = {"bf16": (1.0, 2.0 ** 20), "fp16": (2.0, 2.0 ** 14)}


def order_probe(xs, ws_, dt: str, groups: int, ks: int):
    """Inputs (float32 NHWC ``xs``, KYXC ``ws_``, already representable in ``dt``) of a
    1x1 problem whose slab fold is order-sensitive: in every group, its first channel
    (slice 0) adds +P and channel ``ks`` (slice 1) -P to every output, P = 2^20
    (bf16) or 2^15 (fp16). Folded from slab 0, +P and -P cancel exactly before the
    other slabs are added; folded in another order the other slabs' low bits are
    absorbed into +-P first, so D gets other bits (a reversed fold shows in D, not
    only in fp32)."""
    x1, w1 = ORDER_BIG[dt]
    xs, ws_ = xs.copy(), ws_.copy()
    cpg = ws_.shape[-1]
    c2 = ks if ks < cpg else cpg - 1
    for g in range(groups):
        xs[..., g * cpg] = xs[..., g * cpg + c2] = x1
    ws_[..., 0] = w1
    ws_[..., c2] = -w1
    return xs, ws_


def reduce_order_probe(ws, ns: int) -> None:
    """Make the 8 elements after the first ``ns`` and the last 8 of a ``[ks][M*K]``
    workspace order-sensitive (in place; ks >= 3): slab 0 holds +2^20, slab 1 -2^20, the
    other slabs their random values scaled into (-0.1, 0.1): summed from slab 0 the two
    cancel exactly first, in another order the others' sum is rounded to a multiple of
    1/8 (fp32's ulp at 2^20), so only that order gives the reference bits. The others
    are small: a sum of sixteen slabs near 1000 hides the absorbed eighth in the bf16
    rounding (a reversed 16-slab tail survived that way), and equal ones (0.1 each) sum
    to multiples of 1/8 too often (a reversed 7-slab fold survived that way)."""
    if ws.shape[0] >= 3 and ws.shape[1] >= ns + 16:
        for sl in (slice(ns, ns + 8), slice(ws.shape[1] - 8, None)):  # the vector path and the tail
            ws[0, sl] = 2.0 ** 20
            ws[1, sl] = -2.0 ** 20
            ws[2:, sl] = np.fmod(ws[2:, sl], 1.0) * np.float32(0.1)


# -- K-deep problems and bit-exact data (issue 34, items 3 and 5) ----------------------------

#: (name, Y, X, pad, K tiles per full slice): an ordinary 3x3 with padding 1 on every
#: side; a tall filter (top/bottom padding) and a wide one (left/right padding)
DEEP_SHAPES = (("deep_3x3", 3, 3, (1, 1), 6), ("deep_tall", 7, 1, (3, 0), 4), ("deep_wide", 1, 7, (0, 3), 4))


def conv_deep_problems(full: dict) -> tuple:
    """K-deep problems (the CONV_PROBLEMS tuple layout) of one conv spec, run at the
    config's own degree d (1 plain, split_k, S) with bit-exact data
    (:func:`data_mode`): for each of :data:`DEEP_SHAPES`, the reduction Kr = Y*X*cpg
    (padded-pixel widths: Y'*X'*slot, the filter grown to fit) is the largest below
    T*d*tile_k, so the slicing rule (``ks = ceil(ceil(Kr/d)/tile_k)*tile_k``) gives
    d slices of T K tiles, the last one shorter (partial K tile); cpg a multiple of 8
    that tile_k does not divide where that is admitted (K tiles start inside a filter
    tap and cross tap boundaries). One image of H x W with H*W just below tile_m
    (one partial M tile, every A row slot holding rows), padding on both sides of
    the filter's long axis; kpg = tile_n (a full N tile: the 16-byte D paths)."""
    tm, tn, tk, va = full["tile_m"], full["tile_n"], full["tile_k"], full["vector_a"]
    d = full["split_k_cluster"] or full["split_k"]
    out = []
    for name, Y, X, pad, T in DEEP_SHAPES:
        top = T * d * tk - 1
        if va in C.PIXEL_VECTORS:
            slot = C.pixel_slot(va)
            taps = max(1, top // slot)          # grow the filter along its long axis
            if Y == X:
                Y = X = max(3, int(taps ** 0.5))
            elif Y > X:
                Y = max(Y, taps // X)
            else:
                X = max(X, taps // Y)
            pad = (Y // 2, X // 2)
            cpg = va
        else:
            cpg = max(8, 8 * (top // (Y * X * 8)))
            if cpg % tk == 0 and cpg > 8:
                cpg -= 8
        H = max(2, Y // 2 + 1) if Y > X else 7 if Y == X else 2
        W = max(1, (tm - 1) // H)
        out.append((name, 1, cpg, H, W, tn, Y, X, (1, 1), pad, (1, 1), 1))
    return tuple(out)


def deep_slicing_problem(full: dict, plan: dict) -> str | None:
    """What a K-deep problem's plan fails to give (None: at least three K tiles in
    every slice but the last, the last slice shorter than the others)."""
    a, tk = plan["args"], full["tile_k"]
    ks, kc = plan["ks"], plan["ks_count"]
    kr = ks * (kc - 1)
    if ks < 3 * tk:
        return f"at least three K tiles per slice (plan ks {ks}, tile_k {tk})"
    data = plan.get("data_slices", kc)
    kgemm = int(a["Kgemm"])
    if full["vector_a"] not in C.PIXEL_VECTORS and data > 1 and kgemm - ks * (data - 1) >= ks:
        return f"a last slice shorter than the others (Kgemm {kgemm}, ks {ks}, {data} slices with data; {kr})"
    return None


def data_mode(name: str) -> str:
    """``exact`` for the problems whose data make fp32 accumulation exact in any
    order (:func:`exact_values`; checked bit for bit against the RNE of the exact
    result): the K-deep problems and the epilogue-path problems ``wide_groups``
    (16-byte D stores), ``odd_kpg`` (scalar D stores) and ``cover_narrow``
    (narrow D stores on a full tile), ``cover_clamp_zero*`` (a clamp at bounds of -0);
    ``gauss`` (standard normal, tolerance) for the others."""
    return "exact" if name.startswith(("deep_", "cover_clamp_zero")) or \
        name in ("wide_groups", "odd_kpg", "cover_narrow") else "gauss"


#: bit-exact data: x = i * 2^-5, w = j * 2^-4 (products on a 2^-9 grid), bias k * 2^-9
EXACT_X, EXACT_W = 2.0 ** -5, 2.0 ** -4


def exact_values(rng, shape: tuple, kgemm: int, kind: str):
    """float32 values on a dyadic grid whose products and every partial fp32 sum
    of a reduction of ``kgemm`` terms are exact: integers |i| <= r times EXACT_X
    (``kind`` x) or EXACT_W (w), r = floor(sqrt(2^21 / kgemm)) capped at 255 (exact
    in bf16 and fp16), so sum |x*w| <= 2^21 grid steps of 2^-9 and a bias of
    |k| <= 2^12 steps, the scale 0.75 (2 more bits) and every order of the sum
    stay within fp32's 24 bits; the results carry about 13-18 significant bits, so
    bf16 and fp16 round (ties included)."""
    if kind == "bias":
        return (rng.integers(-4096, 4097, size=shape) * 2.0 ** -9).astype(np.float32)
    r = max(1, min(255, int((2.0 ** 21 / max(1, kgemm)) ** 0.5)))
    step = EXACT_X if kind == "x" else EXACT_W
    return (rng.integers(-r, r + 1, size=shape) * step).astype(np.float32)

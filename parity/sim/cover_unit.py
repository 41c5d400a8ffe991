"""Unit-image probes of the K walk's A pixel tests (docs/sim.md, "Coverage").

A pixel test one long (``a_hok = hi < H`` or ``a_wok = wi < W`` made ``<=``) loads
the pixel at ``hi == H`` (``wi == W``) instead of zero. That shows in D only where
that pixel lies on data: the next image's row 0 (the next row's pixel 0). The fixed
and derived problems of :mod:`parity.sim.cover` put such a padding tap on some A
slots and K-loop trips, but not on every slot of every tile class (the every-site
`kloop_cmp` run, docs/sim.md: 25 survivors on the va1/va2/va4, padded-pixel,
S = 15 128x128x64 and S = 4 64x64 classes).

On 1 x 1 images every output row is such a pixel, whatever the slot's row:

* ``cover_unit_first``: a 2x2 filter with padding 1 gives each image 2 x 2 output
  pixels; output (1, 0)'s tap (1, 1) is at ``hi == H``, output (0, 1)'s at ``wi ==
  W``, both with the next image's pixel 0 behind. tile_m / 4 + 1 images (M tile 0's last
  image has one behind it too);
  cpg 8 (the pixel width on the padded-pixel path): the four taps fill at most 32
  K indices, the first K tile (the prologue's loads) of every class.
* ``cover_unit_loop`` (channel vectors): a 3x3 filter with padding 1 on tile_m
  images (1 x 1 output each: one M tile; its last row has no image behind, but the
  K loop's slots hold rows of several threads): tap 5 = (1, 2) is at ``wi == W`` and tap
  7 = (2, 1) at ``hi == H``. cpg is the least multiple of 8 (not a multiple of 2
  tile_k, so the K walk runs, not the uniform-tap loop) for which each of the two
  taps holds a whole K tile at a K-loop trip of some slice at the problem's degree:
  a tile past the slice's first, and for the two-deep loop (two tiles a trip, the
  second half prefetching tile t + 3) one at an even index >= 2 and one at an odd
  index >= 3 (:func:`unit_loop_cpg`).
"""
from __future__ import annotations

from python_engine.facts import conv_kernel as C

#: The taps of a 3x3 filter with padding 1 on a 1 x 1 image that test one padding
#: pixel with data behind: 5 = (y 1, x 2) at wi == W, 7 = (y 2, x 1) at hi == H.
PROBE_TAPS = (5, 7)


def slice_starts(kgemm: int, degree: int, tile_k: int) -> tuple[int, range]:
    """``(ks, starts)``: the slice length (elements of K) and each slice's first K
    index, by the conv_launch rule ks = ceil(ceil(Kgemm / degree) / tile_k) * tile_k."""
    ks = -(-(-(-kgemm // degree)) // tile_k) * tile_k
    return ks, range(0, kgemm, ks)


def probe_tile_indices(cpg: int, tap: int, degree: int, tile_k: int, taps: int = 9) -> set:
    """Indices within their slice of the K tiles that lie wholly inside ``tap``
    (K indices [tap*cpg, (tap+1)*cpg)) of a ``taps``-tap filter at ``cpg`` channels."""
    kg = taps * cpg
    ks, starts = slice_starts(kg, degree, tile_k)
    lo, hi = tap * cpg, (tap + 1) * cpg
    return {(t - kb) // tile_k for kb in starts for t in range(kb, min(kb + ks, kg), tile_k)
            if t >= lo and t + tile_k <= hi}


def _loop_reached(idx: set, two_deep: bool) -> bool:
    """Whether tile indices ``idx`` include a K-loop load of every kind the loop has."""
    if two_deep:
        return any(i >= 2 and i % 2 == 0 for i in idx) and any(i >= 3 and i % 2 for i in idx)
    return any(i >= 1 for i in idx)


def unit_loop_cpg(tile_k: int, degree: int, two_deep: bool, limit: int = 4096) -> int | None:
    """The least cpg (a multiple of 8, not of 2 tile_k) for which every tap of
    :data:`PROBE_TAPS` holds a K-loop tile (:func:`_loop_reached`) at ``degree``;
    None when no cpg up to ``limit`` does."""
    for cpg in range(8, limit + 1, 8):
        if cpg % (2 * tile_k) == 0:
            continue
        if all(_loop_reached(probe_tile_indices(cpg, t, degree, tile_k), two_deep) for t in PROBE_TAPS):
            return cpg
    return None


def unit_problems(full: dict, degree: int) -> list:
    """The ``cover_unit_*`` problems (CONV_PROBLEMS layout) of one conv spec whose
    derived problems run at ``degree`` (:func:`parity.sim.cover.problem_degree`)."""
    tm, va = full["tile_m"], full["vector_a"]
    pix = va in C.PIXEL_VECTORS
    out = [("cover_unit_first", tm // 4 + 1, va if pix else 8, 1, 1, 8, 2, 2, (1, 1), (1, 1), (1, 1), 1)]
    if not pix:
        cpg = unit_loop_cpg(full["tile_k"], degree, C.two_deep(full))
        if cpg is not None:
            out.append(("cover_unit_loop", tm, cpg, 1, 1, 8, 3, 3, (1, 1), (1, 1), (1, 1), 1))
    return out

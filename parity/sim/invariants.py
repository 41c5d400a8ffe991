"""Cross-form invariants of the numerics oracle (docs/sim.md, "Cross-form invariants").

Forms of one computation that promise the same bits are compared bit for bit
on the same problem, degree and tile, besides each being compared with numpy:

* ``cluster == two-stage``: the cluster fold (``split_k_cluster = S``) and
  Stage 1 + Stage 2 (the same spec without the cluster, launched at degree S)
  give bit-identical D. Both slice the reduction by the same rule (ks, a
  multiple of tile_k), both compute each slice's fp32 partial tile with the
  same K loop, and both fold the slabs in fp32 from slab 0 in order and round
  once (DESIGN section 4; Stage 2 ``D = cast(sum over slices of ws)``). The
  cluster's trailing empty slabs are +0.0, which leaves every non-zero sum
  unchanged. A fold in any other order (S-1 .. 0) rounds differently.
* ``unrolled == loop``: the reduce kernel built for degree d and the one built
  for degree 0 (runtime ``ks_count = d``) give bit-identical D: both add slab
  0, 1, .., d-1 in order in fp32 and round once.
* ``numpy``: every form is within its plan's tolerance of the numpy reference
  (the plans' own check).
* ``plain ~ split``: a two-stage binary's D is within twice the conv tolerance
  of the plain binary's (split_k = 1) on the same problem: both are within the
  tolerance of the same reference.

This module holds the statements, the twin specs and the comparisons;
parity/sim/numerics.py adds the twin launches to its cases.
"""
from __future__ import annotations

import numpy as np

#: name -> (what must hold, why); printed by ``parity numerics`` and documented in docs/sim.md
INVARIANTS = {
    "cluster == two-stage": ("cluster fold and Stage 1 + Stage 2 give bit-identical D (same problem, degree, tile)",
                             "both fold the fp32 slabs from slab 0 in order and round once"),
    "unrolled == loop": ("the reduce built for degree d and for degree 0 (ks_count d) give bit-identical D",
                         "both add slabs 0..d-1 in order in fp32 and round once"),
    "numpy": ("every form within its plan's tolerance of numpy", "the plans' reference check"),
    "plain ~ split": ("two-stage D within 2x the conv tolerance of the plain binary's D",
                      "both are within the tolerance of one reference"),
}
SUMMARY = tuple(INVARIANTS)


def cluster_twin_spec(full: dict) -> dict:
    """The two-stage spec of a cluster spec (same tile, pipeline, epilogue; no cluster)."""
    return {**full, "split_k_cluster": 0}


def plain_twin_spec(full: dict) -> dict:
    """The plain (split_k = 1) spec of a two-stage spec."""
    return {**full, "split_k": 1}


def loop_twin_spec(spec: dict) -> dict:
    """The degree-0 (runtime loop) reduce spec of an unrolled one."""
    return {**spec, "degree": 0}


def _f32(bits: np.ndarray, dt: str) -> np.ndarray:
    if dt == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return bits.view(np.float16).astype(np.float64)


def same_bits(name: str, a: np.ndarray, b: np.ndarray, labels: tuple) -> list:
    """``[]`` when the 16-bit D arrays ``a`` and ``b`` are bit-identical (NaN
    included), else one line naming the invariant, the first element and the count."""
    a, b = a.reshape(-1), b.reshape(-1)
    bad = np.flatnonzero(a != b)
    if bad.size == 0:
        return []
    k = int(bad[0])
    return [f"invariant {name!r} violated: D[{k}] is {int(a[k]):#06x} ({labels[0]}), {int(b[k]):#06x} "
            f"({labels[1]}); {bad.size} of {a.size} elements differ ({INVARIANTS[name][1]})"]


def within(name: str, a: np.ndarray, b: np.ndarray, tol: np.ndarray, dt: str, labels: tuple) -> list:
    """``[]`` when |a - b| <= 2*tol elementwise (16-bit D arrays of ``dt``), else one line."""
    x, y = _f32(a.reshape(-1), dt), _f32(b.reshape(-1), dt)
    bad = np.flatnonzero(~(np.abs(x - y) <= 2 * tol.reshape(-1)))
    if bad.size == 0:
        return []
    k = int(bad[0])
    return [f"invariant {name!r} violated: D[{k}] is {x[k]!r} ({labels[0]}), {y[k]!r} ({labels[1]}), "
            f"more than 2 x {float(tol.reshape(-1)[k]):.3g} apart; {bad.size} of {x.size} elements"]

"""Longest-first scheduling of ``parity numerics`` configs over worker processes.

A config's emulation cost varies by two orders of magnitude (an ``ir_core``
config runs in a tenth of a second, a 15-workgroup cluster config for most of a
minute). Handed out in catalog order with several configs per task, the
expensive ones land on one worker and the other sits idle at the end. So
:func:`estimated_cost` gives every config a relative cost from its spec (the
fields that set the number of waves, K tiles, slabs and covering problems it
emulates; fitted to the per-config seconds of a ``parity numerics --coverage``
run, docs/sim.md), and :func:`longest_first` orders the work so that a pool
pulling one config at a time (``imap_unordered``, chunksize 1) finishes with
both workers busy until the last few small configs.
"""
from __future__ import annotations


def estimated_cost(family: str, spec: dict) -> float:
    """Relative cost of running ``family``'s numerics plan on one config
    ``spec`` (missing fields take the engine's defaults): about its seconds in
    a ``parity numerics --coverage -j 2`` run on the shared 2-core machine
    (load average ~20) it was fitted to; correlation with the measured seconds
    0.77 over 79 conv configs, 0.89 over 129 reduce configs. Only the order of
    the values matters."""
    if family == "conv_implicit_gemm":
        tm, tn, tk = spec.get("tile_m", 64), spec.get("tile_n", 64), spec.get("tile_k", 32)
        area = (tm * tn) / 4096.0 * (tk / 32.0) ** 0.5
        S = int(spec.get("split_k_cluster", 0) or 0)
        if S > 1:
            # a cluster launch emulates S workgroups per tile, its own covering
            # problems and the two-stage twin of every invariant
            return 1.8 * (6.0 + 2.5 * S * area)
        cost = 1.8 * (2.5 + 2.5 * area)
        if int(spec.get("split_k", 1) or 1) > 1:
            cost *= 1.6   # Stage 1 and the reduce kernel, the plain twin, the row-boundary problems
        if spec.get("acc_epilogue", "none") not in ("none", None):
            cost *= 1.4
        return cost
    if family == "conv_fwd_split_k_reduce":
        d = int(spec.get("degree", 0) or 0)
        v = int(spec.get("vector", 4) or 4)
        return 0.57 * (0.6 + 0.13 * d) * (1.3 if v == 1 else 1.0)
    return 0.2


def longest_first(items: list) -> list:
    """The indices of ``items`` ((family, config name, spec, arch) tuples), most
    expensive first (ties in catalog order)."""
    return sorted(range(len(items)), key=lambda i: (-estimated_cost(items[i][0], items[i][2]), i))

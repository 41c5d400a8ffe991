"""LDS bank-conflict counter of the emulator (gfx1250 bank model).

Counted on a real emulated launch: every LDS ``load`` / ``store`` a wave
executes is split into the phases the hardware serves at once, and each phase
costs as many LDS cycles as the most-loaded bank has distinct dwords to serve;
the cycles above one per phase are the **conflict cycles** of that execution.

Model (facts with their sources; the rest marked ASSUMPTION, docs/sim.md):

* :data:`NUM_BANKS` = 64 banks of :data:`BANK_BYTES` = 4 bytes, bank =
  ``(byte address / 4) % 64``. Sources: AMD Composable Kernel docs, "Understanding
  AMD GPU LDS and Bank Conflicts" (LDS "organized into 32 or 64 banks depending
  on the hardware architecture, each bank has a 4 bytes width"); public gfx1250
  LDS bank-conflict analyzers of the Triton AMD tooling ("gfx1250 has 64 banks,
  each 4 bytes wide; bank = (byte_address / 4) % 64"). ASSUMPTION until
  measured on a gfx1250 (no AMD ISA document for gfx1250 states it).
* Phases: one phase moves at most ``NUM_BANKS * BANK_BYTES`` = 256 bytes, so a
  wave32 access of ``w`` bytes per lane is served in phases of
  ``min(32, 256 // max(w, 4))`` consecutive lanes: ``b128`` 16 lanes (2 phases),
  ``b64`` 32 lanes, ``b32`` / ``b16`` 32 lanes (1 phase). CK's docs give the
  same rule for wave64 on 32 banks (``ds_write_b128``: 8 phases of 8 lanes).
  ASSUMPTION: lanes are grouped consecutively (MI300 measurements show
  non-consecutive lane groups for ``ds_read_b128``; none are published for
  gfx1250).
* An access wider than 16 bytes per lane (LLVM splits it into ``b128``
  instructions) counts as ``ceil(w / 16)`` accesses of 16 bytes at ``+16*i``.
* Lanes reading or writing the same dword share it (broadcast; a store of the
  same dword by two lanes is the surplus-slot re-store of identical bytes).
  ASSUMPTION for stores.

:func:`phase_cost` is the pure model; :class:`BankLog` records per instruction
site during a launch (``Kernel.bank_log``); :func:`conv_bank_conflicts` runs a
conv_implicit_gemm config and returns the per-site counts.
"""
from __future__ import annotations

import re

import numpy as np

from python_engine.facts import conv_kernel as C

from . import numerics as NU
from .plans import conv_implicit_gemm as CONV_PLAN
from .errors import SimError

NUM_BANKS = 64          # banks (ASSUMPTION for gfx1250, sources above)
BANK_BYTES = 4          # bytes per bank (dword)
PHASE_BYTES = NUM_BANKS * BANK_BYTES   # bytes one phase serves
WAVE = 32
MAX_LANE_BYTES = 16     # ds_load_b128 / ds_store_b128: the widest LDS access per lane


def phase_lanes(lane_bytes: int) -> int:
    """Consecutive lanes of a wave32 served per phase for ``lane_bytes`` per lane."""
    return max(1, min(WAVE, PHASE_BYTES // max(lane_bytes, BANK_BYTES)))


def phase_cost(offsets: np.ndarray, lane_bytes: int) -> tuple:
    """``(phases, conflict_cycles)`` of one wave32 LDS access: ``offsets`` are the
    32 lanes' byte offsets (int), ``lane_bytes`` the bytes each lane accesses
    (1..16). Each phase costs ``max over banks of distinct dwords``; the conflict
    cycles are the sum over phases of that cost minus one."""
    off = np.asarray(offsets, dtype=np.int64).reshape(-1)
    nd = max(1, (lane_bytes + BANK_BYTES - 1) // BANK_BYTES)
    per = phase_lanes(lane_bytes)
    phases = extra = 0
    for s in range(0, off.size, per):
        lo = off[s:s + per]
        dw = np.unique((lo[:, None] // BANK_BYTES + np.arange(nd, dtype=np.int64)).reshape(-1))
        cost = int(np.bincount(dw % NUM_BANKS, minlength=NUM_BANKS).max())
        phases += 1
        extra += cost - 1
    return phases, extra


class BankLog:
    """Per-site LDS counts of a launch. A site is one LDS load/store instruction
    of the kernel text, keyed by its location string; each entry holds ``kind``
    (load/store), ``ptr`` (the pointer's SSA name), ``bytes`` per lane,
    ``executed`` (wave-instructions), ``phases`` and ``conflict_cycles``."""

    def __init__(self):
        self.sites: dict = {}

    def record(self, where: str, kind: str, ptr: str, offsets: np.ndarray, nbytes: int):
        e = self.sites.get(where)
        if e is None:
            e = self.sites[where] = dict(kind=kind, ptr=ptr, bytes=nbytes, executed=0, phases=0,
                                         conflict_cycles=0)
        e["executed"] += 1
        for i in range(0, nbytes, MAX_LANE_BYTES):
            p, x = phase_cost(offsets + i, min(MAX_LANE_BYTES, nbytes - i))
            e["phases"] += p
            e["conflict_cycles"] += x


# Site categories of the conv kernel, from the pointer's SSA hint
# (python_engine/kernels/conv_implicit_gemm/ names every LDS pointer).
CONV_SITES = {
    ("store", "a_lp"): "a_store", ("store", "b_lp"): "b_store",
    ("load", "fa_p"): "a_fragment", ("load", "fb_p"): "b_fragment",
    ("store", "cs_p"): "c_store", ("load", "cs_p"): "c_load",
    ("store", "dt_p"): "d_transpose_store", ("load", "dt_p"): "d_transpose_load",
}
CONV_CATEGORIES = tuple(dict.fromkeys(CONV_SITES.values()))


def _category(kind: str, ptr: str) -> str:
    base = re.sub(r"[.\d]+$", "", ptr)   # the printer numbers repeated hints: a_lp, a_lp12
    return CONV_SITES.get((kind, base), f"other_{kind}_{base}")


def conv_bank_conflicts(spec: dict, arch: str = "gfx1250", problem: dict | None = None,
                        lowerer=None) -> dict:
    """LDS bank conflicts of one conv_implicit_gemm config on a real emulated launch.

    ``spec``: conv_implicit_gemm fields (missing ones take their defaults).
    ``problem``: conv problem extents (``N C H W K Y X stride_h stride_w pad_h
    pad_w dil_h dil_w groups``); default a 1x1 problem of two full tiles in M,
    one in N and two K tiles per slice (``N=1, H=2, W=tile_m, C=2*tile_k*d,
    K=tile_n``, ``d`` the degree). The launch comes from the Python engine's
    conv_launch plan (degree 1, ``split_k`` or ``split_k_cluster``); only the
    conv kernel runs (one order, no race shadow).

    Returns ``{"kernel": name, "lds_bytes": int, "categories": {cat: counts},
    "sites": [counts + "site", "category"]}``; counts are ``executed``
    (wave-instructions), ``phases`` and ``conflict_cycles`` (ints). Categories:
    :data:`CONV_CATEGORIES` (absent ones are zero). Raises ``SimError`` when the
    plan does not admit the problem."""
    lowerer = lowerer or NU._Lowerer()
    full = {f.name: spec.get(f.name, f.default) for f in C.FIELDS}
    d = CONV_PLAN.conv_degree(full)
    if problem is None:
        problem = dict(N=1, C=2 * full["tile_k"] * d, H=2, W=full["tile_m"], K=full["tile_n"], Y=1, X=1,
                       stride_h=1, stride_w=1, pad_h=0, pad_w=0, dil_h=1, dil_w=1, groups=1)
    p = problem
    prob = ("bank", p["N"], p["C"], p["H"], p["W"], p["K"], p["Y"], p["X"], (p["stride_h"], p["stride_w"]),
            (p["pad_h"], p["pad_w"]), (p["dil_h"], p["dil_w"]), p["groups"])
    cases = [c for c in CONV_PLAN.conv_cases(full, arch, lowerer, problems=(prob,)) if isinstance(c, NU.Case)]
    if not cases:
        raise SimError("conv_bank_conflicts: the conv_launch plan does not admit the problem")
    case = cases[0]
    la = case.launches[0]
    fam, kspec, karch = case.kernels[la.kernel]
    k = lowerer.kernel(fam, kspec, karch)
    bufs = {n: v.copy() for n, v in case.buffers.items()}
    args = {n: (bufs[v.name] if isinstance(v, NU.Buf) else v) for n, v in la.args.items()}
    log = BankLog()
    k.bank_log = log
    try:
        k.launch(la.grid, la.block, args, cluster=la.cluster, orders=("forward",), shadow=False)
    finally:
        k.bank_log = None
    cats = {c: dict(executed=0, phases=0, conflict_cycles=0) for c in CONV_CATEGORIES}
    sites = []
    for where, e in log.sites.items():
        cat = _category(e["kind"], e["ptr"])
        t = cats.setdefault(cat, dict(executed=0, phases=0, conflict_cycles=0))
        for f in ("executed", "phases", "conflict_cycles"):
            t[f] += e[f]
        sites.append(dict(e, site=where, category=cat))
    return {"kernel": k.name, "lds_bytes": sum(g.ty.size for g in k.module.lds),
            "categories": cats, "sites": sites}

"""The named perf targets of issue 16 and its goals, judged on measured values.

Targets (configs of parity/configs/conv_implicit_gemm.py), reported first:

* ``64x64x32 plain``: plain_mem_default_64x64x32_w2x2_bf16
* ``64x64x64 two-stage``: spk4_mem_default_64x64x64_fp16 (Stage 1; Stage 2 is
  the reduce family's kernel, reported with the rest of the configs)
* ``128x128x64 cluster S=15``: skc15_mem_cshuffle_128x128x64_bf16 (the AOT
  grid's cluster job of that tile, python_engine/policy/aot.py)
* ``16x16 AOT tile``: aot_spk2_mem_default_16x16x32_w1x1_bf16 (a two-stage job
  of the AOT grid: mem pipeline, 16-byte vectors, one wave)
* ``32x32x32 AOT tile``: aot_spk2_mem_default_32x32x32_w1x1_bf16 (issue 40's
  one-wave tile class: the AOT grid's two-stage job of 32x32x32 w1x1)

Goals (a report, not a gate; ``--check-goals`` makes an unmet goal exit 1):

* ``non_wmma``: at 64x64x32 plain, at most 12 non-WMMA instructions per WMMA in
  the main loop;
* ``epilogue_16b``: every target's epilogue stores D (or its workspace slab)
  with 16-byte stores where the output rows allow (it has 16-byte stores; the
  narrower ones in the static count are the fallback path for rows that are
  not 16-byte aligned, behind a wave-uniform branch);
* ``bank_conflicts``: 0 LDS bank-conflict cycles on the main loop's LDS sites
  of every target (the emulator's count, parity/perf/banks.py; skipped when a
  target has no count);
* ``barrier_hidden``: on every target the main loop's exposed barrier cycles per
  K tile are covered by the other resident waves of its SIMD (parity/perf/barrier.py,
  ``cover``: each barrier exposes ``max(0, BARRIER_LATENCY - W)``, ``W`` the work
  between its signal and wait, the latency an ASSUMPTION; the SIMD's spare issue
  per iteration is ``max(0, n I - C)``: ``n`` waves per SIMD (LLVM's occupancy),
  ``I`` llvm-mca's issue cycles (Block RThroughput) and ``C`` its cycles of the body
  without barriers). It replaced ``cycles_halved`` (half the ``--base`` ref's
  barrier-model cycles), a ratio to a past commit that said nothing of whether
  the barrier costs time.

The main-loop goals of issue 26, at 64x64x32 plain (``non_wmma`` above is its
first):

* ``mca_no_barrier``: llvm-mca cycles per K tile without the barrier
  instructions at most MCA_NB_LIMIT (half of the 900 of issue 26's base);
* ``prefetch``: the next K tile's global loads hidden behind at least one
  K tile of WMMA and LDS-load work (parity/perf/prefetch.py: the value crosses
  a barrier, and the WMMAs and LDS loads between issue and first use make at
  least PREFETCH_TILES K tiles);
* ``occupancy``: at least OCCUPANCY_MIN waves per SIMD (LLVM's figure);
* ``spills``: no VGPR or SGPR spills;
* ``scratch``: no scratch memory.

Issue 40's goals per tile class that runs the uniform-tap loop beside its own K
walk (``CLASS_LIMITS``; one goal ``class_<label>`` per class, met when every check
is): at most NON_WMMA_LIMIT non-WMMA instructions per WMMA where the class has at
least 2 WMMAs per wave and K tile, else at most half the class's figure before the
tap loop; llvm-mca cycles per K tile without barriers at most half the class's figure
before the tap loop; prefetch at least PREFETCH_TILES; occupancy not lower than
before; no spills and no scratch.

A goal is met, not met or skipped (not measurable in this run); only a goal
not met fails ``--check-goals`` (the constants PASS, FAIL and SKIP hold
those three words).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import barrier as BAR

FAMILY = "conv_implicit_gemm"

#: (label, config) of the targets, in report order.
TARGETS = (
    ("64x64x32 plain", "plain_mem_default_64x64x32_w2x2_bf16"),
    ("64x64x64 two-stage", "spk4_mem_default_64x64x64_fp16"),
    ("128x128x64 cluster S=15", "skc15_mem_cshuffle_128x128x64_bf16"),
    ("16x16 AOT tile", "aot_spk2_mem_default_16x16x32_w1x1_bf16"),
    ("32x32x32 AOT tile", "aot_spk2_mem_default_32x32x32_w1x1_bf16"),
)
NON_WMMA_LIMIT = 12
MCA_NB_LIMIT = 450
PREFETCH_TILES = 1
OCCUPANCY_MIN = 9
#: issue 40's tile classes: label -> (non-WMMA per WMMA limit, llvm-mca no-barrier limit per
#: K tile, least occupancy): NON_WMMA_LIMIT (classes of at least 2 WMMAs per wave and K tile)
#: or half the class's figure, half its cycles and its occupancy before the tap loop (parity
#: perf, main 2048e3b: 64x64x64 two-stage 1385 cycles per K tile, 7 waves; main 40760f2:
#: 32x32x32 AOT tile 1299, 8 waves; main 66ba40d: 16x16 AOT tile, one WMMA per wave and K
#: tile, 74.0 non-WMMA per WMMA, 822 cycles, 16 waves; 128x128x64 cluster S=15, 1732 cycles, 3 waves)
CLASS_LIMITS = {"64x64x64 two-stage": (NON_WMMA_LIMIT, 692, 7), "32x32x32 AOT tile": (NON_WMMA_LIMIT, 649, 8),
                "16x16 AOT tile": (37, 411, 16), "128x128x64 cluster S=15": (NON_WMMA_LIMIT, 866, 3)}

#: the K-walk fallback's goals (issue 40: the fallback at the tap loop's figures): per target
#: label -> (non-WMMA per WMMA limit, llvm-mca no-barrier cycles per K tile limit) of its
#: tap-tile loop (Measure.fallback), the loop its kernel runs for cpg an odd multiple of
#: tile_k; NON_WMMA_LIMIT where the class has at least 2 WMMAs per wave and K tile, else half
#: the K walk's figure, and half the K walk's cycles, both as this loop replaced it (parity
#: perf / bench/mainloop.py, llc-22, main 982e72b: 64x64x32 plain 883.5 cycles per K tile;
#: 64x64x64 two-stage 1300; 128x128x64 1488; 16x16 72.0 non-WMMA per WMMA, 821 cycles;
#: 32x32x32 1075)
FALLBACK_LIMITS = {"64x64x32 plain": (NON_WMMA_LIMIT, 441), "64x64x64 two-stage": (NON_WMMA_LIMIT, 650),
                   "128x128x64 cluster S=15": (NON_WMMA_LIMIT, 744), "16x16 AOT tile": (36, 410),
                   "32x32x32 AOT tile": (NON_WMMA_LIMIT, 537)}

PASS, FAIL, SKIP = "met", "not met", "skipped"


def target_keys() -> list[str]:
    return [f"{FAMILY}/{c}" for _, c in TARGETS]


def label_of(key: str) -> str | None:
    for label, c in TARGETS:
        if key == f"{FAMILY}/{c}":
            return label
    return None


@dataclass
class Goal:
    name: str
    status: str
    detail: str

    def line(self) -> str:
        return f"goal {self.name}: {self.status} ({self.detail})"

    def to_json(self) -> dict:
        return {"name": self.name, "status": self.status, "detail": self.detail}


def barrier_cover(m) -> dict | None:
    """The barrier model's cover figures of Measure ``m`` (parity/perf/barrier.py ``cover``), or
    None when ``m`` lacks the barrier model, llvm-mca's no-barrier figures or the occupancy."""
    if m is None or not m.ok or not m.occupancy:
        return None
    nb, bm = (m.mca or {}).get("no_barrier"), (m.mca or {}).get("barrier_model")
    if not nb or not bm or nb.get("block_rthroughput") is None:
        return None
    return BAR.cover(bm["gaps"], nb["cycles_per_iteration"], nb["block_rthroughput"], m.occupancy,
                     m.k_tiles_per_iteration or 1)


def barrier_goal(measures: dict, present: list) -> Goal:
    """``barrier_hidden`` (module doc) on the measured targets ``present``."""
    rows, bad, absent = [], [], []
    for k in present:
        c = barrier_cover(measures[k])
        if c is None:
            absent.append(label_of(k))
            continue
        ws = c["gaps"]
        gaps = f"{len(ws)} gap(s) of {'/'.join(f'{w:.0f}' for w in ws)} work cycles" if ws else "no barrier"
        text = (f"{label_of(k)} {PASS if c['hidden'] else FAIL}: {c['needed']:.0f} cycles of work per K tile "
                f"needed ({gaps}), {c['available']:.0f} available ({c['waves']} waves x {c['issue']:.0f} "
                f"issue - {c['no_barrier']:.0f} no-barrier cycles per {c['k_tiles']:g} K tile(s))")
        rows.append(text)
        if not c["hidden"]:
            bad.append(text)
    if not rows:
        return Goal("barrier_hidden", SKIP, "no target with llvm-mca figures and occupancy")
    tail = f"; not measured: {', '.join(absent)}" if absent else ""
    return Goal("barrier_hidden", FAIL if bad else PASS,
                f"L = {BAR.BARRIER_LATENCY} cycles (assumed): " + "; ".join(rows) + tail)


def goals(measures: dict) -> list[Goal]:
    """The goals judged on ``measures`` ({FAMILY/CONFIG: Measure})."""
    out = []
    keys = target_keys()
    # a target whose kernel did not compile or measure (Measure.ok False) is not judged
    present = [k for k in keys if k in measures and measures[k].ok]
    first = measures.get(keys[0])
    first = first if first is not None and first.ok else None
    if first is None or first.non_wmma_per_wmma is None:
        out.append(Goal("non_wmma", SKIP, f"{TARGETS[0][0]} not measured"))
    else:
        v = first.non_wmma_per_wmma
        out.append(Goal("non_wmma", PASS if v <= NON_WMMA_LIMIT else FAIL,
                        f"{TARGETS[0][0]}: {v:.2f} non-WMMA instructions per WMMA, limit {NON_WMMA_LIMIT}"))
    out += mainloop_goals(first)
    out += class_goals(measures)
    out += fallback_goals(measures)
    if not present:
        out.append(Goal("epilogue_16b", SKIP, "no target measured"))
    else:
        # The kernels keep a narrower path for output rows that are not 16-byte aligned
        # (K or kpg not a multiple of 8 bf16/fp16 or 4 fp32) behind a wave-uniform branch;
        # the count is static, so both paths are in it. The goal asks for the 16-byte path.
        bad, good = [], []
        for k in present:
            st = measures[k].epilogue_stores
            if not st or 16 not in st:
                bad.append(f"{label_of(k)} {_widths(st)}")
            else:
                good.append(f"{label_of(k)} {_widths(st)}")
        out.append(Goal("epilogue_16b", FAIL if bad else PASS,
                        ("no 16-byte epilogue store: " + "; ".join(bad)) if bad else
                        "16-byte epilogue stores on every target (narrower = the unaligned-row fallback, "
                        "static count of both paths): " + "; ".join(good)))
    counts = {k: measures[k].bank_conflicts for k in present}
    if not present or any(v is None for v in counts.values()):
        out.append(Goal("bank_conflicts", SKIP, "no emulator bank-conflict count attached"))
    else:
        bad = [f"{label_of(k)} {v}" for k, v in counts.items() if v]
        out.append(Goal("bank_conflicts", FAIL if bad else PASS,
                        "; ".join(bad) if bad else f"{len(present)} target(s): 0 conflicts"))
    out.append(barrier_goal(measures, present))
    return out


def _limit_goal(name: str, value, ok, text: str) -> Goal:
    if value is None:
        return Goal(name, SKIP, f"{TARGETS[0][0]}: not measured")
    return Goal(name, PASS if ok(value) else FAIL, f"{TARGETS[0][0]}: {text}")


def mainloop_goals(m) -> list[Goal]:
    """The issue-26 goals (module doc) judged on ``m``, the Measure of 64x64x32 plain
    (None: every goal skipped)."""
    if m is None:
        return [Goal(n, SKIP, f"{TARGETS[0][0]} not measured")
                for n in ("mca_no_barrier", "prefetch", "occupancy", "spills", "scratch")]
    nb = m.cycles("no_barrier")
    nb = nb / (m.k_tiles_per_iteration or 1) if nb is not None else None
    pf = m.prefetch or {}
    spills = None if m.vgpr_spills is None or m.sgpr_spills is None else m.vgpr_spills + m.sgpr_spills
    return [
        _limit_goal("mca_no_barrier", nb, lambda v: v <= MCA_NB_LIMIT,
                    f"{nb or 0:.0f} llvm-mca cycles per K tile without barriers, limit {MCA_NB_LIMIT}"),
        _limit_goal("prefetch", m.prefetch_tiles, lambda v: v >= PREFETCH_TILES,
                    f"{m.prefetch_tiles or 0:.2f} K tiles of work hide the global loads (least hidden load: "
                    f"{pf.get('barriers', 0)} barrier(s), {pf.get('wmmas', 0)} WMMAs, {pf.get('lds_loads', 0)} "
                    f"LDS loads between issue and first use), at least {PREFETCH_TILES}"),
        _limit_goal("occupancy", m.occupancy, lambda v: v >= OCCUPANCY_MIN,
                    f"{m.occupancy} waves per SIMD ({m.vgprs} VGPRs, {m.sgprs} SGPRs), at least {OCCUPANCY_MIN}"),
        _limit_goal("spills", spills, lambda v: v == 0, f"{spills} VGPR+SGPR spills, limit 0"),
        _limit_goal("scratch", m.scratch_bytes, lambda v: v == 0, f"{m.scratch_bytes} scratch bytes, limit 0"),
    ]


def class_goals(measures: dict) -> list[Goal]:
    """One goal per CLASS_LIMITS class (module doc), judged on its target's Measure in
    ``measures``; skipped when the target was not measured."""
    out = []
    for label, cfg in TARGETS:
        if label not in CLASS_LIMITS:
            continue
        name = "class_" + label.replace(" ", "_")
        nw_limit, nb_limit, occ_min = CLASS_LIMITS[label]
        m = measures.get(f"{FAMILY}/{cfg}")
        nb = m.cycles("no_barrier") if m is not None and m.ok else None
        if nb is None or m.non_wmma_per_wmma is None or m.occupancy is None:
            out.append(Goal(name, SKIP, f"{label}: not measured"))
            continue
        nb /= m.k_tiles_per_iteration or 1
        spills = (m.vgpr_spills or 0) + (m.sgpr_spills or 0)
        nw, pf, scr = m.non_wmma_per_wmma, m.prefetch_tiles or 0, m.scratch_bytes or 0
        checks = ((nw <= nw_limit, f"{nw:.2f} non-WMMA per WMMA (<= {nw_limit})"),
                  (nb <= nb_limit, f"{nb:.0f} llvm-mca cycles per K tile without barriers (<= {nb_limit})"),
                  (pf >= PREFETCH_TILES, f"prefetch {pf:.2f} K tiles (>= {PREFETCH_TILES})"),
                  (m.occupancy >= occ_min, f"{m.occupancy} waves per SIMD (>= {occ_min})"),
                  (spills == 0, f"{spills} spills"), (scr == 0, f"{scr} scratch bytes"))
        bad = [t for ok, t in checks if not ok]
        out.append(Goal(name, FAIL if bad else PASS, f"{label}: " + "; ".join(bad or [t for _, t in checks])))
    return out


def fallback_goals(measures: dict) -> list[Goal]:
    """One goal ``fallback_<label>`` per FALLBACK_LIMITS target: its tap-tile loop's non-WMMA
    per WMMA and llvm-mca cycles per K tile without barriers at the limits, prefetch at
    least PREFETCH_TILES (occupancy, spills and scratch are the kernel's, judged by the
    class goals); skipped when the target or its loop was not measured."""
    out = []
    for label, cfg in TARGETS:
        if label not in FALLBACK_LIMITS:
            continue
        name = "fallback_" + label.replace(" ", "_")
        nw_limit, nb_limit = FALLBACK_LIMITS[label]
        m = measures.get(f"{FAMILY}/{cfg}")
        f = m.fallback if m is not None and m.ok else None
        if not f or f.get("no_barrier_per_k_tile") is None:
            out.append(Goal(name, SKIP, f"{label}: fallback loop not measured"))
            continue
        nw, nb, pf = f["non_wmma_per_wmma"], f["no_barrier_per_k_tile"], f["prefetch_tiles"] or 0
        checks = ((nw <= nw_limit, f"{nw:.2f} non-WMMA per WMMA (<= {nw_limit})"),
                  (nb <= nb_limit, f"{nb:.0f} llvm-mca cycles per K tile without barriers (<= {nb_limit})"),
                  (pf >= PREFETCH_TILES, f"prefetch {pf:.2f} K tiles (>= {PREFETCH_TILES})"))
        bad = [t for ok, t in checks if not ok]
        out.append(Goal(name, FAIL if bad else PASS,
                        f"{label} {f['loop']}: " + "; ".join(bad or [t for _, t in checks])))
    return out


def _widths(st: dict) -> str:
    return ("stores " + " ".join(f"{n}x{w}B" for w, n in sorted(st.items()))) if st else "no stores"

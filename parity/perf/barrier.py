"""The barrier model of the perf report (docs/perf_model.md, "Barrier model").

llvm-mca gives every ``s_barrier_signal`` / ``s_barrier_wait`` a fixed latency
from LLVM's scheduling model (2000 cycles in the GFX10+ models, ``WriteBarrier``
in llvm/lib/Target/AMDGPU/SISchedule.td, where the older SI model's 500 is
commented "Guessed ???"), so the whole-body figure of a loop with barriers
measures that guess. This module replaces it with a stated model:

* a split barrier (``s_barrier_signal`` ... ``s_barrier_wait``) costs the wave
  ``max(0, BARRIER_LATENCY - W)`` cycles, where ``W`` is the work between the
  signal and the wait: llvm-mca's cycles for one pass over those instructions
  (their issue and latencies; 0 for an empty gap);
* a combined ``s_barrier`` is a signal with an empty gap;
* the modeled cycles per iteration are llvm-mca's cycles without barrier
  instructions plus the exposed cost of every barrier of the body.

``BARRIER_LATENCY`` is an ASSUMPTION, not a measurement: the cycles from the
last wave's signal to the release of the waiting waves on gfx1250. No public
document gives it; no gfx1250 run has measured it. The value is the only
public figure there is, LLVM's SI model's guessed 500 cycles; the report also
prints the model at 0 and 2000 cycles so a reader sees how much of a figure
rests on it. A hardware run that times a loop of empty split barriers at one
and at several waves per workgroup would replace it.

The loop body is cyclic: a signal near the end of the body and the wait near
its start enclose the tail and the head.
"""
from __future__ import annotations

from . import mca as MCA

#: ASSUMPTION (module docstring): gfx1250 barrier release latency in cycles.
BARRIER_LATENCY = 500
#: The latencies the report also shows the model at (sensitivity).
SENSITIVITY = (0, 2000)


def _mnemonic(line: str) -> str:
    return line.split(None, 1)[0] if line.strip() else ""


def gaps(body: list[str]) -> list[list[str]]:
    """The instructions between each barrier signal of the cyclic ``body`` and the
    next wait (one empty list per combined ``s_barrier``). A signal without a wait
    anywhere in the body has no gap (it is not counted)."""
    marks = []
    for i, s in enumerate(body):
        mn = _mnemonic(s)
        if mn == "s_barrier":
            marks.append((i, "both"))
        elif mn.startswith("s_barrier_signal"):
            marks.append((i, "signal"))
        elif mn.startswith("s_barrier_wait"):
            marks.append((i, "wait"))
    out = []
    for k, (i, kind) in enumerate(marks):
        if kind == "both":
            out.append([])
        elif kind == "signal":
            waits = [j for j, w in marks[k + 1:] + marks[:k + 1] if w == "wait"]
            if not waits:
                continue
            j = waits[0]
            span = body[i + 1:j] if j > i else body[i + 1:] + body[:j]
            out.append([s for s in span if not _mnemonic(s).startswith("s_barrier")])
    return out


def gap_cycles(gap: list[str], tool: str | None, timeout: float = 120.0) -> float:
    """llvm-mca's cycles for one pass over ``gap`` (0 for an empty gap)."""
    if not gap:
        return 0.0
    return float(MCA.run(gap, iterations=1, tool=tool, timeout=timeout).total_cycles)


def exposed(gap_work: list[float], latency: float = BARRIER_LATENCY) -> float:
    """The modeled barrier cycles of one iteration: ``sum(max(0, latency - W))``."""
    return float(sum(max(0.0, latency - w) for w in gap_work))


def model(body: list[str], no_barrier_cycles: float, tool: str | None, timeout: float = 120.0) -> dict:
    """The barrier model of a loop body: ``{"latency", "gaps" (W per barrier),
    "exposed", "cycles_per_iteration", "sensitivity": {latency: cycles}}``;
    ``no_barrier_cycles`` is llvm-mca's figure for the body without barriers.
    Raises MCAError when llvm-mca fails on a gap."""
    work = [gap_cycles(g, tool, timeout) for g in gaps(body)]
    e = exposed(work)
    return {"latency": BARRIER_LATENCY, "gaps": work, "exposed": e,
            "cycles_per_iteration": round(no_barrier_cycles + e, 2),
            "sensitivity": {str(b): round(no_barrier_cycles + exposed(work, b), 2) for b in SENSITIVITY}}

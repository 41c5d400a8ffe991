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

Whether the other waves hide it (:func:`cover`, the ``barrier_hidden`` goal of
parity/perf/targets.py): ``n`` waves resident on a SIMD (LLVM's occupancy) issue
one instruction at a time between them; one iteration of one wave needs ``I``
issue cycles (llvm-mca's Block RThroughput of the body without barriers) and
takes ``C`` cycles alone (llvm-mca's no-barrier cycles: its issue plus its
latency stalls) plus ``E`` exposed barrier cycles. In steady state an iteration
takes ``max(n I, C + E)``: the barrier costs nothing while ``E <= max(0, n I - C)``,
the SIMD's spare issue, i.e. the ``(n - 1) I`` issue cycles of the other waves
less the ``C - I`` latency stall cycles of this wave they already fill. The
other waves on the SIMD are taken to be of other workgroups (a 4-wave workgroup
puts one wave on each of the WGP's 4 SIMDs), so they do not wait on the same
barrier.
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


def hidden_up_to(gap_work: list[float], spare: float) -> float | None:
    """The largest barrier latency ``L`` whose exposed cycles ``exposed(gap_work, L)``
    ``spare`` issue cycles still cover (None: no barrier, any ``L``)."""
    ws = sorted(gap_work)
    for k in range(1, len(ws) + 1):
        lat = (spare + sum(ws[:k])) / k      # the k smallest gaps exposed: k L - sum(W) = spare
        if k == len(ws) or lat <= ws[k]:
            return round(lat, 2)
    return None


def cover(gap_work: list[float], no_barrier: float, issue: float, waves: int, k_tiles: float,
          latency: float = BARRIER_LATENCY) -> dict:
    """The barrier_hidden figures of one loop (module docstring): ``gap_work`` W per barrier,
    ``no_barrier`` C and ``issue`` I (llvm-mca, cycles per iteration), ``waves`` n per SIMD,
    ``k_tiles`` per iteration. ``needed`` / ``available`` are per K tile."""
    kt = k_tiles or 1
    other = (waves - 1) * issue
    stalls = max(0.0, no_barrier - issue)
    spare = max(0.0, waves * issue - no_barrier)
    e = exposed(gap_work, latency)
    return {"latency": latency, "gaps": list(gap_work), "waves": waves, "issue": issue, "no_barrier": no_barrier,
            "k_tiles": kt, "other_issue": round(other, 2), "stalls": round(stalls, 2), "spare": round(spare, 2),
            "exposed": e, "needed": round(e / kt, 2), "available": round(spare / kt, 2),
            "hidden": e <= spare, "hidden_up_to": hidden_up_to(gap_work, spare),
            "per_gap": [{"work": w, "exposed": {_n(b): max(0.0, b - w) for b in sorted({*SENSITIVITY, latency})}}
                        for w in gap_work]}


def _n(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def lines(label: str, c: dict) -> list[str]:
    """The report's barrier section of one target from its :func:`cover` figures."""
    lat = _n(c["latency"])
    gaps = f"{len(c['gaps'])} barrier gap(s)" if c["gaps"] else "no barrier"
    out = [f"{label}: {gaps} per iteration ({_n(c['k_tiles'])} K tile(s)), "
           f"{c['waves']} waves per SIMD, llvm-mca {_n(c['issue'])} issue / {_n(c['no_barrier'])} no-barrier "
           f"cycles per iteration"]
    for i, g in enumerate(c["per_gap"], 1):
        ex = ", ".join(f"L={k} {_n(v)}" for k, v in g["exposed"].items())
        out.append(f"  gap {i}: {_n(g['work'])} cycles of work between signal and wait; exposed {ex}")
    up = c["hidden_up_to"]
    out.append(f"  cover: {c['waves']} x {_n(c['issue'])} = {_n(c['waves'] * c['issue'])} issue cycles of the SIMD's "
               f"waves - {_n(c['no_barrier'])} = {_n(c['spare'])} spare per iteration ((n-1) I = "
               f"{_n(c['other_issue'])} of the other waves less {_n(c['stalls'])} latency stalls); exposed at "
               f"L={lat}: {_n(c['exposed'])} -> {'hidden' if c['hidden'] else 'not hidden'} "
               f"({_n(c['needed'])} per K tile needed, {_n(c['available'])} available; hidden up to "
               + ("any L" if up is None else f"L={_n(up)}") + ")")
    return out

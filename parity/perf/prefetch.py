"""Prefetch distance of a main loop's global loads, read from its assembly body.

For each global load of the loop body (``buffer_load*``, ``global_load*``), in
layout order: its destination VGPRs (``v12`` or ``v[12:15]``, the first
operand; past v255 the register LLVM's comment gives, ``v[2:5] /*v[258:261]*/``), and the first later instruction -- in loop order, wrapping around the
back-edge into the next iteration -- that reads one of them (a store's every
operand is read; any other instruction reads its operands after the first).
Between the load and that first use the report counts

* ``barriers``: workgroup barriers (``s_barrier_wait``; in a one-wave
  workgroup, where LLVM lowers a barrier to a ``; wave barrier`` comment and
  no instruction, the marks of those comments), i.e. K-tile boundaries of
  the loop the value crosses in flight;
* ``wmmas`` and ``lds_loads``: WMMAs and LDS loads (``ds_load*``) issued in
  the meantime, the work that hides the load's latency.

The loop's figure is the minimum over its loads (the least hidden one). A load
whose value no instruction of the body reads is left out. :func:`tiles` turns
the figure into K tiles of work: 0 unless the value crosses a barrier (it is
consumed in the K tile it was issued in, as in a single-stage double-buffered
loop), else ``min(wmmas / WMMAs per K tile, lds_loads / LDS loads per K
tile)``. Plain text parsing, no LLVM needed.
"""
from __future__ import annotations

import re

from .mix import mnemonic

_VREG = re.compile(r"\bv(?:\[(\d+):(\d+)\]|(\d+)\b)")
_LOAD = ("buffer_load", "global_load")
_STORE = ("ds_store", "ds_write", "buffer_store", "global_store", "flat_store", "scratch_store")


# A VGPR above v255 (gfx1250's 1024 VGPRs): LLVM prints the 8-bit field the instruction
# encodes, with the register ``s_set_vgpr_msb`` makes of it in a comment after it
# (``buffer_load_b128 v[2:5] /*v[258:261]*/, ...``; AMDGPU's AsmPrinter, llc-22 -mcpu=gfx1250):
# the comment's register is the one read or written.
_MSB = re.compile(r"\bv(?:\[\d+:\d+\]|\d+)\s*/\*\s*(v(?:\[\d+:\d+\]|\d+))\s*\*/")


def _regs(operand_text: str) -> set[int]:
    out = set()
    for m in _VREG.finditer(_MSB.sub(r"\1", operand_text)):
        lo, hi = (int(m.group(1)), int(m.group(2))) if m.group(1) else (int(m.group(3)), int(m.group(3)))
        out.update(range(lo, hi + 1))
    return out


def _operands(line: str) -> list[str]:
    parts = line.split(None, 1)
    return [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []


def _reads(line: str) -> set[int]:
    ops = _operands(line)
    mn = mnemonic(line)
    src = ops if mn.startswith(_STORE) else ops[1:]
    return _regs(",".join(src))


def prefetch(body: list[str], marks=()) -> dict | None:
    """``{"barriers", "wmmas", "lds_loads", "loads"}`` of the least hidden global load
    of ``body`` (instruction lines of one loop iteration, layout order), or None
    when the body has no global load whose value it reads. ``marks``: indices of
    ``body`` a one-wave workgroup's barrier (``; wave barrier``) stands before."""
    n = len(body)
    marks = set(marks)
    best = None
    loads = 0
    for i, line in enumerate(body):
        if not mnemonic(line).startswith(_LOAD):
            continue
        ops = _operands(line)
        dst = _regs(ops[0]) if ops else set()
        if not dst:
            continue
        bars = wm = ld = 0
        for step in range(1, 2 * n + 1):
            other = body[(i + step) % n]
            mn = mnemonic(other)
            if (i + step) % n in marks:
                bars += 1
            if _reads(other) & dst:
                loads += 1
                fig = {"barriers": bars, "wmmas": wm, "lds_loads": ld}
                if best is None or (fig["barriers"], fig["wmmas"]) < (best["barriers"], best["wmmas"]):
                    best = fig
                break
            if mn.startswith("s_barrier_wait"):
                bars += 1
            elif mn.startswith(("v_wmma", "v_swmmac")):
                wm += 1
            elif mn.startswith("ds_load"):
                ld += 1
    if best is None:
        return None
    best["loads"] = loads
    return best


def tiles(fig: dict | None, wmmas_per_tile: float | None, lds_loads_per_tile: float | None) -> float | None:
    """K tiles of WMMA and LDS-load work between issue and first use (module doc), or
    None when not measurable."""
    if fig is None or not wmmas_per_tile or not lds_loads_per_tile:
        return None
    if fig["barriers"] < 1:
        return 0.0
    return min(fig["wmmas"] / wmmas_per_tile, fig["lds_loads"] / lds_loads_per_tile)

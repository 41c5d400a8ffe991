"""The hardware facts the emulator implements, one place each, by the row
name of docs/hardware_facts.md (issue 35).

Each :class:`Fact` names its table row, the reading the emulator follows (the
majority of the sources, or the only one) and, where a source reads it
otherwise, the other readings. The modules that implement a fact ask this
registry for its value (parity/sim/wmma.py, fp.py, rsrc.py) and re-derive
their tables when it changes, so ``parity numerics --assume NAME=VALUE``
runs every oracle under another reading and shows which configs depend on it
(docs/sim.md, "Hardware facts").

Readings with alternatives:

==========================  ==============  ====================================
row                         default         other readings
==========================  ==============  ====================================
WMMA-AB-layout              blocks8         contiguous16 (IREE's logical layout)
WMMA-CD-layout              rows8           interleaved (the gfx11 WMMA layout)
RSRC-gfx1250-OOB-SELECT     offset1         either (rocMLIR: both values check)
BUFFER-UNALIGNED-gfx1250    any-byte        natural
CVT-F32-BF16                rne             rtz
BUFFER-OOB-SOFFSET          excluded        counted (voffset + soffset checked)
==========================  ==============  ====================================

The reading is process state set only by :func:`assume` (``parity numerics``
calls it before its worker processes fork, so they inherit it). It is
deliberately not read from the environment: a stale variable must not change
what ``parity write``'s or ``parity mutate``'s oracles judge.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

@dataclass(frozen=True)
class Fact:
    """One row of docs/hardware_facts.md that the emulator implements:
    ``default`` is the reading it follows, ``readings`` every value it can
    run under (default first), ``where`` the code that implements it."""

    name: str
    default: str
    readings: tuple[str, ...]
    where: str
    summary: str


FACTS: dict[str, Fact] = {f.name: f for f in (
    Fact("WMMA-AB-layout", "blocks8", ("blocks8", "contiguous16"), "parity/sim/wmma.py K_OF",
         "16-bit A/B of v_wmma_f32_16x16x32 (wave32): lane l holds row/column l%16; element e is "
         "k = 16*(e//8) + 8*(l//16) + e%8 (blocks8) or k = 16*(l//16) + e (contiguous16)"),
    Fact("WMMA-CD-layout", "rows8", ("rows8", "interleaved"), "parity/sim/wmma.py CD_ROW/CD_COL",
         "f32 C/D: lane l element e is row 8*(l//16) + e (rows8) or 2*e + l//16 (interleaved), column l%16"),
    Fact("RSRC-gfx1250-OOB-SELECT", "offset1", ("offset1", "either"), "parity/sim/rsrc.py decode",
         "gfx1250 V# bit 125 (flags bit 1): only 1 selects the per-offset raw range check (offset1), "
         "or both values check the offset at stride 0 (either)"),
    Fact("BUFFER-UNALIGNED-gfx1250", "any-byte", ("any-byte", "natural"), "parity/sim/rsrc.py BUFFER_UNALIGNED",
         "a raw buffer access of up to 16 bytes is accepted at any byte address (any-byte) or needs "
         "natural alignment (natural)"),
    Fact("CVT-F32-BF16", "rne", ("rne", "rtz"), "parity/sim/fp.py f32_to_bf16_bits",
         "fptrunc float -> bfloat (v_cvt_pk_bf16_f32, MODE round 0): round to nearest even (rne) "
         "or toward zero (rtz)"),
    Fact("BUFFER-OOB-SOFFSET", "excluded", ("excluded", "counted"), "parity/sim/ops_memory.py range_offsets",
         "the raw range check of a buffer access takes voffset alone, the address still adding soffset "
         "(excluded: LLVM IntrinsicsAMDGPU.td, the raw buffer loads' soffset 'excluded from bounds "
         "checking'; an access whose check passes but whose address reaches past num_records is an "
         "error), or voffset + soffset (counted)"),
)}

_current: dict[str, str] = {}
_listeners: list[Callable[[], None]] = []


class AssumeError(ValueError):
    """A bad ``--assume`` / ``PARITY_ASSUME`` entry (the message names it and the rule)."""


def parse(spec: str | list[str] | None) -> dict[str, str]:
    """``NAME=VALUE`` entries (a comma list or several strings) -> {name: value};
    AssumeError for an unknown row, an unknown reading or a row given twice."""
    items: list[str] = []
    for s in ([spec] if isinstance(spec, str) else spec or []):
        items += [x.strip() for x in s.split(",") if x.strip()]
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise AssumeError(f"--assume: {item!r} is not NAME=VALUE")
        fact = FACTS.get(name)
        if fact is None:
            raise AssumeError(f"--assume: {name!r} is not a hardware fact with readings "
                              f"(known: {', '.join(FACTS)})")
        if value not in fact.readings:
            raise AssumeError(f"--assume: {name} has no reading {value!r} (readings: {', '.join(fact.readings)})")
        if name in out:
            raise AssumeError(f"--assume: {name} given twice; give it once")
        out[name] = value
    return out


def value(name: str) -> str:
    """The reading of fact ``name`` the emulator runs under now."""
    return _current.get(name, FACTS[name].default)


def assumed() -> dict[str, str]:
    """The facts run under a reading other than their default."""
    return {k: v for k, v in _current.items() if v != FACTS[k].default}


def assume(readings: dict[str, str]) -> None:
    """Run the emulator under ``readings`` ({name: value}, checked by
    :func:`parse`; {} restores the defaults), re-deriving every table that
    implements them (in this process and the ones it forks later)."""
    _current.clear()
    _current.update(readings)
    for fn in _listeners:
        fn()


def on_change(fn: Callable[[], None]) -> Callable[[], None]:
    """Register ``fn`` to re-derive a module's tables when a reading changes;
    it is called once now."""
    _listeners.append(fn)
    fn()
    return fn

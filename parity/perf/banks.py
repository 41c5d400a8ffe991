"""LDS bank conflicts of the perf targets, counted by the CPU emulator on a real
launch (parity/sim/lds_banks.py: gfx1250 LDS as 64 banks x 4 bytes, 256-byte
phases; the constants are assumptions, docs/sim.md).

The goal of issue 16 is about the main loop's LDS traffic: the conflict cycles
of the A/B stores and the A/B fragment loads. The epilogue's sites (C tile,
D transpose) are reported beside them.
"""
from __future__ import annotations

#: The categories the bank-conflict goal sums (parity/sim/lds_banks.CONV_CATEGORIES).
MAIN_LOOP = ("a_store", "b_store", "a_fragment", "b_fragment")


def count(units: list, keys: list[str]) -> tuple[dict, dict, list[str]]:
    """({key: main-loop conflict cycles}, {key: lds_banks report}, problems) for the
    conv_implicit_gemm units named by ``keys`` (one emulated launch each, on the
    default problem of :func:`parity.sim.lds_banks.conv_bank_conflicts`)."""
    from parity.sim import SimError  # numpy + emulator: off `parity check` start-up
    from parity.sim.lds_banks import conv_bank_conflicts  # numpy + emulator: off `parity check` start-up
    by_key = {u.key: u for u in units}
    counts, reports, problems = {}, {}, []
    for key in keys:
        u = by_key.get(key)
        if u is None or u.family != "conv_implicit_gemm":
            continue
        try:
            rep = conv_bank_conflicts(u.spec, u.arch)
        except SimError as exc:
            problems.append(f"{key}: bank conflicts not counted: {exc}")
            continue
        reports[key] = rep
        counts[key] = sum(rep["categories"].get(c, {}).get("conflict_cycles", 0) for c in MAIN_LOOP)
    return counts, reports, problems


def line(key_label: str, rep: dict) -> str:
    """``label: a_store 0/48, ...`` (conflict cycles / wave-instructions executed) per category."""
    cats = rep["categories"]
    parts = [f"{c} {v['conflict_cycles']}/{v['executed']}" for c, v in cats.items() if v["executed"]]
    return f"{key_label}: " + ", ".join(parts)

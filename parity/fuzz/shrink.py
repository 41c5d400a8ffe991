"""Greedy minimiser of a failing spec (own code: hypothesis' shrinker wants
to drive generation itself, while here every try must run in a crash-isolated
worker).

A candidate is kept when it gives the same verdict as the original. Passes,
repeated until nothing shrinks or ``budget`` tries are spent: drop a key;
replace a value by the field's default, by its exact built-in value (an int,
float or str subclass), by a shorter string (halves, then single characters that
still fail) or a smaller int (0, 1, halving towards 0); arch ``gfx1250`` and
flavor ``llvm23``.
"""
from __future__ import annotations

from typing import Callable

from parity.gate.fuzz_values import LyingFloat, LyingInt, LyingStr


def _simpler_values(v, default) -> list:
    out = []
    if v != default or type(v) is not type(default):
        out.append(default)
    if isinstance(v, LyingInt):
        out.append(int.__int__(v))
    if isinstance(v, LyingFloat):
        out.append(float.__float__(v))
    if isinstance(v, LyingStr):
        out.append(str.__str__(v))
    if isinstance(v, str) and len(v) > 1:
        h = len(v) // 2
        out += [v[:h], v[h:]]
        if len(v) <= 8:
            out += [v[:k] + v[k + 1:] for k in range(len(v))]
    if type(v) is int and v not in (0, 1):
        out += [0, 1, v // 2] if v > 0 else [0, -1, -((-v) // 2)]
    return out


def shrink(spec: dict, arch, flavor, defaults: dict, still_fails: Callable[[dict, object, object], bool],
           budget: int = 300) -> tuple:
    """The smallest ``(spec, arch, flavor)`` found for which ``still_fails``
    holds (the input is assumed to fail). ``defaults`` maps field names to
    default values."""
    tries = 0

    def attempt(s, a, f) -> bool:
        nonlocal tries
        tries += 1
        return still_fails(s, a, f)

    changed = True
    while changed and tries < budget:
        changed = False
        for k in list(spec):
            if tries >= budget:
                break
            cand = {x: y for x, y in spec.items() if x != k}
            if attempt(cand, arch, flavor):
                spec, changed = cand, True
        for k in list(spec):
            for nv in _simpler_values(spec[k], defaults.get(k)):
                if tries >= budget:
                    break
                cand = dict(spec)
                cand[k] = nv
                if attempt(cand, arch, flavor):
                    spec, changed = cand, True
                    break
        if arch != "gfx1250" and tries < budget and attempt(spec, "gfx1250", flavor):
            arch, changed = "gfx1250", True
        if flavor != "llvm23" and tries < budget and attempt(spec, arch, "llvm23"):
            flavor, changed = "llvm23", True
    return spec, arch, flavor

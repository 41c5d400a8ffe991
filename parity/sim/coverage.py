"""Branch and select coverage of one decoded kernel (docs/sim.md, "Coverage").

:class:`Coverage` lists every conditional ``br i1`` and every ``select`` of a
kernel (its *sites*, in text order) and records which way each has gone: a
branch is taken *true* when the wave-uniform condition held, *false* when it
did not; a select counts *true* when its condition held in at least one lane
(or, for a vector condition, one element of one lane) and *false* when it
failed in at least one. :class:`parity.sim.kernel.Kernel` built with
``coverage=True`` wraps exactly those closures (:meth:`Coverage.wrap`); a
kernel built without it decodes the plain closures, so recording costs
nothing when it is off.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Site:
    """One conditional instruction: ``kind`` ``br`` or ``select``, its text, block and line."""

    kind: str
    text: str
    block: str
    line: int

    def where(self) -> str:
        return f"`{self.text}` (block {self.block}, line {self.line})"


class Coverage:
    """Which way every branch and select of one kernel has gone (both counters
    are per site, summed over every launch since the last :meth:`reset`)."""

    def __init__(self):
        self.sites: list = []
        self.true: list = []
        self.false: list = []

    def wrap(self, fn, cond_slot: int, site: Site):
        """``fn`` (a decoded closure ``f(R, X)``) preceded by recording the
        value in register ``cond_slot`` (numpy bool, shape ``(32,)`` or
        ``(32, n)``) for ``site``."""
        i = len(self.sites)
        self.sites.append(site)
        self.true.append(False)
        self.false.append(False)
        T, F = self.true, self.false

        def g(R, X):
            c = R[cond_slot]
            if not T[i] and c.any():
                T[i] = True
            if not F[i] and not c.all():
                F[i] = True
            return fn(R, X)
        return g

    def reset(self) -> None:
        for k in range(len(self.sites)):
            self.true[k] = self.false[k] = False

    def merge(self, other: "Coverage") -> None:
        """OR ``other``'s record (the same kernel decoded in another process) into this one."""
        for k in range(len(self.sites)):
            self.true[k] = self.true[k] or other.true[k]
            self.false[k] = self.false[k] or other.false[k]

    def summary(self) -> dict:
        """``{"br": (sites, both ways), "select": (sites, both ways), "missing":
        [(where, "never true" | "never false" | "never run")]}``."""
        out = {"br": [0, 0], "select": [0, 0], "missing": []}
        for s, t, f in zip(self.sites, self.true, self.false):
            out[s.kind][0] += 1
            if t and f:
                out[s.kind][1] += 1
            else:
                how = "never run" if not (t or f) else "never false" if t else "never true"
                out["missing"].append((s.where(), how, site_hints(s)))
        return out


_DEF = re.compile(r"^%([A-Za-z_][A-Za-z0-9_.]*?)\d* = ")
_COND = re.compile(r"^br i1 %([A-Za-z_][A-Za-z0-9_.]*?)\d*,")


def site_hints(site: Site) -> tuple:
    """The names a declared reason can use for ``site``: its SSA hint (the value a
    select defines, the condition a branch tests; the name without its counter)
    and its block's hint."""
    m = _DEF.match(site.text) or _COND.match(site.text)
    out = (m.group(1),) if m else ()
    b = re.match(r"^([A-Za-z_][A-Za-z0-9_.]*?)\d*$", site.block)
    return out + ((b.group(1),) if b else ())


def judge(summary: dict, classes: dict, uncovered) -> tuple:
    """``(failures, declared)`` of one config's coverage: every site not gone both
    ways and every required tile class not hit is a failure, unless one of the
    site's hints (:func:`site_hints`) is a key of ``uncovered`` (hint -> reason,
    declared at the config), which makes it a declared line instead."""
    fails, declared = [], []
    for where, how, hints in summary["missing"]:
        key = next((h for h in hints if h in uncovered), None)
        if key is None:
            fails.append(f"{how}: {where}")
        else:
            declared.append(f"{how}: {where}: declared: {uncovered[key]}")
    fails += [f"tile class {c} not hit" for c, hit in (classes or {}).items() if not hit]
    return fails, declared

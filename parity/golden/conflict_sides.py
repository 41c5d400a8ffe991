"""Which side of a golden merge conflict the engines reproduce (``parity check`` and ``parity write``).

A conflict entry (parity/golden/merge_driver.py) holds ``base``, ``ours`` and ``theirs``.
After a merge the question a developer has is not each key's hashes but which branch's
kernels the merged engines now give: per family, how many conflicted entries the engines
reproduce as ours, as theirs (both when the two sides agree) or as neither.
"""
from __future__ import annotations

from parity.base.escape import shown
from parity.golden import shards as G

SIDES = ("ours", "theirs", "neither")


def side(conflict: dict, entry: dict | None) -> str:
    """``ours``, ``theirs`` or ``neither``: which side of conflict entry ``conflict`` equals
    the engines' ``entry`` (ours when both sides equal it)."""
    c = conflict["conflict"]
    if entry is not None and entry == c.get("ours"):
        return "ours"
    if entry is not None and entry == c.get("theirs"):
        return "theirs"
    return "neither"


def count(pairs) -> dict[str, int]:
    """``{side: n}`` over ``(conflict entry, engines' entry)`` pairs."""
    out = dict.fromkeys(SIDES, 0)
    for conflict, entry in pairs:
        out[side(conflict, entry)] += 1
    return out


def summary_line(family: str, counts: dict[str, int], verb: str = "reproduce") -> str:
    """``  FAMILY: 48 merge-conflicted entries: the engines reproduce ours 30, theirs 10, neither 8``."""
    n = sum(counts.values())
    parts = ", ".join(f"{s} {counts[s]}" for s in SIDES)
    return (f"  {shown(family)}: {n} merge-conflicted entr{'y' if n == 1 else 'ies'}: "
            f"the engines {verb} {parts}")


def write_pairs(changes, old: dict | None, new: dict | None) -> list[tuple[dict, dict | None]]:
    """The (conflict entry, entry written) pairs of a write's ``changes`` (G.Finding) of one shard."""
    out = []
    for c in changes:
        o = ((old or {}).get(c.flavor) or {}).get(c.config)
        if G.is_conflict(o):
            out.append((o, ((new or {}).get(c.flavor) or {}).get(c.config)))
    return out

"""Nearest-name suggestions for unknown names given on the command line
(configs, families): difflib's close matches, printed through
:func:`parity.base.escape.shown`."""
from __future__ import annotations

import difflib
from typing import Iterable

from parity.base.escape import shown


def nearest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` names of ``known`` closest to ``name`` (difflib ratio >= 0.6,
    best first); a known name that contains ``name`` or is contained in it counts too."""
    known = sorted(set(known))
    out = difflib.get_close_matches(name, known, n=n, cutoff=0.6)
    for k in known:
        if len(out) >= n:
            break
        if k not in out and name and (name in k or k in name):
            out.append(k)
    return out


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean a, b?"`` for the names nearest ``name``, or ``""``."""
    near = nearest(name, known)
    return f"; did you mean {', '.join(shown(x) for x in near)}?" if near else ""

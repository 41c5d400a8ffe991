"""Where a mutated value goes: two equivalence proofs that follow its uses through the honest
kernel (docs/sim.md, "Mutation lane", *proved* reasons), on the abstract values of the proof's
interpreter (parity/proof/interpret.py, run on the honest kernel with the admission facts of
parity/mutate/proved.py):

* :func:`unchosen_only`: every path from the mutated value to a side effect (store, load, call,
  branch, return) passes through a ``select`` arm that is never chosen: the select's i1
  condition is a constant on every admitted launch and does not itself depend on the mutated
  value. LLVM's instcombine folds such a select to its chosen arm; the value is then dead.
* :func:`offset_uses`: the mutant adds a constant ``delta`` to an ``add`` / ``sub`` result
  (a literal operand changed), and every use gives the honest result anyway: an unsigned
  compare whose other operand's difference from the value cannot fall in the window the
  delta moves across (known low bits or intervals), or a right shift (``lshr``, ``udiv`` by
  a power of two) that drops the delta with the value's known low bits, or a select that
  passes it to such uses. The value never wraps (its known low bits leave room for delta).

Why the honest kernel's abstract values suffice is the induction of parity/mutate/proved.py:
the two executions agree up to the mutated instruction, and each use is shown to agree too.
"""
from __future__ import annotations

import re
from functools import lru_cache

from parity.proof import domain as D

_DEF = re.compile(r"^  %([\w.$-]+) = (?:(?:tail|notail|musttail) )?(\w+) ?(.*)$")   # a marked call is a call
_NAME = re.compile(r"%([\w.$-]+)")
#: instructions whose result is an effect or may trap: a use by one of these is a side effect
_EFFECT_OPS = {"call", "load", "atomicrmw", "cmpxchg", "udiv", "sdiv", "urem", "srem"}
_SELECT = re.compile(r"^select i1 (%[\w.$-]+), \S+ (\S+), \S+ (\S+)$")
_ICMP = re.compile(r"^icmp (eq|ne|ult|ule|ugt|uge) i(\d+) (\S+), (\S+)$")
_ADDSUB = re.compile(r"^(add|sub)((?: nuw| nsw)*) i(\d+) (\S+), (\S+)$")
_SHIFT = re.compile(r"^(lshr|udiv)((?: exact)?) i(\d+) (%[\w.$-]+), (\d+)$")
MAX_DEPTH = 8


@lru_cache(maxsize=8)
def uses_of(text: str) -> dict:
    """SSA name -> [(name defined or '', op, rest)] of every instruction line using it
    (kept for the next mutant of the same kernel: read-only)."""
    out: dict = {}
    for ln in text.split("\n"):
        if not ln.startswith("  ") or ln.startswith("  ;"):
            continue
        m = _DEF.match(ln)
        dst, op, rest = (m.group(1), m.group(2), m.group(3)) if m else ("", ln.split()[0], ln.strip())
        for n in set(_NAME.findall(rest)):
            out.setdefault(n, []).append((dst, op, rest))
    return out


def _const_cond(it, cond: str):
    """True / False when the i1 ``%cond`` is a constant in the honest kernel's abstract values."""
    v = it.env.get(cond[1:]) if cond.startswith("%") else None
    return bool(v[2]) if isinstance(v, tuple) and D.is_const(v) else None


def unchosen_only(it, original: str, name: str) -> str:
    """Why ``%name`` (a mutated, non-trapping instruction's result) reaches no side effect of
    ``original`` except through never-chosen select arms; '' when it may. The tainted set is
    grown to a fixpoint, so a select is cut only if its chosen arm stays untainted."""
    uses = uses_of(original)
    tainted: set = {name}
    while True:
        cut, grown = 0, set()
        for n in tainted:
            for dst, op, rest in uses.get(n, ()):
                s = _SELECT.match(f"select {rest}") if op == "select" else None
                c = _const_cond(it, s.group(1)) if s else None
                if c is not None and s.group(1)[1:] not in tainted:
                    chosen = s.group(2) if c else s.group(3)
                    if not (chosen.startswith("%") and chosen[1:] in tainted):
                        cut += 1
                        continue
                if not dst or op in _EFFECT_OPS:
                    return ""
                if dst not in tainted:
                    grown.add(dst)
        if not grown:
            break
        tainted |= grown
    if not cut:
        return ""
    return (f"%{name} reaches the kernel's effects only through {cut} select arm(s) never chosen "
            "(each condition a constant on every admitted launch, independent of the mutant)")


def literal_delta(honest: str, mutant: str):
    """(name, width, delta) when ``mutant`` is ``honest`` (an ``add`` / ``sub``) with one
    literal operand changed so that the result is the honest one plus ``delta``; else None."""
    h, m = _DEF.match(honest), _DEF.match(mutant)
    if not h or not m or h.group(1) != m.group(1):
        return None
    a, b = _ADDSUB.match(f"{h.group(2)} {h.group(3)}"), _ADDSUB.match(f"{m.group(2)} {m.group(3)}")
    if not a or not b or a.group(1) != b.group(1) or a.group(2) or b.group(2) or a.group(3) != b.group(3):
        return None
    lit = re.compile(r"^-?\d+$")
    for i, sign in ((4, 1), (5, 1 if a.group(1) == "add" else -1)):
        j = 9 - i
        if a.group(j) == b.group(j) and lit.match(a.group(i)) and lit.match(b.group(i)) \
                and a.group(i) != b.group(i):
            return h.group(1), int(a.group(3)), sign * (int(b.group(i)) - int(a.group(i)))
    return None


def _no_wrap(v, delta: int) -> bool:
    """``v + delta`` stays in ``0 .. 2^w - 1`` for every value ``v`` stands for."""
    w, k, r, lo, hi = v
    if delta > 0:
        return hi + delta <= D.MASK[w] or (k < w and r + delta < (1 << k))
    return lo + delta >= 0 or r + delta >= 0


def _critical(pred: str, delta: int) -> list:
    """The differences ``d = y - v`` at which ``icmp pred v, y`` and ``icmp pred v + delta, y``
    disagree (v, y unsigned, no wrap)."""
    if pred in ("eq", "ne"):
        return [0, delta]
    theta = {"ult": 1, "ule": 0, "ugt": 0, "uge": 1}[pred]   # ult/ule: d >= theta; ugt/uge: not (d >= theta)
    return list(range(theta, theta + delta)) if delta > 0 else list(range(theta + delta, theta))


def _compare_holds(v, y, pred: str, delta: int) -> bool:
    """No value pair (v, y) has a critical difference: by the interval of y - v or by the
    low bits both know (y - v mod 2^k is fixed)."""
    crit = _critical(pred, delta)
    dlo, dhi = y[3] - v[4], y[4] - v[3]
    k = min(v[1], y[1])
    g = (y[2] - v[2]) & D.MASK[k]
    return all(not (dlo <= d <= dhi) or (k > 0 and d & D.MASK[k] != g) for d in crit)


_SWAP = {"ult": "ugt", "ule": "uge", "ugt": "ult", "uge": "ule", "eq": "eq", "ne": "ne"}


def offset_uses(it, original: str, name: str, delta: int, depth: int = 0) -> bool:
    """Every use of ``%name`` (the honest value plus ``delta`` in the mutant) gives the honest
    result (module docstring)."""
    v = it.env.get(name)
    if depth > MAX_DEPTH or not isinstance(v, tuple) or not delta or not _no_wrap(v, delta):
        return False
    for dst, op, rest in uses_of(original).get(name, ()):
        tok = f"%{name}"
        if op == "icmp":
            m = _ICMP.match(f"icmp {rest}")
            if not m or (m.group(3) == tok) == (m.group(4) == tok):
                return False
            pred, other = (m.group(1), m.group(4)) if m.group(3) == tok else (_SWAP[m.group(1)], m.group(3))
            y = it.val(other, int(m.group(2)))
            if not isinstance(y, tuple) or not _compare_holds(v, y, pred, delta):
                return False
        elif op in ("lshr", "udiv"):
            m = _SHIFT.match(f"{op} {rest}")
            if not m or m.group(2) or m.group(4) != tok:
                return False
            c = int(m.group(5))
            if op == "udiv":
                if c <= 0 or c & (c - 1):
                    return False
                c = c.bit_length() - 1
            if v[1] < c or not 0 <= (v[2] & D.MASK[c]) + delta < (1 << c):
                return False
        elif op == "select":
            s = _SELECT.match(f"select {rest}")
            cond = _const_cond(it, s.group(1)) if s else None
            if cond is None or s.group(1) == tok:
                return False
            chosen = s.group(2) if cond else s.group(3)
            if chosen == tok and not offset_uses(it, original, dst, delta, depth + 1):
                return False
        else:
            return False
    return True

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

*Boundary coverage*: for every integer compare whose strict and non-strict
forms differ (``ult ule ugt uge slt sle sgt sge``) the same kernel records
whether its two operands were ever equal in a lane (:meth:`Coverage.wrap_cmp`):
the one case where ``<`` and ``<=`` give different answers. A mask compare
(``m < M``) that never saw ``m == M`` cannot tell a row mask one long from the
right one (docs/sim.md, "Coverage").
"""
from __future__ import annotations

import re
from dataclasses import dataclass


#: K-loop iteration classes of a site's outcomes (docs/sim.md, "Coverage")
ITERATION_CLASSES = ("first", "middle", "last")
#: the integer compare predicates whose strict and non-strict forms differ (only at equality)
ORDERED = frozenset(("ult", "ule", "ugt", "uge", "slt", "sle", "sgt", "sge"))


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
        self.cmp_sites: list = []   # boundary coverage: ordered integer compares
        self.equal: list = []       # ... whose operands were equal in some lane
        # per K-loop iteration class: site index -> bits (1 true, 2 false), for the sites
        # inside a loop (:meth:`wrap` with ``loop``); per wave the current trip's record
        self.in_loop: dict = {}     # site index -> loop id
        self.carried: set = set()   # loop-body sites whose value is dead in the last trip
        self.back_edges: set = set()  # loop-body branches to their loop's header
        self.by_class: dict = {c: {} for c in ITERATION_CLASSES}
        self._trips: dict = {}

    def wrap(self, fn, cond_slot: int, site: Site, loop=None, carried: bool = False, back: bool = False):
        """``fn`` (a decoded closure ``f(R, X)``) preceded by recording the
        value in register ``cond_slot`` (numpy bool, shape ``(32,)`` or
        ``(32, n)``) for ``site``; ``loop``: the id of the loop whose body holds
        the site (its outcomes are also recorded per iteration class);
        ``carried``: the site's value is dead in the loop's last trip
        (:func:`parity.sim.loops.carried_only`); ``back``: the branch is a back edge of
        ``loop`` (true on every trip but the last by definition: not judged per class)."""
        i = len(self.sites)
        if carried:
            self.carried.add(i)
        if back:
            self.back_edges.add(i)
        self.sites.append(site)
        self.true.append(False)
        self.false.append(False)
        T, F = self.true, self.false
        if loop is not None:
            self.in_loop[i] = loop
            trips = self._trips

            def gl(R, X):
                c = R[cond_slot]
                bits = (1 if c.any() else 0) | (0 if c.all() else 2)
                if bits & 1:
                    T[i] = True
                if bits & 2:
                    F[i] = True
                st = trips.get((id(X.launch), X.agent, loop))
                if st is not None:
                    st[1][i] = st[1].get(i, 0) | bits
                return fn(R, X)
            return gl

        def g(R, X):
            c = R[cond_slot]
            if not T[i] and c.any():
                T[i] = True
            if not F[i] and not c.all():
                F[i] = True
            return fn(R, X)
        return g

    def wrap_cmp(self, fn, a_slot: int, b_slot: int, site: Site):
        """``fn`` (a decoded ordered ``icmp``) followed by noting whether its
        operands (registers ``a_slot``, ``b_slot``) were equal in some lane."""
        i = len(self.cmp_sites)
        self.cmp_sites.append(site)
        self.equal.append(False)
        E = self.equal

        def g(R, X):
            r = fn(R, X)
            if not E[i] and (R[a_slot] == R[b_slot]).any():
                E[i] = True
            return r
        return g

    def wrap_trip(self, fn, loop):
        """``fn`` (the first instruction of loop ``loop``'s header) preceded by the
        start of a trip: the wave's previous trip (if it was in the loop) was its
        first or a middle one."""
        trips, flush = self._trips, self._flush

        def g(R, X):
            key = (id(X.launch), X.agent, loop)
            st = trips.get(key)
            if st is None:
                trips[key] = [0, {}]
            else:
                flush(st[1], "first" if st[0] == 0 else "middle")
                st[0] += 1
                st[1] = {}
            return fn(R, X)
        return g

    def wrap_exit(self, fn, loops):
        """``fn`` (the first instruction of a block the loops ``loops`` exit to)
        preceded by closing the wave's trip record of each: its last trip (and its
        first, for a loop of one trip)."""
        trips, flush = self._trips, self._flush

        def g(R, X):
            for loop in loops:
                st = trips.pop((id(X.launch), X.agent, loop), None)
                if st is not None:
                    flush(st[1], "last")
                    if st[0] == 0:
                        flush(st[1], "first")
            return fn(R, X)
        return g

    def _flush(self, rec: dict, cls: str) -> None:
        d = self.by_class[cls]
        for i, bits in rec.items():
            d[i] = d.get(i, 0) | bits

    def reset(self) -> None:
        for k in range(len(self.sites)):
            self.true[k] = self.false[k] = False
        for k in range(len(self.cmp_sites)):
            self.equal[k] = False
        for d in self.by_class.values():
            d.clear()
        self._trips.clear()

    def merge(self, other: "Coverage") -> None:
        """OR ``other``'s record (the same kernel decoded in another process) into this one."""
        for k in range(len(self.sites)):
            self.true[k] = self.true[k] or other.true[k]
            self.false[k] = self.false[k] or other.false[k]
        for k in range(len(self.cmp_sites)):
            self.equal[k] = self.equal[k] or other.equal[k]
        for c, d in other.by_class.items():
            self._flush(d, c)

    def iteration_summary(self) -> dict:
        """Per K-loop iteration class (``first``, ``middle``, ``last``): ``[sites in a
        loop body, gone both ways in that class, gone one way only, never run in
        it]``; the look-ahead bound selects of the pipelined loop are sites of its body."""
        n = len(self.in_loop)
        out = {}
        for c in ITERATION_CLASSES:
            d = self.by_class[c]
            both = sum(1 for i in self.in_loop if d.get(i, 0) == 3)
            one = sum(1 for i in self.in_loop if d.get(i, 0) in (1, 2))
            out[c] = [n, both, one, n - both - one]
        return out

    def iteration_missing(self, carried: bool = False) -> list:
        """``[(where, class, how, hints)]``: every loop-body site that went both ways over
        the whole run but not within iteration class ``class``, for the classes its loop
        ran with a middle trip (a loop of at least three trips: ``middle`` recorded some
        site of it); ``how`` is ``never true`` / ``never false`` / ``never run``. The
        ``last`` class of a site whose value is dead in the last trip is left out (listed
        instead with ``carried=True``: only those)."""
        loops3 = {self.in_loop[i] for i in self.by_class["middle"] if i in self.in_loop}
        out = []
        for i, loop in sorted(self.in_loop.items()):
            if loop not in loops3 or not (self.true[i] and self.false[i]):
                continue
            if i in self.back_edges or (self.sites[i].kind == "br" and site_hints(self.sites[i])[:1] == ("again",)):
                continue  # the back edge: true on every trip but the last by definition
            for c in ITERATION_CLASSES:
                bits = self.by_class[c].get(i, 0)
                if bits != 3 and carried == (c == "last" and i in self.carried):
                    how = "never run" if not bits else "never false" if bits == 1 else "never true"
                    out.append((self.sites[i].where(), c, how, site_hints(self.sites[i])))
        return out

    def summary(self) -> dict:
        """``{"br": (sites, both ways), "select": (sites, both ways), "missing":
        [(where, "never true" | "never false" | "never run", hints)], "boundary":
        (ordered compares, operands seen equal), "boundary_missing": [(where, hints)]}``."""
        out = {"br": [0, 0], "select": [0, 0], "missing": []}
        for s, t, f in zip(self.sites, self.true, self.false):
            out[s.kind][0] += 1
            if t and f:
                out[s.kind][1] += 1
            else:
                how = "never run" if not (t or f) else "never false" if t else "never true"
                out["missing"].append((s.where(), how, site_hints(s)))
        out["boundary"] = [len(self.cmp_sites), sum(self.equal)]
        out["iterations"] = self.iteration_summary()
        out["iteration_missing"] = self.iteration_missing()
        out["iteration_carried"] = self.iteration_missing(carried=True)
        out["boundary_missing"] = [(s.where(), site_hints(s)) for s, e in zip(self.cmp_sites, self.equal) if not e]
        return out

    def boundary_of(self, hint: str) -> tuple:
        """``(sites, reached)``: the ordered compares whose SSA hint is ``hint`` and how
        many of them saw their operands equal."""
        ks = [k for k, s in enumerate(self.cmp_sites) if site_hints(s)[:1] == (hint,)]
        return len(ks), sum(1 for k in ks if self.equal[k])


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


#: the reason printed for a loop site's ``last`` class when its value is dead in the last trip
CARRIED_REASON = ("its value only feeds the loop header's phis (the next trip; parity/sim/loops.py "
                  "carried_only): dead in the last trip")


def judge(summary: dict, classes: dict, uncovered, iterations: bool = True) -> tuple:
    """``(failures, declared)`` of one config's coverage: every site not gone both
    ways, every required tile class not hit, and every K-loop site that went both
    ways over the run but not within one iteration class (first, middle, last) of a
    loop that ran at least three trips (:meth:`Coverage.iteration_missing`; a reason
    is declared as ``hint`` or ``hint@class``; judged unless ``iterations`` is false:
    ``parity numerics --coverage --no-iterations``) is a failure, unless one of the
    site's hints (:func:`site_hints`) is a key of ``uncovered`` (hint -> reason,
    declared at the config), which makes it a declared line instead. The ``last``
    class of a site whose value is dead in the last trip is a declared line
    (:data:`CARRIED_REASON`)."""
    fails, declared = [], []
    for where, how, hints in summary["missing"]:
        key = next((h for h in hints if h in uncovered), None)
        if key is None:
            fails.append(f"{how}: {where}")
        else:
            declared.append(f"{how}: {where}: declared: {uncovered[key]}")
    fails += [f"tile class {c} not hit" for c, hit in (classes or {}).items() if not hit]
    if not iterations:
        return fails, declared
    for where, cls, how, hints in summary.get("iteration_missing", ()):
        # a reason declared for the site (hint) or for the site in this class (hint@class)
        key = next((k for h in hints for k in (f"{h}@{cls}", h) if k in uncovered), None)
        if key is None:
            fails.append(f"K-loop iteration class {cls}: {how} in the {cls} trips (both ways over the run): {where}")
        else:
            declared.append(f"K-loop iteration class {cls}: {how}: {where}: declared: {uncovered[key]}")
    for where, cls, how, _ in summary.get("iteration_carried", ()):
        declared.append(f"K-loop iteration class {cls}: {how}: {where}: declared: {CARRIED_REASON}")
    return fails, declared

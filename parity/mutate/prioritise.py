"""Coverage-ordered cases for the numerics oracle: the cases that run a mutant's changed
block first, cheapest first (docs/sim.md, "Mutation lane").

This is the test prioritisation of mutation-testing tools (PIT runs the tests that cover
a mutated line, fastest first): a mutant is killed by the first case that fails, so a case
that never enters the changed block only spends time. Per config, one honest run of the
numerics plan with branch coverage on (parity/sim/coverage.py) gives each case's cost in
wave-instructions and the blocks of the config's own kernel it entered. A mutant's cases
then run in this order: the cases that entered a block holding a changed line, by
ascending cost, then every other case in plan order. Every case still runs until one
fails, so the verdict (killed or survived) is the one of plan order; only which failure
is reported first (the verdict's reason) and the time change.

A mutant whose change is not inside one of the kernel's blocks (a function attribute, a
metadata node, a declaration, a launch-plan slip that leaves the IR alone) keeps plan
order. The order depends on the job only (its config and texts), never on the worker or
on what it judged before, so a Dask run reports the same reasons as a local one.
"""
from __future__ import annotations

from dataclasses import dataclass

from parity.mutate import proved as PROVED
from parity.sim import numerics as N
from parity.sim.errors import SimError

#: a conv config with at least this many planned mutants gets the profile (one honest run
#: of its plan, about the cost of judging ten killed mutants); below it, plan order
MIN_SITES = 48


@dataclass(frozen=True)
class CaseProfile:
    """One case of a config's honest numerics run: its name, wave-instructions, and the
    blocks of the config's own kernel it entered (None: unknown, e.g. it raised)."""

    name: str
    cost: int
    blocks: frozenset | None


@dataclass(frozen=True)
class Profile:
    """A config's honest run: its cases (plan order) and each instruction line's block."""

    cases: tuple
    block_of: dict


_PROFILES: dict = {}
#: configs whose profile a worker keeps (a plan interleaves configs by cost; a profile is a
#: few KB)
_KEEP = 256


def reached_blocks(kernel) -> frozenset:
    """The blocks of ``kernel`` (decoded with coverage on) that its launches since the last
    ``coverage.reset()`` entered: the entry block, every block holding a site that ran, the
    target of every recorded branch outcome, then the targets of unconditional branches of
    those blocks to a fixed point. Exact for launches that ran to completion (a block runs
    to its terminator)."""
    cov = kernel.coverage
    blocks = {b.name: b for b in kernel.module.blocks}
    reached = {kernel.module.blocks[0].name}
    for site, t, f in zip(cov.sites, cov.true, cov.false):
        if not (t or f):
            continue
        reached.add(site.block)
        if site.kind == "br":
            targets = blocks[site.block].ins[-1].extra["targets"]
            reached.update(x for x, went in zip(targets, (t, f)) if went)
    todo = list(reached)
    while todo:
        term = blocks[todo.pop()].ins[-1]
        if term.op == "br" and len(term.extra["targets"]) == 1 and term.extra["targets"][0] not in reached:
            reached.add(term.extra["targets"][0])
            todo.append(term.extra["targets"][0])
    return frozenset(reached)


def profile(job) -> Profile:
    """The :class:`Profile` of ``job``'s config: one honest run of its numerics plan with
    coverage on (cached per process by config and kernel text)."""
    key = (job.family, job.config, job.arch, hash(job.original))
    if key not in _PROFILES:
        lw = N.TextLowerer(job.family, job.spec, job.arch, job.original, coverage=True)
        own = lw.kernel(job.family, job.spec, job.arch)
        out = []
        for case in N.PLANS[job.family].cases(job.spec, job.arch, lw):
            if not hasattr(case, "launches"):
                continue   # a Skipped problem: not run by the oracle either
            own.coverage.reset()
            try:
                _, n = N.run_case(case, lw, case.orders)
                out.append(CaseProfile(case.name, n, reached_blocks(own)))
            except SimError:   # an expected-error case: where it stopped is not known
                out.append(CaseProfile(case.name, 0, None))
        if len(_PROFILES) >= _KEEP:
            _PROFILES.clear()
        _PROFILES[key] = Profile(tuple(out), PROVED.block_labels(job.original))
    return _PROFILES[key]


def changed_blocks(block_of: dict, original: str, mutant: str) -> frozenset | None:
    """The blocks (``block_of``: instruction line -> block of ``original``) holding the honest lines that
    ``mutant`` changes (the span between the texts' common prefix and suffix; an inserted
    line: its neighbours); None when a changed line is not an instruction of a block, or
    nothing changed."""
    h, m = original.split("\n"), mutant.split("\n")
    p = 0
    while p < min(len(h), len(m)) and h[p] == m[p]:
        p += 1
    s = 0
    while s < min(len(h), len(m)) - p and h[-1 - s] == m[-1 - s]:
        s += 1
    lines = range(p + 1, len(h) - s + 1) if len(h) - s > p else (range(p, p + 2) if len(m) > len(h) else ())
    if not lines:
        return None
    if not all(ln in block_of for ln in lines):
        return None
    return frozenset(block_of[ln] for ln in lines)


def case_order(job):
    """A ``run_config(order=...)`` function putting ``job``'s cases that enter a changed
    block first, by ascending honest cost, the rest after in plan order; None (plan order)
    when the change is outside every block."""
    prof = profile(job)
    changed = changed_blocks(prof.block_of, job.original, job.mutant.text)
    if changed is None:
        return None
    rank = {}
    for i, c in enumerate(prof.cases):
        hits = c.blocks is None or bool(c.blocks & changed)
        rank[c.name] = (0, c.cost, i) if hits else (1, 0, i)

    def order(cases: list) -> list:
        return sorted(cases, key=lambda c: rank.get(getattr(c, "name", None), (1, 0, len(rank))))
    return order

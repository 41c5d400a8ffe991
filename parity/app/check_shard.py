"""``parity check --shard I/N``: one of N deterministic parts of a check, balanced by the
measured cost of each config (docs/ci.md, "Sharding the check").

A shard's unit is a config with all its flavors (so a golden entry's key is checked by one
shard). The costs are the seconds each config took in the gate's workers (both engines, all
flavors), measured by ``parity check --record-costs FILE`` and committed as
:data:`COSTS_FILE`; a config the table does not know costs its family's median (else the
table's median, else 1). The split is the longest-processing-time rule: units in
decreasing cost (ties by name) each go to the shard with the least load so far (ties: the
lowest shard), so the same configs and the same table give the same shards on every
machine, and every unit is in exactly one shard: the union of the N shards is the full
check.

What a whole check says about a family (its golden shard's ORPHAN and CONFLICT entries
that no config runs; "compared nothing" when no config is IDENTICAL at a flavor) is said
by one shard, the family's *owner*: the shard of its anchor, the unit holding the first
config (by name) expected to lower at each flavor, which are kept together. Shards of
families no longer configured, and families without configs, belong to shard 1.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from parity.cli.shard import ShardError, cost_of, deal, load_cost_table, parse_shard  # noqa: F401 - every --shard's I/N syntax
from parity.base.outputs import write_report
from parity.golden import shards as G

#: The committed cost table (``parity check --record-costs``), {"FAMILY/CONFIG": seconds}.
COSTS_FILE = Path(__file__).resolve().parents[1] / "data" / "check_costs.json"
COMPARED_NOTHING = "compared nothing (no IDENTICAL)"


def load_costs(path: Path = COSTS_FILE) -> dict[str, float]:
    """{FAMILY/CONFIG: seconds} of the cost table (empty when there is none or it is unreadable)."""
    return load_cost_table(path)


def record_costs(report, path: str | Path) -> int:
    """Write the measured cost of every config of ``report`` (seconds summed over its flavors,
    to the 0.1 ms) to ``path`` as a cost table; returns the number of configs."""
    costs: dict[str, float] = {}
    for r in report.results:
        key = f"{r.family}/{r.config}"
        costs[key] = costs.get(key, 0.0) + max(0.0, float(r.seconds))
    doc = {"format": 1, "unit": "seconds (both engines, every flavor, in one gate worker)",
           "made_by": "parity check --record-costs FILE (docs/ci.md)",
           "costs": {k: round(v, 4) for k, v in sorted(costs.items())}}
    write_report(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return len(costs)


@dataclass
class Shard:
    """Shard ``index`` of ``count``: its configs, the families it owns, the full selection."""

    index: int
    count: int
    names: dict[str, set[str]]            # {family: config names this shard runs}
    owned: set[str]                       # families whose whole-family findings this shard reports
    assigned: dict[tuple[str, str], int]  # every (family, config) of the full selection -> its shard
    families: set[str] = field(default_factory=set)  # every family of the full selection
    loads: list[float] = field(default_factory=list)  # each shard's planned cost

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def empty(self) -> bool:
        """The shard holds no config and owns no family (N above the units there are): GREEN."""
        return not self.names and not self.owned

    def line(self) -> str:
        """``shard I/N: C configs of T, planned cost X s of Y s`` (the costs of :data:`COSTS_FILE`)."""
        mine = sum(len(v) for v in self.names.values())
        if self.empty:  # CI shards a fixed N over a catalog that changes
            return (f"shard {self.label}: holds no config ({len(self.assigned)} configs in {self.count} shards; "
                    "nothing to check here)")
        return (f"shard {self.label}: {mine} configs of {len(self.assigned)}, planned cost "
                f"{self.loads[self.index - 1]:.2f} s of {sum(self.loads):.2f} s")


def _anchor(family, flavors) -> list[str]:
    """The configs that keep the family's "compared something" check with its owner: the first
    config (by name) expected to lower at each flavor, or the first config when none is."""
    names = sorted(family.configs, key=lambda c: c.name)
    picked = []
    for fl in flavors:
        ok = next((c.name for c in names if c.applies(fl) and c.expectation(fl).kind == "ok"), None)
        if ok is not None and ok not in picked:
            picked.append(ok)
    return picked or [names[0].name]


def plan(families, flavors, index: int, count: int, costs: dict[str, float] | None = None) -> Shard:
    """Shard ``index`` (1-based) of ``count`` of the check of ``families`` at ``flavors``."""
    costs = load_costs() if costs is None else costs
    units: list[tuple[float, str, tuple[str, ...]]] = []  # (cost, family, configs)
    anchors: dict[str, tuple[str, ...]] = {}
    for fam in families:
        runnable = [c.name for c in fam.configs if any(c.applies(fl) for fl in flavors)]
        if not runnable:
            continue
        anchor = tuple(n for n in _anchor(fam, flavors) if n in runnable) or (sorted(runnable)[0],)
        anchors[fam.name] = anchor
        units.append((sum(cost_of(costs, fam.name, n) for n in anchor), fam.name, anchor))
        units += [(cost_of(costs, fam.name, n), fam.name, (n,)) for n in runnable if n not in anchor]
    where, loads = deal([(cost, (fam, cfgs)) for cost, fam, cfgs in units], count)
    names: dict[str, set[str]] = {}
    for (fam, cfgs), k in where.items():
        if k == index:
            names.setdefault(fam, set()).update(cfgs)
    owned = {f for f, a in anchors.items() if where[(f, a)] == index}
    if index == 1:
        owned |= {f.name for f in families if f.name not in anchors}  # no runnable config: shard 1
    assigned = {(fam, n): k for (fam, cfgs), k in where.items() for n in cfgs}
    return Shard(index, count, names, owned, assigned, {f.name for f in families}, loads)


def shard_families(families, shard: Shard) -> list:
    """``families`` narrowed to the shard's configs (a family without configs kept by its owner)."""
    out = []
    for fam in families:
        if fam.name in shard.names:
            out.append(replace(fam, configs=tuple(c for c in fam.configs if c.name in shard.names[fam.name])))
        elif fam.name in shard.owned:
            out.append(fam)
    return out


def apply_shard(v, shard: Shard) -> None:
    """Make the check verdict ``v`` of one shard say only what is this shard's to say: golden
    findings of entries run here, whole-family findings (ORPHAN and CONFLICT entries no
    config runs, a shard of a gone family) only from the owner, "compared nothing" only from
    the owner. Edits ``v`` in place."""
    ran = {(r.family, r.flavor, r.config) for r in v.report.results}

    def keep(f: G.Finding) -> bool:
        if (f.family, f.flavor, f.config) in ran:
            return True
        if (f.family, f.config) in shard.assigned:  # a configured config: its own shard says it (all flavors)
            return shard.assigned[(f.family, f.config)] == shard.index
        return f.family in shard.owned or (f.family not in shard.families and shard.index == 1)

    v.findings[:] = [f for f in v.findings if keep(f)]
    for s in v.shards:
        s.findings[:] = [f for f in s.findings if keep(f)]
    v.shards[:] = [s for s in v.shards if s.family in shard.names or s.family in shard.owned
                   or (shard.index == 1 and s.family not in shard.families)]
    for name, summary in v.report.summaries.items():
        if name in shard.owned:
            continue
        for fs in summary.flavors.values():
            fs.problems[:] = [p for p in fs.problems if p != COMPARED_NOTHING]

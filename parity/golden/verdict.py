"""The verdict of ``parity check``, assembled in one place.

A check has two kinds of facts: the gate's run (parity/gate/runner.py: each
entry's engine outcomes, verdict and first difference) and the golden shards
(parity/golden/shards.py: the blessed entries). :func:`assess` joins them once
into a :class:`CheckVerdict`:

* one :class:`EntryVerdict` per entry run (a config at a flavor): its engines
  (the runner's ``Result``), its golden entry and the finding against it
  (CONFLICT, MISSING, CHANGED), which engine still matches the blessed entry
  when the engines disagree, its ``--origin`` lines, its summary line;
* the findings of shard entries nothing ran for (ORPHAN, CONFLICT), one
  :class:`ShardVerdict` per shard (the ``golden NAME.json: ...`` line), the
  failure groups (parity/gate/failure_summary.py), stale temp files, GREEN/RED.

parity/app/gate_commands.py only prints it; ``--json`` is
:meth:`CheckVerdict.to_json`. ``parity write`` (parity/golden/bless.py) uses
:func:`golden_sides` for its refusal summary, so both say the same.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from parity.config import CANONICAL_FLAVORS
from parity.gate.failure_summary import MAX_GROUPS, Group, group_failures
from parity.gate.report import entry_lines
from parity.gate.runner import Report, Result
from parity.golden import shards as G


_LOCATION = re.compile(r"((?:python_engine|cpp_engine)/\S+?\.(?:py|cpp|h|hpp)):(\d+)")


def origin_locations(lines: list[str]) -> list[dict]:
    """``[{"file", "line"}]`` of every engine source location in ``--origin`` lines
    (``python_engine/...py:LINE``, ``cpp_engine/src/...cpp:LINE``), in order."""
    return [{"file": m.group(1), "line": int(m.group(2))} for ln in lines for m in _LOCATION.finditer(ln)]


def _gold(shards: dict, r: Result):
    return (shards.get(r.family) or {}).get(r.flavor, {}).get(r.config)


def golden_side(labels: tuple[str, str], r: Result, gold) -> str:
    """Which engine's own outcome of failing entry ``r`` is the blessed entry ``gold``:
    ``"<label> matches golden"``, ``"both match golden"``, ``"neither matches golden"``,
    or ``"no golden entry"`` (none, or a merge conflict)."""
    if gold is None or not isinstance(gold, dict) or "conflict" in gold:
        return "no golden entry"
    matching = [lab for lab, e in zip(labels, r.engine_entries()) if e == gold]
    if len(matching) == 1:
        return f"{matching[0]} matches golden"
    return "both match golden" if matching else "neither matches golden"


def golden_sides(report: Report, shards: dict) -> dict[str, str]:
    """{entry key: :func:`golden_side`} of every failing entry of ``report`` against
    the loaded ``shards`` ({family: flavors or None})."""
    return {r.key: golden_side(report.labels, r, _gold(shards, r)) for r in report.failures()}


@dataclass
class EntryVerdict:
    """One entry of a check: the engines (``result``), the golden entry and what the
    check found against it, and what the command prints for it."""

    result: Result
    golden: dict | None             # the shard's entry (a conflict entry included); None: none
    finding: G.Finding | None       # CONFLICT, MISSING or CHANGED against ``golden``
    not_compared: str | None        # the engines disagree: which side still matches ``golden``
    origin: list[str] = field(default_factory=list)  # --origin lines (a shown MISMATCH example)

    def lines(self, labels: tuple[str, str]) -> list[str]:
        """The entry's summary line (and a MISMATCH's first differing lines), as ``--full`` prints it."""
        return entry_lines(self.result, labels)


def _entry(report: Report, r: Result, shards: dict) -> EntryVerdict:
    gold = _gold(shards, r)
    finding = not_compared = None
    cur = r.golden_entry()
    if G.is_conflict(gold):
        finding = G.Finding(G.CONFLICT, r.family, r.config, r.flavor, G.describe_entry(gold))
    elif gold is None:
        finding = G.Finding(G.MISSING, r.family, r.config, r.flavor, f"{r.verdict}; no golden entry")
    elif cur is not None and cur != gold:
        finding = G.Finding(G.CHANGED, r.family, r.config, r.flavor, G.describe_change(gold, cur))
    elif cur is None:  # the engines disagree: nothing compared with golden
        sides = [f"{label} {'matches golden' if e == gold else 'differs from golden'}"
                 for label, e in zip(report.labels, r.engine_entries())]
        not_compared = f"{r.config}@{r.flavor}: {r.verdict}, " + ", ".join(sides)
    return EntryVerdict(r, gold, finding, not_compared)


def _unrun_findings(shards: dict, flavors, orphan_shards: dict, seen: set, names: dict) -> list[G.Finding]:
    """ORPHAN / CONFLICT findings of shard entries no result covers (``seen``: their keys)."""
    out: list[G.Finding] = []
    for fam, shard in shards.items():
        for fl, entries in sorted((shard or {}).items()):
            if fl not in CANONICAL_FLAVORS:
                for cfg in sorted(entries):
                    kind = G.CONFLICT if G.is_conflict(entries[cfg]) else G.ORPHAN
                    out.append(G.Finding(kind, fam, cfg, fl, "flavor no longer exists"))
                continue
            if fl not in flavors:
                continue
            for cfg in sorted(entries):
                if (fam in names and cfg not in names[fam]) or (fam, fl, cfg) in seen:
                    continue
                if G.is_conflict(entries[cfg]):
                    out.append(G.Finding(G.CONFLICT, fam, cfg, fl, G.describe_entry(entries[cfg])))
                else:
                    out.append(G.Finding(G.ORPHAN, fam, cfg, fl, "config no longer exists at this flavor"))
    for fam, shard in orphan_shards.items():
        n = len(out)
        for fl, entries in sorted(shard.items()):
            for cfg in sorted(entries):
                kind = G.CONFLICT if G.is_conflict(entries[cfg]) else G.ORPHAN
                out.append(G.Finding(kind, fam, cfg, fl, "family no longer exists"))
        if len(out) == n:  # an orphan shard is reported even when it holds no entry
            out.append(G.Finding(G.ORPHAN, fam, "-", "-", "family no longer exists (shard without entries)"))
    return out


@dataclass
class ShardVerdict:
    """One golden shard of a check: its findings and the entries not compared with it."""

    family: str
    path: Path
    findings: list[G.Finding]
    not_compared: list[str]
    missing: bool                   # no such shard file
    layout: str | None              # a layout problem: ``parity write`` rewrites it

    def state(self) -> str:
        """The text after ``golden NAME.json:``: finding counts, or ``clean``."""
        counts = {k: sum(1 for f in self.findings if f.kind == k) for k in G.FINDING_KINDS}
        parts = [f"{v} {k}" for k, v in counts.items() if v]
        if self.not_compared:
            parts.append(f"{len(self.not_compared)} not compared (engines disagree)")
        state = ", ".join(parts) or "clean"
        if self.missing:
            state += " (shard does not exist)"
        if self.layout:
            state += f"; {self.layout}: run `parity write` to rewrite it"
        return state


@dataclass
class CheckVerdict:
    """Everything ``parity check`` reports, built by :func:`assess`."""

    report: Report
    golden_dir: Path
    entries: list[EntryVerdict]
    findings: list[G.Finding]       # every golden finding, entries run first, then the unrun ones
    shards: list[ShardVerdict]      # in family-name order
    groups: list[Group]             # the failure groups, biggest first
    layouts: dict[str, str]         # {family: layout problem}
    stale_temps: list[Path]         # temp files a killed `parity write` left

    @property
    def green(self) -> bool:
        return self.report.green and not self.findings and not self.layouts

    def origin(self, r: Result) -> list[str]:
        """The ``--origin`` lines of entry ``r`` (empty when not located)."""
        return self._by_key[r.key].origin

    def __post_init__(self) -> None:
        self._by_key = {e.result.key: e for e in self.entries}

    def to_json(self) -> dict:
        doc = self.report.to_json()
        doc["golden"] = [f.to_json() for f in self.findings]
        doc["summary_groups"] = [g.to_json() for g in self.groups]
        doc["golden_dir"] = str(self.golden_dir)
        doc["golden_layout"] = dict(sorted(self.layouts.items()))
        doc["origin"] = [{"family": e.result.family, "config": e.result.config, "flavor": e.result.flavor,
                          "lines": list(e.origin), "locations": origin_locations(e.origin)}
                         for e in self.entries if e.origin]
        return doc


def assess(report: Report, shards: dict, flavors, orphan_shards: dict, gdir: Path, *,
           names: dict | None = None, layouts: dict | None = None,
           locate: Callable[[Result], list[str]] | None = None) -> CheckVerdict:
    """The :class:`CheckVerdict` of a gate run ``report`` against the loaded ``shards``
    ({family: flavors or None}) of golden directory ``gdir``. ``orphan_shards``: the
    shards of families no longer configured (their checked flavors); ``names``
    ({family: config names}, from --only FAMILY/NAME): only those configs of that family
    ran, so no other entry of it is an orphan; ``layouts``: {family: layout problem};
    ``locate(result) -> lines`` (--origin): run on each shown group's MISMATCH example."""
    names, layouts = names or {}, dict(layouts or {})
    entries = [_entry(report, r, shards) for r in report.results]
    seen = {(r.family, r.flavor, r.config) for r in report.results}
    findings = [e.finding for e in entries if e.finding is not None]
    findings += _unrun_findings(shards, flavors, orphan_shards, seen, names)
    groups = group_failures(report, golden_sides(report, shards))
    verdict = CheckVerdict(report, Path(gdir), entries, findings, [], groups, layouts,
                           list(G.stale_temp_files(gdir)))
    if locate is not None:
        for g in groups[:MAX_GROUPS]:
            ex = g.results[0]
            if ex.first_diff is not None:
                verdict.origin(ex).extend(locate(ex))
    for fam in sorted(set(shards) | set(orphan_shards)):
        verdict.shards.append(ShardVerdict(
            fam, G.shard_path(gdir, fam), [f for f in findings if f.family == fam],
            [e.not_compared for e in entries if e.result.family == fam and e.not_compared],
            shards.get(fam) is None and fam not in orphan_shards, layouts.get(fam)))
    return verdict

"""``parity numerics --shard I/N``: a balanced, deterministic part of the accepted configs.

The numerics lane is the longest lane of CI (every accepted config through the emulator
with coverage); ``--shard I/N`` lets N machines share it. Each accepted config is a unit
costed by the table :data:`COSTS_FILE` (``{FAMILY/CONFIG: seconds}`` of one worker, written
by ``parity numerics --record-costs FILE``; a config the table does not know costs its
family's median, parity/cli/shard.py ``cost_of``) and dealt longest first to the shard with
the least planned seconds (parity/cli/shard.py ``deal``): the same configs and table give
the same shards on every machine, every accepted config runs on exactly one shard, and the
N shards together are the whole lane. Coverage and the cross-form invariants are judged
per config, so a shard's verdict is its configs' verdicts.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from parity.base.outputs import write_report
from parity.cli.shard import cost_of, deal, load_cost_table

#: The committed cost table ``--shard`` deals by (refresh: ``parity numerics --coverage
#: --record-costs parity/data/numerics_costs.json`` on a quiet machine, docs/ci.md).
COSTS_FILE = Path(__file__).resolve().parents[1] / "data" / "numerics_costs.json"


def load_costs(path: Path = COSTS_FILE) -> dict[str, float]:
    """{FAMILY/CONFIG: seconds} of the cost table (empty when missing or unreadable: every
    config then costs 1, an even deal by count)."""
    return load_cost_table(path)


def record_costs(outcomes, path) -> int:
    """Write each config's measured seconds (one worker's wall time for its whole plan, as
    ``-v`` prints it) of ``outcomes`` to ``path`` as a cost table; returns the number of
    configs. OSError when ``path`` cannot be written."""
    costs = {f"{o.family}/{o.config}": round(max(0.0, float(o.seconds)), 3) for o in outcomes}
    doc = {"format": 1, "unit": "seconds (one worker, the config's whole plan)",
           "made_by": "parity numerics --record-costs FILE (docs/ci.md)", "costs": dict(sorted(costs.items()))}
    write_report(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return len(costs)


def shard_families(families: list, accepted: list, index: int, count: int,
                   costs: dict[str, float] | None = None) -> tuple[list, str]:
    """``families`` narrowed to the accepted configs of shard ``index`` of ``count``
    (``accepted``: parity/sim/numerics.py ``accepted_configs`` rows ``(family, config, spec,
    arch)``), families without one dropped; and the line that says so."""
    costs = load_costs() if costs is None else costs
    units = [(cost_of(costs, fam, cfg), (fam, cfg)) for fam, cfg, _, _ in accepted]
    where, loads = deal(units, count)
    mine = {key for key, k in where.items() if k == index}
    out = [replace(f, configs=tuple(c for c in f.configs if (f.name, c.name) in mine))
           for f in families if any(fam == f.name for fam, _ in mine)]
    label = f"{index}/{count}"
    if not mine:
        return out, f"numerics shard {label}: holds no config ({len(units)} configs in {count} shards; nothing to run here)"
    return out, (f"numerics shard {label}: {len(mine)} configs of {len(units)}, planned "
                 f"{loads[index - 1]:.1f} s of {sum(loads):.1f} s")

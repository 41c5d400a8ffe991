"""``--shard I/N``: its syntax, and the longest-processing-time deal of costed units.

The one ``I/N`` rule of every command that shards its work (``parity check``, ``parity aot``,
``parity numerics``): ASCII digits, no spaces or signs, ``1 <= I <= N <=`` :data:`MAX_SHARDS`.
:func:`deal` is the balanced partition ``check --shard`` and ``numerics --shard`` share: units
in decreasing cost (ties by key) each go to the shard with the least load so far (ties: the
lowest shard), so the same units and costs give the same shards on every machine, and every
unit is in exactly one shard.
"""
from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

from parity.base.escape import shown
from parity.base.json_guard import load_json


class ShardError(ValueError):
    """A bad ``--shard`` value (the message names the flag and the rule)."""


#: The most shards ``--shard I/N`` splits into (check: the configs; aot: the job grid;
#: numerics: the accepted configs): more than the units there are leaves shards empty.
MAX_SHARDS = 1000


def parse_shard(text: str | None) -> tuple | None:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N <=`` :data:`MAX_SHARDS`; None -> None.
    ShardError (one line) otherwise."""
    if text is None:
        return None
    m = re.fullmatch(r"([0-9]{1,18})/([0-9]{1,18})", text)  # ASCII digits only, no spaces (issue 24)
    if not m:
        raise ShardError(f"--shard must be I/N in ASCII digits (e.g. 2/3), got '{shown(text)}'")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= i <= n:
        raise ShardError(f"--shard I/N needs 1 <= I <= N, got '{shown(text)}'")
    if n > MAX_SHARDS:  # `check --shard 1/99999999999` made a list of N loads: a MemoryError traceback
        raise ShardError(f"--shard I/N needs N <= {MAX_SHARDS}, got '{shown(text)}'")
    return i, n


def shard_arg(text: str) -> str:
    """argparse type of ``--shard``: the text, once :func:`parse_shard` takes it (its error named
    by argparse: ``parity CMD: argument --shard: ...``)."""
    try:
        parse_shard(text)
    except ShardError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--shard ").removeprefix("--shard: ")) from None
    return text


def deal(units, count: int) -> tuple[dict, list]:
    """``units``: ``(cost, key)`` pairs (cost >= 0 seconds, keys distinct and sortable).
    Returns ``({key: shard 1..count}, [planned cost of each shard])``."""
    loads = [0.0] * count
    where = {}
    for cost, key in sorted(units, key=lambda u: (-u[0], u[1])):
        k = min(range(count), key=lambda i: (loads[i], i))
        loads[k] += cost
        where[key] = k + 1
    return where, loads


def cost_of(costs: dict, family: str, config: str) -> float:
    """The cost (seconds) of ``family/config`` in a cost table ``{FAMILY/CONFIG: seconds}``: its
    own, else its family's median, else the table's median, else 1 (a config the table does not
    know yet)."""
    own = costs.get(f"{family}/{config}")
    if own is not None:
        return own
    fam = [v for k, v in costs.items() if k.partition("/")[0] == family]
    if fam:
        return statistics.median(fam)
    return statistics.median(costs.values()) if costs else 1.0


def load_cost_table(path) -> dict[str, float]:
    """``{FAMILY/CONFIG: seconds}`` of a cost table (``{"costs": {...}}``, written by a
    command's ``--record-costs``): empty when the file is missing or unreadable, negative
    seconds left out."""
    try:
        doc = load_json(Path(path).read_bytes(), str(path))  # JsonInputError is a ValueError
        return {str(k): float(v) for k, v in doc["costs"].items() if float(v) >= 0}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}

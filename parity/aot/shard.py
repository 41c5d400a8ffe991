"""``--shard I/N``: a deterministic partition of the AOT jobs by identity hash.

Job ``h`` (16 hex digits, docs/policy.md KernelIdentity) belongs to shard
``int(h, 16) % N + 1``. The partition depends on nothing but the hashes, so
N CI machines build disjoint sets whose union is the grid, on any order of
jobs and any machine.
"""
from __future__ import annotations

import re

from parity.base.escape import shown


class ShardError(ValueError):
    """A bad ``--shard`` value (the message names the flag and the rule)."""


#: The most shards ``--shard I/N`` splits into (check: the configs; aot: the job grid):
#: more than the units there are leaves shards empty.
MAX_SHARDS = 1000


def parse_shard(text: str | None) -> tuple | None:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N <=`` :data:`MAX_SHARDS`; None -> None."""
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


def shard_of(identity_hash: str, n: int) -> int:
    """The shard (1-based) of a job among ``n``."""
    return int(identity_hash, 16) % n + 1

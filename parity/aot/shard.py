"""``--shard I/N``: a deterministic partition of the AOT jobs by identity hash.

Job ``h`` (16 hex digits, docs/policy.md KernelIdentity) belongs to shard
``int(h, 16) % N + 1``. The partition depends on nothing but the hashes, so
N CI machines build disjoint sets whose union is the grid, on any order of
jobs and any machine.
"""
from __future__ import annotations

# The I/N syntax and its bound are every sharding command's (parity/cli/shard.py).
from parity.cli.shard import MAX_SHARDS, ShardError, parse_shard  # noqa: F401


def shard_of(identity_hash: str, n: int) -> int:
    """The shard (1-based) of a job among ``n``."""
    return int(identity_hash, 16) % n + 1

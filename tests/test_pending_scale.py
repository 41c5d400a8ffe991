"""Pending files at scale (issue 39): one entry per line, linear to write, read and list;
a pending set over the cap of a golden shard is not written, and the one line says
what clears it."""
from __future__ import annotations

import json
import time

import pytest

from parity.golden import pending as P
from parity.golden import shards as G

OLD = {"bytes": 10, "kernel": "k", "sha256": "a" * 64}


def _shard(gdir, n: int) -> dict:
    flavors = {"llvm23": {f"o{i:06d}": {"rejected": "gone"} for i in range(n)}}
    G.shard_path(gdir, "ir_core").write_text(G.render_shard("ir_core", flavors))
    return flavors


def test_a_pending_file_is_one_entry_per_line_and_reads_back(tmp_path):
    entries = {"llvm23/b": {"old": OLD, "new": None}, "llvm20/a": {"old": None, "new": {"rejected": "r"}}}
    P.save(tmp_path, "ir_core", entries)
    text = P.pending_path(tmp_path, "ir_core").read_text()
    assert text.splitlines() == ['{"family": "ir_core", "format": 1, "pending": {',
                                 '"llvm20/a": {"new": {"rejected": "r"}, "old": null},',
                                 f'"llvm23/b": {{"new": null, "old": {json.dumps(OLD, sort_keys=True)}}}',
                                 "}}"]
    assert json.loads(text) == {"family": "ir_core", "format": 1, "pending": entries}
    assert P.load(tmp_path, "ir_core") == entries


def test_100k_orphans_are_written_read_and_kept_in_linear_time(tmp_path):
    n = 100_000
    flavors = _shard(tmp_path, n)
    entries = {f"llvm23/{c}": {"old": e, "new": None} for c, e in flavors["llvm23"].items()}
    t0 = time.perf_counter()
    P.save(tmp_path, "ir_core", entries)
    keep, dropped = P.current(tmp_path, "ir_core", G.load_shard(tmp_path, "ir_core"))
    secs = time.perf_counter() - t0
    assert len(keep) == n and dropped == 0
    assert P.pending_path(tmp_path, "ir_core").stat().st_size < G.MAX_SHARD_BYTES  # the issue's 8.6 MB fit now
    P.discard(tmp_path, "ir_core", [f"llvm23/o{i:06d}" for i in range(0, n, 2)])
    assert len(P.load(tmp_path, "ir_core")) == n // 2
    assert secs < 30  # measured 0.7 s save + 2.1 s load and keep (2 cores, load 4.5); quadratic was minutes


def test_a_pending_set_over_the_cap_is_not_written_and_says_what_clears_it(tmp_path):
    big = {f"llvm23/c{i:07d}": {"old": OLD, "new": {"rejected": "x" * 40}} for i in range(60_000)}
    stale = P.pending_path(tmp_path, "ir_core")
    stale.write_text("{}")  # an older pending file: it goes (review would show entries the check did not find)
    with pytest.raises(P.PendingTooMany) as exc:
        P.save(tmp_path, "ir_core", big)
    msg = str(exc.value)
    assert msg.startswith("ir_core: 60000 pending entries (") and "\n" not in msg
    assert "`parity write --only ir_core` blesses them all" in msg and "`git restore golden/`" in msg
    assert not stale.exists()


def test_check_then_review_at_the_cap_end_in_one_line_each(tmp_path, monkeypatch):
    # save_from_check: the family over the cap is said, the others are still written
    class Rep:
        results = []
        families = [type("F", (), {"name": n})() for n in ("ir_core", "conv_abi")]
        flavors = ["llvm23"]
    shards = {"ir_core": {"llvm23": {f"c{i:07d}": {"rejected": "y" * 60} for i in range(90_000)}},
              "conv_abi": {"llvm23": {"gone": {"rejected": "r"}}}}
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(P.PendingTooMany, match="^ir_core: 90000 pending entries"):
        P.save_from_check(tmp_path, Rep, shards, {"ir_core", "conv_abi"})
    assert P.load(tmp_path, "conv_abi") == {"llvm23/gone": {"old": {"rejected": "r"}, "new": None}}
    assert not P.pending_path(tmp_path, "ir_core").exists()

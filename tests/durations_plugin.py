"""Test files ordered and sharded by their measured seconds (issue 40 item 4; docs/ci.md).

Registered by tests/conftest.py. Three jobs, all by whole test file (``--dist loadfile``
keeps a file on one worker, so its module fixtures are built once):

* **Order.** The files run longest first: ``tests/data/test_durations.json`` holds each
  file's measured seconds (setup + call + teardown of its tests), and the collection is
  reordered by it (a file not in the table counts as the table's median). pytest-xdist's
  loadfile scheduler hands out files in collection order (``--no-loadscope-reorder`` in
  pyproject.toml; its default reorders by test *count*, which put a 170 s file of 12 tests
  behind a hundred 1 s files and left one worker alone at the end). Longest-processing-time
  first keeps both workers busy to the last small files.
* **Shards.** ``PARITY_TEST_SHARD=I/N`` (1 <= I <= N) keeps the files of shard I of N and
  deselects the rest: the files are dealt by the same longest-first rule, each to the shard
  with the least planned seconds so far (ties: the lower shard), so every machine computes
  the same split, and the N shards together run every test once. ``.ci/run --shard I/N``
  sets it (docs/ci.md, "Sharding").
* **Measure.** ``PARITY_TEST_DURATIONS_OUT=FILE`` writes this run's per-file seconds (the
  controller's view: every worker's reports) as a new table; refresh the committed one
  with a full quiet run: ``PARITY_TEST_DURATIONS_OUT=tests/data/test_durations.json python -m pytest -q``.
"""
from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

import pytest

TABLE = Path(__file__).parent / "data" / "test_durations.json"


def load_table(path: Path = TABLE) -> dict:
    """``{"tests/test_x.py": seconds}`` from ``path``; ``{}`` when it is missing or unreadable
    (ordering then falls back to the collection order, sharding to equal weights)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.get("files", {}).items()}


def parse_shard(text: str) -> tuple:
    """``"I/N"`` -> ``(I, N)``; ``pytest.UsageError`` naming the rule otherwise."""
    try:
        i, n = (int(p) for p in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"PARITY_TEST_SHARD: expected I/N (e.g. 1/2), got {text!r}") from None
    if not 1 <= i <= n:
        raise pytest.UsageError(f"PARITY_TEST_SHARD: I/N needs 1 <= I <= N, got {text!r}")
    return i, n


def file_costs(files: list, table: dict) -> dict:
    """Each file's planned seconds: its measured figure, else the table's median (1.0 for an empty table)."""
    default = statistics.median(table.values()) if table else 1.0
    return {f: table.get(f, default) for f in files}


def longest_first(costs: dict) -> list:
    """The files by planned seconds, most first; ties by name (the same order everywhere)."""
    return sorted(costs, key=lambda f: (-costs[f], f))


def deal(costs: dict, n: int) -> list:
    """``n`` lists of files: longest first, each to the shard with the least planned seconds so far."""
    shards = [[] for _ in range(n)]
    load = [0.0] * n
    for f in longest_first(costs):
        k = min(range(n), key=lambda j: (load[j], j))
        shards[k].append(f)
        load[k] += costs[f]
    return shards


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Reorder ``items`` longest file first and, under ``PARITY_TEST_SHARD``, keep one shard's files."""
    files = list(dict.fromkeys(_file_of(it.nodeid) for it in items))
    costs = file_costs(files, load_table())
    shard = os.environ.get("PARITY_TEST_SHARD")
    if shard:
        i, n = parse_shard(shard)
        keep = set(deal(costs, n)[i - 1])
        gone = [it for it in items if _file_of(it.nodeid) not in keep]
        if gone:
            config.hook.pytest_deselected(items=gone)
        items[:] = [it for it in items if _file_of(it.nodeid) in keep]
    rank = {f: r for r, f in enumerate(longest_first(costs))}
    items.sort(key=lambda it: rank[_file_of(it.nodeid)])   # stable: a file's own order is kept


_SECONDS: dict = {}


def pytest_runtest_logreport(report):
    """Add every phase's seconds to its file (setup/teardown hold the module fixtures)."""
    f = _file_of(report.nodeid)
    _SECONDS[f] = _SECONDS.get(f, 0.0) + float(getattr(report, "duration", 0.0) or 0.0)


def pytest_sessionfinish(session):
    """``$PARITY_TEST_DURATIONS_OUT``: write this run's table (controller only)."""
    out = os.environ.get("PARITY_TEST_DURATIONS_OUT")
    if not out or hasattr(session.config, "workerinput") or not _SECONDS:
        return
    files = {f: round(s, 2) for f, s in sorted(_SECONDS.items())}
    Path(out).write_text(json.dumps({"note": "seconds per test file (setup+call+teardown); "
                                             "tests/durations_plugin.py", "files": files},
                                    indent=1) + "\n", encoding="utf-8")

"""`parity fuzz --gate` (issue 24): the kinds table, the contract judge (shown
to fail on a traceback, a forged line, a wrong exit, two error lines and a
shard changed after a refusal), and a short real run of a few kinds."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from parity.app.main import main as parity_main
from parity.fuzz import gate_run
from parity.fuzz.gate_case import HOSTILE, REFUSED, Case, Kind
from parity.fuzz.gate_kinds import KINDS

ROOT = Path(__file__).resolve().parents[1]


def test_at_least_100_distinct_kinds_each_listed_in_docs():
    names = [k.name for k in KINDS]
    assert len(names) == len(set(names)) and len(names) >= 100
    doc = (ROOT / "docs" / "fuzz.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"`([a-z0-9_]+)`", doc))
    assert sorted(set(names) - listed) == []


def test_every_hostile_text_breaks_a_line_before_its_marker():
    for h in HOSTILE:
        parts = ("x" + h).splitlines()
        assert len(parts) >= 2 and any(p.lstrip("\x1b[2K").startswith("FORGED") or p.startswith("FORGED")
                                       for p in parts[1:]), repr(h)


class _W:
    common: list = []

    def env(self):
        return {}


def _case(tmp_path, command="check") -> Case:
    g = tmp_path / "golden"
    g.mkdir(exist_ok=True)
    (g / "fam_a.json").write_text("{}")
    return Case(_W(), g, random.Random(0), command)


KIND = Kind("k", "shard", lambda c: None, ("check", "write"), {"check": REFUSED, "write": frozenset({0})})


@pytest.mark.parametrize("status,out,err,want", [
    (2, "", "error: x.json: bad\n", "PASS"),
    (2, "", "error: one\nerror: two\n", "ERROR_LINES"),
    (2, "", "Traceback (most recent call last):\n  ...\nKeyError: 1\n", "TRACEBACK"),
    (70, "", "boom\n", "TRACEBACK"),
    (2, "", "error: key 'a\u2028FORGED line'\n", "FORGED"),
    (2, "", "error: key 'a\x85FORGED'\n", "FORGED"),
    (1, "RESULT: RED\n", "", "WRONG_EXIT"),
    (None, "", "", "HANG"),
])
def test_judge_fails_what_breaks_the_contract(tmp_path, status, out, err, want):
    case = _case(tmp_path)
    before = gate_run.gate_env.snapshot(case.golden)
    secs = 99.0 if status is None else 0.1
    assert gate_run.judge(KIND, case, status, out, err, secs, 30.0, before)[0] == want


def test_judge_fails_a_shard_changed_after_a_refusal(tmp_path):
    case = _case(tmp_path)
    before = gate_run.gate_env.snapshot(case.golden)
    (case.golden / "fam_a.json").write_text('{"x": 1}')
    assert gate_run.judge(KIND, case, 2, "", "error: no\n", 0.1, 30.0, before)[0] == "CHANGED_AFTER_REFUSAL"


def test_judge_fails_a_check_without_its_result_line(tmp_path):
    kind = Kind("k", "shard", lambda c: None, ("check",), frozenset({1}))
    case = _case(tmp_path)
    before = gate_run.gate_env.snapshot(case.golden)
    assert gate_run.judge(kind, case, 1, "RESULT: GREEN\n", "", 0.1, 30.0, before)[0] == "NO_RESULT_LINE"


def test_a_short_real_run_keeps_the_contract():
    only = ["shard_key_forged_result", "shard_bytes_5000_digits", "file_fifo", "lock_held",
            "cli_only_hostile_family", "merge_side_fifo", "shard_padded_1_mib", "config_import_raises_hostile"]
    rep = gate_run.run_gate_fuzz(1.0, seed=7, main=parity_main, only=only)
    assert sorted(rep.counts) == sorted(only)
    assert rep.failures == [], [(f.kind, f.verdict, f.detail) for f in rep.failures]
    # every kind runs at least once; a fast machine may start a second round within the budget
    assert rep.cases >= len(only)
    assert all(sum(v.values()) >= 1 for v in rep.counts.values()), rep.counts

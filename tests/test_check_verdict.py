"""The verdict of ``parity check`` assembled in one place (parity/golden/verdict.py):
each entry's engines, golden entry, finding and not-compared line; the unrun
entries' findings; the shard lines; GREEN/RED; the --json document."""
from __future__ import annotations

from types import SimpleNamespace

from parity.gate.runner import FamilySummary, FlavorSummary, Report, Result
from parity.golden.verdict import assess, golden_side, golden_sides

A = {"bytes": 10, "kernel": "k", "sha256": "a" * 64}
B = {"bytes": 12, "kernel": "k", "sha256": "b" * 64}


def _ok(e: dict) -> dict:
    return {"status": "ok", **e}


def _report(results: list[Result]) -> Report:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    green = all(r.passed for r in results)
    summary = FamilySummary("fam", {"llvm23": FlavorSummary(counts, len(results), [] if green else ["failing"])})
    family = SimpleNamespace(name="fam", configs=sorted({r.config for r in results}))  # what to_json reads
    return Report(("python", "cpp"), ("llvm23",), [family], results, {"fam": summary})


def test_each_entry_carries_its_golden_facts(tmp_path):
    same = Result("fam", "same", "llvm23", "IDENTICAL", "", "ok", (_ok(A), _ok(A)))
    changed = Result("fam", "changed", "llvm23", "IDENTICAL", "", "ok", (_ok(B), _ok(B)))
    new = Result("fam", "new", "llvm23", "IDENTICAL", "", "ok", (_ok(A), _ok(A)))
    split = Result("fam", "split", "llvm23", "MISMATCH", "text differs", "ok", (_ok(A), _ok(B)), (3, "x", "y"))
    report = _report([same, changed, new, split])
    shards = {"fam": {"llvm23": {"same": A, "changed": A, "split": A, "gone": A}}}
    v = assess(report, shards, ("llvm23",), {}, tmp_path)

    by = {e.result.config: e for e in v.entries}
    assert by["same"].finding is None and by["same"].golden == A and by["same"].not_compared is None
    assert by["changed"].finding.kind == "CHANGED"
    assert by["new"].finding.kind == "MISSING" and by["new"].golden is None
    assert by["split"].finding is None
    assert by["split"].not_compared == "split@llvm23: MISMATCH, python matches golden, cpp differs from golden"
    assert by["split"].lines(report.labels) == ["  MISMATCH fam/split@llvm23: text differs",
                                                "      line 3 python: x", "      line 3 cpp   : y"]
    # the entry nothing ran for, after the run's own findings
    assert [(f.kind, f.config) for f in v.findings] == [("CHANGED", "changed"), ("MISSING", "new"),
                                                        ("ORPHAN", "gone")]
    [shard] = v.shards
    assert shard.path == tmp_path / "fam.json"
    assert shard.state() == "1 MISSING, 1 ORPHAN, 1 CHANGED, 1 not compared (engines disagree)"
    assert [g.golden_sides for g in v.groups] == [{"python matches golden": 1}]
    assert not v.green
    doc = v.to_json()
    assert doc["result"] == "RED" and doc["golden_dir"] == str(tmp_path) and len(doc["golden"]) == 3
    assert doc["families"]["fam"]["configs"] == 4 and doc["golden_layout"] == {}
    assert doc["summary_groups"][0]["golden_sides"] == {"python matches golden": 1}


def test_green_needs_a_green_run_no_finding_and_no_layout_problem(tmp_path):
    same = Result("fam", "same", "llvm23", "IDENTICAL", "", "ok", (_ok(A), _ok(A)))
    shards = {"fam": {"llvm23": {"same": A}}}
    assert assess(_report([same]), shards, ("llvm23",), {}, tmp_path).green
    v = assess(_report([same]), shards, ("llvm23",), {}, tmp_path, layouts={"fam": "format 1"})
    assert not v.green and v.shards[0].state() == "clean; format 1: run `parity write` to rewrite it"
    orphan = assess(_report([same]), shards, ("llvm23",), {"old": {}}, tmp_path)
    assert [(f.kind, f.family) for f in orphan.findings] == [("ORPHAN", "old")] and not orphan.green


def test_origin_lines_are_located_once_for_a_shown_example(tmp_path):
    split = Result("fam", "split", "llvm23", "MISMATCH", "", "ok", (_ok(A), _ok(B)), (3, "x", "y"))
    calls = []

    def locate(r):
        calls.append(r.key)
        return ["      origin"]
    v = assess(_report([split]), {"fam": {"llvm23": {"split": A}}}, ("llvm23",), {}, tmp_path, locate=locate)
    assert calls == ["fam/split@llvm23"] and v.origin(split) == ["      origin"]


def test_golden_side_names_the_engine_that_kept_the_blessed_entry():
    r = Result("fam", "c", "llvm23", "MISMATCH", "", "ok", (_ok(A), _ok(B)))
    labels = ("python", "cpp")
    assert golden_side(labels, r, B) == "cpp matches golden"
    assert golden_side(labels, r, {"rejected": "no"}) == "neither matches golden"
    assert golden_side(labels, r, None) == "no golden entry"
    assert golden_side(labels, r, {"conflict": {}}) == "no golden entry"
    assert golden_sides(_report([r]), {"fam": {"llvm23": {"c": A}}}) == {"fam/c@llvm23": "python matches golden"}

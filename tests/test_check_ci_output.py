"""`parity check --shard I/N` and `--junit` (issue 38 item 4, docs/ci.md): the shards are a
deterministic partition balanced by cost, and their JUnit testcases together are the full
check's, golden findings included."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from junitparser import JUnitXml

from parity.app import check_shard as S
from parity.config import Config, Family

ROOT = Path(__file__).resolve().parents[1]


def _fam(name, n):
    return Family(name, tuple(Config(f"c{i:02d}", arch="gfx1250") for i in range(n)))


def test_plan_is_a_deterministic_balanced_partition():
    fams = [_fam("a", 7), _fam("b", 5)]
    costs = {f"a/c{i:02d}": float(i + 1) for i in range(7)} | {"b/c00": 4.0}  # b's others: b's median
    shards = [S.plan(fams, ("llvm23",), i, 3, costs) for i in (1, 2, 3)]
    assert [S.plan(fams, ("llvm23",), i, 3, costs).names for i in (1, 2, 3)] == [s.names for s in shards]
    got = [(f, c) for s in shards for f, cs in s.names.items() for c in cs]
    assert sorted(got) == sorted((f.name, c.name) for f in fams for c in f.configs) and len(set(got)) == len(got)
    loads = shards[0].loads
    assert abs(sum(loads) - (28.0 + 5 * 4.0)) < 1e-9
    assert max(loads) - min(loads) <= 7.0  # at most the largest unit
    assert sorted(f for s in shards for f in s.owned) == ["a", "b"]  # each family owned once


def _cases(path):
    return {(s.name, c.name, c.is_passed) for s in JUnitXml.fromfile(str(path)) for c in s}


def test_shards_union_is_the_full_check_with_golden_findings(tmp_path):
    gdir = tmp_path / "golden"
    shutil.copytree(ROOT / "golden", gdir)
    shard = gdir / "ir_core.json"
    doc = json.loads(shard.read_text())
    doc["llvm23/casts"] = dict(doc["llvm23/casts"], sha256="0" * 64)
    doc["llvm23/no_such_config"] = dict(doc["llvm23/casts"])  # ORPHAN
    del doc["llvm20/loop_phi"]  # MISSING
    shard.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
                                          for k, v in sorted(doc.items())) + "\n}\n")
    runs = {}
    for part in ("full", "1/3", "2/3", "3/3"):
        out = tmp_path / f"{part.replace('/', '_')}.xml"
        argv = ["check", "--golden-dir", str(gdir), "--junit", str(out)] + ([] if part == "full" else ["--shard", part])
        r = subprocess.run([sys.executable, "-m", "parity", *argv], cwd=ROOT, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode in (0, 1), r.stderr
        runs[part] = (r.returncode, _cases(out), r.stdout)
    full = runs["full"][1]
    union = [c for p in ("1/3", "2/3", "3/3") for c in runs[p][1]]
    assert len(union) == len(set(union)) and set(union) == full
    failing = {c for c in full if not c[2]}
    assert {("ir_core", "casts@llvm23"), ("ir_core", "loop_phi@llvm20"), ("ir_core", "no_such_config@llvm23")} \
        == {c[:2] for c in failing}
    assert runs["full"][0] == 1 and sorted(runs[p][0] for p in ("1/3", "2/3", "3/3")).count(1) >= 1
    assert all(f"shard {p}:" in runs[p][2] for p in ("1/3", "2/3", "3/3"))

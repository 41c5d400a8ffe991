"""``parity numerics --shard I/N`` (parity/sim/numerics_shard.py): the N shards partition the
accepted configs, deterministically and balanced by the cost table; ``--record-costs`` writes a
table ``--shard`` reads; bad input is one error line."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from parity.cli.shard import cost_of, deal
from parity.config import load_families
from parity.sim import numerics as N
from parity.sim import numerics_shard as NS


def _accepted():
    fams = load_families()
    return fams, N.accepted_configs(families=fams)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_shards_partition_the_accepted_configs(n):
    fams, acc = _accepted()
    every = {(f, c) for f, c, _, _ in acc}
    seen = []
    for i in range(1, n + 1):
        part, line = NS.shard_families(fams, acc, i, n)
        mine = {(f.name, c.name) for f in part for c in f.configs}
        assert mine <= every and all(f.configs for f in part)
        assert line.startswith(f"numerics shard {i}/{n}: {len(mine)} configs of {len(every)}, planned ")
        seen.append(mine)
        assert NS.shard_families(fams, acc, i, n)[0] == part   # the same on a second call (machine)
    assert set().union(*seen) == every and sum(map(len, seen)) == len(every)


def test_the_deal_is_balanced_by_the_committed_costs():
    costs = NS.load_costs()
    _, acc = _accepted()
    assert len(costs) >= 0.9 * len(acc), "parity/data/numerics_costs.json: refresh it (docs/ci.md)"
    units = [(cost_of(costs, f, c), (f, c)) for f, c, _, _ in acc]
    total, biggest = sum(u[0] for u in units), max(u[0] for u in units)
    for n in (2, 4, 8):
        _, loads = deal(units, n)
        # longest-processing-time: no shard is over its even share by more than the largest unit
        assert max(loads) <= total / n + biggest and sum(loads) == pytest.approx(total)


def test_cost_of_falls_back_to_the_family_then_the_table_median():
    costs = {"a/x": 1.0, "a/y": 3.0, "a/z": 8.0, "b/w": 10.0}
    assert cost_of(costs, "a", "y") == 3.0 and cost_of(costs, "a", "new") == 3.0
    assert cost_of(costs, "c", "new") == 5.5 and cost_of({}, "c", "new") == 1.0
    assert deal([(1.0, "p"), (5.0, "q"), (4.0, "r"), (2.0, "s")], 2) == ({"q": 1, "r": 2, "s": 2, "p": 1}, [6.0, 6.0])


def _parity(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "parity", "numerics", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_cli_shard_record_costs_and_bad_input(tmp_path):
    out = tmp_path / "costs.json"
    r = _parity("--only", "ir_core", "--shard", "2/3", "--record-costs", str(out), "--json", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert any(ln.startswith("numerics shard 2/3: ") for ln in r.stdout.splitlines()) and "RESULT: GREEN" in r.stdout
    doc = json.loads(out.read_text())
    rep = json.loads((tmp_path / "r.json").read_text())
    ran = {f"{c['family']}/{c['config']}" for c in rep["configs"]}
    assert rep["shard"] == "2/3" and set(doc["costs"]) == ran and ran and all(v >= 0 for v in doc["costs"].values())
    assert NS.load_costs(out) == doc["costs"]
    # more shards than configs: an empty shard runs nothing and is GREEN
    r = _parity("--only", "ir_core", "--shard", "1000/1000")
    assert r.returncode == 0 and "holds no config" in r.stdout and "RESULT: GREEN" in r.stdout, r.stdout
    for argv, says in ((["--shard", "0/2"], "--shard: I/N needs 1 <= I <= N"),
                       (["--shard", "1/2", "--shard", "2/2"], "--shard"),
                       (["--shard", "1/2", "--ir", str(out), "ir_core/x"], "--shard goes without --ir")):
        r = _parity(*argv)
        err = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(err) == 1 and err[0].startswith("error:") and says in err[0], r.stderr

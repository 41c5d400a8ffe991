"""CI sharding (issue 40 item 4, docs/ci.md "Sharding"): `.ci/run --shard I/N` runs each
lane on exactly one shard (set-up on all), pytest's files dealt by measured seconds."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import durations_plugin as DP

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("ci_shard", ROOT / ".ci" / "shard.py")
SH = importlib.util.module_from_spec(_spec)   # .ci/shard.py
_spec.loader.exec_module(SH)


def _lanes_of_run() -> list:
    return re.findall(r"^lane ([\w-]+) ", (ROOT / ".ci" / "run").read_text(), flags=re.M)


def test_every_lane_of_ci_has_a_cost_row_and_no_row_is_stale():
    table = SH.read_table()
    assert _lanes_of_run() == list(table), "rows in .ci/lane_costs.tsv in .ci/run's order, one per lane"


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_the_shards_together_run_every_lane_once_and_setup_everywhere(n):
    table = SH.read_table()
    shards = SH.plan(table, n)
    for lane, (_, place) in table.items():
        homes = [k for k, (lanes, _) in enumerate(shards) if lane in lanes]
        if place in ("every", "split"):
            assert homes == list(range(n)), lane
        else:
            assert len(homes) == 1, (lane, homes)
    aot = [k for k, (lanes, _) in enumerate(shards) if "aot" in lanes]
    assert aot == [k for k, (lanes, _) in enumerate(shards) if "aot-validate" in lanes]
    assert sum(s for _, s in shards) == pytest.approx(sum(c for c, p in table.values() if p != "every")
                                                      + n * sum(c for c, p in table.values() if p == "every"))


def test_two_shards_halve_the_planned_seconds_within_the_biggest_lane():
    table = SH.read_table()
    (_, a), (_, b) = SH.plan(table, 2)
    (whole,) = [s for _, s in SH.plan(table, 1)]
    biggest = max(c for c, p in table.values() if p == "one")
    assert abs(a - b) <= biggest
    assert max(a, b) < 0.6 * whole, (a, b, whole)


@pytest.mark.parametrize("arg, says", [("0/2", "1 <= I <= N"), ("2", "expected I/N"), ("a/b", "expected I/N"),
                                       ("1/99999999", "N <= 1000"), ("1/1001", "N <= 1000"),
                                       ("1/99999999999999999999999", "expected I/N in ASCII digits"),
                                       (" 1/2", "expected I/N"), ("1/1 ", "expected I/N"),
                                       ("1/\u0662", "ASCII digits")])
def test_a_bad_shard_is_one_error_line_exit_2(arg, says):
    r = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "--shard", arg], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: --shard: ") and says in r.stderr, r.stderr


def test_the_shard_rules_are_parity_check_s():
    from parity.cli.shard import MAX_SHARDS
    assert SH.MAX_SHARDS == MAX_SHARDS == 1000
    assert SH.parse_shard("1000/1000") == (1000, 1000)


def test_ci_run_refuses_shard_given_twice():
    for argv in (["--shard", "1/2", "--shard", "2/2"], ["--shard=1/2", "--shard=2/2"]):
        r = subprocess.run(["bash", str(ROOT / ".ci" / "run"), *argv], capture_output=True, text=True, timeout=30)
        assert (r.returncode, r.stdout) == (2, "")
        assert r.stderr == "error: .ci/run: --shard given twice (1/2 and 2/2); give it once\n"


def test_plan_n_has_the_same_bound():
    r = subprocess.run([sys.executable, str(ROOT / ".ci" / "shard.py"), "--plan", "1001"],
                       capture_output=True, text=True, timeout=30)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == "error: --plan N needs N from 1 to 1000 in ASCII digits, got '1001'\n"


def test_lane_skips_another_shards_lane_and_refuses_an_unknown_one(tmp_path):
    table = SH.read_table()
    shards = SH.plan(table, 2)
    ones = [[lane for lane in lanes if table[lane][1] == "one"] for lanes, _ in shards]
    other, mine = ones[0][0], ones[1][0]    # a lane of shard 1 and one of shard 2, from the plan
    script = (f". {ROOT / '.ci' / 'lane.sh'}; lane_shard 2/2; lane setup true; lane {other} false; "
              f"lane {mine} true; lane no_such_lane true")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path)
    # bash's $SECONDS counts whole seconds: a `true` that starts just before a second ticks over
    # reads 1 s (the suite saw it once under load)
    assert re.search(r"^lane setup: [01] s$", r.stdout, re.M) and re.search(rf"^lane {mine}: [01] s$", r.stdout, re.M)
    assert f"lane {other}: on another shard (shard 2/2 runs: " in r.stdout
    assert r.returncode == 2
    assert r.stderr == "error: lane no_such_lane has no row in .ci/lane_costs.tsv (needed to place it on a shard)\n"


def test_files_are_dealt_longest_first_to_the_least_loaded_shard():
    costs = {"a": 10.0, "b": 7.0, "c": 5.0, "d": 4.0, "e": 1.0}
    assert DP.longest_first(costs) == ["a", "b", "c", "d", "e"]
    assert DP.deal(costs, 2) == [["a", "d"], ["b", "c", "e"]]
    assert DP.file_costs(["a", "x"], {"a": 3.0, "b": 1.0, "c": 9.0}) == {"a": 3.0, "x": 3.0}


def test_pytest_shards_partition_the_files(tmp_path):
    t = tmp_path / "tests"
    t.mkdir()
    (t / "conftest.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
                                   "import durations_plugin\n"
                                   "def pytest_configure(config):\n"
                                   "    config.pluginmanager.register(durations_plugin, 'd')\n")
    for k in range(5):
        (t / f"test_f{k}.py").write_text("".join(f"def test_{j}():\n    assert {j} == {j}\n" for j in range(k + 1)))
    got = []
    for s in ("1/2", "2/2"):
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "tests"],
                           cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PARITY_TEST_SHARD": s})
        m = re.search(r"(\d+) passed, (\d+) deselected", r.stdout)
        assert m, r.stdout + r.stderr
        got.append(int(m.group(1)))
    assert sum(got) == 15 and all(got)

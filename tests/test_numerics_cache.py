"""The numerics result cache (parity/sim/result_cache.py, docs/sim.md "The result cache"):
an unchanged config is not emulated again, and nothing is reused across a change of the
oracle's or the engine's sources, the spec, coverage or an --assume reading."""
from __future__ import annotations

import json
import shutil

import pytest

from parity.app.main import main
from parity.sim import numerics as N
from parity.sim import result_cache as RC


def _reduce_config(degree: int):
    return next(it for it in N.accepted_configs(["conv_fwd_split_k_reduce"]) if it[2].get("degree") == degree)


def test_a_coverage_outcome_round_trips_exactly(tmp_path):
    fam, name, spec, arch = _reduce_config(2)
    o = N.run_config(fam, name, spec, arch, N._Lowerer(coverage=True))
    assert o.ok and o.coverage is not None and o.instructions > 0, o.problems
    key = RC.config_key(fam, name, N._with_defaults(fam, spec), arch, True, {})
    assert RC.store(tmp_path, key, o)
    back = RC.load(tmp_path, key, N.Outcome)
    assert back == o                                   # tuples, dicts, Skipped records as they were
    assert isinstance(back.coverage["missing"], list) and type(back.coverage["br"]) is type(o.coverage["br"])


def test_a_failed_or_unencodable_outcome_is_not_stored(tmp_path):
    bad = N.Outcome("ir_core", "x", False, problems=["wrong"])
    assert not RC.store(tmp_path, "ab" * 32, bad)
    odd = N.Outcome("ir_core", "x", True, coverage={"br": object()})
    assert not RC.store(tmp_path, "cd" * 32, odd)
    assert not list(tmp_path.rglob("*.json"))


def test_a_corrupt_entry_is_a_miss_and_is_deleted(tmp_path):
    o = N.Outcome("ir_core", "x", True, cases=3, launches=3, instructions=99, seconds=0.5)
    key = "ef" * 32
    assert RC.store(tmp_path, key, o)
    p = next(tmp_path.rglob("*.json"))
    doc = json.loads(p.read_text())
    assert RC.load(tmp_path, key, N.Outcome) == o
    row = next(r for r in doc["outcome"]["d"] if r[0] == "instructions")
    row[1] = 100                                        # the checksum no longer matches
    p.write_text(json.dumps(doc))
    assert RC.load(tmp_path, key, N.Outcome) is None and not p.exists()


def test_the_key_follows_every_input():
    base = dict(family="ir_core", config="c", spec={"a": 1}, arch="gfx1250", coverage=True, assumed={})
    k0 = RC.config_key(**base)
    assert k0 == RC.config_key(**base)
    for change in ({"config": "d"}, {"spec": {"a": 2}}, {"arch": "gfx1200"}, {"coverage": False},
                   {"assumed": {"lds_banks": 64}}, {"family": "conv_implicit_gemm"}):
        assert RC.config_key(**{**base, **change}) != k0, change


def test_the_oracle_version_changes_with_one_byte_of_its_sources(tmp_path, monkeypatch):
    for d in RC._SOURCES:
        shutil.copytree(RC._ROOT / d, tmp_path / d, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    monkeypatch.setattr(RC, "_ROOT", tmp_path)
    monkeypatch.setattr(RC, "_VERSION", None)
    v0 = RC.oracle_version()
    for rel in ("parity/sim/ops_arith.py", "parity/sim/plans/ir_core.py", "parity/launch/plan.py",
                "python_engine/facts.py"):
        f = tmp_path / rel
        keep = f.read_bytes()
        f.write_bytes(keep + b"\n")
        monkeypatch.setattr(RC, "_VERSION", None)
        assert RC.oracle_version() != v0, rel
        f.write_bytes(keep)
    monkeypatch.setattr(RC, "_VERSION", None)
    assert RC.oracle_version() == v0


def test_the_second_run_reuses_every_config_and_reports_the_same(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(RC.ENV, str(tmp_path / "nc"))
    names = [n for _, n, _, _ in N.accepted_configs(["ir_core"])][:3]
    argv = ["numerics", "--coverage", "-j", "1", "--only", ",".join(f"ir_core/{n}" for n in names)]
    runs = []
    for _ in range(2):
        assert main(argv + ["--json", str(tmp_path / f"r{len(runs)}.json")]) == 0
        runs.append((capsys.readouterr().out, json.loads((tmp_path / f"r{len(runs)}.json").read_text())))
    (out0, j0), (out1, j1) = runs
    assert "0 of 3 configs reused" in out0 and "3 of 3 configs reused, not emulated" in out1
    assert j0["cached"] == 0 and j1["cached"] == 3
    assert j0["configs"] == j1["configs"] and j0["wave_instructions"] == j1["wave_instructions"] > 0
    monkeypatch.setenv(RC.ENV, "off")
    assert main(argv) == 0
    assert "numerics cache" not in capsys.readouterr().out


@pytest.mark.parametrize("value", ["", "off", "0", "none"])
def test_the_cache_is_off_unless_a_directory_is_named(monkeypatch, value):
    monkeypatch.setenv(RC.ENV, value)
    assert RC.cache_dir() is None

"""Inside a checkout whose parity package is not the imported one (a
non-editable install run in a checkout), the gate loads that checkout's
config files; outside any checkout it says so in one line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from parity.config import load_families
from parity.base.project import checkout_configs_dir, outside_checkout_note

ROOT = Path(__file__).resolve().parents[1]

FAM = '''from parity.config import Config, reject
FAMILY = "ir_core"
CONFIGS = [Config("only_here", arch="gfx1250", spec={"kernel": "lds_barrier", "threads": 64}),
           Config("bad_here", arch="gfx1250", spec={"kernel": "nope"}, expect=reject("x"))]
'''


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "co"
    (root / "golden").mkdir(parents=True)
    (root / "parity" / "configs").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "splitk-parity"\nversion = "0.1.0"\n')
    (root / "parity" / "configs" / "ir_core.py").write_text(FAM)
    (root / "parity" / "configs" / "__init__.py").write_text("")
    return root


def test_a_checkout_other_than_the_package_supplies_the_configs(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    monkeypatch.chdir(root / "parity")                   # any directory inside the checkout
    assert checkout_configs_dir() == root / "parity" / "configs"
    [fam] = load_families()
    assert fam.name == "ir_core" and [c.name for c in fam.configs] == ["only_here", "bad_here"]
    assert outside_checkout_note() is None


def test_the_packages_own_checkout_uses_the_package(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert checkout_configs_dir() is None
    assert "conv_launch" in [f.name for f in load_families()]


def test_outside_any_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert checkout_configs_dir() is None
    note = outside_checkout_note()
    assert note.startswith(f"note: {tmp_path.resolve()} is not inside a splitk-parity checkout: using the configs "
                           "installed at ") and "\n" not in note
    r = subprocess.run([sys.executable, "-m", "parity", "check", "--only", "ir_core"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"error: no splitk-parity checkout at or above {tmp_path.resolve()} ")
    assert len(r.stderr.splitlines()) == 1
    r = subprocess.run([sys.executable, "-m", "parity", "list", "--only", "ir_core/casts", "--json",
                        str(tmp_path / "l.json")], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [outside_checkout_note(tmp_path)]
    assert json.loads((tmp_path / "l.json").read_text())["configs"][0]["config"] == "casts"

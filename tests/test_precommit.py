"""The pre-commit hook ``parity-check`` (issue 38 item 6; parity/app/precommit.py,
.pre-commit-hooks.yaml): staged paths -> the families to check, and one run of the hook's
entry exactly as pre-commit runs it, on a golden shard path."""
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from parity.app import precommit

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake_root(tmp_path):
    configs = tmp_path / "parity" / "configs"
    configs.mkdir(parents=True)
    for name in ("__init__", "_shared", "fam_a", "fam_b"):
        (configs / f"{name}.py").write_text("")
    return tmp_path


@pytest.mark.parametrize("paths, argv", [
    (["golden/fam_a.json"], ["check", "--only", "fam_a"]),
    (["parity/configs/fam_b.py"], ["check", "--only", "fam_b"]),
    (["parity/configs/fam_b.py", "golden/fam_a.json", "docs/gate.md"], ["check", "--only", "fam_a,fam_b"]),
    (["./golden/fam_a.json", "golden/fam_a.json"], ["check", "--only", "fam_a"]),
    (["python_engine/kernels/ir_core.py", "golden/fam_a.json"], ["check"]),
    (["cpp_engine/src/kernels/acc_epilogue.cpp"], ["check"]),
    (["spec_front/fields.py"], ["check"]),
    (["parity/gate/compare.py"], ["check"]),
    (["parity/configs/_shared.py"], ["check"]),        # a helper of every family's configs
    (["parity/configs/__init__.py"], ["check"]),
    (["golden/fam_gone.json"], ["check"]),             # a shard of no family: the whole check finds the ORPHAN
    (["docs/ci.md", "README.md", "tests/test_x.py", "examples/ci/gitlab-ci.yml"], None),
    (["golden/README.md"], None),
    ([], None),
])
def test_staged_paths_map_to_families(fake_root, paths, argv):
    assert precommit.touched(paths, fake_root).argv() == argv


def test_absolute_paths_inside_the_root(fake_root):
    t = precommit.touched([str(fake_root / "golden" / "fam_b.json")], fake_root)
    assert t.argv() == ["check", "--only", "fam_b"]
    assert t.families == {"fam_b": ["golden/fam_b.json"]}


def test_the_real_checkout_knows_its_families():
    names = precommit.family_names()
    assert {"ir_core", "conv_implicit_gemm", "conv_fwd_split_k_reduce"} <= names
    assert names == {p.stem for p in (ROOT / "golden").glob("*.json")}  # one shard per family


def test_docs_only_is_one_line_and_exit_0(capsys):
    assert precommit.main(["docs/ci.md", "tests/test_precommit.py"]) == 0
    out = capsys.readouterr().out
    assert out == ("parity-check: nothing to check: none of the 2 staged file(s) touches a family's config, "
                   "golden shard or an engine\n")


def test_print_names_the_command_and_why(capsys):
    assert precommit.main(["--print", "golden/ir_core.json", "parity/configs/conv_abi.py"]) == 0
    assert capsys.readouterr().out == ("parity-check: parity check --only conv_abi,ir_core "
                                       "(conv_abi: parity/configs/conv_abi.py; ir_core: golden/ir_core.json)\n")


def hook():
    [entry] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return entry


def test_the_hook_is_declared_as_pre_commit_reads_it():
    h = hook()
    assert h["id"] == "parity-check"
    assert h["language"] == "system" and h["pass_filenames"] is True and h["require_serial"] is True
    assert "parity.app.precommit" in h["entry"]


def test_the_hook_entry_on_a_golden_shard_runs_that_family_green():
    """pre-commit runs ``shlex.split(entry) + args + staged files`` in the repository root."""
    h = hook()
    cmd = shlex.split(h["entry"]) + h.get("args", []) + ["golden/ir_core.json"]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "parity-check: parity check --only ir_core (ir_core: golden/ir_core.json)"
    assert any(ln.startswith("ir_core ") and ln.endswith("GREEN") for ln in lines)
    assert not any(ln.startswith(("conv_", "perf_model", "split_k_policy")) for ln in lines)  # only ir_core ran
    assert lines[-1] == "RESULT: GREEN"

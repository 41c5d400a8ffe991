"""Outputs never clobber inputs (fresh-user trial, stop 31): ``--json`` refuses an existing
file that is not a splitk-parity report (a golden shard, a catalog), a name the file
system refuses is one error line; ``--golden-dir`` must hold shards or be empty;
``parity perf --flavor llvm20`` is refused. Each: one ``error:`` line, exit 2, the file
untouched."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.cli.common import check_writable
from parity.base.project import ProjectError, resolve_golden_dir

ROOT = Path(__file__).resolve().parents[1]


def _parity(*args, env=None):
    return subprocess.run([sys.executable, "-m", "parity", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})})


def test_json_refuses_a_golden_shard_and_leaves_it_whole():
    shard = ROOT / "golden" / "ir_core.json"
    before = shard.read_bytes()
    r = _parity("check", "--only", "ir_core", "--json", str(shard))
    assert r.returncode == 2
    assert "is in a golden directory" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert shard.read_bytes() == before


@pytest.mark.parametrize("text,ok", [("", True), ('{\n  "tool": "splitk-parity"\n}\n', True),
                                     ('{"format": 1, "entries": {}}', False), ("conv2d -n 1\n", False)])
def test_json_replaces_only_an_empty_file_or_an_earlier_report(tmp_path, text, ok):
    p = tmp_path / "out.json"
    p.write_text(text)
    if ok:
        check_writable(p)
    else:
        with pytest.raises(ValueError, match="--json .*: exists and is not a splitk-parity report"):
            check_writable(p)


def test_json_name_too_long_is_an_input_error(tmp_path):
    with pytest.raises(ValueError, match=r"--json .*: cannot be used \(File name too long\)"):
        check_writable(tmp_path / ("a" * 300 + ".json"))


def test_a_report_can_be_written_again(tmp_path):
    p = tmp_path / "r.json"
    for _ in range(2):
        r = _parity("check", "--only", "ir_core", "--json", str(p))
        assert r.returncode == 0, r.stderr
    assert json.loads(p.read_text())["tool"] == "splitk-parity"


def test_golden_dir_must_hold_shards_or_be_empty(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ProjectError, match="holds no golden shard"):
        resolve_golden_dir(tmp_path)
    (tmp_path / "notes.txt").unlink()
    assert resolve_golden_dir(tmp_path) == tmp_path.resolve()
    (tmp_path / "ir_core.json").write_text('{"family": "ir_core",\n"format": 1}\n')
    (tmp_path / "notes.txt").write_text("x")
    assert resolve_golden_dir(tmp_path) == tmp_path.resolve()
    with pytest.raises(ProjectError, match="cannot be read"):
        resolve_golden_dir(tmp_path / ("d" * 300))


def test_check_writes_nothing_into_a_directory_without_shards(tmp_path):
    (tmp_path / "passwd").write_text("root:x:0:0\n")
    r = _parity("check", "--only", "ir_core", "--golden-dir", str(tmp_path))
    assert r.returncode == 2 and "not a golden directory" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["passwd"]


def test_compile_cache_name_too_long_is_a_settings_error(tmp_path, monkeypatch):
    from parity.llvm import compile_cache
    monkeypatch.setenv("PARITY_COMPILE_CACHE", str(tmp_path / ("c" * 300)))
    assert compile_cache.settings_error() == ("PARITY_COMPILE_CACHE: the compile cache directory cannot be "
                                              "used (File name too long)")


def test_perf_refuses_llvm20():
    r = _parity("perf", "--only", "conv_implicit_gemm/plain_mem_default_64x64x32_w2x2_bf16", "--flavor", "llvm20",
                "--check-goals")
    assert r.returncode == 2
    assert r.stderr.startswith("error: --flavor llvm20: perf compiles with llvmlite's LLVM 22")


@pytest.mark.parametrize("argv,msg", [
    (["layers", "--only", "resnet50_b1_conv1", "--flavor", "llvm23", "--flavor", "llvm22"],
     "argument --flavor: given twice (llvm23 and llvm22)"),
    (["check", "--only", "ir_core", "--only", "ir_core"], "argument --only: given twice (ir_core and ir_core)"),
])
def test_an_option_given_twice_is_refused(argv, msg):
    """A second --flavor / --only replaced the first in silence (only llvm22 ran)."""
    r = _parity(*argv)
    assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr


def test_json_refuses_a_new_file_in_a_golden_directory(tmp_path):
    """A new FAMILY.json (or any report) beside golden shards would be read as a shard by
    the next check ("no 'family' key"): refused before the run (fresh-user retrial)."""
    with pytest.raises(ValueError, match="is in a golden directory"):
        check_writable(ROOT / "golden" / "new_family.json")
    (tmp_path / "ir_core.json").write_text('{"family": "ir_core",\n"format": 1}\n')
    with pytest.raises(ValueError, match="is in a golden directory"):
        check_writable(tmp_path / "report.json")


def test_a_renamed_shard_copy_does_not_make_a_golden_directory(tmp_path):
    from parity.base.project import is_golden_shard
    (tmp_path / "copy_ir_core.json").write_text('{"family": "ir_core",\n"format": 1}\n')
    assert not is_golden_shard(tmp_path / "copy_ir_core.json")
    check_writable(tmp_path / "report.json")
    assert is_golden_shard(ROOT / "golden" / "ir_core.json")


@pytest.mark.parametrize("argv,msg", [
    (["check", "--only", "ir_core", "--json", "/tmp/x1.json", "--json", "/tmp/x2.json"], "argument --json: given twice"),
    (["check", "--only", "ir_core", "-j", "1", "-j", "2"], "argument --jobs/-j: given twice (1 and 2); give it once"),
    (["check", "--only", "ir_core", "--golden-dir", "golden", "--golden-dir", "golden"],
     "argument --golden-dir: given twice"),
])
def test_json_jobs_golden_dir_given_twice_are_refused(argv, msg):
    r = _parity(*argv)
    assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr

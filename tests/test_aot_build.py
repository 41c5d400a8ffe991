"""``parity aot --build`` / ``merge`` / ``validate`` (docs/aot.md) and the runtime
loading a kernel from the manifest. The builds use a small slice of the real
llvm23 grid (its reduce kernels and a few two-stage jobs: a few seconds), built
from scratch: unsharded, and as shards 1/3, 2/3, 3/3 that merge to the same
content. Needs the linker (ld.lld-22): under CI a missing one fails."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from runtime_helpers import linker_or_skip
import cpp_engine
from parity.aot import manifest as M
from parity.aot.shard import ShardError, parse_shard, shard_of
from parity.app.main import main as parity_main

pytest.importorskip("llvmlite", reason="llvmlite (the [test] extra) compiles the IR")

FLAVOR = "llvm23"
REAL_ROWS = M.grid_rows


def _small_rows(engine, flavor):
    """The bf16 vector-8 reduce kernels (6) and the first 2 two-stage jobs: a real slice of the grid."""
    rows = REAL_ROWS(engine, flavor)
    red = [r for r in rows if r[1] == "conv_fwd_split_k_reduce" and r[4]["dtype"] == "bf16" and r[4]["vector"] == 8
           and r[4].get("acc_epilogue", "identity") == "identity"]
    return rows[:2] + red


N = 8


@pytest.fixture(scope="module")
def patched():
    linker_or_skip()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(M, "grid_rows", _small_rows)
        yield _small_rows(cpp_engine, FLAVOR)


@pytest.fixture(scope="module")
def full(patched, tmp_path_factory):
    """One unsharded build from scratch (module-wide; tests copy it before changing it)."""
    d = tmp_path_factory.mktemp("aot") / "full"
    assert _build(d, "--json", str(d.parent / "s.json")) == 0
    return d


@pytest.fixture()
def small_grid(patched):
    return patched


def _build(tmp, *extra):
    return parity_main(["aot", "--flavor", FLAVOR, "--build", str(tmp), "--jobs", "2", "--no-progress", *extra])


def _doc(d):
    with open(os.path.join(d, "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


def test_shard_partition():
    assert parse_shard("2/3") == (2, 3) and parse_shard(None) is None
    for bad in ("0/3", "4/3", "1/0", "x", "1/2/3"):
        with pytest.raises(ShardError, match="--shard"):
            parse_shard(bad)
    hashes = [r[2] for r in REAL_ROWS(cpp_engine, FLAVOR)]
    parts = [[h for h in hashes if shard_of(h, 3) == i] for i in (1, 2, 3)]
    assert sorted(sum(parts, [])) == sorted(hashes)
    assert all(1150 < len(p) < 1500 for p in parts), [len(p) for p in parts]   # 3948 jobs, about a third each
    assert shard_of("0000000000000005", 3) == 3 and shard_of("0000000000000003", 3) == 1


def test_build_shards_merge_equal_unsharded(small_grid, full, tmp_path, capsys):
    doc = _doc(full)
    assert doc["format"] == "splitk-parity-aot-manifest" and doc["version"] == 1
    assert doc["flavor"] == FLAVOR and doc["llvm_version"].startswith("22.") and doc["shard"] is None
    assert len(doc["jobs"]) == len(small_grid) == doc["grid_jobs"] == N
    assert [e["index"] for e in doc["jobs"]] == [r[0] for r in small_grid]
    for e in doc["jobs"]:
        assert e["vgpr_spills"] == e["sgpr_spills"] == e["scratch_bytes"] == 0 and not e["dynamic_stack"]
        assert 0 < e["vgprs"] <= 512 and e["occupancy"] >= 1 and e["workgroup_size"] in (32, 64, 256)
        assert e["code_object"] == f"co/{e['label']}.hsaco" and (full / e["code_object"]).stat().st_size == \
            e["code_object_bytes"]
        assert set(e["build_seconds"]) == {"emit", "compile", "link", "total"}
    conv = doc["jobs"][0]
    assert conv["family"] == "conv_implicit_gemm" and conv["lds_bytes"] == 4096  # 16x16x32 spk: A+B 2*(16+16)*32*2 (swizzled, unpadded)
    summary = json.loads((full.parent / "s.json").read_text())
    assert summary["built"] == N and summary["failed"] == 0 and summary["gate_failures"] == 0
    shards = []
    for i in (1, 2, 3):
        d = tmp_path / f"s{i}"
        assert _build(d, "--shard", f"{i}/3") == 0
        sd = _doc(d)
        assert sd["shard"] == [i, 3] and all(shard_of(e["identity"], 3) == i for e in sd["jobs"])
        shards.append(str(d / "manifest.json"))
    capsys.readouterr()
    merged = tmp_path / "merged.json"
    assert parity_main(["aot", "merge", *shards, "--out", str(merged), "--compare", str(full / "manifest.json")]) == 0
    out = capsys.readouterr().out
    assert "valid" in out and "equals" in out
    m = json.loads(merged.read_text())
    assert M.compare(m, doc) == [] and m["shard"] is None
    # a shard missing: the merge is incomplete; a shard twice: a job is there twice
    assert parity_main(["aot", "merge", *shards[:2], "--out", str(tmp_path / "m2.json")]) == 1
    assert "is missing" in capsys.readouterr().err
    assert parity_main(["aot", "merge", shards[0], shards[0], "--out", str(tmp_path / "m3.json")]) == 1
    assert "is in" in capsys.readouterr().err and not (tmp_path / "m3.json").exists()


def test_incremental_rebuild_and_damage(small_grid, full, tmp_path, capsys):
    d = tmp_path / "b"
    shutil.copytree(full, d)
    first = _doc(d)
    capsys.readouterr()
    assert _build(d) == 0
    assert f"built 0, reused {N}" in capsys.readouterr().out
    assert M.compare(_doc(d), first) == []
    # a damaged code object is rebuilt; a changed IR sha (the engine changed) too
    victim, changed = first["jobs"][3], first["jobs"][4]
    (d / victim["code_object"]).write_bytes(b"\x7fELF garbage")
    doc = _doc(d)
    next(e for e in doc["jobs"] if e["identity"] == changed["identity"])["ir_sha256"] = "0" * 64
    M.write(doc, str(d / "manifest.json"))
    assert _build(d) == 0
    assert f"built 2, reused {N - 2}" in capsys.readouterr().out
    assert M.compare(_doc(d), first) == []
    # validate catches a tampered file and a resource that disagrees with the code object
    (d / victim["code_object"]).write_bytes(b"\x7fELF garbage")
    doc = _doc(d)
    doc["jobs"][0]["vgprs"] += 1
    M.write(doc, str(d / "manifest.json"))
    assert parity_main(["aot", "validate", str(d / "manifest.json")]) == 1
    err = capsys.readouterr().err
    assert "does not match its sha256" in err and "the code object's metadata says vgprs" in err


def test_gate_names_spills_and_lds():
    e = {"label": "x", "vgpr_spills": 3, "sgpr_spills": 0, "scratch_bytes": 16, "dynamic_stack": False,
         "lds_bytes": 400000}
    assert M.gate(e, 327680) == ("3 VGPR spills, 0 SGPR spills, 16 scratch bytes; "
                                 "LDS 400000 bytes exceeds the limit of 327680")
    M.ALLOW_SPILL["x"] = "a test"
    try:
        assert M.gate(dict(e, lds_bytes=0), 327680) is None
    finally:
        del M.ALLOW_SPILL["x"]


def test_runtime_loads_from_manifest(small_grid, full, tmp_path):
    from parity.runtime import CodeObjectCache
    from parity.runtime.manifest import AotManifest

    d = full
    row = small_grid[-1]
    lo = cpp_engine.lower(row[1], row[4], "gfx1250", FLAVOR)
    cache = CodeObjectCache(str(tmp_path / "cache"), manifest=str(d / "manifest.json"))
    co = cache.build(lo.kernel, lo.text, "gfx1250", FLAVOR)
    assert co.path == str(d / "co" / f"{row[3]}.hsaco") and cache.manifest.hits == 1 and cache.builds == 0
    assert co.metadata[".name"] == lo.kernel
    assert not (tmp_path / "cache").exists()    # nothing compiled
    man = AotManifest(str(d / "manifest.json"))
    assert man.code_object(lo.kernel, lo.text + " ", "gfx1250", FLAVOR) is None
    assert man.code_object(lo.kernel, lo.text, "gfx1250", "llvm22") is None
    assert [w for _, w in man.misses] == ["built from other IR (the engine changed since the build)",
                                          "the manifest is for gfx1250/llvm23, not gfx1250/llvm22"]


@pytest.mark.parametrize("argv,msg", [
    (["aot", "--flavor", "llvm23", "--build", "X", "--shard", "4/3"], "--shard I/N needs 1 <= I <= N"),
    (["aot", "--flavor", "llvm23", "--build", "X", "--jobs", "0"], "--jobs must be at least 1, got 0"),
    (["aot", "--flavor", "llvm23", "--jobs", "2"], "--jobs needs --build DIR"),
    (["aot", "--build", "X", "--only", "conv_implicit_gemm"], "--only selects jobs to list"),
    (["aot", "--flavor", "llvm19", "--build", "X"], "llvm19"),
])
def test_cli_errors(argv, msg, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        rc = parity_main(argv)
    except SystemExit as e:  # argparse-level refusals (docs/cli.md: exit 2, one error line)
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert msg in err and err.startswith("error: "), err
    assert not (tmp_path / "X" / "manifest.json").exists()


def test_validate_refuses_other_formats(tmp_path, capsys):
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"format": "splitk-parity-aot-manifest", "version": 99, "jobs": []}))
    assert parity_main(["aot", "validate", str(p)]) == 2
    assert "manifest version 99 is not 1" in capsys.readouterr().err


def test_check_of_one_shard_compares_the_whole_job_list_and_lowers_the_shard(capsys):
    """`parity aot --shard I/N --check`: the engines' job lists are compared whole (a shard
    compared with the other engine's whole list was a false MISMATCH), and the shard's jobs
    are lowered by both engines."""
    from parity.app.main import main as parity_main
    rc = parity_main(["aot", "--flavor", "llvm23", "--shard", "1/40", "--check"])
    out = capsys.readouterr()
    last = out.out.strip().splitlines()[-1]
    assert rc == 0, out.err
    assert last.startswith("3948 AOT jobs at llvm23 (gfx1250), shard 1/40: 104 jobs; lowered with cpp in ")
    assert last.endswith(" s, every job IDENTICAL") and "error" not in out.err

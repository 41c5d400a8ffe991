"""The parity CLI and check_byte_identity end to end, with stub engines."""

import hashlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import gate_stubs
from parity.golden import shards as G
from parity.app.main import main as parity_main
from parity.check_byte_identity import main as cbi_main

REPO = Path(__file__).resolve().parents[1]

FAM_B = '''
from parity.config import Config
FAMILY = "fam_b"
CONFIGS = [Config("solo", arch="gfx1250", spec={"kernel": "solo"})]
'''

BROKEN_FAM = '''
from parity.config import Config
FAMILY = "fam_a"
CONFIGS = [
    Config("plain", arch="gfx1250", spec={"kernel": "plain"}),
    Config("drifted", arch="gfx1250", spec={"kernel": "d", "b_text": 1}),
]
'''


class Env:
    pass


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("gate_cli")
    tag = uuid.uuid4().hex[:8]
    e = Env()
    e.dir = d
    e.good, e.bad = gate_stubs.write_engines(d, f"cli{tag}")
    e.cfg = gate_stubs.write_configs(d, f"clicfg{tag}", {"fam_a": gate_stubs.GREEN_FAMILY, "fam_b": FAM_B})
    e.cfg_a_only = gate_stubs.write_configs(d, f"clicfga{tag}", {"fam_a": gate_stubs.GREEN_FAMILY})
    e.cfg_broken = gate_stubs.write_configs(d, f"clicfgx{tag}", {"fam_a": BROKEN_FAM})
    sys.path.insert(0, str(d))
    yield e
    sys.path.remove(str(d))


@pytest.fixture
def gdir(tmp_path):
    g = tmp_path / "golden"
    g.mkdir()
    return g


def run(capsys, fn, *argv):
    rc = fn([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def common(env, engines=None, cfg=None):
    return ["--engines", engines or f"{env.good},{env.good}", "--configs", cfg or env.cfg, "--timeout", "20"]


def snapshot(d: Path) -> dict:
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(d.iterdir())}


def test_write_then_check_is_clean_and_bytes_stable(env, gdir, capsys, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    rc, out, err = run(capsys, parity_main, "check", *common(env), "--golden-dir", gdir)
    assert rc == 1
    assert "golden fam_a.json: 13 MISSING (shard does not exist)" in out
    assert "MISSING fam_a/plain@llvm20: IDENTICAL; no golden entry" in out

    rc, out, err = run(capsys, parity_main, "write", *common(env), "--golden-dir", gdir, "--no-oracles")
    assert rc == 0, err
    assert "oracles: SKIPPED (--no-oracles): 11 changed or new lowered entries blessed without" in out
    assert "golden fam_a.json: created (13 added, 0 removed, 0 changed)" in out
    assert "ADDED fam_a/cluster@llvm20: rejected 'amdgpu-cluster-dims requires flavor llvm23'" in out
    assert "golden fam_b.json: created (3 added, 0 removed, 0 changed)" in out
    first = (gdir / "fam_a.json").read_bytes()
    doc = json.loads(first)
    assert doc["format"] == 2 and doc["family"] == "fam_a"
    flavors = G.load_shard(gdir, "fam_a")
    assert set(flavors) == {"llvm20", "llvm22", "llvm23"}
    assert flavors["llvm23"]["plain"]["kernel"] == "fam_a_plain"
    assert flavors["llvm20"]["must_reject"] == {"rejected": "tile_k must be a multiple of 32"}
    assert "only23" not in flavors["llvm20"] and "only23" in flavors["llvm23"]
    assert b"\r" not in first and first.endswith(b"}\n")
    assert len(first.decode().splitlines()) == 13 + 2  # one line per entry + header + trailer

    rc, out, err = run(capsys, parity_main, "check", *common(env), "--golden-dir", gdir)
    assert rc == 0, out
    assert "golden fam_a.json: clean" in out and out.rstrip().endswith("RESULT: GREEN")

    rc, out, err = run(capsys, parity_main, "write", *common(env), "--golden-dir", gdir, "--no-oracles")
    assert rc == 0
    assert "golden fam_a.json: unchanged (0 added, 0 removed, 0 changed)" in out
    assert "0 golden entries changed" in out
    assert (gdir / "fam_a.json").read_bytes() == first
    assert sorted(p.name for p in gdir.iterdir() if not p.name.startswith(".")) == ["fam_a.json", "fam_b.json"]


def test_missing_orphan_changed_are_reported_then_reblessed(env, gdir, capsys, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert run(capsys, parity_main, "write", *common(env), "--golden-dir", gdir, "--no-oracles")[0] == 0
    doc = {"flavors": G.load_shard(gdir, "fam_a")}
    del doc["flavors"]["llvm22"]["plain"]                                   # -> MISSING
    doc["flavors"]["llvm20"]["retired_cfg"] = {"rejected": "old"}           # -> ORPHAN
    doc["flavors"]["llvm23"]["other"]["bytes"] += 1                         # -> CHANGED
    (gdir / "fam_a.json").write_text(G.render_shard("fam_a", doc["flavors"]))
    (gdir / "fam_gone.json").write_text(G.render_shard("fam_gone", {"llvm23": {"x": {"rejected": "r"}}}))

    rc, out, err = run(capsys, parity_main, "check", *common(env), "--golden-dir", gdir)
    assert rc == 1
    assert "golden fam_a.json: 1 MISSING, 1 ORPHAN, 1 CHANGED" in out
    assert "  MISSING fam_a/plain@llvm22: IDENTICAL; no golden entry" in out
    assert "  ORPHAN fam_a/retired_cfg@llvm20: config no longer exists at this flavor" in out
    n = doc["flavors"]["llvm23"]["other"]["bytes"]
    assert f"  CHANGED fam_a/other@llvm23: bytes {n} -> {n - 1}" in out
    assert "golden fam_gone.json: 1 ORPHAN" in out
    assert "  ORPHAN fam_gone/x@llvm23: family no longer exists" in out
    assert out.rstrip().endswith("RESULT: RED")

    js = gdir.parent / "report.json"
    rc, out, err = run(capsys, parity_main, "check", *common(env), "--golden-dir", gdir,
                       "--only", "fam_a", "--json", js)
    assert rc == 1
    rep = json.loads(js.read_text())
    assert rep["result"] == "RED"
    assert sorted(f["kind"] for f in rep["golden"]) == ["CHANGED", "MISSING", "ORPHAN"]
    assert "fam_gone" not in out  # --only limits the scope

    rc, out, err = run(capsys, parity_main, "write", *common(env), "--golden-dir", gdir, "--no-oracles")
    assert rc == 0, err
    assert "golden fam_a.json: updated (1 added, 1 removed, 1 changed)" in out
    assert "  ADDED fam_a/plain@llvm22" in out
    assert "  REMOVED fam_a/retired_cfg@llvm20: rejected 'old'" in out
    assert "  CHANGED fam_a/other@llvm23" in out
    assert "golden fam_gone.json: removed (family no longer exists; 1 entries)" in out
    assert not (gdir / "fam_gone.json").exists()
    assert run(capsys, parity_main, "check", *common(env), "--golden-dir", gdir)[0] == 0


def test_write_refused_under_ci(env, gdir, capsys, monkeypatch):
    monkeypatch.setenv("CI", "1")
    before = snapshot(gdir)
    rc, out, err = run(capsys, parity_main, "write", *common(env), "--golden-dir", gdir, "--no-oracles")
    assert rc == 2
    assert "refuses to run when CI is set" in err
    assert snapshot(gdir) == before


def test_write_refused_when_a_verdict_fails(env, gdir, capsys, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    rc, out, err = run(capsys, parity_main, "write",
                       *common(env, engines=f"{env.good},{env.bad}", cfg=env.cfg_broken),
                       "--golden-dir", gdir)
    assert rc == 1  # a refused write is a RED outcome, not a usage error (issue 23)
    assert "refuses: 3 config verdict(s) fail" in err
    assert "fam_a: MISMATCH: 1 divergence x 3 entries (no golden entry in all)" in out.splitlines()
    assert "  e.g. fam_a/drifted@llvm20: text differs" in out
    assert list(gdir.iterdir()) == []


BAD_SHARDS = {
    "malformed": (b'{"format": 1,\n  "family": "fam_a"\n', "malformed JSON at line 3"),
    "conflict": (b'{\n<<<<<<< HEAD\n  "family": "fam_a",\n=======\n  "family": "fam_a",\n'
                 b'>>>>>>> other\n  "flavors": {},\n  "format": 1\n}\n', "git conflict marker '<<<<<<<' at line 2"),
    "crlf_mixed": (b'{\r\n  "family": "fam_a",\n  "flavors": {},\r\n  "format": 1\r\n}\r\n', "mixed line ends"),
}


@pytest.mark.parametrize("kind", sorted(BAD_SHARDS))
@pytest.mark.parametrize("command", ["check"])
def test_bad_shard_gives_one_line_error_and_touches_nothing(env, gdir, capsys, monkeypatch, kind, command):
    monkeypatch.delenv("CI", raising=False)
    data, what = BAD_SHARDS[kind]
    (gdir / "fam_a.json").write_bytes(data)
    (gdir / "fam_b.json").write_text(G.render_shard("fam_b", {"llvm23": {"stale": {"rejected": "x"}}}))
    before = snapshot(gdir)
    rc, out, err = run(capsys, parity_main, command, *common(env), "--golden-dir", gdir)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {gdir / 'fam_a.json'}: ")
    assert what in lines[0]
    assert snapshot(gdir) == before
    assert (gdir / "fam_a.json").read_bytes() == data
    assert "run `parity write`" in lines[0]


@pytest.mark.parametrize("kind", sorted(BAD_SHARDS))
def test_write_regenerates_an_unreadable_shard(env, gdir, capsys, monkeypatch, kind):
    """`parity write` is the fix every golden error names: it regenerates the shard."""
    monkeypatch.delenv("CI", raising=False)
    (gdir / "fam_a.json").write_bytes(BAD_SHARDS[kind][0])
    rc, out, err = run(capsys, parity_main, "write", *common(env), "--golden-dir", gdir, "--no-oracles")
    assert rc == 0, err
    assert "golden fam_a.json: " + ("holds git conflict markers; regenerating it" if kind == "conflict"
                                    else "unreadable (") in out
    assert "golden fam_a.json: updated (13 added" in out
    assert run(capsys, parity_main, "check", *common(env), "--golden-dir", gdir)[0] == 0


def test_check_byte_identity_in_process(env, capsys, tmp_path):
    js = tmp_path / "r.json"
    rc, out, err = run(capsys, cbi_main, *common(env, engines=f"{env.good},{env.bad}", cfg=env.cfg_broken),
                       "--json", js)
    assert rc == 1
    lines = out.rstrip().splitlines()
    assert lines[-1] == "RESULT: RED"
    assert lines[0].startswith("parity: golden ")  # provenance first (issue 12)
    assert lines[1].startswith("fam_a    llvm20  IDENTICAL=1 BOTH_REJECTED=0 MISMATCH=1 ")
    assert lines[1].endswith(" RED")
    assert f"      line 6 {env.good}:   ret void" in out
    assert f"      line 6 {env.bad} :   ret void ; different" in out
    rep = json.loads(js.read_text())
    assert rep["result"] == "RED"
    assert rep["families"]["fam_a"]["flavors"]["llvm23"]["counts"]["MISMATCH"] == 1
    mm = [r for r in rep["results"] if r["verdict"] == "MISMATCH"][0]
    assert mm["first_diff"]["line"] == 6

    rc, out, err = run(capsys, cbi_main, *common(env), "--only", "fam_b", "--flavor", "llvm24")
    assert rc == 0
    assert out.splitlines()[1:] == [
        "fam_b    llvm23  IDENTICAL=1 BOTH_REJECTED=0 MISMATCH=0 REASON_MISMATCH=0 ASYMMETRIC=0 "
        "CRASH=0 EXPECTATION=0 GREEN",
        "RESULT: GREEN"]

    rc, out, err = run(capsys, cbi_main, *common(env), "--only", "nosuch")
    assert rc == 2 and "unknown family: nosuch" in err


def test_check_byte_identity_as_script_path(env, tmp_path):
    script = REPO / "parity" / "check_byte_identity.py"
    js = tmp_path / "r.json"
    pp = os.pathsep.join([str(env.dir), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run([sys.executable, str(script), *common(env), "--json", str(js)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=pp))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1] == "RESULT: GREEN"
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith("parity: golden none (no checkout at or above the working directory) | ")
    assert len(lines) == 1 + 2 * 3 + 1  # provenance + 2 families x 3 flavors + result
    assert json.loads(js.read_text())["result"] == "GREEN"


def test_show_diff_list(env, capsys):
    rc, out, err = run(capsys, parity_main, "show", "fam_a/plain", "--engine", env.good, *common(env))
    assert rc == 0
    assert "define amdgpu_kernel void @fam_a_plain()" in out and "; flavor llvm23" in out
    rc, out, err = run(capsys, parity_main, "show", "fam_a/plain", "--flavor", "llvm24", "--engine", env.bad,
                       *common(env))
    assert rc == 0 and "; flavor llvm23" in out
    rc, out, err = run(capsys, parity_main, "show", "fam_a/cluster", "--flavor", "llvm20", "--engine", env.good,
                       *common(env))
    assert rc == 1 and "rejected: amdgpu-cluster-dims requires flavor llvm23" in err
    rc, out, err = run(capsys, parity_main, "show", "fam_a/nope", *common(env))
    assert rc == 2 and "no config 'nope' in family fam_a" in err

    rc, out, err = run(capsys, parity_main, "diff", "fam_a/drifted",
                       *common(env, engines=f"{env.good},{env.bad}", cfg=env.cfg_broken))
    assert rc == 1
    assert f"--- {env.good}:fam_a/drifted@llvm23" in out
    assert "-  ret void\n" in out and "+  ret void ; different\n" in out
    rc, out, err = run(capsys, parity_main, "diff", "fam_a/plain", "--flavor", "llvm20",
                       *common(env, engines=f"{env.good},{env.bad}", cfg=env.cfg_broken))
    assert rc == 0 and out == "" and "identical: fam_a/plain@llvm20" in err

    rc, out, err = run(capsys, parity_main, "list", "--only", "fam_a", *common(env))
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith("parity: golden ") and f"| {env.good} 0.1.0 " in lines[0]  # provenance first
    assert len(lines) == 6
    cl = [l for l in lines if l.startswith("fam_a/cluster ")][0]
    assert "llvm20:BOTH_REJECTED" in cl and "llvm23:IDENTICAL" in cl
    o23 = [l for l in lines if l.startswith("fam_a/only23 ")][0]
    assert "llvm20:-" in o23 and "llvm23:IDENTICAL" in o23


@pytest.mark.parametrize("argv,needle", [
    (["check", "--only", ","], "--only names nothing"),
    (["check", "--json", "/nonexistent-dir/r.json"], "does not exist"),
    (["check", "--jobs", "0"], "--jobs must be at least 1"),
    (["check", "--timeout", "nan"], "--timeout must be a finite number"),
    (["show", "ir_core/casts", "--engine", "rust"], "unknown engine 'rust' (python or cpp)"),
])
def test_bad_cli_input_is_refused_up_front(argv, needle, capsys):
    """Bad options give exit 2 and a message naming the option, before any run."""
    from parity.app.main import main
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse errors
        rc = e.code
    assert rc == 2
    assert needle in capsys.readouterr().err


def test_disagreeing_engines_say_which_one_still_matches_golden(env, gdir, capsys, monkeypatch):
    """A shard whose configs MISMATCH is not 'clean': the check names, per config,
    which engine's text is still the blessed one (so the other one is the change)."""
    monkeypatch.delenv("CI", raising=False)
    good = f"{env.good},{env.good}"
    rc, out, err = run(capsys, parity_main, "write", *common(env, engines=good, cfg=env.cfg_broken),
                       "--golden-dir", gdir, "--no-oracles")
    assert rc == 0, out + err
    rc, out, err = run(capsys, parity_main, "check",
                       *common(env, engines=f"{env.good},{env.bad}", cfg=env.cfg_broken), "--golden-dir", gdir)
    assert rc == 1
    assert "golden fam_a.json: clean" not in out
    assert "golden fam_a.json: 3 not compared (engines disagree)" in out
    assert f"fam_a: MISMATCH: 1 divergence x 3 entries ({env.good} matches golden in all)" in out.splitlines()
    assert f"hint: MISMATCH: {env.bad} alone changed" in out
    rc, out, err = run(capsys, parity_main, "check", "--full",
                       *common(env, engines=f"{env.good},{env.bad}", cfg=env.cfg_broken), "--golden-dir", gdir)
    assert (f"  drifted@llvm23: MISMATCH, {env.good} matches golden, {env.bad} differs from golden"
            in out.splitlines())
    assert out.rstrip().endswith("RESULT: RED")

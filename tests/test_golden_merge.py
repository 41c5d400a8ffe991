"""Merge-proof golden shards: real `git merge`s in a temporary repository.

* one entry per line: two branches adding configs next to each other merge
  clean with git's own text merge (no driver);
* with the driver (`parity merge-golden`, registered by `--install`): the same
  gap filled on both sides merges clean; a key changed differently on both
  sides leaves a valid shard with conflict entries, which `parity check`
  reports as CONFLICT and `parity write` regenerates;
* `parity write` also regenerates a shard git left with conflict markers.
"""

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import gate_stubs
from parity.golden import shards as G
from parity.golden import merge_driver as M
from parity.app.main import main as parity_main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

SHA = "0123456789abcdef" * 4


def sha(c: str) -> str:
    return c * 64


def entry(c: str, n: int = 100) -> dict:
    return {"bytes": n, "kernel": f"k_{c}", "sha256": sha(c)}


BASE = {"llvm23": {"a": entry("a"), "c": entry("c"), "e": entry("e")}}


def git(repo: Path, *args, check=True):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_NOSYSTEM="1", HOME=str(repo.parent))
    r = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    if check and r.returncode:
        raise AssertionError(f"git {' '.join(args)} failed: {r.stdout}{r.stderr}")
    return r


def make_repo(tmp_path: Path, base: dict) -> Path:
    repo = tmp_path / "repo"
    (repo / "golden").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "golden" / "fam.json").write_text(G.render_shard("fam", base))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def branch(repo: Path, name: str, flavors: dict, start: str = "main", family: str = "fam") -> None:
    git(repo, "checkout", "-q", "-b", name, start)
    (repo / "golden" / f"{family}.json").write_text(G.render_shard(family, flavors))
    git(repo, "commit", "-q", "-am", name)


def with_(base: dict, **changes) -> dict:
    out = {fl: dict(e) for fl, e in base.items()}
    for k, v in changes.items():
        if v is None:
            del out["llvm23"][k]
        else:
            out["llvm23"][k] = v
    return out


def install_driver(repo: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "parity", "merge-golden", "--install"], cwd=repo,
                       capture_output=True, text=True,
                       env=dict(os.environ, HOME=str(repo.parent), GIT_CONFIG_NOSYSTEM="1"))
    assert r.returncode == 0, r.stderr
    assert "merge.parity-golden.driver" in r.stdout
    assert M.ATTRIBUTES_LINE in (repo / ".gitattributes").read_text().splitlines()
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "driver")


def test_adjacent_additions_merge_clean_without_the_driver(tmp_path):
    repo = make_repo(tmp_path, BASE)
    branch(repo, "one", with_(BASE, b=entry("b")))        # between a and c
    branch(repo, "two", with_(BASE, d=entry("d")))        # between c and e: next to b's line but one
    branch(repo, "three", with_(BASE, f=entry("f")), start="main")  # after the last entry
    git(repo, "checkout", "-q", "one")
    r = git(repo, "merge", "-q", "--no-edit", "two", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    r = git(repo, "merge", "-q", "--no-edit", "three", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    merged = G.load_shard(repo / "golden", "fam")
    assert sorted(merged["llvm23"]) == ["a", "b", "c", "d", "e", "f"]
    text = (repo / "golden" / "fam.json").read_text()
    assert text == G.render_shard("fam", merged)  # still the canonical one-line-per-entry layout


def test_same_gap_additions_conflict_in_git_but_merge_clean_with_the_driver(tmp_path):
    repo = make_repo(tmp_path, BASE)
    branch(repo, "one", with_(BASE, b1=entry("1")))
    branch(repo, "two", with_(BASE, b2=entry("2")), start="main")
    git(repo, "checkout", "-q", "one")
    r = git(repo, "merge", "-q", "--no-edit", "two", check=False)
    assert r.returncode != 0  # both insert between a and c: git's text merge conflicts
    git(repo, "merge", "--abort")
    install_driver(repo)
    r = git(repo, "merge", "-q", "--no-edit", "two", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    merged = G.load_shard(repo / "golden", "fam")
    assert sorted(merged["llvm23"]) == ["a", "b1", "b2", "c", "e"]
    assert merged["llvm23"]["b2"] == entry("2")


def test_same_key_changed_on_both_sides_leaves_conflict_entries(tmp_path):
    repo = make_repo(tmp_path, BASE)
    install_driver(repo)
    # one re-blesses a and c; two changes a differently, deletes e, and adds g
    branch(repo, "one", with_(BASE, a=entry("1"), c=entry("2")))
    branch(repo, "two", with_(BASE, a=entry("3"), e=None, g=entry("4")), start="main")
    git(repo, "checkout", "-q", "one")
    r = git(repo, "merge", "--no-edit", "two", check=False)
    assert r.returncode != 0 and "CONFLICT" in r.stdout
    text = (repo / "golden" / "fam.json").read_text()
    assert "<<<<<<<" not in text
    doc = json.loads(text)  # valid JSON
    assert doc["format"] == 2
    merged = G.load_shard(repo / "golden", "fam")["llvm23"]
    assert merged["a"] == {"conflict": {"base": entry("a"), "ours": entry("1"), "theirs": entry("3")}}
    assert merged["c"] == entry("2")          # changed on one side only
    assert "e" not in merged                  # deleted on one side, untouched on the other
    assert merged["g"] == entry("4")          # added on one side


def test_merge_entries_three_ways():
    base = {"k/a": entry("a"), "k/b": entry("b"), "k/c": entry("c")}
    ours = {"k/a": entry("1"), "k/b": entry("b"), "k/d": entry("d")}
    theirs = {"k/a": entry("2"), "k/c": entry("c"), "k/d": entry("d")}
    merged, conflicts = M.merge_entries(base, ours, theirs)
    assert conflicts == ["k/a"]
    assert merged == {"k/a": {"conflict": {"base": entry("a"), "ours": entry("1"), "theirs": entry("2")}},
                      "k/d": entry("d")}  # b deleted by theirs, c deleted by ours, d added on both


def test_driver_refuses_a_side_that_is_not_a_shard(tmp_path):
    a = tmp_path / "a.json"
    a.write_text("<<<<<<< x\n")
    b = tmp_path / "b.json"
    b.write_text(G.render_shard("fam", BASE))
    r = subprocess.run([sys.executable, "-m", "parity", "merge-golden", str(b), str(a), str(b), "golden/fam.json"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert "run `parity write` after the merge to regenerate golden/fam.json" in r.stderr
    assert a.read_text() == "<<<<<<< x\n"  # left as git gave it


def test_driver_with_no_shard_on_any_side_says_so(tmp_path):
    # three missing (or empty) sides: before, "the sides hold different families (none)"
    sides = [tmp_path / n for n in ("o.json", "a.json", "b.json")]
    sides[1].write_text("")
    with pytest.raises(M.MergeError) as e:
        M.merge_files(*map(str, sides), "golden/fam.json")
    assert str(e.value) == (f"golden/fam.json: no side is a golden shard (base {sides[0]}, ours {sides[1]}, "
                            f"theirs {sides[2]}: each empty or missing)")
    assert sides[1].read_text() == ""  # nothing written


# -- check reports CONFLICT, write resolves ----------------------------------------------------

@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    d = tmp_path_factory.mktemp("merge_stub")
    tag = uuid.uuid4().hex[:8]
    good, _ = gate_stubs.write_engines(d, f"mg{tag}")
    cfg = gate_stubs.write_configs(d, f"mgcfg{tag}", {"fam_a": gate_stubs.GREEN_FAMILY})
    sys.path.insert(0, str(d))
    yield good, cfg
    sys.path.remove(str(d))


def _run(capsys, *argv):
    rc = parity_main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_check_reports_conflict_and_write_resolves_it(stub, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    good, cfg = stub
    common = ["--engines", f"{good},{good}", "--configs", cfg, "--timeout", "20", "--golden-dir", tmp_path]
    assert _run(capsys, "write", *common, "--no-oracles")[0] == 0
    blessed = (tmp_path / "fam_a.json").read_bytes()
    shard = G.load_shard(tmp_path, "fam_a")
    real = shard["llvm23"]["plain"]
    shard["llvm23"]["plain"] = {"conflict": {"base": entry("0"), "ours": entry("1"), "theirs": real}}
    shard["llvm20"]["gone_cfg"] = {"conflict": {"base": None, "ours": entry("3"), "theirs": entry("4")}}
    G.write_shard(tmp_path, "fam_a", shard)

    rc, out, err = _run(capsys, "check", *common)
    assert rc == 1
    assert "golden fam_a.json: 2 CONFLICT" in out
    # the entry the engines ran: which side they reproduce, summarised (no per-key hash line)
    assert "  fam_a: 1 merge-conflicted entry: the engines reproduce ours 0, theirs 1, neither 0" in out
    assert "CONFLICT fam_a/plain@llvm23" not in out
    assert "  CONFLICT fam_a/gone_cfg@llvm20: merge conflict" in out  # no config runs it: listed
    assert "run `parity write` to regenerate them" in out
    assert out.rstrip().endswith("RESULT: RED")

    rc, out, err = _run(capsys, "write", *common, "--no-oracles")
    assert rc == 0, err
    assert "  fam_a: 2 merge-conflicted entries: the engines wrote ours 0, theirs 1, neither 1" in out
    assert "merge conflict (ours" not in out
    assert (tmp_path / "fam_a.json").read_bytes() == blessed
    assert _run(capsys, "check", *common)[0] == 0


def test_write_regenerates_git_conflict_markers_after_a_real_merge(stub, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    good, cfg = stub
    repo = tmp_path / "repo"
    (repo / "golden").mkdir(parents=True)
    common = ["--engines", f"{good},{good}", "--configs", cfg, "--timeout", "20", "--golden-dir", repo / "golden"]
    assert _run(capsys, "write", *common, "--no-oracles")[0] == 0
    blessed = (repo / "golden" / "fam_a.json").read_bytes()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    shard = G.load_shard(repo / "golden", "fam_a")
    for name, c in (("one", "1"), ("two", "2")):
        s = {fl: dict(e) for fl, e in shard.items()}
        s["llvm23"]["plain"] = entry(c)
        branch(repo, name, s, family="fam_a")
    git(repo, "checkout", "-q", "one")
    assert git(repo, "merge", "--no-edit", "two", check=False).returncode != 0  # no driver: markers
    assert "<<<<<<<" in (repo / "golden" / "fam_a.json").read_text()
    rc, out, err = _run(capsys, "check", *common)
    assert rc == 2 and "git conflict marker" in err and "run `parity write`" in err
    monkeypatch.setenv("CI", "1")
    assert _run(capsys, "write", *common, "--no-oracles")[0] == 2  # still refused under CI
    monkeypatch.delenv("CI")
    rc, out, err = _run(capsys, "write", *common, "--no-oracles")
    assert rc == 0, err
    assert "golden fam_a.json: holds git conflict markers; regenerating it" in out
    assert (repo / "golden" / "fam_a.json").read_bytes() == blessed
    assert _run(capsys, "check", *common)[0] == 0

"""A real git merge beside a golden writer (issue 39; parity fuzz --gate's concurrent_git_* kinds):
the merge driver finds the work tree changed while it waited for the golden lock, and keeps the
lock until git has written its result; a write's probe file removed by another write's clean-up."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from parity.golden import git_hold
from parity.golden import merge_driver as M
from parity.golden import shards as G

def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    r = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert not check or r.returncode == 0, r.stderr
    return r


def shard(*tags: str, kernel: str = "k_old") -> bytes:
    flavors = {"llvm23": {"plain": {"rejected": kernel}, **{f"zz_{t}": {"rejected": t} for t in tags}}}
    return G.render_shard("fam_a", flavors).encode()


def entries(path: Path) -> dict:
    return G.parse_shard(path.read_bytes(), path.name, "fam_a")["llvm23"]


@pytest.fixture()
def repo(tmp_path) -> Path:
    """main adds zz_ours, side adds zz_theirs to golden/fam_a.json: git runs the driver."""
    r = tmp_path / "repo"
    (r / "golden").mkdir(parents=True)
    git(r, "init", "-q", "-b", "main")
    git(r, "config", "merge.parity-golden.driver", f"{shlex.quote(sys.executable)} -m parity merge-golden %O %A %B %P")
    (r / ".gitattributes").write_text("golden/*.json merge=parity-golden\n")
    f = r / "golden" / "fam_a.json"

    def commit(data: bytes, msg: str) -> None:
        f.write_bytes(data)
        git(r, "add", "-A")
        git(r, "commit", "-q", "-m", msg)
    commit(shard(), "base")
    git(r, "branch", "side")
    commit(shard("ours"), "ours")
    git(r, "checkout", "-q", "side")
    commit(shard("theirs"), "theirs")
    git(r, "checkout", "-q", "main")
    return r


def test_a_write_while_the_driver_waits_is_merged_and_left_as_a_conflict(repo):
    # git checked the work tree clean, then its driver waited for the lock a writer held; the
    # writer replaced the shard; git wrote the merge result over it (the lane: 3 of 4 cases)
    lock = FileLock(str(repo / "golden" / G.LOCK_NAME))
    lock.acquire()
    proc = subprocess.Popen(["git", "merge", "--no-edit", "side"], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
                                     GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                                     GIT_COMMITTER_EMAIL="t@t"))
    try:
        time.sleep(3.0)  # git is in the driver, waiting for the lock
        G.write_shard(repo / "golden", "fam_a", {"llvm23": {"plain": {"rejected": "k_new"},
                                                            "zz_ours": {"rejected": "ours"}}})
    finally:
        lock.release()
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1, out
    assert "changed in the work tree while git merged" in out
    got = entries(repo / "golden" / "fam_a.json")
    assert got["plain"] == {"rejected": "k_new"}  # the writer's entry, not git's
    assert {"zz_ours", "zz_theirs"} <= set(got)  # and the merge
    assert (repo / ".git" / "MERGE_HEAD").exists()  # not committed: the user looks at it first


def test_a_clean_merge_through_the_driver_commits_and_frees_the_lock(repo):
    git(repo, "merge", "-q", "--no-edit", "side")
    assert {"zz_ours", "zz_theirs"} <= set(entries(repo / "golden" / "fam_a.json"))
    lock = FileLock(str(repo / "golden" / G.LOCK_NAME), timeout=10)
    lock.acquire()  # git has ended: its hand-off let go
    lock.release()
    deadline = time.monotonic() + 10
    while (repo / "golden" / git_hold.MARK).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (repo / "golden" / git_hold.MARK).exists()


def test_the_lock_is_held_until_the_git_command_ends(tmp_path):
    # the driver exits before git writes the work tree: the lock goes to a child that waits for git
    stand_in = subprocess.Popen(["sleep", "30"])  # "git"
    try:
        with git_hold.lock_for_git(tmp_path, stand_in.pid, timeout=5):
            pass
        assert git_hold.held_for(tmp_path, stand_in.pid)
        assert not git_hold.held_for(tmp_path, os.getpid())
        with pytest.raises(Timeout):
            FileLock(str(tmp_path / G.LOCK_NAME), timeout=0.3).acquire()
    finally:
        stand_in.kill()
        stand_in.wait()
    lock = FileLock(str(tmp_path / G.LOCK_NAME), timeout=10)
    lock.acquire()
    lock.release()
    assert not git_hold.held_for(tmp_path, stand_in.pid)


def test_the_lock_is_released_when_the_block_fails(tmp_path):
    stand_in = subprocess.Popen(["sleep", "30"])
    try:
        with pytest.raises(RuntimeError):
            with git_hold.lock_for_git(tmp_path, stand_in.pid, timeout=5):
                raise RuntimeError("merge failed")
        FileLock(str(tmp_path / G.LOCK_NAME), timeout=1).acquire()
    finally:
        stand_in.kill()
        stand_in.wait()


def test_a_driver_run_by_hand_is_not_git(tmp_path):
    assert git_hold.git_ancestor() is None  # pytest's parent is no git
    ours = tmp_path / "x.json"
    ours.write_bytes(shard())
    assert not M.moved_work_tree(str(ours), str(ours))  # the same file
    assert not M.moved_work_tree(str(ours), str(tmp_path / "missing.json"))
    assert not M.moved_work_tree(str(ours), "golden/fam_a\x00FORGED.json")  # no ValueError traceback
    other = tmp_path / "y.json"
    other.write_bytes(shard().replace(b"\n", b"\r\n"))
    assert not M.moved_work_tree(str(ours), str(other))  # line ends only
    other.write_bytes(shard(kernel="k_new"))
    assert M.moved_work_tree(str(ours), str(other))


def test_a_probe_removed_by_another_writes_clean_up_still_means_writable(tmp_path, monkeypatch):
    # concurrent_write_write: one write's remove_stale_temp_files took the other's probe file,
    # whose unlink then said "golden directory not writable: No such file or directory"
    real = os.unlink
    seen = []

    def unlink(p, *a, **k):
        if Path(p).name.startswith(G.PROBE_PREFIX) and not seen:
            seen.append(p)
            real(p)  # the other write's clean-up got there first
        return real(p, *a, **k)
    monkeypatch.setattr(os, "unlink", unlink)
    G.check_dir_writable(tmp_path)
    assert seen
    young = tmp_path / f"{G.PROBE_PREFIX}abc.json.tmp"
    young.write_text("")
    assert G.remove_stale_temp_files(tmp_path) == [] and young.exists()
    old = time.time() - G.PENDING_TMP_AGE - 10
    os.utime(young, (old, old))
    assert G.remove_stale_temp_files(tmp_path) == [young]

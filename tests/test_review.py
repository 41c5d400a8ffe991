"""Pending golden entries (parity/golden/pending.py), `parity review` in its scripted form
(parity/golden/review.py) and `parity write --mode new` (parity/golden/bless.py).

Each test works in a small git repository holding a copy of this checkout's
python_engine/, parity/ and golden/ (as tests/test_ir_diff_base.py): the
gate's engines are the installed ones (this checkout's), the golden shards
and the review's old IR (REF = HEAD) are the repository's.
"""

import json
import shutil
import subprocess

import pytest

from parity.golden import shards as G
from parity.golden import pending as P
from parity.app.main import main as parity_main
from parity.golden.review import ask

FAM = "conv_fwd_split_k_reduce"

from scratch_checkout import REDUCE_PY, git, make_checkout  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")




@pytest.fixture
def repo(tmp_path, monkeypatch):
    r = make_checkout(tmp_path, ('.gitignore',))
    monkeypatch.chdir(r)
    monkeypatch.delenv("CI", raising=False)
    return r


def run(capsys, *argv):
    # the scratch checkout runs this checkout's engines on purpose (docs/gate.md, foreign engines)
    if argv and argv[0] in ("check", "write", "diff", "review"):
        argv = (*argv, "--allow-foreign-engines")
    rc = parity_main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def shard(repo, fam=FAM):
    return G.load_shard(repo / "golden", fam)


def fake(entry):
    """The entry with another sha256: the shard now says something the engines do not give."""
    return dict(entry, sha256=("0" if entry["sha256"][0] != "0" else "1") + entry["sha256"][1:])


def plant(repo, keys):
    """Replace the given (flavor, config) entries of the reduce shard with fakes; returns the old shard."""
    s = shard(repo)
    for fl, cfg in keys:
        s[fl][cfg] = fake(s[fl][cfg])
    G.write_shard(repo / "golden", FAM, s)
    return s


D2 = [("llvm23", "bf16_v8_t64_d2"), ("llvm23", "fp16_v8_t64_d2")]
D0 = [("llvm23", "bf16_v1_t64_d0")]


def test_review_accepts_one_group_rejects_another_and_writes_exactly_the_accepted(repo, capsys):
    # HEAD (the review's old IR): the unrolled slab loads at align 8; the working engine has align 4
    f = repo / REDUCE_PY
    f.write_text(f.read_text().replace('            x = b.load(vt, p, 4, "slab")',
                                       '            x = b.load(vt, p, 8, "slab")'))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ref")
    planted = plant(repo, D2 + D0)
    rc, out, err = run(capsys, "check", "--only", FAM)
    assert rc == 1 and "RESULT: RED" in out
    assert f"pending: 3 entries left in {repo.resolve() / 'golden'}/*.json.new" in out
    pend = P.load(repo / "golden", FAM)
    assert sorted(pend) == sorted(f"{fl}/{c}" for fl, c in D2 + D0)
    assert git(repo, "status", "--porcelain", "--ignored", "golden").count(".json.new") == 1  # ignored
    assert "!! golden/conv_fwd_split_k_reduce.json.new" in git(repo, "status", "--porcelain", "--ignored")

    rc, out, err = run(capsys, "review", "--list")
    assert rc == 0, err
    heads = [l for l in out.splitlines() if l.startswith(f"{FAM}:")]  # one line per group
    assert len(heads) == 2 and out.rstrip().splitlines()[-1].startswith("groups: 2, entries: 3")
    assert len(out.splitlines()) == 5  # the preamble line, the base line, 2 groups, the count
    assert heads[0].endswith(f"  2 entries  {FAM}  -  %slab# = load <8 x float>, ptr addrspace(1) %pws#, align 8")
    assert heads[1].endswith(f"  1 entry  {FAM}  the IR is the same at HEAD; the golden entry differs")
    text_id, other_id = heads[0].split()[0], heads[1].split()[0]
    rc, out, err = run(capsys, "review", "--list", "--json")
    doc = json.loads(out)
    assert rc == 0 and [g["id"] for g in doc["groups"]] == [text_id, other_id] and doc["entries"] == 3
    assert doc["groups"][0]["entries"] == [{"config": "bf16_v8_t64_d2", "flavor": "llvm23"},
                                           {"config": "fp16_v8_t64_d2", "flavor": "llvm23"}]
    assert doc["groups"][0]["families"] == [FAM]
    assert "+  %slab# = load <8 x float>, ptr addrspace(1) %pws#, align 4" in doc["groups"][0]["hunks"][0]

    rc, out, err = run(capsys, "review", "--accept", text_id[:-2], "--reject", other_id)
    assert rc == 0, out + err
    assert f"rejected {other_id}: 1 entry (golden unchanged, no longer pending)" in out
    assert "oracles: 2 changed or new lowered entries" in out  # the same oracles as `parity write`
    assert "accepted: 2 of 2 entries written to golden/" in out
    assert not [l for l in out.splitlines() if "CHANGED" in l or " -> " in l]  # one summary line per shard, no hash lines
    assert f"golden {FAM}.json: updated (0 added, 0 removed, 2 changed)" in out
    after = shard(repo)
    changed = {(fl, c) for fl in after for c in after[fl] if after[fl][c] != planted[fl][c]}
    assert changed == set(D2)  # exactly the accepted entries changed
    assert after["llvm23"]["bf16_v1_t64_d0"] == planted["llvm23"]["bf16_v1_t64_d0"]  # rejected: as it was
    assert not P.pending_path(repo / "golden", FAM).exists()  # nothing left pending
    rc, out, err = run(capsys, "review", "--list")
    assert rc == 0 and "nothing pending" in out


def test_pending_lifecycle_check_writes_never_reads_and_ci_refuses(repo, capsys, monkeypatch):
    gdir = repo / "golden"
    plant(repo, D0)
    path = P.pending_path(gdir, FAM)
    # a narrowed check leaves pending files alone
    rc, out, _ = run(capsys, "check", "--only", f"{FAM}/bf16_v1_t64_d0")
    assert rc == 1 and not path.exists() and "pending:" not in out
    # under CI a RED check leaves nothing
    monkeypatch.setenv("CI", "1")
    rc, out, _ = run(capsys, "check", "--only", FAM)
    assert rc == 1 and not path.exists()
    rc, out, err = run(capsys, "review", "--list")
    assert rc == 2 and "refuses to run when CI is set" in err
    monkeypatch.delenv("CI")
    rc, out, _ = run(capsys, "check", "--only", FAM)
    assert rc == 1 and path.exists() and list(P.load(gdir, FAM)) == ["llvm23/bf16_v1_t64_d0"]
    # check never reads a pending file: garbage in it changes nothing in the verdict
    path.write_text("not json")
    rc2, out2, _ = run(capsys, "check", "--only", FAM)
    assert rc2 == 1 and out2.count("CHANGED") == out.count("CHANGED")
    assert list(P.load(gdir, FAM)) == ["llvm23/bf16_v1_t64_d0"]  # and rewrote it
    # a pending entry whose shard entry changed since the check is stale: dropped by review
    s = shard(repo)
    s["llvm23"]["bf16_v1_t64_d0"] = dict(s["llvm23"]["bf16_v1_t64_d0"], sha256="f" * 64)
    G.write_shard(gdir, FAM, s)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ref")
    rc, out, err = run(capsys, "review", "--list")
    assert rc == 0 and f"{FAM}: 1 pending entry dropped (the shard changed since `parity check`)" in out
    assert "nothing pending" in out and not path.exists()
    # a GREEN check deletes the family's pending file
    rc, out, _ = run(capsys, "check", "--only", FAM)
    assert path.exists()
    s = shard(repo)
    s["llvm23"]["bf16_v1_t64_d0"] = P.load(gdir, FAM)["llvm23/bf16_v1_t64_d0"]["new"]
    G.write_shard(gdir, FAM, s)
    rc, out, _ = run(capsys, "check", "--only", FAM)
    assert rc == 0 and not path.exists()


def test_review_refuses_bad_input(repo, capsys):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ref")
    plant(repo, D0)
    run(capsys, "check", "--only", FAM)
    rc, out, err = run(capsys, "review")  # stdin is not a terminal under pytest
    assert rc == 2 and "on a terminal; without one, use --list" in err
    rc, out, err = run(capsys, "review", "--accept", "nosuch:1234")
    assert rc == 2 and err.startswith("error: group nosuch:1234 matches no group (pending groups: "
                                      f"{FAM}:") and len(err.splitlines()) == 1
    P.pending_path(repo / "golden", FAM).write_text('{"family": "x"}')
    rc, out, err = run(capsys, "review", "--list")
    assert rc == 2 and "not a pending file of family" in err and "run `parity check`" in err
    P.pending_path(repo / "golden", FAM).unlink()  # nothing pending: a named group is still bad input
    for flag in ("--accept", "--reject"):
        rc, out, err = run(capsys, "review", flag, "nosuch:1234")
        assert rc == 2 and err.splitlines() == ["error: group nosuch:1234 matches no group (pending groups: none)"]
    rc, out, err = run(capsys, "review", "--list")
    assert rc == 0 and "review: nothing pending" in out


def test_interactive_walk_decisions():
    from parity.golden.change_groups import ChangeGroup, TEXT
    gs = [ChangeGroup("a", TEXT, (str(i),), entries=[(f"c{i}", "llvm23")]) for i in range(3)]
    gs.append(ChangeGroup("b", TEXT, ("x",), entries=[("d", "llvm23")]))
    said = []
    keys = iter(["x", "r", "f", "s", "a"])
    d = ask(gs, key=lambda prompt: next(keys, "q"), say=said.append)
    # "x" is asked again; "f" before every group was shown is refused; then s, a; EOF (q) quits
    assert d == {gs[0].gid: "reject", gs[1].gid: "skip", gs[2].gid: "accept"}
    assert "answer a, r, s, f or q" in said
    assert any(x.startswith("f finishes (accepts every group not rejected) once every group was shown: 2 of 4")
               for x in said)
    # at the last group every group was shown: f accepts it and every group not rejected (the skipped one)
    keys = iter(["r", "s", "a", "f"])
    d = ask(gs, key=lambda prompt: next(keys), say=said.append)
    assert d == {gs[0].gid: "reject", gs[1].gid: "accept", gs[2].gid: "accept", gs[3].gid: "accept"}


def test_a_long_group_is_paged_with_its_header_on_every_page():
    from parity.golden.change_groups import ChangeGroup, TEXT
    g = ChangeGroup("a", TEXT, ("k",), hunks=[tuple(f"+  line {n}" for n in range(30))], entries=[("c", "llvm23")])
    said, keys = [], iter(["j", "j", "b", "j", "j", "a"])
    d = ask([g], key=lambda prompt: next(keys), say=said.append, rows=12)
    pages = [i for i, x in enumerate(said) if x.startswith("review 1/1: a")]
    assert len(pages) == 6 and d == {g.gid: "accept"}  # pages 1, 2, 1... each reprinted with its header
    for i in pages:
        assert said[i + 1].startswith(f"  @@ group 1/1 [{g.gid}]")
    # 12 rows: a blank line, "review 1/1", the group header, 7 lines of IR, the status line, the prompt
    assert said[pages[0] + 9] == "-- lines 1-7 of 30; space/j: more, b/k: back --"
    assert said[pages[-1] + 9] == "-- lines 22-28 of 30; space/j: more, b/k: back --"
    # "f" is refused until the last page was shown
    said, keys = [], iter(["f", "j", "j", "j", "j", "f"])
    assert ask([g], key=lambda prompt: next(keys), say=said.append, rows=12) == {g.gid: "accept"}
    assert sum(x.startswith("f finishes") for x in said) == 1


def test_ci_detection_as_jest_and_insta():
    from parity.base.ci import is_ci
    for v in (None, "", "0", "false", "FALSE", " False "):
        assert not is_ci({} if v is None else {"CI": v}), v
    for v in ("1", "true", "yes", "woodpecker"):
        assert is_ci({"CI": v}), v


def test_write_mode_new_adds_missing_entries_only(repo, capsys):
    gdir = repo / "golden"
    s = G.load_shard(gdir, "ir_core")
    fl = "llvm23"
    [gone, changed] = sorted(c for c, e in s[fl].items() if "sha256" in e)[:2]
    was = s[fl].pop(gone)
    s[fl][changed] = fake(s[fl][changed])
    G.write_shard(gdir, "ir_core", s)
    assert run(capsys, "check", "--only", "ir_core")[0] == 1
    assert sorted(P.load(gdir, "ir_core")) == sorted([f"{fl}/{gone}", f"{fl}/{changed}"])
    rc, out, err = run(capsys, "write", "--only", "ir_core", "--mode", "new")
    assert rc == 0, out + err
    assert list(P.load(gdir, "ir_core")) == [f"{fl}/{changed}"]  # the written entry is no longer pending
    after = G.load_shard(gdir, "ir_core")
    assert after[fl][gone] == was  # the MISSING entry was written
    assert after[fl][changed] == s[fl][changed]  # the CHANGED one was kept as it was
    assert f"ADDED ir_core/{gone}@{fl}" in out and "1 golden entry changed" in out
    rc, out, err = run(capsys, "write", "--only", "ir_core")  # --mode all (default): the rest too
    assert rc == 0 and G.load_shard(gdir, "ir_core")[fl][changed] != s[fl][changed]
    assert not P.pending_path(gdir, "ir_core").exists()  # `parity write` leaves no .json.new behind


def _read_until(fd, token: bytes, seconds: float = 600) -> bytes:
    import os
    import select
    import time
    buf, end = b"", time.monotonic() + seconds
    while token not in buf:
        left = end - time.monotonic()
        assert left > 0, buf[-2000:]
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            buf += chunk
    return buf


def test_review_on_a_terminal_accepts_one_group_and_rejects_another(repo):
    """`parity review` on a pseudo-terminal, answered a then r: the accepted group's entries
    are written, the rejected one's are not, nothing stays pending."""
    import os
    import pty
    import sys
    f = repo / REDUCE_PY
    text = f.read_text()
    f.write_text(text.replace('            x = b.load(vt, p, 4, "slab")', '            x = b.load(vt, p, 8, "slab")'))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ref")
    f.write_text(text)  # the working tree's engine is this checkout's again (python -m imports it from here)
    planted = plant(repo, D2 + D0)
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    env.pop("CI", None)
    r = subprocess.run([sys.executable, "-m", "parity", "check", "--only", FAM, "--allow-foreign-engines"], cwd=repo, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 1 and "pending: 3 entries" in r.stdout
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "parity", "review", "--allow-foreign-engines"], cwd=repo, env=env,
                         stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    try:
        first = _read_until(master, b"[q]uit > ")
        assert b"review 1/2" in first and b"IR change: 2 entries" in first
        os.write(master, b"a")  # one key, no Enter
        second = _read_until(master, b"[q]uit > ")
        assert b"review 2/2" in second and b"the golden entry differs" in second
        os.write(master, b"r")
        rest = _read_until(master, b"entries written to golden/")
        assert p.wait(timeout=120) == 0, rest[-2000:]
    finally:
        if p.poll() is None:
            p.kill()
        os.close(master)
    assert b"accepted: 2 of 2 entries written to golden/" in rest
    after = shard(repo)
    assert {(fl, c) for fl in after for c in after[fl] if after[fl][c] != planted[fl][c]} == set(D2)
    assert not P.pending_path(repo / "golden", FAM).exists()


def test_review_drops_pending_entries_whose_config_moved_since_check(repo, capsys):
    # A RED check leaves a removed config (ORPHAN: delete its entries) and an added one
    # (MISSING: add them) pending; then the config file is restored. Accepting those entries
    # would delete a config that is back and bless one that is gone: review drops them.
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    gdir, cfgs = repo / "golden", repo / "parity" / "configs" / "ir_core.py"
    before = cfgs.read_text()
    cfgs.write_text(before.replace('_KERNELS = ("constants_f32", ', '_KERNELS = (')
                    + 'CONFIGS.append(Config("trial_added", arch="gfx1250", spec={"kernel": "lds_barrier"}))\n')
    assert run(capsys, "check", "--only", "ir_core")[0] == 1
    assert len(P.load(gdir, "ir_core")) == 6  # constants_f32 and trial_added at three flavors
    plant_ir = G.load_shard(gdir, "ir_core")
    plant_ir["llvm23"]["casts"] = fake(plant_ir["llvm23"]["casts"])
    cfgs.write_text(before)
    rc, out, err = run(capsys, "review", "--list")
    assert rc == 0, out + err
    assert ("ir_core: 6 pending entries dropped (the config was removed or added since `parity check`, "
            "e.g. llvm20/constants_f32; run `parity check` again)") in out
    assert "review: nothing pending" in out
    assert not P.pending_path(gdir, "ir_core").exists()  # the pending file no longer holds them
    G.write_shard(gdir, "ir_core", plant_ir)  # one real pending change next to a moved one
    cfgs.write_text(before + 'CONFIGS.append(Config("trial_added", arch="gfx1250", spec={"kernel": "lds_barrier"}))\n')
    assert run(capsys, "check", "--only", "ir_core")[0] == 1
    cfgs.write_text(before)
    rc, out, err = run(capsys, "review", "--list")
    assert rc == 0 and "ir_core: 3 pending entries dropped" in out, out + err
    assert out.rstrip().splitlines()[-1].startswith("groups: 1, entries: 1")
    [gid] = [ln.split()[0] for ln in out.splitlines() if ln.startswith("ir_core:") and "dropped" not in ln]
    rc, out, err = run(capsys, "review", "--accept", gid)
    assert rc == 0 and "accepted: 1 of 1 entry written to golden/" in out, out + err
    assert run(capsys, "check", "--only", "ir_core")[0] == 0

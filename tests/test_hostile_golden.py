"""Issue 39's repros on golden/ and pending files: each ends in one `error:` line with exit 2
(never a traceback, never exit 0 with bytes that are not UTF-8 written, never a lost entry)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from parity.base.json_guard import JsonInputError, load_json
from parity.golden import bless
from parity.golden import shards as G

ROOT = Path(__file__).resolve().parents[1]
SHARD = (ROOT / "golden" / "ir_core.json").read_text(encoding="utf-8")


def _parity(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "parity", *args], cwd=cwd, capture_output=True,
                          text=True, errors="surrogateescape", env={**os.environ, "NO_COLOR": "1"})


def _one_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


def _sides(tmp_path: Path, theirs: str) -> tuple[Path, Path, Path]:
    base, ours, th = tmp_path / "base.json", tmp_path / "ours.json", tmp_path / "theirs.json"
    base.write_text(SHARD)
    ours.write_text(SHARD)
    th.write_text(theirs)
    return base, ours, th


@pytest.mark.parametrize("escape", ["\\\\ud800", "\\\\udfff", "\\\\uDC80"])
def test_merge_golden_refuses_a_lone_surrogate_naming_shard_and_entry(tmp_path, escape):
    theirs = re.sub(r'"kernel": "[^"]*"', f'"kernel": "k{escape}"', SHARD, count=1)
    base, ours, th = _sides(tmp_path, theirs)
    r = _parity("merge-golden", str(base), str(ours), str(th), "golden/ir_core.json", cwd=tmp_path)
    line = _one_error(r)
    assert "theirs.json" in line and "entry 'llvm20/buffer_copy/kernel'" in line and "lone surrogate" in line
    assert "parity write" in line
    assert ours.read_bytes() == SHARD.encode()  # left as git gave it
    ours.read_bytes().decode("utf-8")


def test_a_surrogate_pair_escape_is_a_character_not_refused():
    doc = load_json('{"k": "\\ud83d\\ude00"}', "x.json")
    assert doc == {"k": "\U0001f600"}


def test_merge_golden_refuses_a_side_nested_200000_deep_before_parsing(tmp_path):
    base, ours, th = _sides(tmp_path, "[" * 200_000 + "]" * 200_000)
    r = _parity("merge-golden", str(base), str(ours), str(th), cwd=tmp_path)
    line = _one_error(r)
    assert "nested deeper than 16 levels" in line and "theirs.json" in line


def test_every_json_read_in_parity_goes_through_the_guard():
    # one JSON read path: no bare json.load/json.loads of outside input outside json_guard
    allowed = {"parity/base/json_guard.py",
               "parity/verify/compile_worker.py",  # the project's own worker pipe (its own lines)
               "parity/llvm/compile_cache.py",     # checksummed cache entries it wrote itself
               "parity/golden/ref_tree.py",        # the request/answer files it wrote itself
               "parity/fuzz/gate_kinds_shard.py",  # the fuzzer's own case text
               "parity/golden/textconv.py"}        # a shard parse_shard has just accepted  # the fuzzer's own case text
    found = []
    for p in sorted((ROOT / "parity").rglob("*.py")):
        rel = p.relative_to(ROOT).as_posix()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bjson\.loads?\(", line) and rel not in allowed:
                found.append(f"{rel}:{i}")
    assert found == []


def test_parse_shard_names_the_entry_holding_a_lone_surrogate():
    data = re.sub(r'"kernel": "[^"]*"', '"kernel": "k\\\\ud800"', SHARD, count=1).encode()
    with pytest.raises(G.GoldenError) as exc:
        G.parse_shard(data, "golden/ir_core.json", "ir_core")
    msg = str(exc.value)
    assert msg.startswith("golden/ir_core.json: entry 'llvm20/buffer_copy/kernel' holds a lone surrogate")
    assert msg.endswith("run `parity write` to regenerate it")


def test_write_meeting_an_entry_with_a_lone_surrogate_names_the_shard_and_the_fix(tmp_path):
    gdir = tmp_path / "golden"
    gdir.mkdir()
    (gdir / "ir_core.json").write_text(re.sub(r'"kernel": "[^"]*"', '"kernel": "k\\\\ud800"', SHARD, count=1))
    flavors, note = bless.load_for_write(gdir, "ir_core", None)
    assert flavors is None
    assert "ir_core.json: entry 'llvm20/buffer_copy/kernel' holds a lone surrogate" in note
    assert note.endswith("regenerating it")


def test_a_writer_that_finds_the_shard_changed_since_its_locked_read_does_not_replace_it(tmp_path):
    gdir = tmp_path / "golden"
    gdir.mkdir()
    path = gdir / "ir_core.json"
    path.write_text(SHARD)
    flavors = G.parse_shard(SHARD.encode(), "ir_core.json", "ir_core")
    seen: dict = {}
    with G.lock(gdir):
        bless.load_for_write(gdir, "ir_core", None, seen)
        # the widened window: a merge (git writes the work tree, no lock of ours) lands here
        merged = SHARD.replace('"format": 2}', '"llvm22/zz_merged": {"rejected": "from the merge"},\n"format": 2}')
        assert merged != SHARD
        path.write_text(merged)
        with pytest.raises(G.ShardChanged):
            G.write_shard(gdir, "ir_core", flavors, expect=seen["ir_core"])
    assert path.read_text() == merged  # the merge's entry is not lost


def test_merge_golden_waits_for_the_golden_lock(tmp_path):
    import threading
    import time
    gdir = tmp_path / "golden"
    gdir.mkdir()
    base, ours, th = _sides(tmp_path, SHARD)
    out: dict = {}
    with G.lock(gdir):
        t = threading.Thread(target=lambda: out.setdefault(
            "r", _parity("merge-golden", str(base), str(ours), str(th), "golden/ir_core.json", cwd=tmp_path)))
        t.start()
        time.sleep(3.0)
        assert "r" not in out  # still waiting on the lock that this test holds
    t.join(60)
    assert out["r"].returncode == 0, out["r"].stderr
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temp file in the tree


def test_json_guard_size_utf8_and_bom():
    with pytest.raises(JsonInputError, match="more than the cap of 4"):
        load_json(b"[1, 2]", "a.json", max_bytes=4)
    with pytest.raises(JsonInputError, match=r"not valid UTF-8 \(byte 2\)"):
        load_json(b'["\xff"]', "a.json")
    with pytest.raises(JsonInputError, match="byte order mark"):
        load_json(b'\xef\xbb\xbf[]', "a.json")
    with pytest.raises(JsonInputError, match="nested deeper than 3 levels"):
        load_json("[[[[1]]]]", "a.json", max_depth=3)
    assert load_json('["[[[[", 1]', "a.json", max_depth=1) == ["[[[[", 1]  # brackets in strings do not count


def test_a_stale_pending_file_in_a_read_only_golden_dir_is_one_line(tmp_path, monkeypatch):
    from parity.golden import pending as P
    gdir = tmp_path / "golden"
    gdir.mkdir()
    (gdir / "ir_core.json.new").write_text("{}")

    def refuse(self, missing_ok=False):
        raise PermissionError(13, "Read-only file system")
    monkeypatch.setattr(Path, "unlink", refuse)
    with pytest.raises(P.PendingError) as exc:
        P.save(gdir, "ir_core", {})
    assert str(exc.value) == (f"{gdir}/ir_core.json.new: a stale pending file cannot be removed (Read-only file "
                              f"system); make {gdir} writable or remove the file by hand")


def test_an_oversized_pending_file_names_the_command_that_clears_it(tmp_path):
    from parity.golden import pending as P
    gdir = tmp_path / "golden"
    gdir.mkdir()
    (gdir / "ir_core.json.new").write_bytes(b" " * (G.MAX_SHARD_BYTES + 1))
    with pytest.raises(P.PendingError) as exc:
        P.load(gdir, "ir_core")
    msg = str(exc.value)
    assert msg.startswith(f"{gdir / 'ir_core.json.new'}: ir_core: {G.MAX_SHARD_BYTES + 1} bytes, more than the ")
    assert "too many to review one by one" in msg and "`parity write --only ir_core`" in msg and "\n" not in msg


def test_a_golden_dir_name_cannot_forge_a_result_line(tmp_path):
    # a RED check writes pending entries and names the directory: through shown(), one line
    import json
    sys.path.insert(0, str(ROOT / "tests"))
    from gate_os import StubGate
    (tmp_path / "stub").mkdir()
    gate = StubGate(tmp_path / "stub")
    gdir = gate.golden(tmp_path / "g\nRESULT: GREEN\n")
    doc = json.loads(gate.shards["fam_a.json"])
    doc["llvm23/plain"]["sha256"] = "0" * 64  # CHANGED: RED, a pending entry
    (gdir / "fam_a.json").write_text(G.render_shard("fam_a", G.parse_shard(json.dumps(doc), "x", "fam_a")))
    r = gate.run(["check", "--golden-dir", str(gdir)])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "RESULT: GREEN" not in r.stdout.splitlines(), r.stdout
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("pending:")][0].count("\\nRESULT: GREEN\\n") == 1


def test_golden_shards_check_out_lf_under_autocrlf(tmp_path):
    # a clone with core.autocrlf=true (Git for Windows' default) gets LF shards: .gitattributes pins them
    from parity.golden.git_attributes import LF_LINES, pin_line_ends
    repo = tmp_path / "r"
    (repo / "golden").mkdir(parents=True)
    run = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    assert [ln.split("`")[1] for ln in pin_line_ends(repo)] == list(LF_LINES)
    assert pin_line_ends(repo) == []  # once
    (repo / "golden" / "ir_core.json").write_text(SHARD)
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    clone = tmp_path / "c"
    subprocess.run(["git", "-c", "core.autocrlf=true", "clone", "-q", str(repo), str(clone)], check=True)
    assert b"\r" not in (clone / "golden" / "ir_core.json").read_bytes()
    lines = (ROOT / ".gitattributes").read_text().splitlines()
    assert all(ln in lines for ln in LF_LINES)  # the project's own file pins them


def test_a_killed_checks_pending_temp_file_is_listed_and_cleaned(tmp_path):
    gdir = tmp_path / "golden"
    gdir.mkdir()
    old = gdir / ".ir_core.k3j9x.json.new.tmp"  # what a SIGKILLed `parity check` leaves
    young = gdir / ".ir_core.zz8q1.json.new.tmp"
    old.write_text("{")
    young.write_text("{")
    os.utime(old, (1, 1))
    assert G.stale_temp_files(gdir) == [old, young]
    with G.lock(gdir):
        assert G.remove_stale_temp_files(gdir) == [old]  # a running check may still own the young one
    assert not old.exists() and young.exists()

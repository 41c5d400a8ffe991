"""Issue 24, the gate's side: each finding's input, run through `parity` as a
real process, gives the contract's answer -- one `error:` line and exit 2, or
RED and exit 1 -- never a traceback, a forged line or a changed shard after a
refusal; two concurrent `parity write`s never lose an entry."""
from __future__ import annotations

import json
import os
import time

import pytest

from gate_os import (StubGate, drop_capabilities, fill, limit_file_size, mount_tmpfs, remount,
                     snapshot, umount)
from parity.golden import shards as G


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    return StubGate(tmp_path_factory.mktemp("gate_robust"))


def _one_error(r, *needles):
    """Exit 2, stderr one `error:` line holding every needle, no traceback."""
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def _no_forged_line(r):
    for line in (r.stdout + r.stderr).splitlines():  # splitlines: also U+2028, U+0085, \x1c-\x1e
        assert not line.startswith("FORGED") and line != "RESULT: GREEN" or r.returncode == 0, line


def _add_key(data: bytes, key: str, entry: dict) -> bytes:
    lines = data.decode().split("\n")
    line = json.dumps(key) + ": " + json.dumps(entry) + ","
    return "\n".join(lines[:1] + [line] + lines[1:]).encode()


# -- finding 2 and 3: text from a shard never forges or breaks a line -------------------------

@pytest.mark.parametrize("key", ["llvm23/a\udc80", "llvm23/a\nRESULT: GREEN", "llvm23/a\u2028FORGED",
                                 "llvm23/a\x85FORGED", "llvm23/a\rFORGED"])
def test_hostile_key_is_one_error_line_and_write_regenerates(gate, tmp_path, key):
    gdir = gate.golden(tmp_path / "golden")
    (gdir / "fam_a.json").write_bytes(_add_key(gate.shards["fam_a.json"], key, {"rejected": "r"}))
    r = gate.run(["check", "--golden-dir", str(gdir)])
    rule = "holds a lone surrogate" if "\udc80" in key else "is not a flavor or config name"  # issue 39
    _one_error(r, "fam_a.json", rule, "parity write")
    _no_forged_line(r)
    assert "RESULT" not in r.stdout
    w = gate.run(["write", "--no-oracles", "--golden-dir", str(gdir)])
    assert w.returncode == 0, w.stdout + w.stderr
    assert (gdir / "fam_a.json").read_bytes() == gate.shards["fam_a.json"]


def test_shard_file_name_with_a_newline_stays_on_its_line(gate, tmp_path):
    gdir = gate.golden(tmp_path / "golden")
    name = "gone\nRESULT: GREEN"
    (gdir / f"{name}.json").write_text(G.render_shard(name, {}))
    r = gate.run(["check", "--golden-dir", str(gdir)])
    assert r.returncode == 1 and r.stdout.splitlines()[-1] == "RESULT: RED", r.stdout + r.stderr
    assert "golden gone\\nRESULT: GREEN.json: 1 ORPHAN" in r.stdout
    _no_forged_line(r)


def test_kernel_and_reason_text_from_a_shard_are_escaped_in_findings(gate, tmp_path):
    gdir = gate.golden(tmp_path / "golden")
    doc = json.loads(gate.shards["fam_a.json"])
    doc["llvm23/plain"]["kernel"] = "k\nFORGED kernel"
    doc["llvm20/must_reject"]["rejected"] = "r\u2029FORGED reason"
    (gdir / "fam_a.json").write_text(G.render_shard("fam_a", G.parse_shard(json.dumps(doc), "x")))
    r = gate.run(["check", "--golden-dir", str(gdir)])
    assert r.returncode == 1 and r.stdout.splitlines()[-1] == "RESULT: RED", r.stdout + r.stderr
    assert "kernel k\\nFORGED kernel -> fam_a_plain" in r.stdout
    assert "reason 'r\\u2029FORGED reason' ->" in r.stdout
    _no_forged_line(r)


# -- finding 4, 5, 11: OS errors are one line, nothing half-written -----------------------------

def test_unwritable_golden_dir_is_one_error_line(gate, tmp_path):
    gdir = gate.golden(tmp_path / "golden")
    (gdir / "fam_a.json").write_bytes(gate.shards["fam_a.json"].replace(b"fam_a_plain", b"fam_a_old"))
    before = snapshot(gdir)
    os.chmod(gdir, 0o555)
    try:
        r = gate.run(["write", "--no-oracles", "--golden-dir", str(gdir)], preexec=drop_capabilities)
    finally:
        os.chmod(gdir, 0o755)
    _one_error(r, str(gdir), "not writable", "Permission denied")
    assert snapshot(gdir) == before


def test_a_directory_named_like_a_shard_is_refused_by_write(gate, tmp_path):
    gdir = gate.golden(tmp_path / "golden")
    (gdir / "zzz.json").mkdir()
    before = snapshot(gdir)
    r = gate.run(["write", "--no-oracles", "--golden-dir", str(gdir)])
    _one_error(r, "zzz.json", "is a directory")
    assert snapshot(gdir) == before and (gdir / "zzz.json").is_dir()


def test_file_size_limit_is_one_error_line_and_the_shard_stays_whole(gate, tmp_path):
    gdir = gate.golden(tmp_path / "golden")
    (gdir / "fam_a.json").write_bytes(gate.shards["fam_a.json"].replace(b"fam_a_plain", b"fam_a_old"))
    before = snapshot(gdir)
    r = gate.run(["write", "--no-oracles", "--golden-dir", str(gdir)], preexec=limit_file_size(64))
    _one_error(r, "fam_a.json", "cannot write", "the shard is unchanged")
    assert snapshot(gdir) == before
    assert not list(gdir.glob(G.TMP_GLOB))


@pytest.fixture
def tmpfs(tmp_path):
    where = tmp_path / "fs"
    if not mount_tmpfs(where, "64k"):
        pytest.skip("cannot mount a tmpfs here (not root); the RLIMIT_FSIZE test covers the write failure")
    yield where
    umount(where)


def test_full_file_system_is_one_error_line_and_the_shard_stays_whole(gate, tmpfs):
    gdir = gate.golden(tmpfs / "golden")
    (gdir / "fam_a.json").write_bytes(gate.shards["fam_a.json"].replace(b"fam_a_plain", b"fam_a_old"))
    fill(tmpfs)
    before = snapshot(gdir)
    r = gate.run(["write", "--no-oracles", "--golden-dir", str(gdir)])
    _one_error(r, "fam_a.json", "No space left on device")
    assert snapshot(gdir) == before


def test_read_only_file_system_is_one_error_line(gate, tmpfs):
    gdir = gate.golden(tmpfs / "golden")
    (gdir / "fam_a.json").write_bytes(gate.shards["fam_a.json"].replace(b"fam_a_plain", b"fam_a_old"))
    assert remount(tmpfs, "ro")
    before = snapshot(gdir)
    r = gate.run(["write", "--no-oracles", "--golden-dir", str(gdir)])
    _one_error(r, "not writable", "Read-only file system")
    assert snapshot(gdir) == before


# -- finding 6 and 7: numbers, size, layout --------------------------------------------------

def test_a_5000_digit_byte_count_names_the_shard_and_write_regenerates_it(gate, tmp_path):
    gdir = gate.golden(tmp_path / "golden")
    doc = gate.shards["fam_a.json"].decode()
    i = doc.index('"bytes": ') + len('"bytes": ')
    j = doc.index(",", i)
    (gdir / "fam_a.json").write_text(doc[:i] + "9" * 5000 + doc[j:])
    r = gate.run(["check", "--golden-dir", str(gdir)])
    _one_error(r, "fam_a.json", "an integer of 5000 digits", "parity write")
    w = gate.run(["write", "--no-oracles", "--golden-dir", str(gdir)])
    assert w.returncode == 0 and "unreadable" in w.stdout, w.stdout + w.stderr
    assert (gdir / "fam_a.json").read_bytes() == gate.shards["fam_a.json"]


def test_a_sparse_10_gib_shard_is_refused_without_reading_it(gate, tmp_path):
    gdir = gate.golden(tmp_path / "golden")
    with open(gdir / "fam_a.json", "r+b") as f:
        f.truncate(10 * 2**30)
    t0 = time.perf_counter()
    r = gate.run(["check", "--golden-dir", str(gdir)], timeout=60)
    _one_error(r, "fam_a.json", f"more than the {G.MAX_SHARD_BYTES}-byte cap")
    w = gate.run(["write", "--no-oracles", "--golden-dir", str(gdir)])
    assert w.returncode == 0, w.stdout + w.stderr
    assert (gdir / "fam_a.json").read_bytes() == gate.shards["fam_a.json"]
    assert time.perf_counter() - t0 < 60  # bound, not a speed figure: reading 10 GiB would take minutes


@pytest.mark.parametrize("layout", ["padded", "pretty", "unsorted"])
def test_a_valid_shard_out_of_layout_is_red_and_rewritten(gate, tmp_path, layout):
    gdir = gate.golden(tmp_path / "golden")
    data = gate.shards["fam_a.json"]
    if layout == "padded":
        bad = data + b" " * 2_000_000
    elif layout == "pretty":
        bad = json.dumps(json.loads(data), indent=4).encode() + b"\n"
    else:
        lines = data.split(b"\n")
        bad = b"\n".join([lines[0], lines[2], lines[1], *lines[3:]])
    (gdir / "fam_a.json").write_bytes(bad)
    r = gate.run(["check", "--golden-dir", str(gdir)])
    assert r.returncode == 1 and "RESULT: RED" in r.stdout, r.stdout + r.stderr
    assert "golden fam_a.json: clean; not in the canonical one-entry-per-line layout" in r.stdout
    w = gate.run(["write", "--no-oracles", "--golden-dir", str(gdir)])
    assert w.returncode == 0 and "golden fam_a.json: updated" in w.stdout, w.stdout + w.stderr
    assert (gdir / "fam_a.json").read_bytes() == data
    assert gate.run(["check", "--golden-dir", str(gdir)]).returncode == 0


def test_format_1_in_its_written_layout_stays_green(gate, tmp_path):
    gdir = gate.golden(tmp_path / "golden")
    flavors = G.parse_shard(gate.shards["fam_a.json"], "x", "fam_a")
    for fl in ("llvm20", "llvm22", "llvm23"):
        flavors.setdefault(fl, {})
    old = json.dumps({"family": "fam_a", "flavors": flavors, "format": 1}, sort_keys=True, indent=2) + "\n"
    (gdir / "fam_a.json").write_text(old)
    r = gate.run(["check", "--golden-dir", str(gdir)])
    assert r.returncode == 0, r.stdout + r.stderr


# -- finding 9 and 10: the lock --------------------------------------------------------------

def test_a_held_lock_is_one_error_line_naming_the_lock_file(gate, tmp_path):
    from filelock import FileLock
    gdir = gate.golden(tmp_path / "golden")
    before = snapshot(gdir)
    with FileLock(str(gdir / G.LOCK_NAME)):
        r = gate.run(["write", "--no-oracles", "--lock-timeout", "1", "--golden-dir", str(gdir)])
    _one_error(r, str(gdir / G.LOCK_NAME), "still held after 1 s")
    # the wait is said before it starts, on stdout (stderr keeps its one error line)
    assert (f"golden: waiting for the golden lock {gdir / G.LOCK_NAME} (another `parity write` holds it; "
            "up to 1 s, --lock-timeout)") in r.stdout.splitlines(), r.stdout
    assert snapshot(gdir) == before


def _stale(gate, gdir):
    """Every entry of both shards changed, so each writer has something to write."""
    for name, data in gate.shards.items():
        (gdir / name).write_bytes(data.replace(b"_plain", b"_was").replace(b"_other", b"_was"))


WRITERS = {
    "flavors": (["--flavor", "llvm20"], ["--flavor", "llvm23"]),
    "configs": (["--only", "fam_a/plain"], ["--only", "fam_a/other"]),
    "families": (["--only", "fam_a"], ["--only", "fam_b"]),
}


@pytest.mark.parametrize("interleaving", ["both_wait_on_the_lock", "together", "staggered"])
@pytest.mark.parametrize("what", sorted(WRITERS))
def test_concurrent_writes_never_lose_an_entry(gate, tmp_path, what, interleaving):
    from filelock import FileLock
    gdir = gate.golden(tmp_path / "golden")
    _stale(gate, gdir)
    a, b = WRITERS[what]
    args = lambda extra: ["write", "--no-oracles", *extra, "--golden-dir", str(gdir)]  # noqa: E731
    held = FileLock(str(gdir / G.LOCK_NAME))
    if interleaving == "both_wait_on_the_lock":
        held.acquire()  # both read the shards before the run, then wait here: the old lost update
    logs = [open(tmp_path / f"out{i}.txt", "w+") for i in range(2)]
    procs = [gate.popen(args(a), stdout=logs[0])]
    if interleaving == "staggered":
        time.sleep(1.0)
    procs.append(gate.popen(args(b), stdout=logs[1]))
    if interleaving == "both_wait_on_the_lock":
        # release once both runs say they wait for the lock (the line `parity write` prints)
        deadline = time.monotonic() + 120
        while not all("golden: waiting for the golden lock" in (tmp_path / f"out{i}.txt").read_text()
                      for i in range(2)):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs), \
                [(tmp_path / f"out{i}.txt").read_text() for i in range(2)]
            time.sleep(0.05)
        held.release()
    outs = [(p.communicate(timeout=180)[1], log) for p, log in zip(procs, logs)]
    for log in logs:
        log.seek(0)
    outs = [(log.read(), err) for err, log in outs]
    for log in logs:
        log.close()
    assert [p.returncode for p in procs] == [0, 0], outs
    got = {n: G.parse_shard((gdir / n).read_bytes(), n, n[:-5]) for n in gate.shards}
    want = {n: G.parse_shard(d, n, n[:-5]) for n, d in gate.shards.items()}
    for n in gate.shards:
        for fl in want[n]:
            for cfg, e in want[n][fl].items():
                touched_a = _selects(a, n, fl, cfg)
                touched_b = _selects(b, n, fl, cfg)
                if touched_a or touched_b:
                    assert got[n][fl][cfg] == e, (n, fl, cfg, outs)


def _selects(extra: list[str], shard: str, fl: str, cfg: str) -> bool:
    if extra[0] == "--flavor":
        return fl == extra[1]
    fam, _, name = extra[1].partition("/")
    return shard == f"{fam}.json" and (not name or name == cfg)


def test_a_lone_surrogate_in_a_shard_value_is_refused_at_parse_naming_the_entry():
    # issue 39: no UTF-8 file can carry "\ud800", so a shard holding one could never be written
    # back (merge-golden wrote a shard that was not UTF-8): refused at parse, naming the entry
    import re
    from pathlib import Path
    data = (Path(__file__).resolve().parents[1] / "golden" / "ir_core.json").read_text(encoding="utf-8")
    data = re.sub(r'"kernel": "[^"]*"', '"kernel": "k\\\\ud800"', data, count=1).encode()
    with pytest.raises(G.GoldenError, match=r"ir_core.json: entry 'llvm20/buffer_copy/kernel' holds a lone "
                                            r"surrogate escape .*; run `parity write` to regenerate it"):
        G.parse_shard(data, "ir_core.json", "ir_core")

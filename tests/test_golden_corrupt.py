"""Issue 14, the corrupt-shard table: every kind of broken golden shard gives
`parity check` (and `parity write`) one `error:` line (exit 2) or a RED
verdict (exit 1) -- never a traceback, never GREEN, never a hang. Variants are
made from a valid shard by operations that do not depend on its layout."""
from __future__ import annotations

import json
import os
import signal
import socket
import uuid

import pytest

import gate_stubs
from parity.golden import shards as G
from parity.app.main import main as parity_main


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    import sys
    d = tmp_path_factory.mktemp("golden_corrupt")
    tag = uuid.uuid4().hex[:8]
    good, _ = gate_stubs.write_engines(d, f"gc{tag}")
    cfg = gate_stubs.write_configs(d, f"gccfg{tag}", {"fam_a": gate_stubs.GREEN_FAMILY})
    sys.path.insert(0, str(d))
    common = ["--engines", f"{good},{good}", "--configs", cfg, "--timeout", "20"]
    gdir = d / "valid_golden"
    gdir.mkdir()
    old = os.environ.pop("CI", None)
    try:
        # stub engines emit no real IR: the oracles are not what this table tests
        assert parity_main(["write", *common, "--no-oracles", "--golden-dir", str(gdir)]) == 0
    finally:
        if old is not None:
            os.environ["CI"] = old
    yield {"common": common, "valid": (gdir / "fam_a.json").read_bytes()}
    sys.path.remove(str(d))


def _doc(valid: bytes) -> dict:
    return json.loads(valid)


def _dump(doc) -> bytes:
    return json.dumps(doc).encode()


def _with(valid, **top) -> bytes:
    doc = _doc(valid)
    doc.update(top)
    return _dump(doc)


def _first_entry(doc):
    for key, e in doc.items():  # format 2: one "FLAVOR/CONFIG": entry per line
        if "/" in key and "sha256" in e:
            return e
    raise AssertionError("no lowered entry in the valid shard")


def _sha(valid, value) -> bytes:
    doc = _doc(valid)
    _first_entry(doc)["sha256"] = value
    return _dump(doc)


def _unknown_flavor(valid) -> bytes:
    doc = _doc(valid)
    doc["llvm99/x"] = {"rejected": "r"}
    return _dump(doc)


def _conflict(valid) -> bytes:
    lines = valid.decode().split("\n")
    return "\n".join(lines[:1] + ["<<<<<<< HEAD"] + lines[1:2] + ["======="] + lines[1:2] +
                     [">>>>>>> other"] + lines[2:]).encode()


def _duplicate(valid) -> bytes:
    text = valid.decode()
    i = text.index("{") + 1
    return (text[:i] + '"family": "fam_a", ' + text[i:]).encode()


# name -> (bytes of fam_a.json from the valid bytes | special file kind, expected exit, text in output)
CASES = {
    "crlf_mixed": (lambda v: v.replace(b"\n", b"\r\n", 1), 2, "mixed line ends"),
    "bare_cr": (lambda v: v.replace(b"\n", b"\n\r", 1), 2, "a CR without LF"),
    "bom": (lambda v: b"\xef\xbb\xbf" + v, 2, "malformed JSON"),
    "conflict_markers": (_conflict, 2, "git conflict marker"),
    "truncated": (lambda v: v[: len(v) // 2], 2, "malformed JSON"),
    "empty": (lambda v: b"", 2, "malformed JSON"),
    "duplicate_keys": (_duplicate, 2, "duplicate key 'family'"),
    "format_3": (lambda v: _with(v, format=3), 2, "unsupported format 3"),
    "format_true": (lambda v: _with(v, format=True), 2, "unsupported format True"),
    "format_float": (lambda v: _with(v, format=1.0), 2, "unsupported format 1.0"),
    "format_string": (lambda v: _with(v, format="1"), 2, "unsupported format '1'"),
    "family_not_str": (lambda v: _with(v, family=["fam_a"]), 2, "'family' must be a string"),
    "non_json": (lambda v: b"this is not json\n", 2, "malformed JSON"),
    "not_utf8": (lambda v: b"\xff\xfe" + v, 2, "not valid UTF-8"),
    "deep_nesting": (lambda v: b"[" * 200000 + b"]" * 200000 + b"\n", 2, "nested deeper than"),
    "deep_nesting_in_entry": (lambda v: v.replace(b'"rejected":', b'"rejected": ' + b"[" * 5000 + b"]" * 5000
                                                  + b', "x":', 1), 2, "nested deeper than"),
    "top_level_list": (lambda v: b"[]\n", 2, "top level must be an object"),
    "sha_trailing_newline": (lambda v: _sha(v, "0" * 64 + "\n"), 2, "64 lowercase hex digits"),
    "sha_uppercase": (lambda v: _sha(v, "A" * 64), 2, "64 lowercase hex digits"),
    "sha_short": (lambda v: _sha(v, "0" * 63), 2, "64 lowercase hex digits"),
    "sha_not_str": (lambda v: _sha(v, 5), 2, "64 lowercase hex digits"),
    "unknown_flavor": (_unknown_flavor, 1, "ORPHAN fam_a/x@llvm99: flavor no longer exists"),
    "directory": ("directory", 2, "is a directory, not a golden shard file"),
    "fifo": ("fifo", 2, "is a named pipe, not a golden shard file"),
    "socket": ("socket", 2, "is a socket, not a golden shard file"),
    "symlink_to_fifo": ("symlink_fifo", 2, "is a named pipe, not a golden shard file"),
    "char_device": ("chardev", 2, "is a character device, not a golden shard file"),
}


def _make(gdir, kind, make, valid, keep):
    p = gdir / "fam_a.json"
    p.unlink()
    if kind == "directory":
        p.mkdir()
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "symlink_fifo":
        os.mkfifo(gdir / "pipe")
        p.symlink_to(gdir / "pipe")
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))
        keep.append(s)
    elif kind == "chardev":
        p.symlink_to("/dev/zero")
    else:
        p.write_bytes(make(valid))


def _alarm(signum, frame):
    raise TimeoutError("the command hung on a corrupt shard")


@pytest.mark.parametrize("command", ["check", "write"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_corrupt_shard_table(env, tmp_path, capsys, monkeypatch, name, command):
    monkeypatch.delenv("CI", raising=False)
    gdir = tmp_path / "golden"
    gdir.mkdir()
    valid = env["valid"]
    (gdir / "fam_a.json").write_bytes(valid)
    capsys.readouterr()
    make, want_rc, needle = CASES[name]
    keep = []
    special = make if isinstance(make, str) else None
    _make(gdir, special, make, valid, keep)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)
    try:
        extra = ["--no-oracles"] if command == "write" else []
        rc = parity_main([command, *env["common"], *extra, "--golden-dir", str(gdir)])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        for s in keep:
            s.close()
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert "RESULT: GREEN" not in out
    if command == "write" and want_rc == 1:
        # an unknown flavor is not an error for write: it re-blesses without it
        assert rc == 0 and "REMOVED fam_a/x@llvm99" in out
        assert b"llvm99" not in (gdir / "fam_a.json").read_bytes()
        return
    if command == "write" and special is None and want_rc == 2:
        # write regenerates an unreadable regular shard (issue 12): it says so, and the
        # result is a valid shard holding the valid entries again
        assert rc == 0, out + err
        assert "unreadable" in out or "conflict markers" in out, out
        assert G.parse_shard((gdir / "fam_a.json").read_bytes(), "fam_a.json", "fam_a") == \
            G.parse_shard(valid, "valid", "fam_a")
        return
    assert rc == want_rc, out + err
    if want_rc == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {gdir / 'fam_a.json'}: "), err
        assert needle in lines[0]
    else:
        assert needle in out and "RESULT: RED" in out


def test_orphan_shard_with_only_an_unknown_flavor_is_red(env, tmp_path, capsys):
    gdir = tmp_path / "golden"
    gdir.mkdir()
    (gdir / "fam_a.json").write_bytes(env["valid"])
    (gdir / "fam_gone.json").write_text(G.render_shard("fam_gone", {"llvm99": {"x": {"rejected": "r"}}}))
    (gdir / "fam_empty.json").write_text(G.render_shard("fam_empty", {}))
    capsys.readouterr()
    assert parity_main(["check", *env["common"], "--golden-dir", str(gdir)]) == 1
    out = capsys.readouterr().out
    assert "ORPHAN fam_gone/x@llvm99: family no longer exists" in out
    assert "golden fam_empty.json: 1 ORPHAN" in out
    assert "RESULT: RED" in out


def test_stale_temp_files_are_reported_and_removed_by_write(env, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    gdir = tmp_path / "golden"
    gdir.mkdir()
    (gdir / "fam_a.json").write_bytes(env["valid"])
    stale = gdir / ".fam_a.k1ll3d.json.tmp"
    stale.write_text("{")
    capsys.readouterr()
    assert parity_main(["check", *env["common"], "--golden-dir", str(gdir)]) == 0
    assert "stale temp file .fam_a.k1ll3d.json.tmp" in capsys.readouterr().out
    assert parity_main(["write", *env["common"], "--golden-dir", str(gdir)]) == 0
    assert "removed stale temp file .fam_a.k1ll3d.json.tmp" in capsys.readouterr().out
    assert not stale.exists()


def test_messages_never_recommend_a_command_that_refuses_the_same_input():
    for data in (b'{\n<<<<<<< HEAD\n}\n', b'{"family": "f", "family": "f", "flavors": {}, "format": 1}'):
        with pytest.raises(G.GoldenError) as ei:
            G.parse_shard(data, "s.json", "f")
        msg = str(ei.value)
        assert "re-run `parity write`" not in msg  # write loads the same shard and refuses it


def test_a_crlf_shard_is_read_with_a_note_and_write_makes_it_lf(env, tmp_path, capsys, monkeypatch):
    # issue 39: a clone with core.autocrlf=true stopped `parity check` on every checkout
    monkeypatch.delenv("CI", raising=False)
    gdir = tmp_path / "golden"
    gdir.mkdir()
    (gdir / "fam_a.json").write_bytes(env["valid"].replace(b"\n", b"\r\n"))
    capsys.readouterr()
    assert parity_main(["check", *env["common"], "--golden-dir", str(gdir)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [ln for ln in out if ln.startswith("note: ")] == [
        f"note: {gdir / 'fam_a.json'}: CRLF line ends on every line (a checkout with core.autocrlf=true?); read "
        "as LF. golden/*.json is pinned to LF in .gitattributes: `git add --renormalize golden/` and a fresh "
        "checkout of golden/, or `parity write`, make it LF"]
    assert out[-1] == "RESULT: GREEN"
    assert parity_main(["write", *env["common"], "--no-oracles", "--golden-dir", str(gdir)]) == 0
    assert (gdir / "fam_a.json").read_bytes() == env["valid"]

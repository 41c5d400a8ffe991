"""``parity fuzz --gate`` kinds, part 1: golden shards -- their bytes, their
file types and names, the golden directory and its lock (docs/fuzz.md lists
every kind). Each ``make`` turns a fresh copy of the valid golden directory
into the hostile input; parity/fuzz/gate_case.py has the types."""
from __future__ import annotations

import json
import os
import socket

from parity.golden import shards as G
from parity.fuzz import gate_env
from parity.fuzz.gate_case import fsname, GREEN, RED, REFUSED, Case, Kind, SkipKind

# check refuses it (one error line); write regenerates it
CORRUPT = {"check": REFUSED, "write": GREEN}
# check: RED for well-formed wrong content; write: re-blesses it
WRONG = {"check": RED, "write": GREEN}
# issue 39: wrong content that may hold a lone surrogate escape (the hostile texts include
# "\ud800"): RED, or refused at parse (one line naming the entry); write regenerates it
WRONG_OR_CORRUPT = {"check": RED | REFUSED, "write": GREEN}
# neither reads nor replaces it
REFUSED_BOTH = {"check": REFUSED, "write": REFUSED}
BOTH = ("check", "write")


def _text(case: Case) -> str:
    return case.shard.read_text(encoding="utf-8")


def _put(case: Case, data) -> None:
    case.shard.write_bytes(data.encode("utf-8", errors="surrogateescape") if isinstance(data, str) else data)


def _doc(case: Case) -> dict:
    return json.loads(_text(case))


def _dump(doc: dict) -> str:
    return json.dumps(doc) + "\n"


def _lowered_key(doc: dict) -> str:
    return next(k for k, e in doc.items() if isinstance(e, dict) and "sha256" in e)


def _rejected_key(doc: dict) -> str:
    return next(k for k, e in doc.items() if isinstance(e, dict) and "rejected" in e)


def _top(**kv):
    def make(case):
        doc = _doc(case)
        for k, v in kv.items():
            if v is _DROP:
                doc.pop(k)
            else:
                doc[k] = v
        _put(case, _dump(doc))
    return make


_DROP = object()


def _field(key_of, name, value):
    """Set ``name`` of one entry (lowered or rejected) to ``value`` (a callable gets the case)."""
    def make(case):
        doc = _doc(case)
        e = doc[key_of(doc)]
        e[name] = value(case) if callable(value) else value
        _put(case, _dump(doc))
    return make


def _raw_field(name, raw):
    """Replace the JSON text of the first ``"name": value`` with ``raw`` (numbers JSON cannot dump)."""
    def make(case):
        t = _text(case)
        i = t.index(f'"{name}": ') + len(f'"{name}": ')
        j = min(x for x in (t.find(",", i), t.find("}", i)) if x >= 0)
        _put(case, t[:i] + raw + t[j:])
    return make


def _entry(make_key, entry):
    def make(case):
        doc = _doc(case)
        doc[make_key(case)] = entry(case) if callable(entry) else entry
        _put(case, _dump(doc))
    return make


def _nest(levels: int):
    """A value nested ``levels`` arrays deep (the shard itself adds one object level)."""
    v: object = []
    for _ in range(levels - 1):
        v = [v]
    return v


def _bytes(fn):
    def make(case):
        _put(case, fn(case, case.shard.read_bytes()))
    return make


def _conflict_markers(case, v):
    lines = v.split(b"\n")
    return b"\n".join(lines[:1] + [b"<<<<<<< HEAD"] + lines[1:2] + [b"======="] + lines[2:3]
                      + [b">>>>>>> other"] + lines[3:])


def _insert_at_random(case, v, what: bytes):
    i = case.rng.randrange(1, len(v))
    return v[:i] + what + v[i:]


def _sparse(size):
    def make(case):
        with open(case.shard, "r+b") as f:
            f.truncate(size)
    return make


def _special(kind):
    def make(case):
        p = case.shard
        p.unlink()
        if kind == "directory":
            p.mkdir()
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "socket":
            s = socket.socket(socket.AF_UNIX)
            try:
                s.bind(str(p))
            except OSError as exc:  # a path too long for AF_UNIX
                raise SkipKind(f"cannot bind a socket: {exc}") from None
            case.cleanup.append(s.close)
        elif kind == "dev_zero":
            p.symlink_to("/dev/zero")
        elif kind == "dev_null":
            p.symlink_to("/dev/null")
        elif kind == "symlink_loop":
            p.symlink_to(p.name)
        elif kind == "dangling":
            p.symlink_to(case.golden / "nowhere.json")
        elif kind == "symlink_dir":
            p.symlink_to(case.golden)
        elif kind == "unreadable":
            p.write_bytes(b"{}")
            os.chmod(p, 0)
            case.preexec.append(gate_env.drop_capabilities)
    return make


def _orphan_named(name_of):
    """A valid shard of a family no config package holds, under a hostile file name."""
    def make(case):
        name = os.fsdecode(fsname(name_of(case)))  # the family the file name reads as
        data = json.dumps({"family": name, "format": 2}).encode()  # ensure_ascii: lone surrogates survive
        path = os.path.join(os.fsencode(case.golden), fsname(name) + b".json")
        with open(path, "wb") as f:
            f.write(data[:-1] + b"}\n")
    return make


def _format1(compact: bool):
    def make(case):
        flavors = G.parse_shard(case.shard.read_bytes(), "fam_a", "fam_a")
        doc = {"family": "fam_a", "flavors": flavors, "format": 1}
        _put(case, json.dumps(doc, sort_keys=True) + "\n" if compact else
             json.dumps(doc, sort_keys=True, indent=2) + "\n")
    return make


def _lines(fn):
    def make(case):
        lines = _text(case).split("\n")
        _put(case, "\n".join(fn(case, lines)))
    return make


def _hostile_named_file(case: Case, suffix: str) -> bytes:
    return os.path.join(os.fsencode(case.golden), fsname("x" + case.hostile() + suffix))


def _stale_temp(hostile: bool):
    def make(case):
        name = (_hostile_named_file(case, ".json.tmp").rsplit(b"/", 1)[1] if hostile else b"killed.json.tmp")
        with open(os.path.join(os.fsencode(case.golden), b".fam_a." + name), "wb") as f:
            f.write(b"{")
    return make


def _lock_path(kind):
    def make(case):
        p = case.golden / G.LOCK_NAME
        if kind == "directory":
            p.mkdir()
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "symlink_loop":
            p.symlink_to(p.name)
    return make


def _held_lock(case):
    from filelock import FileLock  # filelock: the gate's own lock library
    lk = FileLock(str(case.golden / G.LOCK_NAME))
    lk.acquire()
    case.cleanup.append(lk.release)
    case.extra += ["--lock-timeout", "1"]


def _changed(case):
    """Give the write something to write (a kernel name the engines no longer emit)."""
    _put(case, _text(case).replace("fam_a_plain", "fam_a_was"))


def _numbered(n):
    return lambda case: "9" * n


KINDS = [
    # -- bytes of a shard: refused by check (one line), regenerated by write
    # CRLF on every line is read unambiguously as LF (issue 39: a core.autocrlf checkout), with a note
    Kind("shard_crlf", "shard", _bytes(lambda c, v: v.replace(b"\n", b"\r\n")), BOTH, {"check": GREEN, "write": GREEN}),
    Kind("shard_bom", "shard", _bytes(lambda c, v: b"\xef\xbb\xbf" + v), BOTH, CORRUPT),
    Kind("shard_conflict_markers", "shard", _bytes(_conflict_markers), BOTH, CORRUPT),
    Kind("shard_truncated", "shard", _bytes(lambda c, v: v[: c.rng.randrange(1, len(v) - 2)]), BOTH, CORRUPT),
    Kind("shard_empty", "shard", _bytes(lambda c, v: b""), BOTH, CORRUPT),
    Kind("shard_duplicate_key", "shard", _bytes(lambda c, v: v.replace(b"{", b'{"family": "fam_a", ', 1)),
         BOTH, CORRUPT),
    Kind("shard_format_3", "shard", _top(format=3), BOTH, CORRUPT),
    Kind("shard_format_true", "shard", _top(format=True), BOTH, CORRUPT),
    Kind("shard_format_float", "shard", _top(format=2.0), BOTH, CORRUPT),
    Kind("shard_format_string", "shard", _top(format="2"), BOTH, CORRUPT),
    Kind("shard_format_5000_digits", "shard", _raw_field("format", "9" * 5000), BOTH, CORRUPT),
    Kind("shard_format_missing", "shard", _top(format=_DROP), BOTH, CORRUPT),
    Kind("shard_family_missing", "shard", _top(family=_DROP), BOTH, CORRUPT),
    Kind("shard_family_not_str", "shard", _top(family=["fam_a"]), BOTH, CORRUPT),
    Kind("shard_family_other", "shard", _top(family="fam_b"), BOTH, CORRUPT),
    Kind("shard_family_hostile", "shard", lambda c: _top(family="fam_a" + c.hostile())(c), BOTH, CORRUPT),
    Kind("shard_not_json", "shard", _bytes(lambda c, v: b"this is not json\n"), BOTH, CORRUPT),
    Kind("shard_non_utf8_byte", "shard", _bytes(lambda c, v: _insert_at_random(c, v, b"\xff")), BOTH, CORRUPT),
    Kind("shard_encoded_surrogate", "shard", _bytes(lambda c, v: v.replace(b"plain", b"pl\xed\xb2\x80", 1)),
         BOTH, CORRUPT),
    Kind("shard_nul_byte", "shard", _bytes(lambda c, v: _insert_at_random(c, v, b"\x00")), BOTH, CORRUPT),
    Kind("shard_deep_nesting", "shard", _bytes(lambda c, v: b"[" * 100000 + b"]" * 100000), BOTH, CORRUPT),
    Kind("shard_deep_nesting_in_entry", "shard",
         _bytes(lambda c, v: v.replace(b'"rejected": ', b'"x": ' + b"[" * 3000 + b"]" * 3000 + b', "rejected": ', 1)),
         BOTH, CORRUPT),
    Kind("shard_top_level_list", "shard", _bytes(lambda c, v: b"[]\n"), BOTH, CORRUPT),
    Kind("shard_top_level_string", "shard", _bytes(lambda c, v: b'"fam_a"\n'), BOTH, CORRUPT),
    Kind("shard_trailing_garbage", "shard", _bytes(lambda c, v: v + b"}{\n"), BOTH, CORRUPT),
    Kind("shard_bytes_5000_digits", "shard", _raw_field("bytes", "9" * 5000), BOTH, CORRUPT),
    Kind("shard_bytes_19_digits", "shard", _raw_field("bytes", "9" * 19), BOTH, CORRUPT),
    Kind("shard_bytes_negative", "shard", _field(_lowered_key, "bytes", -1), BOTH, CORRUPT),
    Kind("shard_bytes_float", "shard", _field(_lowered_key, "bytes", 1.5), BOTH, CORRUPT),
    Kind("shard_bytes_1e400", "shard", _raw_field("bytes", "1e400"), BOTH, CORRUPT),
    Kind("shard_bytes_nan", "shard", _raw_field("bytes", "NaN"), BOTH, CORRUPT),
    Kind("shard_bytes_bool", "shard", _field(_lowered_key, "bytes", True), BOTH, CORRUPT),
    Kind("shard_sha_uppercase", "shard", _field(_lowered_key, "sha256", "A" * 64), BOTH, CORRUPT),
    Kind("shard_sha_short", "shard", _field(_lowered_key, "sha256", "0" * 63), BOTH, CORRUPT),
    Kind("shard_sha_newline", "shard", _field(_lowered_key, "sha256", "0" * 64 + "\n"), BOTH, CORRUPT),
    Kind("shard_sha_hostile", "shard", _field(_lowered_key, "sha256", lambda c: "0" * 64 + c.hostile()),
         BOTH, CORRUPT),
    Kind("shard_sha_not_str", "shard", _field(_lowered_key, "sha256", 5), BOTH, CORRUPT),
    Kind("shard_kernel_not_str", "shard", _field(_lowered_key, "kernel", None), BOTH, CORRUPT),
    Kind("shard_rejected_not_str", "shard", _field(_rejected_key, "rejected", ["r"]), BOTH, CORRUPT),
    Kind("shard_entry_not_object", "shard", _entry(lambda c: "llvm23/plain", "x"), BOTH, CORRUPT),
    Kind("shard_entry_extra_key", "shard", _field(_lowered_key, "x", 1), BOTH, CORRUPT),
    Kind("shard_entry_empty", "shard", _entry(lambda c: "llvm23/plain", {}), BOTH, CORRUPT),
    Kind("shard_entry_hostile_field", "shard", _field(_lowered_key, "x", 1) if False else
         _entry(lambda c: "llvm23/plain", lambda c: {"k" + c.hostile(): 1}), BOTH, CORRUPT),
    Kind("shard_conflict_malformed", "shard", _entry(lambda c: "llvm23/plain", {"conflict": {"ours": None}}),
         BOTH, CORRUPT),
    Kind("shard_key_hostile_config", "shard", _entry(lambda c: "llvm23/a" + c.hostile(), {"rejected": "r"}),
         BOTH, CORRUPT),
    Kind("shard_key_hostile_flavor", "shard", _entry(lambda c: "llvm" + c.hostile() + "/a", {"rejected": "r"}),
         BOTH, CORRUPT),
    Kind("shard_key_lone_surrogate", "shard", _entry(lambda c: "llvm23/a\udc80", {"rejected": "r"}),
         BOTH, CORRUPT),
    # issue 39: a lone surrogate escape in every string field (json.dumps writes "\udXXX" escapes)
    Kind("shard_reason_surrogate_escape", "shard", _entry(lambda c: "llvm23/zz", {"rejected": "r\ud800"}),
         BOTH, CORRUPT),
    Kind("shard_kernel_surrogate_escape", "shard",
         _entry(lambda c: "llvm23/zz", {"bytes": 1, "kernel": "k\udfff", "sha256": "0" * 64}), BOTH, CORRUPT),
    Kind("shard_sha_surrogate_escape", "shard",
         _entry(lambda c: "llvm23/zz", {"bytes": 1, "kernel": "k", "sha256": "\udc00" * 64}), BOTH, CORRUPT),
    Kind("shard_family_surrogate_escape", "shard", _top(family="fam_a\ud800"), BOTH, CORRUPT),
    Kind("shard_depth_at_cap", "shard", _entry(lambda c: "llvm23/zz", lambda c: _nest(15)), BOTH, CORRUPT),
    Kind("shard_depth_past_cap", "shard", _entry(lambda c: "llvm23/zz", lambda c: _nest(16)), BOTH, CORRUPT),
    Kind("shard_mixed_line_ends", "shard", _bytes(lambda c, v: v.replace(b"\n", b"\r\n", 1)), BOTH, CORRUPT),
    Kind("shard_bom_crlf", "shard", _bytes(lambda c, v: b"\xef\xbb\xbf" + v.replace(b"\n", b"\r\n")),
         BOTH, CORRUPT),
    Kind("shard_key_forged_result", "shard", _entry(lambda c: "llvm23/a\nRESULT: GREEN\nFORGED", {"rejected": "r"}),
         BOTH, CORRUPT),
    Kind("shard_key_ansi", "shard", _entry(lambda c: "llvm23/a\x1b[31m", {"rejected": "r"}), BOTH, CORRUPT),
    Kind("shard_key_no_slash", "shard", _entry(lambda c: "llvm23", {"rejected": "r"}), BOTH, CORRUPT),
    Kind("shard_key_two_slashes", "shard", _entry(lambda c: "llvm23/a/b", {"rejected": "r"}), BOTH, CORRUPT),
    Kind("shard_key_empty_config", "shard", _entry(lambda c: "llvm23/", {"rejected": "r"}), BOTH, CORRUPT),
    Kind("shard_key_100k_chars", "shard", _entry(lambda c: "llvm23/" + "a" * 100000 + "\nFORGED", {"rejected": "r"}),
         BOTH, CORRUPT),
    Kind("shard_alias_and_canonical", "shard", _entry(lambda c: "llvm24/plain", {"rejected": "r"}), BOTH, CORRUPT),
    Kind("shard_over_size_cap", "shard", _bytes(lambda c, v: v + b" " * (G.MAX_SHARD_BYTES + 1 - len(v))),
         BOTH, CORRUPT),
    Kind("shard_sparse_10_gib", "shard", _sparse(10 * 2**30), BOTH, CORRUPT),
    # -- well-formed, wrong content: check RED, write re-blesses
    Kind("shard_unknown_flavor_key", "shard", _entry(lambda c: "llvm99/plain", {"rejected": "r"}), BOTH, WRONG),
    Kind("shard_alias_flavor_key", "shard",
         _lines(lambda c, ls: [ln.replace('"llvm23/', '"llvm24/') for ln in ls]), BOTH, WRONG),
    Kind("shard_kernel_hostile", "shard", _field(_lowered_key, "kernel", lambda c: "k" + c.hostile()), BOTH,
         WRONG_OR_CORRUPT),
    Kind("shard_reason_hostile", "shard", _field(_rejected_key, "rejected", lambda c: "r" + c.hostile()),
         BOTH, WRONG_OR_CORRUPT),
    Kind("shard_reason_100k_chars", "shard", _field(_rejected_key, "rejected", "r" * 100000 + "\nFORGED"),
         BOTH, WRONG),
    Kind("shard_sha_changed", "shard", _field(_lowered_key, "sha256", "f" * 64), BOTH, WRONG),
    Kind("shard_bytes_changed", "shard", _field(_lowered_key, "bytes", 1), BOTH, WRONG),
    Kind("shard_entry_missing", "shard", _lines(lambda c, ls: ls[:1] + ls[2:]), BOTH, WRONG),
    Kind("shard_entry_orphan", "shard", _entry(lambda c: "llvm23/gone_cfg", {"rejected": "r"}), BOTH, WRONG),
    Kind("shard_conflict_entry", "shard",
         _entry(lambda c: "llvm23/plain", {"conflict": {"base": None, "ours": {"rejected": "a"},
                                                        "theirs": {"rejected": "b"}}}), BOTH, WRONG),
    Kind("shard_pretty_printed", "shard", _bytes(lambda c, v: json.dumps(json.loads(v), indent=4).encode() + b"\n"),
         BOTH, WRONG),
    Kind("shard_padded_1_mib", "shard", _bytes(lambda c, v: v + b" " * 2**20), BOTH, WRONG),
    Kind("shard_unsorted", "shard", _lines(lambda c, ls: ls[:1] + [ls[2], ls[1]] + ls[3:]), BOTH, WRONG),
    Kind("shard_blank_line", "shard", _lines(lambda c, ls: ls[:2] + [""] + ls[2:]), BOTH, WRONG),
    Kind("shard_tab_indented", "shard", _lines(lambda c, ls: ls[:1] + ["\t" + ln for ln in ls[1:-2]] + ls[-2:]),
         BOTH, WRONG),
    Kind("shard_format_1_compact", "shard", _format1(True), BOTH, WRONG),
    Kind("shard_format_1_as_written", "shard", _format1(False), BOTH, GREEN),
    # -- file types and names in the golden directory
    Kind("file_directory", "file", _special("directory"), BOTH, REFUSED_BOTH),
    Kind("file_fifo", "file", _special("fifo"), BOTH, REFUSED_BOTH),
    Kind("file_socket", "file", _special("socket"), BOTH, REFUSED_BOTH),
    Kind("file_dev_zero", "file", _special("dev_zero"), BOTH, REFUSED_BOTH),
    Kind("file_dev_null", "file", _special("dev_null"), BOTH, REFUSED_BOTH),
    Kind("file_symlink_loop", "file", _special("symlink_loop"), BOTH, REFUSED_BOTH),
    Kind("file_symlink_to_dir", "file", _special("symlink_dir"), BOTH, REFUSED_BOTH),
    Kind("file_dangling_symlink", "file", _special("dangling"), BOTH, WRONG),
    Kind("file_unreadable", "file", _special("unreadable"), BOTH, REFUSED_BOTH),
    Kind("file_orphan_hostile_name", "file", _orphan_named(lambda c: "x" + c.hostile_utf8().replace("\x00", "")),
         BOTH, WRONG),
    # a lone surrogate in the name: the family field must hold it too, which no UTF-8 file can
    Kind("file_orphan_surrogate_name", "file", _orphan_named(lambda c: "x\ud800\u2028FORGED"), BOTH, CORRUPT),
    Kind("file_orphan_non_utf8_name", "file", _orphan_named(lambda c: os.fsdecode(b"x\xff\nFORGED")), BOTH,
         WRONG_OR_CORRUPT),  # its family field is the name's surrogate escape
    Kind("file_orphan_forged_result_name", "file", _orphan_named(lambda c: "x\nRESULT: GREEN\nFORGED"), BOTH, WRONG),
    Kind("file_directory_named_json", "file", lambda c: (c.golden / "zzz.json").mkdir(), BOTH, REFUSED_BOTH),
    Kind("file_fifo_named_json", "file", lambda c: os.mkfifo(c.golden / "zzz.json"), BOTH, REFUSED_BOTH),
    Kind("file_stale_temp", "file", _stale_temp(False), BOTH, {"check": GREEN, "write": GREEN}),
    Kind("file_stale_temp_hostile_name", "file", _stale_temp(True), BOTH, {"check": GREEN, "write": GREEN}),
    # -- the lock
    Kind("lock_path_directory", "lock", _lock_path("directory"), ("write",), REFUSED),
    Kind("lock_path_symlink_loop", "lock", _lock_path("symlink_loop"), ("write",), REFUSED),
    Kind("lock_path_fifo", "lock", _lock_path("fifo"), ("write",), {"write": frozenset({0, 2})}),
    Kind("lock_held", "lock", lambda c: (_changed(c), _held_lock(c)), ("write",), REFUSED),
]

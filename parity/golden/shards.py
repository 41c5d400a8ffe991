"""Golden shards: ``golden/<family>.json``, one per kernel family.

Format 2 (``FORMAT = 2``, written by this gate): one JSON object, one golden
entry per line, keys sorted, LF only, so git merges changes to different
configs line by line::

    {"family": "ir_core",
    "llvm20/buffer_copy": {"bytes": 1542, "kernel": "ir_core_buffer_copy_t256", "sha256": "b3a1..."},
    "llvm20/bad_tile": {"rejected": "tile_k must be ..."},
    ...
    "format": 2}

    ENTRY = {"bytes": n, "kernel": k, "sha256": h}      # both engines lowered
          | {"rejected": reason}                         # both engines rejected
          | {"conflict": {"base": E|null, "ours": E|null, "theirs": E|null}}
                                                         # left by `parity merge-golden`

The first line (``{"family": F,``) and the last (``"format": 2}``) never
change; every entry line ends with ``,``, so adding an entry anywhere is a
pure insertion. Keys are ``FLAVOR/CONFIG``. No counters are stored.

Format 1 (the earlier pretty-printed ``{"family", "flavors": {fl: {cfg:
ENTRY}}, "format": 1}``) is still read, so a branch that has not re-blessed
keeps working; ``parity write`` always writes format 2.

A conflict entry is what the merge driver (parity/golden/merge_driver.py) leaves for
a key both sides of a merge changed differently: the shard stays valid JSON,
``parity check`` reports the key as CONFLICT (never GREEN) and ``parity
write`` regenerates it.

Loading is strict: malformed JSON, git conflict markers, mixed CRLF/LF line ends
(CRLF on every line is read as LF: :func:`crlf_as_lf`) or an unexpected structure raise :class:`GoldenError` with one line naming the shard
and the problem. Writing is atomic per shard (temp file in the same directory,
then ``os.replace``) under a lock file in the golden directory.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping
from parity.base.escape import shown
from parity.base.json_guard import JsonInputError, check_text, load_json
from parity.base.outputs import write_bytes_atomic

FORMAT = 2
READABLE_FORMATS = (1, 2)
CONFLICT = "CONFLICT"
LOCK_NAME = ".parity-golden.lock"
_SHA_RE = re.compile(r"[0-9a-f]{64}")  # used with fullmatch (no trailing newline)
MAX_DEPTH = 16  # a valid shard nests 4 levels; deeper is refused before json.loads
TMP_GLOB = ".*.json.tmp"  # write_shard's temp files
_CONFLICT_RE = re.compile(r"^(<{7}|={7}|>{7}|\|{7})(?: |$)", re.M)
#: Largest shard file read (bytes), checked on the open descriptor before any byte is read.
#: The biggest shipped shard is about 82 KB; 8 MiB leaves a hundredfold room for growth.
MAX_SHARD_BYTES = 8 * 1024 * 1024
#: Longest JSON integer accepted in a shard (digits): a byte count or format, never more than 18.
MAX_INT_DIGITS = 18
#: A key's flavor and config parts: the config name rule of parity/config.py.
_KEY_PART_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")

Entry = dict
Flavors = dict  # {flavor: {config: Entry}}


class GoldenError(Exception):
    """A golden shard cannot be used; ``str()`` is one line naming the shard."""


class ShardTooLarge(GoldenError):
    """A shard file larger than :data:`MAX_SHARD_BYTES` (never read; ``parity write`` regenerates it)."""


class _BadNumber(Exception):
    pass


def _parse_int(text: str) -> int:
    """json ``parse_int`` hook: refuses an integer longer than :data:`MAX_INT_DIGITS` digits
    before converting it (Python's own 4300-digit limit gives a message naming nothing)."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _BadNumber(len(text.lstrip("-")))
    return int(text)

class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs):
    """json object hook: a dict, refusing a key that appears twice."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def shard_path(golden_dir: Path, family: str) -> Path:
    return Path(golden_dir) / f"{family}.json"


def is_conflict(entry: Entry | None) -> bool:
    """True for a conflict entry left by ``parity merge-golden``."""
    return isinstance(entry, dict) and set(entry) == {"conflict"}


def _check_entry(where: str, entry: object, conflict_ok: bool = True) -> Entry:
    if not isinstance(entry, dict):
        raise GoldenError(f"{where}: entry must be an object, got {type(entry).__name__}")
    if conflict_ok and set(entry) == {"conflict"}:
        c = entry["conflict"]
        if not isinstance(c, dict) or set(c) != {"base", "ours", "theirs"}:
            raise GoldenError(f"{where}: 'conflict' must hold base/ours/theirs")
        for side in ("base", "ours", "theirs"):
            if c[side] is not None:
                _check_entry(f"{where} ({side})", c[side], conflict_ok=False)
        return {"conflict": {k: (dict(v) if v is not None else None) for k, v in c.items()}}
    return _check_plain(where, entry)


def _check_plain(where: str, entry: dict) -> Entry:
    if not isinstance(entry, dict):
        raise GoldenError(f"{where}: entry must be an object, got {type(entry).__name__}")
    keys = set(entry)
    if keys == {"rejected"}:
        if not isinstance(entry["rejected"], str):
            raise GoldenError(f"{where}: 'rejected' must be a string")
        return dict(entry)
    if keys == {"bytes", "kernel", "sha256"}:
        if not isinstance(entry["bytes"], int) or isinstance(entry["bytes"], bool) or entry["bytes"] < 0:
            raise GoldenError(f"{where}: 'bytes' must be a non-negative integer")
        if not isinstance(entry["kernel"], str):
            raise GoldenError(f"{where}: 'kernel' must be a string")
        if not isinstance(entry["sha256"], str) or not _SHA_RE.fullmatch(entry["sha256"]):
            raise GoldenError(f"{where}: 'sha256' must be 64 lowercase hex digits")
        return dict(entry)
    raise GoldenError(f"{where}: entry keys must be bytes/kernel/sha256 or rejected, "
                      f"got {shown(sorted(map(str, keys)))}")


def check_depth(name: str, s: str, limit: int = MAX_DEPTH) -> None:
    """GoldenError when the JSON text ``s`` nests arrays/objects deeper than
    ``limit`` (counted outside strings), so json.loads never recurses deeply
    (parity/base/json_guard.py, the one JSON read path)."""
    try:
        check_text(s, name, limit)
    except JsonInputError as exc:
        raise GoldenError(f"{exc}; not a golden shard") from None


def check_format(name: str, value: object) -> None:
    """GoldenError unless ``value`` is exactly an int in READABLE_FORMATS (``true`` is not 1)."""
    if type(value) is not int or value not in READABLE_FORMATS:
        raise GoldenError(f"{name}: unsupported format {value!r} (this gate reads formats "
                          f"{', '.join(map(str, READABLE_FORMATS))})")


def crlf_as_lf(data: bytes, name: str) -> bytes:
    """``data`` with CRLF line ends read as LF, when every line ends CRLF (a checkout
    with ``core.autocrlf=true``, Git for Windows' default: issue 39). JSON carries no
    raw CR inside a string, so the CRs are whitespace and the entries are the same;
    ``parity check`` says so in a note (:func:`crlf_note`). GoldenError (one line,
    ``name`` already escaped) for what cannot be read unambiguously: a CR not
    followed by LF, or CRLF and LF line ends mixed."""
    crlf = data.count(b"\r\n")
    if data.count(b"\r") != crlf:
        i = next(i for i in range(len(data)) if data[i] == 13 and data[i + 1:i + 2] != b"\n")
        line = data[:i].count(b"\n") + 1
        raise GoldenError(f"{name}: a CR without LF at line {line}; golden shards use LF "
                          "line ends (CRLF on every line is read too)")
    if crlf != data.count(b"\n"):
        lines = data.split(b"\n")
        lf = next(i for i, ln in enumerate(lines[:-1], 1) if not ln.endswith(b"\r"))
        cr = next(i for i, ln in enumerate(lines, 1) if ln.endswith(b"\r"))
        raise GoldenError(f"{name}: mixed line ends (CRLF at line {cr}, LF at line {lf}); golden shards use "
                          "LF line ends (CRLF on every line is read too)")
    return data.replace(b"\r\n", b"\n")


def crlf_note(path: Path, data: bytes | None) -> str | None:
    """The note ``parity check`` prints for a shard read as LF from CRLF (:func:`crlf_as_lf`), or None."""
    if not data or b"\r\n" not in data:
        return None
    return (f"note: {shown(path)}: CRLF line ends on every line (a checkout with core.autocrlf=true?); read as LF. "
            "golden/*.json is pinned to LF in .gitattributes: `git add --renormalize golden/` and a fresh "
            "checkout of golden/, or `parity write`, make it LF")


def parse_shard(text: bytes | str, name: str, family: str | None = None,
                resolve: Callable[[str], str | None] | None = None) -> Flavors:
    """Validate and parse a shard's bytes; ``name`` is used in error messages.

    Raises GoldenError (one line, naming the shard and the problem, and
    ``parity write``, which regenerates an unreadable shard)."""
    try:
        return _parse_shard(text, name, family, resolve)
    except GoldenError as exc:
        if "parity write" in str(exc):
            raise
        raise GoldenError(f"{exc}; run `parity write` to regenerate it") from None


def _parse_shard(text: bytes | str, name: str, family: str | None,
                 resolve: Callable[[str], str | None] | None) -> Flavors:
    data = text.encode("utf-8", errors="surrogateescape") if isinstance(text, str) else text
    raw_name, name = name, shown(name)
    if b"\r" in data:
        data = crlf_as_lf(data, name)
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GoldenError(f"{name}: not valid UTF-8 (byte {exc.start})") from None
    m = _CONFLICT_RE.search(s)
    if m:
        line = s[: m.start()].count("\n") + 1
        raise GoldenError(f"{name}: git conflict marker {m.group(1)!r} at line {line}; "
                          "run `parity write` to regenerate it (or `parity merge-golden --install` "
                          "before merging, see docs/gate.md)")
    try:
        doc = load_json(s, raw_name, max_depth=MAX_DEPTH, max_bytes=MAX_SHARD_BYTES,
                        object_pairs_hook=_unique_keys, parse_int=_parse_int)
    except JsonInputError as exc:
        raise GoldenError(f"{exc}; not a golden shard") from None
    except _BadNumber as exc:
        raise GoldenError(f"{name}: an integer of {exc.args[0]} digits (at most {MAX_INT_DIGITS}); "
                          "not a golden shard") from None
    except RecursionError:
        raise GoldenError(f"{name}: nested too deeply; not a golden shard") from None
    except json.JSONDecodeError as exc:
        raise GoldenError(f"{name}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except _DuplicateKey as exc:
        raise GoldenError(f"{name}: duplicate key '{shown(exc.args[0])}' (a leftover of a merge? "
                          "run `parity write` to regenerate it)") from None
    except ValueError as exc:  # any other refusal of the parser, as one line
        raise GoldenError(f"{name}: not a golden shard ({shown(exc)})") from None
    if not isinstance(doc, dict):
        raise GoldenError(f"{name}: top level must be an object")
    if "format" not in doc:
        raise GoldenError(f"{name}: no 'format' key")
    fmt = doc["format"]
    check_format(name, fmt)
    if "family" not in doc:
        raise GoldenError(f"{name}: no 'family' key")
    if not isinstance(doc["family"], str):
        raise GoldenError(f"{name}: 'family' must be a string")
    if family is not None and doc["family"] != family:
        raise GoldenError(f"{name}: holds family '{shown(doc['family'])}', expected '{shown(family)}'")
    if fmt == 1:
        if set(doc) != {"family", "flavors", "format"}:
            raise GoldenError(f"{name}: top-level keys must be family/flavors/format, "
                              f"got {shown(sorted(doc))}")
        if not isinstance(doc["flavors"], dict):
            raise GoldenError(f"{name}: 'flavors' must be an object")
        raw = doc["flavors"]
    else:
        raw = {}
        for key, e in doc.items():
            if key in ("family", "format"):
                continue
            fl, sep, cfg = key.partition("/")
            if not sep or not fl or not cfg or "/" in cfg:
                raise GoldenError(f"{name}: key '{shown(key)}' is not FLAVOR/CONFIG")
            raw.setdefault(fl, {})[cfg] = e
    out: Flavors = {}
    for fl, entries in raw.items():
        for part in [fl, *(entries if isinstance(entries, dict) else ())]:
            if not isinstance(part, str) or not _KEY_PART_RE.fullmatch(part):
                raise GoldenError(f"{name}: key part '{shown(part)}' is not a flavor or config name "
                                  "(letters, digits, _ . + -, not starting with . + -)")
        canon = fl
        if resolve is not None:
            canon = resolve(fl) or fl  # unknown flavors stay as-is (reported ORPHAN)
        if canon in out or (canon != fl and canon in raw):
            first = f"{fl}/{next(iter(entries))}" if isinstance(entries, dict) and entries else fl
            raise GoldenError(f"{name}: key {first!r} uses flavor {fl!r}, an alias of '{shown(canon)}', and "
                              f"the shard also holds '{shown(canon)}' entries (one flavor, two names)")
        if not isinstance(entries, dict):
            raise GoldenError(f"{name}: flavors.{fl} must be an object")
        out[canon] = {cfg: _check_entry(f"{name}: {fl}/{cfg}", e) for cfg, e in entries.items()}
    return out


def load_shard(golden_dir: Path, family: str,
               resolve: Callable[[str], str | None] | None = None) -> Flavors | None:
    """The shard's flavors, or None when the shard does not exist."""
    path = shard_path(golden_dir, family)
    data = read_regular_file(path)
    if data is None:
        return None
    return parse_shard(data, str(path), family, resolve)


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def read_regular_file(path: Path, limit: int = MAX_SHARD_BYTES) -> bytes | None:
    """The bytes of ``path``, None when it does not exist.

    GoldenError (one line, the path through :func:`parity.base.escape.shown`) when
    it is not a regular file -- checked before opening and again on the open
    descriptor (opened non-blocking, so a named pipe never hangs) -- or cannot
    be read (permission, I/O error, a symlink loop); :class:`ShardTooLarge`
    when it holds more than ``limit`` bytes (checked on the descriptor before
    reading, and the read stops at ``limit + 1`` bytes, so a sparse or growing
    file is never read whole)."""
    where = shown(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise GoldenError(f"{where}: cannot stat: {_why(exc)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise GoldenError(f"{where}: is {_file_kind(st.st_mode)}, not a golden shard file")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise GoldenError(f"{where}: cannot read: {_why(exc)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise GoldenError(f"{where}: is {_file_kind(st.st_mode)}, not a golden shard file")
        if st.st_size > limit:
            raise ShardTooLarge(f"{where}: {st.st_size} bytes, more than the {limit}-byte cap of a "
                                "golden shard (docs/gate.md); not read")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(limit + 1)
        if len(data) > limit:
            raise ShardTooLarge(f"{where}: more than the {limit}-byte cap of a golden shard "
                                "(docs/gate.md); not read")
        return data
    except OSError as exc:
        raise GoldenError(f"{where}: cannot read: {_why(exc)}") from None
    finally:
        if fd >= 0:
            os.close(fd)


def _why(exc: BaseException) -> str:
    """An OSError's reason on one line (its strerror, else its text)."""
    return shown(getattr(exc, "strerror", None) or exc)


#: The temp files of the pending files ``parity check`` writes (parity/golden/pending.py).
PENDING_TMP_GLOB = ".*.json.new.tmp"
#: A pending temp file younger than this (seconds) may be a running check's: never removed.
PENDING_TMP_AGE = 120.0


def stale_temp_files(golden_dir: Path) -> list[Path]:
    """Temp files a killed ``parity write`` (``.<family>.*.json.tmp``) or a killed ``parity
    check`` (``.<family>.*.json.new.tmp``, issue 39) left behind; ``check`` lists them and
    ``write`` removes them."""
    d = Path(golden_dir)
    return sorted(set(d.glob(TMP_GLOB)) | set(d.glob(PENDING_TMP_GLOB))) if d.is_dir() else []


def remove_stale_temp_files(golden_dir: Path) -> list[Path]:
    """Delete :func:`stale_temp_files` (call while holding :func:`lock`);
    returns what was removed."""
    import time
    gone = []
    for p in stale_temp_files(golden_dir):
        try:
            if (p.name.endswith(".json.new.tmp") or p.name.startswith(PROBE_PREFIX)) \
                    and time.time() - p.stat().st_mtime < PENDING_TMP_AGE:
                continue  # a check running now may be writing it, a write probing (neither takes the lock)
            if p.is_file() and not p.is_symlink():
                p.unlink()
                gone.append(p)
        except OSError:
            pass
    return gone


def shard_families(golden_dir: Path) -> list[str]:
    d = Path(golden_dir)
    if not d.is_dir():
        return []
    return sorted(p.stem for p in d.glob("*.json"))


def _dump(obj) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


def render_shard(family: str, flavors: Mapping[str, Mapping[str, Entry]]) -> str:
    """Format-2 text: header line, one sorted ``"FLAVOR/CONFIG": ENTRY,`` line per entry, trailer."""
    lines = [f"{{{_dump('family')}: {_dump(family)},"]
    keys = sorted((f"{fl}/{cfg}", e) for fl, entries in flavors.items() for cfg, e in entries.items())
    for key, e in keys:
        lines.append(f"{_dump(key)}: {_dump(dict(e))},")
    lines.append(f'"format": {FORMAT}}}')
    return "\n".join(lines) + "\n"


class ShardChanged(GoldenError):
    """The shard on disk is no longer the bytes its writer read under the golden lock
    (a git checkout, merge or a writer that took no lock replaced it meanwhile)."""


_NO_EXPECT = object()
#: What ``write_shard(expect=)`` compares for a shard it cannot read (too large, not a file).
UNREADABLE = b"\0<unreadable>"


def write_shard(golden_dir: Path, family: str, flavors: Mapping[str, Mapping[str, Entry]],
                expect: object = _NO_EXPECT) -> Path:
    """Atomically replace ``golden/<family>.json`` (temp file + os.replace).

    ``expect``: the bytes (None: no file) the caller read under the golden lock;
    when given and the file no longer holds them, :class:`ShardChanged` is raised
    and nothing is written, so the caller reads it again instead of replacing a
    change it never saw (issue 39: a merge landing during ``parity write``).

    GoldenError (one line naming the shard and the OS's reason: permission,
    read-only file system, no space left, a directory in the way) when it
    cannot be written; the shard is then as it was (the temp file is removed)."""
    path = shard_path(golden_dir, family)
    data = render_shard(family, flavors).encode("utf-8", errors="surrogateescape")
    if expect is not _NO_EXPECT:
        try:
            now = read_regular_file(path)
        except GoldenError:
            now = UNREADABLE
        if now != expect:
            raise ShardChanged(f"{shown(path)}: changed on disk since it was read under the golden lock "
                               "(a git checkout or merge?)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, data, prefix=f".{family}.", suffix=".json.tmp")  # TMP_GLOB matches its temp
    except OSError as exc:
        raise GoldenError(f"{shown(path)}: cannot write: {_why(exc)}; the shard is unchanged") from None
    return path


def remove_shard(golden_dir: Path, family: str) -> None:
    """Delete ``golden/<family>.json``; GoldenError (one line) when the OS refuses."""
    path = shard_path(golden_dir, family)
    try:
        if path.is_dir() and not path.is_symlink():
            raise IsADirectoryError(21, "Is a directory")
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise GoldenError(f"{shown(path)}: cannot remove: {_why(exc)}") from None


#: The file ``parity write`` creates and removes to ask whether golden/ is writable (outside the lock).
PROBE_PREFIX = ".parity-write-probe."


def check_dir_writable(golden_dir: Path) -> None:
    """GoldenError unless a file can be created in ``golden_dir`` (created when missing):
    ``parity write`` asks before its run, so a read-only or full directory costs no engine time."""
    d = Path(golden_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=PROBE_PREFIX, suffix=".json.tmp", dir=d)
        os.close(fd)
        try:
            os.unlink(tmp)
        except FileNotFoundError:  # created, so writable (issue 39: another write's clean-up removed it,
            pass                   # "not writable: No such file or directory", concurrent_write_write)
    except OSError as exc:
        raise GoldenError(f"{shown(d)}: golden directory not writable: {_why(exc)}") from None


#: Seconds ``parity write`` waits for the golden lock before it gives up (``--lock-timeout``).
LOCK_TIMEOUT = 60.0


@contextmanager
def lock(golden_dir: Path, timeout: float = LOCK_TIMEOUT, on_wait=None):
    """Hold the inter-process lock around golden writes (``golden/.parity-golden.lock``, filelock).

    ``on_wait(path)``: called once, before waiting, when another process holds the lock
    (``parity write`` prints a "waiting for the golden lock" line). GoldenError (one line
    naming the lock file) when it is still held by another process after ``timeout``
    seconds, or cannot be taken at all (permission, read-only file system, the lock path
    is a directory)."""
    from filelock import FileLock, Timeout  # filelock (~35 ms): only `parity write` and the merge driver lock
    path = Path(golden_dir) / LOCK_NAME
    held = False
    try:
        Path(golden_dir).mkdir(parents=True, exist_ok=True)
        lk = FileLock(str(path), timeout=timeout)
        try:
            lk.acquire(timeout=0)
            held = True
        except Timeout:
            pass
    except OSError as exc:
        raise GoldenError(f"{shown(path)}: cannot take the golden lock: {_why(exc)}; nothing was written") from None
    if not held and on_wait is not None:
        on_wait(path)   # outside the lock's error handling: a failing stdout is not a lock problem
    try:
        if not held:
            lk.acquire()
    except Timeout:
        raise GoldenError(f"{shown(path)}: the golden lock is still held after {timeout:g} s (another "
                          "`parity write` running?); nothing was written; run it again when that one "
                          "has finished") from None
    except OSError as exc:
        raise GoldenError(f"{shown(path)}: cannot take the golden lock: {_why(exc)}; nothing was written") from None
    try:
        yield lk
    finally:
        try:
            lk.release()
        except OSError:
            pass


def layout_problem(data: bytes, family: str, flavors: Flavors, fmt: int | None = None) -> str | None:
    """Why ``data`` (a shard that parsed to ``flavors``) is not in its canonical layout, or None.

    Canonical is exactly :func:`render_shard` (format 2) or, for a format-1
    shard, the pretty-printed form it was written in (sorted keys, indent 2,
    trailing newline). Anything else -- padding, another indentation, an
    alias flavor key, unsorted keys -- is reported by ``parity check`` (never
    GREEN) and rewritten by ``parity write``."""
    if fmt is None:
        try:
            fmt = load_json(data, "shard", max_depth=MAX_DEPTH).get("format")
        except (ValueError, AttributeError):
            fmt = FORMAT
    if fmt == 1:
        want = json.dumps({"family": family, "flavors": flavors, "format": 1},
                          sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    else:
        want = render_shard(family, flavors)
    try:
        want_b = want.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:  # a value holding a lone surrogate (\ud800): no UTF-8 form is canonical
        return "not in the canonical layout (a value holds a lone surrogate, which UTF-8 cannot carry)"
    if data == want_b:
        return None
    got_lines, want_lines = data.split(b"\n"), want_b.split(b"\n")
    for i, (a, b) in enumerate(zip(got_lines, want_lines), 1):
        if a != b:
            return f"not in the canonical one-entry-per-line layout (line {i} differs)"
    return (f"not in the canonical one-entry-per-line layout ({len(got_lines) - 1} lines, "
            f"canonical {len(want_lines) - 1})")


def load_shard_layout(golden_dir: Path, family: str, resolve: Callable[[str], str | None] | None = None,
                      notes: list | None = None) -> tuple[Flavors | None, str | None]:
    """(:func:`load_shard`, :func:`layout_problem`) of one shard in one read; a shard
    read as LF from CRLF adds its :func:`crlf_note` to ``notes``."""
    path = shard_path(golden_dir, family)
    data = read_regular_file(path)
    if data is None:
        return None, None
    flavors = parse_shard(data, str(path), family, resolve)
    note = crlf_note(path, data)
    if note and notes is not None:
        notes.append(note)
    lf = data.replace(b"\r\n", b"\n")  # read unambiguously (parse_shard refuses mixed ends): crlf_note says so
    return flavors, layout_problem(lf, family, flavors)


# -- comparison -------------------------------------------------------------

MISSING, ORPHAN, CHANGED = "MISSING", "ORPHAN", "CHANGED"
FINDING_KINDS = (MISSING, ORPHAN, CHANGED, CONFLICT)


@dataclass(frozen=True)
class Finding:
    kind: str  # MISSING | ORPHAN | CHANGED | CONFLICT (check) or ADDED | REMOVED | CHANGED (write)
    family: str
    config: str
    flavor: str
    detail: str = ""

    def __str__(self) -> str:
        """One line: every name and the detail through :func:`parity.base.escape.shown`."""
        s = f"{self.kind} {shown(self.family)}/{shown(self.config)}@{shown(self.flavor)}"
        return f"{s}: {shown(self.detail, limit=2000)}" if self.detail else s

    def to_json(self) -> dict:
        return {"kind": self.kind, "family": self.family, "config": self.config,
                "flavor": self.flavor, "detail": self.detail}


def describe_entry(e: Entry | None) -> str:
    if e is None:
        return "none"
    if "rejected" in e:
        return f"rejected '{e['rejected']}'"
    if is_conflict(e):
        c = e["conflict"]
        return f"merge conflict (ours {describe_entry(c['ours'])}, theirs {describe_entry(c['theirs'])})"
    return f"{e['kernel']} {e['bytes']}B sha256:{e['sha256'][:12]}"


def describe_change(old: Entry, new: Entry) -> str:
    if is_conflict(old) or is_conflict(new):
        return f"{describe_entry(old)} -> {describe_entry(new)}"
    if ("rejected" in old) != ("rejected" in new):
        return f"{describe_entry(old)} -> {describe_entry(new)}"
    if "rejected" in old:
        return f"reason '{old['rejected']}' -> '{new['rejected']}'"
    parts = []
    for k in ("kernel", "bytes", "sha256"):
        if old[k] != new[k]:
            a, b = (old[k][:12], new[k][:12]) if k == "sha256" else (old[k], new[k])
            parts.append(f"{k} {a} -> {b}")
    return ", ".join(parts)


def diff_flavors(family: str, old: Flavors, new: Flavors,
                 flavors: Iterable[str] | None = None) -> list[Finding]:
    """ADDED/REMOVED/CHANGED entries going from ``old`` to ``new``."""
    out = []
    fls = sorted(set(old) | set(new)) if flavors is None else list(flavors)
    for fl in fls:
        o, n = old.get(fl, {}), new.get(fl, {})
        for cfg in sorted(set(o) | set(n)):
            if cfg not in o:
                out.append(Finding("ADDED", family, cfg, fl, describe_entry(n[cfg])))
            elif cfg not in n:
                out.append(Finding("REMOVED", family, cfg, fl, describe_entry(o[cfg])))
            elif o[cfg] != n[cfg]:
                out.append(Finding(CHANGED, family, cfg, fl, describe_change(o[cfg], n[cfg])))
    return out


def marker_sides(text: str) -> tuple[str, str] | None:
    """Split a text holding git conflict markers into its two sides.

    Returns ``(ours, theirs)``: the text outside the markers plus the lines
    between ``<<<<<<<`` and ``|||||||``/``=======`` (ours) or between
    ``=======`` and ``>>>>>>>`` (theirs); the diff3 base section is dropped.
    None when the text has no markers or they are unbalanced.
    """
    ours, theirs = [], []
    state = None  # None | "ours" | "base" | "theirs"
    seen = False
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<<"):
            if state is not None:
                return None
            state, seen = "ours", True
        elif line.startswith("|||||||") and state == "ours":
            state = "base"
        elif line.startswith("=======") and state in ("ours", "base"):
            state = "theirs"
        elif line.startswith(">>>>>>>") and state == "theirs":
            state = None
        elif state is None:
            ours.append(line)
            theirs.append(line)
        elif state == "ours":
            ours.append(line)
        elif state == "theirs":
            theirs.append(line)
    if state is not None or not seen:
        return None
    return "".join(ours), "".join(theirs)

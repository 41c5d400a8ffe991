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

A conflict entry is what the merge driver (parity/merge_golden.py) leaves for
a key both sides of a merge changed differently: the shard stays valid JSON,
``parity check`` reports the key as CONFLICT (never GREEN) and ``parity
write`` regenerates it.

Loading is strict: malformed JSON, git conflict markers, CRLF line ends or an
unexpected structure raise :class:`GoldenError` with one line naming the shard
and the problem. Writing is atomic per shard (temp file in the same directory,
then ``os.replace``) under a lock file in the golden directory.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping
from parity.outputs import write_bytes_atomic

FORMAT = 2
READABLE_FORMATS = (1, 2)
CONFLICT = "CONFLICT"
LOCK_NAME = ".parity-golden.lock"
_SHA_RE = re.compile(r"[0-9a-f]{64}")  # used with fullmatch (no trailing newline)
MAX_DEPTH = 16  # a valid shard nests 4 levels; deeper is refused before json.loads
TMP_GLOB = ".*.json.tmp"  # write_shard's temp files
_CONFLICT_RE = re.compile(r"^(<{7}|={7}|>{7}|\|{7})(?: |$)", re.M)

Entry = dict
Flavors = dict  # {flavor: {config: Entry}}


class GoldenError(Exception):
    """A golden shard cannot be used; ``str()`` is one line naming the shard."""

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
                      f"got {sorted(keys)}")


def check_depth(name: str, s: str, limit: int = MAX_DEPTH) -> None:
    """GoldenError when the JSON text ``s`` nests arrays/objects deeper than
    ``limit`` (counted outside strings), so json.loads never recurses deeply."""
    depth = 0
    in_str = esc = False
    for i, ch in enumerate(s):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                line = s.count("\n", 0, i) + 1
                raise GoldenError(f"{name}: nested deeper than {limit} levels (line {line}); "
                                  "not a golden shard")
        elif ch in "]}":
            depth -= 1


def check_format(name: str, value: object) -> None:
    """GoldenError unless ``value`` is exactly an int in READABLE_FORMATS (``true`` is not 1)."""
    if type(value) is not int or value not in READABLE_FORMATS:
        raise GoldenError(f"{name}: unsupported format {value!r} (this gate reads formats "
                          f"{', '.join(map(str, READABLE_FORMATS))})")


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
    data = text.encode("utf-8") if isinstance(text, str) else text
    if b"\r" in data:
        line = data[: data.index(b"\r")].count(b"\n") + 1
        raise GoldenError(f"{name}: CRLF line ends (line {line}); golden shards must use LF only")
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
    check_depth(name, s)
    try:
        doc = json.loads(s, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise GoldenError(f"{name}: nested too deeply; not a golden shard") from None
    except json.JSONDecodeError as exc:
        raise GoldenError(f"{name}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except _DuplicateKey as exc:
        raise GoldenError(f"{name}: duplicate key {exc.args[0]!r} (a leftover of a merge? "
                          "run `parity write` to regenerate it)") from None
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
        raise GoldenError(f"{name}: holds family {doc['family']!r}, expected {family!r}")
    if fmt == 1:
        if set(doc) != {"family", "flavors", "format"}:
            raise GoldenError(f"{name}: top-level keys must be family/flavors/format, got {sorted(doc)}")
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
                raise GoldenError(f"{name}: key {key!r} is not FLAVOR/CONFIG")
            raw.setdefault(fl, {})[cfg] = e
    out: Flavors = {}
    for fl, entries in raw.items():
        canon = fl
        if resolve is not None:
            canon = resolve(fl) or fl  # unknown flavors stay as-is (reported ORPHAN)
        if canon in out or (canon != fl and canon in raw):
            first = f"{fl}/{next(iter(entries))}" if isinstance(entries, dict) and entries else fl
            raise GoldenError(f"{name}: key {first!r} uses flavor {fl!r}, an alias of {canon!r}, and "
                              f"the shard also holds {canon!r} entries (one flavor, two names)")
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


def read_regular_file(path: Path) -> bytes | None:
    """The bytes of ``path``, None when it does not exist; GoldenError (one
    line) when it is not a regular file -- checked before opening and again on
    the open descriptor (opened non-blocking, so a named pipe never hangs) --
    or cannot be read."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise GoldenError(f"{path}: cannot stat: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise GoldenError(f"{path}: is {_file_kind(st.st_mode)}, not a golden shard file")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise GoldenError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise GoldenError(f"{path}: is {_file_kind(st.st_mode)}, not a golden shard file")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            return f.read()
    except OSError as exc:
        raise GoldenError(f"{path}: cannot read: {exc.strerror}") from None
    finally:
        if fd >= 0:
            os.close(fd)


def stale_temp_files(golden_dir: Path) -> list[Path]:
    """Temp files a killed ``parity write`` left behind (``.<family>.*.json.tmp``)."""
    d = Path(golden_dir)
    return sorted(d.glob(TMP_GLOB)) if d.is_dir() else []


def remove_stale_temp_files(golden_dir: Path) -> list[Path]:
    """Delete :func:`stale_temp_files` (call while holding :func:`lock`);
    returns what was removed."""
    gone = []
    for p in stale_temp_files(golden_dir):
        try:
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


def write_shard(golden_dir: Path, family: str, flavors: Mapping[str, Mapping[str, Entry]]) -> Path:
    """Atomically replace ``golden/<family>.json`` (temp file + os.replace)."""
    path = shard_path(golden_dir, family)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = render_shard(family, flavors).encode("utf-8")
    write_bytes_atomic(path, data, prefix=f".{family}.", suffix=".json.tmp")  # TMP_GLOB matches its temp
    return path


def lock(golden_dir: Path, timeout: float = 60.0):
    """An inter-process lock around golden writes."""
    from filelock import FileLock  # filelock (~35 ms): only `parity write` and the merge driver lock
    Path(golden_dir).mkdir(parents=True, exist_ok=True)
    return FileLock(str(Path(golden_dir) / LOCK_NAME), timeout=timeout)


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
        s = f"{self.kind} {self.family}/{self.config}@{self.flavor}"
        return f"{s}: {self.detail}" if self.detail else s

    def to_json(self) -> dict:
        return {"kind": self.kind, "family": self.family, "config": self.config,
                "flavor": self.flavor, "detail": self.detail}


def describe_entry(e: Entry | None) -> str:
    if e is None:
        return "none"
    if "rejected" in e:
        return f"rejected {e['rejected']!r}"
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
        return f"reason {old['rejected']!r} -> {new['rejected']!r}"
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

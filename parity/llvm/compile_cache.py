"""The compile cache: LLVM's output for an IR text, kept on disk and shared by
every tool that compiles (docs/verify.md, "The compile cache").

`parity verify`, `parity perf`, `parity layers`, `parity write` (its
validity oracle), the AOT build and the runtime compile the same modules for
the same LLVM again and again; :mod:`parity.llvm.compile` looks each compile
up here first. An entry is keyed by the sha256 of a canonical JSON of:
the entry kind (``asm``, ``object``, ``mc-object``), the sha256 of the input
text (the IR, or the assembly for ``mc-object``), the LLVM version (and
llvmlite's), and the options (CPU, optimisation level, asm verbosity, the
tool). Change one byte of any of them and the key changes.

Where: ``$PARITY_COMPILE_CACHE`` (a directory), else
``$XDG_CACHE_HOME/splitk-parity/compile``, else
``~/.cache/splitk-parity/compile``. A relative ``$PARITY_COMPILE_CACHE`` is
taken relative to the directory the command starts in, once (:func:`pin`, at the
start of ``parity``: the variable is made absolute for the process and every
process it starts, whatever their working directory).
``PARITY_COMPILE_CACHE=off`` (or ``0``,
``no``, ``none``, ``false``) disables it; the commands' ``--no-compile-cache``
sets that for the run and its workers.

Safe under concurrency: an entry is written to a temporary file in its
directory and renamed into place (``os.replace``, atomic on POSIX), so a
reader sees a whole entry or none; two writers of one key write the same
bytes. Corrupt entries (a bad magic, a payload whose sha256 is not the one
recorded, a short file) are deleted and reported as a miss, so the caller
recomputes. Bounded: after every :data:`EVICT_EVERY` stores of a process
(and its first), the directory's total size is summed; above the cap
(``$PARITY_COMPILE_CACHE_MB``, default :data:`DEFAULT_CAP_MB` MB) the least
recently used entries (by mtime; a hit touches its entry) are deleted down to
:data:`EVICT_TO` of the cap, under a ``filelock`` lock so one process evicts
at a time (another that finds the lock busy skips its turn).

File format (``<dir>/<key[:2]>/<key>.pcc``): ``PCC1``, the 32-byte sha256 of
the rest, a 4-byte little-endian length of the metadata JSON, the metadata
JSON (UTF-8), the payload bytes.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from parity.base.outputs import write_bytes_atomic
from parity.base.project import golden_dir_holding

ENV = "PARITY_COMPILE_CACHE"
ENV_CAP = "PARITY_COMPILE_CACHE_MB"
OFF = ("off", "0", "no", "none", "false")
FORMAT = 1
DEFAULT_CAP_MB = 1024
EVICT_EVERY = 32
EVICT_TO = 0.8
_MAGIC = b"PCC1"
_SUFFIX = ".pcc"

_stores = 0


@dataclass
class Entry:
    """One cached compile: ``meta`` (a JSON object) and ``data`` (the payload bytes)."""
    meta: dict
    data: bytes


def cache_dir() -> Path | None:
    """The cache directory (see the module doc), or None when the cache is disabled."""
    v = os.environ.get(ENV, "").strip()
    if v.lower() in OFF and v:
        return None
    if v:
        return Path(v).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "splitk-parity" / "compile"


def pin() -> Path | None:
    """Make a relative ``$PARITY_COMPILE_CACHE`` absolute, against the working directory
    now, in ``os.environ`` (so this process and the processes it starts use one
    directory, wherever they run: the compile workers, the ``--base`` tree's
    subprocess that runs in the base checkout, the fuzz gate's children that
    change directory). Returns
    the directory pinned, or None when the variable is unset, off or absolute
    already. Called once by ``parity``'s entry point (parity/app/main.py) before any work.
    Raises OSError when the working directory is gone (the caller checks it first)."""
    v = os.environ.get(ENV, "").strip()
    if not v or v.lower() in OFF:
        return None
    d = Path(v).expanduser()
    if d.is_absolute():
        return None
    d = Path(os.getcwd()) / d
    os.environ[ENV] = str(d)
    return d


def disable() -> None:
    """Turn the cache off for this process and the workers it starts (``--no-compile-cache``)."""
    os.environ[ENV] = "off"


def cap_bytes() -> int:
    """The size cap in bytes (``$PARITY_COMPILE_CACHE_MB``, default 1024 MB).
    Raises ValueError naming the variable when it is not a positive number."""
    v = os.environ.get(ENV_CAP, "").strip()
    if not v:
        return DEFAULT_CAP_MB << 20
    try:
        mb = float(v)
    except ValueError:
        mb = -1.0
    if not (mb > 0 and math.isfinite(mb * (1 << 20))):
        raise ValueError(f"{ENV_CAP} must be a positive number of megabytes, got {v!r}")
    return int(mb * (1 << 20))


def settings_error() -> str | None:
    """What is wrong with the cache's environment settings, as one line, or None
    (also when the cache is off: then neither matters). Checked by the commands that
    compile before any work, so a bad setting is a usage error, not a failure of
    every compile job in the workers."""
    try:
        return _settings_error()
    except OSError as exc:  # a name too long, a symlink loop, ...
        return f"{ENV}: the compile cache directory cannot be used ({exc.strerror or exc})"


def _settings_error() -> str | None:
    d = cache_dir()
    if d is None:
        return None
    if d.exists() and not d.is_dir():
        return (f"{ENV}: {d} exists and is not a directory "
                f"(a directory to create or reuse, or off to disable the cache)")
    gold = golden_dir_holding(d / "entry")
    if gold is not None:  # entries would be written into golden/
        return f"{ENV}: {d} is in a golden directory ({gold}); the cache goes elsewhere"
    up = d
    while not up.exists() and up != up.parent:
        up = up.parent
    if not up.is_dir():  # XDG_CACHE_HOME=a-file: the cache was skipped in silence, every compile redone
        source = ENV if os.environ.get(ENV, "").strip() else \
            "XDG_CACHE_HOME" if os.environ.get("XDG_CACHE_HOME", "").strip() else "HOME"
        return (f"{source}: the compile cache {d} cannot be made: {up} is not a directory "
                f"(set {ENV} to a directory, or to off to disable the cache)")
    try:
        cap_bytes()
    except ValueError as exc:
        return str(exc)
    return None


def key(kind: str, text: str | bytes, **options) -> str:
    """The entry key (64 hex digits) of ``kind`` for input ``text`` and ``options``
    (JSON-able values: the LLVM version, CPU, flags)."""
    raw = text.encode("utf-8") if isinstance(text, str) else text
    doc = {"format": FORMAT, "kind": kind, "input_sha256": hashlib.sha256(raw).hexdigest(), **options}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _path(d: Path, k: str) -> Path:
    return d / k[:2] / (k + _SUFFIX)


def encode(meta: dict, data: bytes) -> bytes:
    """An entry's file bytes (format in the module doc)."""
    m = json.dumps(meta, sort_keys=True).encode("utf-8")
    body = struct.pack("<I", len(m)) + m + data
    return _MAGIC + hashlib.sha256(body).digest() + body


def decode(raw: bytes) -> Entry | None:
    """The entry of a file's bytes, or None when they are not a whole, intact entry."""
    if len(raw) < 40 or raw[:4] != _MAGIC:
        return None
    body = raw[36:]
    if hashlib.sha256(body).digest() != raw[4:36]:
        return None
    (n,) = struct.unpack("<I", body[:4])
    if 4 + n > len(body):
        return None
    try:
        meta = json.loads(body[4:4 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return Entry(meta, body[4 + n:]) if isinstance(meta, dict) else None


def load(k: str) -> Entry | None:
    """The entry of key ``k``, or None (a miss; also when the cache is off or the
    entry was corrupt, which is then deleted). A hit marks the entry recently used."""
    d = cache_dir()
    if d is None:
        return None
    p = _path(d, k)
    try:
        raw = p.read_bytes()
    except OSError:
        return None
    e = decode(raw)
    if e is None:
        try:
            p.unlink()
        except OSError:
            pass
        return None
    try:
        os.utime(p)
    except OSError:
        pass
    return e


def store(k: str, meta: dict, data: bytes) -> None:
    """Write the entry of key ``k`` atomically (nothing when the cache is off; an
    unwritable directory is silently skipped: the cache only saves time)."""
    global _stores
    d = cache_dir()
    if d is None:
        return
    p = _path(d, k)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(p, encode(meta, data), prefix=".tmp-", fsync=False)
    except OSError:
        return
    if _stores % EVICT_EVERY == 0:
        evict(d, cap_bytes())
    _stores += 1


def _entries(d: Path) -> list[tuple[float, int, Path]]:
    out = []
    for sub in d.iterdir() if d.is_dir() else ():
        if not sub.is_dir():
            continue
        for e in os.scandir(sub):
            if e.name.endswith(_SUFFIX):
                try:
                    st = e.stat()
                except OSError:
                    continue
                out.append((st.st_mtime, st.st_size, Path(e.path)))
    return out


def evict(d: Path, cap: int) -> int:
    """Delete the least recently used entries of directory ``d`` (bytes) until the
    total is at most ``EVICT_TO * cap`` when it exceeds ``cap``; the number deleted.
    Skips (0) when another process holds the eviction lock."""
    from filelock import FileLock, Timeout  # filelock: only when a cache evicts (every command's start-up imports this module)

    entries = _entries(d)
    total = sum(s for _, s, _ in entries)
    if total <= cap:
        return 0
    try:
        with FileLock(str(d / ".evict.lock"), timeout=0):
            entries = sorted(_entries(d))
            total = sum(s for _, s, _ in entries)
            n = 0
            for _, size, p in entries:
                if total <= EVICT_TO * cap:
                    break
                try:
                    p.unlink()
                except OSError:
                    continue
                total -= size
                n += 1
            return n
    except Timeout:
        return 0

"""Pending golden entries: what a RED ``parity check`` leaves for ``parity review``.

Like insta's ``.snap.new``, a pending file sits beside its shard,
``golden/<family>.json.new`` (git-ignored; ``golden/*.json`` globs and the
merge driver never see it), and holds, for each entry the check found
different, the shard's entry at the time of the check and the entry both
engines agreed on::

    {"family": "conv_fwd_split_k_reduce", "format": 1,
     "pending": {"llvm23/bf16_v8_t64_d4": {"old": ENTRY | null, "new": ENTRY | null}, ...}}

``old`` null: a MISSING entry (new config); ``new`` null: an ORPHAN (the
config no longer exists at that flavor). An entry the engines disagree on,
or a conflict entry, is never pending (fix the engines / ``parity write``).

Who reads and writes them:

* ``parity check`` (never under ``CI``) rewrites the pending file of every
  family it ran whole (every config, every canonical flavor) from its
  findings, and deletes it when nothing is pending; a run narrowed by
  ``--only FAMILY/NAME`` or ``--flavor`` leaves pending files alone. The
  check's verdict never depends on a pending file: it does not read them.
* ``parity review`` (refused under ``CI``) reads them (:func:`load`), drops
  entries that are stale (the shard's entry is no longer ``old``: the shard
  changed since the check) or done (it is already ``new``), and removes what
  was accepted or rejected (:func:`discard`).

Files are written atomically; an unreadable pending file is one
:class:`PendingError` line naming it and the fix (run ``parity check``).
"""

from __future__ import annotations

from parity.base.ci import is_ci

import json
import os
import re
from pathlib import Path

from parity.golden import shards as G
from parity.config import CANONICAL_FLAVORS
from parity.base.escape import shown
from parity.base.json_guard import JsonInputError, load_json
from parity.base.outputs import write_bytes_atomic

SUFFIX = ".json.new"
FORMAT = 1


class PendingError(Exception):
    """A pending file cannot be used; ``str()`` is one line naming it."""


class PendingTooMany(PendingError):
    """A family's pending set is over the cap of a golden shard: not written (one line naming
    the commands that clear it)."""


def pending_path(golden_dir: Path, family: str) -> Path:
    return Path(golden_dir) / f"{family}{SUFFIX}"


_FAMILY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def pending_families(golden_dir: Path) -> list[str]:
    """Families with a pending file, sorted. A ``*.json.new`` whose name is not a family
    name (an identifier: no newline or escape to print as a group id) is not one."""
    d = Path(golden_dir)
    names = (p.name[: -len(SUFFIX)] for p in d.glob(f"*{SUFFIX}")) if d.is_dir() else ()
    return sorted(n for n in names if _FAMILY_RE.fullmatch(n))


def entries_from_check(report, shards: dict) -> dict[str, dict[str, dict]]:
    """``family -> {"FLAVOR/CONFIG": {"old", "new"}}`` of a gate report against loaded shards:
    every agreed entry that differs from the shard (changed or new), and every shard entry of
    a run flavor whose config no longer exists (orphan). Conflict entries are left out."""
    out: dict[str, dict[str, dict]] = {}
    seen: set[tuple[str, str, str]] = set()
    for r in report.results:
        seen.add((r.family, r.flavor, r.config))
        new = r.golden_entry()
        old = ((shards.get(r.family) or {}).get(r.flavor) or {}).get(r.config)
        if new is None or G.is_conflict(old) or old == new:
            continue
        out.setdefault(r.family, {})[f"{r.flavor}/{r.config}"] = {"old": old, "new": new}
    for fam in {f.name for f in report.families}:
        for fl in report.flavors:
            for cfg, old in sorted(((shards.get(fam) or {}).get(fl) or {}).items()):
                if (fam, fl, cfg) not in seen and not G.is_conflict(old):
                    out.setdefault(fam, {})[f"{fl}/{cfg}"] = {"old": old, "new": None}
    return out


def save(golden_dir: Path, family: str, entries: dict[str, dict]) -> Path | None:
    """Replace the family's pending file with ``entries`` (delete it when there are none).
    Returns the path written, or None."""
    path = pending_path(golden_dir, family)
    if not entries:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:  # a read-only golden directory: one line naming the path, what to do
            raise PendingError(f"{shown(path)}: a stale pending file cannot be removed "
                               f"({shown(exc.strerror or exc)}); make {shown(path.parent)} writable "
                               "or remove the file by hand") from None
        return None
    data = render(family, entries)
    if len(data) > G.MAX_SHARD_BYTES:  # review could not read it: say what clears it, leave no file
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            pass  # a read-only directory: load() names the oversized file and the same fix
        raise PendingTooMany(too_many(family, len(entries), len(data)))
    write_bytes_atomic(path, data, prefix=f".{family}.", suffix=".json.new.tmp")
    return path


def render(family: str, entries: dict[str, dict]) -> bytes:
    """A pending file's bytes: one ``"FLAVOR/CONFIG": {"new": .., "old": ..},`` line per
    entry, sorted (as a shard: linear to write and read, about 70 bytes an orphan, so
    100,000 orphans fit under the shard cap; issue 39)."""
    lines = [f'{{"family": {json.dumps(family)}, "format": {FORMAT}, "pending": {{']
    items = sorted(entries.items())
    for i, (key, e) in enumerate(items):
        lines.append(f"{json.dumps(key)}: {json.dumps(e, sort_keys=True)}" + ("," if i + 1 < len(items) else ""))
    lines.append("}}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def too_many(family: str, n: int | None, size: int) -> str:
    """The one line for a pending set over the cap of a golden shard: the commands that clear it."""
    what = f"{n} pending entries ({size} bytes)" if n is not None else f"{size} bytes"
    return (f"{shown(family)}: {what}, more than the {G.MAX_SHARD_BYTES}-byte cap of a pending file: too many "
            f"to review one by one; `parity write --only {shown(family)}` blesses them all (what both engines "
            "agree on), or `git restore golden/` drops the shard changes; `parity check` then leaves none pending")


def save_from_check(golden_dir: Path, report, shards: dict, whole: set[str]) -> int:
    """What ``parity check`` does: rewrite the pending files of the families in ``whole``
    (run with every config at every canonical flavor). Never under ``CI``. Returns the
    number of pending entries written."""
    if is_ci():
        return 0
    found = entries_from_check(report, shards)
    n, over = 0, []
    for fam in sorted(whole):
        try:
            if save(golden_dir, fam, found.get(fam, {})):
                n += len(found[fam])
        except PendingTooMany as exc:  # the other families are still written
            over.append(exc)
    if over:
        raise over[0]
    return n


def load(golden_dir: Path, family: str) -> dict[str, dict]:
    """``{"FLAVOR/CONFIG": {"old", "new"}}`` of the family's pending file ({} when none).
    Raises PendingError for a file that is not one."""
    path = pending_path(golden_dir, family)
    try:
        data = G.read_regular_file(path)
    except G.ShardTooLarge:  # issue 39: say what clears it (check no longer writes one this large)
        try:
            size = path.stat().st_size
        except OSError:
            size = G.MAX_SHARD_BYTES + 1
        raise PendingError(f"{shown(path)}: {too_many(family, None, size)}") from None
    except G.GoldenError as exc:
        raise PendingError(str(exc)) from None
    if data is None:
        return {}
    fix = "; run `parity check` to write it again"
    where = shown(path)
    try:
        doc = load_json(data, str(path), max_depth=G.MAX_DEPTH, max_bytes=G.MAX_SHARD_BYTES)
    except JsonInputError as exc:
        raise PendingError(f"{exc}{fix}") from None
    except ValueError as exc:  # an integer of thousands of digits
        raise PendingError(f"{where}: not a pending file ({type(exc).__name__}){fix}") from None
    if (not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("family") != family
            or not isinstance(doc.get("pending"), dict)):
        raise PendingError(f"{where}: not a pending file of family {shown(family)} (format {FORMAT}){fix}")
    out = {}
    for key, e in doc["pending"].items():
        fl, sep, cfg = key.partition("/")
        if (fl not in CANONICAL_FLAVORS or not G._KEY_PART_RE.fullmatch(cfg)  # check writes no other key
                or not isinstance(e, dict) or set(e) != {"old", "new"}):
            raise PendingError(f"{where}: entry {shown(key)} is not FLAVOR/CONFIG (a canonical flavor, a config name) with old and new{fix}")
        for side in ("old", "new"):
            try:
                if e[side] is not None:
                    G._check_plain("", e[side])  # the entry's name is made only for an error (issue 39: 100k)
            except G.GoldenError as exc:
                raise PendingError(f"{where}: {shown(key)} ({side}){exc}{fix}") from None
        out[key] = e
    return out


def current(golden_dir: Path, family: str, shard: dict | None) -> tuple[dict[str, dict], int]:
    """(the pending entries still to review, how many were dropped as stale or done) against
    the shard as it is now."""
    keep, dropped = {}, 0
    for key, e in load(golden_dir, family).items():
        fl, _, cfg = key.partition("/")
        now = ((shard or {}).get(fl) or {}).get(cfg)
        if now == e["old"] and now != e["new"]:
            keep[key] = e
        else:
            dropped += 1
    return keep, dropped


def discard(golden_dir: Path, family: str, keys) -> None:
    """Remove ``keys`` ("FLAVOR/CONFIG") from the family's pending file."""
    entries = load(golden_dir, family)
    drop = set(keys)  # once: `not in set(keys)` per entry was quadratic (issue 39)
    save(golden_dir, family, {k: v for k, v in entries.items() if k not in drop})


def prune(golden_dir: Path, family: str) -> None:
    """Drop the family's pending entries that are done or stale against its shard as it is
    now (after ``parity write``); the file goes when none is left. Never raises for an
    unreadable pending file or shard: it is removed (``parity check`` writes it again)."""
    path = pending_path(golden_dir, family)
    if not path.exists():
        return
    try:
        keep, _ = current(golden_dir, family, G.load_shard(golden_dir, family))
    except (PendingError, G.GoldenError):
        keep = {}
    try:
        save(golden_dir, family, keep)
    except OSError:
        pass

"""``parity merge-golden``: a git merge driver for golden shards, merging by key.

git runs it as ``parity merge-golden %O %A %B %P`` (base, ours -- the result
is written there --, theirs, the path in the tree) for files marked
``merge=parity-golden`` in ``.gitattributes``. Each side is parsed as a shard
(format 1 or 2, parity/golden/shards.py) and every ``FLAVOR/CONFIG`` key is merged
three ways:

* both sides agree (or only one side changed the key): that side's entry
  (a key deleted on one side and untouched on the other is deleted);
* both sides changed the key differently: a conflict entry
  ``{"conflict": {"base": ..., "ours": ..., "theirs": ...}}`` -- the shard
  stays valid JSON, ``parity check`` reports the key as CONFLICT and ``parity
  write`` regenerates it.

The result is written in format 2. Exit status: 0 merged clean; 1 merged with
conflict entries (git reports the file as conflicted until it is added again
after ``parity write``; its advice says to resolve the engine sources' own
conflicts first, since ``parity write`` lowers with both engines); 2 a side cannot be read as a shard (the file is left
as git gave it; ``parity write`` regenerates it).

``parity merge-golden --install`` registers the driver in the repository's git
config (``merge.parity-golden.driver``, with this interpreter's absolute path,
so git finds it without an activated virtual environment) and makes sure
``.gitattributes`` holds ``golden/*.json merge=parity-golden``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from parity.golden.git_attributes import add_attribute_line, pin_line_ends, set_driver_config
from parity.golden import shards as G
from parity.cli.common import one_line
from parity.base.escape import shown
from parity.base.json_guard import JsonInputError, load_json

DRIVER = "parity-golden"
ATTRIBUTES_LINE = f"golden/*.json merge={DRIVER}"


#: The first step after a conflicting merge: `parity write` lowers with both engines, so their
#: sources must be free of conflict markers first (a marker stops it: parity/base/engine_import.py).
RESOLVE_FIRST = ("resolve the engine sources first (python_engine/, cpp_engine/src/: "
                 "`git diff --name-only --diff-filter=U`)")


class MergeError(Exception):
    """A side of the merge is not a shard; one line."""

def _flat(flavors: G.Flavors) -> dict[str, G.Entry]:
    return {f"{fl}/{cfg}": e for fl, entries in flavors.items() for cfg, e in entries.items()}


def _unflat(entries: dict[str, G.Entry]) -> G.Flavors:
    out: G.Flavors = {}
    for key, e in entries.items():
        fl, _, cfg = key.partition("/")
        out.setdefault(fl, {})[cfg] = e
    return out


def _family_of(data: bytes, name: str) -> str | None:
    try:
        doc = load_json(data, name, max_depth=G.MAX_DEPTH, max_bytes=G.MAX_SHARD_BYTES)
    except JsonInputError as exc:
        raise MergeError(f"{exc}; not a golden shard") from None
    except ValueError:
        raise MergeError(f"{name}: not a golden shard (malformed JSON or git conflict markers)") from None
    fam = doc.get("family") if isinstance(doc, dict) else None
    if not isinstance(fam, str):
        raise MergeError(f"{name}: not a golden shard (no family)")
    return fam


def read_side(path: str | Path, label: str) -> tuple[str | None, dict[str, G.Entry]]:
    """(family or None for an empty/missing file, flat entries) of one side."""
    p = Path(path)
    try:
        data = G.read_regular_file(p) or b""  # a FIFO, device or oversized side: one line, never a hang
    except G.GoldenError as exc:
        raise MergeError(f"{label}: {exc}") from None
    if not data.strip():
        return None, {}
    name = f"{label} ({shown(p)})"
    try:
        fam = _family_of(data, name)
        return fam, _flat(G.parse_shard(data, name, fam))
    except G.GoldenError as exc:
        raise MergeError(str(exc)) from None


def _side(e: G.Entry | None, which: str) -> G.Entry | None:
    """A plain entry for one side of a new conflict (unwraps an older conflict entry)."""
    if G.is_conflict(e):
        return e["conflict"][which]
    return e


def merge_entries(base: dict, ours: dict, theirs: dict) -> tuple[dict, list[str]]:
    """Three-way merge by key: (merged entries, conflicting keys)."""
    out: dict = {}
    conflicts: list[str] = []
    for key in sorted(set(base) | set(ours) | set(theirs)):
        o, a, b = base.get(key), ours.get(key), theirs.get(key)
        if a == b:
            r = a
        elif a == o:
            r = b
        elif b == o:
            r = a
        else:
            r = {"conflict": {"base": _side(o, "base"), "ours": _side(a, "ours"),
                              "theirs": _side(b, "theirs")}}
        if r is not None:
            if G.is_conflict(r):
                conflicts.append(key)
            out[key] = r
    return out, conflicts


def merge_files(base: str, ours: str, theirs: str, path: str | None = None,
                ours_from: str | None = None) -> tuple[str, list[str]]:
    """Merge three shard files; writes the result over ``ours``. Returns (family, conflicting keys).
    ``ours_from``: read our side from this file instead (the work tree's, :func:`moved_work_tree`)."""
    fo, eo = read_side(base, "base")
    fa, ea = read_side(ours_from or ours, "ours")
    fb, eb = read_side(theirs, "theirs")
    fams = {f for f in (fo, fa, fb) if f is not None}
    if not fams:  # before: "the sides hold different families (none)" for three missing files
        raise MergeError(f"{shown(path or ours)}: no side is a golden shard (base {shown(base)}, ours "
                         f"{shown(ours)}, theirs {shown(theirs)}: each empty or missing)")
    if len(fams) != 1:
        raise MergeError(f"{shown(path or ours)}: the sides hold different families "
                         f"({shown(', '.join(sorted(fams))) or 'none'})")
    [fam] = fams
    merged, conflicts = merge_entries(eo, ea, eb)
    try:
        data = G.render_shard(fam, _unflat(merged)).encode("utf-8")  # strict: never a shard that is not UTF-8
    except UnicodeEncodeError:  # unreachable: load_json refuses lone surrogates at parse
        raise MergeError(f"{shown(path or ours)}: the merged shard would not be UTF-8") from None
    _write_in_place(ours, data)
    return fam, conflicts


def _write_in_place(ours: str | Path, data: bytes) -> None:
    """Write the result over git's ``%A`` file itself: git made it (a temp file it reads back
    after the driver exits), so no temp file of ours is ever left in the work tree by a kill."""
    with open(ours, "wb") as fh:
        fh.write(data)


def moved_work_tree(ours: str, path: str | None) -> bool:
    """True when git's driver run finds the work tree file ``%P`` no longer holding ``%A``
    (ours as git read it; asked only of a driver run by git): git checked the work tree clean
    before it ran the driver, and a
    writer (``parity write``) replaced the file while the driver waited for the golden lock;
    git would write the merge result over that change (issue 39, found by ``parity fuzz
    --gate``'s concurrent_git_merge_write: 3 of 4 cases). Line ends are compared as LF
    (``text eol=lf``). False when not run by git on a work tree file (``ours`` is ``path``, no
    ``path``, or it does not exist)."""
    if not path:
        return False
    try:
        if os.path.samefile(ours, path):
            return False
        with open(path, "rb") as fh:
            now = fh.read(G.MAX_SHARD_BYTES + 1)
        with open(ours, "rb") as fh:
            given = fh.read(G.MAX_SHARD_BYTES + 1)
    except (OSError, ValueError):  # ValueError: a NUL in a path (merge_conflict_hostile_path)
        return False
    return now.replace(b"\r\n", b"\n") != given.replace(b"\r\n", b"\n")


#: What the driver says when :func:`moved_work_tree`: the merge is left as a conflict.
MOVED = ("changed in the work tree while git merged (a `parity write` beside it?): merged from the work "
         "tree's version and left as a conflict, so the merge commits nothing it did not see")


def golden_lock_dir(path: str | None) -> Path | None:
    """The golden directory whose lock the driver takes: ``%P``'s directory (git runs the
    driver at the work tree's top, so ``golden/x.json`` -> ``golden``), when it exists."""
    if not path:
        return None
    d = Path(path).parent
    return d if d.is_dir() else None


def _golden_lock(lock_dir: Path, git: int | None):
    """The golden lock for this run: run by the git process ``git``, held until that git
    command has ended (git writes the result over the work tree after the driver exits;
    parity/golden/git_hold.py), or nothing to take when an earlier driver of the same git
    command holds it; run by hand (``git`` None), held for the run."""
    from contextlib import nullcontext

    from parity.golden import git_hold
    if git is None:
        return G.lock(lock_dir)
    if git_hold.held_for(lock_dir, git):
        return nullcontext()
    return git_hold.lock_for_git(lock_dir, git)


def install(repo: Path | None = None) -> list[str]:
    """Register the driver in ``repo``'s git config and .gitattributes; returns what was done."""
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=repo, capture_output=True, text=True)
    if top.returncode:
        raise MergeError(f"not inside a git repository ({top.stderr.strip().splitlines()[-1] if top.stderr.strip() else 'git rev-parse failed'})")
    root = Path(top.stdout.strip())
    cmd = f"{shlex.quote(sys.executable)} -m parity merge-golden %O %A %B %P"
    set_driver_config(root, f"merge.{DRIVER}.name", "splitk-parity golden shards (merge by key)")
    where = set_driver_config(root, f"merge.{DRIVER}.driver", cmd)
    done = [f"git config{' --worktree' if where == 'worktree' else ''} merge.{DRIVER}.driver \"{cmd}\""]
    return done + add_attribute_line(root, ATTRIBUTES_LINE) + pin_line_ends(root)


# -- CLI ---------------------------------------------------------------------

def add_command(sub) -> None:
    """Register ``parity merge-golden`` on the parity CLI's subparsers."""
    m = sub.add_parser("merge-golden", help="git merge driver for golden shards (merge by key)")
    m.add_argument("base", nargs="?", metavar="BASE", help="%%O: the merge base's version")
    m.add_argument("ours", nargs="?", metavar="OURS", help="%%A: our version; the result is written here")
    m.add_argument("theirs", nargs="?", metavar="THEIRS", help="%%B: their version")
    m.add_argument("path", nargs="?", metavar="PATH", help="%%P: the shard's path in the tree (messages only)")
    m.add_argument("--install", action="store_true",
                   help="register the driver in this repository's git config and .gitattributes")
    m.set_defaults(func=cmd_merge_golden)


def cmd_merge_golden(args) -> int:
    if args.install:
        try:
            for line in install():
                print(line)
        except (MergeError, subprocess.CalledProcessError, OSError) as exc:
            print(f"error: parity merge-golden --install: {exc}", file=sys.stderr)
            return 2
        return 0
    if not (args.base and args.ours and args.theirs):
        print("error: parity merge-golden wants BASE OURS THEIRS [PATH] (git's %O %A %B %P), "
              "or --install", file=sys.stderr)
        return 2
    name = shown(args.path or args.ours)
    lock_dir = golden_lock_dir(args.path)
    moved = False
    try:
        if lock_dir is None:
            fam, conflicts = merge_files(args.base, args.ours, args.theirs, args.path)
        else:
            from parity.golden import git_hold
            git = git_hold.git_ancestor()  # run by git (None: by hand, %P need not be %A's file)
            with _golden_lock(lock_dir, git):  # the one golden lock: never between `parity write`'s read and replace
                moved = git is not None and moved_work_tree(args.ours, args.path)
                fam, conflicts = merge_files(args.base, args.ours, args.theirs, args.path,
                                             ours_from=args.path if moved else None)
    except G.GoldenError as exc:
        print(f"error: parity merge-golden: {one_line(exc)}", file=sys.stderr)
        return 2
    except (MergeError, OSError) as exc:
        why = exc if isinstance(exc, MergeError) else f"{shown(exc.filename or '')}: {shown(exc.strerror or exc)}"
        print(f"error: parity merge-golden: {one_line(why)}; run `parity write` after the merge to regenerate {name} "
              f"({RESOLVE_FIRST})", file=sys.stderr)
        return 2
    if moved:
        print(f"parity merge-golden: {name}: {MOVED}; check it, then `git add {name}`", file=sys.stderr)
    if conflicts:
        print(f"parity merge-golden: {name}: {len(conflicts)} key(s) changed differently on both sides "
              f"({shown(', '.join(conflicts[:5]))}{' ...' if len(conflicts) > 5 else ''}); "
              f"{RESOLVE_FIRST}, then run `parity write --only {shown(fam)}` and `git add {name}`", file=sys.stderr)
        return 1
    return 1 if moved else 0

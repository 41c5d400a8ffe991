"""``parity golden-diff``: git's external diff driver for golden shards, printing the grouped form.

The textconv (parity/golden/textconv.py) turns each side of a shard into its
IR, and git diffs those texts line by line: one source edit repeated in every
unrolled copy of 351 entries is tens of thousands of lines. This driver is
given both sides at once (``diff.parity-golden.command``, registered by
``parity golden-textconv --install`` next to the textconv) and prints what
``parity diff --base`` prints: per shard the change groups
(parity/golden/change_groups.py), each distinct change once with the entries
it covers. git calls it as ``PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX
NEW-MODE``. ``git diff`` runs it; ``git log -p`` and ``git show`` run it only
with ``--ext-diff`` (docs/gate.md suggests an alias); ``--no-ext-diff`` gives
the textconv, ``--no-textconv --no-ext-diff`` the JSON.

Texts come from the textconv's cache and engines (a commit holding the shard
blob lowers it with its own engine, in a subprocess). It never fails a git
command: anything it cannot show is a plain unified diff of the JSON after one
line saying why, and the exit status is 0.
"""
from __future__ import annotations

import difflib
import sys
from pathlib import Path

from parity.base.escape import shown
from parity.base.json_guard import load_json
from parity.golden import shards as G
from parity.golden.change_groups import OUTCOME, Grouper, add_change, group_lines

NULL = "/dev/null"


def _read(path: str) -> bytes:
    if path == NULL:
        return b""
    data = G.read_regular_file(Path(path))
    return data or b""


def _texts(root: Path, data: bytes, family: str, shas: set[str], cache) -> None:
    """Make sure ``cache`` holds every text of ``shas`` (the engine of a commit holding ``data``)."""
    from parity.golden.textconv import fill_cache, source_commit  # git + a subprocess: only when needed
    from parity.golden.ref_tree import BaseError
    if data and any(cache.get(s) is None for s in shas):
        try:
            fill_cache(root, source_commit(root, data, family), family, cache)
        except BaseError as exc:
            print(f"parity golden-diff: {shown(family)}: {shown(str(exc))}", file=sys.stderr)


def _entries(flavors) -> dict[str, dict]:
    return {f"{cfg}@{fl}": e for fl, es in (flavors or {}).items() for cfg, e in es.items()}


def outcome(e: dict | None, cache) -> dict | None:
    """A golden entry as the lowering outcome :func:`parity.golden.change_groups.add_change`
    groups (the form of ``parity diff --base``): its kernel, sha256 and IR text, or its rejection."""
    if e is None:
        return None
    if "rejected" in e:
        return {"status": "rejected", "reason": e["rejected"]}
    return {"status": "ok", "kernel": e["kernel"], "sha256": e["sha256"], "text": cache.get(e["sha256"])}


def grouped(path: str, old: bytes, new: bytes, root: Path, cache) -> list[str]:
    """The grouped diff lines of one shard's two sides (module docstring)."""
    fo = G.parse_shard(old, f"a/{path}") if old else {}
    fn = G.parse_shard(new, f"b/{path}") if new else {}
    family = load_json(new or old, path)["family"]  # parse_shard has accepted it
    eo, en = _entries(fo), _entries(fn)
    changed = [k for k in sorted(set(eo) | set(en)) if eo.get(k) != en.get(k)]
    _texts(root, old, family, {eo[k]["sha256"] for k in changed if "sha256" in (eo.get(k) or {})}, cache)
    _texts(root, new, family, {en[k]["sha256"] for k in changed if "sha256" in (en.get(k) or {})}, cache)
    g = Grouper(family)
    for k in changed:
        cfg, fl = k.rsplit("@", 1)
        a, b = eo.get(k), en.get(k)
        if G.is_conflict(a) or G.is_conflict(b):  # only a golden entry is a merge conflict
            g.add_other(OUTCOME, G.describe_change(a, b), cfg, fl)
        elif a and b and "sha256" in a and "sha256" in b and None in (cache.get(a["sha256"]), cache.get(b["sha256"])):
            g.add_other(OUTCOME, "IR not available (no engine gave its sha256): "
                        + G.describe_change(a, b).split(", sha256")[0], cfg, fl)
        else:  # the grouping of `parity diff --base` and `parity review` (one change, the same groups)
            add_change(g, cfg, fl, outcome(a, cache), outcome(b, cache))
    groups = g.groups()
    n = sum(len(x.entries) for x in groups)
    out = [f"diff --parity a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}",
           f"# {shown(family)}: {n} entr{'y' if n == 1 else 'ies'} changed in {len(groups)} change group(s) "
           "(parity golden-diff; `--no-ext-diff` shows the IR per entry, `--no-ext-diff --no-textconv` the JSON)"]
    for i, x in enumerate(groups, 1):
        out += group_lines(x, i, len(groups))
    return out


def render(argv: list[str]) -> str:
    """What the driver prints for git's arguments; never raises."""
    if len(argv) < 7:  # an unmerged path: git passes only PATH
        return f"* Unmerged path {argv[0] if argv else '?'} (parity golden-diff: `parity check` reports it)\n"
    path, old_file, _, _, new_file, _, _ = argv[:7]
    try:
        old, new = _read(old_file), _read(new_file)
    except G.GoldenError as exc:
        return f"# parity golden-diff: {shown(path)}: cannot read ({shown(str(exc))})\n"
    try:
        from parity.golden.textconv import CACHE_DIR, TextCache, _git
        root = Path(_git(Path.cwd(), "rev-parse", "--show-toplevel"))
        common = Path(_git(root, "rev-parse", "--git-common-dir"))
        cache = TextCache((common if common.is_absolute() else root / common) / CACHE_DIR)
        return "\n".join(grouped(path, old, new, root, cache)) + "\n"
    except Exception as exc:  # noqa: BLE001 - a diff driver must never fail the git command
        why = f"{type(exc).__name__}: {exc}"
        a = old.decode("utf-8", errors="replace").splitlines(keepends=True)
        b = new.decode("utf-8", errors="replace").splitlines(keepends=True)
        return (f"# parity golden-diff: shown as JSON ({shown(why)})\n"
                + "".join(difflib.unified_diff(a, b, f"a/{path}", f"b/{path}")))


def cmd_golden_diff(args) -> int:
    sys.stdout.write(render(args.git_args))
    return 0


def add_command(sub) -> None:
    """Register ``parity golden-diff`` on the parity CLI's subparsers."""
    t = sub.add_parser("golden-diff", help="git external diff driver: a golden shard change as change groups")
    t.add_argument("git_args", nargs="*", metavar="ARG",
                   help="git's PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE")
    t.set_defaults(func=cmd_golden_diff)

"""``parity golden-textconv``: the git diff driver that shows a golden change as IR.

A golden shard holds a sha256 per entry; its diff in a pull request is a
column of hashes. Registered as the textconv of ``golden/*.json`` (``parity
golden-textconv --install``, run by scripts/bootstrap.sh like the merge
driver), git turns each side of a shard diff into text before diffing it:
this command prints the shard with each entry's IR text under a header
line::

    == llvm23/bf16_v8_t64_d4 conv_fwd_split_k_reduce_bf16_v8_t64_d4
      <the module, indented two spaces>
    == llvm23/reject_vector3 rejected: vector must be 1, 2, 4 or 8 elements, got 3

so ``git diff``, ``git show`` and ``git log -p`` show, per changed entry, the
IR lines that changed, and each hunk header names its entry (the driver's
``xfuncname`` is ``^== ``). ``git diff --no-textconv`` shows the JSON.

Where the text comes from: the shards pin both engines, so an entry's text is
what the Python engine of a commit holding that shard version gives. The
command looks for the shard's blob in the history (``git log --all
--find-object``) and lowers the family with that commit's own engine
(parity/golden/ref_tree.py); a blob no commit holds (the working tree's, the
index's) is lowered with the working tree's own engine. Texts are cached by
sha256 under ``<git dir>/parity-ir/`` (checked against the sha256 when
read), so each text is made once. An entry whose text cannot be made (the
engine gives another sha256: the commit was not GREEN) says so on one line.
A file that is not a shard is printed as it is, after one line saying why:
textconv never fails a ``git diff``.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path

from parity.golden.git_attributes import add_attribute_line, set_driver_config
from parity.golden import shards as G
from parity.config import CANONICAL_FLAVORS
from parity.base.escape import shown
from parity.golden.ref_tree import BaseError, lower_at_ref, run_ref_script

DRIVER = "parity-golden"
ATTRIBUTES_LINE = f"golden/*.json diff={DRIVER}"
CACHE_DIR = "parity-ir"


def _git(root: Path, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if r.returncode:
        raise BaseError(f"git {' '.join(args)}: {(r.stderr.strip().splitlines() or ['failed'])[-1]}")
    return r.stdout.strip()


class TextCache:
    """IR texts by sha256 in a directory (``<git dir>/parity-ir/<sha256>.ll``)."""

    def __init__(self, directory: Path):
        self.dir = Path(directory)

    def get(self, sha: str) -> str | None:
        p = self.dir / f"{sha}.ll"
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return text if hashlib.sha256(text.encode("utf-8")).hexdigest() == sha else None

    def put(self, text: str) -> str:
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.dir / f".{sha}.tmp"
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(self.dir / f"{sha}.ll")
        except OSError:
            pass  # a cache that cannot be written only costs time
        return sha


def source_commit(root: Path, data: bytes, family: str) -> str | None:
    """A commit whose ``golden/<family>.json`` is exactly ``data``, or None."""
    r = subprocess.run(["git", "hash-object", "--stdin"], cwd=root, input=data, capture_output=True)
    if r.returncode:
        return None
    blob = r.stdout.decode().strip()
    try:
        commits = _git(root, "log", "--all", "--format=%H", f"--find-object={blob}").split()
    except BaseError:
        return None
    for c in commits:
        try:
            if _git(root, "rev-parse", f"{c}:golden/{family}.json") == blob:
                return c
        except BaseError:
            continue
    return None


def fill_cache(root: Path, commit: str | None, family: str, cache: TextCache) -> None:
    """Lower every config of ``family`` with the engine of ``commit`` (None: the working
    tree's own engine, run from its files) and cache the texts."""
    request = {"kind": "configs", "only": [family], "flavors": list(CANONICAL_FLAVORS), "want": {}}
    if commit is None:
        doc = run_ref_script(root, request, "the working tree")
    else:
        doc = lower_at_ref(root, commit, commit[:12], request)
    for o in doc["units"].values():
        if o.get("status") == "ok" and "text" in o:
            cache.put(o["text"])


def render(root: Path, data: bytes, name: str) -> str:
    """The textconv output (module docstring) of a shard's bytes."""
    flavors = G.parse_shard(data, name)
    family = json.loads(data.decode("utf-8"))["family"]  # parse_shard checked it is a string
    common = Path(_git(root, "rev-parse", "--git-common-dir"))
    cache = TextCache((common if common.is_absolute() else root / common) / CACHE_DIR)
    shas = {e["sha256"] for es in flavors.values() for e in es.values() if "sha256" in e}
    source = "cache"
    if any(cache.get(s) is None for s in shas):
        commit = source_commit(root, data, family)
        source = commit[:12] if commit else "the working tree"
        try:
            fill_cache(root, commit, family, cache)
        except BaseError as exc:
            source = f"{source} (failed: {exc})"
    if source != "cache":
        print(f"parity golden-textconv: {shown(family)}: texts made by {shown(source)}'s engine", file=sys.stderr)
    out = [f"# golden/{shown(family)}.json as IR (parity golden-textconv; `git diff --no-textconv` shows the JSON)"]
    printed: dict[str, str] = {}
    for key in sorted(f"{fl}/{cfg}" for fl, es in flavors.items() for cfg in es):
        fl, _, cfg = key.partition("/")
        e = flavors[fl][cfg]
        if G.is_conflict(e):
            out.append(f"== {shown(key)} {shown(G.describe_entry(e))}")
        elif "rejected" in e:
            out.append(f"== {shown(key)} rejected: {shown(e['rejected'])}")
        else:
            out.append(f"== {shown(key)} {shown(e['kernel'])}")
            if e["sha256"] in printed:  # the same text as an entry above: printed once
                out.append(f"  (same IR as {shown(printed[e['sha256']])})")
                continue
            printed[e["sha256"]] = key
            text = cache.get(e["sha256"])
            if text is None:
                out.append(f"  (IR not available: no engine gave sha256 {e['sha256'][:12]})")
            else:
                out += ["  " + line if line else "" for line in text.splitlines()]
    return "\n".join(out) + "\n"


def textconv(path: str) -> str:
    """What git shows for the shard at ``path``; never raises for a bad file."""
    try:  # never open a FIFO or device blocking, never read more than a shard's cap
        data = G.read_regular_file(Path(path))
    except G.ShardTooLarge as exc:
        return f"# parity golden-textconv: not shown ({shown(str(exc))})\n"
    except G.GoldenError as exc:
        return f"# parity golden-textconv: cannot read ({shown(str(exc))})\n"
    if data is None:
        return f"# parity golden-textconv: cannot read {shown(path)}: no such file\n"
    try:
        root = Path(_git(Path.cwd(), "rev-parse", "--show-toplevel"))
        return render(root, data, path)
    except (G.GoldenError, BaseError, KeyError, ValueError, OSError) as exc:  # OSError: no git, cwd gone
        return (f"# parity golden-textconv: shown as text ({shown(str(exc))})\n"
                + data.decode("utf-8", errors="replace"))


def install(repo: Path | None = None) -> list[str]:
    """Register the driver in ``repo``'s git config and .gitattributes; returns what was done."""
    root = Path(_git(repo or Path.cwd(), "rev-parse", "--show-toplevel"))
    cmd = f"{shlex.quote(sys.executable)} -m parity golden-textconv"
    where = set_driver_config(root, f"diff.{DRIVER}.textconv", cmd)
    set_driver_config(root, f"diff.{DRIVER}.xfuncname", "^== .*$")
    ext = f"{shlex.quote(sys.executable)} -m parity golden-diff"  # the grouped form (parity/golden/ext_diff.py)
    set_driver_config(root, f"diff.{DRIVER}.command", ext)
    scope = " --worktree" if where == "worktree" else ""
    done = [f"git config{scope} diff.{DRIVER}.textconv \"{cmd}\"", f"git config{scope} diff.{DRIVER}.command \"{ext}\""]
    return done + add_attribute_line(root, ATTRIBUTES_LINE)


def cmd_golden_textconv(args) -> int:
    if args.install:
        try:
            for line in install():
                print(line)
        except (BaseError, OSError) as exc:
            print(f"error: parity golden-textconv --install: {exc}", file=sys.stderr)
            return 2
        return 0
    if not args.path:
        print("error: parity golden-textconv wants FILE (git's textconv argument), or --install",
              file=sys.stderr)
        return 2
    sys.stdout.write(textconv(args.path))
    return 0


def add_command(sub) -> None:
    """Register ``parity golden-textconv`` on the parity CLI's subparsers."""
    t = sub.add_parser("golden-textconv", help="git diff driver: a golden shard shown as the IR of its entries")
    t.add_argument("path", nargs="?", metavar="FILE", help="the shard file git hands to its textconv")
    t.add_argument("--install", action="store_true",
                   help="register the driver in this repository's git config and .gitattributes")
    t.set_defaults(func=cmd_golden_textconv)

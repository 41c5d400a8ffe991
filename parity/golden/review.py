"""``parity review``: accept or reject the pending golden entries a RED ``parity check`` left,
one change group at a time (insta's ``cargo insta review`` for the parity gate).

The pending entries (parity/golden/pending.py) say which golden entries would
change; the review shows *what* changes: the old IR from the Python engine at
``--base`` (default ``HEAD``, whose engines the committed shards pin) and the
new IR from the working tree's Python engine, grouped by change
(parity/golden/change_groups.py, as ``parity diff --base``). On a terminal it walks
the groups, each shown once with its entries and IR hunks::

    [a]ccept  [r]eject  [s]kip  accept the rest of the [f]amily  [q]uit

and at the end (or on quit) applies the decisions: accepted entries are
written by ``parity write``'s own code (parity/golden/bless.py: both engines run on
exactly those entries and must agree with what was pending, the validity and
numerics oracles run on those that change, a family an oracle refuses is not
written, under the golden lock) and leave the pending file; rejected entries
leave the pending file and the shard as it is; skipped ones stay pending.
For scripts: ``--list`` prints the groups with their ids, ``--accept ID...``
and ``--reject ID...`` decide them (an id is ``FAMILY:xxxxxxxx`` or a unique
prefix of one). Refused under ``CI``. Exit status: 0 done, 1 an accepted
group was not written (an oracle or the engines refused it), 2 bad input.
"""

from __future__ import annotations

from parity.base.ci import is_ci

import argparse
import dataclasses
import json
import os
import sys

from parity.cli import color
from parity.cli.common import nonempty
from parity.golden import shards as G
from parity.golden import pending as P
from parity.golden.bless import restrict_family, write
from parity.golden import review_tty as T
from parity.golden.change_groups import OUTCOME, REMOVED, ChangeGroup, first_changed_line
from parity.config import CANONICAL_FLAVORS, ConfigError, load_families
from parity.base.escape import shown
from parity.golden.diff_page import group_verdicts, verdict_text
from parity.golden.ir_diff import Paint, compare, group_lines, lower_ref, lower_working
from parity.gate.pool import PoolError
from parity.base.project import ProjectError, find_project_root, resolve_golden_dir
from parity.golden.ref_tree import BaseError, resolve_ref
from parity.gate.report import add_common_options, die, parse_engines, progress, split_csv, write_json
from parity.cli.common import configured_families, json_path
from parity.gate.runner import Report, resolve_flavors, run_gate
from parity.gate.provenance import ALLOW_FOREIGN

ACCEPT, REJECT, SKIP = "accept", "reject", "skip"
PROMPT = "[a]ccept  [r]eject  [s]kip  [f]inish: accept all not rejected (after the last group)  [q]uit > "


class ReviewError(Exception):
    """Bad input to the review (an unknown group id); one line."""


# -- the groups ------------------------------------------------------------------------

def pending_now(gdir, only: list[str] | None, resolve) -> tuple[dict[str, dict], list[str]]:
    """(``family -> {"FLAVOR/CONFIG": {"old", "new"}}`` still to review, notes)."""
    out, notes = {}, []
    for fam in P.pending_families(gdir):
        if only is not None and fam not in only:
            continue
        keep, dropped = P.current(gdir, fam, G.load_shard(gdir, fam, resolve))
        if dropped:
            notes.append(f"{shown(fam)}: {dropped} pending entr{'y' if dropped == 1 else 'ies'} dropped "
                         "(the shard changed since `parity check`)")
        if keep:
            out[fam] = keep
        else:
            P.save(gdir, fam, {})
    return out, notes


def drop_moved_configs(gdir, pend: dict[str, dict], families) -> list[str]:
    """Drop from ``pend`` (and from the pending files) the entries whose config moved since
    ``parity check`` left them: an entry to add or change whose config (or its flavor) no
    longer exists, or an entry to remove whose config exists again. Accepting such an entry
    would bless a config that is gone or delete one that is back. Returns one note per family.
    A family that no longer exists keeps its entries (``apply`` says `parity write` removes it)."""
    notes = []
    by_name = {f.name: f for f in families}
    for fam in sorted(pend):
        if fam not in by_name:
            continue
        here = {(fl, c.name) for c in by_name[fam].configs for fl in c.flavors}
        moved = [k for k, e in pend[fam].items()
                 if (e["new"] is not None) != ((k.partition("/")[0], k.partition("/")[2]) in here)]
        if not moved:
            continue
        P.discard(gdir, fam, moved)
        for k in moved:
            del pend[fam][k]
        if not pend[fam]:
            del pend[fam]
        n = len(moved)
        notes.append(f"{shown(fam)}: {n} pending entr{'y' if n == 1 else 'ies'} dropped (the config was "
                     f"removed or added since `parity check`, e.g. {shown(moved[0])}; run `parity check` again)")
    return notes


def build_groups(pend: dict[str, dict], families, root, base: str, *, workers=None,
                 timeout: float = 30.0) -> tuple[str, list[ChangeGroup]]:
    """(commit of ``base``, the change groups of every pending entry): the old IR from
    ``base``'s Python engine, the new from the working tree's. A pending entry no group
    holds (its IR is the same at ``base``) is in a group of its own per family."""
    by_name = {f.name: f for f in families}
    restricted = []
    for fam, entries in pend.items():
        if fam not in by_name:
            continue
        want: dict[str, set[str]] = {}
        for key, e in entries.items():
            fl, _, cfg = key.partition("/")
            if e["new"] is not None:
                want.setdefault(fl, set()).add(cfg)
        restricted.append(restrict_family(by_name[fam], want))
    commit = resolve_ref(root, base)
    work = lower_working(restricted, CANONICAL_FLAVORS, workers=workers, timeout=timeout)
    keys = {f"{fam}/{k.partition('/')[2]}@{k.partition('/')[0]}" for fam, es in pend.items() for k in es}
    want_sha = {k: o["sha256"] for k, o in work.items() if o["status"] == "ok"}
    ref_fams, ref_units = lower_ref(root, commit, sorted(pend), CANONICAL_FLAVORS, want_sha, base)
    ref_units = {k: v for k, v in ref_units.items() if k in keys}
    diffs = compare({k: v for k, v in work.items() if k in keys}, ref_units, ref_fams,
                    [f.name for f in restricted])
    groups: list[ChangeGroup] = []
    for fam in sorted(pend):
        d = diffs.get(fam)
        got = list(d.groups) if d else []
        held = {(c, fl) for g in got for c, fl in g.entries}
        rest = [(k.partition("/")[2], k.partition("/")[0]) for k in sorted(pend[fam])
                if (k.partition("/")[2], k.partition("/")[0]) not in held]
        if rest:
            gone = [x for x in rest if pend[fam][f"{x[1]}/{x[0]}"]["new"] is None]
            gone_set = set(gone)  # a set: 100k orphans were quadratic here (issue 39)
            other = [x for x in rest if x not in gone_set]
            if gone:
                got.append(ChangeGroup(fam, REMOVED, ("gone",), "config no longer exists (removed from golden)",
                                       entries=gone))
            if other:
                got.append(ChangeGroup(fam, OUTCOME, ("golden",), f"the IR is the same at {base}; "
                                       "the golden entry differs", entries=other))
        groups += got
    return commit, groups


def find_groups(groups: list[ChangeGroup], ids: list[str]) -> list[ChangeGroup]:
    """The groups named by ``ids`` (a full id or a unique prefix); ReviewError otherwise."""
    out = []
    for i in ids:
        if not i.strip():  # "" is a prefix of every id: it would pick the only group unseen
            raise ReviewError(f"group id {shown(i)} is empty (ids from `parity review --list`)")
        hit = [g for g in groups if g.gid == i] or [g for g in groups if g.gid.startswith(i)]
        if len(hit) != 1:
            known = ", ".join(g.gid for g in groups) or "none"
            why = "matches no group" if not hit else f"matches {len(hit)} groups"
            raise ReviewError(f"group {shown(i)} {why} (pending groups: {known})")
        out.append(hit[0])
    return out


# -- deciding ------------------------------------------------------------------------

def show_group(g: ChangeGroup, i: int, n: int, verdicts: dict | None, paint=None) -> list[str]:
    """A group's lines (parity/golden/ir_diff.py's), with its oracle verdict when the oracles ran."""
    lines = group_lines(g, i, n, paint)
    v = verdict_text(verdicts, g)
    return lines[:1] + ([f"    {v}"] if v else []) + lines[1:]


def terminal_paint() -> Paint:
    """The hunks' colours on stdout as ``--color`` and NO_COLOR say (parity/cli/color.py)."""
    return Paint(color.enabled(sys.stdout))


def ask(groups: list[ChangeGroup], read=None, say=print, verdicts: dict | None = None,
        paint=None, key=None, rows: int | None = None) -> dict[str, str]:
    """Walk ``groups``; ``gid -> decision`` for the groups decided before a quit.

    ``key(prompt) -> str`` reads one answer (parity/golden/review_tty.py: one key press on a
    terminal; ``read``, an ``input``-like function, gives the line reader). A group longer
    than ``rows`` is paged with its header kept on every page. ``f`` (finish) accepts every
    group not rejected, and only once every group was shown to its last line."""
    key = key or T.line_reader(read or input)
    rows = rows or T.screen_rows()
    decisions: dict[str, str] = {}
    seen: set[str] = set()
    for i, g in enumerate(groups, 1):
        lines = show_group(g, i, len(groups), verdicts, paint)
        nhead = 2 if len(lines) > 1 and lines[1].startswith("    oracles:") else 1
        ps = T.pages(["", f"review {i}/{len(groups)}: {shown(g.family)}"] + lines[:nhead], lines[nhead:], rows)
        page, show = 0, True
        while True:
            if show:
                for line in ps[page]:
                    say(line)
                if page == len(ps) - 1:
                    seen.add(g.gid)
            show = False
            ans = key(PROMPT)
            if ans in T.PAGE_DOWN and page + 1 < len(ps):
                page, show = page + 1, True
            elif ans in T.PAGE_UP and page > 0:
                page, show = page - 1, True
            elif ans == "f" and len(seen) < len(groups):
                say(f"f finishes (accepts every group not rejected) once every group was shown: "
                    f"{len(seen)} of {len(groups)} so far; answer a, r or s")
            elif ans in ("a", "r", "s", "f", "q"):
                break
            else:
                say("answer a, r, s, f or q" + ("; space/j, b/k: page" if len(ps) > 1 else ""))
        if ans == "q":
            break
        if ans == "f":
            for h in groups:
                if decisions.get(h.gid) != REJECT:
                    decisions[h.gid] = ACCEPT
            break
        decisions[g.gid] = {"a": ACCEPT, "r": REJECT, "s": SKIP}[ans]
    return decisions


def list_lines(groups: list[ChangeGroup]) -> list[str]:
    """``review --list``: one line per group: id, entries, family, first changed line."""
    return [f"{g.gid}  {len(g.entries)} entr{'y' if len(g.entries) == 1 else 'ies'}  {shown(g.family)}  "
            f"{shown(first_changed_line(g), limit=160)}" for g in groups]


def list_json(groups: list[ChangeGroup], base: str, commit: str, verdicts: dict | None) -> dict:
    """``review --list --json``: every group with its id, kind, entries, families, first changed line."""
    out = []
    for g in groups:
        d = g.to_json()
        d.update(families=[g.family], first_changed_line=first_changed_line(g))
        if verdicts is not None and g.gid in verdicts:
            d["oracles"] = verdicts[g.gid]
        out.append(d)
    return {"base": base, "commit": commit, "groups": out,
            "entries": sum(len(g.entries) for g in groups), "tool": "splitk-parity"}


def review_json_path(text: str) -> str:
    """argparse type of ``review --json``: ``-`` (stdout) or a file path ``--json PATH`` of every
    other command accepts (parity/cli/common.py ``check_writable``: checked before the work, never
    a golden shard or another file that is not a report of this tool). Before, PATH was not
    checked: a directory or a missing directory was a traceback after the work, and
    ``--json golden/conv_abi.json`` replaced that shard with the review's JSON."""
    return text if text == "-" else json_path(text)


def _emit_json(path: str, doc: dict) -> int:
    """The review's JSON on stdout (``-``) or to ``path``; 0, or one ``error:`` line (exit 2)."""
    if path == "-":
        print(json.dumps(doc, indent=1, sort_keys=True))
        return 0
    try:
        write_json(path, doc)
    except OSError as exc:  # full disk, a path gone since the check
        return die(f"--json {shown(path)}: cannot write: {shown(exc.strerror or exc)}")
    return 0


class _ChosenReport(Report):
    """A gate report on chosen entries: green when every verdict passes (a family that
    compares nothing at some flavor is not a failure when only some entries were chosen)."""

    @property
    def green(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)


def apply(decisions: dict[str, str], groups: list[ChangeGroup], pend: dict[str, dict], families,
          gdir, resolve, args) -> int:
    """Reject, then accept (through :func:`parity.golden.bless.write`); the exit status."""
    by_gid = {g.gid: g for g in groups}
    for gid, d in decisions.items():
        if d == REJECT:
            g = by_gid[gid]
            P.discard(gdir, g.family, [f"{fl}/{c}" for c, fl in g.entries])
            print(f"rejected {shown(gid)}: {len(g.entries)} entr{'y' if len(g.entries) == 1 else 'ies'} "
                  "(golden unchanged, no longer pending)")
    keys: dict[str, set] = {}
    for gid, d in decisions.items():
        if d == ACCEPT:
            g = by_gid[gid]
            keys.setdefault(g.family, set()).update((fl, c) for c, fl in g.entries)
    skipped = sum(len(by_gid[gid].entries) for gid, d in decisions.items() if d == SKIP)
    undecided = sum(len(g.entries) for g in groups if g.gid not in decisions)
    if skipped or undecided:
        print(f"left pending: {skipped + undecided} entr{'y' if skipped + undecided == 1 else 'ies'}")
    if not keys:
        return 0
    by_name = {f.name: f for f in families}
    for fam in [f for f in keys if f not in by_name]:
        print(f"{shown(fam)}: the family no longer exists; its shard is removed by `parity write` (not by review)")
        del keys[fam]
    if not keys:
        return 1
    chosen = []
    for fam, ks in keys.items():
        want: dict[str, set[str]] = {}
        for fl, cfg in ks:
            if pend[fam][f"{fl}/{cfg}"]["new"] is not None:
                want.setdefault(fl, set()).add(cfg)
        chosen.append(restrict_family(by_name[fam], want))
    engines = parse_engines(args.engines)

    def run():
        with progress("parity") as cb:
            rep = run_gate(chosen, engines=engines, flavors=CANONICAL_FLAVORS, timeout=args.timeout,
                           workers=args.jobs, progress=cb)
        for r in rep.results:  # what is written must be what was pending (the engines may have moved)
            want = pend[r.family].get(f"{r.flavor}/{r.config}", {}).get("new")
            if (r.flavor, r.config) in keys[r.family] and r.golden_entry() != want:
                keys[r.family].discard((r.flavor, r.config))
                print(f"  {r.family}/{r.config}@{r.flavor}: the engines now give another entry than "
                      "`parity check` left pending; not written (run `parity check` again)")
        return _ChosenReport(*[getattr(rep, f.name) for f in dataclasses.fields(rep)])

    ns = argparse.Namespace(only=None, flavor=None, no_oracles=False, mode="all", jobs=args.jobs,
                            json=None, timeout=args.timeout)
    rc = write(ns, chosen, CANONICAL_FLAVORS, engines, gdir, resolve, run, keys=keys, list_changes=False)
    written = 0
    for fam, ks in keys.items():
        shard = G.load_shard(gdir, fam, resolve) or {}
        done = [f"{fl}/{c}" for fl, c in ks
                if (shard.get(fl) or {}).get(c) == pend[fam][f"{fl}/{c}"]["new"]]
        P.discard(gdir, fam, done)
        written += len(done)
    asked = sum(len(by_gid[g].entries) for g, d in decisions.items() if d == ACCEPT)
    print(f"accepted: {written} of {asked} entr{'y' if asked == 1 else 'ies'} written to golden/")
    return 0 if rc == 0 and written == asked else 1


# -- command ---------------------------------------------------------------------------

def _nothing_pending(args, to_stdout: bool) -> int:
    """Nothing to review: 0, but a group named by --accept/--reject is bad input (ReviewError:
    before, `--accept ID` with nothing pending exited 0 as if ID had been written)."""
    find_groups([], list(args.accept or []) + list(args.reject or []))
    if not to_stdout:
        print("review: nothing pending (a RED `parity check` leaves the entries to review)")
    if args.list and args.json is not None:  # to PATH too (before, only `--json -` had the document)
        return _emit_json(args.json, list_json([], args.base, None, None))
    return 0


def cmd_review(args) -> int:
    if is_ci():
        return die("parity review refuses to run when CI is set (goldens are blessed by a person); "
                   "run `parity check` instead")
    if args.json is not None and not args.list:
        return die("parity review: --json goes with --list")
    if not (args.list or args.accept or args.reject) and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return die("parity review walks the groups on a terminal; without one, use --list, "
                   "--accept GROUP... or --reject GROUP...")
    try:
        root = find_project_root()
        if root is None:
            raise ProjectError("parity review needs a splitk-parity git checkout (the old IR comes from --base)")
        gdir = resolve_golden_dir(args.golden_dir, families=configured_families(args))
        only = split_csv(args.only)
        cache: dict[str, str | None] = {f: f for f in CANONICAL_FLAVORS}

        def resolve(name):
            if name not in cache:
                cache.update(resolve_flavors([name], "python", timeout=args.timeout))
            return cache[name]
        pend, notes = pending_now(gdir, only, resolve)
        to_stdout = args.list and args.json == "-"
        for n in notes:
            print(n, file=sys.stderr if to_stdout else sys.stdout)
        if not pend:
            return _nothing_pending(args, to_stdout)
        families = load_families(args.configs, only=[f for f in pend if f in {x.name for x in load_families(
            args.configs)}])
        for n in drop_moved_configs(gdir, pend, families):
            print(n, file=sys.stderr if to_stdout else sys.stdout)
        if not pend:
            return _nothing_pending(args, to_stdout)
        commit, groups = build_groups(pend, families, root, args.base, workers=args.jobs, timeout=args.timeout)
        picked = {ACCEPT: find_groups(groups, args.accept or []), REJECT: find_groups(groups, args.reject or [])}
        both = {g.gid for g in picked[ACCEPT]} & {g.gid for g in picked[REJECT]}
        if both:
            raise ReviewError(f"group {sorted(both)[0]} is both accepted and rejected")
    except (ConfigError, ValueError, PoolError, ProjectError, BaseError, G.GoldenError, P.PendingError,
            ReviewError) as exc:
        return die(str(exc))
    total = sum(len(g.entries) for g in groups)
    if not (args.list and args.json == "-"):
        print(f"pending changes from {shown(args.base)} ({commit[:12]}, its own Python engine) to the working tree")
    verdicts = None
    if args.oracles:
        with progress("oracles") as cb:
            verdicts = group_verdicts(families, groups, workers=args.jobs, progress=cb)
    if args.list:
        if args.json is not None:
            return _emit_json(args.json, list_json(groups, args.base, commit, verdicts))
        for line in list_lines(groups):
            print(line)
        print(f"groups: {len(groups)}, entries: {total} (`parity review` walks them with their IR)")
        return 0
    if args.accept or args.reject:
        decisions = {g.gid: d for d, gs in picked.items() for g in gs}
    else:
        decisions = ask(groups, verdicts=verdicts, paint=terminal_paint(), key=T.key_reader())
    try:
        return apply(decisions, groups, pend, families, gdir, resolve, args)
    except (G.GoldenError, P.PendingError, PoolError, ValueError) as exc:
        return die(str(exc))


def add_command(sub) -> None:
    """Register ``parity review`` on the parity CLI's subparsers."""
    r = sub.add_parser("review", help="accept or reject, one change group at a time, the golden entries a "
                                      "RED `parity check` left pending (refused under CI)",
                       description=__doc__.split("\n\n")[0].replace("``", ""))
    r.add_argument("--list", action="store_true",
                   help="one line per pending change group: id, entries, family, first changed line")
    r.add_argument("--json", nargs="?", const="-", metavar="PATH", type=review_json_path,
                   help="with --list: the groups as JSON on stdout (or to PATH)")
    # extend: `--accept A --accept B` accepts both (the default "store" kept B alone, dropping A unseen)
    r.add_argument("--accept", nargs="+", action="extend", metavar="GROUP",
                   help="accept these groups (ids from --list)")
    r.add_argument("--reject", nargs="+", action="extend", metavar="GROUP",
                   help="reject these groups (ids from --list)")
    r.add_argument("--oracles", action="store_true",
                   help="run the validity and numerics oracles on every pending group first and show each "
                        "group's verdict (accepting runs them anyway)")
    r.add_argument("--base", metavar="REF", default="HEAD",
                   help="the git ref whose Python engine gives the old IR (default HEAD)")
    r.add_argument("--golden-dir", metavar="DIR", type=nonempty("--golden-dir", "a directory"),
                   help="golden shard directory (default: golden/ of the checkout holding the working directory)")
    r.add_argument(ALLOW_FOREIGN, action="store_true",
                   help="use the imported engines even when they are not this checkout's (docs/gate.md)")
    add_common_options(r, flavor=False, json=False)
    r.set_defaults(func=cmd_review)

"""``parity diff --base REF``: the IR changes between a git ref and the working tree.

The golden shards pin both engines to one text, so the Python engine at REF
*is* the golden at REF. A run:

1. lowers every selected (family, config, flavor) with the working tree's
   Python engine (in the gate's worker pool);
2. extracts REF (``git archive``) into a temporary directory and, in a
   subprocess that imports REF's own ``python_engine`` and ``parity.configs``
   (parity/golden/ref_tree.py: the editable install's import redirection switched
   off), lowers every config REF knows at the selected flavors; it sends back
   each outcome's sha256, and the text only where the working tree's sha256
   differs;
3. reports per family and flavor the configs added (in the working tree
   only, or lowered now and rejected at REF), removed, and changed, and
   groups the unified-diff hunks of the changed texts: each distinct hunk
   (its lines, without line numbers) is shown once with the configs it
   applies to.

Exit status: 0 no IR change, 1 changes, 2 refused (not a git checkout, bad
ref, REF's engine cannot be imported).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from parity.golden.change_groups import (ChangeGroup, Grouper, add_change, drop_ssa_numbers,  # noqa: F401
                                         Paint, group_lines, hunks)
from parity.cli.color import enabled as color_enabled
from parity.cli.common import parse_only, select_configs
from parity.golden.diff_page import group_verdicts, markdown_page, verdict_text
from parity.base.escape import shown
from parity.config import CANONICAL_FLAVORS, ConfigError, load_families
from parity.gate.pool import PoolError, WorkerPool
from parity.base.project import ProjectError, find_project_root
from parity.golden.ref_tree import BaseError, lower_at_ref, resolve_ref
from parity.gate.report import canonical_flavor, check_writable, die, progress, split_csv, write_json

def add_base_options(p) -> None:
    """The ``--base`` options of ``parity diff`` (the rest come from add_common_options)."""
    p.add_argument("--base", metavar="REF", default=None,
                   help="show the IR changes between git REF (its own Python engine) and the working tree")
    p.add_argument("--stat", action="store_true", help="with --base: counts only")
    p.add_argument("--json", metavar="PATH", help="with --base: write the changes as JSON to PATH")
    p.add_argument("--ignore-types", action="store_true",
                   help="with --base: group changes that differ only in vector widths and element types")
    p.add_argument("--keep-ssa-numbers", action="store_true",
                   help="with --base: diff the texts as printed (by default every local value's and "
                        "block's number is dropped, %%a_r45 -> %%a_r#, so one inserted instruction is one hunk)")
    p.add_argument("--ignore-ssa-numbers", action="store_true", help=argparse.SUPPRESS)  # the default now
    p.add_argument("--format", choices=("text", "markdown"), default="text",
                   help="with --base: text (default) or a markdown review page (groups, configs; "
                        "oracle verdicts with --oracles) to attach to a pull request")
    p.add_argument("--oracles", action="store_true",
                   help="with --base: run the validity and numerics oracles on the changed entries and "
                        "give each group's verdict")


# -- lowering ------------------------------------------------------------------

def _key(fam: str, cfg: str, fl: str) -> str:
    return f"{fam}/{cfg}@{fl}"


def lower_working(families, flavors, *, workers: int | None, timeout: float) -> dict[str, dict]:
    """Outcomes (with text) of the working tree's Python engine, keyed FAMILY/CONFIG@FLAVOR."""
    units = [(f, c, fl) for f in families for c in f.configs for fl in flavors if c.applies(fl)]
    jobs = [("lower", "python_engine", f.name, dict(c.spec), c.arch, fl) for f, c, fl in units]
    n = min(workers or os.cpu_count() or 1, max(1, len(jobs)))
    with WorkerPool(("python_engine",), workers=n, timeout=timeout) as pool:
        outs = pool.run(jobs, on_crash=lambda job, msg, note: {"status": "crash", "error": msg})
    res = {}
    for (f, c, fl), o in zip(units, outs):
        if not isinstance(o, dict) or "status" not in o:
            o = {"status": "crash", "error": f"gate job failed: {o!r}"}
        if o["status"] == "ok" and "sha256" not in o:
            o["sha256"] = hashlib.sha256(o["text"].encode("utf-8")).hexdigest()
        res[_key(f.name, c.name, fl)] = o
    return res


def lower_ref(root: Path, commit: str, only, flavors, want: dict[str, str], ref: str
              ) -> tuple[list[str], dict[str, dict]]:
    """(REF's families, outcomes keyed FAMILY/CONFIG@FLAVOR) from REF's own Python engine
    (:func:`parity.golden.ref_tree.lower_at_ref`, a ``configs`` request)."""
    doc = lower_at_ref(root, commit, ref, {"kind": "configs", "only": only, "flavors": list(flavors),
                                           "want": want})
    return doc["families"], doc["units"]


# -- comparison ------------------------------------------------------------------

@dataclass
class FamilyDiff:
    family: str
    counts: dict[str, dict[str, int]] = field(default_factory=dict)   # flavor -> kind -> n
    groups: list[ChangeGroup] = field(default_factory=list)          # every differing entry, by change
    new_family: bool = False
    gone_family: bool = False

    def count(self, fl: str, kind: str) -> None:
        c = self.counts.setdefault(fl, {"changed": 0, "added": 0, "removed": 0, "unchanged": 0})
        c[kind] += 1

    @property
    def differs(self) -> bool:
        return any(c["changed"] or c["added"] or c["removed"] for c in self.counts.values())

    @property
    def entries(self) -> int:
        return sum(len(g.entries) for g in self.groups)

    def of_kind(self, *kinds: str) -> list[ChangeGroup]:
        return [g for g in self.groups if g.kind in kinds]


def compare(work: dict[str, dict], ref: dict[str, dict], ref_families: list[str],
            families: list[str], *, ignore_types: bool = False, normalise: bool = True
            ) -> dict[str, FamilyDiff]:
    """FamilyDiff per family of the working tree or REF, its differing entries in
    change groups (parity/golden/change_groups.py). ``normalise``: value numbers dropped
    before diffing (a text equal after it is a renumbered entry); ``ignore_types``:
    every type of a changed line is written T in the group key."""
    out: dict[str, FamilyDiff] = {}
    grouper: dict[str, Grouper] = {}
    for name in sorted(set(families) | {k.split("/", 1)[0] for k in ref}):
        out[name] = FamilyDiff(name, new_family=name not in ref_families, gone_family=name not in families)
        grouper[name] = Grouper(name, ignore_types=ignore_types, normalise=normalise)
    for key in sorted(set(work) | set(ref)):
        fam, rest = key.split("/", 1)
        cfg, fl = rest.rsplit("@", 1)
        out[fam].count(fl, add_change(grouper[fam], cfg, fl, ref.get(key), work.get(key)))
    for name, d in out.items():
        d.groups = grouper[name].groups()
    return out


def totals(diffs: dict[str, FamilyDiff]) -> tuple[int, int]:
    """(change groups, differing entries) over every family."""
    return (sum(len(d.groups) for d in diffs.values()), sum(d.entries for d in diffs.values()))


# -- output ----------------------------------------------------------------------

def report_lines(diffs: dict[str, FamilyDiff], ref: str, commit: str, flavors, *, stat: bool,
                 color: bool, verdicts: dict | None = None) -> list[str]:
    paint = Paint(color)
    lines = [f"IR changes from {shown(ref)} ({commit[:12]}, its own Python engine) to the working tree"]
    width = max([len(n) for n in diffs] + [8])
    for name, d in diffs.items():
        if d.new_family:
            lines.append(paint("1", f"{name}: family does not exist at {shown(ref)}: every config is added"))
        if d.gone_family:
            lines.append(paint("1", f"{name}: family no longer exists: every config is removed"))
        for fl in flavors:
            c = d.counts.get(fl)
            if c is None or (stat and not (c["changed"] or c["added"] or c["removed"])):
                continue
            lines.append(f"{name:<{width}} {fl:<7} changed={c['changed']} added={c['added']} "
                         f"removed={c['removed']} unchanged={c['unchanged']}")
    for name, d in diffs.items():
        if not d.differs:
            continue
        lines.append(paint("1", f"{name}: {d.entries} entr{'y' if d.entries == 1 else 'ies'} "
                                f"in {len(d.groups)} change group(s)"))
        if stat:
            continue
        for i, g in enumerate(d.groups, 1):
            gl = group_lines(g, i, len(d.groups), paint)
            v = verdict_text(verdicts, g)
            lines += gl[:1] + ([f"    {v}"] if v else []) + gl[1:]
    if not any(d.differs for d in diffs.values()):
        lines.append("no IR change")
    groups, entries = totals(diffs)
    lines.append(f"groups: {groups}, entries: {entries}")
    return lines


def to_json(diffs: dict[str, FamilyDiff], ref: str, commit: str) -> dict:
    groups, entries = totals(diffs)
    return {
        "base": ref, "commit": commit, "groups": groups, "entries": entries,
        "families": {
            n: {"new_family": d.new_family, "gone_family": d.gone_family, "counts": d.counts,
                "groups": [g.to_json() for g in d.groups]}
            for n, d in diffs.items()},
    }


def diff_base(ref: str, families, flavors, *, root: Path, workers=None, timeout: float = 30.0,
              narrowed: dict | None = None, ignore_types: bool = False, normalise: bool = True):
    """(commit, {family: FamilyDiff}) of REF against the working tree's Python engine.

    ``narrowed``: {family: True} for families cut down to some configs
    (FAMILY/NAME); REF's other configs of those families are not compared."""
    narrowed = narrowed or {}
    commit = resolve_ref(root, ref)
    work = lower_working(families, flavors, workers=workers, timeout=timeout)
    want = {k: o["sha256"] for k, o in work.items() if o["status"] == "ok"}
    ref_families, ref_units = lower_ref(root, commit, [f.name for f in families], flavors, want, ref)
    # a family narrowed to some configs (FAMILY/NAME) compares only those configs at REF too
    picked = {f.name: {c.name for c in f.configs} for f in families if narrowed.get(f.name)}
    ref_units = {k: v for k, v in ref_units.items()
                 if k.split("/", 1)[0] not in picked
                 or k.split("/", 1)[1].rsplit("@", 1)[0] in picked[k.split("/", 1)[0]]}
    return commit, compare(work, ref_units, ref_families, [f.name for f in families],
                           ignore_types=ignore_types, normalise=normalise)


def cmd_diff_base(args) -> int:
    try:
        root = find_project_root()
        if root is None:
            raise ProjectError(f"--base needs a splitk-parity git checkout at or above {Path.cwd()}")
        if split_csv(args.only) == []:
            raise ValueError("--only names no family (give FAM[,FAM...] or FAMILY/NAME)")
        fams, names = parse_only(args.only)  # families and FAMILY/NAME configs, as everywhere
        families = select_configs(load_families(args.configs, only=fams), names)
        narrowed = {f: True for f in names}
        if args.ref is not None:
            fam, _, name = args.ref.partition("/")
            [family] = [f for f in families if f.name == fam] or load_families(args.configs, only=[fam])
            families = [type(family)(family.name, tuple(c for c in family.configs if c.name == name),
                                     family.source, family.output)] if name else [family]
            if name and not families[0].configs:
                raise ValueError(f"no config {name!r} in family {fam}")
            narrowed = {fam: True} if name else {}
        flavors = CANONICAL_FLAVORS if args.flavor is None else (canonical_flavor(args.flavor, "python",
                                                                                  args.timeout),)
        if args.json:
            check_writable(args.json)
        commit, diffs = diff_base(args.base, families, flavors, root=root, workers=args.jobs,
                                  timeout=args.timeout, narrowed=narrowed,
                                  ignore_types=args.ignore_types, normalise=not args.keep_ssa_numbers)
    except (BaseError, ProjectError, ConfigError, ValueError, PoolError) as exc:
        return die(str(exc))
    verdicts = None
    if args.oracles:
        with progress("oracles") as cb:
            verdicts = group_verdicts(families, [g for d in diffs.values() for g in d.groups],
                                      workers=args.jobs, progress=cb)
    if args.format == "markdown":
        sys.stdout.write(markdown_page(diffs, args.base, commit, flavors, verdicts))
    else:
        color = color_enabled(sys.stdout)  # --color / NO_COLOR (parity/cli/color.py)
        for line in report_lines(diffs, args.base, commit, flavors, stat=args.stat, color=color,
                                 verdicts=verdicts):
            print(line)
    if args.json:
        write_json(args.json, to_json(diffs, args.base, commit))
    return 1 if any(d.differs for d in diffs.values()) else 0

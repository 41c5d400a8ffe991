"""``parity diff --base REF``: the IR changes between a git ref and the working tree.

The golden shards pin both engines to one text, so the Python engine at REF
*is* the golden at REF. A run:

1. lowers every selected (family, config, flavor) with the working tree's
   Python engine (in the gate's worker pool);
2. extracts REF (``git archive``) into a temporary directory and, in a
   subprocess that imports REF's own ``python_engine`` and ``parity.configs``
   (parity/ref_tree.py: the editable install's import redirection switched
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

import difflib
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from parity.color import enabled as color_enabled
from parity.cli_common import parse_only, select_configs
from parity.config import CANONICAL_FLAVORS, ConfigError, load_families
from parity.pool import PoolError, WorkerPool
from parity.project import ProjectError, find_project_root
from parity.ref_tree import BaseError, lower_at_ref, resolve_ref
from parity.report import canonical_flavor, check_writable, die, split_csv, write_json

LIST_LIMIT = 8  # configs named per hunk / per added-removed line before "... and N more"

def add_base_options(p) -> None:
    """The ``--base`` options of ``parity diff`` (the rest come from add_common_options)."""
    p.add_argument("--base", metavar="REF", default=None,
                   help="show the IR changes between git REF (its own Python engine) and the working tree")
    p.add_argument("--stat", action="store_true", help="with --base: counts only")
    p.add_argument("--json", metavar="PATH", help="with --base: write the changes as JSON to PATH")
    p.add_argument("--ignore-ssa-numbers", action="store_true",
                   help="with --base: compare with every local value's number dropped (%%a_r45 -> %%a_r#), "
                        "so one inserted instruction is one hunk; texts that differ only in numbering "
                        "are counted as renumbered")


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
    (:func:`parity.ref_tree.lower_at_ref`, a ``configs`` request)."""
    doc = lower_at_ref(root, commit, ref, {"kind": "configs", "only": only, "flavors": list(flavors),
                                           "want": want})
    return doc["families"], doc["units"]


# -- comparison ------------------------------------------------------------------

def _describe(o: dict | None) -> str:
    if o is None:
        return "absent"
    if o["status"] == "ok":
        return f"lowers ({o.get('kernel')})"
    if o["status"] == "rejected":
        return f"rejected {o['reason']!r}"
    return f"crash {o.get('error')!r}"


# A local value or block name as the printers write it: the hint, then a counter
# (``%a_r45``, ``%acc_in.12``). Dropping the counter keeps the hint.
_SSA_NUMBER = re.compile(r"%([A-Za-z_.][A-Za-z0-9_.]*?)\d+\b")
_LABEL_NUMBER = re.compile(r"^([A-Za-z_.][A-Za-z0-9_.]*?)\d+:", re.M)


def drop_ssa_numbers(text: str) -> str:
    """``text`` with the counter of every ``%name<digits>`` replaced by ``#``:
    two texts that differ only in value numbering become equal."""
    return _LABEL_NUMBER.sub(r"\1#:", _SSA_NUMBER.sub(r"%\1#", text))


def hunks(a: str, b: str) -> list[tuple[str, ...]]:
    """The unified-diff hunks (3 lines of context) of a -> b, each as its lines without the @@ header."""
    out, cur = [], None
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=3):
        if line.startswith("---") or line.startswith("+++"):
            if cur is None:
                continue
        if line.startswith("@@"):
            if cur:
                out.append(tuple(cur))
            cur = []
            continue
        if cur is not None:
            cur.append(line)
    if cur:
        out.append(tuple(cur))
    return out


@dataclass
class FamilyDiff:
    family: str
    counts: dict[str, dict[str, int]] = field(default_factory=dict)   # flavor -> kind -> n
    added: list[tuple[str, str, str]] = field(default_factory=list)   # (config, flavor, what)
    removed: list[tuple[str, str, str]] = field(default_factory=list)
    outcome_changes: list[tuple[str, str, str]] = field(default_factory=list)  # both sides, not two texts
    hunks: dict[tuple[str, ...], list[str]] = field(default_factory=dict)     # hunk -> ["config@flavor"]
    changed_texts: int = 0
    renumbered: list[str] = field(default_factory=list)  # "config@flavor" differing only in SSA numbers
    new_family: bool = False
    gone_family: bool = False

    def count(self, fl: str, kind: str) -> None:
        c = self.counts.setdefault(fl, {"changed": 0, "added": 0, "removed": 0, "unchanged": 0})
        c[kind] += 1

    @property
    def differs(self) -> bool:
        return any(c["changed"] or c["added"] or c["removed"] for c in self.counts.values())


def compare(work: dict[str, dict], ref: dict[str, dict], ref_families: list[str],
            families: list[str], ignore_ssa_numbers: bool = False) -> dict[str, FamilyDiff]:
    """FamilyDiff per family of the working tree or REF. ``ignore_ssa_numbers``:
    hunks are taken on :func:`drop_ssa_numbers` texts; a text equal after it is
    counted changed and listed as renumbered, with no hunk."""
    out: dict[str, FamilyDiff] = {}
    for name in sorted(set(families) | {k.split("/", 1)[0] for k in ref}):
        out[name] = FamilyDiff(name, new_family=name not in ref_families, gone_family=name not in families)
    for key in sorted(set(work) | set(ref)):
        fam, rest = key.split("/", 1)
        cfg, fl = rest.rsplit("@", 1)
        d = out[fam]
        w, r = work.get(key), ref.get(key)
        if r is None or (r["status"] != "ok" and w is not None and w["status"] == "ok"):
            d.count(fl, "added")
            d.added.append((cfg, fl, _describe(w) + ("" if r is None else f", at base {_describe(r)}")))
        elif w is None or (w["status"] != "ok" and r["status"] == "ok"):
            d.count(fl, "removed")
            d.removed.append((cfg, fl, _describe(r) + ("" if w is None else f", now {_describe(w)}")))
        elif w["status"] == r["status"] == "ok":
            if w["sha256"] == r["sha256"]:
                d.count(fl, "unchanged")
                continue
            d.count(fl, "changed")
            d.changed_texts += 1
            a, b = r["text"], w["text"]
            if ignore_ssa_numbers:
                a, b = drop_ssa_numbers(a), drop_ssa_numbers(b)
                if a == b:
                    d.renumbered.append(f"{cfg}@{fl}")
                    continue
            for h in hunks(a, b):
                d.hunks.setdefault(h, []).append(f"{cfg}@{fl}")
        elif (w["status"], w.get("reason"), w.get("error")) == (r["status"], r.get("reason"), r.get("error")):
            d.count(fl, "unchanged")
        else:
            d.count(fl, "changed")
            d.outcome_changes.append((cfg, fl, f"{_describe(r)} -> {_describe(w)}"))
    return out


# -- output ----------------------------------------------------------------------

class _Paint:
    def __init__(self, on: bool):
        self.on = on

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.on else text


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:LIST_LIMIT])
    return shown + (f" ... and {len(items) - LIST_LIMIT} more" if len(items) > LIST_LIMIT else "")


def report_lines(diffs: dict[str, FamilyDiff], ref: str, commit: str, flavors, *, stat: bool,
                 color: bool) -> list[str]:
    paint = _Paint(color)
    lines = [f"IR changes from {ref} ({commit[:12]}, its own Python engine) to the working tree"]
    width = max([len(n) for n in diffs] + [8])
    for name, d in diffs.items():
        if d.new_family:
            lines.append(paint("1", f"{name}: family does not exist at {ref}: every config is added"))
        if d.gone_family:
            lines.append(paint("1", f"{name}: family no longer exists: every config is removed"))
        for fl in flavors:
            c = d.counts.get(fl)
            if c is None:
                continue
            lines.append(f"{name:<{width}} {fl:<7} changed={c['changed']} added={c['added']} "
                         f"removed={c['removed']} unchanged={c['unchanged']}")
    for name, d in diffs.items():
        if not d.differs:
            continue
        lines.append(paint("1", f"{name}: {d.changed_texts} changed text(s) in {len(d.hunks)} distinct hunk(s)"
                           + (f" ({len(d.renumbered)} differ only in SSA numbers)" if d.renumbered else "")
                           + (f", {len(d.outcome_changes)} outcome change(s)" if d.outcome_changes else "")
                           + (f", {len(d.added)} added" if d.added else "")
                           + (f", {len(d.removed)} removed" if d.removed else "")))
        if stat:
            continue
        for label, items in (("added", d.added), ("removed", d.removed), ("outcome", d.outcome_changes)):
            groups: dict[str, list[str]] = {}
            for cfg, fl, what in items:
                groups.setdefault(what, []).append(f"{cfg}@{fl}")
            for what, keys in groups.items():
                lines.append(paint("33", f"  {label}: {what}: {len(keys)} config(s): {_names(keys)}"))
        ordered = sorted(d.hunks.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        for i, (h, keys) in enumerate(ordered, 1):
            lines.append(paint("36", f"  @@ hunk {i}/{len(ordered)}: {len(keys)} config(s): {_names(keys)}"))
            for line in h:
                code = "31" if line.startswith("-") else "32" if line.startswith("+") else ""
                lines.append(("  " + paint(code, line)) if code else "  " + line)
    if not any(d.differs for d in diffs.values()):
        lines.append("no IR change")
    return lines


def to_json(diffs: dict[str, FamilyDiff], ref: str, commit: str) -> dict:
    return {
        "base": ref, "commit": commit,
        "families": {
            n: {"new_family": d.new_family, "gone_family": d.gone_family, "counts": d.counts,
                "added": [{"config": c, "flavor": f, "what": w} for c, f, w in d.added],
                "removed": [{"config": c, "flavor": f, "what": w} for c, f, w in d.removed],
                "outcome_changes": [{"config": c, "flavor": f, "what": w} for c, f, w in d.outcome_changes],
                "renumbered": list(d.renumbered),
                "hunks": [{"lines": list(h), "configs": keys}
                          for h, keys in sorted(d.hunks.items(), key=lambda kv: (-len(kv[1]), kv[0]))]}
            for n, d in diffs.items()},
    }


def diff_base(ref: str, families, flavors, *, root: Path, workers=None, timeout: float = 30.0,
              narrowed: dict | None = None, ignore_ssa_numbers: bool = False):
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
    return commit, compare(work, ref_units, ref_families, [f.name for f in families], ignore_ssa_numbers)


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
                                  ignore_ssa_numbers=args.ignore_ssa_numbers)
    except (BaseError, ProjectError, ConfigError, ValueError, PoolError) as exc:
        return die(str(exc))
    for line in report_lines(diffs, args.base, commit, flavors, stat=args.stat, color=color_enabled(sys.stdout)):
        print(line)
    if args.json:
        write_json(args.json, to_json(diffs, args.base, commit))
    return 1 if any(d.differs for d in diffs.values()) else 0

"""The gate's own commands: ``parity check``, ``write``, ``list``, ``show``
and ``diff`` (docs/gate.md, docs/cli.md); registered on the ``parity`` parser
by :func:`add_command` like every other command module (parity/app/main.py).
"""

from __future__ import annotations

import importlib.util
import difflib
import os
import sys
from pathlib import Path

from parity.golden import shards as G
from parity.golden import pending
from parity.golden.bless import write
from parity.cli.common import Once, add_compile_cache_option, finish, finite_seconds, note_outside_checkout, only_names
from parity.base.escape import shown
from parity.golden.ir_diff import add_base_options, cmd_diff_base
from parity.config import CANONICAL_FLAVORS, ConfigError, load_families
from parity.gate.failure_summary import finding_lines, hint_lines, summary_block
from parity.cli import color
from parity.cli.color import paint, verdict
from parity.base.suggest import did_you_mean
from parity.gate.locate import located_lines, locate, locate_outcomes, run_origins
from parity.gate.pool import PoolError, WorkerPool
from parity.base.project import ProjectError, resolve_golden_dir
from parity.gate.provenance import ALLOW_FOREIGN
from parity.gate.report import (add_common_options, canonical_flavor, die, failure_lines, parse_engines,
                           progress, select, summary_lines)
from parity.gate.runner import engine_module, lower_text, run_gate, resolve_flavors


# -- helpers -----------------------------------------------------------------

def golden_dir(args) -> Path:
    """--golden-dir, else the golden/ of the checkout holding the working
    directory (parity.base.project); ProjectError outside any checkout."""
    return resolve_golden_dir(getattr(args, "golden_dir", None))


def _resolver(engine: str, timeout: float):
    cache: dict[str, str | None] = {f: f for f in CANONICAL_FLAVORS}

    def resolve(name: str) -> str | None:
        if name not in cache:
            cache.update(resolve_flavors([name], engine, timeout=timeout))
        return cache[name]
    return resolve


def _load_shards(gdir: Path, names, resolve, layouts: dict | None = None) -> dict:
    """{family: flavors or None}; ``layouts`` collects {family: layout problem} of shards
    not in the canonical layout (golden.layout_problem)."""
    out = {}
    for n in names:
        out[n], problem = G.load_shard_layout(gdir, n, resolve)
        if problem and layouts is not None:
            layouts[n] = problem
    return out


def _run(families, flavors, engines, args, pool: WorkerPool | None = None):
    with progress("parity") as cb:
        return run_gate(families, engines=engines, flavors=flavors, timeout=args.timeout,
                        workers=args.jobs, progress=cb, pool=pool)


def _early_pool(args) -> WorkerPool | None:
    """The gate's worker pool with one worker already starting (it imports the engines
    while the configs and the golden shards are read; any run has at least one job),
    or None when the engines option is unusable (select() reports it)."""
    try:
        engines = parse_engines(args.engines)
    except ValueError:
        return None
    pool = WorkerPool(tuple(dict.fromkeys(engine_module(e) for e in engines)),
                      workers=args.jobs or os.cpu_count() or 1, timeout=args.timeout)
    pool.start(1)
    return pool


def golden_findings(report, shards: dict, flavors, orphan_shards: dict,
                    names: dict | None = None) -> list[G.Finding]:
    """MISSING / ORPHAN / CHANGED / CONFLICT of ``report`` against loaded shards. ``names``
    ({family: config names}, from --only FAMILY/NAME): only those configs of
    that family were run, so no other entry of it is an orphan."""
    names = names or {}
    out: list[G.Finding] = []
    seen = set()
    for r in report.results:
        seen.add((r.family, r.flavor, r.config))
        shard = shards.get(r.family) or {}
        gold = shard.get(r.flavor, {}).get(r.config)
        if G.is_conflict(gold):
            out.append(G.Finding(G.CONFLICT, r.family, r.config, r.flavor, G.describe_entry(gold)))
            continue
        if gold is None:
            out.append(G.Finding(G.MISSING, r.family, r.config, r.flavor,
                                 f"{r.verdict}; no golden entry"))
            continue
        cur = r.golden_entry()
        if cur is not None and cur != gold:
            out.append(G.Finding(G.CHANGED, r.family, r.config, r.flavor, G.describe_change(gold, cur)))
    for fam, shard in shards.items():
        for fl, entries in sorted((shard or {}).items()):
            if fl not in CANONICAL_FLAVORS:
                for cfg in sorted(entries):
                    kind = G.CONFLICT if G.is_conflict(entries[cfg]) else G.ORPHAN
                    out.append(G.Finding(kind, fam, cfg, fl, "flavor no longer exists"))
                continue
            if fl not in flavors:
                continue
            for cfg in sorted(entries):
                if fam in names and cfg not in names[fam]:
                    continue
                if (fam, fl, cfg) not in seen and G.is_conflict(entries[cfg]):
                    out.append(G.Finding(G.CONFLICT, fam, cfg, fl, G.describe_entry(entries[cfg])))
                elif (fam, fl, cfg) not in seen:
                    out.append(G.Finding(G.ORPHAN, fam, cfg, fl, "config no longer exists at this flavor"))
    for fam, shard in orphan_shards.items():
        n = len(out)
        for fl, entries in sorted(shard.items()):
            for cfg in sorted(entries):
                kind = G.CONFLICT if G.is_conflict(entries[cfg]) else G.ORPHAN
                out.append(G.Finding(kind, fam, cfg, fl, "family no longer exists"))
        if len(out) == n:  # an orphan shard is reported even when it holds no entry
            out.append(G.Finding(G.ORPHAN, fam, "-", "-", "family no longer exists (shard without entries)"))
    return out


def disagreement_lines(report, shards: dict) -> dict:
    """{family: [line]} for configs the two engines disagree on (no agreed entry, so
    nothing was compared with golden): which engine still matches the blessed
    entry, i.e. which side of the disagreement is the change."""
    out: dict[str, list[str]] = {}
    for r in report.results:
        if r.golden_entry() is not None:
            continue
        gold = (shards.get(r.family) or {}).get(r.flavor, {}).get(r.config)
        if gold is None or G.is_conflict(gold):
            continue  # MISSING / CONFLICT are findings of their own
        sides = [f"{label} {'matches golden' if e == gold else 'differs from golden'}"
                 for label, e in zip(report.labels, r.engine_entries())]
        out.setdefault(r.family, []).append(f"{r.config}@{r.flavor}: {r.verdict}, " + ", ".join(sides))
    return out


def _split_ref(ref: str) -> tuple[str, str]:
    if "/" not in ref:
        raise ValueError(f"expected FAMILY/NAME, got {ref!r}")
    fam, name = ref.split("/", 1)
    return fam, name


def _find_config(args, ref: str):
    fam, name = _split_ref(ref)
    [family] = load_families(args.configs, only=[fam])
    try:
        return family, family.get(name)
    except KeyError:
        known = [c.name for c in family.configs]
        listed = ", ".join(known[:8]) + (f", ... ({len(known)} configs; `parity list --only {fam}`)"
                                         if len(known) > 8 else "")
        raise ValueError(f"no config {name!r} in family {fam}{did_you_mean(name, known)} "
                         f"(known: {listed or 'none'})") from None


def _locator(args, report, engines):
    """--origin: ``locate(result) -> lines`` for a MISMATCH example (both engines rerun in origin mode)."""
    configs = {(f.name, c.name): c for f in report.families for c in f.configs}

    def run(r) -> list[str]:
        cfg = configs[(r.family, r.config)]
        return located_lines(locate(r.family, cfg.spec, cfg.arch, r.flavor, engines, timeout=args.timeout),
                             report.labels, indent="      ")
    return run


def _save_pending(args, gdir: Path, report, shards: dict, families, flavors) -> int:
    """Pending entries for ``parity review`` (parity/golden/pending.py) of the families this check ran
    whole; 0 under CI, for a narrowed run, or when they cannot be written (said on one line)."""
    if tuple(flavors) != CANONICAL_FLAVORS or not Path(gdir).is_dir():
        return 0
    whole = {f.name for f in families} - set(only_names(args))
    try:
        return pending.save_from_check(gdir, report, shards, whole)
    except OSError as exc:
        print(f"pending: not written ({exc.strerror or exc}); `parity review` needs them")
        return 0


# -- subcommands -------------------------------------------------------------

def cmd_check(args) -> int:
    pool = _early_pool(args)
    try:
        return _check(args, pool)
    finally:
        if pool is not None:
            pool.close()


def _check(args, pool: WorkerPool | None) -> int:
    try:
        families, flavors, engines = select(args)
        gdir = golden_dir(args)
        resolve = _resolver(engines[0], args.timeout)
        layouts: dict[str, str] = {}
        shards = _load_shards(gdir, [f.name for f in families], resolve, layouts)
        orphan_shards = {}
        if not args.only:
            known = {f.name for f in families}
            for name in G.shard_families(gdir):
                if name not in known:
                    s = _load_shards(gdir, [name], resolve, layouts)[name]
                    # every flavor the run checks, and any flavor no table knows
                    orphan_shards[name] = {fl: e for fl, e in (s or {}).items()
                                           if fl in flavors or fl not in CANONICAL_FLAVORS}
        report = _run(families, flavors, engines, args, pool)
    except (ConfigError, ValueError, G.GoldenError, PoolError, ProjectError) as exc:
        return die(str(exc))
    findings = golden_findings(report, shards, flavors, orphan_shards, only_names(args))
    for line in summary_lines(report):
        print(line)
    groups_text, groups = summary_block(report, shards, _locator(args, report, engines) if args.origin else None)
    for line in (failure_lines(report, limit=len(report.results)) if args.full else groups_text):
        print(line)
    by_shard: dict[str, list[G.Finding]] = {}
    for f in findings:
        by_shard.setdefault(f.family, []).append(f)
    disagree = disagreement_lines(report, shards)
    for fam in sorted(set(shards) | set(orphan_shards)):
        fs = by_shard.get(fam, [])
        path = G.shard_path(gdir, fam)
        counts = {k: sum(1 for f in fs if f.kind == k) for k in G.FINDING_KINDS}
        parts = [f"{v} {k}" for k, v in counts.items() if v]
        if disagree.get(fam):
            parts.append(f"{len(disagree[fam])} not compared (engines disagree)")
        state = ", ".join(parts) or "clean"
        if shards.get(fam) is None and fam not in orphan_shards:
            state += " (shard does not exist)"
        if fam in layouts:
            state += f"; {layouts[fam]}: run `parity write` to rewrite it"
        print(f"golden {shown(path.name)}: {state}")
        if not args.full:
            for line in finding_lines(fs):
                print(line)
            continue
        for f in fs:
            print(f"  {f}")
        for line in disagree.get(fam, []):
            print(f"  {line}")
    green = report.green and not findings and not layouts
    for p in G.stale_temp_files(gdir):
        print(f"golden: stale temp file {shown(p.name)} (left by a killed `parity write`; "
              "the next `parity write` removes it)")
    npending = _save_pending(args, gdir, report, shards, families, flavors)
    if npending:
        print(f"pending: {npending} entr{'y' if npending == 1 else 'ies'} left in {gdir}/*.json.new; "
              "review them with `parity review`")
    for line in hint_lines(groups, report.labels):
        print(line)
    if any(f.kind == G.CONFLICT for f in findings):
        print("hint: CONFLICT entries are merge conflicts left by `parity merge-golden`; "
              "run `parity write` to regenerate them, then commit golden/")
    elif findings:
        print("hint: if the change is intended, review it with `parity diff --base HEAD`, "
              "run `parity write` and commit golden/")
    print(f"RESULT: {verdict('GREEN' if green else 'RED', sys.stdout)}")
    doc = report.to_json()
    doc["golden"] = [f.to_json() for f in findings]
    doc["summary_groups"] = [g.to_json() for g in groups]
    doc["golden_dir"] = str(gdir)
    doc["golden_layout"] = dict(sorted(layouts.items()))
    return finish(args, "check", green, doc)


def cmd_write(args) -> int:
    if os.environ.get("CI"):
        return die("parity write refuses to run when CI is set (goldens are blessed by a person, "
                   "not by CI); run `parity check` instead")
    try:
        families, flavors, engines = select(args)
        gdir = golden_dir(args)
        resolve = _resolver(engines[0], args.timeout)
    except (ConfigError, ValueError, PoolError, ProjectError) as exc:
        return die(str(exc))
    try:
        return write(args, families, flavors, engines, gdir, resolve,
                     lambda: _run(families, flavors, engines, args))
    except (ConfigError, ValueError, PoolError, G.GoldenError) as exc:
        return die(str(exc))
    except OSError as exc:  # --json, or any other file the OS refuses: one line, never a traceback
        return die(f"parity write: {shown(exc.filename or '')}: {shown(exc.strerror or exc)}")


def cmd_list(args) -> int:
    note_outside_checkout()
    try:
        families, flavors, engines = select(args)
        report = _run(families, flavors, engines, args)
    except (ConfigError, ValueError, PoolError) as exc:
        return die(str(exc))
    res = {(r.family, r.config, r.flavor): r for r in report.results}
    rows = []
    for fam in families:
        if not fam.configs:
            print(f"{shown(fam.name)}: (no configs)")
        for c in fam.configs:
            cells = []
            verdicts = {}
            for fl in flavors:
                r = res.get((fam.name, c.name, fl))
                cells.append(f"{fl}:{r.verdict if r else '-'}")
                verdicts[fl] = r.verdict if r else None
            print(f"{shown(fam.name)}/{shown(c.name):<32} {shown(c.arch):<8} {'  '.join(cells)}")
            rows.append({"family": fam.name, "config": c.name, "arch": c.arch, "verdicts": verdicts})
    # list reports; its exit status says whether every listed verdict passes
    return finish(args, "list", report.green, {"flavors": list(flavors), "configs": rows})


def cmd_show(args) -> int:
    if importlib.util.find_spec(engine_module(args.engine)) is None:
        return die(f"--engine: unknown engine '{shown(args.engine)}' (python or cpp)")
    try:
        fam, cfg = _find_config(args, args.ref)
        flavor = canonical_flavor(args.flavor, args.engine, args.timeout)
        out = lower_text(fam.name, cfg, flavor, args.engine, timeout=args.timeout)
    except (ConfigError, ValueError, PoolError) as exc:
        return die(str(exc))
    if out["status"] == "ok":
        sys.stdout.write(out["text"])
        return 0
    if out["status"] == "rejected":
        print(f"{shown(args.engine)}: rejected: {shown(out['reason'], limit=2000)}", file=sys.stderr)
        return 1
    print(f"{shown(args.engine)}: CRASH: {shown(out.get('error'), limit=2000)}", file=sys.stderr)
    return 1


def cmd_diff(args) -> int:
    if args.base is not None:
        if args.origin:
            return die("parity diff: --origin locates a difference between the two engines (FAMILY/NAME), "
                       "not one against --base")
        return cmd_diff_base(args)
    if args.ref is None:
        return die("parity diff wants FAMILY/NAME (the two engines' IR) or --base REF (the IR changes since REF)")
    base_only = [o for o, on in (("--stat", args.stat), ("--json", args.json), ("--ignore-types", args.ignore_types),
                                 ("--keep-ssa-numbers", args.keep_ssa_numbers), ("--oracles", args.oracles),
                                 ("--format", args.format != "text"), ("--only", args.only is not None)) if on]
    if base_only:  # silently ignored, `diff NAME --json F` wrote no F and said nothing
        return die(f"parity diff FAMILY/NAME: {base_only[0]} goes with --base REF (the IR changes since REF)")
    if args.flavor is None:
        args.flavor = "llvm23"
    try:
        engines = parse_engines(args.engines)
        fam, cfg = _find_config(args, args.ref)
        flavor = canonical_flavor(args.flavor, engines[0], args.timeout)
        mods = tuple(dict.fromkeys(engine_module(e) for e in engines))
        with WorkerPool(mods, workers=2, timeout=args.timeout) as pool:
            if args.origin:  # origin mode: the same bytes plus each line's builder call (parity/gate/locate.py)
                outs = run_origins(pool, fam.name, cfg.spec, cfg.arch, flavor, engines)
            else:
                outs = [lower_text(fam.name, cfg, flavor, e, timeout=args.timeout, pool=pool) for e in engines]
    except (ConfigError, ValueError, PoolError) as exc:
        return die(str(exc))
    bad = False
    for e, o in zip(engines, outs):
        if o["status"] == "rejected":
            print(f"{shown(e)}: rejected: {shown(o['reason'], limit=2000)}")
        elif o["status"] != "ok":
            print(f"{shown(e)}: CRASH: {shown(o.get('error'), limit=2000)}")
            bad = True
    if bad:
        return 1
    a, b = outs
    if a["status"] != b["status"] or a.get("reason") != b.get("reason"):
        return 1
    if a["status"] == "rejected":
        return 0
    ref = f"{shown(fam.name)}/{shown(cfg.name)}@{shown(flavor)}"
    diff = list(difflib.unified_diff(a["text"].splitlines(keepends=True), b["text"].splitlines(keepends=True),
                                     fromfile=f"{engines[0]}:{ref}", tofile=f"{engines[1]}:{ref}"))
    if not diff:
        print(f"identical: {ref} ({a['bytes']} bytes, sha256 {a['sha256']})", file=sys.stderr)
        return 0
    if args.origin:
        for line in located_lines(locate_outcomes(outs), engines, indent=""):
            print(line)
    for line in diff:
        text = line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        code = {"-": color.RED, "+": color.GREEN, "@": color.YELLOW}.get(line[:1]) if not line.startswith(
            ("---", "+++")) else color.BOLD
        sys.stdout.write(paint(text[:-1], code, sys.stdout) + "\n" if code else text)
    return 1


# -- parser ------------------------------------------------------------------

def _allow_foreign(p) -> None:
    p.add_argument(ALLOW_FOREIGN, action="store_true",
                   help="use the imported engines even when they are not this checkout's (docs/gate.md)")


def add_command(sub) -> None:
    c = sub.add_parser("check", help="byte identity and goldens in one verdict")
    add_common_options(c)
    _allow_foreign(c)
    c.add_argument("--golden-dir", metavar="DIR", action=Once,
                   help="golden shard directory (default: golden/ of the checkout holding the working directory)")
    c.add_argument("--origin", action="store_true",
                   help="rerun each MISMATCH group's example with origin recording and name the builder call "
                        "behind its first differing line in both engines")
    c.add_argument("--full", action="store_true",
                   help="list every failing entry and golden finding instead of the grouped summary")
    c.set_defaults(func=cmd_check)

    w = sub.add_parser("write", help="re-bless golden shards from what both engines agree on")
    add_common_options(w)
    _allow_foreign(w)
    w.add_argument("--golden-dir", metavar="DIR", action=Once,
                   help="golden shard directory (default: golden/ of the checkout holding the working directory)")
    w.add_argument("--lock-timeout", type=finite_seconds("--lock-timeout"), default=G.LOCK_TIMEOUT,
                   metavar="S", help=f"seconds to wait for the golden lock (default {G.LOCK_TIMEOUT:g})")
    w.add_argument("--no-oracles", action="store_true",
                   help="bless without running the validity and numerics oracles on the changed configs")
    w.add_argument("--mode", choices=("all", "new"), default="all",
                   help="all: every entry that changed or is new (default); new: only entries with no "
                        "golden entry yet (MISSING), every existing entry kept")
    add_compile_cache_option(w)
    w.set_defaults(func=cmd_write)

    ls = sub.add_parser("list", help="configs with their verdicts")
    add_common_options(ls)
    ls.set_defaults(func=cmd_list)

    s = sub.add_parser("show", help="print one engine's IR for a config")
    s.add_argument("ref", metavar="FAMILY/NAME", help="the config to lower")
    s.add_argument("--flavor", default="llvm23", help="flavor (default llvm23)")
    s.add_argument("--engine", default="python", help="python or cpp (default python)")
    add_common_options(s, flavor=False, only=False, json=False, jobs=False)
    s.set_defaults(func=cmd_show)

    d = sub.add_parser("diff", help="unified diff of the two engines' IR for a config; "
                                    "--base REF: the IR changes since a git ref")
    d.add_argument("ref", metavar="FAMILY/NAME", nargs="?",
                   help="the config whose two engines' IR to compare; with --base: the config (or FAMILY) "
                        "whose IR changes to show (default: every config)")
    d.add_argument("--flavor", default=None, help="flavor (default llvm23; with --base: all)")
    d.add_argument("--origin", action="store_true",
                   help="FAMILY/NAME: lower in origin mode and first print the first differing line with the "
                        "builder call behind it in each engine (python_engine/...py:LINE, cpp_engine/src/...cpp:LINE)")
    add_base_options(d)
    add_common_options(d, flavor=False, json=False)
    _allow_foreign(d)
    d.set_defaults(func=cmd_diff)

"""The gate's own commands: ``parity check``, ``write``, ``list``, ``show``
and ``diff`` (docs/gate.md, docs/cli.md); registered on the ``parity`` parser
by :func:`add_command` like every other command module (parity/app/main.py).
"""

from __future__ import annotations

from parity.base.ci import is_ci

import importlib.util
import difflib
import os
import sys
from pathlib import Path

from parity.golden import conflict_sides as CS
from parity.golden import shards as G
from parity.golden import pending
from parity.app import check_changed as CC
from parity.app import check_shard as S
from parity.app import ci_output as CI
from parity.golden.bless import write
from parity.golden.verdict import CheckVerdict, assess
from parity.cli.common import (Once, add_compile_cache_option, configured_families, finish, finite_seconds, nonempty,
                               note_outside_checkout, only_names)
from parity.base.escape import shown
from parity.golden.ir_diff import add_base_options, cmd_diff_base
from parity.config import CANONICAL_FLAVORS, DEFAULT_PACKAGE, ConfigError, load_families
from parity.gate.failure_summary import block_lines, finding_lines, hint_lines
from parity.cli import color
from parity.cli.color import paint, verdict
from parity.base.suggest import did_you_mean
from parity.gate.locate import located_lines, locate, locate_outcomes, run_origins
from parity.gate.pool import PoolError, WorkerPool
from parity.base.project import ProjectError, golden_dir_error, resolve_golden_dir
from parity.gate.provenance import ALLOW_FOREIGN
from parity.gate.report import (add_common_options, canonical_flavor, die, parse_engines,
                           progress, select, summary_lines)
from parity.gate.runner import engine_module, lower_text, run_gate, resolve_flavors


# -- helpers -----------------------------------------------------------------

def golden_dir(args) -> Path:
    """--golden-dir, else the golden/ of the checkout holding the working
    directory (parity.base.project); ProjectError outside any checkout."""
    given = getattr(args, "golden_dir", None)
    try:
        return resolve_golden_dir(given, families=configured_families(args))
    except ProjectError as exc:  # worded as argparse words --golden-dir's other errors
        raise ProjectError(golden_dir_error(exc, args.command, given)) from None


def _resolver(engine: str, timeout: float):
    cache: dict[str, str | None] = {f: f for f in CANONICAL_FLAVORS}

    def resolve(name: str) -> str | None:
        if name not in cache:
            cache.update(resolve_flavors([name], engine, timeout=timeout))
        return cache[name]
    return resolve


def _load_shards(gdir: Path, names, resolve, layouts: dict | None = None, notes: list | None = None) -> dict:
    """{family: flavors or None}; ``layouts`` collects {family: layout problem} of shards
    not in the canonical layout (golden.layout_problem), ``notes`` the note of each shard
    read as LF from CRLF line ends (golden.crlf_note)."""
    out = {}
    for n in names:
        out[n], problem = G.load_shard_layout(gdir, n, resolve, notes)
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


def _split_ref(ref: str) -> tuple[str, str]:
    if "/" not in ref:
        raise ValueError(f"expected FAMILY/NAME, got {ref!r}")
    fam, name = ref.split("/", 1)
    if not fam or not name:  # before: "unknown family:  (known: ...)" for "/NAME"
        raise ValueError(f"expected FAMILY/NAME, got {ref!r} (empty {'FAMILY' if not fam else 'NAME'})")
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


def _group_locator(args, report, engines):
    """For --annotations: ``locate(result) -> Located`` of a MISMATCH example (parity/gate/locate.py)."""
    configs = {(f.name, c.name): c for f in report.families for c in f.configs}

    def run(r):
        cfg = configs.get((r.family, r.config))
        if cfg is None:
            return None
        return locate(r.family, cfg.spec, cfg.arch, r.flavor, engines, timeout=args.timeout)
    return run


def _save_pending(args, gdir: Path, report, shards: dict, families, flavors) -> int:
    """Pending entries for ``parity review`` (parity/golden/pending.py) of the families this check ran
    whole; 0 under CI, for a narrowed run, or when they cannot be written (said on one line)."""
    if tuple(flavors) != CANONICAL_FLAVORS or not Path(gdir).is_dir():
        return 0
    whole = {f.name for f in families} - set(only_names(args))
    try:
        return pending.save_from_check(gdir, report, shards, whole)
    except pending.PendingTooMany as exc:  # issue 39: review could not read it; the line says what clears it
        print(f"pending: not written: {exc}")
        return 0
    except (OSError, pending.PendingError) as exc:
        print(f"pending: not written ({shown(getattr(exc, 'strerror', None) or exc)}); `parity review` needs them")
        return 0


# -- subcommands -------------------------------------------------------------

def _narrow_changed(args, command: str) -> int | None:
    """--changed / --since of check and write: ``args.only`` set to the configs the edit
    reached (parity/app/check_changed.py); an exit status when there is nothing to run."""
    if not (args.changed or args.since is not None):
        return None
    if not args.changed:  # before: `check --since HEAD` alone ran the full check, the option unseen
        return die(f"parity {command}: --since REV goes with --changed (the revision the edit is measured "
                   "from); add --changed, or drop --since")
    if args.only or getattr(args, "shard", None) is not None:
        return die(f"parity {command} --changed: {'--only' if args.only else '--shard'} cannot be combined "
                   "with it (--changed picks the configs)")
    if getattr(args, "configs", DEFAULT_PACKAGE) != DEFAULT_PACKAGE:
        # the edit map records the default package's configs: another package's names never match
        return die(f"parity {command} --changed: --configs {shown(args.configs)} cannot be combined with it "
                   f"(the edit map records the configs of {DEFAULT_PACKAGE})")
    try:
        if CC.narrow(args) == CC.NOTHING:
            if command == "write":
                print("0 golden entries changed (no config reached by the edit)")
                return finish(args, "write", True, {"changed": "nothing to write"})
            print(f"RESULT: {verdict('GREEN', sys.stdout)} (no config to check)")
            return finish(args, "check", True, {"changed": "nothing to check"})
    except (CC.CH.ChangedError, ConfigError, RuntimeError, OSError) as exc:
        return die(str(exc))
    return None


def cmd_check(args) -> int:
    stop = _narrow_changed(args, "check")
    if stop is not None:
        return stop
    pool = _early_pool(args)
    try:
        return _check(args, pool)
    finally:
        if pool is not None:
            pool.close()


def _check(args, pool: WorkerPool | None) -> int:
    shard = None
    try:
        families, flavors, engines = select(args)
        if args.shard is not None:  # --shard I/N: this shard's configs (parity/app/check_shard.py)
            shard = S.plan(families, flavors, *S.parse_shard(args.shard))
            families = S.shard_families(families, shard)
        gdir = golden_dir(args)
        resolve = _resolver(engines[0], args.timeout)
        layouts: dict[str, str] = {}
        notes: list[str] = []
        shards = _load_shards(gdir, [f.name for f in families], resolve, layouts, notes)
        orphan_shards = {}
        if not args.only:
            known = shard.families if shard else {f.name for f in families}
            for name in G.shard_families(gdir):
                if name not in known:
                    s = _load_shards(gdir, [name], resolve, layouts, notes)[name]
                    # every flavor the run checks, and any flavor no table knows
                    orphan_shards[name] = {fl: e for fl, e in (s or {}).items()
                                           if fl in flavors or fl not in CANONICAL_FLAVORS}
        report = _run(families, flavors, engines, args, pool)
        report.empty_shard = shard is not None and shard.empty
    except (ConfigError, ValueError, G.GoldenError, PoolError, ProjectError) as exc:
        return die(str(exc))
    v = assess(report, shards, flavors, orphan_shards, gdir, names=only_names(args), layouts=layouts,
               locate=_locator(args, report, engines) if args.origin else None)
    if shard is not None:
        S.apply_shard(v, shard)
    for line in notes:  # CRLF shards read as LF (issue 39): said, not a finding
        print(line)
    _print_check(args, v)
    if shard is not None:
        print(shard.line())
    if args.record_costs:
        print(f"costs: {S.record_costs(report, args.record_costs)} configs measured -> {shown(args.record_costs)}")
    stop = CI.write_outputs(args, v, shard.label if shard else None, _group_locator(args, report, engines))
    if stop is not None:
        return stop
    npending = 0 if shard else _save_pending(args, gdir, report, shards, families, flavors)
    if npending:
        print(f"pending: {npending} entr{'y' if npending == 1 else 'ies'} left in {shown(gdir)}/*.json.new; "
              "review them with `parity review`")
    for line in hint_lines(v.groups, report.labels):
        print(line)
    if any(f.kind == G.CONFLICT for f in v.findings):
        print("hint: CONFLICT entries are merge conflicts left by `parity merge-golden`; "
              "once the engine sources hold no conflict (python_engine/, cpp_engine/src/), "
              "run `parity write` to regenerate them, then commit golden/")
    elif v.findings:
        print("hint: if the change is intended, review it with `parity diff --base HEAD`, "
              "run `parity write` and commit golden/")
    print(f"RESULT: {verdict('GREEN' if v.green else 'RED', sys.stdout)}")
    return finish(args, "check", v.green, v.to_json())


def _print_check(args, v: CheckVerdict) -> None:
    """The body of ``parity check``'s output: the family summary lines, the grouped
    failures (every failing entry under --full), one line per golden shard with
    its findings, and the stale temp files."""
    report = v.report
    for line in summary_lines(report):
        print(line)
    body = ([line for e in v.entries if not e.result.passed for line in e.lines(report.labels)]
            if args.full else block_lines(v.groups, report.labels, v.origin if args.origin else None))
    for line in body:
        print(line)
    for s in v.shards:
        print(f"golden {shown(s.path.name)}: {s.state()}")
        if not args.full:
            run = [e for e in v.entries if e.result.family == s.family and e.finding is not None
                   and e.finding.kind == G.CONFLICT]
            if run:  # after a merge: which side the engines reproduce, not each key's hashes
                print(CS.summary_line(s.family, CS.count((e.golden, e.result.golden_entry()) for e in run)))
            done = {id(e.finding) for e in run}
            for line in finding_lines([f for f in s.findings if id(f) not in done]):
                print(line)
            continue
        for f in s.findings:
            print(f"  {f}")
        for line in s.not_compared:
            print(f"  {line}")
    for p in v.stale_temps:
        print(f"golden: stale temp file {shown(p.name)} (left by a killed `parity write` or `parity check`; "
              "the next `parity write` removes it)")


def cmd_write(args) -> int:
    if is_ci():
        return die("parity write refuses to run when CI is set (goldens are blessed by a person, "
                   "not by CI); run `parity check` instead")
    stop = _narrow_changed(args, "write")
    if stop is not None:
        return stop
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
        return die(f"parity write: {shown(exc.filename or 'standard output')}: {shown(exc.strerror or exc)}")


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
    c.add_argument("--golden-dir", metavar="DIR", action=Once, type=nonempty("--golden-dir", "a directory"),
                   help="golden shard directory (default: golden/ of the checkout holding the working directory)")
    c.add_argument("--origin", action="store_true",
                   help="rerun each MISMATCH group's example with origin recording and name the builder call "
                        "behind its first differing line in both engines")
    c.add_argument("--full", action="store_true",
                   help="list every failing entry and golden finding instead of the grouped summary")
    CI.add_check_options(c)
    CC.add_options(c)
    c.set_defaults(func=cmd_check)

    w = sub.add_parser("write", help="re-bless golden shards from what both engines agree on")
    add_common_options(w)
    _allow_foreign(w)
    w.add_argument("--golden-dir", metavar="DIR", action=Once, type=nonempty("--golden-dir", "a directory"),
                   help="golden shard directory (default: golden/ of the checkout holding the working directory)")
    w.add_argument("--lock-timeout", type=finite_seconds("--lock-timeout"), default=G.LOCK_TIMEOUT,
                   metavar="S", help=f"seconds to wait for the golden lock (default {G.LOCK_TIMEOUT:g})")
    w.add_argument("--no-oracles", action="store_true",
                   help="bless without running the validity and numerics oracles on the changed configs")
    w.add_argument("--mode", choices=("all", "new"), default="all",
                   help="all: every entry that changed or is new (default); new: only entries with no "
                        "golden entry yet (MISSING), every existing entry kept")
    add_compile_cache_option(w)
    CC.add_options(w)
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

"""``parity perf [--only X,..] [--flavor F] [-j N] [--json PATH] [--base REF] [--check-goals]``:
the static performance report of the compiled conv kernels (docs/perf.md).

Exit status: 0 the report ran (whatever it measured); 1 only with
``--check-goals`` when a goal is not met or none was judged; 2 bad input (unknown family or
config, a family the report does not measure, a bad ``--base`` ref,
``llvm-mca-22`` missing): one ``error:`` line, nothing run or written.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from parity.cli.common import add_compile_cache_option, add_options, die, finish, jobs_of, progress
from . import banks as BK, barrier as BAR, build as B, layers as L, mca as MCA, run as R, targets as T
from .measure import attach_bank_conflicts
from .table import COMPARE_HEAD, compare_rows, render, report_rows
from parity.config import ConfigError
from parity.catalog.emit import default_catalog
from parity.base.escape import shown
from parity.golden.ref_tree import BaseError, resolve_ref
from parity.catalog.miopen import ProblemInputError
from parity.gate.pool import PoolError
from parity.base.project import ProjectError, find_project_root
from parity.gate.report import select

#: ``--layers`` given without a path: the shipped catalog (an explicit empty path is an error)
_SHIPPED = object()

#: The families the report measures (--only may narrow to these or their configs).
FAMILIES = ("conv_implicit_gemm", "conv_fwd_split_k_reduce")
DEFAULT_FLAVOR = "llvm23"


def add_command(sub) -> None:
    p = sub.add_parser("perf", help="static performance report of the compiled conv kernels "
                                    "(main-loop mix, llvm-mca cycles, occupancy; docs/perf.md)")
    add_options(p, only="configs", flavor=True, flavor_default=DEFAULT_FLAVOR)
    p.add_argument("--base", metavar="REF", default=None,
                   help="also measure git REF's kernels (its own Python engine) and print before/after tables")
    p.add_argument("--layers", nargs="?", const=_SHIPPED, default=None, metavar="CATALOG",
                   help="also predict every layer of CATALOG (default: the shipped catalog) with the perf "
                        "model: each admitted candidate, the choice, the runner-up, the seed's choice")
    p.add_argument("--check-goals", action="store_true",
                   help="exit 1 when a goal is not met or none was judged (default: report only, exit 0)")
    add_compile_cache_option(p)
    p.set_defaults(func=cmd_perf)


#: flavors whose text llvmlite's LLVM 22 does not accept (llvm20 text fails its
#: verifier: "Intrinsic has incorrect argument type! ptr
#: @llvm.amdgcn.make.buffer.rsrc.p1"); docs/perf.md
UNCOMPILABLE = ("llvm20",)


def _select(args):
    if args.only is None:
        args.only = ",".join(FAMILIES)
    families, flavors, _ = select(args)
    other = [f.name for f in families if f.name not in FAMILIES]
    if other:
        raise ValueError(f"--only: perf measures {', '.join(FAMILIES)}, not {', '.join(other)}")
    if flavors[0] in UNCOMPILABLE:
        raise ValueError(f"--flavor {flavors[0]}: perf compiles with llvmlite's LLVM 22, which rejects "
                         f"{flavors[0]} text (its intrinsic signatures are LLVM 20's, verified by opt-19 "
                         f"in parity verify); measure llvm22 or llvm23")
    return families, flavors[0]


@dataclass
class _Run:
    """One perf run's measurements: the working tree's side, the base's (with
    ``--base``), the bank-conflict reports and the layer predictions (``--layers``)."""
    flavor: str
    tool: str
    units: list
    side: object
    base: object = None
    bank_counts: dict = field(default_factory=dict)
    bank_reports: dict = field(default_factory=dict)
    layers: object = None
    catalog: str = ""


def cmd_perf(args) -> int:
    """``parity perf``: measure, print the report, write ``--json``; exit status in
    the module docstring."""
    t0 = time.perf_counter()
    jobs = jobs_of(args)
    try:
        run = _measure(args, jobs)
    except (ConfigError, ValueError, PoolError, ProjectError, BaseError, MCA.MCAError, B.BuildError) as exc:
        return die(str(exc))
    keys = [u.key for u in run.units]
    tkeys = [k for k in T.target_keys() if k in run.side.measures]
    goals = T.goals(run.side.measures)
    _print_report(args, run, keys, tkeys, goals)
    secs = time.perf_counter() - t0
    side, base = run.side, run.base
    print(f"perf: {secs:.1f} s ({side.kernels} kernels compiled and measured"
          + (f", base {base.kernels}" if base else "") + f", --jobs {jobs})")
    failed = [g for g in goals if g.status == T.FAIL]
    met = sum(g.status == T.PASS for g in goals)
    print(f"goals: {met} met, {len(failed)} not met"
          + (f" ({', '.join(g.name for g in failed)})" if failed else "")
          + f", {len(goals) - met - len(failed)} skipped")
    if args.check_goals and met + len(failed) == 0:
        print("--check-goals: no goal was judged (the selection holds no goal's target: docs/perf.md "
              "'Goals'); nothing checked is not a pass")
    ok = not (args.check_goals and (failed or met + len(failed) == 0))
    return finish(args, "perf", ok, _payload(args, run, keys, tkeys, goals, secs))


def _measure(args, jobs: int) -> _Run:
    """Lower and measure the working tree (and ``--base``); raises the errors
    :func:`cmd_perf` reports in one line."""
    families, flavor = _select(args)
    tool = MCA.find_tool()
    root = None
    if args.base is not None:
        root = find_project_root()
        if root is None:
            raise ProjectError("--base needs a splitk-parity git checkout at or above the working directory")
        resolve_ref(root, args.base)
    layers, catalog = None, ""
    if args.layers is not None:
        if args.layers == "":
            raise ValueError("--layers: an empty catalog path (give a file, or --layers alone for the shipped "
                             "catalog)")
        catalog = default_catalog() if args.layers is _SHIPPED else args.layers
        try:
            layers = L.predict(catalog, flavor)
        except (OSError, ProblemInputError, UnicodeDecodeError) as exc:
            raise ValueError(f"--layers {shown(catalog)}: {exc}") from None
    units, problems = B.lower_working(families, flavor, workers=jobs, timeout=args.timeout)
    with progress("perf") as cb:
        side = R.measure_units("working tree", units, jobs=jobs, timeout=args.timeout, mca_tool=tool,
                               progress=cb)
    side.problems[:0] = problems
    bank_counts, bank_reports, bank_problems = BK.count(units, T.target_keys())
    attach_bank_conflicts(side.measures, bank_counts)
    side.problems += bank_problems
    base = None
    if args.base is not None:
        commit, bunits, bproblems = B.lower_base(args.base, families, flavor, root=root)
        with progress("perf --base") as cb:
            base = R.measure_units(args.base, bunits, jobs=jobs, timeout=args.timeout, mca_tool=tool,
                                   commit=commit, progress=cb)
        base.problems[:0] = bproblems
    return _Run(flavor, tool, units, side, base, bank_counts, bank_reports, layers, catalog)


def _print_report(args, run: _Run, keys: list, tkeys: list, goals: list) -> None:
    """The tables: targets (before -> after with ``--base``), bank conflicts, goals,
    every other config, the layers, and each side's problems."""
    side, base = run.side, run.base
    rest = [k for k in keys if k not in tkeys]
    print(f"perf: {len(keys)} configs, {side.kernels} distinct kernels, flavor {run.flavor}, "
          f"gfx1250, llvm-mca: {run.tool}")
    if base is not None:
        print(f"before: {args.base} ({base.commit[:12]}); after: the working tree; ratio = after/before")
        if tkeys:
            print("targets, before -> after:")
            for line in render(compare_rows(tkeys, base.measures, side.measures), COMPARE_HEAD):
                print("  " + line)
    if tkeys:
        print("targets:")
        for line in render(report_rows(tkeys, side.measures)):
            print("  " + line)
        _print_barriers(tkeys, side.measures)
    if run.bank_reports:
        print("LDS bank conflicts (emulator; conflict cycles / wave-instructions, one launch):")
        for k, r in run.bank_reports.items():
            print("  " + BK.line(T.label_of(k) or k, r))
    for g in goals:
        print(g.line())
    if rest:
        print("all configs:")
        for line in render(report_rows(rest, side.measures)):
            print("  " + line)
    if base is not None:
        others = [k for k in rest + [k for k in base.measures if k not in side.measures]]
        if others:
            print("all configs, before -> after:")
            for line in render(compare_rows(others, base.measures, side.measures), COMPARE_HEAD):
                print("  " + line)
    if run.layers is not None:
        for line in L.lines(run.layers, run.catalog, run.flavor):
            print(line)
    for s in ([side] + ([base] if base else [])):
        for p in s.problems:
            print(f"problem ({s.label}): {p}")


def _print_barriers(tkeys: list, measures: dict) -> None:
    """Per target, the barrier model's gaps and cover (parity/perf/barrier.py)."""
    covers = [(k, T.barrier_cover(measures[k])) for k in tkeys]
    if not any(c for _, c in covers):
        return
    print(f"barrier model (L = {BAR.BARRIER_LATENCY} cycles, an ASSUMPTION: docs/perf_model.md, \"Barrier "
          f"model\"; per iteration unless said):")
    for k, c in covers:
        if c is not None:
            for line in BAR.lines(T.label_of(k), c):
                print("  " + line)


def _payload(args, run: _Run, keys: list, tkeys: list, goals: list, secs: float) -> dict:
    """The ``--json`` report (docs/perf.md)."""
    side, base = run.side, run.base
    return {
        "flavor": run.flavor, "arch": B.ARCH, "mca_tool": run.tool, "mca_iterations": MCA.ITERATIONS,
        "configs": {k: side.measures[k].to_json() for k in keys},
        "targets": [{"label": T.label_of(k), "config": k, "barrier": T.barrier_cover(side.measures[k])}
                    for k in tkeys],
        "goals": [g.to_json() for g in goals], "problems": side.problems, "seconds": round(secs, 2),
        "kernels": side.kernels,
        "bank_conflicts": {k: {"main_loop_conflict_cycles": run.bank_counts[k], **r}
                           for k, r in run.bank_reports.items()},
        "layers": None if run.layers is None else L.to_json(run.layers, run.catalog, run.flavor),
        "base": None if base is None else {
            "ref": args.base, "commit": base.commit, "kernels": base.kernels, "problems": base.problems,
            "configs": {k: m.to_json() for k, m in base.measures.items()}},
    }

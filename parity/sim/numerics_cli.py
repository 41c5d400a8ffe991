"""``parity numerics``: the command (parity/sim/numerics.py runs the plans).

``parity numerics [--only F] [-j N] [-v] [--coverage]`` runs every accepted
config; ``--coverage`` also records, per config, the branches and selects of
the config's own kernel that went both ways and the tile classes hit
(parity/sim/coverage.py, parity/sim/cover.py), and fails a config below 100 %
unless the config declares the reason (``Config.uncovered``).
``parity numerics --ir FILE CONFIG`` runs one config's plan with the kernel
text of FILE in place of the config's own lowering (docs/sim.md).
"""
from __future__ import annotations

import re
import sys
import time

from parity.cli.common import (Once, add_options, die, finish, jobs_of, nonempty, note_outside_checkout, parse_only,
                               progress, select_configs, split_csv, writable_file)
from parity.cli.shard import parse_shard, shard_arg
from parity.config import ConfigError, load_families
from parity.base.escape import shown
from parity.base.suggest import did_you_mean
from parity.base.input_files import MAX_IR_BYTES, InputFileError, read_bytes
from parity.gate import executor as X
from parity.gate.report import canonical_flavor
from parity.sim import coverage as COV
from parity.sim import hw_facts as HF
from parity.sim import invariants as INV
from parity.sim import numerics as N
from parity.sim import numerics_shard as NS
from parity.sim import result_cache as RC


def add_command(sub) -> None:
    p = sub.add_parser("numerics", help="run every accepted config through the CPU emulator against numpy")
    add_options(p, only="configs", flavor=True, flavor_default=N.FLAVOR, jobs=True, json=True,
                timeout=False, engines=False)
    p.add_argument("-v", "--verbose", action="store_true", help="one line per config")
    p.add_argument("--coverage", action="store_true",
                   help="report branches/selects covered both ways and tile classes hit per config; "
                        "below 100 %% without a declared reason fails")
    p.add_argument("--no-iterations", action="store_true",
                   help="with --coverage: do not judge per K-loop iteration class (first, middle, last) the "
                        "loop sites that went both ways over the run (judged by default; docs/sim.md, 'Coverage')")
    p.add_argument("--assume", action="append", metavar="NAME=VALUE", type=nonempty("--assume", "NAME=VALUE", items=True),
                   help="run the emulator under another reading of a hardware fact (docs/hardware_facts.md; "
                        "rows with readings: " + ", ".join(HF.FACTS) + ")")
    p.add_argument("--opt", action="store_true",
                   help="also run every case on the modules after LLVM's opt -O3 for the config's arch and "
                        "require bit-identical buffers (docs/sim.md, 'The IR after LLVM's optimizer')")
    p.add_argument("--ir", nargs=2, metavar=("FILE", "CONFIG"),
                   help="run CONFIG's plan (FAMILY/NAME) on the IR text in FILE instead of its lowering")
    p.add_argument("--shard", metavar="I/N", action=Once, type=shard_arg,
                   help="run shard I of N only: the accepted configs dealt longest first by the cost table "
                        "parity/data/numerics_costs.json, the same on every machine; the N shards together "
                        "are the whole run (docs/ci.md, 'Sharding')")
    p.add_argument("--record-costs", metavar="FILE", type=writable_file("--record-costs"), action=Once,
                   help="write each config's measured seconds as a cost table (parity/data/numerics_costs.json "
                        "is the one --shard uses)")
    X.add_argument(p)
    p.set_defaults(func=cmd_numerics)


def _uncovered_of(families) -> dict:
    return {(f.name, c.name): dict(c.uncovered) for f in families for c in f.configs}


def cmd_numerics(args) -> int:
    """``parity numerics``: every accepted config (or ``--ir FILE CONFIG``'s one) through the
    emulator; the exit status (2 for a bad argument, one ``error:`` line)."""
    note_outside_checkout()
    bad = _setting_error(args)
    if bad is not None:
        return die(bad)
    try:
        only, families = _selection(args)
        if args.ir:
            return _cmd_ir(args, load_families())
    except (ConfigError, ValueError) as exc:
        return die(str(exc))
    if args.shard is not None:
        families, line = NS.shard_families(families, N.accepted_configs(only, families=families),
                                           *parse_shard(args.shard))
        print(line, flush=True)
        if not families:   # CI shards a fixed N over a catalog that changes: nothing here is GREEN
            print("RESULT: GREEN")
            return finish(args, "numerics", True, {"flavor": N.FLAVOR, "shard": args.shard, "configs": []})
        only = sorted(f.name for f in families)   # this shard's families: the others are not "unregistered"
    jobs = jobs_of(args)
    cache = RC.cache_dir()   # $PARITY_NUMERICS_CACHE (parity/sim/result_cache.py), None: off
    t0 = time.perf_counter()
    lines = _ConfigLines(args, families, _catalog_places(only, families))
    with progress("numerics") as bar:
        lines.bar = bar
        try:
            with X.cluster_for(X.scheduler_address(args.scheduler)) as cluster:
                remote = cluster is not None
                res = N.run_all(only, jobs, lines, families=families, coverage=args.coverage, opt=args.opt,
                                cluster=cluster, cache=cache)
        except X.SchedulerError as exc:
            return die(str(exc))
    wall = time.perf_counter() - t0
    green, per_family = _family_summary(args, res, only, lines.cov_fail, {f for f, _ in lines.place})
    _trailer(args, res, only, families)
    instr = sum(o.instructions for o in res)
    if cache is not None:
        used = "not used (--opt and --scheduler runs emulate every config)" if args.opt or remote else \
            f"{sum(o.cached for o in res)} of {len(res)} configs reused, not emulated"
        print(f"numerics cache ({cache}, {RC.ENV}): {used}")
    print(f"{instr} wave-instructions in {wall:.1f}s wall ({jobs} jobs)")
    if args.record_costs:
        fresh = [o for o in res if not o.cached]   # a reused outcome's seconds are not this machine's
        try:
            n = NS.record_costs(fresh, args.record_costs)
        except OSError as exc:
            return die(f"--record-costs: {shown(args.record_costs)}: {shown(exc.strerror or exc)}")
        print(f"costs of {n} configs written to {shown(args.record_costs)}"
              + (f" ({len(res) - n} reused from the cache left out)" if len(res) > n else ""))
    print(f"RESULT: {'GREEN' if green else 'RED'}")
    sys.stdout.flush()
    payload = {"flavor": N.FLAVOR, **({"shard": args.shard} if args.shard else {}), "assume": HF.assumed(), "jobs": jobs, "seconds": round(wall, 3), "wave_instructions": instr,
               "cached": sum(o.cached for o in res),
               **({"opt": _opt_total(res)} if args.opt else {}),
               "families": per_family,
               "configs": [_config_json(o, lines.cov_fail.get((o.family, o.config))) for o in res]}
    return finish(args, "numerics", green, payload)


def _setting_error(args) -> str | None:
    """An option without its partner, or an unusable $PARITY_NUMERICS_CACHE, as one line."""
    if args.ir and (args.shard or args.record_costs):
        return f"{'--shard' if args.shard else '--record-costs'} goes without --ir (--ir runs one config's plan)"
    if args.no_iterations and not args.coverage:  # before: accepted, and nothing judged differently
        return "--no-iterations goes with --coverage (it turns off the per-iteration coverage judgement)"
    return RC.settings_error()


def _selection(args) -> tuple:
    """(``--only``'s family names or None, the selected families) after the argument checks;
    the ``--assume`` readings taken. ValueError / ConfigError for a bad argument."""
    if canonical_flavor(args.flavor) != N.FLAVOR:
        raise ValueError(f"--flavor: numerics runs the {N.FLAVOR} text (the emulator reads that flavor's IR, "
                         f"docs/sim.md), got {shown(args.flavor)}")
    fams, names = plan_only(args.only)
    families = select_configs(load_families(only=fams), names)
    N.check_families(families)  # neither a plan nor NUMERICS_OPT_OUT: one error line (parity/sim/plans)
    HF.assume(HF.parse(args.assume))  # hardware_facts.md readings (--assume), for the workers too
    if args.ir and args.only is not None:  # it was ignored: the --ir CONFIG ran whatever --only said
        raise ValueError("--only goes without --ir (--ir FILE FAMILY/NAME names its one config)")
    if args.only is not None and not N.accepted_configs(fams, families=families):   # before: 0/0 pass, RED
        raise ValueError(f"--only {shown(args.only)}: no accepted llvm23 config is selected (each selected one "
                         f"is expected to be rejected at llvm23), so nothing would run")
    return fams, families


def plan_only(text: str | None) -> tuple:
    """``--only`` of ``parity numerics`` and ``parity mutate``: (the selected families that have
    a numerics plan, or None for all; {family: config names}). A family named outright (``ir_core``,
    ``FAMILY/NAME``) without a plan is refused; a family token or an arch (``conv``, ``gfx1250``)
    keeps the families of its selection that have one, and is refused when none has. ValueError /
    ConfigError naming --only and the plans."""
    fams, names = parse_only(text)
    if not fams:
        return fams, names
    named = {it.partition("/")[0] for it in split_csv(text)}
    unknown = [f for f in fams if f not in N.PLANS and f in named]
    configured = {f.name for f in load_families()} if unknown else set()
    strange = [u for u in unknown if u not in configured]
    if strange:   # before: "no numerics plan for gfx9999", as if it were a family without one
        raise ValueError(f"--only: {', '.join(shown(u) for u in strange)}: not a family, family token or arch"
                         f"{did_you_mean(strange[0], N.PLANS) if len(strange) == 1 else ''} "
                         f"(plans: {', '.join(N.PLANS)})")
    if unknown:
        raise ValueError(f"--only: no numerics plan for {', '.join(shown(u) for u in unknown)}"
                         f"{did_you_mean(unknown[0], N.PLANS) if len(unknown) == 1 else ''} "
                         f"(plans: {', '.join(N.PLANS)})")
    kept = [f for f in fams if f in N.PLANS]
    if not kept:
        raise ValueError(f"--only {shown(text)}: none of the families it selects ({', '.join(fams)}) has a "
                         f"numerics plan (plans: {', '.join(N.PLANS)})")
    return kept, {f: n for f, n in names.items() if f in kept}


class _ConfigLines:
    """:func:`parity.sim.numerics.run_all`'s ``progress(outcome, done, total)``: the progress
    bar, each config's line (failures always, all with -v) and its coverage verdict
    (``cov_fail``: (family, config) -> failures, with --coverage)."""

    def __init__(self, args, families, place: dict):
        self.args, self.place, self.bar = args, place, None
        self.uncovered = _uncovered_of(families)
        self.cov_fail: dict = {}

    def __call__(self, o, done: int, total: int) -> None:
        args = self.args
        if self.bar:
            self.bar(done, total)
        fails, declared = self._judge(o)
        if args.verbose or not o.ok or fails:
            print(f"{self.place[(o.family, o.config)]} {'PASS' if o.ok and not fails else 'FAIL'} "
                  f"{o.family}/{shown(o.config)}: {o.cases} cases, "
                  f"{o.launches} launches x 2 orders, {o.instructions} wave-instructions, {o.seconds:.2f}s"
                  + (" (from the numerics cache)" if o.cached else ""), flush=True)
        if args.coverage and o.coverage is not None and (args.verbose or fails):
            print(f"    coverage: {_coverage_line(o)}", flush=True)
        if o.opt is not None and args.verbose:
            print(f"    opt -O3: {_opt_line(o.opt)}", flush=True)
        for p in o.problems + [f"coverage: {f}" for f in fails]:
            print(f"    {p}", flush=True)
        if args.verbose:
            for d in declared:
                print(f"    coverage: {d}", flush=True)
            for sk in o.skipped:
                print(f"    skipped {sk.name}: not admitted by the launch plan: {sk.reason}", flush=True)

    def _judge(self, o) -> tuple[list, list]:
        """(coverage failures, declared gaps) of outcome ``o``; ([], []) without --coverage."""
        if not (self.args.coverage and o.coverage is not None):
            return [], []
        fails, declared = COV.judge(o.coverage, o.classes, self.uncovered.get((o.family, o.config), {}),
                                    iterations=not self.args.no_iterations)
        self.cov_fail[(o.family, o.config)] = fails
        return fails, declared


def _family_summary(args, res: list, only, cov_fail: dict, selected: set) -> tuple[bool, dict]:
    """Print each family's summary line(s); (GREEN?, the JSON's ``families``). ``selected``: the
    families with an accepted config selected (each must have results). A family of ``--only``
    without one (``--only gfx942``: no conv config on that arch) is one line and not in the
    verdict (before: ``0/0 configs pass`` and RED); a selection with none at all is refused
    earlier (:func:`_selection`)."""
    fams_run = sorted({o.family for o in res} | set(selected))
    for f in sorted(set(only or []) - set(fams_run)):
        print(f"{f}: no accepted llvm23 config selected (none run; not in the verdict)")
    green = bool(res)
    per_family = {}
    for f in fams_run:
        rs = [o for o in res if o.family == f]
        bad = [o for o in rs if not o.ok or cov_fail.get((o.family, o.config))]
        xe = sum(o.expected_errors for o in rs)
        nsk = sum(len(o.skipped) for o in rs)
        print(f"{f}: {len(rs) - len(bad)}/{len(rs)} configs pass, {sum(o.cases for o in rs)} cases"
              + (f" ({xe} expected to be rejected by the emulator)" if xe else "")
              + (f", {nsk} problem(s) skipped as not admitted by the launch plan (another problem of "
                 f"the config admitted)" if nsk else "")
              + f", {sum(o.launches for o in rs)} launches x 2 wave orders; tolerance: {N.PLANS[f][1]}")
        if args.coverage:
            full = sum(1 for o in rs if o.coverage is not None and not cov_fail.get((o.family, o.config)))
            print(f"{f}: coverage: {full}/{len(rs)} configs at 100 % (branches, selects both ways; tile "
                  f"classes) or declared")
        green = green and not bad and bool(rs)
        per_family[f] = {"configs": len(rs), "passed": len(rs) - len(bad), "cases": sum(o.cases for o in rs),
                         "expected_errors": xe, "skipped_problems": nsk,
                         "launches": sum(o.launches for o in rs), "tolerance": N.PLANS[f][1]}
    for f in N.PLANS:
        if f not in fams_run and not only:
            print(f"{f}: no accepted configs (family not registered yet)")
    return green, per_family


def _trailer(args, res: list, only, families) -> None:
    """The lines after the families': opt-outs, --assume readings, invariants, the opt lane."""
    if not only:
        for fam in families:
            if fam.numerics_opt_out:
                print(f"{fam.name}: no numerics plan: {fam.numerics_opt_out}")
    for name, val in sorted(HF.assumed().items()):
        print(f"assumed: {name}={val} (docs/hardware_facts.md; the emulator's default is {HF.FACTS[name].default})")
    print(f"invariants: {'; '.join(INV.SUMMARY)}")
    if args.opt:
        tot = _opt_total(res)
        print(f"opt -O3 lane (every buffer of every case bit-identical after opt -O3, llvmlite LLVM "
              f"{tot.pop('llvm')}): {_opt_line(tot)}")


def _opt_line(st: dict) -> str:
    return (f"{st['cases']} cases compared ({st['order_cases']} order problems), {st['modules']} modules optimised ({st['cached']} from the compile "
            f"cache) in {st['opt_seconds']:.2f}s, emulated in {st['emulation_seconds']:.2f}s, "
            f"{st['instructions']} wave-instructions")


def _opt_total(res) -> dict:
    from parity.llvm.compile import llvm_version
    keys = ("cases", "order_cases", "modules", "cached", "opt_seconds", "emulation_seconds", "instructions")
    tot = {k: sum(o.opt[k] for o in res if o.opt) for k in keys}
    tot["llvm"] = llvm_version()
    return tot


def _catalog_places(only, families) -> dict:
    """``[i/n]`` per (family, config): its 1-based position among the ``n`` configs run, in
    the catalog order of the summary and the JSON. The per-config lines stream in the
    order configs finish (longest first over the workers, as pytest-xdist prints
    tests), so each carries its place (docs/sim.md, "Running it")."""
    items = N.accepted_configs(only, families=families)
    w = len(str(len(items)))
    return {(f, c): f"[{i:>{w}}/{len(items)}]" for i, (f, c, _, _) in enumerate(items, 1)}


def _coverage_line(o) -> str:
    c = o.coverage
    hit = sum(1 for v in o.classes.values() if v)
    return (f"branches {c['br'][1]}/{c['br'][0]} both ways, selects {c['select'][1]}/{c['select'][0]} both ways, "
            f"tile classes {hit}/{len(o.classes)} ({', '.join(k for k, v in o.classes.items() if v) or 'none'}), "
            f"boundary {c['boundary'][1]}/{c['boundary'][0]} ordered compares seen equal (reported, not judged)"
            + _iterations_text(c.get("iterations")))


def _iterations_text(it) -> str:
    """``; loop sites both ways per iteration: first a/n, middle b/n, last c/n`` (reported)."""
    if not it or not it["first"][0]:
        return ""
    n = it["first"][0]
    return ("; loop sites both ways per K-loop iteration: " + ", ".join(f"{c} {v[1]}/{n}" for c, v in it.items())
            + " (reported, not judged)")


def _config_json(o, cov_fails) -> dict:
    d = {"family": o.family, "config": o.config, "ok": o.ok and not cov_fails, "cases": o.cases,
         "launches": o.launches, "problems": list(o.problems), "skipped": [sk.name for sk in o.skipped]}
    if o.opt is not None:
        d["opt"] = dict(o.opt)
    if o.coverage is not None:
        d["coverage"] = {"branches": o.coverage["br"], "selects": o.coverage["select"],
                         "boundary": o.coverage["boundary"], "iterations": o.coverage.get("iterations"),
                         "classes": dict(o.classes), "failures": list(cov_fails or [])}
    return d


#: ``--ir FILE`` is LLVM IR when a line starts with ``define`` (the kernel); otherwise it is an input
#: error (exit 2). A module the emulator cannot parse past that stays a failure (RED, docs/sim.md).
_DEFINE = re.compile(r"^define\b", re.M)
#: The names its ``define`` lines give (``@name`` or ``@"quoted name"``): one must be the config's kernel.
_DEFINED = re.compile(r'^define\b[^\n@]*@("[^"\n]*"|[-\w.$]+)', re.M)


def _cmd_ir(args, families) -> int:
    path, ref = args.ir
    try:
        fam, name, spec, arch = N.find_config(ref, families)
        # a FIFO or /dev/zero is one line, not a hang or a read without end (docs/cli.md, input files)
        text = read_bytes(path, "IR file", MAX_IR_BYTES).decode("utf-8")
    except UnicodeDecodeError as exc:
        return die(f"--ir: cannot read {shown(path)}: not valid UTF-8 (byte {exc.start})")
    except InputFileError as exc:
        return die(f"--ir: cannot read {exc}")
    except ValueError as exc:
        return die(f"--ir: {exc}")
    if not _DEFINE.search(text):  # not a failure of the kernel: there is no kernel to judge
        return die(f"--ir: {shown(path)}: not LLVM IR (no line starts with `define`: FILE must hold the "
                   f"config's kernel module, e.g. `parity show {shown(ref)} > FILE`)")
    lw = N.TextLowerer(fam, spec, arch, text, coverage=args.coverage)
    want = lw.E.lower(fam, N._with_defaults(fam, spec), arch, N.FLAVOR).kernel
    defined = [d.strip('"') for d in _DEFINED.findall(text)]
    if want not in defined:  # another config's kernel: its plan's launches would all fail, and not on FILE's merits
        return die(f"--ir: {shown(path)}: defines {', '.join('@' + shown(d) for d in defined[:3]) or 'no named function'}"
                   f"{' ...' if len(defined) > 3 else ''}, not {shown(ref)}'s kernel @{want} (FILE must hold that "
                   f"config's kernel module, e.g. `parity show {shown(ref)} > FILE`)")
    if args.opt:   # the opt lane on FILE's text (and on the engines' other kernels the cases need)
        from parity.sim import optimised
        optimised.Lane(N.TextLowerer, fam, spec, arch, text).attach(lw)
    o = N.run_config(fam, name, spec, arch, lw)
    if args.opt:
        lw.opt_lane.run_order_cases(o, fam, N._with_defaults(fam, spec), arch, lw, N)
        o.opt = lw.opt_lane.stats.as_dict()
    fails = []
    if args.coverage and o.coverage is not None:
        fails, _ = COV.judge(o.coverage, o.classes, _uncovered_of(families).get((fam, name), {}))
    ok = o.ok and not fails
    print(f"{'PASS' if ok else 'FAIL'} {fam}/{shown(name)} with the IR of {shown(path)}: {o.cases} cases, "
          f"{o.launches} launches x 2 orders, {o.instructions} wave-instructions, {o.seconds:.2f}s")
    if o.opt is not None:
        print(f"    opt -O3: {_opt_line(o.opt)}")
    if args.coverage and o.coverage is not None:
        print(f"    coverage: {_coverage_line(o)}")
    for p in o.problems + [f"coverage: {f}" for f in fails]:
        for line in str(p).split("\n"):  # a problem quotes lines of the user's IR text
            print(f"    {shown(line, limit=2000)}")
    print(f"RESULT: {'GREEN' if ok else 'RED'}")
    return finish(args, "numerics", ok, {"flavor": N.FLAVOR, "ir": path, "configs": [_config_json(o, fails)]})

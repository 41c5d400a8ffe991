"""``parity mutate``: the mutation lane (docs/sim.md, "Mutation lane").

``parity mutate [--only F] [--seconds N] [--max-mutants N] [--seed S] [--per-kind K] [--match RE] [--differential N] [-j N] [--json PATH]``
lowers every accepted llvm23 config of conv_implicit_gemm and
conv_fwd_split_k_reduce (or the ``--only`` selection), draws up to K sites per
mutation kind and config (seeded), runs the oracles of parity/mutate/run.py on
each mutant (``--match``: only the sites whose honest line matches a regular
expression; the first ``--max-mutants`` of the seeded order: a count bound gives
the same judged set on every run) until done or ``--seconds`` have passed, and prints per kind killed
/ survived / equivalent, the oracles that killed, the kill rate, and every
survivor with its diff. Exit 0 when the kill rate is at least ``--goal``
(default 95 %) and at least one mutant ran, 1 otherwise, 2 for bad input or
when memory runs out (one ``error:`` line; the plan holds no mutant text, so the
whole catalog at every site plans in about 140 MB: docs/sim.md).
"""
from __future__ import annotations

import argparse
import re
import time

from parity.cli.common import add_options, die, finish, finite_seconds, integer, jobs_of, select_configs
from parity.config import ConfigError, load_families
from parity.gate import executor as X
from parity.base.escape import shown
from parity.mutate import operators as OPS
from parity.mutate import run as R
from parity.mutate.match import matched, regex, site_line  # noqa: F401 (site_line: the tests' view of a site)
from parity.sim import numerics as N
from parity.sim.numerics_cli import plan_only

FAMILIES = ("conv_implicit_gemm", "conv_fwd_split_k_reduce")


def percent(flag: str):
    """argparse type for ``flag``: a percentage 0..100 in ASCII decimal (``float()`` alone also
    takes ``nan``, which no kill rate reaches or fails, non-ASCII digits and spaces)."""
    def parse(text: str) -> float:
        v = float(text) if re.fullmatch(r"[0-9]{1,3}(?:\.[0-9]*)?|\.[0-9]+", text) else -1.0
        if not 0 <= v <= 100:
            raise argparse.ArgumentTypeError(f"{flag} must be a percentage from 0 to 100 (ASCII decimal), "
                                             f"got '{shown(text)}'")
        return v
    return parse


#: ``--differential N`` at most: about 0.2 CPU-s a problem and kernel (docs/sim.md), so 100,000 is
#: hours per mutant already; a bigger N (a typo, ``100000000000``) ran on with no end in sight.
MAX_DIFFERENTIAL = 100_000


def add_command(sub) -> None:
    p = sub.add_parser("mutate", help="IR mutants of accepted kernels through the oracles: the kill rate")
    add_options(p, only="configs", flavor=False, jobs=True, json=True, timeout=False, engines=False)
    p.add_argument("--seconds", type=finite_seconds("--seconds"), default=None,
                   help="stop judging new mutants after this many seconds (default: all)")
    p.add_argument("--max-mutants", type=integer("--max-mutants", lo=1), default=None, metavar="N",
                   help="judge at most the first N mutants of the seeded order (default: all); with it the "
                        "judged set, and so the verdict, is the same on every run and machine")
    p.add_argument("--seed", type=integer("--seed"), default=0, help="the sampling seed (default 0)")
    p.add_argument("--per-kind", type=integer("--per-kind", lo=0), default=2, metavar="K",
                   help="sites drawn per mutation kind and config (default 2; 0 = every site)")
    p.add_argument("--kinds", default=None, help=f"comma-separated mutation kinds (default all: {', '.join(OPS.KINDS)})")
    p.add_argument("--goal", type=percent("--goal"), default=95.0, help="the kill rate in %% that passes (default 95)")
    p.add_argument("--match", type=regex("--match"), default=None, metavar="RE",
                   help="judge only the planned sites whose honest IR line matches this Python regular expression "
                        "(re.search; e.g. '%%(a_rok|again)[0-9]* = icmp' for named survivors)")
    p.add_argument("--differential", type=integer("--differential", lo=1, hi=MAX_DIFFERENTIAL), default=None, metavar="N",
                   help="then run every conv survivor and every mutant argued equivalent against its honest "
                        "kernel on N random admitted problems (at most 100000), D bit for bit (docs/sim.md)")
    X.add_argument(p)
    p.set_defaults(func=cmd_mutate)


def cmd_mutate(args) -> int:
    """``parity mutate``; with ``--scheduler`` the cluster is reached (or refused) before
    the plan is made (parity/gate/executor.py)."""
    try:
        with X.cluster_for(X.scheduler_address(args.scheduler)) as cluster:
            return _mutate(args, cluster)
    except X.SchedulerError as exc:
        return die(str(exc))


def _selection(args) -> tuple:
    """(the selected families, the mutation kinds) after the argument checks; ValueError /
    ConfigError naming the option. ``--only`` keeps the families with a numerics plan
    (parity/sim/numerics_cli.py ``plan_only``)."""
    fams, names = plan_only(args.only)
    fams = fams or list(FAMILIES)
    kinds = tuple(args.kinds.split(",")) if args.kinds is not None else OPS.KINDS
    if not all(kinds):
        raise ValueError(f"--kinds: an empty kind in '{shown(args.kinds)}' (kinds: {', '.join(OPS.KINDS)})")
    twice = sorted({k for k in kinds if kinds.count(k) > 1})
    if twice:   # before: planned twice, so --per-kind K drew 2K sites of it
        raise ValueError(f"--kinds: {', '.join(shown(k) for k in twice)} given twice (each kind once)")
    unknown = [k for k in kinds if k not in OPS.KINDS]
    if unknown:
        raise ValueError(f"--kinds: unknown mutation kind {', '.join(shown(u) for u in unknown)} "
                         f"(kinds: {', '.join(OPS.KINDS)})")
    if args.per_kind < 0:
        raise ValueError(f"--per-kind must be 0 (every site) or more, got {args.per_kind}")
    return fams, select_configs(load_families(only=fams), names), kinds


def _planned(args, configs: list, kinds: tuple) -> list:
    """The planned sites (narrowed by ``--match``); ValueError when the selection plans none
    (an input error naming the options that selected nothing, not a RED run of 0 mutants)
    or ``--match`` is refused (parity/mutate/match.py), MemoryError from the plan."""
    given = [f"--only {shown(args.only)}" if args.only is not None else "",
             f"--kinds {shown(args.kinds)}" if args.kinds is not None else ""]
    chose = " with ".join(g for g in given if g) or "the default selection"
    if not configs:
        raise ValueError(f"{chose}: no accepted llvm23 config is selected, so no mutant is planned "
                         f"(select configs that lower)")
    jobs = R.plan(configs, args.seed, per_kind=args.per_kind or None, kinds=kinds)
    if not jobs:
        raise ValueError(f"{chose}: no mutant is planned: the {len(configs)} selected config(s) have no site "
                         f"of the kind(s) {', '.join(kinds)} (select other kinds or configs)")
    if args.match is not None:
        jobs = matched(args.match, jobs, args.per_kind)
    return jobs


def _mutate(args, cluster) -> int:
    try:
        fams, families, kinds = _selection(args)
    except (ConfigError, ValueError) as exc:
        return die(str(exc))
    configs = N.accepted_configs(fams, families=families)
    t0 = time.perf_counter()
    try:
        jobs = _planned(args, configs, kinds)
    except ValueError as exc:
        return die(str(exc))
    except MemoryError:
        return die(f"out of memory while planning the mutants of {len(configs)} config(s) "
                   f"(--per-kind {args.per_kind}); bound the plan with --only, --kinds or --per-kind")
    planned = len(jobs)
    if args.max_mutants is not None:
        jobs = jobs[:args.max_mutants]
    print(f"mutate: {planned} mutants of {len(configs)} config(s), seed {args.seed}, "
          + (f"{args.per_kind} site(s)" if args.per_kind else "every site") + " per kind and config"
          + (f", matching /{shown(args.match.pattern)}/" if args.match is not None else "")
          + (f", the first {len(jobs)} judged" if args.max_mutants is not None else "")
          + (f", at most {args.seconds:g}s" if args.seconds is not None else ""), flush=True)
    try:
        verdicts = R.run(jobs, args.seconds, jobs_of(args), cluster=cluster)
    except MemoryError:
        return die(f"out of memory while judging {len(jobs)} mutant(s); bound the run with --max-mutants, "
                   f"--only or --kinds, or give it fewer -j jobs")
    except ImportError as exc:
        return die(f"an oracle cannot run: {exc} (install the project with `pip install -e .`; "
                   f"a mutant is never counted killed by a missing tool)")
    rep = R.report(verdicts)
    print(R.render(rep))
    wall = time.perf_counter() - t0
    rate = rep.kill_rate
    # nothing to kill (every judged mutant equivalent) is not a failure: the differential, if any, decides
    all_equivalent = rate is None and rep.equivalent > 0
    green = all_equivalent or (rate is not None and 100 * rate >= args.goal)
    print(f"{len(verdicts)} of {planned} mutants judged in {wall:.1f}s; goal {args.goal:g} %")
    if all_equivalent:
        print(f"kill rate n/a: every mutant equivalent ({rep.equivalent}; nothing to kill"
              + (", the differential decides)" if args.differential else ")"))
    diffs = _differentials(jobs, verdicts, args.differential, args.seed, jobs_of(args)) \
        if args.differential else []
    if rep.contradictions:
        green = False
        print(f"{len(rep.contradictions)} killed mutant(s) the abstract proof or an argument claims "
              f"equivalent (parity/mutate/proved.py or argued.py is wrong: CONTRADICTION above)")
    if any(d["differ"] for d in diffs):
        green = False
        print("a mutant argued equivalent or surviving differs from its honest kernel (differential)")
    print(f"RESULT: {'GREEN' if green else 'RED'}")
    payload = R.to_json(rep, args.seed, round(wall, 3))
    payload["differential"] = diffs
    payload.update(planned=planned, max_mutants=args.max_mutants, goal=args.goal)
    return finish(args, "mutate", green, payload)


def _differentials(jobs, verdicts, n: int, seed: int, n_jobs: int = 1) -> list:
    """``--differential N``: every conv survivor and argued- or abstract-proved-equivalent mutant against its
    honest kernel on N random admitted problems (parity/mutate/differential.py; the
    mutants of one config share the problems and each problem's honest run, which
    ``n_jobs`` workers share out)."""
    from parity.mutate import differential as D
    picked = []
    for site, v in zip(jobs, verdicts):
        # argued mutants, and those proved with the proof's abstract values (parity/mutate/proved.py:
        # young rules, so a requested differential checks them too)
        argued = v.status == "equivalent" and v.reason.startswith(("argued:", "proved:"))
        if (v.status == "survived" or argued) and v.family == "conv_implicit_gemm":
            picked.append((site, v))
    t0 = time.perf_counter()

    def progress(config, done, parts, counts):
        print(f"differential {config}: part {done} of {parts} ({time.perf_counter() - t0:.0f}s): "
              + ", ".join(f"{eq + dif} run / {dif} differ" for eq, dif in counts), flush=True)
    res = D.differential_many([site.job() for site, _ in picked], n, seed, n_jobs,
                              chunks=max(n_jobs, min(20, n // 25)), progress=progress)
    out = []
    for (site, v), (eq, dif, first, secs) in zip(picked, res):
        print(f"differential {v.family}/{v.config} {v.kind} `{v.what}` ({v.status}): {eq} equal, {dif} differ "
              f"of {eq + dif} admitted problems ({secs:.0f}s for the config's mutants)"
              + (f"; first: {first}" if first else ""), flush=True)
        out.append({"config": v.config, "kind": v.kind, "what": v.what, "status": v.status, "equal": eq,
                    "differ": dif, "first": first, "seconds": round(secs, 1)})
    return out

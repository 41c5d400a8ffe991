"""The K-loop compare/select mutants of issue 34 item 5, before and after the
K-deep problems: every ``cmp_negate``, ``cmp_boundary`` and ``select_swap``
mutant of one conv config (default spk2_mem_default_64x64_bf16) in the blocks
of its K loop, prologue and tap walk, judged by the numerics oracle alone
(first failing case), once with the problem set of main before issue 34 (no
K-deep problems, Gaussian data, no fold-order model) and once with today's.
Also the named mutants of ``--also KIND:LINE`` (the survivors docs/sim.md
lists), on any config given with ``--config``.

    python bench/k_deep_mutants.py [--config NAME] [--blocks kloop,prologue,...] [-j N]
    python bench/k_deep_mutants.py --verdicts NAME[,NAME...] [-j N]   (today's lane verdicts)

Prints one line per mutant that survives the "before" set, with its verdict
under today's set, and the counts. A measurement tool, not a test.
"""
from __future__ import annotations

import multiprocessing as mp
import re
import sys
import time

sys.path.insert(0, ".")

from parity.cli.common import Parser  # noqa: E402
from parity.mutate import operators as OPS  # noqa: E402
from parity.sim import cover  # noqa: E402
from parity.sim import numerics as N  # noqa: E402
from parity.sim.plans import conv_implicit_gemm as CONV_PLAN

KINDS = ("cmp_negate", "cmp_boundary", "select_swap")
BLOCKS = ("prologue", "kloop", "kwalk", "tap_pro", "tap_loop", "taptile_gate", "taptile_pro", "taptile_loop")
_LABEL = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*?)\d*:")


def block_of(lines: list) -> list:
    """Per line index: the hint of the block it is in."""
    cur, out = "", []
    for ln in lines:
        m = _LABEL.match(ln)
        if m:
            cur = m.group(1)
        out.append(cur)
    return out


_TODAY = (cover.conv_deep_problems, cover.data_mode, CONV_PLAN.CK.fold_model_check)


def _problem_set(when: str) -> None:
    """``before``: the problem set of main before issue 34 (the K-deep problems, the
    bit-exact data and the fold-order model switched off); ``after``: today's (a
    pool worker runs both kinds of job, so every job sets its own)."""
    if when == "before":
        cover.conv_deep_problems = lambda full: ()
        cover.data_mode = lambda name: "gauss"
        CONV_PLAN.CK.fold_model_check = lambda *a: (lambda b: [])
    else:
        cover.conv_deep_problems, cover.data_mode, CONV_PLAN.CK.fold_model_check = _TODAY


def _judge(job):
    when, cfg, spec, arch, text = job
    _problem_set(when)
    lw = N.TextLowerer("conv_implicit_gemm", spec, arch, text)
    o = N.run_config("conv_implicit_gemm", cfg, spec, arch, lw, first_failure=True)
    return o.problems[0][:160] if o.problems else None


def _deep_only(job):
    """First failure of a mutant on the K-deep problems alone."""
    cfg, spec, arch, text = job
    _problem_set("after")
    full = {f.name: spec.get(f.name, f.default) for f in CONV_PLAN.C.FIELDS}
    lw = N.TextLowerer("conv_implicit_gemm", spec, arch, text)
    lw.max_instructions = "per wave"
    try:
        for c in CONV_PLAN.conv_cases(spec, arch, lw, problems=cover.conv_deep_problems(full)):
            if isinstance(c, N.Case):
                probs, _ = N.run_case(c, lw, c.orders)
                if probs:
                    return f"{c.name}: {probs[0][:140]}"
    except Exception as e:  # noqa: BLE001 - a crash on a mutant is a kill
        return f"{type(e).__name__}: {str(e)[:140]}"
    return None


def argued(configs, jobs: int) -> int:
    """The mutants ``parity mutate`` counts equivalent by an argument of docs/sim.md
    (parity/mutate/run.py ``ARGUED``) on ``configs``, run on the K-deep problems:
    one that fails there is a real bug the argument missed."""
    from parity.mutate import run as MR
    work = []
    for ref in configs:
        fam, cfg, spec, arch = N.find_config(f"conv_implicit_gemm/{ref}")
        spec = N._with_defaults(fam, spec)
        text = N._Lowerer().text(fam, spec, arch)
        for kind in ("cmp_boundary", "const_inc", "const_dec", "loop_bound"):
            for site in OPS.sites(text, kind):
                job = MR.Site(fam, cfg, spec, arch, text, kind, site).job()
                why = next((n for n, pred in MR.ARGUED if pred(job)), None)
                if why and not OPS.equivalent_reason(text, job.mutant):
                    work.append((why, job))
    with mp.get_context("fork").Pool(jobs) as pool:
        res = pool.map(_deep_only, [(j.config, j.spec, j.arch, j.mutant.text) for _, j in work], chunksize=1)
    for (why, j), r in zip(work, res):
        print(f"{j.config} {j.mutant.kind} line {j.mutant.line} {j.mutant.what} [argued: {why}]: "
              f"{'KILLED by a K-deep problem: ' + r if r else 'survives'}")
    print(f"{len(work)} argued-equivalent mutants, {sum(1 for r in res if r)} killed by the K-deep problems")
    return 0


def _verdict(site):
    from parity.mutate import run as MR
    v = MR.judge(site)
    return v.status, v.oracle, v.reason[:160], v.seconds


def verdicts(configs, jobs: int) -> int:
    """Every ``kloop_cmp`` mutant (cmp_negate / cmp_boundary / select_swap in the K loop's
    blocks) of ``configs`` judged as ``parity mutate`` judges it (every oracle, then the
    arguments of docs/sim.md): one line per survivor and per argued-equivalent mutant,
    named by the instruction it changes (the mutant's text, no line numbers), the counts."""
    from parity.mutate import run as MR
    work = []
    for ref in configs:
        fam, cfg, spec, arch = N.find_config(f"conv_implicit_gemm/{ref}")
        spec = N._with_defaults(fam, spec)
        text = N._Lowerer().text(fam, spec, arch)
        work += [MR.Site(fam, cfg, spec, arch, text, "kloop_cmp", site) for site in OPS.sites(text, "kloop_cmp")]
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(jobs) as pool:
        res = pool.map(_verdict, work, chunksize=1)
    counts = {}
    for site, (status, oracle, reason, _) in zip(work, res):
        counts[status] = counts.get(status, 0) + 1
        if status == "killed":
            continue
        m = site.job().mutant
        orig = site.original.split("\n")[m.line - 1].strip()
        new = m.text.split("\n")[m.line - 1].strip()
        print(f"{site.config} [{block_of(site.original.split(chr(10)))[m.line - 1]}] {status}: "
              f"`{orig}` -> `{new}`" + (f" ({reason})" if status == "equivalent" else ""))
    k, s = counts.get("killed", 0), counts.get("survived", 0)
    print(f"{len(work)} kloop_cmp mutants on {len(configs)} config(s): killed {k}, survived {s}, equivalent "
          f"{counts.get('equivalent', 0)}; kill rate {100 * k / max(1, k + s):.1f} % "
          f"({time.perf_counter() - t0:.0f}s, {jobs} jobs)")
    return 0


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="spk2_mem_default_64x64_bf16",
                    help="the conv_implicit_gemm config whose K-loop mutants are judged")
    ap.add_argument("--blocks", default=",".join(BLOCKS), help="comma-separated IR blocks whose compare/select "
                                                               "sites are mutated")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--argued", help="comma-separated configs: run their argued-equivalent mutants on the "
                                     "K-deep problems instead")
    ap.add_argument("--verdicts", help="comma-separated configs: judge their kloop_cmp mutants as `parity mutate` "
                                       "does and list the survivors and argued-equivalent ones by instruction")
    args = ap.parse_args(argv)
    if args.verdicts:
        return verdicts(args.verdicts.split(","), args.jobs)
    if args.argued:
        return argued(args.argued.split(","), args.jobs)
    fam, cfg, spec, arch = N.find_config(f"conv_implicit_gemm/{args.config}")
    spec = N._with_defaults(fam, spec)
    text = N._Lowerer().text(fam, spec, arch)
    lines = text.split("\n")
    blk = block_of(lines)
    want = tuple(args.blocks.split(","))
    muts = []
    for kind in KINDS:
        for site in OPS.sites(text, kind):
            if blk[site[0]] in want:
                m = OPS.apply(text, kind, site)
                if not OPS.equivalent_reason(text, m):
                    muts.append(m)
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(args.jobs) as pool:
        before = pool.map(_judge, [("before", cfg, spec, arch, m.text) for m in muts], chunksize=1)
        alive = [m for m, b in zip(muts, before) if b is None]
        after = pool.map(_judge, [("after", cfg, spec, arch, m.text) for m in alive], chunksize=1)
    for m, a in zip(alive, after):
        print(f"{m.kind} line {m.line} [{blk[m.line - 1]}] {m.what}: "
              f"{'KILLED now: ' + a if a else 'survives'}")
    killed = sum(1 for a in after if a)
    print(f"{args.config}: {len(muts)} compare/select mutants in {', '.join(want)}; "
          f"{len(alive)} pass every case of the set before issue 34; {killed} of those killed now, "
          f"{len(alive) - killed} survive ({time.perf_counter() - t0:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

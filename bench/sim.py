"""Benchmark of the numerics oracle (parity/sim) against its goals (issue 25 item 2).

    python bench/sim.py [--repeats R] [--rounds N] [--jobs J] [--base REV] [--skip-numerics]
                        [--skip-rates] [--opt] [--opt-configs FILE] [-v]
    python bench/sim.py --items CONFIG[,CONFIG...]   (issue 34 items 3, 4 and 5: their cost)

Emulator speed: lane-instructions per second (wave-instructions x 32 / wall
seconds of one launch in both orders) on the reduce benchmark (bf16 v4 t256
degree 0, M 61 K 70, 4 slabs) and the conv benchmark (the default
conv_implicit_gemm config, its plan's first problem), with the shadow race
detector on (the goal: >= 10 M), off, and with coverage recording on. Each
figure is the median over ``rounds`` x ``repeats`` launches; the checkout of
``REV`` (default: the issue's base commit 24d40b6, in a temporary detached
worktree removed afterwards) runs the same IR text on the same arrays in the
same run, interleaved round by round, and the ratio now / base is printed
(when the base emulator cannot decode today's text, both run it with the
no-op ``wave.barrier`` / ``sched.barrier`` / ``s.wait.loadcnt`` calls and the
fences' ``!mmra``
attachments deleted, and the ratio says so: the emulator treats a fence the
same with or without its memory-model relaxation annotation, so the work is
the same). CPU-second rates are printed too: on a loaded machine they move less.
On a loaded machine the goal is also judged by ratio: the base ran 4.7 M
(reduce) and 6.7 M (conv) quiet (issue 25), so 10 M needs 2.13x and 1.49x.

`parity numerics`: the wall time of running every config (``run_all``, the
work of the command) of the base checkout and of this one on ``J`` workers
(default 2; ``--only`` some families), then of this one with ``--coverage``;
wave-instructions of each
(today's plans add the oracle issue's covering problems and invariants: their
share is the instruction ratio), cores used (CPU seconds of the run and its
workers / wall), how busy the workers were (their seconds inside configs /
jobs x wall: idle workers at the end show here even on a loaded machine), and
the goal (<= 60 s on a quiet machine).

``--opt``: the cost of the opt lane (parity/sim/optimised.py, docs/sim.md "The IR
after LLVM's optimizer"): ``run_all(opt=True)`` of this checkout on ``J``
workers with an empty compile cache (so opt runs cold), then again with the
cache it filled (warm): per family and in total the seconds in opt, the
seconds emulating the optimised modules, the optimised wave-instructions
against the engines' modules', and the wall time against the plain run's;
the ten dearest configs (all with ``-v``); ``--opt-configs FILE`` (FAMILY/NAME
lines, ``#`` comments: CI's ``.ci/opt_sample.txt``) measures those configs only.
``--skip-rates`` skips the emulator-speed part (and its base worktree).
"""
from __future__ import annotations

import json
import os
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from parity.cli.common import Parser, at_least_one, family_list, git_commit  # noqa: E402
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402

BASE = "24d40b6"
GOAL_RATE = 10e6       # lane-instructions / s, shadow on (issue 25 item 2)
GOAL_NUMERICS = 60.0   # s, quiet machine
NOOPS = ("@llvm.amdgcn.wave.barrier", "@llvm.amdgcn.sched.barrier", "@llvm.amdgcn.s.wait.loadcnt")
MMRA = re.compile(r", !mmra !\d+")
#: the base's rates with the shadow on, measured by issue 25 on a quiet machine (wall): on a
#: loaded one the goal is judged by the ratio now / base it needs (GOAL_RATE / these)
QUIET_BASE = {"reduce": 4.7e6, "conv": 6.7e6}


def _workloads() -> list:
    """The two benchmark launches of this checkout: (name, text, grid, block, cluster, args)."""
    import python_engine.api as api
    from parity.sim import numerics as N
    from parity.sim.plans import conv_implicit_gemm as CONV_PLAN
    text = api.lower("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 4, "threads": 256, "degree": 0},
                     "gfx1250", "llvm23").text
    M, K, ks = 61, 70, 4
    ws = np.random.default_rng(0).standard_normal((ks, M, K)).astype(np.float32)
    d = np.zeros(M * K, np.uint16)
    out = [("reduce", text, (-(-M * K // 1024), 1, 1), 256, None,
            {"ws_ptr": ws, "ws_bytes": ws.nbytes, "d_ptr": d, "d_bytes": d.nbytes, "M": M, "K": K, "ks_count": ks})]
    spec = N._with_defaults("conv_implicit_gemm", {})
    case = CONV_PLAN.conv_cases(spec, "gfx1250", N._Lowerer())[0]
    la = case.launches[0]
    ctext = api.lower("conv_implicit_gemm", {}, "gfx1250", "llvm23").text
    out.append(("conv", ctext, la.grid, la.block, la.cluster,
                {p: (case.buffers[v.name] if isinstance(v, N.Buf) else v) for p, v in la.args.items()}))
    return out


def _strip_noops(text: str) -> str:
    """``text`` without the no-op barrier calls and the fences' ``, !mmra !N``
    attachments, which the base emulator cannot decode."""
    kept = (MMRA.sub("", ln) for ln in text.split("\n") if not any(n in ln for n in NOOPS))
    return "\n".join(kept) + "\n"


def _jobs(loads: list, stripped: bool) -> list:
    out = []
    for name, text, grid, block, cluster, args in loads:
        t = _strip_noops(text) if stripped else text
        for mode, shadow, cov in (("shadow on", True, False), ("shadow off", False, False),
                                  ("coverage on", True, True)):
            out.append({"name": f"{name}|{mode}", "text": t, "grid": grid, "block": block, "cluster": cluster,
                        "args": args, "shadow": shadow, "coverage": cov})
    return out


def _run_rates(tree: str, path: str, repeats: int) -> dict:
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "sim_rate.py"), tree, path, str(repeats)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def _merge(acc: dict, res: dict) -> None:
    for k, v in res.items():
        a = acc.setdefault(k, {"wall": [], "cpu": [], "instructions": 0, "error": None})
        if "error" in v:
            a["error"] = v["error"]
        else:
            a["wall"] += v["wall"]
            a["cpu"] += v["cpu"]
            a["instructions"] = v["instructions"]


def _rate(a: dict, key: str) -> float:
    return a["instructions"] * 32 / statistics.median(a[key]) if a and a[key] else float("nan")


def _base_tree(rev: str, tmp: str) -> str:
    path = os.path.join(tmp, "base")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", path, rev], check=True,
                   capture_output=True)
    return path


def _numerics(tree: str, jobs: int, coverage: bool, only, opt: bool = False, select=None) -> dict:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "sim_rate.py"), "--numerics", tree, str(jobs)]
                       + (["--coverage"] if coverage else []) + ([f"--only={only}"] if only else [])
                       + (["--opt"] if opt else []) + ([f"--select={','.join(select)}"] if select else []),
                       capture_output=True, text=True)
    if r.returncode:
        return {"error": (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]}
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["process_wall"] = time.perf_counter() - t0
    return out


def _items_cost(names: list) -> int:
    """Per conv config: seconds and wave-instructions of its ``deep_*`` cases (issue 34
    item 5), its other bit-exact cases (item 3, ``cover.data_mode``) and the rest."""
    from parity.sim import cover
    from parity.sim import numerics as N
    from parity.sim.plans import conv_implicit_gemm as CONV_PLAN
    lw = N._Lowerer()
    for name in names:
        fam, cfg, spec, arch = N.find_config(name)
        tot = {"K-deep (item 5)": [0.0, 0], "tap loop's first trip (item 5)": [0.0, 0],
               "bit-exact (item 3)": [0.0, 0], "other": [0.0, 0]}
        for case in CONV_PLAN.conv_cases(N._with_defaults(fam, spec), arch, lw):
            if not isinstance(case, N.Case):
                continue
            kind = "K-deep (item 5)" if case.name.startswith("deep_") else \
                "tap loop's first trip (item 5)" if case.name.startswith(("cover_taps_first", "cover_taps_xwrap")) else \
                "bit-exact (item 3)" if cover.data_mode(case.name.split("_ks")[0]) == "exact" else "other"
            t0 = time.process_time()
            _, n = N.run_case(case, lw, case.orders)
            tot[kind][0] += time.process_time() - t0
            tot[kind][1] += n
        print(f"{cfg}: " + "; ".join(f"{k} {v[0]:.1f} CPU-s, {v[1]} wave-instr" for k, v in tot.items()))
        # item 4: every case again on the module after opt -O3 (the opt lane), one process
        lo = N._Lowerer(opt=True)
        t0 = time.process_time()
        o = N.run_config(fam, cfg, spec, arch, lo)
        lo.opt_lane.run_order_cases(o, fam, N._with_defaults(fam, spec), arch, lo, N)
        st = lo.opt_lane.stats.as_dict()
        print(f"{cfg}: opt -O3 lane (item 4): {time.process_time() - t0:.1f} CPU-s for the whole config with "
              f"the lane ({st.get('opt_seconds', 0):.1f} s wall in opt, {st.get('emulation_seconds', 0):.1f} s wall "
              f"emulating the optimised modules, {st.get('instructions', 0)} wave-instr){'' if o.ok else ', FAIL'}")
    return 0


def _parser() -> Parser:
    """The command line (module doc)."""
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=at_least_one("--repeats"), default=5, help="launches per workload per round")
    ap.add_argument("--rounds", type=at_least_one("--rounds"), default=3, help="interleaved base/now rounds")
    ap.add_argument("--jobs", "-j", type=at_least_one("--jobs"), default=2, help="numerics workers")
    ap.add_argument("--base", type=git_commit("--base"), default=BASE, help=f"the base commit (default {BASE})")
    ap.add_argument("--skip-numerics", action="store_true", help="skip the `parity numerics` wall times")
    ap.add_argument("--only", type=family_list("--only"), default=None, help="numerics of these families only (F1,F2; default all)")
    ap.add_argument("--skip-rates", action="store_true", help="skip the emulator-speed part (no base worktree)")
    ap.add_argument("--opt", action="store_true", help="measure the opt lane (opt -O3 time + emulation, per config)")
    ap.add_argument("--opt-configs", default=None, metavar="FILE",
                    help="--opt: only the FAMILY/NAME configs listed in FILE (e.g. .ci/opt_sample.txt)")
    ap.add_argument("-v", "--verbose", action="store_true", help="--opt: every config's line")
    ap.add_argument("--items", default=None, metavar="CONFIGS",
                    help="the cost of issue 34's problem kinds on these conv configs (comma-separated names): "
                         "seconds and wave-instructions of the K-deep (item 5), bit-exact (item 3) and other "
                         "cases, one process; then exit")
    return ap


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if a.items:
        return _items_cost(a.items.split(","))
    if a.skip_rates:
        if a.opt:
            _opt_lane(a)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench_sim_") as tmp:
        base = _base_tree(a.base, tmp)
        try:
            _emulator_speed(a, base, tmp)
            if not a.skip_numerics:
                _numerics_walls(a, base)
                from bench.sim_classes import report as class_report  # issue 34's problem classes
                for line in class_report():
                    print(line)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", base], capture_output=True)
    if a.opt:
        _opt_lane(a)
    return 0


def _emulator_speed(a, base: str, tmp: str) -> None:
    """Measure and print the emulator's rates, this checkout against ``base``, interleaved round by round."""
    loads = _workloads()
    paths = {}
    for stripped in (False, True):
        paths[stripped] = os.path.join(tmp, f"work{int(stripped)}.pkl")
        with open(paths[stripped], "wb") as fh:
            pickle.dump(_jobs(loads, stripped), fh)
    now, then, now_s = {}, {}, {}
    probe = _run_rates(base, paths[False], 1)
    base_strip = any("error" in v for v in probe.values())
    for _ in range(a.rounds):
        _merge(then, _run_rates(base, paths[base_strip], a.repeats))
        _merge(now, _run_rates(str(ROOT), paths[False], a.repeats))
        if base_strip:
            _merge(now_s, _run_rates(str(ROOT), paths[True], a.repeats))
    same = now_s if base_strip else now
    print(f"\nemulator speed, median of {a.rounds}x{a.repeats} launches (both orders); base {a.base} in the "
          f"same run{' (both on the text without the no-op wave/sched.barrier/s.wait.loadcnt calls and !mmra attachments the base cannot decode)' if base_strip else ''}")
    print(f"{'benchmark':<26} {'now M lane-instr/s':>19} {'goal':>6} {'base':>7} {'now/base':>9}   "
          f"{'CPU-s rates: now':>17} {'base':>6} {'ratio':>6}")
    for k in now:
        _rate_row(k, now[k], then.get(k), same.get(k))


def _rate_row(k: str, n: dict, b: dict | None, s: dict | None) -> None:
    """One benchmark's line (now, base, now on the base's text) and, for the goal's rows, the goal by ratio."""
    goal = GOAL_RATE if k.endswith("shadow on") else None
    met = "" if goal is None else ("met" if _rate(n, "wall") >= goal else "not met")
    bw = _rate(b, "wall") if b and not b["error"] else float("nan")
    bc = _rate(b, "cpu") if b and not b["error"] else float("nan")
    print(f"{k.replace('|', ', '):<26} {_rate(n, 'wall') / 1e6:>19.2f} {met:>6} {bw / 1e6:>7.2f} "
          f"{_rate(s, 'wall') / bw:>8.2f}x   {_rate(n, 'cpu') / 1e6:>17.2f} {bc / 1e6:>6.2f} "
          f"{_rate(s, 'cpu') / bc:>5.2f}x" + (f"  (base: {b['error']})" if b and b["error"] else ""))
    if goal is not None and not (b and b["error"]):
        need = goal / QUIET_BASE[k.split("|")[0]]
        got = min(_rate(s, "wall") / bw, _rate(s, "cpu") / bc)
        print(f"{'':<26} goal by ratio: the base ran {QUIET_BASE[k.split('|')[0]] / 1e6:.1f} M quiet "
              f"(issue 25), so 10 M needs {need:.2f}x; lower of the two ratios {got:.2f}x: "
              f"{'met' if got >= need else 'not met'}")


def _numerics_walls(a, base: str) -> None:
    """`parity numerics`' wall time: the base, this checkout, this checkout with --coverage."""
    print(f"\nparity numerics (run_all of every config{' of ' + a.only if a.only else ''}, {a.jobs} "
          f"workers); goal <= {GOAL_NUMERICS:.0f} s "
          f"on a quiet machine, load average now {os.getloadavg()[0]:.1f}")
    rb = _numerics(base, a.jobs, False, a.only)
    rn = _numerics(str(ROOT), a.jobs, False, a.only)
    rc = _numerics(str(ROOT), a.jobs, True, a.only)
    for label, r in ((f"base {a.base}", rb), ("now", rn), ("now --coverage", rc)):
        if "error" in r:
            print(f"  {label}: failed: {r['error']}")
            continue
        print(f"  {label:<15} {r['wall']:7.1f} s wall, {r['ok']}/{r['configs']} configs pass, "
              f"{r['instructions']:,} wave-instructions ({r['instructions'] / r['wall'] / 1e6:.2f} M/s), "
              f"{r['cpu'] / r['wall']:.2f} cores used, workers busy {r['busy'] / (a.jobs * r['wall']):.0%}")
    if not any("error" in r for r in (rb, rn, rc)):
        same_work = rn["wall"] * rb["instructions"] / rn["instructions"]
        print(f"  now / base wall: {rn['wall'] / rb['wall']:.2f}x; on the base's work (its "
              f"wave-instructions at today's rate): {same_work:.1f} s = {same_work / rb['wall']:.2f}x of "
              f"the base" + ("" if a.only else f" ({'met' if same_work <= GOAL_NUMERICS else 'not met'} "
                                                f"against {GOAL_NUMERICS:.0f} s at this load)"))
        print(f"  the oracle issue's covering problems and invariants: {rn['instructions'] / rb['instructions']:.2f}x "
              f"the base's wave-instructions; --coverage adds {rc['wall'] - rn['wall']:+.1f} s "
              f"({rc['wall'] / rn['wall']:.2f}x)")


def _opt_lane(a) -> None:
    """Print the opt lane's cost (module doc, ``--opt``)."""
    sel = None
    if a.opt_configs:
        sel = [ln.strip() for ln in Path(a.opt_configs).read_text().splitlines()
               if ln.strip() and not ln.startswith("#")]
    print(f"\nopt -O3 lane (run_all(opt=True), {a.jobs} workers{', ' + a.only if a.only else ''}"
          f"{f', {len(sel)} configs of {a.opt_configs}' if sel else ''}); load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="bench_opt_cache_") as cache:
        env = os.environ.get("PARITY_COMPILE_CACHE")
        os.environ["PARITY_COMPILE_CACHE"] = cache
        try:
            plain = _numerics(str(ROOT), a.jobs, False, a.only, select=sel)
            cold = _numerics(str(ROOT), a.jobs, False, a.only, opt=True, select=sel)
            warm = _numerics(str(ROOT), a.jobs, False, a.only, opt=True, select=sel)
        finally:
            if env is None:
                os.environ.pop("PARITY_COMPILE_CACHE", None)
            else:
                os.environ["PARITY_COMPILE_CACHE"] = env
    for label, r in (("plain", plain), ("opt lane, cold cache", cold), ("opt lane, warm cache", warm)):
        if "error" in r:
            print(f"  {label}: failed: {r['error']}")
            return
        print(f"  {label:<21} {r['wall']:7.1f} s wall, {r['ok']}/{r['configs']} configs pass, "
              f"{r['instructions']:,} wave-instructions of the engines' modules")
    for label, r in (("cold", cold), ("warm", warm)):
        rows = r["per_config"]
        fams = sorted({row[0] for row in rows})
        print(f"  {label} cache: {'family':<26} {'configs':>7} {'opt s':>8} {'emul. s':>8} {'cases':>6} "
              f"{'opt wave-instr':>15} {'config s':>9}")
        for fam in fams + ["total"]:
            sel = [row for row in rows if fam in ("total", row[0])]
            st = [row[4] or {} for row in sel]
            print(f"  {'':<12}{fam:<26} {len(sel):>7} {sum(x.get('opt_seconds', 0) for x in st):>8.1f} "
                  f"{sum(x.get('emulation_seconds', 0) for x in st):>8.1f} {sum(x.get('cases', 0) for x in st):>6} "
                  f"{sum(x.get('instructions', 0) for x in st):>15,} {sum(row[2] for row in sel):>9.1f}")
    rows = sorted(cold["per_config"], key=lambda row: -row[2])
    print(f"  per config (cold cache; config s = the whole config, plain run included), "
          f"{'all' if a.verbose else 'the ten dearest'}:")
    for fam, cfg, sec, ok, st in (rows if a.verbose else rows[:10]):
        st = st or {}
        print(f"    {fam}/{cfg}: {sec:.2f} s, opt {st.get('opt_seconds', 0):.2f} s ({st.get('modules', 0)} modules), "
              f"emulation {st.get('emulation_seconds', 0):.2f} s{'' if ok else ', FAIL'}")
    print(f"  the lane costs {cold['wall'] - plain['wall']:+.1f} s wall cold, {warm['wall'] - plain['wall']:+.1f} s "
          f"warm, over the plain run's {plain['wall']:.1f} s ({warm['wall'] / plain['wall']:.2f}x warm)")


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

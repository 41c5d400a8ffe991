"""Differential runs of a mutant against its honest kernel (issue 34 item 6): a
survivor argued equivalent in docs/sim.md is backed by D bit for bit equal to the
honest kernel's on N random admitted problems.

:func:`differential` draws conv problems (seeded; small, so N = 1,000 is minutes,
not hours): N 1-2 images, H and W 1-12, C = groups * cpg with cpg in 1-72, K =
groups * kpg with kpg in 1-72, Y and X in 1-7 (tall, wide and square filters),
stride 1-2, padding 0 .. filter - 1 per axis (top/bottom, left/right), dilation
1-2, groups 1-2; a problem the conv_launch plan does not admit for the config is
drawn again (not counted). Each problem runs through the numerics plan's launch
route (parity/sim/plans/conv_implicit_gemm.py ``conv_cases``, the config's own degree) twice on
the same data, honest and mutant (``launch_plan`` mutants: the mutated plan), and
the D buffers (and the workspace, when the plan has one) are compared byte for
byte. The reduce family is not drawn here (its survivors are argued by the tail
and wave-path rules, whose problems are M, K, ks_count only).
"""
from __future__ import annotations

import dataclasses
import random
import time

import numpy as np

from parity.cli.interrupt import leave_sigint_to_parent
from parity.sim import numerics as N
from parity.sim.plans import conv_implicit_gemm as CONV_PLAN


def random_problem(rng: random.Random, i: int, vector_a: int = 1) -> tuple:
    """One random conv problem in the numerics problem tuple form (name, N, C, H, W, K,
    Y, X, stride, pad, dil, groups); cpg a multiple of ``vector_a`` (padded-pixel
    widths 3, 5, 6, 7: cpg = vector_a), so most draws are admitted."""
    G = rng.choice((1, 1, 2))
    cpg = vector_a if vector_a in (3, 5, 6, 7) else vector_a * rng.randint(1, max(1, 72 // vector_a))
    kpg = rng.randint(1, 72)
    Y, X = rng.randint(1, 7), rng.randint(1, 7)
    H, W = rng.randint(1, 12), rng.randint(1, 12)
    pad = (rng.randint(0, Y - 1), rng.randint(0, X - 1))
    dil = (rng.randint(1, 2), rng.randint(1, 2))
    st = (rng.randint(1, 2), rng.randint(1, 2))
    H = max(H, (Y - 1) * dil[0] + 1 - 2 * pad[0])
    W = max(W, (X - 1) * dil[1] + 1 - 2 * pad[1])
    return (f"diff{i}", rng.randint(1, 2), G * cpg, H, W, G * kpg, Y, X, st, pad, dil, G)


def _outputs(case, lowerer) -> bytes:
    got = {}

    def grab(bufs):
        got["b"] = b"".join(np.ascontiguousarray(bufs[k]).tobytes() for k in ("d", "ws") if k in bufs)
        return []
    N.run_case(dataclasses.replace(case, check=grab), lowerer, ("forward",))
    return got["b"]


def _admitted(job, lw, rng, draws: int, limit: int):
    """The next admitted problem of ``job``'s config drawn from ``rng`` (``draws`` so
    far): ``(problem, its case, draws)``, or ``(None, None, draws)`` past ``limit`` draws."""
    while draws < limit:
        draws += 1
        prob = random_problem(rng, draws, job.spec["vector_a"])
        try:
            cases = [c for c in CONV_PLAN.conv_cases(job.spec, job.arch, lw, problems=(prob,)) if isinstance(c, N.Case)]
        except N.SimError as e:
            if "no conv problem is admitted" in str(e):
                continue
            raise
        if cases:
            return prob, cases[0], draws
    return None, None, draws


def _fast(lowerer):
    """The differential compares D bytes of one wave order: the race shadow (an oracle
    of the plans, not of D's value) is off, which halves the cost."""
    lowerer.shadow = False
    return lowerer


def _group(args) -> list:
    """Worker: the admitted problems ``k, k + J, k + 2J, ...`` (of the seeded sequence) of
    one config, each run once honest and once per mutant of ``jobs``; per mutant
    ``[equal, differ, (first index, text) or None]``."""
    jobs, n, seed, k, J = args
    from parity.mutate import run as R
    hon = _fast(N._Lowerer())
    muts = [_fast(R.mutant_lowerer(j)) for j in jobs]
    rng = random.Random(seed)
    out = [[0, 0, None] for _ in jobs]
    draws = 0
    for a in range(n):
        prob, case, draws = _admitted(jobs[0], hon, rng, draws, 50 * n)
        if prob is None:
            break
        if a % J != k:
            continue
        honest = _outputs(case, hon)
        for r, j, mut in zip(out, jobs, muts):
            other = _mutant_output(j, mut, prob)
            if other == honest:
                r[0] += 1
            else:
                r[1] += 1
                if r[2] is None:
                    r[2] = (a, f"{prob[0]} {prob[1:]}: " + (other[:200].decode("utf-8", "replace")
                                                            if not other or other[:1].isalpha() else "D differs"))
    return out


def differential_many(jobs: list, n: int, seed: int = 0, n_jobs: int = 1, chunks: int = 0,
                      progress=None) -> list:
    """``[(equal, differ, first difference or error text, seconds)]`` per mutant of ``jobs``
    (each against its honest kernel over the same ``n`` admitted random problems of its
    config, drawn with ``seed``). The mutants of one config share each problem's honest
    run; the problems are dealt in ``chunks`` parts (default ``n_jobs``; problem a goes to
    part a mod chunks) to ``n_jobs`` worker processes (the seconds are the config's wall
    time, shared by its mutants). ``progress(config, parts done, parts, [(equal, differ)
    per mutant so far])`` is called as each part ends, so a long run reports its counts
    before it is over. A mutant that raises where the honest kernel runs counts as
    differing. ``ValueError`` for a family other than conv_implicit_gemm."""
    import multiprocessing as mp
    for j in jobs:
        if j.family != "conv_implicit_gemm":
            raise ValueError(f"--differential draws conv problems; {j.family} is not drawn (docs/sim.md)")
    groups: dict = {}
    for i, j in enumerate(jobs):
        groups.setdefault(j.config, []).append(i)
    res = [None] * len(jobs)
    # no more parts than problems (each part draws the whole seeded sequence to find its own
    # problems), no more workers than parts (as the gate's pool starts them)
    J = max(1, min(chunks or n_jobs, n))
    n_jobs = min(n_jobs, J)
    for idx in groups.values():
        js = [jobs[i] for i in idx]
        t0 = time.perf_counter()
        work = [(js, n, seed, k, J) for k in range(J)]
        parts = []

        def done(part, js=js):
            parts.append(part)
            if progress is not None:
                progress(js[0].config, len(parts), J,
                         [(sum(p[m][0] for p in parts), sum(p[m][1] for p in parts)) for m in range(len(js))])
        if n_jobs > 1:
            with mp.get_context("fork").Pool(n_jobs, initializer=leave_sigint_to_parent) as pool:
                for part in pool.imap_unordered(_group, work, chunksize=1):
                    done(part)
        else:
            for w in work:
                done(_group(w))
        secs = time.perf_counter() - t0
        for m, i in enumerate(idx):
            firsts = [p[m][2] for p in parts if p[m][2] is not None]
            first = min(firsts)[1] if firsts else ""
            res[i] = (sum(p[m][0] for p in parts), sum(p[m][1] for p in parts), first, secs)
    return res


def _mutant_output(job, mut, prob) -> bytes:
    """The mutant's output buffers on ``prob`` (bytes, compared with the honest run's), or
    the reason it did not run: "(not admitted)", or the error it raised where the honest
    kernel ran (a difference too)."""
    try:
        mcases = [c for c in CONV_PLAN.conv_cases(job.spec, job.arch, mut, problems=(prob,)) if isinstance(c, N.Case)]
        return _outputs(mcases[0], mut) if mcases else b"(not admitted)"
    except Exception as e:   # the mutant fails where the honest kernel ran: a difference
        return f"{type(e).__name__}: {e}".encode()

def differential(job, n: int, seed: int = 0, honest_lowerer=None, mutant_lowerer=None, max_draws: int = 0):
    """``(equal, differ, first difference or error text, seconds)`` of ``job``'s mutant
    against its honest kernel over ``n`` admitted random problems. A mutant that
    raises where the honest kernel runs counts as differing. ``ValueError`` for a
    family other than conv_implicit_gemm."""
    if job.family != "conv_implicit_gemm":
        raise ValueError(f"--differential draws conv problems; {job.family} is not drawn (docs/sim.md)")
    from parity.mutate import run as R
    hon = honest_lowerer or N._Lowerer()
    mut = mutant_lowerer or R.mutant_lowerer(job)
    rng = random.Random(seed)
    t0 = time.perf_counter()
    equal = differ = draws = 0
    first = ""
    while equal + differ < n:
        prob, case, draws = _admitted(job, hon, rng, draws, max_draws or 50 * n)
        if prob is None:
            break
        honest = _outputs(case, hon)
        other = _mutant_output(job, mut, prob)
        if other == honest:
            equal += 1
        else:
            differ += 1
            first = first or f"{prob[0]} {prob[1:]}: " + (other[:200].decode("utf-8", "replace")
                                                            if not other or other[:1].isalpha() else "D differs")
    return equal, differ, first, time.perf_counter() - t0

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
    while equal + differ < n and draws < (max_draws or 50 * n):
        draws += 1
        prob = random_problem(rng, draws, job.spec["vector_a"])
        try:
            cases = [c for c in CONV_PLACONV_PLAN.conv_cases(job.spec, job.arch, hon, problems=(prob,)) if isinstance(c, N.Case)]
        except N.SimError as e:
            if "no conv problem is admitted" in str(e):
                continue
            raise
        if not cases:
            continue
        honest = _outputs(cases[0], hon)
        try:
            mcases = [c for c in CONV_PLACONV_PLAN.conv_cases(job.spec, job.arch, mut, problems=(prob,)) if isinstance(c, N.Case)]
            other = _outputs(mcases[0], mut) if mcases else b"(not admitted)"
        except Exception as e:   # the mutant fails where the honest kernel ran: a difference
            other = f"{type(e).__name__}: {e}".encode()
        if other == honest:
            equal += 1
        else:
            differ += 1
            first = first or f"{prob[0]} {prob[1:]}: " + (other[:200].decode("utf-8", "replace")
                                                            if not other or other[:1].isalpha() else "D differs")
    return equal, differ, first, time.perf_counter() - t0

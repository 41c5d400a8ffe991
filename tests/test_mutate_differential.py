"""`parity mutate --differential N` (parity/mutate/differential.py): the mutants of one
config share each random problem's honest run, the problems are dealt to workers, and
the counts equal the one-mutant-at-a-time function's on the same seed."""
from __future__ import annotations

import python_engine.api as api
from parity.mutate import differential as D
from parity.mutate import operators as OPS
from parity.mutate import run as R
from parity.sim import numerics as N

NAME = "plain_mem_default_32x32x32_w1x1_bf16"


def _jobs():
    fam = "conv_implicit_gemm"
    _, _, spec, arch = next(c for c in N.accepted_configs() if c[0] == fam and c[1] == NAME)
    full = N._with_defaults(fam, spec)
    t = api.lower(fam, full, arch, "llvm23").text
    same = R.Job(fam, NAME, full, arch, t, OPS.Mutant("cmp_boundary", 1, "none", t))   # the honest text
    site = next(s for s in OPS.sites(t, "kloop_cmp") if s[1] == "cmp_negate")            # a K-loop compare negated
    return [same, R.Job(fam, NAME, full, arch, t, OPS.apply(t, "kloop_cmp", site))]


def test_differential_many_shares_problems_and_matches_the_single_run():
    jobs = _jobs()
    many = D.differential_many(jobs, 3, seed=1, n_jobs=2)
    assert [(eq, dif) for eq, dif, _, _ in many][0] == (3, 0)
    assert many[1][0] + many[1][1] == 3 and many[1][1] >= 1 and many[1][2].startswith("diff")
    one = D.differential(jobs[1], 3, seed=1)
    assert one[:2] == many[1][:2]

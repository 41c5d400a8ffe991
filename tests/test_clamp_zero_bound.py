"""Clamp bounds of +-0 (issue 34: the ASSUMPTION of the former *float min/max at the bound*
argument, that no caller passes such a bound): the reduce's zero-bound cases
(numerics_fused.ZERO_BOUNDS) and the conv's ``cover_clamp_zero`` problem (checks.CONV_ZERO_BOUNDS)
pass the honest kernels and kill the bound compares made non-strict, which store the bound's
zero with the other sign."""
from __future__ import annotations

import numpy as np
import pytest

from parity.mutate import operators as OPS
from parity.mutate import run as R
from parity.sim import checks as CK
from parity.sim import cover
from parity.sim import numerics as N
from parity.sim import numerics_fused as NF
from parity.sim import reference as ref
from parity.sim.plans import conv_fwd_split_k_reduce as RP
from parity.sim.plans import conv_implicit_gemm as CP


def _config(fam: str, name: str):
    _, _, spec, arch = next(c for c in N.accepted_configs([fam]) if c[1] == name)
    return N._with_defaults(fam, spec), arch


def _bound_mutants(fam: str, name: str) -> list:
    full, arch = _config(fam, name)
    t = N._Lowerer().text(fam, full, arch)
    lines = t.split("\n")
    return [R.Job(fam, name, full, arch, t, OPS.apply(t, "cmp_boundary", s)) for s in OPS.sites(t, "cmp_boundary")
            if " = fcmp o" in lines[s[0]] and ("%above" in lines[s[0]] or "%below" in lines[s[0]]
                                              or "clamp" in lines[s[0]])]


def _fails(case, lowerer) -> list:
    try:
        return N.run_case(case, lowerer, case.orders)[0]
    except Exception as e:   # a kernel the emulator refuses has failed the case
        return [f"{type(e).__name__}: {e}"]


def test_the_reference_keeps_the_sign_of_a_zero_at_a_zero_bound():
    e, _ = ref.epilogue_f64("clamp", np.array([0.0, -0.0, 3.0, -3.0]), None, CK.CONV_ZERO_BOUNDS)
    assert [np.signbit(x) for x in e] == [False, True, True, True]     # +0 kept; 3 -> hi -0; -3 -> lo -0
    s = NF.epilogue_f32("clamp", np.array([-0.0, 0.0], np.float32), np.zeros(2, int), None, NF.ZERO_BOUNDS[0])
    assert list(np.signbit(s)) == [True, False]                         # -0 < +0 is false: -0 kept


def test_reduce_zero_bound_cases_kill_both_bound_compares():
    full, arch = _config("conv_fwd_split_k_reduce", "fused_clamp_bf16_v1_t64_d0")
    honest = N._Lowerer()
    cases = [c for c in RP.cases(full, arch, honest) if "_zero_bound" in c.name]
    assert [c.name.split("_zero_bound")[1] for c in cases] == ["_lo+0", "_hi-0"]
    assert all(_fails(c, honest) == [] for c in cases)
    jobs = _bound_mutants("conv_fwd_split_k_reduce", "fused_clamp_bf16_v1_t64_d0")
    assert len(jobs) >= 4
    for j in jobs:
        lw = R.mutant_lowerer(j)
        got = [_fails(c, lw) for c in RP.cases(full, arch, lw) if "_zero_bound" in c.name]
        assert any(got), j.mutant.what


@pytest.mark.parametrize("name, n_cases, n_jobs", [
    ("fused_clamp_wavelet1_default_64x64_bf16", 2, 128),   # 4 fragments x 8 elements x 2 x (wide, narrow D)
    ("fused_clamp_wavelet1_cshuffle_64x64_bf16", 2, None),  # the cshuffle wide and narrow (4-wide) paths
])
def test_conv_zero_bound_problem_kills_both_bound_compares(name, n_cases, n_jobs):
    full, arch = _config("conv_implicit_gemm", name)
    probs = [p for p in cover.conv_cover_problems(full) if p[0].startswith("cover_clamp_zero")]
    assert [p[0] for p in probs] == ["cover_clamp_zero", "cover_clamp_zero_narrow"]
    assert all(cover.data_mode(p[0]) == "exact" for p in probs)
    honest = N._Lowerer()
    cases = [c for c in CP.conv_cases(full, arch, honest, problems=probs) if isinstance(c, N.Case)]
    assert len(cases) == n_cases and all(_fails(c, honest) == [] for c in cases)
    jobs = _bound_mutants("conv_implicit_gemm", name)
    assert len(jobs) == n_jobs if n_jobs else len(jobs) >= 16
    for j in jobs[::5]:       # every fifth (both compares, every element class): the emulator is slow
        lw = R.mutant_lowerer(j)
        got = [_fails(c, lw) for c in CP.conv_cases(full, arch, lw, problems=probs) if isinstance(c, N.Case)]
        assert any(got), j.mutant.what

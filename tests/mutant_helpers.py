"""Mutant jobs of one conv config for the mutation-lane tests (tests/test_mutate_*.py)."""
from __future__ import annotations

import re

import python_engine.api as api
from parity.mutate import operators as OPS
from parity.mutate import run as R
from parity.sim import numerics as N

FAM = "conv_implicit_gemm"


def conv_jobs(cfg: str, kind: str, pattern: str, fam: str = FAM) -> list:
    """Every ``kind`` mutant (a parity/mutate/run.py ``Job``) of the ``fam`` config ``cfg``'s
    llvm23 kernel (the conv family unless given) whose honest line matches the regular
    expression ``pattern``."""
    _, _, spec, arch = next(c for c in N.accepted_configs() if c[0] == fam and c[1] == cfg)
    full = N._with_defaults(fam, spec)
    t = api.lower(fam, full, arch, "llvm23").text
    lines = t.split("\n")
    return [R.Job(fam, cfg, full, arch, t, OPS.apply(t, kind, s)) for s in OPS.sites(t, kind)
            if re.search(pattern, lines[s[0]])]


def argued_names(cfg: str, kind: str, pattern: str) -> dict:
    """{mutant description: the name of the first argument (parity/mutate/argued.py) that
    matches it, or None} over :func:`conv_jobs` of ``cfg``."""
    from parity.mutate import argued as AR
    return {j.mutant.what: next((n for n, p in AR.ARGUED if p(R._view(j))), None)
            for j in conv_jobs(cfg, kind, pattern)}

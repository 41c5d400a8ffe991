"""The unit-image probes (parity/sim/cover_unit.py), the two-stage K walk at dilation 2
(``cover_kwalk_dil``) and the reduce tail's specials: each kills the survivors of the
every-site runs it was drawn against (docs/sim.md, "Every-site runs"), and the honest
kernels pass it."""
from __future__ import annotations

import re

import numpy as np
import pytest

import python_engine.api as api
from parity.mutate import operators as OPS
from parity.mutate import run as R
from parity.sim import cases as CS
from parity.sim import cover
from parity.sim import cover_unit as CU
from parity.sim import numerics as N
from parity.sim.errors import SimError
from parity.sim.plans import conv_implicit_gemm as CONV_PLAN


def _brute_cpg(tk, d, two_deep):
    """unit_loop_cpg by its definition, tile by tile."""
    for cpg in range(8, 4097, 8):
        if cpg % (2 * tk) == 0:
            continue
        kg = 9 * cpg
        ks = -(-(-(-kg // d)) // tk) * tk
        ok = True
        for tap in CU.PROBE_TAPS:
            idx = [(t - kb) // tk for kb in range(0, kg, ks) for t in range(kb, min(kb + ks, kg), tk)
                   if tap * cpg <= t and t + tk <= (tap + 1) * cpg]
            if two_deep:
                ok &= any(i >= 2 and i % 2 == 0 for i in idx) and any(i >= 3 and i % 2 == 1 for i in idx)
            else:
                ok &= any(i >= 1 for i in idx)
        if ok:
            return cpg
    return None


def test_probe_tile_indices_by_hand():
    """cpg 112 at S = 4, tile_k 32: Kgemm 1008, ks 256; tap 7 = K [784, 896) holds slice 3's
    tiles 800, 832, 864 (indices 1, 2, 3), tap 5 = [560, 672) slice 2's 576, 608, 640 (2, 3, 4)."""
    assert CU.probe_tile_indices(112, 7, 4, 32) == {1, 2, 3}
    assert CU.probe_tile_indices(112, 5, 4, 32) == {2, 3, 4}
    assert CU.slice_starts(1008, 4, 32) == (256, range(0, 1008, 256))


@pytest.mark.parametrize("tk,d,two_deep,want", [(32, 1, True, 80), (32, 1, False, 32), (64, 1, False, 64),
                                                (32, 2, True, 96), (64, 2, False, 96), (32, 4, True, 112),
                                                (32, 15, True, 168), (64, 15, False, 112)])
def test_unit_loop_cpg(tk, d, two_deep, want):
    assert CU.unit_loop_cpg(tk, d, two_deep) == want == _brute_cpg(tk, d, two_deep)


def _lowered(fam, name, block):
    """(full, arch, text, lines, index of the line of the first label starting ``block``)."""
    _, _, spec, arch = next(c for c in N.accepted_configs([fam]) if c[1] == name)
    full = N._with_defaults(fam, spec)
    t = api.lower(fam, full, arch, "llvm23").text
    lines = t.split("\n")
    return full, arch, t, lines, next(i for i, ln in enumerate(lines) if ln.startswith(block))


def _job_after(fam, name, block, kind, pick):
    """The ``kind`` mutant at the first site past ``block``'s label whose line (and mutant)
    ``pick(line, mutant)`` accepts: (full, arch, Job)."""
    full, arch, t, lines, start = _lowered(fam, name, block)
    site = next(s for s in OPS.sites(t, kind) if s[0] > start and pick(lines[s[0]], OPS.apply(t, kind, s)))
    return full, arch, R.Job(fam, name, full, arch, t, OPS.apply(t, kind, site))


def _pixel_test_jobs(name, block):
    """cmp_boundary mutants of every ``a_hok`` / ``a_wok`` pixel test in ``block`` (a label
    prefix) of a conv config: (full, arch, [Job])."""
    fam = "conv_implicit_gemm"
    full, arch, t, lines, start = _lowered(fam, name, block)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].endswith(":"))
    sites = [s for s in OPS.sites(t, "cmp_boundary") if start < s[0] < end
             and lines[s[0]].lstrip().startswith(("%a_hok", "%a_wok"))]
    return full, arch, [R.Job(fam, name, full, arch, t, OPS.apply(t, "cmp_boundary", s)) for s in sites]


def _kills(full, arch, jobs, pname):
    prob = next(p for p in cover.conv_cover_problems(full) if p[0] == pname)
    honest = N._Lowerer()
    case = next(c for c in CONV_PLAN.conv_cases(full, arch, honest, problems=(prob,)) if isinstance(c, N.Case))
    assert N.run_case(case, honest, case.orders)[0] == []
    alive = []
    for job in jobs:
        lw = R.mutant_lowerer(job)
        case = next(c for c in CONV_PLAN.conv_cases(full, arch, lw, problems=(prob,)) if isinstance(c, N.Case))
        try:
            killed = bool(N.run_case(case, lw, case.orders)[0])
        except SimError:   # a race, an out-of-bounds access: the oracle's failure
            killed = True
        if not killed:
            alive.append(job.mutant.line)
    return alive


def test_unit_first_kills_every_prologue_pixel_test_of_va1():
    """plain va1/vb2 loads one element a slot (16 row slots): the prologue's a_hok / a_wok
    one long survived on six and three slots; cover_unit_first kills all 32."""
    full, arch, jobs = _pixel_test_jobs("plain_mem_default_va1_vb2_bf16", "prologue")
    assert len(jobs) == 32
    assert _kills(full, arch, jobs, "cover_unit_first") == []


def test_unit_loop_kills_every_kloop_pixel_test_of_skc4():
    """skc4 64x64's two-deep loop: the second half's a_hok (the k_pre rows of tile t + 3)
    survived every other problem; cover_unit_loop (cpg 112) kills all 8 K-loop pixel tests."""
    full, arch, jobs = _pixel_test_jobs("skc4_mem_default_64x64_bf16", "kloop")
    assert len(jobs) == 8
    assert _kills(full, arch, jobs, "cover_unit_loop") == []


def test_unit_loop_kills_every_kloop_pixel_test_of_va1():
    """plain va1/vb2's K loop: `a_wok` one long survived on one slot; cover_unit_loop
    (cpg 32: taps 5 and 7 fill K tiles 5 and 7) kills all 32 K-loop pixel tests."""
    full, arch, jobs = _pixel_test_jobs("plain_mem_default_va1_vb2_bf16", "kloop")
    assert len(jobs) == 32
    assert _kills(full, arch, jobs, "cover_unit_loop") == []


def test_kwalk_dil_kills_the_swapped_carry_step():
    """spk4 64x64x64: ``k_ks = select k_cyc, k_kstepc, k_kstep`` with its arms swapped in the
    K loop only differs where k_dcy = (dil_w - 1)*cpg*2 is not 0."""
    full, arch, job = _job_after("conv_implicit_gemm", "spk4_mem_default_64x64x64_fp16", "kloop", "select_swap",
                                 lambda ln, m: "%k_kstepc" in ln)
    assert _kills(full, arch, [job], "cover_kwalk_dil") == []


def test_place_specials_reaches_the_tail():
    """M*K = 63 at vector 1 (one full wave of 32, a 31-element tail): the specials at 0..15
    and, NaN first, at 32..47; the last ``reserve`` elements untouched."""
    ws = np.ones((3, 63), np.float32)
    CS.place_specials(ws, 1, 9)
    assert np.array_equal(ws[0, :16], CS.REDUCE_SPECIALS, equal_nan=True)
    assert np.isnan(ws[0, 32]) and ws[0, 33] == -np.inf and ws[0, 34] == np.inf
    assert (ws[1:, 32:48] == 0).all() and (ws[:, 48:] == 1).all()
    # the -0.0 special (index 12; 35 in the reversed tail copy) is -0.0 in every slab: its sum is -0.0
    assert np.signbit(ws[:, 12]).all() and np.signbit(ws[:, 35]).all() and not np.signbit(ws[1:, 11]).any()
    probed = np.ones((3, 63), np.float32)   # the order probe after each copy, short of the reserve
    CS.place_specials(probed, 1, 9, order_probe=True)
    assert (probed[0, 16:24] == 2.0 ** 20).all() and (probed[1, 16:24] == -2.0 ** 20).all()
    assert (probed[0, 48:54] == 2.0 ** 20).all() and (probed[0, 54:] == 1).all()
    one = np.ones((2, 1), np.float32)   # M*K = 1: no full wave, the head copy only
    CS.place_specials(one, 1, 1)
    assert one[0, 0] == CS.REDUCE_SPECIALS[0] and one[1, 0] == 0


def test_nnan_on_the_reduce_tail_is_killed():
    """CI's mutate-new survivor: ``nnan`` on the scalar tail's slab sum of a fused reduce."""
    fam, name = "conv_fwd_split_k_reduce", "fused_scale_bf16_v1_t64_d4"
    full, arch, job = _job_after(fam, name, "tail_elem", "promise_lie",
                                 lambda ln, m: "= fadd float %slab" in ln and "nnan" in m.what)
    out = N.run_config(fam, name, full, arch, R.mutant_lowerer(job), first_failure=True)
    assert out.problems and "nnan" in out.problems[0], out.problems


def test_wide_n16_kills_the_padded_pixel_d_column_mask():
    """va3's 16-byte D path: ``e_nok = e_n < kpg`` one long on the chunk at columns 16..23
    survived the class's every-site run; kpg 16 puts that chunk at kpg."""
    fam, name = "conv_implicit_gemm", "plain_mem_default_va3_vb3_bf16"
    full, arch, t, lines, _ = _lowered(fam, name, "entry")
    jobs = [R.Job(fam, name, full, arch, t, OPS.apply(t, "cmp_boundary", s)) for s in OPS.sites(t, "cmp_boundary")
            if lines[s[0]].lstrip().startswith("%e_nok") and "dt_corg" in lines[s[0] - 4]
            and lines[s[0] - 4].endswith(", 16")]   # the chunk at wave columns 16..23
    assert len(jobs) == 2
    assert _kills(full, arch, jobs, "cover_wide_n16") == []


def test_k1_kills_the_tile_count_edges_of_element_loads():
    """wavelet4 va1/vb1 (element loads on both sides admit every cpg): `k_live = Kgemm > 0`
    made `> 1`, `k_span = Kgemm - 0` made `- 1` and `k_span_up`'s 31 made 30 survived its
    every-site run; Kgemm = 1 (cover_k1) leaves each with no K tile (D = 0), and Kgemm =
    tile_k + 1 (cover_k_tile1) drops the one-index last tile of the latter two."""
    fam, name = "conv_implicit_gemm", "plain_wavelet4_cshuffle_va1_vb1_fp16"
    full, arch, t, lines, _ = _lowered(fam, name, "entry")
    pick = {"const_inc": (r"%k_live\d+ = icmp ugt i32 %Kgemm, 1$", r"%k_span\d+ = sub i32 %Kgemm, 1$"),
            "const_dec": (r"%k_span_up\d+ = add i32 %k_span_nz\d+, 30$",)}
    jobs = [R.Job(fam, name, full, arch, t, m) for kind, pats in pick.items() for s in OPS.sites(t, kind)
            for m in [OPS.apply(t, kind, s)] if any(re.search(p, m.text.split("\n")[s[0]]) for p in pats)]
    assert len(jobs) == 3
    assert _kills(full, arch, jobs, "cover_k1") == []
    assert len(_kills(full, arch, jobs, "cover_k_tile1")) == 1    # k_live > 1 holds at Kgemm = 33
    names = {p[0] for p in cover.conv_cover_problems(full)}
    assert {"cover_k1", "cover_k_tile1"} <= names
    assert not {"cover_k1", "cover_k_tile1"} & {p[0] for p in cover.conv_cover_problems(
        N._with_defaults(fam, {"vector_a": 1, "vector_b": 2}))}

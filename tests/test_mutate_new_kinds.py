"""The mutation kinds of issue 34 item 6 (parity/mutate/lies.py, operators.py):
``promise_lie`` (a planted unjustified promise is killed, by the promise check it
lies to), ``launch_plan`` (the plan / kernarg layout one unit off is killed by the
launch route; the IR is unchanged), ``kloop_cmp`` (sites only in the K loop's
blocks; one config per AOT tile class), and the per-kind report's kill rate."""
from __future__ import annotations

import pytest

import python_engine.api as api
from parity.mutate import lies as LIES
from parity.mutate import operators as OPS
from parity.mutate import run as R
from parity.sim import numerics as N
from parity.sim.plans import conv_fwd_split_k_reduce as REDUCE_PLAN
from parity.sim.plans import conv_implicit_gemm as CONV_PLAN

ARCH = "gfx1250"
RED = ("conv_fwd_split_k_reduce", "bf16_v1_t64_d0")


def _cfg(fam, name):
    return next(c for c in N.accepted_configs() if c[0] == fam and c[1] == name)


def _job(fam, name, kind, pick):
    _, _, spec, arch = _cfg(fam, name)
    full = N._with_defaults(fam, spec)
    text = api.lower(fam, full, arch, "llvm23").text
    site = next(s for s in OPS.sites(text, kind) if pick(s))
    return R.Job(fam, name, full, arch, text, OPS.apply(text, kind, site))


@pytest.mark.parametrize("sub, error", [
    ("fwgs_small", "amdgpu-flat-work-group-size"),
    ("fmf_reassoc", "fast-math flag reassoc"),
    ("readonly_written:d_ptr", "which is readonly"),
    ("deref_big", "dereferenceable"),
    ("no_implicit:workgroup-id-x", "amdgpu-no-workgroup-id-x"),
    ("range_tid", "!range"),
    ("denormal_ftz", "denormal"),
])
def test_promise_lie_is_killed_by_the_check_it_lies_to(sub, error):
    job = _job(*RED, "promise_lie", lambda s: s[1] == sub)
    assert job.mutant.text != job.original and job.mutant.what.startswith(sub.split(":")[0])
    assert R.judge(job).status == "killed"
    fails = R._llvm_oracle(job) or R._numerics_oracle(job)   # the check it lies to (the proof may be first)
    assert fails and error in fails[0], fails


def test_promise_lie_flags_on_integer_ops():
    t = api.lower("conv_implicit_gemm", N._with_defaults("conv_implicit_gemm", {}), ARCH, "llvm23").text
    subs = {s[1].split(":")[0] for s in OPS.sites(t, "promise_lie")}
    assert {"nuw_sub", "exact_shift", "exact_div", "disjoint_or", "no_implicit", "fwgs_small"} <= subs
    s = next(s for s in OPS.sites(t, "promise_lie") if s[1] == "exact_shift")
    m = OPS.apply(t, "promise_lie", s)
    assert " lshr exact " in m.text.split("\n")[s[0]] or " ashr exact " in m.text.split("\n")[s[0]]


def test_mutate_plan_moves_each_field_one_unit():
    plan = "conv_launch k\nvariant two_stage\nworkspace_bytes 32768\ngrid 1 2 2\nblock 128 1 1\ncluster none\n" \
           "args two_stage\n0 x_bytes = 8192\n1 ks_count = 2\nstage2_args reduce\n0 ks_count = 2\n"
    assert "workspace_bytes 32764\n" in LIES.mutate_plan(plan, "workspace_bytes")
    assert "grid 1 2 1\n" in LIES.mutate_plan(plan, "grid.2")
    assert "grid 2 2 2\n" in LIES.mutate_plan(plan, "grid.0")
    assert "block 96 1 1\n" in LIES.mutate_plan(plan, "block")
    assert "0 x_bytes = 8190\n" in LIES.mutate_plan(plan, "arg:x_bytes")
    got = LIES.mutate_plan(plan, "stage2:ks_count")
    assert got.endswith("0 ks_count = 1\n") and "1 ks_count = 2\n" in got


@pytest.mark.parametrize("field, error", [("kernarg:ks_count", "the runtime refuses the launch"),
                                          ("kernarg:M", "the runtime refuses the launch")])
def test_launch_plan_kernarg_offset_is_killed(field, error):
    job = _job(*RED, "launch_plan", lambda s: s[1] == field)
    assert job.mutant.text == job.original  # the IR is unchanged: not "equivalent"
    assert OPS.equivalent_reason(job.original, job.mutant) == ""
    v = R.judge(job)
    assert v.status == "killed" and v.oracle == "numerics" and error in v.reason, v.reason



@pytest.mark.parametrize("name, field", [("fused_relu_fp16_v8_t256_d2", "kernarg:K"),
                                         ("fused_scale_bf16_v1_t64_d4", "kernarg:M"),
                                         ("fused_bias_relu_fp16_v8_t256_d2", "kernarg:K"),
                                         ("fused_bias_clamp_bf16_v1_t64_d4", "kernarg:M")])
def test_fused_reduce_kernarg_slip_is_killed_by_the_launch_route(name, field):
    """The fused Stage-2 reduce cases launch through the runtime's packer (variant
    ``reduce``, the ABI of the spec's ``acc_epilogue``), like the identity ones: a
    kernarg offset one unit off is refused against the code object's ``.args``."""
    fam = "conv_fwd_split_k_reduce"
    _, _, spec, arch = _cfg(fam, name)
    cases = [c for c in REDUCE_PLAN.reduce_cases(N._with_defaults(fam, spec), arch) if isinstance(c, N.Case)]
    assert cases and all(la.variant == "reduce" and la.acc_epilogue != "identity"
                         for c in cases for la in c.launches)
    job = _job(fam, name, "launch_plan", lambda s: s[1] == field)
    v = R.judge(job)
    assert v.status == "killed" and v.oracle == "numerics", (v.status, v.reason)
    assert "the runtime refuses the launch" in v.reason and f"argument {field[8:]} is at offset" in v.reason

def test_launch_plan_workspace_short_is_killed():
    fam, name = "conv_implicit_gemm", "spk2_mem_default_64x64_bf16"
    job = _job(fam, name, "launch_plan", lambda s: s[1] == "workspace_bytes")
    v = R.judge(job)
    assert v.status == "killed" and v.oracle == "numerics", (v.status, v.reason)


def test_kloop_cmp_sites_are_in_the_k_loop_and_one_config_per_tile_class():
    fam, name, spec, arch = _cfg("conv_implicit_gemm", "spk2_mem_default_64x64_bf16")
    t = api.lower(fam, N._with_defaults(fam, spec), arch, "llvm23").text
    lines = t.split("\n")
    ss = OPS.sites(t, "kloop_cmp")
    assert len(ss) == 277  # bench/k_deep_mutants.py's count on this config (149 before the tap-tile loop)
    starts = [i for i, ln in enumerate(lines) if ln.startswith(("prologue", "kloop", "kwalk", "tap_pro", "tap_loop",
                                                                "taptile_gate", "taptile_pro", "taptile_loop"))]
    assert all(any(st < i for st in starts) for i, _ in ss)
    assert not OPS.sites(api.lower(*_cfg(*RED)[0:1], N._with_defaults(RED[0], _cfg(*RED)[2]), ARCH, "llvm23").text,
                         "kloop_cmp")
    confs = N.accepted_configs(["conv_implicit_gemm"])
    reps = R.tile_class_representatives(confs)
    classes = {R.tile_class(N._with_defaults(f, s)) for f, _, s, _ in confs}
    assert len(reps) == len(classes) >= 20
    m = OPS.apply(t, "kloop_cmp", ss[0])
    assert m.kind == "kloop_cmp" and m.what.startswith("cmp_negate: ")


def test_report_gives_the_kill_rate_per_kind():
    vs = [R.Verdict("f", "c", "promise_lie", 1, "x", "killed", "numerics"),
          R.Verdict("f", "c", "promise_lie", 2, "x", "survived"),
          R.Verdict("f", "c", "launch_plan", 3, "x", "killed", "numerics")]
    text = R.render(R.report(vs))
    row = next(ln for ln in text.split("\n") if ln.startswith("promise_lie"))
    assert row.split() == ["promise_lie", "1", "1", "0", "50.0", "%"]
    assert next(ln for ln in text.split("\n") if ln.startswith("launch_plan")).endswith("100.0 %")


def test_exact_on_a_shift_of_a_multiple_is_equivalent_by_rule():
    fam, name, spec, arch = _cfg("conv_implicit_gemm", "plain_mem_cshuffle_va5_vb5_bf16")
    t = api.lower(fam, N._with_defaults(fam, spec), arch, "llvm23").text
    ms = [OPS.apply(t, "promise_lie", s) for s in OPS.sites(t, "promise_lie") if s[1] == "exact_shift"]
    eq = {m.what for m in ms if OPS.equivalent_reason(t, m)}
    assert "exact_shift: `exact` on lshr %a_koff54, 3" in eq   # %a_koff54 = mul i32 %a_kv53, 8
    assert "exact_shift: `exact` on lshr %tid1, 5" not in eq    # a lie: lane 1 drops a bit


def test_tall_dilated_padded_problem_kills_the_kloop_row_pad_survivor():
    """The kloop ``a_hok`` (``hi < H``) made ``hi <= H`` on spk2 64x64 survived every
    problem before ``tall_dil_pad`` (the differential run drew it, docs/sim.md)."""
    fam, name, spec, arch = _cfg("conv_implicit_gemm", "spk2_mem_default_64x64_bf16")
    full = N._with_defaults(fam, spec)
    t = api.lower(fam, full, arch, "llvm23").text
    lines = t.split("\n")
    site = next(s for s in OPS.sites(t, "kloop_cmp") if s[1] == "cmp_boundary"
                and lines[s[0]].startswith("  %a_hok1248 = icmp ult"))
    job = R.Job(fam, name, full, arch, t, OPS.apply(t, "kloop_cmp", site))
    prob = next(p for p in CONV_PLAN.CONV_PROBLEMS if p[0] == "tall_dil_pad")
    lw = R.mutant_lowerer(job)
    case = next(c for c in CONV_PLAN.conv_cases(full, arch, lw, problems=(prob,)) if isinstance(c, N.Case))
    probs, _ = N.run_case(case, lw, case.orders)
    assert probs and "outside the tolerance" in probs[0], probs


def test_exact_udiv_of_the_tap_by_x_is_killed_by_a_3x3_on_the_tap_loop():
    """``%tp_y = udiv %tp_tap, %X`` made ``exact`` on spk32 survived while the tap loop
    ran only ``cover_taps`` (2x2: the slice starts' taps divide by X); ``cover_taps_x3``
    starts slice 1 inside tap 4 of a 3x3 (docs/sim.md)."""
    fam, name = "conv_implicit_gemm", "spk32_mem_default_64x64_bf16"
    job = _job(fam, name, "promise_lie", lambda s: s[1].startswith("exact_div") and " = udiv i32 %tp_tap" in
               api.lower(fam, N._with_defaults(fam, _cfg(fam, name)[2]), ARCH, "llvm23").text.split("\n")[s[0]])
    assert "%X" in job.mutant.what or "udiv" in job.mutant.what, job.mutant.what
    v = R.judge(job)
    assert v.status == "killed" and v.oracle == "numerics", (v.status, v.reason)
    assert v.reason.startswith("cover_taps_x3") and "udiv exact" in v.reason, v.reason


@pytest.mark.parametrize("operand, problem", [
    ("%a_hi1108", "cover_diff_hok"),    # K walk, first half, A slot 1 (row base %a_hb of rows 32..63)
    ("%tp_wi209", "cover_tap_wok"),    # tap prologue, first tile pair, A slot 0
    ("%tp_wi216", "cover_tap_wok"),    # first tile pair, A slot 1 (rows 32..63)
    ("%tp_wi257", "cover_tap_wok"),    # second tile pair, A slot 0
    ("%tp_wi264", "cover_tap_wok"),    # second tile pair, A slot 1
])
def test_differential_problems_kill_the_spk2_kloop_survivors(operand, problem):
    """The K-loop survivors of spk2 64x64 the differential run found real (docs/sim.md,
    "spk2 64x64's K-loop mutants"): ``a_hok`` / ``tp_wok`` (``icmp ult``) made ``ule`` fail
    the problem the run drew (``cover_tap_wok``: the drawn one widened so that both A
    slots and both tile pairs of the tap prologue meet a right padding tap at wi == W);
    the honest kernel passes it."""
    from parity.sim import cover
    fam, name, spec, arch = _cfg("conv_implicit_gemm", "spk2_mem_default_64x64_bf16")
    full = N._with_defaults(fam, spec)
    t = api.lower(fam, full, arch, "llvm23").text
    lines = t.split("\n")
    site = next(s for s in OPS.sites(t, "kloop_cmp") if s[1] == "cmp_boundary"
                and f"icmp ult i32 {operand}," in lines[s[0]])
    job = R.Job(fam, name, full, arch, t, OPS.apply(t, "kloop_cmp", site))
    prob = next(p for p in cover.conv_cover_problems(full) if p[0] == problem)
    for lw, bad in ((R.mutant_lowerer(job), True), (N._Lowerer(), False)):
        case = next(c for c in CONV_PLAN.conv_cases(full, arch, lw, problems=(prob,)) if isinstance(c, N.Case))
        probs, _ = N.run_case(case, lw, case.orders)
        assert (bool(probs) and "outside the tolerance" in probs[0]) if bad else probs == [], probs



@pytest.mark.parametrize("slot", range(4))
def test_cover_pad_deep_kills_the_padded_pixel_kloop_row_masks(slot):
    """spk4 va3 cshuffle's K-loop ``a_hok = icmp ult %a_hi, %H`` made ``ule`` survived
    (the wider sample, docs/sim.md): ``cover_pad_images`` has one K tile a slice there.
    ``cover_pad_deep`` (4 images of 4x4, an 8x8 filter, padding 4) gives every slice
    K-loop tiles whose bottom padding tap at hi == H lies on the next image: each of the
    four A slots' masks one long fails it; the honest kernel passes it."""
    from parity.sim import cover
    fam, name, spec, arch = _cfg("conv_implicit_gemm", "spk4_mem_cshuffle_va3_vb3_bf16")
    full = N._with_defaults(fam, spec)
    t = api.lower(fam, full, arch, "llvm23").text
    lines = t.split("\n")
    loop = next(i for i, ln in enumerate(lines) if ln.startswith("kloop"))
    sites = [s for s in OPS.sites(t, "cmp_boundary") if s[0] > loop and " = icmp ult i32 %a_hi" in lines[s[0]]
             and lines[s[0]].lstrip().startswith("%a_hok")]
    assert len(sites) == 4, sites
    job = R.Job(fam, name, full, arch, t, OPS.apply(t, "cmp_boundary", sites[slot]))
    prob = next(p for p in cover.conv_cover_problems(full) if p[0] == "cover_pad_deep")
    for lw, bad in ((R.mutant_lowerer(job), True), (N._Lowerer(), False)):
        case = next(c for c in CONV_PLAN.conv_cases(full, arch, lw, problems=(prob,)) if isinstance(c, N.Case))
        probs, _ = N.run_case(case, lw, case.orders)
        assert (bool(probs) and "outside the tolerance" in probs[0]) if bad else probs == [], probs
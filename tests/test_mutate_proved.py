"""Mutants proved equivalent from the IR (parity/mutate/proved.py): dead values, and the
proof's abstract values (same constant, a compare that agrees on every admitted value, a
select arm never chosen, a flag the operands justify). Each rule is shown on the
survivor of the every-site run it was written for (plain 32x32x32 w1x1, docs/sim.md)
and refused on a neighbour where its premise fails."""
from __future__ import annotations

import pytest

from parity.mutate import argued as AR
from parity.mutate import proved as P
from parity.mutate import run as R
from mutant_helpers import conv_jobs

CFG = "plain_mem_default_32x32x32_w1x1_bf16"


def _jobs(kind: str, pattern: str, cfg: str = CFG) -> list:
    return conv_jobs(cfg, kind, pattern)


def _dead(job) -> str:
    return P.dead_reason(job.original, job.mutant.kind, job.mutant.text, job.mutant.line)


TINY = """define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %a, i32 %b) {
entry:
  %x = add i32 %a, 1
  %y = mul i32 %x, 2
  %z = add i32 %b, 3
  %q = udiv i32 %z, %b
  %c = icmp ult i32 %y, 9
  br i1 %c, label %s, label %e
s:
  %i = phi i32 [ 0, %entry ], [ %n, %s ]
  %n = add i32 %i, 1
  %v = load i32, ptr addrspace(1) %p, align 4
  store i32 %n, ptr addrspace(1) %p, align 4
  br label %e
e:
  ret void
}"""


def test_live_names_follow_operands_from_stores_branches_and_loads():
    live = P.live_names(TINY)
    assert {"x", "y", "c", "i", "n", "p"} <= live
    assert "z" not in live and "q" not in live and "v" not in live  # v: a load (a root) nobody reads


def test_a_dead_value_is_proved_and_a_live_one_or_a_division_is_not():
    lines = TINY.split("\n")
    z = next(k for k, ln in enumerate(lines) if ln.startswith("  %z = "))
    mutant = "\n".join(lines[:z] + ["  %z = add i32 %b, 4"] + lines[z + 1:])
    assert P.dead_reason(TINY, "const_inc", mutant, z + 1).startswith("dead value: %z")
    q = z + 1   # a dead udiv by a non-literal may divide by 0: UB, not dead
    mutant = "\n".join(lines[:q] + ["  %q = udiv i32 %b, %z"] + lines[q + 1:])
    assert P.dead_reason(TINY, "swap_operands", mutant, q + 1) == ""
    y = next(k for k, ln in enumerate(lines) if ln.startswith("  %y = "))
    mutant = "\n".join(lines[:y] + ["  %y = mul i32 %x, 3"] + lines[y + 1:])
    assert P.dead_reason(TINY, "const_inc", mutant, y + 1) == ""


def test_the_epilogue_dead_column_offsets_are_dead_and_the_stored_ones_are_not():
    # the 16-byte D path computes e_c (the narrow path's column) and never uses it; the
    # narrow path's e_c reaches its stores
    got = [bool(_dead(j)) for j in _jobs("const_inc", r"%e_c\d+ = add i32 %wn_org")]
    assert got == [True] * 4 + [False] * 4


def test_admitted_values_near_a_literal_respect_known_bits_and_bounds():
    kgemm = (32, 3, 0, 8, (1 << 32) - 1)           # a multiple of 8, at least 8
    near = P._admitted_near(kgemm, [1])
    assert 8 in near and not any(x % 8 or x < 8 for x in near)
    assert P._admitted_near((32, 0, 0, 0, 3), [100]) == [0]     # one value below the window


def test_one_wave_constants_are_the_same_constant():
    for pat in (r"%wm_org\d+ = mul", r"%wn_org\d+ = mul", r"%dt_base\d+ = mul", r"%a_kcb58 = mul i32 %a_ck"):
        js = _jobs("const_inc", pat) + _jobs("const_dec", pat)
        assert js and all(P.abstract_reason(j).startswith("the same constant 0") for j in js), pat
    other = _jobs("const_inc", r"%a_kcb96 = mul i32 %a_ck")      # a_ck = 8 urem cpg: not a constant
    assert other and P.abstract_reason(other[0]) == ""
    shift = _jobs("const_inc", r"%wave_v\d+ = lshr") + _jobs("const_dec", r"%wave_v\d+ = lshr")
    got = {j.mutant.what: P.abstract_reason(j) for j in shift}
    assert got["lshr operand 5 -> 6"].startswith("the same constant 0")
    assert got["lshr operand 5 -> 4"] == ""                   # tid >> 4 is 0 or 1: not a constant
    four = next(j for j in shift if j.mutant.what.endswith("-> 4"))
    assert AR._lane0_shift(four, AR._changed_line(four))      # argued: readfirstlane reads lane 0


def test_compares_against_kgemm_agree_only_where_no_admitted_value_lies_between():
    got = {(j.mutant.line, j.mutant.what): P.abstract_reason(j)
           for j in _jobs("const_inc", r"= icmp ult i32 (8|0), %Kgemm") + _jobs("const_dec", r"= icmp ult i32 8, %Kgemm")}
    ok = {w for (_, w), r in got.items() if r}
    assert ok == {"i32 8 -> i32 9", "i32 0 -> i32 1"}        # 9 and 1 are not multiples of 8
    assert any(w == "i32 8 -> i32 7" and not r for (_, w), r in got.items())  # Kgemm == 8 differs
    live = _jobs("const_inc", r"%k_live\d+ = icmp ugt i32 %Kgemm, 0")
    assert live and P.abstract_reason(live[0]).startswith("the compare gives the honest result")


def test_a_select_arm_never_chosen_and_flags_the_operands_justify():
    arm = _jobs("const_dec", r"%k_span_nz\d+ = select")
    assert arm and P.abstract_reason(arm[0]).startswith("the select's false arm is never chosen")
    lies = {j.mutant.what: P.abstract_reason(j) for j in _jobs("promise_lie", r"%(k_span|wave_m|a_yk|k_dcy)\d+ = ")}
    assert lies["nuw_sub: `nuw` on sub %Kgemm, 0"].startswith("`nuw` holds")
    assert next(r for w, r in lies.items() if "udiv %wave" in w).startswith("`exact` holds")
    assert next(r for w, r in lies.items() if "udiv %a_qk" in w).startswith("`exact` holds")   # 0 / X
    assert next(r for w, r in lies.items() if "%k_dwb" in w) == ""   # dil_w*C*2 may wrap: killed by dil_wrap


def test_the_general_path_argument_needs_a_test_that_is_never_true():
    got = {j.mutant.what: AR._general_path(j) for j in _jobs("const_inc", r"%d_wide\d+ = icmp")
           + _jobs("const_dec", r"%d_wide\d+ = icmp") + _jobs("const_inc", r"%tp_uni\d+ = icmp")}
    assert got["icmp operand 0 -> -1"] is True
    assert list(got.values()).count(True) == 2     # d_wide == -1 and tp_uni == 1 (cpg = 0 mod 8)
    assert not AR._general_path(_jobs("const_inc", r"%d_wide\d+ = icmp")[0])   # K = 1 mod 8: odd_k9


def test_a_killed_mutant_the_proof_calls_equivalent_is_a_contradiction(monkeypatch):
    """The abstract proof is cross-checked on every kill: a claim of equivalence there is a
    proof bug, printed as PROOF CONTRADICTION (and `parity mutate` is RED)."""
    job = next(j for j in _jobs("const_inc", r"%d_wide\d+ = icmp") if j.mutant.what == "icmp operand 0 -> 1")
    v = R.judge(job)
    assert v.status == "killed" and v.reason.startswith("odd_k9") and v.contradiction == ""
    monkeypatch.setattr(P, "abstract_reason", lambda j: "a planted false proof")
    v = R.judge(job)
    assert v.status == "killed" and v.contradiction == "a planted false proof"
    rep = R.report([v])
    assert rep.contradictions == [v] and "PROOF CONTRADICTION" in R.render(rep)
    assert R.to_json(rep, 0, 1.0)["contradictions"] == 1


def test_the_general_path_argument_reads_the_two_deep_kernels_negated_test():
    # 64x64x32: `tp_gen = (cpg urem 64) != 0` takes the K walk when true; != 1 or != -1 always is
    cfg = "plain_mem_default_64x64x32_w2x2_bf16"
    js = _jobs("const_inc", r"%tp_gen\d+ = icmp", cfg) + _jobs("const_dec", r"%tp_gen\d+ = icmp", cfg)
    assert len(js) == 2 and all(AR._general_path(j) for j in js)
    assert all(P.compare_constant(j) is True for j in js)


def test_compare_of_two_constants():
    """va3's first K step: ``k_cyc = icmp uge %k_cn, 4`` where the slot (4) divides tile_k, so
    ``k_cn = 0 + (32 urem 4)`` is the constant 0: the literal 4 made 3 or 5 still compares
    false (the padded-pixel class's every-site survivors); made 0, true: not proved."""
    pat = r"%k_cyc\d+ = icmp uge i32 %k_cn\d+, 4$"
    js = [j for k in ("const_inc", "const_dec") for j in _jobs(k, pat, "plain_mem_default_va3_vb3_bf16")]
    first = min(j.mutant.line for j in js)
    same = [j for j in js if j.mutant.line == first]
    assert sorted(j.mutant.what for j in same) == ["icmp operand 4 -> 3", "icmp operand 4 -> 5"]
    assert {P.abstract_reason(j).split(",")[0] for j in same} == \
        {"both compares have constant operands on every admitted launch"}
    assert P._same_compare(P._interp(same[0]), "  %k_cyc405 = icmp uge i32 %k_cn404, 4",
                           "  %k_cyc405 = icmp uge i32 %k_cn404, 0") == ""


VA3 = "plain_mem_default_va3_vb3_bf16"   # padded pixel: slot 4 = tile_k's divisor, k_c stays 0


def test_padded_pixel_channel_state_is_constant_so_its_carry_arms_are_never_chosen():
    # k_cpgb (slot * 2 bytes) feeds only k_dcy -> k_kstepc, chosen only when k_cyc fires,
    # which it never does (k_cn = 0 + 0): reach.unchosen_only
    js = _jobs("const_inc", r"%k_cpgb\d+ = mul i32 4, 2", VA3) + _jobs("swap_operands", r"%k_dcy\d+ = sub", VA3)
    assert len(js) == 4   # the literal 4 -> 5 (two spellings), 2 -> 3, and k_dcy swapped
    assert all("never chosen" in P.abstract_reason(j) for j in js)
    # the K walk's carry compares are constants now: both the honest and the mutant are false
    cyc = _jobs("const_inc", r"%k_cyc\d+ = icmp uge i32 %k_cn\d+, 4", VA3)
    assert len(cyc) == 2 and all(P.abstract_reason(j) for j in cyc)


def test_a_mask_bit_known_zero_and_an_offset_the_uses_drop():
    # a_kin = and a_koff, 7 with a_koff = 4 * (slot % 8): bit 0 is known zero, so 7 -> 6 is the same
    js = _jobs("const_dec", r"%a_kin\d+ = and i32 %a_koff\d+, 7", VA3)
    assert js and all(P.abstract_reason(j).startswith("the mask bits the mutant changes (0x1)") for j in js)
    # d_klow = and (K | kpg), 7: K is any admitted value, so 7 -> 6 is not proved (cover_odd_k9 kills it)
    assert all(P.abstract_reason(j) == "" for j in _jobs("const_dec", r"%d_klow\d+ = and", VA3))
    # k_next = 0 + 32 (t + 1) made 1 + ...: its compares against K limits that are multiples of
    # 4 and its lshr by 2 drop the +1
    nxt = _jobs("const_inc", r"%k_next\d+ = add i32 0, %k_step", VA3)
    assert nxt and all("every use" in P.abstract_reason(j) for j in nxt)


def test_offset_uses_refuses_a_compare_the_delta_can_flip():
    from parity.mutate import reach
    v, y = (32, 2, 0, 0, 1 << 20), (32, 2, 1, 0, 1 << 20)     # v = 0 mod 4, y = 1 mod 4
    assert not reach._compare_holds(v, y, "ult", 1)           # y - v = 1: v < y but v + 1 == y
    assert reach._compare_holds(v, (32, 2, 0, 0, 1 << 20), "ult", 1)
    assert reach._compare_holds(v, (32, 2, 0, 0, 1 << 20), "ult", 3)
    assert not reach._compare_holds(v, (32, 2, 0, 0, 1 << 20), "ult", 4)
    assert reach.literal_delta("  %a = sub i32 %x, 0", "  %a = sub i32 %x, -1") == ("a", 32, 1)
    assert reach.literal_delta("  %a = add i32 0, %s", "  %a = add i32 1, %s") == ("a", 32, 1)
    assert reach.literal_delta("  %a = add nuw i32 0, %s", "  %a = add nuw i32 1, %s") is None


ATOMIC = """define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %a) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %m = add i32 %a, 1
  %never = icmp ugt i32 %tid, 100
  %s = select i1 %never, i32 %m, i32 0
  store i32 %s, ptr addrspace(1) %p, align 4
  %r = call i32 @llvm.amdgcn.global.atomic.add(ptr addrspace(1) %p, i32 %m)
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }
"""


def test_a_tail_marked_call_is_a_call_not_a_pure_value():
    # `%r = tail call ...` (LLVM's marker, as in the opt lane's IR) read as the op "tail" was
    # a pure value: %m, which feeds an atomic, was "dead" and reached effects "only through
    # a never-chosen select arm"
    from parity.mutate import reach
    from parity.proof import interpret as PI
    it = PI.Interp(PI.read(ATOMIC), {}, 16)
    it.run()
    assert it.env["never"] == (1, 1, 0, 0, 0)                 # tid <= 63: the select takes 0
    for marker in ("", "tail ", "notail ", "musttail "):
        t = ATOMIC.replace("= call i32 @llvm.amdgcn.global", f"= {marker}call i32 @llvm.amdgcn.global")
        mut = t.replace("%m = add i32 %a, 1", "%m = add i32 %a, 2")
        assert reach.unchosen_only(it, t, "m") == "", marker
        # without the select and store, the atomic is %m's one use: live, not dead
        t, mut = (x.replace("  %s = select i1 %never, i32 %m, i32 0\n  store i32 %s, ptr addrspace(1) %p, align 4\n", "")
                  for x in (t, mut))
        assert "m" in P.live_names(t) and "s" not in P.live_names(t), marker
        assert P.dead_reason(t, "const_inc", mut, 4) == "", marker
    no_atomic = ATOMIC.replace("  %r = call i32 @llvm.amdgcn.global.atomic.add(ptr addrspace(1) %p, i32 %m)\n", "")
    assert reach.unchosen_only(it, no_atomic, "m").startswith("%m reaches the kernel's effects only through 1 select")


def test_an_op_equal_at_every_value_its_operand_takes():
    # va6: a_rk = 8 * (slot mod 4) takes 0, 8, 16, 24; udiv by 7 gives 0..3 as by 8 does, by 9 not (24 / 9 = 2)
    va6 = "plain_mem_default_va6_vb6_fp16"
    dec = _jobs("const_dec", r"%a_qk\d+ = udiv i32 %a_rk\d+, 8", va6)
    assert dec and all(P.abstract_reason(j).startswith("the same result at each of the 4 values") for j in dec)
    assert all(P.abstract_reason(j) == "" for j in _jobs("const_inc", r"%a_qk\d+ = udiv i32 %a_rk\d+, 8", va6))
    assert P._values((32, 3, 0, 0, 24)) == [0, 8, 16, 24]
    assert P._values((32, 0, 0, 0, 1 << 20)) is None            # too many to enumerate


def test_an_op_of_a_huge_literal_is_judged_without_evaluating_the_other_ops():
    # the reduce's `and i32 %x, -32` (2**32 - 32 as an unsigned literal) made -31: the rule once
    # computed every op's result eagerly, `x << (2**32 - 32)` among them, a MemoryError that
    # failed CI's mutate lane (stop 49). Clearing bit 0 changes the result for odd x, so: not equal.
    jobs = conv_jobs("fp16_v4_t256_d2", "const_inc", r"= and i64 %\w+, -32$", fam="conv_fwd_split_k_reduce")
    assert jobs and all(j.mutant.what == "and operand -32 -> -31" for j in jobs)
    for j in jobs:
        reason = P.abstract_reason(j)
        assert not reason.startswith("the same result at each"), reason
    tiny = "define amdgpu_kernel void @k(i32 %a) {\nentry:\n  %x = and i32 %a, 7\n  %y = and i32 %x, -32\n  ret void\n}"
    it = P.PI.Interp(P.PI.read(tiny), {}, P.PTR_ARG_ALIGN)
    it.run()
    assert P._same_on_every_value(it, "  %y = and i32 %x, -32", "  %y = and i32 %x, -31", 3) == ""
    assert P._same_on_every_value(it, "  %y = and i32 %x, -32", "  %y = and i32 %x, -16", 3) \
        .startswith("the same result at each of the 8 values %x can take")


WL4 = "plain_wavelet4_cshuffle_va1_vb1_fp16"


def test_a_value_used_only_behind_the_loader_guard_is_judged_for_the_loader_waves():
    # the wavelet pipeline's loader slots: ltid = tid - 128 wraps for the compute waves, whose
    # values reach no effect (every use behind `br i1 %is_loader`); for tid 128..255 slot j's
    # row is 4j + ltid / 32, so swq = j: `and %swq, 3` -> 2 is equal where j & 1 == 0, -> 4 where
    # j & 3 == j & 4 (j = 0, 8), `lshr %row, 2` -> 3 at j = 0 (and where its `and 3` agrees)
    dec = _jobs("const_dec", r"%a_swf\d+ = and i32 %a_swq\d+, 3$", WL4)
    inc = _jobs("const_inc", r"%a_swf\d+ = and i32 %a_swq\d+, 3$", WL4)
    shr = _jobs("const_inc", r"%a_swq\d+ = lshr i32 %a_row\d+, 2$", WL4)
    assert len(dec) == len(inc) == len(shr) == 16
    proved = [[bool(P.abstract_reason(j)) for j in js] for js in (dec, inc, shr)]
    assert proved[0] == [j % 2 == 0 for j in range(16)]
    assert proved[1] == [j in (0, 8) for j in range(16)]
    assert proved[2] == [j in (0, 7, 8, 15) for j in range(16)]   # j = 7, 8, 15: after the `and 3`
    assert P.abstract_reason(dec[0]).startswith("for the work-items 128..255 that pass %is_loader")


GUARDED = """define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %n) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wv = lshr i32 %tid, 5
  %wave = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %wv)
  %ld = icmp uge i32 %wave, 4
  %lt = sub i32 %tid, 128
  %row = lshr i32 %lt, 7
  %sw = and i32 %row, 3
  br i1 %ld, label %load, label %done
load:
  %q = getelementptr inbounds i32, ptr addrspace(1) %p, i32 %sw
  store i32 %n, ptr addrspace(1) %q, align 4
  br label %done
done:
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="256,256" }"""


def _guard_reason(text: str, honest: str, mutant: str) -> str:
    from parity.mutate import guard as G
    ln = text.split("\n").index(honest) + 1
    job = R.Job("conv_implicit_gemm", "tiny", {}, "gfx1250", text,
                type("M", (), {"kind": "const_dec", "line": ln, "what": "", "text": text.replace(honest, mutant)})())
    return P._guarded(job, honest, mutant, ln), G


def test_the_guard_rule_needs_every_effect_behind_a_wave_uniform_guard(monkeypatch):
    monkeypatch.setattr(P, "_arg_facts", lambda fam, spec: {})
    sw, sw2 = "  %sw = and i32 %row, 3", "  %sw = and i32 %row, 2"
    why, G = _guard_reason(GUARDED, sw, sw2)
    assert why == ("for the work-items 128..255 that pass %ld (behind which every effect of the value "
                   "lies): the same constant 0 on every admitted launch")
    # an effect outside the guarded block: the compute waves' wrapped row reaches memory
    leak = GUARDED.replace("  br i1 %ld,", "  store i32 %sw, ptr addrspace(1) %p, align 4\n  br i1 %ld,")
    assert _guard_reason(leak, sw, sw2)[0] == ""
    # a guard on the lane's own id is not one value per wave
    lane = GUARDED.replace("%ld = icmp uge i32 %wave, 4", "%ld = icmp uge i32 %wv, 4")
    assert not G.wave_uniform(G.Body(lane), "ld") and G.wave_uniform(G.Body(GUARDED), "ld")
    assert _guard_reason(lane, sw, sw2)[0] == ""
    # the guarded block entered from elsewhere too: its work-items need not pass the guard
    back = GUARDED.replace("  ret void", "  %again = icmp eq i32 %n, 7\n  br i1 %again, label %load, label %out\nout:\n  ret void")
    assert G.guarded_blocks(G.Body(back), "ld") == set() and _guard_reason(back, sw, sw2)[0] == ""
    # a mutant that may trap runs for every wave
    div = GUARDED.replace(sw, "  %sw = udiv i32 %row, 3")
    assert _guard_reason(div, "  %sw = udiv i32 %row, 3", "  %sw = udiv i32 %row, 0")[0] == ""


def test_a_difference_the_one_mask_use_drops_and_a_swapped_literal_op():
    # slot j's swq = 4j + ltid/32 >> 2 = j; made `lshr 3` it is j / 2, and its one use
    # `swf = swq & 3` agrees where (j ^ j / 2) & 3 == 0 (j = 0, 7, 8, 15); swapped to `lshr 2, %row`
    # it is 0 for rows 2 .. 31, agreeing with j & 3 == 0 at j = 4 (rows 16..19); from j = 8 the
    # rows are 32 and more, a shift by the width or more: poison, never equal
    shr = _jobs("const_inc", r"%a_swq\d+ = lshr i32 %a_row\d+, 2$", WL4)
    swap = _jobs("swap_operands", r"%a_swq\d+ = lshr i32 %a_row\d+, 2$", WL4)
    assert [j for j, job in enumerate(shr) if P.abstract_reason(job)] == [0, 7, 8, 15]
    assert [j for j, job in enumerate(swap) if P.abstract_reason(job)] == [4]
    assert "after its one use, `and` with 3" in P.abstract_reason(shr[7])
    assert "after its one use" not in P.abstract_reason(shr[0])      # equal before the mask
    # the mask is the value's only use: with a second use the difference may show
    tiny = ("define amdgpu_kernel void @k(ptr addrspace(1) %p, i32 %a) {\nentry:\n  %x = and i32 %a, 7\n"
            "  %y = lshr i32 %x, 1\n  %z = and i32 %y, 0\n  store i32 %z, ptr addrspace(1) %p, align 4\n"
            "  ret void\n}")
    it = P.PI.Interp(P.PI.read(tiny), {}, P.PTR_ARG_ALIGN)
    it.run()
    assert P._same_on_every_value(it, "  %y = lshr i32 %x, 1", "  %y = lshr i32 %x, 2", 4, tiny) \
        .startswith("the same result after its one use, `and` with 0")
    twice = tiny.replace("  ret void", "  store i32 %y, ptr addrspace(1) %p, align 4\n  ret void")
    assert P._same_on_every_value(it, "  %y = lshr i32 %x, 1", "  %y = lshr i32 %x, 2", 4, twice) == ""


def test_the_cshuffle_epilogue_admits_k_and_kpg_multiples_of_4():
    # the 16-byte D test's `d_klow = (K | kpg) & 7` made `& 6`: bit 0 is known zero under the
    # cshuffle admission (4 output channels per store), not under the default epilogue's
    pat = r"%d_klow\d+ = and i32 %d_kk\d+, 7$"
    cs = _jobs("const_dec", pat, WL4)
    assert cs and all(P.abstract_reason(j).startswith("the mask bits the mutant changes (0x1) are known zero")
                      for j in cs)
    default = _jobs("const_dec", pat, "plain_mem_default_va1_vb1_bf16")
    assert default and all(P.abstract_reason(j) == "" for j in default)


@pytest.mark.parametrize("other_end", [
    "br i1 true, label %load, label %done", "br label %load ; comment",
    "br i1 %c, label %load, label %done, !prof !9", "br label %load, !dbgx !9", "br label %load "])
def test_a_second_way_into_the_guarded_block_is_seen_in_any_branch_form(monkeypatch, other_end):
    # trial 51: an edge the branch parser did not read (a constant condition, a comment,
    # metadata, a trailing space) let the compute waves into %load unseen
    monkeypatch.setattr(P, "_arg_facts", lambda fam, spec: {})
    text = GUARDED.replace("br i1 %ld, label %load, label %done", "br i1 %ld, label %load, label %other\nother:\n"
                           f"  %c = icmp eq i32 %n, 0\n  {other_end}")
    assert _guard_reason(text, "  %sw = and i32 %row, 3", "  %sw = and i32 %row, 2")[0] == ""


def test_the_work_group_size_is_the_kernels_own_and_one_kernel_a_module(monkeypatch):
    monkeypatch.setattr(P, "_arg_facts", lambda fam, spec: {})
    sw, sw2 = "  %sw = and i32 %row, 3", "  %sw = and i32 %row, 2"
    # the kernel's group #1 allows 1..1024 work-items; an unused #0 says 256: not the kernel's
    other = GUARDED.replace("%n) #0 {", "%n) #1 {") + '\nattributes #1 = { "amdgpu-flat-work-group-size"="1,1024" }'
    assert P.PI.read(other).wgs is None and _guard_reason(other, sw, sw2)[0] == ""
    assert P.PI.read(GUARDED.replace("%n) #0 {", "%n) {")).wgs is None
    # a second kernel: the proof refuses the module (its blocks would merge with the first's)
    two = GUARDED.replace("\nattributes", "\n" + GUARDED.split("\nattributes")[0].replace("@k(", "@k2(") + "\nattributes")
    with pytest.raises(P.PI.ProofParseError, match="a second kernel define"):
        P.PI.read(two)
    assert _guard_reason(two, sw, sw2)[0] == ""

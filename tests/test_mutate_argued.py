"""The equivalence rules and arguments for the wider sample's survivors (docs/sim.md,
"Mutation survivors"): each matches the survivor it was written for and refuses its
non-equivalent neighbours (the same instruction changed another way, or the same change
where the argument's premise fails); ``parity mutate --match`` selects sites by their
honest line."""
from __future__ import annotations

import json

from parity.app.main import main as parity_main
from parity.mutate import cli as MCLI
from parity.mutate import operators as OPS
from parity.mutate import argued as AR
from parity.mutate import run as R
from parity.sim import numerics as N
from mutant_helpers import conv_jobs

FAM = "conv_implicit_gemm"


def _jobs(cfg: str, kind: str, pattern: str) -> list:
    return conv_jobs(cfg, kind, pattern)


def _why(job) -> str:
    return OPS.equivalent_reason(job.original, job.mutant) or next((n for n, p in AR.ARGUED if p(job)), "")


def _by_what(jobs) -> dict:
    return {j.mutant.what: _why(j) for j in jobs}


def test_a_product_with_a_literal_zero_is_proved_equivalent():
    got = _by_what(_jobs("fused_spk4_scale_mem_default_64x64_bf16", "const_inc", r"%b_buf\d+ = mul i32 0, 2048$"))
    assert got["mul operand 2048 -> 2049"].startswith("a product with a literal 0 operand")
    assert got["mul operand 0 -> 1"] == ""   # 1 * 2048: a different LDS buffer


def test_two_literal_operands_of_the_same_value_are_proved_equivalent():
    got = _by_what(_jobs("plain_mem_cshuffle_va5_vb5_bf16", "const_inc", r"%k_sa\d+ = udiv i32 32, 8$"))
    assert got["udiv operand 32 -> 33"] == "an operation of two literals whose value does not change"
    assert got["udiv operand 8 -> 9"] == ""   # 32 / 9 = 3, not 4


def test_float_clamp_at_its_bound_is_not_argued():
    # the zero-bound problems (cover_clamp_zero, numerics_fused.ZERO_BOUNDS) kill these:
    # tests/test_clamp_zero_bound.py; no argument may claim them
    for cfg in ("fused_clamp_wavelet1_default_64x64_bf16", "fused_clamp_wavelet1_cshuffle_64x64_bf16"):
        jobs = _jobs(cfg, "cmp_boundary", r"%(above|below)\d+ = fcmp")
        assert jobs and all(_why(j) == "" for j in jobs), cfg


def test_one_wave_index_divisor_changes_are_argued_only_on_one_wave_workgroups():
    got = _by_what(_jobs("plain_mem_cshuffle_32x32x32_w1x1_bf16", "const_inc", r"%wave_[mn]\d+ = u"))
    assert set(got.values()) == {"one-wave index"} and len(got) == 2
    assert not any(_by_what(_jobs("plain_mem_cshuffle_32x32x32_w1x1_bf16", "const_dec", r"%wave_[mn]\d+ = u"))
                   .values())   # a divisor 0
    assert not any(_by_what(_jobs("spk2_mem_default_64x64_bf16", "const_inc", r"%wave_[mn]\d+ = u")).values())


def test_channel_quotient_is_argued_when_no_admitted_cpg_divides_the_new_constant():
    inc = _by_what(_jobs("plain_mem_cshuffle_32x32x32_w1x1_fp16", "const_inc", r"%k_sa\d+ = udiv i32 32, %cpg$"))
    assert inc and set(inc.values()) == {"channel quotient"}   # cpg a multiple of 8 never divides 33
    dec = _by_what(_jobs("plain_mem_cshuffle_32x32x32_w1x1_fp16", "const_dec", r"%k_sa\d+ = udiv i32 32, %cpg$"))
    assert dec and not any(dec.values())                          # cpg 8 divides 32: 31 / 8 = 3, not 4
    va1 = [j for j in _jobs("plain_mem_default_va1_vb1_bf16", "const_inc", r"%k_sa\d+ = udiv i32 32, %cpg$")]
    assert va1 and not any(AR._channel_quotient(j) for j in va1)   # cpg 3 divides 33


def test_pixel_carry_value_covers_the_prologue_not_the_loop():
    dec = [(j.mutant.what, AR._block_at(j.original, j.mutant.line - 1), _why(j))
           for j in _jobs("plain_mem_cshuffle_va5_vb5_bf16", "const_dec", r"%k_cw\d+ = select")]
    assert ("i32 0 -> i32 -1", "prologue", "pixel carry value") in dec
    assert ("i32 0 -> i32 -1", "kloop", "") in dec                # +1 a trip: the carry fires after 8
    assert all(w == "pixel carry value" for what, _, w in dec if what == "i32 8 -> i32 7")
    inc = _by_what(_jobs("plain_mem_cshuffle_va5_vb5_bf16", "const_inc", r"%k_cw\d+ = select"))
    assert inc["i32 0 -> i32 1"] == ""                             # k_c = -1: the carry fires at once
    swap = _jobs("plain_mem_cshuffle_va5_vb5_bf16", "swap_operands", r"%k_c\d+ = sub")
    assert len(swap) == 2 and all(_why(j) == "pixel carry value" for j in swap)
    assert not any(AR._pixel_carry_value(j) for j in _jobs("spk2_mem_default_64x64_bf16", "swap_operands",
                                                          r"%k_c\d+ = sub"))


def test_padding_lane_partner_only_at_padding_positions():
    va3 = _jobs("spk4_mem_cshuffle_va3_vb3_bf16", "const_inc", r"%frag\d+ = shufflevector")
    argued = {j.mutant.what for j in va3 if AR._pad_lane_partner(j)}
    # 15 -> 16 names no element of the two 8-element operands: LLVM refuses it (killed), not argued
    assert argued == {"i32 3 -> i32 4", "i32 7 -> i32 8", "i32 11 -> i32 12"}
    va5 = _jobs("plain_mem_cshuffle_va5_vb5_bf16", "const_inc", r"%frag\d+ = shufflevector")
    assert {j.mutant.what for j in va5 if AR._pad_lane_partner(j)} == {
        f"i32 {p} -> i32 {p + 1}" for p in (5, 6, 7, 13, 14)}
    assert not any(AR._pad_lane_partner(j) for j in _jobs("spk2_mem_default_64x64_bf16", "const_inc",
                                                         r"%frag\d+ = shufflevector"))


def test_match_selects_planned_sites_by_their_honest_line(tmp_path, capsys):
    out = tmp_path / "m.json"
    rc = parity_main(["mutate", "--only", "conv_fwd_split_k_reduce/bf16_v2_t64_d4", "--per-kind", "0",
                      "--kinds", "cmp_negate", "--match", r"%live\d+ = icmp", "-j", "1", "--json", str(out)])
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert rc == 0 and doc["planned"] == 1 and doc["killed"] == 1, text
    assert "every site per kind and config, matching /%live" in text
    site = R.plan([next(c for c in N.accepted_configs() if c[1] == "bf16_v2_t64_d4")], 0, per_kind=None,
                  kinds=("cmp_negate",))[0]
    assert MCLI.site_line(site).startswith("  %")
    # a pattern that selects no planned site is a usage error (it used to judge nothing, exit 1)
    rc = parity_main(["mutate", "--only", "conv_fwd_split_k_reduce/bf16_v2_t64_d4", "--per-kind", "0",
                      "--kinds", "cmp_negate", "--match", r"%no_such_name\d+ = "])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: --match: /%no_such_name") and "matches no honest line of the 4 planned site(s)" in err
    rc = parity_main(["mutate", "--only", "conv_fwd_split_k_reduce/bf16_v2_t64_d4", "--per-kind", "1",
                      "--kinds", "cmp_negate", "--match", r"%no_such_name\d+ = "])
    assert rc == 2 and "--per-kind 1 samples sites, --per-kind 0 plans every one" in capsys.readouterr().err


def test_channel_zero_carry_only_for_a_state_starting_at_channel_0():
    # plain 32x32x32 w1x1 (row slots): state 0 starts at element 0; states 1..3 at 8, 16, 24
    jobs = _jobs("plain_mem_cshuffle_32x32x32_w1x1_bf16", "cmp_boundary", r"%k_cyc\d+ = icmp uge")
    got = [(AR._block_at(j.original, j.mutant.line - 1), _why(j)) for j in jobs]
    assert got.count(("kwalk", "channel-0 carry")) == 1, got
    assert len(got) == 8 and all(w == "" for b, w in got if (b, w) != ("kwalk", "channel-0 carry"))
    # the two-stage form's state 0 starts at k_begin: not argued
    spk = _jobs("aot_spk2_mem_default_32x32x32_w1x1_bf16", "cmp_boundary", r"%k_cyc\d+ = icmp uge")
    assert spk and not any(AR._channel_zero_carry(j) for j in spk)


def test_tap_branch_disjoint_is_argued_on_the_odd_tile_bit_only():
    jobs = _jobs("aot_spk2_mem_default_32x32x32_w1x1_bf16", "promise_lie", r"%tp_r\d+ = or i32 ")
    got = {AR._changed_line(j).split(" = ")[1]: _why(j) for j in jobs if j.mutant.what.startswith("disjoint_or:")}
    # cr (a multiple of 8) | kr (of 32) may share bits; their or | odd (ntiles & 1) may not
    assert sorted(got.values()) == ["", "tap branch disjoint"], got
    assert all(("%tp_odd" in k) == (w == "tap branch disjoint") for k, w in got.items()), got


def test_nuw_on_the_walk_wraps_and_guarded_k_limits_is_argued_not_elsewhere():
    jobs = [j for j in _jobs("plain_mem_cshuffle_32x32x32_w1x1_fp16", "promise_lie", r" = sub i32 ")
            if j.mutant.what.startswith("nuw_sub:")]
    got = {AR._changed_line(j).split(" = ")[0].strip().rstrip("0123456789"): _why(j) for j in jobs}
    assert got["%k_xd"] == got["%k_c"] == "carry wrap sub"          # x - (x >= L ? L : 0)
    assert got["%a_klim"] == got["%b_klim"] == "guarded K limit"    # select (koff < k_end), k_end - koff, 0
    # the K step's byte carries (dw*pixb - 2*cpg, ...) may be negative: not argued
    assert got["%k_dcy"] == got["%k_dcx"] == "", got


def test_exact_on_a_literal_zero_dividend_is_proved_and_k_limit_past_the_end_argued():
    cfg = "fused_relu_mem_default_32x32x32_w1x1_fp16"
    exact = [j for j in _jobs(cfg, "promise_lie", r" = udiv i32 ") if j.mutant.what.startswith("exact_div:")]
    got = {AR._changed_line(j).split(" = ")[1]: _why(j) for j in exact}
    assert got["udiv exact i32 0, %cpg"] == "exact holds: a literal 0 dividend is a multiple of every divisor"
    assert all(w == "" for k, w in got.items() if " 0, " not in k), got   # k_begin + 8 may not divide
    arms = _jobs(cfg, "const_inc", r"%a_klim\d+ = select ") + _jobs(cfg, "const_dec", r"%a_klim\d+ = select ")
    by = {(j.mutant.kind, j.mutant.what): _why(j) for j in arms}
    assert by[("const_inc", "i32 0 -> i32 1")] == by[("const_dec", "i32 0 -> i32 -1")] == "K limit past the end"
    # the K limit's literal subtrahend C -> C +- 1 (vector 8): argued (chunk granularity / masked partner)
    subs = _jobs(cfg, "const_inc", r"%a_klim\d+ = sub ") + _jobs(cfg, "const_dec", r"%a_klim\d+ = sub ")
    assert sorted(j.mutant.what for j in subs) == ["sub operand 16 -> 15", "sub operand 16 -> 17",
                                                    "sub operand 24 -> 23", "sub operand 24 -> 25",
                                                    "sub operand 8 -> 7", "sub operand 8 -> 9"]
    assert {_why(j) for j in subs} == {"K limit offset"}


def test_k_limit_offset_is_argued_only_on_a_literal_offset_at_a_power_of_two_width():
    cfg = "aot_spk2_mem_default_32x32x32_w1x1_bf16"   # the slice's %k_end as the minuend
    subs = _jobs(cfg, "const_inc", r"%a_klim\d+ = sub i32 %k_end")
    assert len(subs) == 3 and {_why(j) for j in subs} == {"K limit offset"}
    # the slot's in-range test and B's K limit (a variable offset) are not this rule's
    kin = _jobs(cfg, "const_inc", r"%a_kin\d+ = icmp ult i32 8, ")
    assert kin and all(_why(j) != "K limit offset" for j in kin)
    # a width that does not divide the tile start (a padded-pixel 3) or of 1: not argued
    job = subs[0]
    for v in (1, 3):
        odd = R.Job(job.family, job.config, {**job.spec, "vector_a": v}, job.arch, job.original, job.mutant)
        assert not AR._k_limit_offset(odd), v


def test_swapped_operands_of_a_symmetric_compare_are_proved_not_of_an_ordered_one():
    cfg = "plain_mem_default_32x32x32_w1x1_bf16"
    eq = _jobs(cfg, "swap_operands", r"%tp_uni\d+ = icmp eq ")
    assert eq and {_why(j) for j in eq} == {"icmp eq is symmetric in its operands"}
    ult = _jobs(cfg, "swap_operands", r"%a_hok\d+ = icmp ult ")
    assert ult and all(_why(j) == "" for j in ult)   # a < b is not b < a


def test_the_row_slot_class_every_site_arguments_match_their_survivors_only():
    """The every-site run of plain 32x32x32 w1x1 (docs/sim.md): swapped K limits, the K
    span's rounding, a K-limit literal one short; each refuses its neighbours."""
    cfg = "plain_mem_default_32x32x32_w1x1_bf16"
    swapped = _jobs(cfg, "swap_operands", r"%[ab]_klim\d+ = sub i32 %Kgemm")
    assert len(swapped) == 4 and all(AR._swapped_k_limit(j) for j in swapped)
    other = _jobs(cfg, "swap_operands", r"%k_dcy\d+ = sub")
    assert other and not any(AR._swapped_k_limit(j) for j in other)
    span = {j.mutant.what: AR._span_rounding(j) for j in _jobs(cfg, "const_inc", r"%k_span\d+ = sub")
            + _jobs(cfg, "const_dec", r"%k_span_up\d+ = add") + _jobs(cfg, "const_inc", r"%k_span_up\d+ = add")}
    assert span == {"sub operand 0 -> 1": True, "add operand 31 -> 30": True, "add operand 31 -> 32": False}
    kin = {(j.mutant.kind, AR._zero_k_limit(j)) for j in _jobs(cfg, "const_dec", r"%a_kin\d+ = icmp ult i32 8,")
           + _jobs(cfg, "const_inc", r"%a_kin\d+ = icmp ult i32 8,")}
    assert kin == {("const_dec", True), ("const_inc", False)}


def test_first_step_channel_offset_and_slot0_x_carry_refuse_the_loop_and_other_slots():
    """The K walk's first step (block kwalk): its channel wrap's 0 made -1 leaves k_c one high
    for good (argued; the K loop's makes it drift: killed by cover_kwalk_drift); slot 0's x
    carry (tap 0, channel 0) never meets k_xlim (argued; slots 1-3 killed by cover_kwalk_x*)."""
    cfg = "plain_mem_default_32x32x32_w1x1_bf16"
    cw = [(AR._block_at(j.original, j.mutant.line - 1), AR._first_step_channel_offset(j))
          for j in _jobs(cfg, "const_dec", r"%k_cw\d+ = select")]
    assert sorted({(b.rstrip("0123456789"), ok) for b, ok in cw}) == [("kloop", False), ("kwalk", True)]
    xs = [AR._channel_zero_x_carry(j) for j in _jobs(cfg, "cmp_boundary", r"%k_cyx\d+ = icmp")]
    assert xs.count(True) == 1 and len(xs) == 8   # kwalk slot 0 only (4 kwalk + 4 kloop slots)

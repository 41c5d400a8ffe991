"""The arguments drawn by the every-site run of the two-stage class (spk2 64x64, docs/sim.md
"Every-site runs"), each shown on its survivor and refused where its premise fails, and
the cross-check of every kill against the arguments (an argument that matches a killed
mutant is an ARGUMENT CONTRADICTION: its predicate is broader than its reasoning)."""
from __future__ import annotations

from parity.mutate import argued as AR
from parity.mutate import proved as PROVED
from parity.mutate import run as R
from mutant_helpers import argued_names as _argued, conv_jobs

SPK2 = "spk2_mem_default_64x64_bf16"
SKC4 = "skc4_mem_default_64x64_bf16"
P64 = "plain_mem_default_64x64x32_w2x2_bf16"



def test_non_empty_slice_on_two_stage_not_on_the_cluster():
    assert _argued(SPK2, "const_inc", r"%k_span_nz\d+ = select") == {"i32 0 -> i32 1": "non-empty slice"}
    assert _argued(SPK2, "const_dec", r"%k_span_nz\d+ = select") == {"i32 0 -> i32 -1": "non-empty slice"}
    lie = "nuw_sub: `nuw` on sub %k_end13, %k_begin10"
    assert _argued(SPK2, "promise_lie", r"%k_span\d+ = sub") == {lie: "non-empty slice"}
    # a cluster binary launches S slices, the trailing ones empty: k_begin >= k_end there
    assert _argued(SKC4, "promise_lie", r"%k_span\d+ = sub") == {lie: None}
    assert set(_argued(SKC4, "const_inc", r"%k_span_nz\d+ = select").values()) == {None}


def test_tap_pair_start_only_on_the_slice_start_term():
    got = _argued(SPK2, "const_inc", r"%tp_kr\d+ = urem") | _argued(SPK2, "const_dec", r"%tp_kr\d+ = urem")
    assert got == {"urem operand 64 -> 65": "tap pair start", "urem operand 64 -> 63": "tap pair start"}
    # the channel term tp_cr = cpg urem 64 made 63: cover_taps_cr63 takes the tap loop there, wrong
    assert set(_argued(SPK2, "const_dec", r"%tp_cr\d+ = urem").values()) == {None}


def test_general_path_covers_the_slab_stores_wide_test():
    got = _argued(SPK2, "const_dec", r"%ws_wide\d+ = icmp") | _argued(SPK2, "const_inc", r"%ws_wide\d+ = icmp")
    # (K | kpg) & 3 is never -1: always the narrow slab stores; it is 1 when K = 1 mod 4
    assert got == {"icmp operand 0 -> -1": "general path", "icmp operand 0 -> 1": None}


def test_extra_k_tile_and_k_span_one_long_refuse_the_tap_loop():
    js = {(j.mutant.line, j.mutant.what): j for j in conv_jobs(SPK2, "kloop_cmp", r"%again\d+ = icmp")}
    walk, tap, tile = sorted({ln for ln, _ in js})
    labels = PROVED.block_labels(js[(walk, "cmp_boundary: ult -> ule")].original)
    assert labels[walk].startswith("kloop") and labels[tap].startswith("tap_loop")
    assert labels[tile].startswith("taptile_loop")
    assert AR._extra_k_tile(R._view(js[(walk, "cmp_boundary: ult -> ule")]))
    assert not AR._extra_k_tile(R._view(js[(tap, "cmp_boundary: ult -> ule")]))   # no K mask in the tap loop
    assert not AR._extra_k_tile(R._view(js[(tile, "cmp_boundary: ult -> ule")]))  # nor in the tap-tile loop
    one_long = [j for j in conv_jobs(P64, "const_dec", r"%k_span\d+ = sub i32 %Kgemm, 0$")]
    assert len(one_long) == 1 and not AR._span_one_long(one_long[0])    # cover_taps_x3 kills it


def test_an_argument_matching_a_killed_mutant_is_a_contradiction(monkeypatch):
    job = next(j for j in conv_jobs(SPK2, "const_dec", r"%ws_wide\d+ = icmp"))
    killed = R.Verdict(job.family, job.config, "const_dec", job.mutant.line, job.mutant.what, "killed",
                       "numerics", "cover_odd_slab_ks32x2: D[0, 0, 0, 1] = 1.0, want 2.0")
    assert R._argued_contradiction(job, killed) == "argued: general path"
    rep = R.report([killed])
    killed.contradiction = R._argued_contradiction(job, killed)
    assert rep.contradictions == [killed]
    assert "ARGUMENT CONTRADICTION conv_implicit_gemm/spk2_mem_default_64x64_bf16 const_dec" in R.render(rep)
    assert "argued 'general path', yet numerics killed it" in R.render(rep)
    # guarded K limit: the sub's wrap is poison a select never chooses (LangRef); the
    # emulator reports poison where it is made, so a Poison kill there is consistent
    lie = next(j for j in conv_jobs(SPK2, "promise_lie", r"%a_klim\d+ = sub"))
    assert R._view(lie) is lie and AR._guarded_k_limit(lie)
    poison = R.Verdict(lie.family, lie.config, "promise_lie", lie.mutant.line, lie.mutant.what, "killed",
                       "numerics", "odd_k9_ks32x1: Poison: sub nuw overflows i32 in lane 2 (8, 16)")
    assert R._argued_contradiction(lie, poison) == ""
    poison.reason = "odd_k9_ks32x1: D[0, 0, 0, 0] = 1.0, want 2.0"
    assert R._argued_contradiction(lie, poison) == "argued: guarded K limit"
    monkeypatch.setattr(R, "ARGUED", ())
    assert R._argued_contradiction(job, killed) == ""


def test_a_block_no_admitted_problem_enters_is_proved_from_the_cluster_admission():
    # the cluster form admits K and kpg multiples of 4: `ws_wide = ((K | kpg) & 3) == 0` is
    # always true, so nothing in slab_narrow runs (55 of the skc4 every-site survivors)
    from parity.mutate import proved as P
    narrow = conv_jobs(SKC4, "const_inc", r"%ws_byte\d+ = mul")
    got = {P.block_labels(j.original).get(j.mutant.line, ""): P.abstract_reason(j) for j in narrow}
    assert got["slab_narrow945"].startswith("block %slab_narrow945 is never entered for an admitted problem "
                                            "(`br i1 %ws_wide943, label %slab_wide944, label %slab_narrow945` "
                                            "always goes to %slab_wide944")
    assert got["slab_wide944"] == ""                      # the taken side is not
    # two-stage admits any K: its slab_narrow runs (cover_odd_slab)
    assert {P.abstract_reason(j) for j in conv_jobs(SPK2, "const_inc", r"%ws_byte\d+ = mul")} == {""}


def test_the_cluster_fold_row_test_is_proved_from_ks_count_equal_to_s():
    # f_rok = f_row < 64, f_row = slice*16 + tid/16 with slice < ks_count = S: at S = 4 at most 55
    from parity.mutate import proved as P
    j4 = conv_jobs(SKC4, "cmp_boundary", r"%f_rok\d+ = icmp ult")
    assert j4 and {P.abstract_reason(j) for j in j4} == {
        "the compare gives the honest result for every admitted value of its operand"}
    j8 = conv_jobs("skc8_mem_default_64x64_bf16", "cmp_boundary", r"%f_rok\d+ = icmp ult")
    got = {P.block_labels(j.original).get(j.mutant.line, "")[:9]: P.abstract_reason(j) for j in j8}
    # S = 8: the wide fold's slot walk reaches row 64 (f_slotc / 8 over several passes), so
    # its test matters; the narrow fold's slice*8 + tid/16 stays at most 63
    assert got["fold_wide"] == "" and got["fold_narr"].startswith("the compare gives the honest result")


def test_finite_sums_argues_nnan_on_conv_folds_not_on_the_reduce():
    import dataclasses
    lies = [j for j in conv_jobs(SKC4, "promise_lie", r"= fadd ") if j.mutant.what.startswith("fmf_nnan:")]
    assert lies and all(AR._finite_nnan(j) for j in lies)
    # the reduce's plans put NaN and infinities in slab 0: nnan on its slab sums is a lie
    assert not any(AR._finite_nnan(dataclasses.replace(j, family="conv_fwd_split_k_reduce")) for j in lies)


def test_the_tap_b_cap_sub_cannot_wrap():
    """``nuw`` on ``tp_kblast = sub tp_kendb, 2*tiles*tile_k`` (the look-ahead B cap,
    cap_kb): the tap loops run only with ntiles >= tiles, so it is a true promise, in the
    pair loop's prologue (128 = 4 tile_k) and the tap-tile loop's (64 = 2 tile_k)."""
    got = _argued(P64, "promise_lie", r"%tp_kblast\d+ = sub")
    assert sorted(k.rsplit(", ", 1)[1] for k in got) == ["128", "64"], got
    assert set(got.values()) == {"tap B cap nuw"}

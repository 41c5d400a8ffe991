"""Branch/select coverage in the emulator, the covering problem sets and tile
classes (parity/sim/coverage.py, parity/sim/cover.py), and the known misses the
covering problems must catch (issue 22): reduce width-2 slab loads declared
``align 8``, a cluster fold with floor(tile_m / S) rows, a slice end one short."""
from __future__ import annotations

import re

import numpy as np
import pytest

import python_engine.api as api
from parity.sim import Kernel
from parity.sim import coverage as COV
from parity.sim import cover
from parity.sim import numerics as N
from parity.sim.plans import conv_implicit_gemm as CONV_PLAN

ARCH = "gfx1250"

_BRANCHY = """define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %n) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %big = icmp ugt i32 %n, 4
  br i1 %big, label %yes, label %no

yes:
  %odd = and i32 %tid, 1
  %isodd = icmp eq i32 %odd, 1
  %v = select i1 %isodd, i32 %n, i32 0
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %p, align 4
  br label %no

no:
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="32,32" }
"""


def test_coverage_off_decodes_no_recording():
    k = Kernel(_BRANCHY)
    assert k.coverage is None
    k.launch((1, 1, 1), 32, {"out": np.zeros(32, np.int32), "n": 7})


def test_coverage_records_each_way_of_branches_and_selects():
    k = Kernel(_BRANCHY, coverage=True)
    k.launch((1, 1, 1), 32, {"out": np.zeros(32, np.int32), "n": 7})
    s = k.coverage.summary()
    # the branch went only true; the select went both ways (odd and even lanes)
    assert s["br"] == [1, 0] and s["select"] == [1, 1]
    assert [(how, hints) for _, how, hints in s["missing"]] == [("never false", ("big", "entry"))]
    k.launch((1, 1, 1), 32, {"out": np.zeros(32, np.int32), "n": 2})
    s = k.coverage.summary()
    assert s["br"] == [1, 1] and s["missing"] == []
    k.coverage.reset()
    s = k.coverage.summary()
    assert s["br"] == [1, 0] and s["missing"][0][1] == "never run"


def test_judge_declared_reason_and_classes():
    k = Kernel(_BRANCHY, coverage=True)
    k.launch((1, 1, 1), 32, {"out": np.zeros(32, np.int32), "n": 7})
    s = k.coverage.summary()
    fails, declared = COV.judge(s, {"interior": True, "last_m": False}, {})
    assert len(fails) == 2 and "never false" in fails[0] and fails[1] == "tile class last_m not hit"
    fails, declared = COV.judge(s, {"interior": True}, {"big": "n is always large here"})
    assert fails == [] and declared[0].endswith("declared: n is always large here")


def test_reduce_cover_problem_reaches_odd_slab_on_the_vector_path():
    spec = {"dtype": "bf16", "vector": 2, "threads": 64, "degree": 4}
    assert cover.reduce_cover_problems(spec) == ((65, 1), (127, 1), (256, 1))
    assert cover.reduce_classes(spec, 65, 1, 4) == {"interior", "partial_vector", "odd_slab"}
    assert cover.reduce_classes(spec, 7, 9, 4) == {"partial_vector"}      # no full wave: no vector path
    assert "odd_slab" not in cover.reduce_required({**spec, "degree": 1})


def test_conv_classes_and_requirements():
    full = N._with_defaults("conv_implicit_gemm", {"split_k": 15, "split_k_cluster": 15, "epilogue": "cshuffle",
                                                   "tile_m": 128, "tile_n": 128, "tile_k": 64})
    req = cover.conv_required(full)
    assert {"fold_rows", "every_slice", "empty_slices"} <= set(req) and "odd_slab" not in req
    probs = {p[0]: p for p in cover.conv_cover_problems(full)}
    # the cluster's full tile: W = tile_m pixels (one full M tile: rows 120-127 fold), kpg = tile_n
    assert probs["cover_full_tile"][4] == 128 and probs["cover_full_tile"][5] == 128
    assert probs["cover_narrow"][4] == 129 and probs["cover_narrow"][5] == 132
    plan = {"args": {"M": "128", "kpg": "128", "K": "128"}, "ks": 128, "ks_count": 15, "data_slices": 8}
    assert cover.conv_classes(full, plan, 15 * 64 + 8) == {"interior", "last_k", "fold_rows", "empty_slices"}
    plain = N._with_defaults("conv_implicit_gemm", {})
    # W: cover_full_tile, cover_narrow, cover_pad_images (1 x (tile_m / 2 - 2), two images),
    # cover_taps (the uniform-tap loop of the two-deep 64x64x32 kernel: 1 x (tile_m/4 + 4), two images),
    # cover_taps_x3 (3 x 3), cover_taps_first (1 x 1 at d 1), cover_taps_xwrap (2d x 2),
    # cover_taps_slots / _pro (a slot of 32 rows: 1 x 15, 1 x 8), the K walk's cover_kwalk_mid,
    # cover_diff_hok, cover_tap_wok (plain too since the every-site run of 64x64x32),
    # cover_first_hok (tile_m / 8), cover_n_tiles (8 pixels, kpg = 3 tile_n), cover_kwalk_drift
    # (7 x 7 output of a 13 x 5 filter, dilation (1, 2): W 15), cover_taps_cr63 / cr65 (Y x 7),
    # the tap-tile loop's cover_tt_odd / even / x1 / odd3 / left (1 x w, w = tile_m/4 + 4),
    # cover_tt_xstep (2 x 6), cover_tt_slots (1 x (7 - 2d)), cover_tt_cr31 / cr33 (Y x 7),
    # cover_unit_first / cover_unit_loop (1 x 1 images)
    probs_plain = cover.conv_cover_problems(plain)
    assert [p[4] for p in probs_plain] == [71, 65, 30, 20, 3, 1, 2, 15, 8, 5, 10, 6, 8, 8, 15, 7, 7,
                                           20, 20, 20, 20, 20, 6, 5, 7, 7, 1, 1]
    assert [p[:3] for p in probs_plain[-2:]] == [("cover_unit_first", 17, 8), ("cover_unit_loop", 64, 80)]
    assert probs_plain[13][0] == "cover_n_tiles" and probs_plain[13][5] == 3 * plain["tile_n"]
    # the tap loop's first trip (docs/sim.md, per K-loop iteration class): cpg 6*tile_k with a
    # d x 1 filter, cpg 2*tile_k with a 2d x 2 filter; two-stage at degree 2 also the K walk's middle trips
    two = {p[0]: p for p in cover.conv_cover_problems(N._with_defaults("conv_implicit_gemm", {"split_k": 4}))}
    assert two["cover_taps_first"][2:8] == (192, 2, 1, 8, 2, 1)
    assert two["cover_taps_xwrap"][2:8] == (64, 4, 2, 8, 4, 2)
    assert two["cover_kwalk_mid"][2:8] == (24, 5, 5, 68, 5, 5) and "cover_kwalk_mid" not in probs  # cluster
    # 128x128x64 runs the uniform-tap loop beside its walk (tap_beside), with the tap loop's own
    # row slots (tap_rows, one thread a row): the tap problems and cover_rows_tap, not cover_rows_first
    assert probs["cover_taps"][2] == 4 * 15 * 64 and probs["cover_rows_tap"][2:8] == (4 * 15 * 64, 2, 3, 8, 1, 1)
    assert "cover_rows_first" not in probs and "cover_first_hok" in probs
    # the per-slot tap problems are drawn for the walk's slot rows: not run on a tap-rows kernel
    # (stop 53; cover_rows_tap covers its tap loop's one pixel a thread), still on 64x64x32
    assert "cover_taps_slots" not in probs and "cover_taps_slots_pro" not in probs
    assert {"cover_taps_slots", "cover_taps_slots_pro"} <= {p[0] for p in probs_plain}
    # cover_taps: cpg = 4*d*tile_k (d = 1 plain, 2 two-stage, S cluster), a 2x2 filter, padding 1
    for spec, cpg in (({}, 128), ({"split_k": 4, "split_k_cluster": 0}, 256), ({"split_k": 4, "split_k_cluster": 4}, 512)):
        t = {p[0]: p for p in cover.conv_cover_problems(N._with_defaults("conv_implicit_gemm", spec))}["cover_taps"]
        assert t[1:8] == (2, cpg, 1, 20, 68, 2, 2) and t[9] == (1, 1), t
        # cover_taps_x3: cpg = 2*d*tile_k, a 3x3 with padding 1: slices of 18 K tiles (9 pairs)
        t = {p[0]: p for p in cover.conv_cover_problems(N._with_defaults("conv_implicit_gemm", spec))}["cover_taps_x3"]
        assert t[1:8] == (1, cpg // 2, 3, 3, 8, 3, 3) and t[9] == (1, 1), t


def _reduce_run(spec, edit):
    lw = N.TextLowerer("conv_fwd_split_k_reduce", spec, ARCH,
                       edit(api.lower("conv_fwd_split_k_reduce", N._with_defaults("conv_fwd_split_k_reduce", spec),
                                      ARCH, "llvm23").text))
    return N.run_config("conv_fwd_split_k_reduce", "t", spec, ARCH, lw)


def test_reduce_width2_slab_loads_declared_align8_are_misaligned():
    """(a) of issue 22: `8 if width == 2 else 4` on the slab loads; M*K = 65 reaches slab 1 at byte 260."""
    spec = {"dtype": "bf16", "vector": 2, "threads": 64, "degree": 4}
    assert _reduce_run(spec, lambda t: t).ok

    def align8(t):
        return re.sub(r"(= load <2 x float>, ptr addrspace\(1\) %pws\d+), align 4", r"\1, align 8", t)
    o = _reduce_run(spec, align8)
    assert not o.ok
    assert any(p.startswith("M65_K1_ks4: Misaligned") and "declared align 8" in p for p in o.problems), o.problems


def _conv_problem_run(spec, names, edit=lambda t: t):
    full = N._with_defaults("conv_implicit_gemm", spec)
    text = edit(api.lower("conv_implicit_gemm", full, ARCH, "llvm23").text)
    lw = N.TextLowerer("conv_implicit_gemm", full, ARCH, text)
    probs = [p for p in CONV_PLAN.CONV_PROBLEMS + CONV_PLAN.cluster_problems(full["split_k_cluster"], full["tile_k"])
             + cover.conv_cover_problems(full) if p[0] in names]
    out = []
    for case in CONV_PLAN.conv_cases(full, ARCH, lw, problems=probs):
        if isinstance(case, N.Case):
            got, _ = N.run_case(case, lw)
            out += [f"{case.name}: {p}" for p in got]
    return out


def _tap_pixel_test_one_long(t):
    """The uniform-tap loop's pixel tests (``tp_hok`` / ``tp_wok`` in block tap_loop)
    ``<u H`` / ``<u W`` made ``<=u``: a padding tap at hi == H or wi == W reads data."""
    body = t.split("\ntap_loop", 1)
    pat = re.compile(r"(%tp_(?:h|w)ok\d+ = icmp) ult ")
    assert len(pat.findall(body[1].split("\nkwalk", 1)[0])) == 4
    return body[0] + "\ntap_loop" + pat.sub(r"\1 ule ", body[1], count=4)


def test_tap_pixel_test_one_long_is_caught_by_cover_taps():
    assert _conv_problem_run({}, ("cover_taps",)) == []
    bad = _conv_problem_run({}, ("cover_taps",), _tap_pixel_test_one_long)
    assert bad and bad[0].startswith("cover_taps") and "outside the tolerance" in bad[0], bad


def _slice_end_short(t):
    """k_end = min(k_begin + ks - 1, Kgemm): every interior slice one element short."""
    pat = re.compile(r"^(\s*)(%k_end_raw\d+) = add i32 (%k_begin\d+), %ks$", re.M)
    assert len(pat.findall(t)) == 1
    return pat.sub(r"\1%k_end_long = add i32 \3, %ks\n\1\2 = sub i32 %k_end_long, 1", t)


def test_slice_end_one_short_is_caught_by_the_element_wise_config():
    spec = {"vector_a": 1, "vector_b": 1, "split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"}
    assert _conv_problem_run(spec, ("cover_full_tile",)) == []
    bad = _conv_problem_run(spec, ("cover_full_tile",), _slice_end_short)
    assert bad and bad[0].startswith("cover_full_tile") and "outside the tolerance" in bad[0], bad


def test_slice_end_one_short_is_equivalent_on_8_wide_loads():
    """docs/sim.md "Mutation lane": with 8-wide loads every admitted slice end is a
    multiple of 8 (ks a multiple of tile_k, Kgemm of cpg % 8 == 0), and a vector is
    loaded when its start is below k_end, so k_end - 1 loads the same vectors."""
    spec = {"split_k": 4, "split_k_cluster": 0}
    assert _conv_problem_run(spec, ("cover_full_tile",), _slice_end_short) == []


@pytest.mark.parametrize("spec", [{"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle"}])
def test_reversed_cluster_fold_breaks_the_two_stage_invariant(spec):
    """Issue 22: a fold summing slabs S-1 .. 0 stays within numpy's tolerance; the
    invariant cluster == two-stage names it."""
    from parity.mutate import operators as OPS
    full = N._with_defaults("conv_implicit_gemm", spec)
    text = api.lower("conv_implicit_gemm", full, ARCH, "llvm23").text
    fold = [s for s in OPS.sites(text, "slab_reverse") if "f_sum" in text.split("\n")[s[0]]]
    assert fold
    rev = OPS.apply(text, "slab_reverse", fold[0]).text
    assert _conv_problem_run(spec, ("cover_full_tile",)) == []
    bad = _conv_problem_run(spec, ("cover_full_tile",), lambda t: rev)
    # issue 34: the numpy model of the documented fold order (from slab 0) names it too
    assert len(bad) == 2 and "fold order: D[" in bad[0] and "from slab 0 in order" in bad[0], bad
    assert "invariant 'cluster == two-stage' violated" in bad[1], bad
    assert "(cluster S=4)" in bad[1] and "(two-stage split_k=4)" in bad[1]


def test_numerics_ir_option_runs_the_config_plan_on_a_file(tmp_path, capsys):
    from parity.app.main import main as parity_main
    spec = {"dtype": "bf16", "vector": 2, "threads": 64, "degree": 4}
    text = api.lower("conv_fwd_split_k_reduce", N._with_defaults("conv_fwd_split_k_reduce", spec), ARCH,
                     "llvm23").text
    good, bad = tmp_path / "good.ll", tmp_path / "bad.ll"
    good.write_text(text)
    bad.write_text(re.sub(r"(= load <2 x float>, ptr addrspace\(1\) %pws\d+), align 4", r"\1, align 8", text))
    ref = "conv_fwd_split_k_reduce/bf16_v2_t64_d4"
    assert parity_main(["numerics", "--ir", str(good), ref, "--coverage"]) == 0
    out = capsys.readouterr().out
    assert "PASS conv_fwd_split_k_reduce/bf16_v2_t64_d4 with the IR of" in out
    assert "coverage: branches 3/3 both ways, selects 1/1 both ways, tile classes 3/3" in out
    assert parity_main(["numerics", "--ir", str(bad), ref]) == 1
    assert "M65_K1_ks4: Misaligned" in capsys.readouterr().out
    assert parity_main(["numerics", "--ir", str(tmp_path / "missing.ll"), ref]) == 2
    err = capsys.readouterr().err.strip().split("\n")
    assert len(err) == 1 and err[0].startswith("error: --ir: cannot read")
    assert parity_main(["numerics", "--ir", str(good), "nosuch_config"]) == 2


def test_config_uncovered_must_map_hints_to_reasons():
    from parity.config import Config, ConfigError
    assert dict(Config("a", arch="gfx1250", uncovered={"any_tile": "why"}).uncovered) == {"any_tile": "why"}
    for bad in ({"any tile": "why"}, {"any_tile": ""}, ["any_tile"]):
        with pytest.raises(ConfigError, match="uncovered must map SSA hints"):
            Config("a", arch="gfx1250", uncovered=bad)


def test_bless_selection_refuses_align8_slab_loads(monkeypatch):
    """What `parity write` runs on a changed config (parity/golden/bless.py: run_all with
    ``select``), with both engines' text changed alike (the lowerer's text
    edited): the config fails and the failure names the access."""
    real = N._Lowerer.text

    def edited(self, family, spec, arch, flavor=N.FLAVOR):
        t = real(self, family, spec, arch, flavor)
        return re.sub(r"(= load <2 x float>, ptr addrspace\(1\) %pws\d+), align 4", r"\1, align 8", t)
    monkeypatch.setattr(N._Lowerer, "text", edited)
    monkeypatch.setattr(N, "_LOWERER", None)
    sel = {("conv_fwd_split_k_reduce", "bf16_v2_t64_d4")}
    outs = N.run_all(["conv_fwd_split_k_reduce"], jobs=1, select=sel)
    assert [(o.config, o.ok) for o in outs] == [("bf16_v2_t64_d4", False)]
    assert any("Misaligned" in p and "declared align 8" in p for p in outs[0].problems)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_numerics_lines_carry_their_catalog_place(tmp_path, capsys, jobs):
    # the per-config lines streamed in the order the configs finished (longest first over
    # the workers) while the summary and --json are in catalog order: each line now says
    # which place [i/n] of that order it is
    import json

    from parity.app.main import main as parity_main
    names = ["bf16_v8_t256_d4", "bf16_v2_t64_d4"]
    j = tmp_path / "n.json"
    rc = parity_main(["numerics", "--only", ",".join(f"conv_fwd_split_k_reduce/{n}" for n in names), "-v",
                      "-j", jobs, "--json", str(j)])
    out = capsys.readouterr().out
    assert rc == 0, out
    catalog = [c["config"] for c in json.loads(j.read_text())["configs"]]
    assert sorted(catalog) == sorted(names)
    placed = dict(re.findall(r"^\[(\d)/2\] PASS conv_fwd_split_k_reduce/(\S+):", out, re.M))
    assert {name: int(i) for i, name in placed.items()} == {n: k for k, n in enumerate(catalog, 1)}, out


def test_iteration_class_missing_fails_with_a_named_message():
    """Per K-loop iteration class (issue 34 item 5): a loop site that went both ways over
    the run but only one way in its loop's last trips fails by name under
    ``iterations=True``; ``hint@class`` declares it; the back edge ``again`` is exempt."""
    from parity.sim import coverage as COV
    cov = COV.Coverage()
    sel = COV.Site("select", "%a_off7 = select i1 %a_ok6, i32 %a_byte5, i32 %oob_x1", "kloop3", 40)
    back = COV.Site("br", "br i1 %again9, label %kloop3, label %kdone4", "kloop3", 50)
    for s in (sel, back):
        cov.sites.append(s)
        cov.true.append(True)
        cov.false.append(True)
    cov.in_loop = {0: "L", 1: "L"}
    cov.by_class["first"] = {0: 3, 1: 1}
    cov.by_class["middle"] = {0: 3, 1: 1}
    cov.by_class["last"] = {0: 2, 1: 2}   # the select never true in the last trip
    summ = cov.summary()
    assert [(c, h) for _, c, h, _ in summ["iteration_missing"]] == [("last", "never true")]
    fails, _ = COV.judge(summ, {}, {}, iterations=True)
    assert fails == ["K-loop iteration class last: never true in the last trips (both ways over the run): "
                     "`%a_off7 = select i1 %a_ok6, i32 %a_byte5, i32 %oob_x1` (block kloop3, line 40)"]
    assert COV.judge(summ, {}, {}, iterations=False)[0] == []
    fails, declared = COV.judge(summ, {}, {"a_off@last": "no look-ahead tile past the slice end"}, iterations=True)
    assert fails == [] and declared[0].endswith("declared: no look-ahead tile past the slice end")
    cov.by_class["middle"] = {}          # a loop of fewer than three trips: not judged
    assert COV.Coverage.iteration_missing(cov) == []

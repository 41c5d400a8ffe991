"""parity/perf/targets.py goals on hand-made measures (no compile)."""
from __future__ import annotations

from parity.perf import targets as T
from parity.perf.measure import Measure


def _measures(stores: dict, conflicts=0) -> dict:
    return {k: Measure(kernel=k, epilogue_stores=dict(stores.get(k, {16: 4})), bank_conflicts=conflicts)
            for k in T.target_keys()}


def _goal(goals, name):
    [g] = [g for g in goals if g.name == name]
    return g


def test_epilogue_goal_passes_with_a_16_byte_path_beside_the_fallback():
    keys = T.target_keys()
    ms = _measures({keys[0]: {2: 32, 16: 4}})
    g = _goal(T.goals(ms), "epilogue_16b")
    assert g.status == T.PASS
    assert "64x64x32 plain stores 32x2B 4x16B" in g.detail


def test_epilogue_goal_fails_on_a_target_without_a_16_byte_store():
    keys = T.target_keys()
    ms = _measures({keys[1]: {4: 32}})
    g = _goal(T.goals(ms), "epilogue_16b")
    assert g.status == T.FAIL and g.detail == "no 16-byte epilogue store: 64x64x64 two-stage stores 32x4B"


def test_a_target_that_did_not_compile_is_skipped_not_failed():
    ms = _measures({})
    for m in ms.values():
        m.ok, m.error, m.epilogue_stores = False, "verify: Intrinsic has incorrect argument type!", {}
    got = {g.name: g.status for g in T.goals(ms)}
    assert got["epilogue_16b"] == T.SKIP and got["non_wmma"] == T.SKIP


def test_bank_goal_needs_every_target_counted_and_zero():
    ms = _measures({})
    assert _goal(T.goals(ms), "bank_conflicts").status == T.PASS
    ms[T.target_keys()[2]].bank_conflicts = 96
    g = _goal(T.goals(ms), "bank_conflicts")
    assert g.status == T.FAIL and "128x128x64 cluster S=15 96" in g.detail
    ms[T.target_keys()[2]].bank_conflicts = None
    assert _goal(T.goals(ms), "bank_conflicts").status == T.SKIP


def _mainloop(**kw) -> dict:
    ms = _measures({})
    m = ms[T.target_keys()[0]]
    base = dict(k_tiles_per_iteration=2.0, mca={"no_barrier": {"cycles_per_iteration": 800.0}},
                prefetch={"barriers": 1, "wmmas": 4, "lds_loads": 8, "loads": 8}, prefetch_tiles=1.0,
                occupancy=9, vgprs=111, sgprs=58, vgpr_spills=0, sgpr_spills=0, scratch_bytes=0)
    for k, v in {**base, **kw}.items():
        setattr(m, k, v)
    return {g.name: g for g in T.goals(ms)}


def test_mainloop_goals_met():
    g = _mainloop()
    for name in ("mca_no_barrier", "prefetch", "occupancy", "spills", "scratch"):
        assert g[name].status == T.PASS, g[name].line()
    assert "400 llvm-mca cycles per K tile without barriers, limit 450" in g["mca_no_barrier"].detail
    assert "1 barrier(s), 4 WMMAs, 8 LDS loads" in g["prefetch"].detail
    assert "9 waves per SIMD (111 VGPRs, 58 SGPRs)" in g["occupancy"].detail


def test_mainloop_goals_not_met():
    g = _mainloop(k_tiles_per_iteration=1.0, prefetch_tiles=0.0, occupancy=8, vgpr_spills=2, scratch_bytes=16)
    for name in ("mca_no_barrier", "prefetch", "occupancy", "spills", "scratch"):
        assert g[name].status == T.FAIL, g[name].line()
    assert "800 llvm-mca cycles per K tile" in g["mca_no_barrier"].detail


def test_mainloop_goals_skip_when_not_measured():
    g = _mainloop(mca=None, prefetch=None, prefetch_tiles=None, occupancy=None, vgpr_spills=None,
                  scratch_bytes=None)
    assert {n: g[n].status for n in ("mca_no_barrier", "prefetch", "occupancy", "spills", "scratch")} == \
        dict.fromkeys(("mca_no_barrier", "prefetch", "occupancy", "spills", "scratch"), T.SKIP)


def _class_goal(**kw):
    from parity.perf.mix import CLASSES, Mix
    ms = _measures({})
    m = ms[T.target_keys()[1]]   # 64x64x64 two-stage
    counts = dict.fromkeys(CLASSES, 0)
    counts["wmma"] = 16
    base = dict(mix=Mix(total=145, counts=counts), k_tiles_per_iteration=2.0,
                mca={"no_barrier": {"cycles_per_iteration": 972.0}}, prefetch_tiles=1.0, occupancy=7,
                vgpr_spills=0, sgpr_spills=0, scratch_bytes=0)
    for k, v in {**base, **kw}.items():
        setattr(m, k, v)
    return _goal(T.goals(ms), "class_64x64x64_two-stage")


def test_class_goal_met_and_its_figures():
    g = _class_goal()
    assert g.status == T.PASS, g.line()
    assert g.detail == ("64x64x64 two-stage: 8.06 non-WMMA per WMMA (<= 12); 486 llvm-mca cycles per K tile "
                        "without barriers (<= 692); prefetch 1.00 K tiles (>= 1); 7 waves per SIMD (>= 7); "
                        "0 spills; 0 scratch bytes")


def test_class_goal_names_each_unmet_check():
    g = _class_goal(mca={"no_barrier": {"cycles_per_iteration": 2770.0}}, occupancy=6, vgpr_spills=4)
    assert g.status == T.FAIL
    assert g.detail == ("64x64x64 two-stage: 1385 llvm-mca cycles per K tile without barriers (<= 692); "
                        "6 waves per SIMD (>= 7); 4 spills")


def test_class_goal_skipped_when_not_measured():
    assert _class_goal(mca=None).status == T.SKIP


def _barrier(waves: dict, gaps=(100.0, 300.0)) -> T.Goal:
    """barrier_hidden on targets measured with two gaps (100 and 300 work cycles: 600 exposed
    at L = 500), 100 issue and 400 no-barrier cycles per iteration of 2 K tiles; ``waves``
    {target index: waves per SIMD} (the other targets not measured by llvm-mca)."""
    ms = _measures({})
    keys = T.target_keys()
    for i, n in waves.items():
        m = ms[keys[i]]
        m.occupancy, m.k_tiles_per_iteration = n, 2.0
        m.mca = {"no_barrier": {"cycles_per_iteration": 400.0, "block_rthroughput": 100.0},
                 "barrier_model": {"gaps": list(gaps)}}
    return _goal(T.goals(ms), "barrier_hidden")


def test_barrier_goal_met_when_the_spare_issue_covers_the_exposed_cycles():
    # 10 waves x 100 - 400 = 600 spare per iteration = the 600 exposed: 300 per K tile each
    g = _barrier({0: 10, 3: 16})
    assert g.status == T.PASS, g.line()
    assert g.detail == (
        "L = 500 cycles (assumed): 64x64x32 plain met: 300 cycles of work per K tile needed (2 gap(s) of 100/300 "
        "work cycles), 300 available (10 waves x 100 issue - 400 no-barrier cycles per 2 K tile(s)); "
        "16x16 AOT tile met: 300 cycles of work per K tile needed (2 gap(s) of 100/300 work cycles), 600 "
        "available (16 waves x 100 issue - 400 no-barrier cycles per 2 K tile(s)); "
        "not measured: 64x64x64 two-stage, 128x128x64 cluster S=15, 32x32x32 AOT tile")


def test_barrier_goal_not_met_one_wave_short():
    g = _barrier({0: 9, 3: 16})
    assert g.status == T.FAIL
    assert "64x64x32 plain not met: 300 cycles of work per K tile needed (2 gap(s) of 100/300 work cycles), " \
           "250 available (9 waves x 100 issue" in g.detail
    assert "16x16 AOT tile met" in g.detail


def test_barrier_goal_without_barriers_and_skipped():
    g = _barrier({1: 4}, gaps=())
    assert g.status == T.PASS and "64x64x64 two-stage met: 0 cycles of work per K tile needed (no barrier), " \
                                  "0 available (4 waves x 100 issue" in g.detail
    assert _barrier({}).status == T.SKIP
    assert "cycles_halved" not in {g.name for g in T.goals(_measures({}))}


def test_one_wave_class_goal_judges_its_own_limits():
    from parity.perf.mix import CLASSES, Mix
    ms = _measures({})
    key = dict((label, f"{T.FAMILY}/{c}") for label, c in T.TARGETS)["32x32x32 AOT tile"]
    assert T.CLASS_LIMITS["32x32x32 AOT tile"] == (12, 649, 8)   # 1299 cycles per K tile and 8 waves at main
    counts = dict.fromkeys(CLASSES, 0)
    counts["wmma"] = 8
    m = ms[key]
    for k, v in dict(mix=Mix(total=93, counts=counts), k_tiles_per_iteration=2.0,
                     mca={"no_barrier": {"cycles_per_iteration": 832.0}}, prefetch_tiles=1.0, occupancy=8,
                     vgpr_spills=0, sgpr_spills=0, scratch_bytes=0).items():
        setattr(m, k, v)
    g = _goal(T.goals(ms), "class_32x32x32_AOT_tile")
    assert g.status == T.PASS and g.detail.startswith("32x32x32 AOT tile: 10.62 non-WMMA per WMMA (<= 12); "
                                                      "416 llvm-mca cycles per K tile without barriers (<= 649)")
    m.occupancy, m.prefetch_tiles = 7, 0.0
    g = _goal(T.goals(ms), "class_32x32x32_AOT_tile")
    assert g.status == T.FAIL and g.detail == ("32x32x32 AOT tile: prefetch 0.00 K tiles (>= 1); "
                                               "7 waves per SIMD (>= 8)")


def _fallback(loop, nw, nb, pf=1.0):
    return {"loop": loop, "insns": 0, "wmma": 8, "non_wmma_per_wmma": nw, "k_tiles": 2.0, "prefetch_tiles": pf,
            "no_barrier_per_k_tile": nb}


def test_fallback_goal_judges_the_tap_tile_loop_against_the_walk_halved():
    """fallback_<label>: the tap-tile loop's non-WMMA per WMMA and cycles per K tile at the
    FALLBACK_LIMITS (64x64x32 plain: 12 and 441, half the K walk's 883.5), prefetch >= 1."""
    keys = T.target_keys()
    ms = _measures({})
    ms[keys[0]].fallback = _fallback("tap-tile loop", 11.5, 440.0)
    g = _goal(T.goals(ms), "fallback_64x64x32_plain")
    assert g.status == T.PASS and g.detail.startswith("64x64x32 plain tap-tile loop: 11.50 non-WMMA per WMMA")
    ms[keys[0]].fallback = _fallback("tap-tile loop", 14.0, 444.0)
    g = _goal(T.goals(ms), "fallback_64x64x32_plain")
    assert g.status == T.FAIL
    assert g.detail == ("64x64x32 plain tap-tile loop: 14.00 non-WMMA per WMMA (<= 12); "
                        "444 llvm-mca cycles per K tile without barriers (<= 441)")


def test_fallback_goal_names_the_k_walk_where_a_class_has_no_tap_tile_loop():
    keys = T.target_keys()
    ms = _measures({})
    ms[keys[3]].fallback = _fallback("K walk", 71.0, 818.0, 0.0)
    g = _goal(T.goals(ms), "fallback_16x16_AOT_tile")
    assert g.status == T.FAIL and g.detail.startswith("16x16 AOT tile K walk: 71.00 non-WMMA per WMMA (<= 36)")
    assert "prefetch 0.00 K tiles (>= 1)" in g.detail
    assert _goal(T.goals(ms), "fallback_32x32x32_AOT_tile").status == T.SKIP   # not measured

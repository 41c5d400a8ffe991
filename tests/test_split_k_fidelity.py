"""Fidelity to the reference's split-K rules (issue 27, docs/policy.md): the
documented auto-degree outcomes under the reading "the policy's tile is the
16x16x32 WMMA tile, 256 CUs", the readings that do not reproduce them, and
the default selection within the reference's rules (perf_model ``rules =
1``) in both engines."""
from __future__ import annotations

import pytest

from python_engine.policy.split_k import select_split_k_fwd

TILE16 = dict(tile_m=16, tile_n=16, tile_k=32, waves_m=1, waves_n=1)


def prob(N, C, H, K, Y, stride=1, pad=None, groups=1, **kw):
    pad = (Y // 2) if pad is None else pad
    return dict({"N": N, "C": C, "H": H, "W": H, "K": K, "Y": Y, "X": Y, "stride_h": stride, "stride_w": stride,
                 "pad_h": pad, "pad_w": pad, "groups": groups}, **kw)


LAYER_7X7_512 = prob(1, 512, 7, 512, 3)     # batch 1, 7x7, 512 -> 512, 3x3: M 49, Kgemm 4608
K10 = prob(1, 64, 8, 10, 3)                 # M 64, Kgemm 576
KPG6 = prob(1, 128, 48, 12, 3, groups=2)    # M 2304, kpg 6, 2 groups, Kgemm 576
IDENTITY_SMALL = prob(1, 64, 32, 128, 3)    # M 1024, kpg 128, Kgemm 576


def _lines(text: str) -> dict:
    return dict((ln.split(" ", 1) + [""])[:2] for ln in text.splitlines())


@pytest.mark.parametrize("problem,extra,degree,rule", [
    (LAYER_7X7_512, {}, 16, "target"),       # 128 tiles x 16 = 2048 = the target; x 32 is over
    (K10, {}, 8, "slice"),                   # 18 K tiles of 32: 16 slices would leave < 2 each
    (KPG6, {}, 4, "target"),                 # 144 x 1 x 2 = 288 tiles: x 8 = 2304 > 2048
    (IDENTITY_SMALL, {}, 4, "target"),       # 64 x 8 = 512 tiles: x 8 = 4096 > 2048
    (LAYER_7X7_512, {"acc_epilogue": "bias"}, 1, "rejected"),
    (LAYER_7X7_512, {"acc_epilogue": "scale"}, 1, "rejected"),
    (LAYER_7X7_512, {"acc_epilogue": "relu"}, 1, "rejected"),
    (LAYER_7X7_512, {"acc_epilogue": "clamp"}, 1, "rejected"),
], ids=["7x7_512_16", "k10_8", "kpg6_4", "identity_small_4", "bias_1", "scale_1", "relu_1", "clamp_1"])
def test_documented_outcomes_at_the_16x16x32_tile(engine, problem, extra, degree, rule):
    t = _lines(engine.lower("split_k_policy", dict(problem, **TILE16, **extra), "gfx1250", "llvm23").text)
    assert t["cus"] == "256"
    assert t["degree"] == str(degree) and t["rule"].startswith(rule + ":"), t["rule"]


@pytest.mark.parametrize("arch", ["gfx1201", "gfx1100", "gfx950", "gfx942"])
@pytest.mark.parametrize("problem", [LAYER_7X7_512, K10, KPG6, IDENTITY_SMALL])
def test_other_arches_resolve_to_1(engine, arch, problem):
    t = _lines(engine.lower("split_k_policy", dict(problem, **TILE16), arch, "llvm23").text)
    assert t["degree"] == "1" and t["rule"].startswith("arch:")


def test_the_readings_of_the_7x7_layer():
    """The arithmetic of docs/policy.md: which tile / CU count / K tile gives 16."""
    M, kpg, g, Kg = 49, 512, 1, 4608
    # the reading: 16x16x32 at 256 CUs -> 16 (and 16 for every CU count 256..511)
    assert select_split_k_fwd(M, kpg, g, Kg, 16, 16, 32, 256).degree == 16
    assert [select_split_k_fwd(M, kpg, g, Kg, 16, 16, 32, c).degree for c in (255, 256, 511, 512)] == \
        [8, 16, 16, 32]
    # the seed's 64x64x32 tile at 256 CUs: 32 (cap); 16 only with 16..31 CUs
    assert select_split_k_fwd(M, kpg, g, Kg, 64, 64, 32, 256).degree == 32
    assert [select_split_k_fwd(M, kpg, g, Kg, 64, 64, 32, c).degree for c in (15, 16, 31, 32)] == [8, 16, 16, 32]
    # a K tile of 128 at 64x64: 36 K tiles -> the slice rule stops at 16; a K tile of 64 does not (72 tiles)
    assert select_split_k_fwd(M, kpg, g, Kg, 64, 64, 128, 256).degree == 16
    assert select_split_k_fwd(M, kpg, g, Kg, 64, 64, 64, 256).degree == 32
    # the chosen problems at the seed's 64x64x32 tile and 256 CUs: 8 for all three (the kpg-6 and identity
    # problems need the 16x16 tile's larger unsplit grid to stop at 4)
    assert [select_split_k_fwd(*mkg, 64, 64, 32, 256).degree
            for mkg in ((64, 10, 1, 576), (2304, 6, 2, 576), (1024, 128, 1, 576))] == [8, 8, 8]


# -- the default selection within the reference's rules (perf_model rules = 1)

def _model(engine, problem, rules, flavor="llvm23", **spec):
    return _lines(engine.lower("perf_model", dict(problem, rules=rules, **spec), "gfx1250", flavor).text)


RESNET_B1_CONV5_2_REDUCE = prob(1, 2048, 7, 512, 1)           # pointwise, Kgemm 2048
VIT_PATCH = prob(1, 3, 224, 768, 16, stride=16, pad=0)       # folds to Kgemm 768


def test_pointwise_is_not_split_by_default(engine):
    m = _model(engine, RESNET_B1_CONV5_2_REDUCE, 0)
    assert m["binary"] == "cluster" and "admitted_by" not in m     # the unconstrained model splits it
    r = _model(engine, RESNET_B1_CONV5_2_REDUCE, 1)
    assert r["binary"] == "plain" and r["degree"] == "1"
    assert r["admitted_by"] == "plain: the plain kernel is always admitted"
    assert r["candidates"].split()[0] == "16"    # the 16 plain tiles only


def test_a_reduction_under_1500_gets_no_cluster(engine):
    m = _model(engine, VIT_PATCH, 0, vector_a=8, vector_b=8)
    assert m["binary"] == "cluster"
    r = _model(engine, VIT_PATCH, 1, vector_a=8, vector_b=8)
    assert r["binary"] != "cluster"
    text = engine.lower("perf_model", dict(VIT_PATCH, rules=1, vector_a=8, vector_b=8), "gfx1250", "llvm23").text
    assert not any(" cluster " in ln for ln in text.splitlines() if ln[:1] == "c" and ln[1:2].isdigit())


def test_cluster_offer_needs_kpg_multiple_of_4(engine):
    """K 12 is a multiple of 4, kpg 6 is not: no cluster binary (the seed's offer names kpg)."""
    p = prob(1, 512, 7, 12, 3, groups=2)
    t = _lines(engine.lower("split_k_policy", p, "gfx1250", "llvm23").text)
    assert t["cluster"] == "not offered: kpg 6 is not a multiple of 4"
    text = engine.lower("perf_model", dict(p, rules=1), "gfx1250", "llvm23").text
    rows = [ln for ln in text.splitlines() if ln[:1] == "c" and ln[1:2].isdigit()]
    assert rows and not any(ln.split()[1] == "cluster" for ln in rows)


def test_two_stage_degrees_are_held_to_the_policy(engine):
    """At 64 CUs (target 512) the 7x7 layer's policy at 64x64x32 gives 32 (cap: 8 tiles x 32 = 256), at
    16x16x32 (128 tiles) 4: no two-stage candidate at 16x16 above degree 4."""
    text = engine.lower("perf_model", dict(LAYER_7X7_512, rules=1, cus=64), "gfx1250", "llvm22").text
    rows = [ln.split() for ln in text.splitlines() if ln[:1] == "c" and ln[1:2].isdigit()]
    d16 = sorted(int(r[4][1:]) for r in rows if r[1] == "two_stage" and r[2].startswith("16x16x"))
    assert d16 and max(d16) <= 4
    d64 = sorted(int(r[4][1:]) for r in rows if r[1] == "two_stage" and r[2].startswith("64x64x"))
    assert max(d64) > 4
    sel = _lines(text)
    assert sel["admitted_by"].split(":")[0] in ("plain", "policy")


def test_cluster_admission_names_the_offer_rule(engine):
    r = _model(engine, LAYER_7X7_512, 1)
    assert r["binary"] == "cluster"
    assert r["admitted_by"] == ("cluster offer: 8 output tiles < 256, Kgemm 4608 >= 1500, K 512 and kpg 512 "
                                "multiples of 4, 8 x S 15 <= the target 2048; the policy splits at 64x64x64 "
                                "(degree 32, rule cap)")


def test_rules_field_is_checked(engine):
    with pytest.raises(Exception, match="rules must be 0 .every admitted candidate. or 1 .the reference's "
                                        "rules., got 3"):
        engine.lower("perf_model", dict(LAYER_7X7_512, rules=3), "gfx1250", "llvm23")


def test_emit_plan_names_the_admitting_rule(tmp_path):
    import json

    import python_engine
    from parity.catalog.emit import plan_layer
    from parity.catalog.miopen import parse_line
    layer = parse_line("pw: convbfp16 -n 1 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1")
    plans = {s: plan_layer(python_engine, layer, lower=False, select=s).to_json() for s in ("rules", "model", "seed")}
    assert plans["rules"]["binary"] == "plain"
    assert plans["rules"]["policy"]["admitted_by"] == "plain: the plain kernel is always admitted"
    assert plans["model"]["binary"] == "cluster"
    assert plans["model"]["policy"]["admitted_by"].startswith("model: ")
    assert plans["seed"]["policy"]["admitted_by"] == ("seed: the split-K policy (rule pointwise: a pointwise "
                                                      "(1x1) problem is not split)")
    json.dumps(plans)

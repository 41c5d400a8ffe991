"""The reference's validator and resolver semantics (issue 37, item 4; docs/policy.md
"Departures from the reference's validator and resolver"), in both engines: the
split-K fields come together, a 3-D problem is refused naming the rule, where
``split_k = -1`` is resolved, and the pointwise departure kept on purpose."""
from __future__ import annotations

import subprocess
import sys

import pytest

import spec_front
from parity.catalog.miopen import SPATIAL_RULE, ProblemInputError, parse_line
from parity.config import load_families

SPLIT_FAMILIES = ("conv_implicit_gemm", "conv_launch", "split_k_policy", "perf_model")
LAYER = "convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3"
ONE_BY_ONE = dict(N=4, C=256, H=14, W=14, K=512, Y=1, X=1, pad_h=0, pad_w=0)
SMALL = dict(N=1, C=512, H=7, W=7, K=512, Y=3, X=3, pad_h=1, pad_w=1)


def _reason(engine, family, spec, arch="gfx1250", flavor="llvm23"):
    try:
        return engine.validate(family, spec, arch, flavor)
    except engine.SpecRejected as e:
        return e.reason


# -- the split-K fields come together ------------------------------------------------------

@pytest.mark.parametrize("family", SPLIT_FAMILIES)
@pytest.mark.parametrize("spec,missing,given", [
    ({"split_k": 4}, "split_k_cluster", "split_k"),
    ({"split_k_cluster": 4, "epilogue": "cshuffle"}, "split_k", "split_k_cluster"),
    ({"split_k": 1, "tile_m": 128}, "split_k_cluster", "split_k"),
])
def test_a_partial_split_k_spec_names_the_missing_field(engine, family, spec, missing, given):
    want = (f"spec field '{missing}' is missing: a spec that sets {given} sets every split-K field "
            f"(split_k, split_k_cluster)")
    assert _reason(engine, family, spec) == want
    with pytest.raises(engine.SpecRejected) as e:
        engine.lower(family, spec, "gfx1250", "llvm23")
    assert e.value.reason == want


@pytest.mark.parametrize("family", SPLIT_FAMILIES)
def test_the_rule_sits_after_unknown_fields_and_before_kinds(engine, family):
    assert _reason(engine, family, {"split_k": 4, "bogus": 1}) == \
        f"spec field 'bogus' is not a field of family '{family}'"
    assert _reason(engine, family, {"split_k": "4"}).startswith("spec field 'split_k_cluster' is missing")
    assert _reason(engine, family, {"split_k": "4", "split_k_cluster": 0}) == \
        "spec field 'split_k' must be an integer"


def test_other_fields_keep_their_defaults(both):
    # a complete split-K pair and nothing else: every other field at its default, accepted alike
    for engine in both:
        assert engine.validate("conv_implicit_gemm", {"split_k": 4, "split_k_cluster": 0}, "gfx1250", "llvm23") \
            is None
        assert engine.validate("conv_implicit_gemm", {}, "gfx1250", "llvm23") is None
        assert engine.validate("conv_launch", SMALL, "gfx1250", "llvm23") is None
        # conv_launch's degree is the launch's, not a split-K spec field: checked by its own rule
        assert engine.validate("conv_launch", dict(SMALL, degree=4), "gfx1250", "llvm23") == \
            "the plain binary (split_k = 1) launches with degree 1, got 4"
    a, b = (e.lower("conv_implicit_gemm", {"split_k": 4, "split_k_cluster": 0}, "gfx1250", "llvm23") for e in both)
    assert a.kernel == b.kernel == "conv_implicit_gemm_bf16_64x64x32_w2x2_mem_default_va8_vb8_identity_spk"


def test_families_without_the_pair_are_unaffected(engine):
    # conv_fwd_split_k_reduce has one split-K-ish field (degree), conv_abi none
    assert spec_front.group_fields(("degree", "dtype")) == ()
    assert engine.validate("conv_fwd_split_k_reduce", {"degree": 4}, "gfx1250", "llvm23") is None
    assert _reason(engine, "conv_abi", {"split_k": 4}) == "spec field 'split_k' is not a field of family 'conv_abi'"


def test_every_config_gives_both_split_k_fields_or_neither():
    partial = []
    for fam in load_families():
        for c in fam.configs:
            spec = c.spec if isinstance(c.spec, dict) else dict(c.spec)
            given = [n for n in spec_front.SPLIT_K_FIELDS if n in spec]
            if 0 < len(given) < 2 and fam.name in SPLIT_FAMILIES:
                partial.append(f"{fam.name}/{c.name}")
    assert partial == []


# -- a 3-D problem -------------------------------------------------------------------------

@pytest.mark.parametrize("line,head", [
    (f"{LAYER} -_ 3", "a 3-D convolution (--spatial_dim 3) is not supported: "),
    (f"{LAYER} --spatial_dim 3 -! 4 --fil_d 3", "a 3-D convolution (--spatial_dim 3; depth flags -! 4, -@ 3) "
                                                "is not supported: "),
    (f"CBAInferfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -F 4 -_ 3", "a 3-D convolution (--spatial_dim 3) "),
    ("MIOpenDriver conv3dbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -! 4",
     "command 'conv3dbfp16' is a 3-D convolution, which is not supported: "),
    ("conv3d -n 1", "command 'conv3d' is a 3-D convolution"),
])
def test_a_3d_problem_is_refused_in_one_line_naming_the_rule(line, head):
    with pytest.raises(ProblemInputError) as e:
        parse_line(line)
    msg = str(e.value)
    assert msg.startswith(head) and SPATIAL_RULE in msg and "\n" not in msg
    assert "not split (degree 1)" in msg


def test_a_3d_line_exits_2_with_one_error_line():
    r = subprocess.run([sys.executable, "-m", "parity", "emit", f"{LAYER} -_ 3"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: a 3-D convolution (--spatial_dim 3)")
    r = subprocess.run([sys.executable, "-m", "parity", "emit", "conv3dfp16 -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "MIOpenDriver spells 3-D as convfp16 --spatial_dim 3 (-_ 3)" in r.stderr


# -- where split_k = -1 is resolved ----------------------------------------------------------

def test_the_launch_builder_resolves_auto_before_validation(both):
    # conv_launch resolves -1 through the policy and lowers the plan of the resolved degree (32 here)
    auto = dict(SMALL, split_k=-1, split_k_cluster=0)
    given = dict(SMALL, split_k=32, split_k_cluster=0, degree=32)
    for engine in both:
        assert engine.lower("conv_launch", auto, "gfx1250", "llvm23") == \
            engine.lower("conv_launch", given, "gfx1250", "llvm23")
        # the kernel builder knows no problem: it refuses -1 with the same text in both engines
        assert _reason(engine, "conv_implicit_gemm", {"split_k": -1, "split_k_cluster": 0}) == \
            "split_k = -1 (auto) must be resolved before lowering"


# -- the pointwise departure (deliberate) ------------------------------------------------------

@pytest.mark.parametrize("binary,degree", [
    ({"split_k": 4, "split_k_cluster": 0}, 4),
    ({"split_k": 2, "split_k_cluster": 4, "epilogue": "cshuffle"}, 4),
])
def test_explicit_split_k_on_a_pointwise_layer_is_admitted(both, binary, degree):
    # the reference's validator rejects these; ours admits them on purpose (docs/policy.md)
    spec = dict(ONE_BY_ONE, **binary, degree=degree)
    assert [e.validate("conv_launch", spec, "gfx1250", "llvm23") for e in both] == [None, None]


def test_auto_on_a_pointwise_layer_is_the_references_degree_1(both):
    spec = dict(ONE_BY_ONE, split_k=-1, split_k_cluster=0)
    for engine in both:
        assert engine.kernel_name("conv_launch", spec, "gfx1250", "llvm23") == \
            "conv_implicit_gemm_bf16_64x64x32_w2x2_mem_default_va8_vb8_identity"
        text = engine.lower("split_k_policy", dict(spec), "gfx1250", "llvm23").text
        assert "degree 1\nrule pointwise: a pointwise (1x1) problem is not split\n" in text

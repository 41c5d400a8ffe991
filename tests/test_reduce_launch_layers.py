"""Issue 13: reduce launches that cannot leave their buffers, `parity layers`
scaled copies that keep the slice count, and the policy's explicit answers
(cluster requests, allow_unsplit, the plan's slice-count reason, 3-D input)."""
from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np
import pytest

import cpp_engine
import python_engine as E
from parity.catalog.layers import run_numerics, scaled_problem, straddles
from parity.sim import Kernel, OutOfBounds, Poison
from parity.catalog.emit import plan_layer, slices_reason
from python_engine.kernels.conv_problem import ConvProblem
from python_engine.spec.fields import SpecRejected
from parity.catalog.miopen import ProblemInputError, parse_catalog, parse_line
from python_engine.policy.split_k import resolve_conv_split_k
from parity.launch.reduce_launch import reduce_launch_reason

HERE = os.path.dirname(__file__)
C80 = os.path.join(HERE, "data", "layers_c80.txt")
M, K = 9, 32


def _args(kc, slabs=None, d_elems=M * K):
    return {"ws_bytes": (kc if slabs is None else slabs) * M * K * 4, "d_bytes": d_elems * 2, "M": M, "K": K,
            "ks_count": kc}


def test_reduce_launch_pairing_rule():
    r8 = {"dtype": "bf16", "degree": 8}
    assert reduce_launch_reason(r8, _args(8)) is None
    why = reduce_launch_reason(r8, _args(6))
    assert why == ("ks_count 6 does not match the reduce kernel's degree 8: an unrolled reduce kernel folds "
                   "exactly degree slabs (rule: pair degree d with ks_count d, or use degree 0)")
    r0 = {"dtype": "bf16", "degree": 0}
    assert reduce_launch_reason(r0, _args(6)) is None
    assert "ws_bytes 6912 is below the 7 fp32 slabs" in reduce_launch_reason(r0, _args(7, slabs=6))
    assert "ws_bytes" in reduce_launch_reason(r8, _args(8, slabs=7))
    assert "d_bytes 2 is below" in reduce_launch_reason(r0, _args(2, d_elems=1))
    assert reduce_launch_reason(r0, _args(0)) == "ks_count must be >= 1, got 0"


def test_forced_short_launch_is_an_out_of_bounds_read_in_the_emulator():
    """An unrolled d8 reduce kernel launched over a 6-slab workspace (what
    `parity layers` used to do) reads past ws_bytes: the emulator says so, at the
    `inbounds` getelementptr that forms the address past the buffer (docs/sim.md,
    Promises) or, without the flag, at the load."""
    rs = {"dtype": "bf16", "vector": 8, "threads": 256, "degree": 8}
    k = Kernel(E.lower("conv_fwd_split_k_reduce", rs, "gfx1250", "llvm23").text, arch="gfx1250")
    ws = np.zeros(6 * M * K, np.float32)
    d = np.zeros(M * K, np.uint16)
    args = {"ws_ptr": ws, "ws_bytes": ws.nbytes, "d_ptr": d, "d_bytes": d.nbytes, "M": M, "K": K, "ks_count": 6}
    with pytest.raises(Poison, match="getelementptr inbounds: .* outside global 'ws_ptr'"):
        k.launch((1, 1, 1), 256, dict(args))
    text = E.lower("conv_fwd_split_k_reduce", rs, "gfx1250", "llvm23").text
    k = Kernel(text.replace("getelementptr inbounds", "getelementptr"), arch="gfx1250")
    with pytest.raises(OutOfBounds, match="ws_ptr"):
        k.launch((1, 1, 1), 256, args)


@pytest.mark.parametrize("flavor", ["llvm20", "llvm22", "llvm23"])
def test_c80_scaled_copy_keeps_the_slice_count_and_passes(flavor):
    [layer] = parse_catalog(open(C80).read(), C80)
    lp = plan_layer(E, layer, "gfx1250", flavor, select="seed")  # the seed's two-stage plan (issue 13)
    red = [k for k in lp.kernels if k[0] == "reduce"]
    assert lp.binary == "two_stage" and red and red[0][2]["degree"] == lp.plan["ks_count"] == 8
    q, spec, note = scaled_problem(lp, E)
    assert note == ""
    assert (q.N, q.C, q.K, q.groups, q.Kgemm) == (1, 80, 32, 1, 720)
    ok, det = run_numerics(lp, E, {})
    assert ok, det
    assert det.startswith("real N1 14x14x80 K80 g1 Kgemm 720 ks_count 8; scaled N1 3x3x80 K32 g1 Kgemm 720 "
                          "ks_count 8")


def test_scaled_copy_keeps_odd_groups_and_tap_straddling():
    assert straddles(80, 32, 3, 3) and not straddles(64, 32, 3, 3) and not straddles(80, 32, 1, 1)
    layer = parse_line("g3: MIOpenDriver convbfp16 -n 1 -c 240 -H 14 -W 14 -k 240 -y 3 -x 3 -p 1 -q 1 -g 3")
    lp = plan_layer(E, layer, "gfx1250", "llvm23", lower=False)
    q, spec, note = scaled_problem(lp, E)
    assert q.groups == 3 and note == ""
    real_cpg = lp.folded["C"] // lp.folded["groups"]
    assert straddles(q.cpg, lp.conv_spec["tile_k"], q.Y, q.X) == straddles(real_cpg, lp.conv_spec["tile_k"], 3, 3)


def test_plan_json_says_why_the_slice_count_differs():
    [cl] = [x for x in parse_catalog(open(os.path.join(os.path.dirname(HERE), "parity", "data",
                                                       "layers.txt")).read()) if x.name == "resnet50_b1_conv5_1_3x3"]
    lp = plan_layer(E, cl, "gfx1250", "llvm23", lower=False, select="seed")
    assert lp.to_json()["launch"]["slices_reason"] == (
        "the cluster binary launches its S = 15 slices, not the policy degree 32 (cluster sizes 4, 8, 12, 15: "
        "at most 15)")
    [c80] = parse_catalog(open(C80).read(), C80)
    assert plan_layer(E, c80, "gfx1250", "llvm23", lower=False, select="seed").to_json()["launch"][
        "slices_reason"] is None
    # the perf model's candidates launch exactly their degree: no disagreement to explain
    model = plan_layer(E, cl, "gfx1250", "llvm23", lower=False, select="rules").to_json()
    assert model["binary"] == "cluster" and model["launch"]["ks_count"] == model["policy"]["degree"] == 15
    assert model["launch"]["slices_reason"] is None
    fake = SimpleNamespace(binary="two_stage", policy={"degree": "32", "gemm": "M=9 kpg=64 groups=1 Kgemm=1100"},
                           plan={"ks_count": 18, "ks": 64})
    assert slices_reason(fake) == ("ks = 64 (a multiple of tile_k covering Kgemm 1100 / degree 32) leaves "
                                   "ceil(1100 / 64) = 18 slices with data; the two-stage binary launches only those")
    fake = SimpleNamespace(binary="cluster", policy={"degree": "12", "gemm": "M=9 kpg=64 groups=1 Kgemm=704"},
                           plan={"ks_count": 12, "ks": 64, "data_slices": 11})
    assert slices_reason(fake) == ("1 trailing slices start at or past Kgemm 704 (k_begin >= Kgemm) and are "
                                   "empty: they write zero slabs")


CONV = {f.name: f.default for f in __import__("python_engine.kernels.conv_implicit_gemm",
                                              fromlist=["FIELDS"]).FIELDS}


def _prob(C=512, H=7, K=512, Y=3, pad=1, N=1):
    return ConvProblem(N=N, C=C, H=H, W=H, K=K, Y=Y, X=Y, stride_h=1, stride_w=1, pad_h=pad, pad_w=pad,
                       dil_h=1, dil_w=1, groups=1)


@pytest.mark.parametrize("prob,rule", [
    (_prob(Y=1, pad=0), "pointwise"),
    (_prob(N=64, H=56, C=64, K=256), "grid"),
    (_prob(C=16, K=64), "reduction"),
])
def test_allow_unsplit_false_raises_with_the_rule(prob, rule):
    auto = dict(CONV, split_k=-1, split_k_cluster=0)
    d = resolve_conv_split_k("fwd", auto, prob, "gfx1250")
    assert d.degree == 1 and d.rule == rule
    with pytest.raises(SpecRejected) as e:
        resolve_conv_split_k("fwd", auto, prob, "gfx1250", allow_unsplit=False)
    assert e.value.reason == f"the split-K policy does not split ({rule}): {d.detail}"
    assert resolve_conv_split_k("fwd", auto, _prob(), "gfx1250", allow_unsplit=False).degree > 1


@pytest.mark.parametrize("eng", [E, cpp_engine], ids=["python", "cpp"])
@pytest.mark.parametrize("flavor", ["llvm20", "llvm22"])
def test_cluster_request_without_clusters_is_rejected_never_plain(eng, flavor):
    spec = dict(CONV, split_k=-1, split_k_cluster=4, epilogue="cshuffle", N=1, C=256, H=14, W=14, K=512,
                Y=1, X=1, pad_h=0, pad_w=0)
    t = eng.lower("split_k_policy", spec, "gfx1250", flavor).text
    assert "binary none\n" in t and "admission split_k_cluster requires flavor llvm23\n" in t
    assert "rule rejected: the cluster request is rejected: split_k_cluster requires flavor llvm23" in t
    lspec = {k: v for k, v in spec.items()}
    lspec["degree"] = 1
    assert eng.validate("conv_launch", lspec, "gfx1250", flavor) == "split_k_cluster requires flavor llvm23"
    with pytest.raises(SpecRejected, match="requires flavor llvm23"):
        resolve_conv_split_k("fwd", {k: spec[k] for k in CONV}, _prob(Y=1, pad=0), "gfx1250", flavor=flavor)


@pytest.mark.parametrize("line", [
    "MIOpenDriver convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 --spatial_dim 3 -! 8 -@ 3 -$ 1 -# 1 -^ 1",
    "MIOpenDriver convbfp16 -n 1 -c 64 -! 8 -H 8 -W 8 -k 64 -y 3 -x 3 --spatial_dim 3 --fil_d 3",
])
def test_3d_problem_is_refused_as_3d(line):
    with pytest.raises(ProblemInputError, match=r"^a 3-D convolution \(--spatial_dim 3; depth flags -! 8"):
        parse_line(line)
    with pytest.raises(ProblemInputError, match=r"flag -! \(--in_d\) is a 3-D flag"):
        parse_line("MIOpenDriver convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 --in_d 4")

"""Split-K policy, resolver, KernelIdentity, AOT grid, binary selection and
width folding (docs/policy.md), in both engines."""
from __future__ import annotations

import dataclasses
import shutil
import subprocess

import numpy as np
import pytest

from parity.sim import reference as ref
from python_engine.kernels import conv_implicit_gemm as CIG
from python_engine.kernels.conv_problem import ConvProblem
from python_engine.spec.fields import SpecRejected
from python_engine.policy import aot
from python_engine.policy.fold import fold_factor, fold_width
from python_engine.policy.identity import ALWAYS, OMIT_AT_DEFAULT, KernelIdentity, identity_fields
from python_engine.policy.split_k import resolve_conv_split_k, select_split_k_fwd
from python_engine.targets.arch import LLVM_PROCESSORS, find_arch

CONV = {f.name: f.default for f in CIG.FIELDS}
SMALL = dict(N=1, C=512, H=7, W=7, K=512, Y=3, X=3, pad_h=1, pad_w=1)


def _policy(engine, arch="gfx1250", flavor="llvm23", **spec):
    text = engine.lower("split_k_policy", spec, arch, flavor).text
    return dict(line.split(" ", 1) for line in text.splitlines())


# -- the degree policy -----------------------------------------------------------------------

@pytest.mark.parametrize("args,degree,rule", [
    ((49, 512, 1, 4608, 64, 64, 32, 256), 32, "cap"),            # 8 tiles, long reduction
    ((3136, 64, 1, 576, 64, 64, 32, 256), 8, "slice"),           # 18 K tiles -> 8 slices of >= 2
    ((100352, 64, 1, 576, 64, 64, 32, 256), 1, "grid"),         # batch 32: 1568 >= 1024
    ((49, 64, 1, 144, 64, 64, 32, 256), 1, "reduction"),        # Kgemm < 512
    ((25088, 128, 1, 1152, 64, 64, 32, 256), 2, "target"),      # 784 x 4 > 2048
    ((16, 1, 32768, 576, 64, 64, 32, 65536), 1, "grid_z"),      # 32768 x 2 > 65535
    ((131072, 256, 1, 2304, 128, 128, 32, 65536), 8, "workspace"),
    ((49, 512, 1, 4608, 64, 64, 32, 1), 1, "grid"),             # one CU: target 8
])
def test_select_split_k_fwd_rules(args, degree, rule):
    d = select_split_k_fwd(*args)
    assert (d.degree, d.rule) == (degree, rule)
    assert d.text() == f"degree {d.degree}\nrule {d.rule}: {d.detail}\n"


def test_degree_is_a_power_of_two_within_the_limits():
    for M in (1, 49, 196, 784, 3136):
        for kg in (512, 576, 1152, 4608):
            for cus in (1, 8, 64, 256, 304):
                d = select_split_k_fwd(M, 512, 1, kg, 64, 64, 32, cus)
                p = d.degree
                assert p & (p - 1) == 0 and 1 <= p <= 32
                if p > 1:
                    unsplit = -(-M // 64) * 8
                    assert unsplit * p <= 8 * cus and -(-kg // 32) >= 2 * p


def test_resolver_cases():
    gfx = find_arch("gfx1250")
    small = ConvProblem(**SMALL)
    auto = dict(CONV, split_k=-1, split_k_cluster=0)
    assert resolve_conv_split_k("fwd", auto, small, gfx).degree == 32
    assert resolve_conv_split_k("fwd", dict(CONV, split_k=4, split_k_cluster=0), small, gfx).rule == "given"
    d = resolve_conv_split_k("fwd", auto, small, "gfx950")
    assert (d.degree, d.rule) == (1, "arch")
    pw = ConvProblem(N=1, C=1024, H=14, W=14, K=256, Y=1, X=1)
    assert resolve_conv_split_k("fwd", auto, pw, gfx).rule == "pointwise"
    for acc in ("bias", "scale", "relu", "clamp"):
        d = resolve_conv_split_k("fwd", dict(auto, acc_epilogue=acc), small, gfx)
        assert (d.degree, d.rule) == (1, "rejected")
        with pytest.raises(SpecRejected) as e:
            resolve_conv_split_k("fwd", dict(auto, acc_epilogue=acc), small, gfx, raise_on_reject=True)
        assert "identity accumulator epilogue" in e.value.reason
    with pytest.raises(SpecRejected):
        resolve_conv_split_k("fwd", auto, small, "gfx950", raise_on_reject=True)
    with pytest.raises(SpecRejected):
        resolve_conv_split_k("bwd_data", auto, small, gfx)
    assert resolve_conv_split_k("fwd", auto, small, gfx, cus=1).degree == 1


def _llc_processors():
    llc = shutil.which("llc-22")
    if llc is None:
        pytest.skip("llc-22 (LLVM 22.1) is not installed")
    r = subprocess.run([llc, "-mtriple=amdgcn", "-mcpu=help"], capture_output=True, text=True)
    out = r.stdout + r.stderr  # llc prints the help on one or the other, by version
    cpus = out.split("Available CPUs for this target:", 1)[1].split("Available features", 1)[0]
    return tuple(line.split()[0] for line in cpus.splitlines() if "Select the" in line)


def test_llvm_processor_list_is_llvms():
    """The processor list (both engines) is LLVM 22.1's (GCNProcessors.td, as llc-22 prints it)."""
    assert LLVM_PROCESSORS == _llc_processors()
    assert len(LLVM_PROCESSORS) == 73 and {"gfx1151", "gfx90a", "gfx1030", "gfx1251", "tahiti"} <= \
        set(LLVM_PROCESSORS)


def test_every_llvm_processor_resolves_to_one(both):
    """Every target that is not gfx1250 but is an LLVM AMDGPU processor resolves to degree 1,
    rule arch, without raising, in both engines (issue 37, item 4); conv_launch resolves -1
    to 1 and then rejects the plain binary the arch cannot run."""
    py, cpp = both
    auto = dict(CONV, split_k=-1, split_k_cluster=0)
    small = ConvProblem(**SMALL)
    for name in LLVM_PROCESSORS:
        if name == "gfx1250":
            continue
        d = resolve_conv_split_k("fwd", auto, small, name)
        assert (d.degree, d.rule, d.detail) == (1, "arch", f"arch {name} has no split-K form (requires gfx1250)")
        a, b = py.lower("split_k_policy", SMALL, name, "llvm23"), cpp.lower("split_k_policy", SMALL, name, "llvm23")
        assert (a.kernel, a.text) == (b.kernel, b.text) and a.kernel == "split_k_policy_d1_none"
        t = dict(line.split(" ", 1) for line in a.text.splitlines())
        assert t["degree"] == "1" and t["rule"] == f"arch: arch {name} has no split-K form (requires gfx1250)"
        want = (f"arch {name} is an LLVM AMDGPU processor outside the arch table (conv_implicit_gemm requires "
                f"gfx1250)") if find_arch(name) is None else f"arch {name} has no 16x16x32 WMMA " \
            "(conv_implicit_gemm requires gfx1250)"
        assert t["admission"] == want
        for sk in (-1, 4):
            assert py.validate("conv_launch", dict(SMALL, split_k=sk, split_k_cluster=0), name, "llvm23") == \
                cpp.validate("conv_launch", dict(SMALL, split_k=sk, split_k_cluster=0), name, "llvm23") == want
    # the kernel families still need a row of the arch table
    for e in both:
        assert e.validate("conv_implicit_gemm", {}, "gfx1151", "llvm23") == \
            "arch 'gfx1151' is not one of gfx1250, gfx942, gfx950, gfx1100, gfx1201"


@pytest.mark.parametrize("name", ["gfx9000", "GFX1151", "gfx1151 ", "gfx", "sm_90", ""])
def test_an_unknown_target_still_raises(both, name):
    reason = f"arch '{name}' is not one of gfx1250, gfx942, gfx950, gfx1100, gfx1201"
    with pytest.raises(SpecRejected) as e:
        resolve_conv_split_k("fwd", dict(CONV, split_k=-1, split_k_cluster=0), ConvProblem(**SMALL), name)
    assert e.value.reason == reason
    for eng in both:
        for fam in ("split_k_policy", "perf_model", "conv_launch"):
            assert eng.validate(fam, dict(SMALL), name, "llvm23") == reason


def test_engines_decide_alike_with_runtime_cus(both):
    py, cpp = both
    for cus in (0, 1, 7, 64, 304, 65536):
        for prob in (SMALL, dict(SMALL, N=32), dict(SMALL, H=28, W=28, C=128, K=128)):
            spec = dict(prob, cus=cus)
            a, b = py.lower("split_k_policy", spec, "gfx1250", "llvm23"), cpp.lower("split_k_policy", spec,
                                                                                      "gfx1250", "llvm23")
            assert (a.kernel, a.text) == (b.kernel, b.text)


def test_fused_epilogue_builds_the_plain_kernel(engine):
    d = _policy(engine, acc_epilogue="bias", **SMALL)
    assert d["binary"] == "plain" and d["degree"] == "1" and d["rule"].startswith("rejected:")
    assert d["kernel"].endswith("_bias")


def test_builder_resolves_auto(engine):
    """conv_launch (a builder with a problem) resolves split_k = -1 before validation."""
    spec = dict(SMALL, split_k=-1, split_k_cluster=0)
    assert engine.validate("conv_launch", spec, "gfx1250", "llvm23") is None
    plan = engine.lower("conv_launch", spec, "gfx1250", "llvm23").text
    assert "variant two_stage\ndegree 32\n" in plan
    plain = engine.lower("conv_launch", dict(spec, acc_epilogue="relu"), "gfx1250", "llvm23").text
    assert "variant plain\ndegree 1\n" in plain
    # without a problem there is nothing to resolve against: the kernel family keeps its rule
    assert engine.validate("conv_implicit_gemm", {"split_k": -1, "split_k_cluster": 0}, "gfx1250", "llvm23") == \
        "split_k = -1 (auto) must be resolved before lowering"


# -- KernelIdentity --------------------------------------------------------------------------

def _sample(name, default):
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 16
    return default + "x" if default else "p"


def test_identity_walks_every_field():
    base = KernelIdentity("conv_implicit_gemm", "gfx1250", "llvm23", "bf16")
    seen = set()
    for f in dataclasses.fields(KernelIdentity):
        rule = f.metadata.get("ident")
        assert rule in (ALWAYS, OMIT_AT_DEFAULT), f"field {f.name} declares no hashing rule"
        seen.add(f.name)
        if rule == ALWAYS:
            assert f.default is dataclasses.MISSING
            assert f"{f.name}=" in base.hashed_text()
            continue
        assert f.default is not dataclasses.MISSING, f"{f.name}: omit_at_default needs a default"
        assert f"\n{f.name}=" not in "\n" + base.hashed_text()
        changed = dataclasses.replace(base, **{f.name: _sample(f.name, f.default)})
        assert f"{f.name}=" in changed.hashed_text()
        assert changed.hash() != base.hash()
    assert seen == {n for n, _, _ in identity_fields()}


def test_a_field_added_later_keeps_old_hashes():
    @dataclasses.dataclass(frozen=True)
    class Later(KernelIdentity):
        new_knob: int = dataclasses.field(default=0, metadata={"ident": OMIT_AT_DEFAULT})
    a = KernelIdentity.of_conv(dict(CONV, split_k=2, split_k_cluster=0), "gfx1250", "llvm23")
    b = Later(**{f.name: getattr(a, f.name) for f in dataclasses.fields(a)})
    assert a.hash() == b.hash() and a.hashed_text() == b.hashed_text()
    assert dataclasses.replace(b, new_knob=1).hash() != a.hash()


def test_identity_stage2_predicate_and_labels():
    two = KernelIdentity.of_conv(dict(CONV, split_k=8, split_k_cluster=0), "gfx1250", "llvm23")
    clu = KernelIdentity.of_conv(dict(CONV, split_k=2, split_k_cluster=12), "gfx1250", "llvm23")
    plain = KernelIdentity.of_conv(CONV, "gfx1250", "llvm23")
    assert two.two_stage and two.needs_stage2
    assert clu.two_stage and not clu.needs_stage2
    assert not plain.two_stage and not plain.needs_stage2
    assert "_skc12." in clu.label() and clu.label().endswith(".gfx1250.llvm23")
    assert two.label().endswith("_spk.gfx1250.llvm23")
    # one binary for every degree; num_load_waves does not name a mem binary
    assert two.hash() == KernelIdentity.of_conv(dict(CONV, split_k=32, split_k_cluster=0), "gfx1250", "llvm23").hash()
    assert plain.hash() == KernelIdentity.of_conv(dict(CONV, num_load_waves=4), "gfx1250", "llvm23").hash()
    assert plain.spec() == CONV


# -- AOT grid -----------------------------------------------------------------------------------

# per dtype: 910 two-stage + 7 x 18 reduce (+ 7 x 20 cluster at llvm23), 7 accumulator epilogues,
# + 114 plain per dtype and epilogue (issue 37); docs/policy.md gives the enumeration
@pytest.mark.parametrize("flavor,count", [("llvm20", 3668), ("llvm22", 3668), ("llvm23", 3948), ("llvm24", 3948)])
def test_aot_count_matches_enumeration(both, flavor, count):
    py, cpp = both
    assert aot.count_jobs(flavor) == len(aot.jobs(flavor)) == count
    n_py, text_py = py.aot_jobs_text(flavor)
    n_cpp, text_cpp = cpp.aot_jobs_text(flavor)
    assert (n_py, text_py) == (n_cpp, text_cpp)
    assert len(text_cpp.splitlines()) == n_cpp == count
    hashes = [line.split("\t")[1] for line in text_cpp.splitlines()]
    assert len(set(hashes)) == len(hashes)


def test_aot_grid_axes():
    """The grid's breadth: per dtype 910 two-stage jobs (the reference's count) over 16 tiles, 2 tile_k,
    72 wave layouts, mem + wavelet1/2, vectors 8/4/2/1, both epilogues, under the 16-loads-per-lane
    budget; 18 reduce kernels (3 vectors x 6 degrees)."""
    assert aot.count_two_stage() == 910
    two = [j.spec for j in aot.jobs("llvm22") if j.family == CIG.FAMILY and j.spec["dtype"] == "bf16"
           and j.spec["split_k"] == 2]
    assert len(two) == 910
    assert {(s["tile_m"], s["tile_n"]) for s in two} == {(a, b) for a in (16, 32, 64, 128) for b in (16, 32, 64, 128)}
    assert sum(len(aot.wave_layouts(a, b)) for a in aot.TILE_SIDES for b in aot.TILE_SIDES) == 72
    assert aot.wave_layouts(128, 128) == [(1, 4), (2, 2), (2, 4), (4, 1), (4, 2)]
    assert aot.wave_layouts(16, 16) == [(1, 1)]
    assert {s["tile_k"] for s in two} == {32, 64}
    assert {(s["pipeline"], s["num_load_waves"]) for s in two} == {("mem", 1), ("wavelet", 1), ("wavelet", 2)}
    assert {s["vector_a"] for s in two} == {8, 4, 2, 1} and all(s["vector_a"] == s["vector_b"] for s in two)
    assert {s["epilogue"] for s in two} == {"default", "cshuffle"}
    by_vec = {v: sum(s["vector_a"] == v for s in two) for v in (8, 4, 2, 1)}
    assert by_vec == {8: 544, 4: 268, 2: 86, 1: 12}
    # vector 1 fits the budget on six layouts only (16x16 wavelet2, 32x32 w2x2, 32x64 w2x4, 64x32 w4x2,
    # 64x64 w2x4 and w4x2; tile_k 32), x 2 epilogues: 898 + 12 = 910
    assert sorted({(s["tile_m"], s["tile_n"], s["waves_m"], s["waves_n"], s["tile_k"], s["pipeline"],
                    s["num_load_waves"]) for s in two if s["vector_a"] == 1}) == \
        [(16, 16, 1, 1, 32, "wavelet", 2), (32, 32, 2, 2, 32, "mem", 1), (32, 64, 2, 4, 32, "mem", 1),
         (64, 32, 4, 2, 32, "mem", 1), (64, 64, 2, 4, 32, "mem", 1), (64, 64, 4, 2, 32, "mem", 1)]
    # the budget: 128x128x64 on one wavelet load wave would issue 64 loads per lane (it spills)
    assert aot.loads_per_lane(128, 128, 64, 2, 2, "wavelet", 1, 8) == 64
    assert all(aot.loads_per_lane(s["tile_m"], s["tile_n"], s["tile_k"], s["waves_m"], s["waves_n"],
                                  s["pipeline"], s["num_load_waves"], s["vector_a"]) <= 16 for s in two)
    red = [j.spec for j in aot.jobs("llvm20") if j.family != CIG.FAMILY]
    assert len(red) == 7 * 36 and {(r["vector"], r["degree"]) for r in red} == \
        {(v, d) for v in (8, 4, 2) for d in (0, 2, 4, 8, 16, 32)}
    # per epilogue (issue 36): identity's 36 first (no acc_epilogue key), then bias, scale, relu, clamp, bias_relu, bias_clamp
    assert [r.get("acc_epilogue", "identity") for r in red[::36]] == ["identity", "bias", "scale", "relu", "clamp",
                                                                          "bias_relu", "bias_clamp"]
    fused_cl = [j.spec for j in aot.jobs("llvm23") if j.spec.get("split_k_cluster") and
                j.spec["acc_epilogue"] != "identity"]
    assert len(fused_cl) == 6 * 2 * 20  # six fused epilogues x 2 dtypes x 20 cluster jobs
    # the old 20-per-dtype grid is inside the new one
    for tm, tn in ((16, 16), (16, 32), (32, 32), (64, 32), (64, 64)):
        for tk in (32, 64):
            for epi in ("default", "cshuffle"):
                h = KernelIdentity.of_conv(aot.conv_spec("fp16", tm, tn, tk, epi), "gfx1250", "llvm22").hash()
                assert h in aot.job_hashes("llvm22")


@pytest.mark.parametrize("change,reason", [
    (dict(tile_m=48, tile_n=48, waves_m=1, waves_n=1), "tile 48x48 is not in the grid (tile_m, tile_n in 16, 32, 64, 128)"),
    (dict(tile_k=96), "tile_k 96 is not in the grid (32, 64)"),
    (dict(tile_m=128, tile_n=128, waves_m=1, waves_n=1),
     "waves 1x1 on the 128x128 tile are not in the grid (layouts 1x4, 2x2, 2x4, 4x1, 4x2)"),
    (dict(pipeline="wavelet", num_load_waves=4), "pipeline wavelet4 is not in the grid (mem, wavelet1, wavelet2)"),
    (dict(vector_a=3, vector_b=3), "vectors 3/3 are not in the grid (vector_a = vector_b in 8, 4, 2, 1)"),
    (dict(vector_a=8, vector_b=4), "vectors 8/4 are not in the grid (vector_a = vector_b in 8, 4, 2, 1)"),
    (dict(vector_a=1, vector_b=1), "32 global loads per load lane per K tile exceed the grid's budget of 16"),
    (dict(tile_m=128, tile_n=128, tile_k=64, pipeline="wavelet", num_load_waves=1),
     "64 global loads per load lane per K tile exceed the grid's budget of 16"),
    (dict(split_k=1, split_k_cluster=0, tile_k=64), "plain jobs of tile 64x64 have tile_k 32, not 64"),
    (dict(split_k=1, split_k_cluster=0, epilogue="cshuffle"), "plain jobs of tile 64x64 have epilogue default, not cshuffle"),
    (dict(split_k=1, split_k_cluster=0, waves_m=1, waves_n=1), "plain jobs of tile 64x64 have waves_m 2, not 1"),
    (dict(split_k=1, split_k_cluster=0, tile_m=48, tile_n=48, waves_m=1, waves_n=1),
     "plain tile 48x48 is not in the grid (tile_m, tile_n in 16, 32, 64, 128)"),
    (dict(name_prefix="my"), "name_prefix 'my' is not in the grid (AOT jobs have none)"),
    (dict(split_k_cluster=4, tile_m=32, tile_n=64), "tile 32x64 has no cluster job (cluster tiles 16x32, 32x32, "
                                                    "64x32, 64x64, 128x128)"),
    (dict(split_k_cluster=4, tile_k=32), "cluster jobs have tile_k 64, not 32"),
    (dict(split_k_cluster=5, tile_k=64), "split_k_cluster 5 is not in the grid (4, 8, 12, 15)"),
    (dict(), None),
])
def test_aot_miss_reason(engine, change, reason):
    """Selection says which grid axis a binary leaves, in both engines (given degree 4)."""
    spec = {**CONV, "split_k": 4, "split_k_cluster": 0, **change}
    d = _policy(engine, **spec, **SMALL)
    if reason is None:
        assert d["aot"].startswith("yes: ") and d["identity"].split()[0] in d["aot"]
        assert aot.conv_miss_reason(dict(CONV, split_k=4, split_k_cluster=0), "llvm23") is None
    else:
        assert d["aot"] == f"no: {reason}"
        assert aot.conv_miss_reason(spec, "llvm23") == reason


def test_aot_miss_reason_reduce_and_arch(engine):
    assert aot.reduce_miss_reason(aot.reduce_spec("bf16", 3, 8)) == "reduce degree 3 is not in the grid (0, 2, 4, 8, 16, 32)"
    assert aot.reduce_miss_reason(aot.reduce_spec("bf16", 0, 1)) == "reduce vector 1 is not in the grid (8, 4, 2)"
    assert aot.reduce_miss_reason(dict(aot.reduce_spec("bf16", 0), threads=128)) == \
        "reduce threads 128 is not in the grid (256)"
    d = _policy(engine, arch="gfx942", **SMALL)
    assert d["aot"] == "no: arch gfx942 has no AOT grid (gfx1250 only)"
    d = _policy(engine, arch="gfx950", **dict(SMALL, split_k=4, split_k_cluster=0))
    assert d["aot"] == "no: arch gfx950 has no AOT grid (gfx1250 only)"


@pytest.mark.parametrize("K,vec", [(512, 8), (12, 4), (6, 2), (7, 1)])
def test_selection_reduce_vector_follows_K(engine, K, vec):
    """The reduce kernel's vector is the largest of 8, 4, 2 dividing K (slab starts s*M*K aligned)."""
    assert aot.reduce_vector(K) == vec
    d = _policy(engine, flavor="llvm22", **dict(SMALL, K=K))
    assert d["binary"] == "two_stage" and f"_v{vec}_" in d["reduce"]
    assert d["aot"].startswith("yes: ") if vec > 1 else d["aot"] == "no: reduce vector 1 is not in the grid (8, 4, 2)"


def test_aot_jobs_all_validate(engine):
    for fl in ("llvm20", "llvm22", "llvm23"):
        for j in aot.jobs(fl):
            assert engine.validate(j.family, j.spec, j.identity.arch, fl) is None, (fl, j.identity.label())
    clusters = [j for j in aot.jobs("llvm23") if j.spec.get("split_k_cluster")]
    assert {j.spec["split_k_cluster"] for j in clusters} == {4, 8, 12, 15}
    assert all(j.identity.label().split(".")[0].endswith(f"_skc{j.spec['split_k_cluster']}") for j in clusters)


def test_aot_job_identity_names_the_lowered_kernel(engine):
    for j in aot.jobs("llvm23")[::7]:
        assert engine.kernel_name(j.family, j.spec, j.identity.arch, "llvm23") == j.identity.kernel_name()


def test_aot_grid_arches_come_from_the_arch_table(engine, monkeypatch):
    """The grid's arches are the resolver's: the arch table's rows with the 16x16x32 WMMA
    (issue 37, item 4), in both engines; each arch's jobs follow the previous arch's."""
    table = [a for a in engine.arch_table()]
    assert aot.ARCHES == tuple(a["name"] for a in table if any(w[:3] == [16, 16, 32] for w in a["wmma"])) == \
        ("gfx1250",)
    for fl in ("llvm20", "llvm23"):
        n, text = engine.aot_jobs_text(fl)
        labels = [line.split("\t")[2] for line in text.splitlines()]
        assert len(labels) == n and {lb.split(".")[1] for lb in labels} == set(aot.ARCHES)
    one = aot.jobs("llvm22")
    monkeypatch.setattr(aot, "ARCHES", ("gfx1250", "gfx1250b"))
    two = aot.jobs("llvm22")
    assert len(two) == 2 * len(one) == aot.count_jobs("llvm22") and two[:len(one)] == one
    assert {j.identity.arch for j in two[len(one):]} == {"gfx1250b"}


# -- binary selection ---------------------------------------------------------------------------

def test_selection_kinds(engine):
    d = _policy(engine, **SMALL)
    assert d["binary"] == "cluster" and d["aot"] == "yes: " + d["identity"].split()[0] and "_skc15" in d["kernel"]
    d = _policy(engine, flavor="llvm22", **SMALL)
    # ks = 160, ks_count 29 (not an unrolled degree): the run-time loop
    assert d["binary"] == "two_stage" and d["reduce"].endswith("_d0")
    assert d["aot"] == f"yes: {d['identity'].split()[0]} {d['reduce_identity'].split()[0]}"
    assert d["cluster"].startswith("not offered: flavor llvm22")
    d = _policy(engine, **dict(SMALL, N=32))        # 200 output tiles, still < 256
    assert d["binary"] == "cluster"
    d = _policy(engine, **dict(SMALL, H=28, W=28, C=128, K=128))   # Kgemm 1152 < 1500
    assert d["binary"] == "two_stage" and "Kgemm 1152" in d["cluster"]
    d = _policy(engine, **dict(SMALL, K=6))          # K % 4
    assert d["binary"] == "two_stage" and "K 6 is not a multiple of 4" in d["cluster"]
    d = _policy(engine, **dict(SMALL, Y=1, X=1, pad_h=0, pad_w=0))
    assert d["binary"] == "plain" and d["reduce"] == "none"


def test_selection_cluster_size_with_empty_slices(engine):
    """A cluster launches ks_count = S with trailing empty slices allowed; the
    offered S is the one with the shortest slice ks, then the smallest S."""
    # Kgemm 3136, 2 tiles: S 15 gives ks 256 (13 slices with data), S 4 ks 832 (formerly the only S admitted)
    d = _policy(engine, N=1, C=64, H=5, W=5, K=64, Y=7, X=7, pad_h=6, pad_w=6)
    assert d["binary"] == "cluster" and d["launch_degree"] == "15" and d["admission"] == "ok"
    assert d["cluster"].endswith("ks 256 (13 of 15 slices carry data)")
    # Kgemm 2304: S 12 and S 15 both give ks 192 -> the smaller S
    d = _policy(engine, N=1, C=256, H=14, W=14, K=256, Y=3, X=3, pad_h=1, pad_w=1)
    assert d["launch_degree"] == "12" and "ks 192 (12 of 12 slices carry data)" in d["cluster"]


def test_selection_reduce_degree_follows_ks_count(engine):
    # Kgemm 576, tile_k 32, degree 8: ks 96 -> ks_count 6 (not an unrolled degree): the loop
    d = _policy(engine, flavor="llvm22", N=1, C=64, H=56, W=56, K=64, Y=3, X=3, pad_h=1, pad_w=1)
    assert d["degree"] == "8" and d["reduce"].endswith("_d0")


# -- width folding ------------------------------------------------------------------------------

def test_fold_patch_embedding():
    p = ConvProblem(N=1, C=3, H=224, W=224, K=768, Y=16, X=16, stride_h=16, stride_w=16)
    f, q = fold_width(p)
    assert f == 16 and (q.C, q.W, q.X, q.stride_w, q.pad_w) == (48, 14, 1, 1, 0)
    assert (q.Ho, q.Wo, q.M) == (p.Ho, p.Wo, p.M)
    assert fold_factor(ConvProblem(N=1, C=8, H=8, W=8, K=8, Y=2, X=2, stride_w=2, groups=2)) == 1
    assert fold_factor(ConvProblem(N=1, C=8, H=8, W=8, K=8, Y=2, X=2, stride_w=2, dil_w=2)) == 1
    assert fold_factor(ConvProblem(N=1, C=8, H=8, W=8, K=8, Y=3, X=3, pad_w=1)) == 1


@pytest.mark.parametrize("shape", [
    (2, 3, 8, 16, 5, 4, 4, 4, 0),      # N C H W K Y X stride_w pad_w : patch 4x4 stride 4
    (1, 2, 5, 12, 3, 3, 6, 2, 2),      # f = 2 with padding 2
    (1, 4, 6, 9, 2, 1, 3, 3, 3),       # f = 3, X = stride = pad = 3
])
def test_folded_problem_computes_the_same_output_from_the_same_bytes(shape):
    N, C, H, W, K, Y, X, sw, pw = shape
    p = ConvProblem(N=N, C=C, H=H, W=W, K=K, Y=Y, X=X, stride_w=sw, pad_w=pw)
    f, q = fold_width(p)
    assert f > 1
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, H, W, C))
    w = rng.standard_normal((K, Y, X, C))
    want = ref.conv_fwd(x, w, stride=(1, sw), padding=(0, pw))
    # no copy: the same memory read as the folded shapes
    xf = x.reshape(N, H, q.W, q.C)
    wf = w.reshape(K, Y, q.X, q.C)
    assert np.shares_memory(xf, x) and np.shares_memory(wf, w)
    got = ref.conv_fwd(xf, wf, stride=(1, q.stride_w), padding=(0, q.pad_w))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_fold_in_both_engines(engine):
    d = _policy(engine, N=1, C=3, H=224, W=224, K=768, Y=16, X=16, stride_h=16, stride_w=16, pad_h=0, pad_w=0)
    assert d["fold"] == "16" and "C=48" in d["folded"] and "W=14" in d["folded"]


# -- AOT membership: the C++ engine asks the grid's axes (aot::is_job), not a hash set --------

def _job_specs(engine, flavor):
    """(hash, conv_implicit_gemm spec) of every conv job of ``flavor``'s grid (aot_jobs_text)."""
    out = []
    for line in engine.aot_jobs_text(flavor)[1].splitlines():
        family, h, _label, text = line.split("\t")
        if family == CIG.FAMILY:
            pairs = (kv.split("=", 1) for kv in text.split(";"))
            out.append((h, {k: int(v) if v.lstrip("-").isdigit() else v for k, v in pairs if v != ""}))
    return out


@pytest.mark.parametrize("flavor", ["llvm20", "llvm23"])
def test_every_aot_job_is_selected_as_one(both, flavor):
    """Every conv job of the grid, given as the spec, is an AOT job with its own hash
    (and the reduce job's) in the C++ engine: two-stage, cluster and plain jobs alike."""
    _, cpp = both
    jobs = _job_specs(cpp, flavor)
    # 40 cluster jobs per epilogue, 228 plain jobs per epilogue (issue 37)
    assert len(jobs) == {"llvm20": 1820 + 7 * 228, "llvm23": 1820 + 7 * 40 + 7 * 228}[flavor]
    for h, spec in jobs:
        d = _policy(cpp, flavor=flavor, **spec, **SMALL)
        assert d["aot"].split()[:2] == ["yes:", h], (spec, d["aot"])
        # a reduce job for two-stage only
        assert len(d["aot"].split()) == (2 if spec["split_k_cluster"] or spec["split_k"] == 1 else 3)


_AXES = {"dtype": ["bf16", "fp16"], "tile_m": [16, 32, 48, 64, 128], "tile_n": [16, 32, 64, 128], "tile_k": [32, 64, 96],
         "waves_m": [1, 2, 4], "waves_n": [1, 2, 4], "pipeline": ["mem", "wavelet"], "num_load_waves": [1, 2, 3],
         "epilogue": ["default", "cshuffle"], "vector_a": [1, 2, 4, 8], "vector_b": [1, 2, 4, 8],
         "split_k": [1, 2, 4], "split_k_cluster": [0, 4, 5, 8, 12], "acc_epilogue": ["identity", "bias"],
         "name_prefix": ["", "p"]}


@pytest.mark.parametrize("flavor", ["llvm22", "llvm23"])
def test_aot_membership_near_the_grid_matches_python(both, flavor):
    """Grid jobs and copies with one axis moved (in or out of the grid): the C++
    engine's ``aot`` line (aot::is_job) is the Python engine's (a set of job hashes)."""
    py, cpp = both
    rng = np.random.default_rng(25)
    jobs = _job_specs(cpp, flavor)
    seen = set()
    for i in rng.choice(len(jobs), 40, replace=False):
        spec = dict(jobs[i][1])
        field = list(_AXES)[rng.integers(len(_AXES))]
        moved = dict(spec, **{field: _AXES[field][rng.integers(len(_AXES[field]))]})
        for s in (spec, moved):
            try:
                a = _policy(py, flavor=flavor, **s, **SMALL)["aot"]
            except py.SpecRejected as e:
                a = f"rejected: {e.reason}"
            try:
                b = _policy(cpp, flavor=flavor, **s, **SMALL)["aot"]
            except cpp.SpecRejected as e:
                b = f"rejected: {e.reason}"
            assert a == b, (s, a, b)
            seen.add(b.split(":")[0])
    assert {"yes", "no"} <= seen


# -- plain jobs (issue 37) ------------------------------------------------------------------------

def test_aot_plain_jobs(both):
    """The plain jobs: 115 per dtype and acc epilogue (16 tiles at default waves x vectors 8,4,2,1,3,5,6,7
    within the perf model's 32-load budget, 30 for one wave), the model's budget and the grid's equal,
    both engines agree."""
    from python_engine.policy import perf_model as PM
    assert aot.PLAIN_MAX_LOADS == PM.MAX_LOADS_PER_LANE
    assert aot.PLAIN_MAX_LOADS_ONE_WAVE == PM.MAX_LOADS_ONE_WAVE
    assert [aot.plain_budget(*w) for w in ((1, 1), (1, 2), (2, 2))] == [PM.load_budget(*w) for w in ((1, 1), (1, 2), (2, 2))] \
        == [30, 32, 32]
    assert len(aot.plain_axes()) == 114
    by_v = {v: sum(a[4] == v for a in aot.plain_axes()) for v in aot.PLAIN_VECTORS}
    assert by_v == {8: 16, 4: 16, 2: 14, 1: 6, 3: 14, 5: 16, 6: 16, 7: 16}
    # 16x16 w1x1 at vector 1 (32 loads) spilled SGPRs in the issue-37 build: one wave's budget is 30
    assert aot.candidate_loads(16, 16, 32, 1, 1, "mem", 1, 1) == 32 and (16, 16, 1, 1, 1) not in aot.plain_axes()
    plain = [j.spec for j in aot.jobs("llvm20") if j.family == CIG.FAMILY and j.spec["split_k"] == 1]
    assert len(plain) == 7 * 2 * 114
    assert {(s["tile_k"], s["pipeline"], s["epilogue"]) for s in plain} == {(32, "mem", "default")}
    assert {s["acc_epilogue"] for s in plain} == set(aot.ACC_EPILOGUES)
    # 128x128 at vector 1 issues 64 loads per lane: over the budget, no job
    assert aot.candidate_loads(128, 128, 32, 2, 2, "mem", 1, 1) == 64
    assert (128, 128, 2, 2, 1) not in aot.plain_axes() and (128, 128, 2, 2, 3) in aot.plain_axes()
    # the seed's 64x64 plain binary is a job, in both engines (the C++ is_job path)
    d = _policy(both[1], **{**CONV, "split_k": 1, "split_k_cluster": 0}, **SMALL)
    assert d["aot"].startswith("yes: ") and d["identity"].split()[0] in d["aot"]
    assert aot.conv_miss_reason(dict(CONV, split_k=1, split_k_cluster=0), "llvm22") is None

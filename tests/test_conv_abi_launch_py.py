"""conv_abi and conv_launch families, Python engine modules (the engine-level
cross-checks against cpp_engine are in tests/test_conv_abi_launch.py)."""
from __future__ import annotations

import itertools
import re

import pytest

from python_engine.ir.printer import print_module
from python_engine.kernels import conv_abi
from python_engine.families import conv_abi as A
from python_engine.kernels import conv_implicit_gemm as CIG
from python_engine.families import conv_launch as L
from python_engine.kernels import conv_launch as LK
from python_engine.kernels.conv_problem import PROBLEM_ARGS, ConvProblem
from python_engine.spec.fields import normalize
from python_engine.targets.arch import find_arch
from python_engine.targets.flavors import find_flavor

GFX1250 = find_arch("gfx1250")


def run(mod, spec, arch="gfx1250", flavor="llvm23"):
    """(None, (name, text)) or (reason, None)."""
    s = normalize(mod.FAMILY, mod.FIELDS, spec)
    ar, fl = find_arch(arch), find_flavor(flavor)
    r = mod.validate(s, ar, fl)
    return (r, None) if r else (None, mod.build(s, ar, fl))


# -- conv_abi ------------------------------------------------------------------------

def test_abi_fields():
    assert [(f.name, f.kind, f.default) for f in A.FIELDS] == [
        ("direction", "str", "fwd"), ("variant", "str", "plain"), ("spatial_dims", "int", 2),
        ("acc_epilogue", "str", "identity")]


@pytest.mark.parametrize("flavor", ["llvm20", "llvm22", "llvm23"])
@pytest.mark.parametrize("variant", ["plain", "two_stage", "cluster", "reduce"])
def test_abi_text_is_the_argument_list(variant, flavor):
    r, out = run(A, {"variant": variant}, flavor=flavor)
    if variant == "cluster" and flavor != "llvm23":
        assert r == "variant cluster requires flavor llvm23"
        return
    name, text = out
    assert name == f"conv_abi_fwd_{variant}"
    assert text == conv_abi.text(variant, find_flavor(flavor))
    lines = text.splitlines()
    assert lines[0] == f"conv_abi {variant}" and text.endswith("\n")
    names = [re.match(r"(\d+) (\w+): ", ln).group(2) for ln in lines[1:]]
    assert names == list(conv_abi.param_names(variant))
    assert [int(ln.split()[0]) for ln in lines[1:]] == list(range(len(names)))
    cap = "nocapture" if flavor == "llvm20" else "captures(none)"
    other = "captures(none)" if flavor == "llvm20" else "nocapture"
    assert cap in text and other not in text


def test_abi_split_tail_follows_problem_block():
    plain = conv_abi.param_names("plain")
    assert plain[-len(PROBLEM_ARGS):] == PROBLEM_ARGS
    for v in ("two_stage", "cluster"):
        assert conv_abi.param_names(v) == plain + ("ws_ptr", "ws_bytes", "ks", "ks_count")
    fl = find_flavor("llvm23")
    ts = conv_abi.text("two_stage", fl).splitlines()
    cl = conv_abi.text("cluster", fl).splitlines()
    assert ts[31].endswith("writeonly") and cl[31] == "30 ws_ptr: ptr addrspace(1) noalias captures(none)"


@pytest.mark.parametrize("spec,arch,flavor,reason", [
    ({"direction": "bwd_data"}, "gfx1250", "llvm23", "direction 'bwd_data' has no kernels (only fwd is implemented)"),
    ({"direction": "bwd_weight", "variant": "nope"}, "gfx1250", "llvm23",
     "direction 'bwd_weight' has no kernels (only fwd is implemented)"),
    ({"direction": ""}, "gfx1250", "llvm23", "direction must be fwd, bwd_data or bwd_weight, got ''"),
    ({"variant": "Plain"}, "gfx1250", "llvm23", "variant must be plain, two_stage, cluster or reduce, got 'Plain'"),
    ({"spatial_dims": 3, "variant": "cluster"}, "gfx1250", "llvm20",
     "spatial_dims 3 (3-D convolution) has no kernels (only 2-D is implemented)"),
    ({"spatial_dims": -2}, "gfx1250", "llvm23", "spatial_dims must be 2 or 3, got -2"),
    ({"variant": "cluster"}, "gfx942", "llvm20", "arch gfx942 has no conv kernels (requires gfx1250)"),
    ({"variant": "cluster"}, "gfx1250", "llvm22", "variant cluster requires flavor llvm23"),
])
def test_abi_rejects(spec, arch, flavor, reason):
    assert run(A, spec, arch, flavor)[0] == reason


# -- conv_launch: fields and slicing --------------------------------------------------

def test_launch_fields_flat_in_order():
    names = [f.name for f in L.FIELDS]
    assert names == [f.name for f in CIG.FIELDS] + [
        "N", "C", "H", "W", "K", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w", "dil_h", "dil_w",
        "groups", "degree"]
    assert len(set(names)) == len(names)
    assert all(f.kind == "int" for f in L.FIELDS[len(CIG.FIELDS):])
    # the problem fields are ConvProblem's given extents, in the problem block's order
    assert names[len(CIG.FIELDS):-1] == list(PROBLEM_ARGS[:14])
    assert run(L, {})[0] is None


def plan(spec, flavor="llvm23"):
    r, out = run(L, spec, flavor=flavor)
    assert r is None, r
    name, text = out
    head, args, stage2 = {}, {}, {}
    cur = None
    for ln in text.splitlines()[1:]:
        if ln.startswith("args "):
            cur = args
            continue
        if ln.startswith("stage2_args "):
            cur = stage2
            continue
        if cur is None:
            k, v = ln.split(" ", 1)
            head[k] = v
        else:
            i, n, eq, v = ln.split(" ", 3)
            assert eq == "=" and int(i) == len(cur)
            cur[n] = int(v) if re.fullmatch(r"-?\d+", v) else v
    return name, text, head, args, stage2


@pytest.mark.parametrize("kgemm,tile_k", [(9, 32), (64, 32), (576, 32), (4608, 64), (4608, 32), (1000, 96)])
def test_slicing_rule(kgemm, tile_k):
    for degree in list(range(1, 40)) + [100, 1000, 5000]:
        p = ConvProblem(N=1, C=kgemm, H=1, W=1, K=4, Y=1, X=1)
        ks, kc, data = LK._slicing({"tile_k": tile_k, "degree": degree, "split_k_cluster": 0, "vector_a": 8}, p)
        assert ks % tile_k == 0 and ks >= tile_k
        assert 1 <= kc <= degree and kc == data
        assert (kc - 1) * ks < kgemm <= kc * ks        # every slice non-empty, all covered
        assert ks == -(-(-(-kgemm // degree)) // tile_k) * tile_k
        if 2 <= degree <= 15:
            # a cluster binary launches ks_count = S; the trailing S - data slices are empty
            cks, ckc, cdata = LK._slicing({"tile_k": tile_k, "degree": degree, "split_k_cluster": degree, "vector_a": 8}, p)
            assert (cks, ckc, cdata) == (ks, degree, data) and data <= degree


BINARIES = [{}, {"epilogue": "cshuffle"}, {"split_k": 2, "split_k_cluster": 0},
            {"split_k": 5, "split_k_cluster": 0, "pipeline": "wavelet"},
            {"split_k": 2, "split_k_cluster": 4}, {"split_k": 2, "split_k_cluster": 3, "epilogue": "cshuffle"},
            {"split_k": 2, "split_k_cluster": 7}]  # Kgemm 384: ks 64, 6 of the 7 slices carry data


@pytest.mark.parametrize("binary", BINARIES)
def test_plan_matches_binary_and_abi(binary):
    s = {"split_k_cluster": 0, "split_k": 1, **binary}
    S = s["split_k_cluster"]
    degree = S or (4 if s["split_k"] > 1 else 1)
    prob = {"N": 2, "C": 64, "H": 15, "W": 9, "K": 96, "Y": 3, "X": 2, "stride_h": 2, "pad_h": 1,
            "pad_w": 0, "dil_w": 2}
    name, text, head, args, stage2 = plan({**binary, **prob, "degree": degree})
    p = ConvProblem(**{k: v for k, v in {**dict((n, d) for n, _, d in LK.PROBLEM_FIELDS), **prob}.items()})
    cig = normalize(CIG.FAMILY, CIG.FIELDS, binary)
    kname, mod = CIG.build(cig, GFX1250, find_flavor("llvm23"))
    ir = print_module(mod)
    variant = conv_abi.variant_of(cig["split_k"], S)
    assert name == kname and text.startswith(f"conv_launch {kname}\n")
    assert head["variant"] == variant
    # every argument of the binary, by name, in ABI order
    assert tuple(args) == conv_abi.param_names(variant)
    define = next(ln for ln in ir.splitlines() if ln.startswith("define"))
    assert re.findall(r"%(\w+)[,)]", define) == list(args)
    for n in PROBLEM_ARGS:
        assert args[n] == getattr(p, n)
    ks, kc = int(head["ks"]), int(head["ks_count"])
    data = -(-p.Kgemm // ks)
    assert ks % cig["tile_k"] == 0 and kc == (S or data)
    assert head.get("data_slices") == (str(data) if S else None)
    if S == 7:
        assert data == 6  # a trailing empty slice
    assert head["grid"] == f"{-(-p.M // cig['tile_m'])} {-(-p.kpg // cig['tile_n'])} {p.groups * kc}"
    t = CIG.threads(cig)
    assert head["block"] == f"{t} 1 1" and f'"amdgpu-flat-work-group-size"="{t},{t}"' in ir
    assert int(head["lds_bytes"]) == CIG.lds_bytes(cig)
    assert head["cluster"] == (f"1 1 {S}" if S else "none")
    if S:
        assert f'"amdgpu-cluster-dims"="1,1,{S}"' in ir
    assert args["x_bytes"] == p.x_elems() * 2 and args["w_bytes"] == p.w_elems() * 2
    assert args["d_bytes"] == p.M * p.K * 2
    two_stage = cig["split_k"] > 1
    needs_stage2 = two_stage and not S
    assert head["needs_stage2"] == ("true" if needs_stage2 else "false")
    if two_stage:
        assert args["ks"] == ks and args["ks_count"] == kc
        assert args["ws_bytes"] == kc * p.M * p.K * 4 == int(head["workspace_bytes"])
        assert args["d_ptr"] == ("buffer d" if S else "unused")
    else:
        assert head["workspace_bytes"] == "0" and args["d_ptr"] == "buffer d"
    if needs_stage2:
        assert tuple(stage2) == conv_abi.param_names("reduce")
        assert stage2 == {"ws_ptr": "buffer ws", "ws_bytes": args["ws_bytes"], "d_ptr": "buffer d",
                          "d_bytes": args["d_bytes"], "M": p.M, "K": p.K, "ks_count": kc}
    else:
        assert not stage2 and "stage2_args" not in text


@pytest.mark.parametrize("acc", ["identity", "bias", "scale", "relu", "clamp"])
def test_epilogue_arguments(acc):
    _, _, _, args, _ = plan({"acc_epilogue": acc})
    assert args["bias_ptr"] == ("buffer bias" if acc == "bias" else "unused")
    assert args["scale"] == ("caller" if acc == "scale" else "unused")
    assert args["clamp_lo"] == args["clamp_hi"] == ("caller" if acc == "clamp" else "unused")


def test_missing_or_extra_argument_is_an_internal_error(monkeypatch):
    real = LK._arg_values

    def drop(*a):
        v = real(*a)
        v.pop("ks", None)
        return v

    def add(*a):
        return dict(real(*a), bogus=1)

    for fake, word in ((drop, "missing: ks"), (add, "extra: bogus")):
        monkeypatch.setattr(LK, "_arg_values", fake)
        with pytest.raises(RuntimeError, match=word):
            run(L, {"split_k": 2, "split_k_cluster": 0, "degree": 2})
    monkeypatch.setattr(LK, "_arg_values", real)


def test_workspace_boundary():
    prob = {"N": 1, "C": 64, "K": 64, "Y": 1, "X": 1, "pad_h": 0, "pad_w": 0, "H": 2048, "split_k": 2,
            "split_k_cluster": 0, "degree": 2}
    _, _, head, args, _ = plan({**prob, "W": 2047})
    assert int(head["workspace_bytes"]) == 2 ** 31 - 2 * 2048 * 64 * 4 < 2 ** 31
    assert run(L, {**prob, "W": 2048})[0].startswith("ws_bytes = 2147483648 must be below 2^31")


def test_needs_stage2_is_the_only_predicate():
    src = open(LK.__file__).read()
    assert src.count("needs_stage2 = ") == 1
    assert "needs_stage2 = two_stage and not s" in src


def test_deterministic():
    for spec in ({}, {"split_k": 2, "split_k_cluster": 0, "degree": 7}, {"split_k": 2, "split_k_cluster": 4, "degree": 4}):
        assert run(L, spec) == run(L, spec)

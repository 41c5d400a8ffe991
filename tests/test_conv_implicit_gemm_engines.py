"""conv_implicit_gemm through the engine API of both engines (``engine`` fixture):
the rule reasons of tests/test_conv_implicit_gemm_py.py (REJECTS, the single list
of exact texts), fields, names, the ABI of the emitted ``define``, and a
randomized cross-engine comparison (same reason or same bytes)."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from python_engine.kernels import conv_abi
from python_engine.targets.flavors import find_flavor
from test_conv_implicit_gemm_py import REJECTS

FAM = "conv_implicit_gemm"


@pytest.mark.parametrize("spec,arch,flavor,reason", REJECTS)
def test_reject_reasons(engine, spec, arch, flavor, reason):
    assert engine.validate(FAM, spec, arch, flavor) == reason
    with pytest.raises(engine.SpecRejected) as e:
        engine.lower(FAM, spec, arch, flavor)
    assert e.value.reason == reason


def test_registered_after_reduce(engine):
    fams = engine.FAMILIES
    assert fams.index(FAM) == fams.index("conv_fwd_split_k_reduce") + 1


def test_fields_order_and_defaults(engine):
    assert engine.spec_fields(FAM) == (
        ("dtype", "bf16"), ("tile_m", 64), ("tile_n", 64), ("tile_k", 32), ("waves_m", 2), ("waves_n", 2),
        ("pipeline", "mem"), ("num_load_waves", 1), ("epilogue", "default"), ("vector_a", 8),
        ("vector_b", 8), ("acc_epilogue", "identity"), ("split_k", 1), ("split_k_cluster", 0),
        ("name_prefix", ""))


def _lower(engine, spec, arch="gfx1250", flavor="llvm23"):
    return engine.lower(FAM, spec, arch, flavor)


def test_names(engine):
    assert _lower(engine, {}).kernel == "conv_implicit_gemm_bf16_64x64x32_w2x2_mem_default_va8_vb8_identity"
    assert engine.kernel_name(FAM, {"split_k": 4, "split_k_cluster": 0}, "gfx1250", "llvm23") == \
        engine.kernel_name(FAM, {"split_k": 32, "split_k_cluster": 0}, "gfx1250", "llvm23") == \
        "conv_implicit_gemm_bf16_64x64x32_w2x2_mem_default_va8_vb8_identity_spk"
    assert _lower(engine, {"split_k": 2, "split_k_cluster": 8, "epilogue": "cshuffle", "name_prefix": "net"}).kernel \
        == "net_conv_implicit_gemm_bf16_64x64x32_w2x2_mem_cshuffle_va8_vb8_identity_spk_skc8"
    assert _lower(engine, {"pipeline": "wavelet", "num_load_waves": 2}).kernel == \
        "conv_implicit_gemm_bf16_64x64x32_w2x2_wavelet2_default_va8_vb8_identity"
    assert _lower(engine, {"dtype": "fp16", "acc_epilogue": "relu", "vector_a": 2}).kernel == \
        "conv_implicit_gemm_fp16_64x64x32_w2x2_mem_default_va2_vb8_relu"


def test_one_binary_per_degree_and_lw_ignored_by_mem(engine):
    for fl in ("llvm20", "llvm22", "llvm23"):
        assert _lower(engine, {"split_k": 2, "split_k_cluster": 0}, flavor=fl) == \
            _lower(engine, {"split_k": 32, "split_k_cluster": 0}, flavor=fl)
        assert _lower(engine, {"num_load_waves": 3}, flavor=fl) == _lower(engine, {}, flavor=fl)
    assert _lower(engine, {"split_k": 2, "split_k_cluster": 4}).text == \
        _lower(engine, {"split_k": 32, "split_k_cluster": 4}).text
    assert _lower(engine, {"split_k": 4, "split_k_cluster": 4}).text != \
        _lower(engine, {"split_k": 4, "split_k_cluster": 8}).text


_DEFINE = re.compile(r"^define amdgpu_kernel void @(\S+)\((.*)\) #0 \{$", re.M)


_VARIANTS = [(fl, {}, "plain") for fl in ("llvm20", "llvm22", "llvm23")]
_VARIANTS += [(fl, {"split_k": 4, "split_k_cluster": 0}, "two_stage") for fl in ("llvm20", "llvm22", "llvm23")]
_VARIANTS += [("llvm23", {"split_k": 4, "split_k_cluster": 4}, "cluster")]  # clusters need llvm23


@pytest.mark.parametrize("flavor,spec,variant", _VARIANTS)
def test_define_matches_conv_abi(engine, flavor, spec, variant):
    r = _lower(engine, spec, flavor=flavor)
    m = _DEFINE.search(r.text)
    assert m and m.group(1) == r.kernel
    # conv_abi.text lines "<i> <name>: <type>[ <attrs>]" -> "<type>[ <attrs>] %<name>"
    want = []
    for line in conv_abi.text(variant, find_flavor(flavor)).splitlines()[1:]:
        _, rest = line.split(" ", 1)
        name, ty = rest.split(": ", 1)
        want.append(f"{ty} %{name}")
    assert m.group(2) == ", ".join(want)


def test_cluster_attrs_and_barrier(engine):
    t = _lower(engine, {"split_k": 4, "split_k_cluster": 12, "epilogue": "cshuffle"}).text
    assert '"amdgpu-cluster-dims"="1,1,12"' in t
    assert 'fence syncscope("cluster") release\n  call void @llvm.amdgcn.s.cluster.barrier()\n' \
           '  fence syncscope("cluster") acquire' in t
    assert '"amdgpu-flat-work-group-size"="128,128"' in t
    t2 = _lower(engine, {"pipeline": "wavelet", "num_load_waves": 2}).text
    assert '"amdgpu-flat-work-group-size"="192,192"' in t2
    assert "cluster" not in _lower(engine, {"split_k": 4, "split_k_cluster": 0}).text


def test_lds_globals(engine):
    """One LDS allocation: A then B ([2][rows][tile_k] each), the cshuffle fp32 tile
    aliasing them from offset 0 (max of the two, not the sum)."""
    t = _lower(engine, {"epilogue": "cshuffle", "dtype": "fp16"}).text
    # A+B = 2*(64+64)*32*2 = 16384 bytes; C = 64*(64+4)*4 = 17408 bytes -> 8704 halves
    assert "@lds = internal addrspace(3) global [8704 x half] poison, align 16" in t
    assert "getelementptr inbounds half, ptr addrspace(3) @lds, i32 4096" in t   # B after A (8192 bytes)
    assert "@lds_a" not in t and "@lds_c" not in t
    t = _lower(engine, {}).text
    assert "@lds = internal addrspace(3) global [8192 x bfloat] poison, align 16" in t
    big = {"tile_m": 128, "tile_n": 128, "tile_k": 64, "epilogue": "cshuffle"}
    # 128x128x64 cshuffle: max(A+B 65536, C 67584) bytes, 141312 before the aliasing
    assert "@lds = internal addrspace(3) global [33792 x bfloat] poison, align 16" in _lower(engine, big).text


# -- both engines agree on random specs -------------------------------------------------

_INTS = st.one_of(st.sampled_from([-1, 0, 1, 2, 3, 4, 8, 16, 32, 48, 64, 96, 128, 256]),
                  st.integers(-(1 << 63), (1 << 63) - 1))
_SPEC = st.fixed_dictionaries({}, optional={
    "dtype": st.sampled_from(["bf16", "fp16", "fp32", None]),
    "tile_m": st.sampled_from([16, 32, 48, 64, 128]),
    "tile_n": st.sampled_from([16, 32, 64, 128]),
    "tile_k": st.sampled_from([16, 32, 64]),
    "waves_m": st.sampled_from([0, 1, 2, 3, 4]),
    "waves_n": st.sampled_from([1, 2, 4]),
    "pipeline": st.sampled_from(["mem", "wavelet", "lds", None]),
    "num_load_waves": st.sampled_from([0, 1, 2, 3, 9]),
    "epilogue": st.sampled_from(["default", "cshuffle", None]),
    "vector_a": st.sampled_from([1, 2, 3, 4, 8]),
    "vector_b": st.sampled_from([1, 2, 4, 8, 16]),
    "acc_epilogue": st.sampled_from(["identity", "bias", "scale", "relu", "clamp", "gelu"]),
    "split_k": st.sampled_from([-2, -1, 0, 1, 2, 7, 32]),
    "split_k_cluster": st.sampled_from([0, 1, 2, 4, 15, 16]),
    "name_prefix": st.sampled_from(["", "net", "9x", None, "a_b1"]),
})


def _outcome(E, spec, arch, flavor):
    try:
        r = E.lower(FAM, spec, arch, flavor)
        return ("ok", r.kernel, r.text)
    except E.SpecRejected as e:
        return ("rejected", e.reason)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=_SPEC, arch=st.sampled_from(["gfx1250", "gfx1250", "gfx950", "gfx1100"]),
       flavor=st.sampled_from(["llvm20", "llvm22", "llvm23", "llvm24"]))
def test_engines_agree_random(both, spec, arch, flavor):
    py, cpp = both
    assert _outcome(py, spec, arch, flavor) == _outcome(cpp, spec, arch, flavor)


@settings(max_examples=150, deadline=None)
@given(field=st.sampled_from(["tile_m", "tile_n", "tile_k", "waves_m", "waves_n", "num_load_waves",
                              "vector_a", "vector_b", "split_k", "split_k_cluster"]),
       value=_INTS, wavelet=st.booleans(), cshuffle=st.booleans())
def test_engines_agree_extreme_ints(both, field, value, wavelet, cshuffle):
    """Huge sizes: the reasons print the exact (unbounded) thread and LDS counts."""
    py, cpp = both
    spec = {field: value, "pipeline": "wavelet" if wavelet else "mem",
            "epilogue": "cshuffle" if cshuffle else "default"}
    if field in ("tile_m", "tile_n", "tile_k"):
        spec.update(waves_m=1, waves_n=1)
    assert py.validate(FAM, spec, "gfx1250", "llvm23") == cpp.validate(FAM, spec, "gfx1250", "llvm23")


@pytest.mark.parametrize("spec", [
    {"tile_m": 1 << 62, "tile_n": 1 << 62, "tile_k": 1 << 62, "waves_m": 1, "waves_n": 1, "epilogue": "cshuffle"},
    {"tile_m": (1 << 63) - 16, "tile_n": (1 << 63) - 16, "tile_k": (1 << 63) - 32, "waves_m": 1, "waves_n": 1},
    {"tile_m": 1 << 62, "tile_n": 1 << 62, "waves_m": 1 << 58, "waves_n": 1 << 58},
])
def test_huge_reasons_agree(both, spec):
    py, cpp = both
    r = py.validate(FAM, spec, "gfx1250", "llvm23")
    assert r is not None and r == cpp.validate(FAM, spec, "gfx1250", "llvm23")

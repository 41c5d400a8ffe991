"""conv_abi and conv_launch through the engine API, both engines: same fields,
same rejections, same text; the C structs carry the spec flat and in order."""
from __future__ import annotations

import re

import pytest

from python_engine.kernels import conv_abi
from python_engine.kernels import conv_implicit_gemm as CIG

PROBLEM = ("N", "C", "H", "W", "K", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w", "dil_h", "dil_w", "groups")


def test_registered_after_conv_implicit_gemm(engine):
    fams = engine.FAMILIES
    assert fams.index("conv_abi") == fams.index("conv_implicit_gemm") + 1
    assert fams.index("conv_launch") == fams.index("conv_abi") + 1


def test_spec_fields(engine):
    assert engine.spec_fields("conv_abi") == (("direction", "fwd"), ("variant", "plain"), ("spatial_dims", 2),
                                              ("acc_epilogue", "identity"))
    f = engine.spec_fields("conv_launch")
    assert f[:15] == engine.spec_fields("conv_implicit_gemm")
    assert tuple(n for n, _ in f[15:]) == PROBLEM + ("degree",)
    assert dict(f[15:]) == {"N": 1, "C": 64, "H": 56, "W": 56, "K": 64, "Y": 3, "X": 3, "stride_h": 1,
                            "stride_w": 1, "pad_h": 1, "pad_w": 1, "dil_h": 1, "dil_w": 1, "groups": 1,
                            "degree": 1}


def test_c_struct_is_flat_in_spec_order():
    from cpp_engine._ffi import ffi
    for ctype, fam in (("cpe_conv_abi_spec", "conv_abi"), ("cpe_conv_launch_spec", "conv_launch")):
        import cpp_engine
        names = [n for n, _ in ffi.typeof(ctype).fields]
        assert names == [n for n, _ in cpp_engine.spec_fields(fam)]
    conv = [n for n, _ in ffi.typeof("cpe_conv_spec").fields]
    assert [n for n, _ in ffi.typeof("cpe_conv_launch_spec").fields][:len(conv)] == conv


@pytest.mark.parametrize("flavor", ["llvm20", "llvm22", "llvm23", "llvm24"])
@pytest.mark.parametrize("variant", ["plain", "two_stage", "cluster", "reduce"])
def test_abi_engines_agree(both, variant, flavor):
    py, cpp = both
    spec = {"variant": variant}
    if variant == "cluster" and flavor in ("llvm20", "llvm22"):
        for e in both:
            with pytest.raises(e.SpecRejected, match="variant cluster requires flavor llvm23"):
                e.lower("conv_abi", spec, "gfx1250", flavor)
        return
    a, b = py.lower("conv_abi", spec, "gfx1250", flavor), cpp.lower("conv_abi", spec, "gfx1250", flavor)
    assert a.kernel == b.kernel == f"conv_abi_fwd_{variant}"
    assert a.text == b.text
    assert [ln.split()[1].rstrip(":") for ln in a.text.splitlines()[1:]] == list(conv_abi.param_names(variant))


def test_abi_text_matches_kernel_define(engine):
    """The argument list printed by conv_abi is the one the kernels are built with."""
    for variant, spec in (("plain", {}), ("two_stage", {"split_k": 2, "split_k_cluster": 0}),
                          ("cluster", {"split_k": 2, "split_k_cluster": 4})):
        abi = engine.lower("conv_abi", {"variant": variant}, "gfx1250", "llvm23").text.splitlines()[1:]
        ir = engine.lower("conv_implicit_gemm", spec, "gfx1250", "llvm23").text
        define = next(ln for ln in ir.splitlines() if ln.startswith("define"))
        params = re.search(r"@\w+\((.*)\)", define).group(1).split(", ")
        assert len(params) == len(abi)
        for line, p in zip(abi, params):
            _, name_t = line.split(" ", 1)
            name, t = name_t.split(": ", 1)
            assert p == f"{t} %{name}", (p, line)
    red = engine.lower("conv_abi", {"variant": "reduce"}, "gfx1250", "llvm22").text.splitlines()[1:]
    ir = engine.lower("conv_fwd_split_k_reduce", {}, "gfx1250", "llvm22").text
    define = next(ln for ln in ir.splitlines() if ln.startswith("define"))
    assert re.search(r"@\w+\((.*)\)", define).group(1).split(", ") == \
        [f"{ln.split(': ', 1)[1]} %{ln.split(' ')[1].rstrip(':')}" for ln in red]


LAUNCHES = [
    {},
    {"split_k": 2, "split_k_cluster": 0, "degree": 8, "C": 512, "H": 7, "W": 7, "K": 512},
    {"split_k": 2, "split_k_cluster": 4, "degree": 4, "epilogue": "cshuffle", "C": 512, "H": 7, "W": 7, "K": 512},
    {"acc_epilogue": "bias", "pipeline": "wavelet", "C": 3, "vector_a": 1, "vector_b": 1, "H": 224, "W": 224,
     "Y": 16, "X": 16, "stride_h": 16, "stride_w": 16, "pad_h": 0, "pad_w": 0, "K": 768},
    {"split_k": 2, "split_k_cluster": 0, "degree": 2, "C": 64, "K": 64, "H": 2048, "W": 2048, "Y": 1, "X": 1,
     "pad_h": 0, "pad_w": 0},
    {"degree": 2},
    {"N": 0},
    {"H": 2 ** 40, "W": 2 ** 40},
    {"N": 2 ** 31 - 1, "H": 2 ** 31 - 1, "W": 2 ** 31 - 1, "pad_h": 2 ** 31 - 1, "pad_w": 2 ** 31 - 1,
     "vector_a": 1, "vector_b": 1},
    {"split_k": 2, "split_k_cluster": 0, "degree": 2 ** 63 - 1, "vector_a": 1, "vector_b": 1, "C": 2 ** 31 - 1, "Y": 1, "X": 1},
]


@pytest.mark.parametrize("flavor", ["llvm20", "llvm22", "llvm23"])
@pytest.mark.parametrize("i", range(len(LAUNCHES)))
def test_launch_engines_agree(both, i, flavor):
    py, cpp = both
    spec = LAUNCHES[i]
    out = []
    for e in both:
        try:
            r = e.lower("conv_launch", spec, "gfx1250", flavor)
            out.append(("ok", r.kernel, r.text))
        except e.SpecRejected as ex:
            out.append(("rejected", ex.reason))
        assert e.validate("conv_launch", spec, "gfx1250", flavor) == (None if out[-1][0] == "ok" else out[-1][1])
    assert out[0] == out[1]


def test_launch_kernel_is_the_binary(engine):
    spec = {"split_k": 2, "split_k_cluster": 0, "epilogue": "cshuffle", "name_prefix": "net", "degree": 3}
    binary = {k: v for k, v in spec.items() if k in {f.name for f in CIG.FIELDS}}
    r = engine.lower("conv_launch", spec, "gfx1250", "llvm22")
    assert r.kernel == engine.kernel_name("conv_implicit_gemm", binary, "gfx1250", "llvm22")
    assert r.text.startswith(f"conv_launch {r.kernel}\n") and r.text.endswith("\n")


def test_launch_rejects_through_binding(engine):
    assert engine.validate("conv_launch", {"degree": 1.5}, "gfx1250", "llvm23") == \
        "spec field 'degree' must be an integer"
    assert engine.validate("conv_launch", {"N": 2 ** 64}, "gfx1250", "llvm23") == \
        "spec field 'N' is out of the 64-bit range"
    assert engine.validate("conv_launch", {"split_k": 2, "split_k_cluster": 4, "degree": 4}, "gfx1250", "llvm22") \
        == "split_k_cluster requires flavor llvm23"
    assert engine.validate("conv_abi", {"direction": None}, "gfx1250", "llvm23") == \
        "direction must be fwd, bwd_data or bwd_weight, got null"


def test_text_families_are_not_llvm_ir():
    """conv_abi and conv_launch declare OUTPUT = "text": compared and blessed by the
    gate, never given to LLVM by `parity verify`."""
    from parity.config import load_families
    out = {f.name: f.output for f in load_families()}
    text = ("conv_abi", "conv_launch", "split_k_policy", "perf_model")
    assert all(out[k] == "text" for k in text)
    assert all(v == "llvm_ir" for k, v in out.items() if k not in text)

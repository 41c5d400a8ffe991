"""ir_core: both engines emit identical bytes and identical rejections, and the
text carries each flavor's lines."""
from __future__ import annotations

import itertools

import pytest

from python_engine.kernels.ir_core import KERNELS

FLAVORS = ("llvm20", "llvm22", "llvm23")


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_identical(both, kernel, flavor):
    py, cpp = both
    for threads, cluster in itertools.product((64, 256), (0, 4)):
        spec = {"kernel": kernel, "threads": threads, "cluster": cluster}
        ra = py.validate("ir_core", spec, "gfx1250", flavor)
        rb = cpp.validate("ir_core", spec, "gfx1250", flavor)
        assert ra == rb
        if ra is None:
            a = py.lower("ir_core", spec, "gfx1250", flavor)
            b = cpp.lower("ir_core", spec, "gfx1250", flavor)
            assert a.kernel == b.kernel
            assert a.text == b.text


REJECTS = [
    ({"kernel": "nope"}, "gfx1250", "llvm23",
     "kernel must be one of " + ", ".join(KERNELS) + ", got 'nope'"),
    ({"kernel": None}, "gfx1250", "llvm23", "kernel must be one of " + ", ".join(KERNELS) + ", got null"),
    ({"threads": 48}, "gfx1250", "llvm23", "threads must be a multiple of the wave size 32 in 32..1024, got 48"),
    ({"threads": 2048}, "gfx1250", "llvm23", "threads must be a multiple of the wave size 32 in 32..1024, got 2048"),
    ({"threads": 32}, "gfx942", "llvm23", "threads must be a multiple of the wave size 64 in 64..1024, got 32"),
    ({"cluster": 17}, "gfx1250", "llvm23", "cluster must be 0 (off) or 1..16, got 17"),
    ({"cluster": 4}, "gfx1250", "llvm22", "amdgpu-cluster-dims requires flavor llvm23"),
    ({"cluster": 4}, "gfx1250", "llvm20", "amdgpu-cluster-dims requires flavor llvm23"),
    ({"cluster": 4}, "gfx1100", "llvm23", "amdgpu-cluster-dims requires arch gfx1250"),
    ({"threads": "x"}, "gfx1250", "llvm23", "spec field 'threads' must be an integer"),
    ({"threads": True}, "gfx1250", "llvm23", "spec field 'threads' must be an integer"),
    ({"kernel": 3}, "gfx1250", "llvm23", "spec field 'kernel' must be a string or null"),
    ({"bogus": 1}, "gfx1250", "llvm23", "spec field 'bogus' is not a field of family 'ir_core'"),
    ({}, "gfx9000", "llvm23", "arch 'gfx9000' is not one of gfx1250, gfx942, gfx950, gfx1100, gfx1201"),
    ({}, "gfx1250", "llvm21", "flavor 'llvm21' is not one of llvm20, llvm22, llvm23, llvm24"),
]


@pytest.mark.parametrize("spec,arch,flavor,reason", REJECTS)
def test_rejections(engine, spec, arch, flavor, reason):
    assert engine.validate("ir_core", spec, arch, flavor) == reason
    with pytest.raises(engine.SpecRejected) as e:
        engine.lower("ir_core", spec, arch, flavor)
    assert e.value.reason == reason


def test_unknown_family(engine):
    with pytest.raises(engine.SpecRejected) as e:
        engine.lower("conv_bwd", {}, "gfx1250", "llvm23")
    assert e.value.reason.startswith("family 'conv_bwd' is not one of ir_core")


def test_flavor_lines(engine):
    t20 = engine.lower("ir_core", {"kernel": "buffer_copy"}, "gfx1250", "llvm20").text
    t22 = engine.lower("ir_core", {"kernel": "buffer_copy"}, "gfx1250", "llvm22").text
    t23 = engine.lower("ir_core", {"kernel": "buffer_copy", "cluster": 2}, "gfx1250", "llvm23").text
    assert "-p8:128:128-" in t20 and "m:e" not in t20 and " nocapture " in t20
    assert "@llvm.amdgcn.make.buffer.rsrc.p1(ptr addrspace(1), i16, i32, i32)" in t20
    assert "-p8:128:128:128:48-" in t22 and "m:e" not in t22 and "captures(none)" in t22
    assert "@llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)" in t22
    assert t23.startswith('target datalayout = "e-m:e-') and '"amdgpu-cluster-dims"="1,1,2"' in t23
    for t in (t20, t22, t23):
        assert t.endswith("}\n\n!llvm.module.flags = !{!0}\n!0 = !{i32 1, !\"amdhsa_code_object_version\", i32 600}\n")
        assert "\r" not in t


def test_constants_text(engine):
    f = engine.lower("ir_core", {"kernel": "constants_f32"}, "gfx1250", "llvm23").text
    for c in ("0x0000000000000000", "0x8000000000000000", "0x7FF0000000000000", "0xFFF0000000000000",
              "0x7FF8000000000000", "0x3FB99999A0000000", "0x37A16C2000000000"):
        assert f"store float {c}," in f
    h = engine.lower("ir_core", {"kernel": "constants_f16"}, "gfx1250", "llvm23").text
    for c in ("0xH0000", "0xH8000", "0xH7C00", "0xHFC00", "0xH7E00", "0xH2E66", "0xH0032"):
        assert f"store half {c}," in h
    bf = engine.lower("ir_core", {"kernel": "constants_bf16"}, "gfx1250", "llvm23").text
    for c in ("0xR7F80", "0xRFF80", "0xR7FC0", "0xR3DCD", "0xR0001"):
        assert f"store bfloat {c}," in bf
    i = engine.lower("ir_core", {"kernel": "constants_int"}, "gfx1250", "llvm23").text
    for c in ("i8 -128", "i16 -32768", "i32 -2147483648", "i64 9223372036854775807",
              "i64 -9223372036854775808", "double 0x3FB999999999999A"):
        assert f"store {c}," in i

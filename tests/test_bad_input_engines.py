"""Issue 14: every bad input the fuzzer found is a clear rejection with the
same reason in both engines (the exact inputs of the issue), and the C++
engine's output does not depend on its host's floating-point state."""
from __future__ import annotations

import ctypes
import ctypes.util
import subprocess
import sys

import pytest

from parity.gate.fuzz_values import LyingInt, LyingStr

ARCH, FLAVOR = "gfx1250", "llvm23"
NOT_PRINTABLE = ("must be printable UTF-8 text (no control characters, line or paragraph separators, NUL or "
                 "lone surrogates)")


def _reason(E, family, spec, arch=ARCH, flavor=FLAVOR):
    with pytest.raises(E.SpecRejected) as info:
        E.lower(family, spec, arch, flavor)
    assert E.validate(family, spec, arch, flavor) == info.value.reason
    return info.value.reason


def test_split_k_policy_huge_split_k_is_rejected_not_sigfpe():
    # Run in a child: before the fix the C++ engine died with SIGFPE here.
    code = ("import cpp_engine as C\n"
            "print(C.validate('split_k_policy', {'split_k': 2**63-1, 'split_k_cluster': 0}, 'gfx1250', 'llvm23'))\n"
            "try:\n    C.lower('split_k_policy', {'split_k': 2**63-1, 'split_k_cluster': 0}, 'gfx1250', 'llvm23')\n"
            "except C.SpecRejected as e:\n    print(e.reason)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    want = "split_k must be in -1..2147483647 (-1: auto), got 9223372036854775807"
    assert r.stdout.splitlines() == [want, want]


@pytest.mark.parametrize("spec,reason", [
    ({"split_k": 2 ** 63 - 1, "split_k_cluster": 0}, "split_k must be in -1..2147483647 (-1: auto), got 9223372036854775807"),
    ({"split_k": -2, "split_k_cluster": 0}, "split_k must be in -1..2147483647 (-1: auto), got -2"),
    ({"split_k": -1, "split_k_cluster": -1}, "split_k_cluster must be 0..2147483647, got -1"),
    ({"split_k": -1, "split_k_cluster": 2 ** 31}, "split_k_cluster must be 0..2147483647, got 2147483648"),
])
def test_split_k_policy_degree_fields_bounded(engine, spec, reason):
    assert _reason(engine, "split_k_policy", spec) == reason


def test_split_k_policy_largest_split_k_lowers_in_both(both):
    P, C = both
    a = P.lower("split_k_policy", {"split_k": 2 ** 31 - 1, "split_k_cluster": 0}, ARCH, FLAVOR)
    b = C.lower("split_k_policy", {"split_k": 2 ** 31 - 1, "split_k_cluster": 0}, ARCH, FLAVOR)
    assert (a.kernel, a.text) == (b.kernel, b.text)
    assert "degree 2147483647\n" in a.text


@pytest.mark.parametrize("family,spec,field", [
    ("split_k_policy", {"epilogue": "bf16\x00"}, "epilogue"),
    ("conv_implicit_gemm", {"dtype": "\x01cpe-unrepresentable-pipeline\x01", "pipeline": "mem\x00"}, "dtype"),
    ("conv_implicit_gemm", {"pipeline": "mem\x00"}, "pipeline"),
    ("split_k_policy", {"dtype": "x\nkernel evil\naot yes"}, "dtype"),
    ("conv_fwd_split_k_reduce", {"dtype": "bf16\ud800"}, "dtype"),
    ("conv_abi", {"variant": "plain\t"}, "variant"),
    ("ir_core", {"kernel": "constants_f32\x7f"}, "kernel"),
    ("conv_launch", {"name_prefix": "a\x85"}, "name_prefix"),
])
def test_unprintable_strings_refused_up_front(engine, family, spec, field):
    assert _reason(engine, family, spec) == f"spec field '{field}' {NOT_PRINTABLE}"


@pytest.mark.parametrize("value,reason", [
    ("llvm23\x00", f"flavor {NOT_PRINTABLE}"),
    ("\ud800", f"flavor {NOT_PRINTABLE}"),
    ("llvm23\n", f"flavor {NOT_PRINTABLE}"),
    (5, "flavor must be a string or None"),
    (None, "flavor 'None' is not one of llvm20, llvm22, llvm23, llvm24"),
])
def test_bad_flavor_names(engine, value, reason):
    assert _reason(engine, "ir_core", {}, flavor=value) == reason


@pytest.mark.parametrize("value,reason", [
    ("gfx1250\x00", f"arch {NOT_PRINTABLE}"),
    (5, "arch must be a string or None"),
])
def test_bad_arch_names(engine, value, reason):
    assert _reason(engine, "ir_core", {}, arch=value) == reason
    # flavor is checked first, in both engines
    assert _reason(engine, "ir_core", {}, arch=value, flavor="x") == \
        "flavor 'x' is not one of llvm20, llvm22, llvm23, llvm24"


def test_bad_family_and_field_names(engine):
    assert _reason(engine, "x\ny", {}) == f"family {NOT_PRINTABLE}"
    assert _reason(engine, 5, {}) == "family must be a string"
    assert _reason(engine, "ir_core", {"a\nb": 1}) == \
        f"a spec field name of family 'ir_core' {NOT_PRINTABLE}"
    assert _reason(engine, "ir_core", {5: 1}) == "spec field names must be strings (family 'ir_core')"


def test_subclasses_are_read_as_their_value(both):
    P, C = both
    spec = {"vector": LyingInt(8)}
    a = P.lower("conv_fwd_split_k_reduce", spec, ARCH, FLAVOR)
    b = C.lower("conv_fwd_split_k_reduce", spec, ARCH, FLAVOR)
    assert a.kernel == b.kernel == "conv_fwd_split_k_reduce_bf16_v8_t256_d0"
    assert a.text == b.text
    spec = {"tile_m": LyingInt(64), "dtype": LyingStr("fp16")}
    a = P.lower("conv_implicit_gemm", spec, ARCH, FLAVOR)
    b = C.lower("conv_implicit_gemm", spec, ARCH, FLAVOR)
    assert a.kernel == b.kernel == "conv_implicit_gemm_fp16_64x64x32_w2x2_mem_default_va8_vb8_identity"
    assert a.text == b.text
    a = P.lower("ir_core", {}, ARCH, LyingStr("llvm23"))
    b = C.lower("ir_core", {}, ARCH, LyingStr("llvm23"))
    assert (a.kernel, a.text) == (b.kernel, b.text)


# -- host floating-point state -------------------------------------------------

_FE = {"downward": 0x400, "upward": 0x800, "towardzero": 0xC00}  # x86-64 <fenv.h>


@pytest.mark.skipif(ctypes.util.find_library("m") is None, reason="needs libm")
@pytest.mark.parametrize("mode", sorted(_FE))
def test_cpp_output_independent_of_host_rounding_mode(both, mode):
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.fail("the FE_* constants of this test are x86-64's")
    P, C = both
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    cases = [("ir_core", {"kernel": k}) for k in ("constants_f32", "constants_f16", "constants_bf16")]
    want = [C.lower(f, s, ARCH, FLAVOR).text for f, s in cases]
    assert want == [P.lower(f, s, ARCH, FLAVOR).text for f, s in cases]
    assert "0x3FB99999A0000000" in want[0]
    old = libm.fegetround()
    assert libm.fesetround(_FE[mode]) == 0
    try:
        assert libm.fegetround() == _FE[mode]
        got = [C.lower(f, s, ARCH, FLAVOR).text for f, s in cases]
        assert libm.fegetround() == _FE[mode]  # the caller's mode is restored
    finally:
        libm.fesetround(old)
    assert got == want

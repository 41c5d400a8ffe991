"""The C++ binding converts a (family, spec) to its C struct once and reuses it
at every arch and flavor (cpp_engine/_binding.py ``_prepare``, docs/cpp_engine.md
"Binding"): a reused conversion must give the bytes and reasons a fresh one
gives, which are the Python engine's. Each case runs its inputs in one process,
in an order where a wrong reuse would show (the same values of another type,
the same dict object changed, the fast path's edges next to the slow path)."""
from __future__ import annotations

import pytest

ARCH = "gfx1250"
FLAVORS = ("llvm20", "llvm22", "llvm23")


def _result(E, family, spec, arch=ARCH, flavor="llvm23"):
    """(kernel, text) or the reason, for comparing engines."""
    try:
        low = E.lower(family, spec, arch, flavor)
    except E.SpecRejected as e:
        assert E.validate(family, spec, arch, flavor) == e.reason
        return "rejected: " + e.reason
    return low.kernel, low.text


def test_one_spec_at_every_flavor_and_arch(both):
    P, C = both
    spec = {"dtype": "fp16", "tile_m": 128, "tile_n": 64, "split_k": 4, "split_k_cluster": 0}
    for flavor in FLAVORS:
        for arch in (ARCH, "gfx950"):
            a, b = _result(P, "conv_implicit_gemm", spec, arch, flavor), _result(C, "conv_implicit_gemm", spec, arch, flavor)
            assert a == b
    assert _result(C, "conv_implicit_gemm", spec, ARCH, "llvm20")[0] == \
        "conv_implicit_gemm_fp16_128x64x32_w2x2_mem_default_va8_vb8_identity_spk"


def test_bool_is_not_the_int_it_equals(both):
    P, C = both
    ok = _result(C, "conv_fwd_split_k_reduce", {"vector": 1})
    assert ok[0] == "conv_fwd_split_k_reduce_bf16_v1_t256_d0"
    assert _result(C, "conv_fwd_split_k_reduce", {"vector": True}) == "rejected: spec field 'vector' must be an integer"
    assert _result(C, "conv_fwd_split_k_reduce", {"vector": 1}) == ok == _result(P, "conv_fwd_split_k_reduce", {"vector": 1})


def test_a_changed_dict_converts_again(both):
    P, C = both
    spec = {"tile_m": 64}
    first = _result(C, "conv_implicit_gemm", spec)
    spec["tile_m"] = 128
    second = _result(C, "conv_implicit_gemm", spec)
    assert first[0].endswith("_64x64x32_w2x2_mem_default_va8_vb8_identity")
    assert second[0].endswith("_128x64x32_w2x2_mem_default_va8_vb8_identity")
    assert second == _result(P, "conv_implicit_gemm", spec)
    spec["tile_m"] = 2 ** 63  # out of the 64-bit range: the slow path's reason
    assert _result(C, "conv_implicit_gemm", spec) == _result(P, "conv_implicit_gemm", spec) == \
        "rejected: spec field 'tile_m' is out of the 64-bit range"


@pytest.mark.parametrize("value", [0, 0.0, -0.0, 2 ** 53, -(2 ** 53), 1.5])
def test_float_field_values_in_turn(both, value):
    P, C = both
    spec = {"kernel": "constants_f32", "value": value}
    assert _result(C, "ir_core", spec) == _result(P, "ir_core", spec)


def test_float_field_beyond_2_53_after_a_valid_int(both):
    P, C = both
    assert _result(C, "ir_core", {"value": 7})[0] == _result(P, "ir_core", {"value": 7})[0]
    spec = {"value": 2 ** 53 + 1}
    assert _result(C, "ir_core", spec) == _result(P, "ir_core", spec) == \
        "rejected: spec field 'value' is an integer beyond 2**53 (not exactly a double)"


@pytest.mark.parametrize("prefix", ["k", "k\u00e9", "k\x7f", "k\u2028", "x" * 300, "k\ud800"])
def test_strings_beside_the_ascii_fast_path(both, prefix):
    # printable ASCII takes the fast path; the others (non-ASCII, DEL, a
    # separator, too long, a lone surrogate) the rules' path, same reasons
    P, C = both
    spec = {"name_prefix": prefix}
    for _ in range(2):  # the second call is the reused conversion (when there is one)
        assert _result(C, "conv_implicit_gemm", spec) == _result(P, "conv_implicit_gemm", spec)


@pytest.mark.parametrize("arch,flavor", [("gfx1250", "llvm99"), ("gfx99", "llvm23"), (None, "llvm23"),
                                         ("gfx1250", "x" * 5000), (7, "llvm23"), (7, "nope"), ("gfx1250", None)])
def test_arch_and_flavor_after_a_reused_spec(both, arch, flavor):
    P, C = both
    spec = {"dtype": "bf16"}
    assert _result(C, "conv_implicit_gemm", spec)[0].startswith("conv_implicit_gemm_bf16_")
    assert _result(C, "conv_implicit_gemm", spec, arch, flavor) == _result(P, "conv_implicit_gemm", spec, arch, flavor)

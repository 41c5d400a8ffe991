"""spec_front: the one declarative description of the front checks, read by the
Python engine and by the C++ engine's binding; the C++ core's own checks give
the same texts (compared here through both engines)."""
from __future__ import annotations

import pytest

import cpp_engine
import python_engine
import spec_front
from cpp_engine._ffi import lib
from python_engine.spec import fields

ARCH, FLAVOR = "gfx1250", "llvm23"


def test_limits_agree_with_the_cpp_engine():
    assert spec_front.MAX_STRING_BYTES == int(lib.CPE_MAX_STRING_BYTES) == 4096
    assert fields.MAX_STRING_BYTES is spec_front.MAX_STRING_BYTES


def test_every_kind_has_rules_and_every_rule_a_test():
    assert set(spec_front.KIND_RULES) == {"int", "str", "bool", "float"}
    used = {r for rules in spec_front.KIND_RULES.values() for r in rules}
    assert used == set(spec_front.RULES)
    for rule, (fails, template) in spec_front.RULES.items():
        assert callable(fails), rule
        assert template is None or "{name}" in template, rule


@pytest.mark.parametrize("kind,value,want", [
    ("int", "3", "spec field 'f' must be an integer"),
    ("int", True, "spec field 'f' must be an integer"),
    ("int", 1 << 63, "spec field 'f' is out of the 64-bit range"),
    ("int", -(1 << 63), None),
    ("str", 3, "spec field 'f' must be a string or null"),
    ("str", None, None),
    ("str", "a\nb", spec_front.text_reason("spec field 'f'")),
    ("str", "x" * 4097, spec_front.length_reason("spec field 'f'")),
    ("bool", 1, "spec field 'f' must be true or false"),
    ("float", "1.0", "spec field 'f' must be a number"),
    ("float", (1 << 53) + 1, "spec field 'f' is an integer beyond 2**53 (not exactly a double)"),
    ("float", 1 << 53, None),
])
def test_type_reason_reads_the_table(kind, value, want):
    assert spec_front.type_reason("f", kind, value) == want


BAD = [
    ({"dtype": 7}, "spec field 'dtype' must be a string or null"),
    ({"dtype": "bf\u2028"}, spec_front.text_reason("spec field 'dtype'")),
    ({"dtype": "bf\ud800"}, spec_front.text_reason("spec field 'dtype'")),
    ({"dtype": "b" * 5000}, spec_front.length_reason("spec field 'dtype'")),
    ({"threads": 2.0}, "spec field 'threads' must be an integer"),
    ({"threads": 1 << 64}, "spec field 'threads' is out of the 64-bit range"),
    ({"no_such": 1}, "spec field 'no_such' is not a field of family 'conv_fwd_split_k_reduce'"),
    ({"bad\nname": 1}, spec_front.text_reason("a spec field name of family 'conv_fwd_split_k_reduce'")),
    ({1: 1}, "spec field names must be strings (family 'conv_fwd_split_k_reduce')"),
]


@pytest.mark.parametrize("spec,want", BAD)
def test_both_engines_give_the_descriptions_reason(spec, want):
    for E in (python_engine, cpp_engine):
        assert E.validate("conv_fwd_split_k_reduce", spec, ARCH, FLAVOR) == want, E.ENGINE


@pytest.mark.parametrize("name,want", [
    (None, "family 'None' is not one of "),
    (3, "family must be a string"),
    ("no\x00pe", spec_front.text_reason("family")),
    ("nope", "family 'nope' is not one of "),
])
def test_unknown_family_reason(name, want):
    for E in (python_engine, cpp_engine):
        assert E.validate(name, {}, ARCH, FLAVOR).startswith(want), E.ENGINE


def test_the_cpp_core_checks_strings_by_itself():
    """An arch the binding cannot pass as text reaches C++ as a control byte: the
    C++ core's own printable check gives the description's text."""
    for E in (python_engine, cpp_engine):
        assert E.validate("conv_fwd_split_k_reduce", {}, "gfx\x001250", FLAVOR) == spec_front.text_reason("arch")

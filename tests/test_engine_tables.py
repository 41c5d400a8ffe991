"""The two engines' target tables agree entry by entry (read from the C++
side through the binding), and the spec field lists agree."""
from __future__ import annotations

import pytest

FLAVORS = ("llvm20", "llvm22", "llvm23", "llvm24")


@pytest.mark.parametrize("flavor", FLAVORS)
def test_intrinsic_tables_agree(both, flavor):
    py, cpp = both
    a, b = py.intrinsic_table(flavor), cpp.intrinsic_table(flavor)
    assert len(a) == len(b) and len(a) >= 10
    for (ka, da), (kb, db) in zip(a, b):
        assert (ka, da) == (kb, db)


def test_flavor_tables_agree(both):
    py, cpp = both
    assert [r["name"] for r in py.flavor_table()] == ["llvm20", "llvm22", "llvm23", "llvm24"]
    for ra, rb in zip(py.flavor_table(), cpp.flavor_table(), strict=True):
        assert ra == rb


def test_alias_resolves(engine):
    assert engine.resolve_flavor("llvm24") == "llvm23"
    assert engine.resolve_flavor("llvm20") == "llvm20"
    with pytest.raises(engine.SpecRejected) as e:
        engine.resolve_flavor("llvm19")
    assert e.value.reason == "flavor 'llvm19' is not one of llvm20, llvm22, llvm23, llvm24"


def test_arch_tables_agree(both):
    py, cpp = both
    names = [r["name"] for r in py.arch_table()]
    assert names == ["gfx1250", "gfx942", "gfx950", "gfx1100", "gfx1201"]
    for ra, rb in zip(py.arch_table(), cpp.arch_table(), strict=True):
        assert ra == rb


def test_families_and_fields_agree(both):
    py, cpp = both
    assert py.FAMILIES == cpp.FAMILIES
    for fam in py.FAMILIES:
        assert py.spec_fields(fam) == cpp.spec_fields(fam)


def test_llvm24_emits_llvm23_bytes(engine):
    a = engine.lower("ir_core", {"kernel": "buffer_copy"}, "gfx1250", "llvm23")
    b = engine.lower("ir_core", {"kernel": "buffer_copy"}, "gfx1250", "llvm24")
    assert a == b

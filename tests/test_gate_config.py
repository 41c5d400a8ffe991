"""Config API and family discovery of the gate (parity/config.py)."""

import types

import pytest

from parity.config import (CANONICAL_FLAVORS, Config, ConfigError, Family, family_from_module,
                           load_families, ok, reject, reject_before_llvm23)


def test_canonical_flavors_do_not_include_alias():
    assert CANONICAL_FLAVORS == ("llvm20", "llvm22", "llvm23")


def test_default_applies_to_all_canonical_flavors_and_expects_ok():
    c = Config("a", arch="gfx1250", spec={"kernel": "x"})
    assert c.flavors == CANONICAL_FLAVORS
    assert [c.expectation(f).kind for f in CANONICAL_FLAVORS] == ["ok", "ok", "ok"]


def test_per_flavor_expectation():
    why = "amdgpu-cluster-dims requires flavor llvm23"
    c = Config("cl", arch="gfx1250", spec={}, per_flavor=reject_before_llvm23(why))
    assert c.expectation("llvm20") == reject(why)
    assert c.expectation("llvm22") == reject(why)
    assert c.expectation("llvm23") == ok()
    assert str(c.expectation("llvm20")) == f"reject({why!r})"


def test_flavors_normalised_to_canonical_order():
    c = Config("a", arch="gfx1250", flavors=("llvm23", "llvm20"))
    assert c.flavors == ("llvm20", "llvm23")
    assert not c.applies("llvm22")


@pytest.mark.parametrize("kwargs, msg", [
    (dict(name="", arch="gfx1250"), "stable identifier"),
    (dict(name="a/b", arch="gfx1250"), "stable identifier"),
    (dict(name="a", arch=""), "arch"),
    (dict(name="a", arch="gfx1250", flavors=("llvm24",)), "not canonical"),
    (dict(name="a", arch="gfx1250", flavors=()), "applies to no flavor"),
    (dict(name="a", arch="gfx1250", flavors=("llvm23",), per_flavor={"llvm20": ok()}), "does not apply"),
    (dict(name="a", arch="gfx1250", expect="ok"), "expect must be"),
    (dict(name="a", arch="gfx1250", spec=[1]), "spec must be"),
])
def test_bad_config_is_rejected_at_construction(kwargs, msg):
    with pytest.raises(ConfigError, match=msg):
        Config(**kwargs)


def test_reject_needs_a_reason():
    with pytest.raises(ConfigError):
        reject("")


def test_duplicate_names_in_a_family_fail_at_load():
    mod = types.ModuleType("dupfam")
    mod.FAMILY = "dup"
    mod.CONFIGS = [Config("same", arch="gfx1250"), Config("other", arch="gfx1250"),
                   Config("same", arch="gfx1250", spec={"x": 1})]
    with pytest.raises(ConfigError, match=r"duplicate config name 'same' in family dup \(entries 0 and 2\)"):
        family_from_module(mod)


def test_module_without_family_or_configs():
    mod = types.ModuleType("nofam")
    with pytest.raises(ConfigError, match="does not define FAMILY"):
        family_from_module(mod)
    mod.FAMILY = "x"
    with pytest.raises(ConfigError, match="does not define CONFIGS"):
        family_from_module(mod)


def test_ir_core_is_discovered():
    fams = {f.name: f for f in load_families()}
    assert "ir_core" in fams
    names = [c.name for c in fams["ir_core"].configs]
    assert "constants_f32" in names and "lds_barrier" in names
    assert fams["ir_core"].get("lds_barrier").arch == "gfx1250"
    assert dict(fams["ir_core"].get("lds_barrier").spec) == {"kernel": "lds_barrier"}


def test_only_unknown_family_is_an_error():
    with pytest.raises(ConfigError, match="unknown family: nosuch"):
        load_families(only=["nosuch"])


def test_family_may_be_empty_but_is_loaded():
    f = Family("empty", ())
    assert f.configs == ()


BAD_MODULE = ('from parity.config import Config, reject\nFAMILY = "trial_bad"\nCONFIGS = [\n'
              '    Config("fine", arch="gfx1250", spec={}),\n    {bad},\n]\n')


@pytest.mark.parametrize("bad,msg", [
    ('Config("bad name", arch="gfx1250", spec={})',
     "config name 'bad name' is not a stable identifier ([A-Za-z0-9_][A-Za-z0-9_.+-]*)"),
    ('Config("x", arch="gfx1250", spec={}, expect=reject(""))',
     "Expect('reject') needs the exact reason (non-empty str)"),
])
def test_a_malformed_config_names_its_file_and_line(tmp_path, monkeypatch, bad, msg):
    # before, the one error line gave the rule only: with seven family files, no place to look
    pkg = tmp_path / f"trial_bad_configs_{tmp_path.name[-1]}"  # a new package per case (sys.modules)
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "fam.py").write_text(BAD_MODULE.replace("{bad}", bad))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as e:
        load_families(pkg.name)
    assert str(e.value) == f"{pkg / 'fam.py'}:5: {msg}"
    # a checkout's config files run by path (a non-editable install inside a checkout)
    import parity.config as C
    monkeypatch.setattr(C, "checkout_configs_dir", lambda: pkg)
    with pytest.raises(ConfigError) as e:
        load_families()
    assert str(e.value) == f"{pkg / 'fam.py'}:5: {msg}"

"""Completeness of the family registries (docs/contributing.md).

Each engine registers a family once: python_engine/families/registry.py and
cpp_engine/include/cpp_engine/families.def (read by src/families/registry.cpp,
the C API fuzzer and, through cpe_family_*, the binding). Every other list
that names all families is derived from those two or checked here: a family
that lacks its configs, golden shard, numerics plan or opt-out, C header, C++
twin, fuzzer row or docs row fails with a line naming the family and what is
missing.

The field list of a family exists in several copies (Python FIELDS; the C++
fields(); the C++ spec struct with its defaults; the C struct; the C->C++
conversion to_cpp; the C default constructor). Every copy is compared with
every other here: names, order and kinds through the registry text and the C
struct (cffi), defaults through both engines' spec_fields, and to_cpp by
probing each field with values the Python engine reacts to.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import cpp_engine
import python_engine
from cpp_engine import _binding
from parity.config import load_families
from parity.gate.fuzz_generate import families as fuzz_families
from parity.sim.plans import PLANS, stray_plans
from python_engine.families.registry import FAMILY_MODULES

ROOT = Path(__file__).resolve().parent.parent
KIND_LETTER = {"int": "i", "str": "s", "bool": "b", "float": "f"}
DEF_ROW = re.compile(r"^CPE_FAMILY\((\w+), (\w+), ([\w:]+)\)$", re.M)


def _def_rows() -> list:
    return DEF_ROW.findall((ROOT / "cpp_engine/include/cpp_engine/families.def").read_text())


def _python_fields_text(mod) -> str:
    return ",".join(f"{f.name}:{KIND_LETTER[f.kind]}" for f in mod.FIELDS)


def test_both_registries_name_the_same_families_in_the_same_order():
    cpp = _binding.registry()
    assert tuple(n for n, _, _ in cpp) == python_engine.FAMILIES == cpp_engine.FAMILIES
    assert [(n, p) for n, p, _ in _def_rows()] == [(n, p) for n, p, _ in cpp]
    assert fuzz_families() == python_engine.FAMILIES  # the Python fuzzer's rows


@pytest.mark.parametrize("mod", FAMILY_MODULES, ids=lambda m: m.FAMILY)
def test_family_is_complete(mod):
    name = mod.FAMILY
    missing = []
    fams = {f.name: f for f in load_families()}
    fam = fams.get(name)
    if fam is None or not fam.configs:
        missing.append(f"configs (parity/configs/{name}.py with FAMILY = {name!r} and CONFIGS)")
    if not (ROOT / "golden" / f"{name}.json").is_file():
        missing.append(f"golden shard golden/{name}.json (parity write)")
    if fam is not None and (name in PLANS) == bool(fam.numerics_opt_out):
        missing.append(f"exactly one of: a numerics plan (parity/sim/plans/{name}.py) or NUMERICS_OPT_OUT "
                       f"with its reason in parity/configs/{name}.py")
    if not (ROOT / "cpp_engine/include/cpp_engine" / f"{name}.h").is_file():
        missing.append(f"C header cpp_engine/include/cpp_engine/{name}.h")
    if not (ROOT / "cpp_engine/src/api" / f"{name}.cpp").is_file():
        missing.append(f"C entry points cpp_engine/src/api/{name}.cpp")
    layer = mod.__name__.split(".")[1]  # kernels or families
    twin = ROOT / "cpp_engine/src" / layer / f"{name}.cpp"
    if not twin.is_file() and not (ROOT / "cpp_engine/src" / layer / name).is_dir():
        missing.append(f"C++ twin cpp_engine/src/{layer}/{name}.cpp of {mod.__name__}")
    docs = (ROOT / "docs/families.md").read_text()
    if f"| `{name}` |" not in docs:
        missing.append(f"a row | `{name}` | in the table of docs/families.md")
    assert not missing, f"family {name} lacks: " + "; ".join(missing)



def test_every_plan_module_is_a_family_s():
    """A plan module is found by its name (parity/sim/plans): one named after no
    family (a typo, a removed family) would never run."""
    assert stray_plans(python_engine.FAMILIES) == []
    assert set(PLANS) == {f.name for f in load_families() if not f.numerics_opt_out}

def test_docs_table_lists_the_families_in_registry_order():
    docs = (ROOT / "docs/families.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \|", docs, re.M)
    assert tuple(rows) == python_engine.FAMILIES


@pytest.mark.parametrize("mod", FAMILY_MODULES, ids=lambda m: m.FAMILY)
def test_every_copy_of_the_field_list_agrees(mod):
    name = mod.FAMILY
    cpp = {n: t for n, _, t in _binding.registry()}
    assert cpp[name] == _python_fields_text(mod), "C++ fields() differs from the Python FIELDS"
    fam = _binding._BY_FAMILY[name]
    assert [(n, k) for n, k in fam.fields] == [(f.name, f.kind) for f in mod.FIELDS], \
        "the C struct's members differ from the Python FIELDS"
    assert cpp_engine.spec_fields(name) == python_engine.spec_fields(name), \
        "the C default constructor (from the C++ spec struct) differs from the Python defaults"


def _probes(f) -> list:
    """Values of field ``f`` other than its default that the rules see."""
    if f.kind == "int":
        return [v for v in (-1, 0, 1, 3, 7, 64, 1 << 40) if v != f.default]
    if f.kind == "bool":
        return [not f.default]
    if f.kind == "float":
        return [v for v in (-1.5, 0.0, 0.25, 1e300, float("nan")) if v != f.default]
    return [v for v in ("zz", None, "fp16", "cshuffle") if v != f.default]


def _outcome(E, family, spec):
    try:
        r = E.lower(family, spec, "gfx1250", "llvm23")
        return ("ok", r.kernel, r.text)
    except E.SpecRejected as e:
        return ("rejected", e.reason)


@pytest.mark.parametrize("mod", FAMILY_MODULES, ids=lambda m: m.FAMILY)
def test_every_field_reaches_the_cpp_engine(mod):
    """to_cpp copies each C struct member into the C++ spec by hand: a member it
    misses would leave the C++ default. For every field, some value changes the
    Python engine's outcome (from the defaults, or from the first shipped config
    where it does: ``num_load_waves`` only matters under ``pipeline = wavelet``),
    and the C++ engine's outcome is the same."""
    name = mod.FAMILY
    fam = {f.name: f for f in load_families()}[name]
    bases = [{}] + [dict(c.spec) for c in fam.configs if c.arch == "gfx1250"]
    deaf = []
    for f in mod.FIELDS:
        seen = False
        for base in bases:
            before = _outcome(python_engine, name, base)
            for v in _probes(f):
                spec = {**base, f.name: v}
                py = _outcome(python_engine, name, spec)
                assert _outcome(cpp_engine, name, spec) == py, f"{name}.{f.name} = {v!r} on {base}: engines differ"
                seen = seen or py != before
            if seen:
                break
        if not seen:
            deaf.append(f.name)
    assert not deaf, f"no probe value changes the outcome of {name} fields {deaf}: add a probe"

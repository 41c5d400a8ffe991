"""Spec generation per family (deterministic from seed, family and index).

Spec ``i`` of ``family`` under ``seed`` is a pure function of the three (a
``random.Random`` seeded with the text ``"seed/family/i"``, independent of
``PYTHONHASHSEED``), so a worker generates its own batch and the parent can
regenerate any spec to shrink it.

A spec starts from a shipped config of the family (its spec, arch and
flavors; most of the time) or from the defaults, then gets 1 to 3 mutations
of a field, each drawn from one category:

* ``in_range``: a value some config of the family uses for that field;
* ``boundary``: 0, 1, -1, powers of two and their neighbours, the 32/64-bit
  limits, a used value +-1, doubled or halved; for a float field +-0.0,
  +-inf, NaNs with payloads (quiet, signalling, negative), the smallest
  subnormal, the f32 subnormal/normal/max limits and their rounding ties,
  DBL_MAX, 0.1, an int up to 2**53, a used value negated, halved or doubled;
* ``huge``: beyond 64 bits (2**63, 2**64, 10**30, -2**63-1); for a float
  field also ints just beyond 2**53 and 10**400;
* ``wrong_type``: a value of another kind (str for int, int for str, bool,
  float, None, list, dict, bytes; for a float field "0.5", "nan", bool,
  2**53+1);
* ``subclass``: a LyingInt / LyingFloat / LyingStr (fuzz_values.py) of a used value;
* ``text``: a used string with an embedded NUL, a lone surrogate, a control
  character (newline, tab, DEL, U+0085), a forged line, the binding's old
  placeholder text, non-ASCII, case changes, 300 characters;
* ``missing`` (the field is dropped) and ``unknown`` (a key no family has,
  also a non-str key).

A value mutation of ``split_k`` or ``split_k_cluster`` adds the other at its
default when the spec lacks it (a spec gives both or neither, spec_front's
pair rule), so the value reaches the field's rules; ``missing`` on one of a
given pair exercises the pair rule.

Besides the shipped configs, :data:`EXTRA_BASES` seeds specs no config holds
(configs would add golden entries): ir_core's ``float_field`` kernel with a few
``value`` values, so the float field reaches a kernel name and the IR.

Arch and flavor are the config's and a canonical flavor or alias most of the
time, sometimes another arch of the table or an odd value.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from parity.gate.fuzz_values import LyingFloat, LyingInt, LyingStr, float_from_bits
from parity.config import load_families
import python_engine
import spec_front

ARCHES = ("gfx1250", "gfx942", "gfx950", "gfx1100", "gfx1201")
FLAVORS = ("llvm20", "llvm22", "llvm23", "llvm24")
ODD_NAMES = ("", "GFX1250", "gfx1250 ", "gfx1250\x00", "llvm23\x00", "x\ny", "\ud800", "llvm", None, 5,
             LyingStr("gfx1250"), LyingStr("llvm23"), "llvm23\n", "ｇfx1250")

_INT_BOUNDARY = (0, 1, -1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 96, 127, 128, 129, 255, 256,
                 257, 512, 1023, 1024, 1025, 2048, 4096, 8192, 65535, 65536, 65537, (1 << 31) - 1, 1 << 31,
                 (1 << 32) - 1, 1 << 32, 1 << 53, (1 << 63) - 1, -(1 << 63), -(1 << 31), -2, -1000)
_INT_HUGE = (1 << 63, 1 << 64, 10 ** 30, -(1 << 63) - 1, -(10 ** 30), (1 << 63) + 7)
_WRONG = ("8", 8.0, 1.5, float("nan"), True, False, None, [], {}, [8], b"bf16", (1,), "", 0, -1, "null")
_FLOAT_BOUNDARY = (0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 0.1, -2.5, 3, -7, 1 << 53, -(1 << 53), (1 << 53) - 1, 1 << 24,
                   (1 << 24) + 1, float("inf"), float("-inf"), float("nan"), float_from_bits(0x7FF0000000000001),
                   float_from_bits(0x7FF4000000000000), float_from_bits(0xFFF8000000000000),
                   float_from_bits(0x7FF8DEADBEEF0001), float_from_bits(0xFFFFFFFFFFFFFFFF),
                   5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
                   -1.7976931348623157e308, 1e308, 3.4028234663852886e38, 3.4028235677973366e38,
                   3.4028235677973362e38, 3.4028235e38, 1.1754943508222875e-38, 1.401298464324817e-45,
                   7.006492321624085e-46, 7.006492321624087e-46, 1e-40, 65504.0, 65520.0, 1 + 2 ** -24,
                   1 + 3 * 2 ** -24, 1e300)
_FLOAT_HUGE = ((1 << 53) + 1, -(1 << 53) - 1, (1 << 53) + 2, 1 << 63, 1 << 64, 10 ** 30, 10 ** 400, -(10 ** 400))
_FLOAT_WRONG = ("0.5", "nan", "inf", "0x3FE0000000000000", True, False, (1 << 53) + 1, None, [0.5], b"0.5", "")
_TEXT_FORMS = ("{v}\x00", "\x00{v}", "{v}\ud800", "\udfff", "{v}\n", "x\nkernel evil\naot yes", "{v}\t", "{v}\x7f",
               "{v}\x85", "\x01cpe-unrepresentable-pipeline\x01", "\x01cpe-unrepresentable-dtype\x01", "{V}",
               "{v} ", " {v}", "", "é{v}", "{v}\u200b", "{v}" * 40, "a" * 300, "{v}'", "{v}\\n", "{v};x=1",
               "{v}=", "ｂｆ16", "{v}\r",
               # issue 24: line/paragraph separators and the 4096-byte string cap (at it, one past it in bytes)
               "{v}\u2028", "\u2029{v}", "a" * 4096, "a" * 4097, "\u00e9" * 2048 + "a", "{v}" * 1100)
_UNKNOWN_KEYS = ("bogus", "Dtype", "tile", "split_K", "", "dtype ", "x\ny", 5, None, ("dtype",), "\ud800")


#: family -> extra ``(spec, arch, flavors)`` seeds (module docstring).
EXTRA_BASES = {
    "ir_core": tuple(({"kernel": "float_field", "value": v}, "gfx1250", ("llvm20", "llvm22", "llvm23"))
                     for v in (0.5, -0.0, 5e-324, 3.4028235e38)),
}


@dataclass(frozen=True)
class FieldInfo:
    """One spec field: name, kind (int | str | bool | float), default, the
    values the family's configs use for it."""

    name: str
    kind: str
    default: object
    seen: tuple


@dataclass(frozen=True)
class FamilyInfo:
    """What generation needs of a family: its fields and its configs as
    ``(spec, arch, flavors)``."""

    name: str
    fields: tuple
    bases: tuple


def _kind(default) -> str:
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, float):
        return "float"
    if isinstance(default, int):
        return "int"
    return "str"


@lru_cache(maxsize=None)
def family_info(family: str) -> FamilyInfo:
    """Fields (from the Python engine's spec field list) and config seeds
    (from parity/configs) of ``family``."""

    fams = {f.name: f for f in load_families()}
    configs = fams[family].configs if family in fams else ()
    bases = tuple((dict(c.spec), c.arch, tuple(c.flavors)) for c in configs) + EXTRA_BASES.get(family, ())
    fields = []
    for name, default in python_engine.spec_fields(family):
        seen = {default}
        for spec, _, _ in bases:
            if name in spec:
                try:
                    seen.add(spec[name])
                except TypeError:
                    pass
        kind = _kind(default)
        fields.append(FieldInfo(name, kind, default, tuple(sorted(seen, key=repr))))
    return FamilyInfo(family, tuple(fields), bases)


def families() -> tuple:
    """Every family the Python engine knows, in its order."""
    return tuple(python_engine.FAMILIES)


def _boundary(rng: random.Random, f: FieldInfo):
    if f.kind == "int":
        ints = [v for v in f.seen if type(v) is int]
        if ints and rng.random() < 0.5:
            v = rng.choice(ints)
            return rng.choice((v - 1, v + 1, v * 2, v // 2, -v, v * 3, v + 32, v - 32))
        return rng.choice(_INT_BOUNDARY)
    if f.kind == "bool":
        return rng.choice((True, False))
    if f.kind == "float":
        nums = [v for v in f.seen if type(v) in (int, float)]
        if nums and rng.random() < 0.3:
            v = float(rng.choice(nums))
            return rng.choice((-v, v / 2, v * 2, v * 3))
        return rng.choice(_FLOAT_BOUNDARY)
    strs = [v for v in f.seen if isinstance(v, str)]
    return rng.choice(strs) if strs and rng.random() < 0.7 else rng.choice(("", None, "default", "none"))


def _text(rng: random.Random, f: FieldInfo):
    strs = [v for v in f.seen if isinstance(v, str) and v] or ["bf16"]
    v = rng.choice(strs)
    form = rng.choice(_TEXT_FORMS)
    return form.replace("{V}", v.upper()).replace("{v}", v)


def mutate_value(rng: random.Random, f: FieldInfo, category: str):
    """A value for field ``f`` of the given category (see module docstring)."""
    if category == "in_range":
        return rng.choice(f.seen)
    if category == "boundary":
        return _boundary(rng, f)
    if category == "huge":
        return rng.choice(_FLOAT_HUGE if f.kind == "float" else _INT_HUGE)
    if category == "wrong_type":
        return rng.choice(_FLOAT_WRONG if f.kind == "float" and rng.random() < 0.7 else _WRONG)
    if category == "subclass":
        v = rng.choice(f.seen)
        if f.kind == "float":
            return LyingFloat(rng.choice((float(v), -0.0, 5e-324, float("inf"), float_from_bits(0x7FF0000000000001))))
        if type(v) is int:
            return LyingInt(v)
        if isinstance(v, str):
            return LyingStr(v)
        return rng.choice((LyingInt(1), LyingStr("bf16")))
    if category == "text":
        return _text(rng, f)
    raise ValueError(category)


_CATEGORIES = (("in_range", 30), ("boundary", 30), ("huge", 4), ("wrong_type", 8), ("subclass", 6),
               ("text", 10), ("missing", 6), ("unknown", 3))
_CAT_NAMES = tuple(c for c, _ in _CATEGORIES)
_CAT_WEIGHTS = tuple(w for _, w in _CATEGORIES)


def _pair(info: FamilyInfo, spec: dict, name: str) -> None:
    """A value mutation of one split-K field gives its partner too (its default)
    when the spec lacks it, so the mutated value reaches the field's own rules;
    the ``missing`` category still drops one of the pair (the pair rule,
    spec_front.group_reason)."""
    group = spec_front.group_fields(tuple(f.name for f in info.fields))
    if name in group:
        for f in info.fields:
            if f.name in group and f.name not in spec:
                spec[f.name] = f.default


def generate(seed: int, family: str, index: int) -> tuple:
    """Spec ``index`` of ``family``: ``(spec, arch, flavor, categories)``."""
    rng = random.Random(f"{seed}/{family}/{index}")
    info = family_info(family)
    r = rng.random()
    if info.bases and r < 0.75:
        spec, arch, flavors = rng.choice(info.bases)
        spec = dict(spec)
        flavor = rng.choice(flavors + ("llvm24",) if "llvm23" in flavors else flavors)
    else:
        spec, arch, flavor = {}, "gfx1250", rng.choice(FLAVORS)
        if r > 0.95:  # every field spelled out
            spec = {f.name: f.default for f in info.fields}
    cats = []
    for _ in range(1 + (rng.random() < 0.4) + (rng.random() < 0.15)):
        cat = rng.choices(_CAT_NAMES, _CAT_WEIGHTS)[0]
        f = rng.choice(info.fields)
        cats.append(f"{cat}:{f.name}")
        if cat == "missing":
            spec.pop(f.name, None)
        elif cat == "unknown":
            spec[rng.choice(_UNKNOWN_KEYS)] = rng.choice((1, "x", None))
        else:
            spec[f.name] = mutate_value(rng, f, cat)
            _pair(info, spec, f.name)
    r = rng.random()
    if r < 0.04:
        arch = rng.choice(ARCHES)
        cats.append("arch")
    elif r < 0.06:
        arch = rng.choice(ODD_NAMES)
        cats.append("odd_arch")
    elif r < 0.08:
        flavor = rng.choice(ODD_NAMES)
        cats.append("odd_flavor")
    return spec, arch, flavor, tuple(cats)

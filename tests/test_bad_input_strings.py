"""Issue 24, the engines' side: a family name that formats itself, Unicode
line/paragraph separators, the string length cap (same cap and reason text
in both engines, checked before any work), and the C API's whole-reason
read-back (``cpe_last_reason``: the engine runs once, however long the reason)."""
from __future__ import annotations

import threading

import pytest

from python_engine.spec.fields import MAX_STRING_BYTES

ARCH, FLAVOR = "gfx1250", "llvm23"
NOT_PRINTABLE = ("must be printable UTF-8 text (no control characters, line or paragraph separators, NUL or "
                 "lone surrogates)")
TOO_LONG = f"must be at most {MAX_STRING_BYTES} bytes of UTF-8 text"


class ForgedName(str):
    """Issue 24 finding 1: a str subclass whose own __str__/__format__ forge a line."""

    def __str__(self):
        return "forged\nline"

    def __format__(self, spec):
        return "forged\nline"

    def __repr__(self):
        return "forged\nline"


def _reason(E, family, spec, arch=ARCH, flavor=FLAVOR):
    with pytest.raises(E.SpecRejected) as info:
        E.lower(family, spec, arch, flavor)
    assert E.validate(family, spec, arch, flavor) == info.value.reason
    return info.value.reason


@pytest.mark.parametrize("spec,want", [
    ({"zz": 1}, "spec field 'zz' is not a field of family 'ir_core'"),
    ({"a\nb": 1}, f"a spec field name of family 'ir_core' {NOT_PRINTABLE}"),
    ({5: 1}, "spec field names must be strings (family 'ir_core')"),
    ([], "spec for family 'ir_core' must be a mapping of field names to values"),
])
def test_family_name_subclass_never_formats_itself(both, spec, want):
    P, C = both
    assert _reason(P, ForgedName("ir_core"), spec) == want
    assert _reason(C, ForgedName("ir_core"), spec) == want


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85", "\n", "\r", "\x0b", "\x0c", "\x1c"])
@pytest.mark.parametrize("family,field", [("ir_core", "kernel"), ("conv_launch", "name_prefix"),
                                          ("split_k_policy", "dtype")])
def test_line_separators_refused_in_string_fields(engine, sep, family, field):
    assert _reason(engine, family, {field: f"a{sep}b"}) == f"spec field '{field}' {NOT_PRINTABLE}"


@pytest.mark.parametrize("sep", ["\u2028", "\u2029"])
def test_line_separators_refused_in_names(engine, sep):
    assert _reason(engine, "ir_core", {}, arch=f"gfx1250{sep}") == f"arch {NOT_PRINTABLE}"
    assert _reason(engine, "ir_core", {}, flavor=f"llvm23{sep}") == f"flavor {NOT_PRINTABLE}"
    assert _reason(engine, f"ir_core{sep}", {}) == f"family {NOT_PRINTABLE}"
    assert _reason(engine, "ir_core", {f"k{sep}": 1}) == f"a spec field name of family 'ir_core' {NOT_PRINTABLE}"


def test_string_cap_is_the_c_apis():
    import cpp_engine
    from cpp_engine._ffi import lib
    assert MAX_STRING_BYTES == lib.CPE_MAX_STRING_BYTES == cpp_engine._binding.MAX_STRING_BYTES == 4096


@pytest.mark.parametrize("value,ok", [
    ("k" * MAX_STRING_BYTES, True),                 # at the cap: the family rule decides
    ("k" * (MAX_STRING_BYTES + 1), False),
    ("\u00e9" * (MAX_STRING_BYTES // 2), True),     # 2 bytes each: exactly the cap
    ("\u00e9" * (MAX_STRING_BYTES // 2) + "k", False),
    ("\U0001F600" * (MAX_STRING_BYTES // 4 + 1), False),
    ("\x00" * (MAX_STRING_BYTES + 1), False),       # too long is said before unprintable
    ("\ud800" * (MAX_STRING_BYTES // 3 + 1), False),
])
def test_string_cap_counts_utf8_bytes(engine, value, ok):
    r = _reason(engine, "ir_core", {"kernel": value})
    if ok:
        assert r.startswith("kernel must be one of") and r.endswith(f"got '{value}'")
    else:
        assert r == f"spec field 'kernel' {TOO_LONG}"


def test_huge_string_field_refused_by_its_length(engine):
    # issue 24 finding 14: 300 MiB in name_prefix (the input); the
    # engine reads no further than the cap (docs/cpp_engine.md "Strings")
    huge = "a" * (300 << 20)
    assert _reason(engine, "conv_launch", {"name_prefix": huge}) == f"spec field 'name_prefix' {TOO_LONG}"
    assert _reason(engine, "conv_launch", {"name_prefix": "a" * (100 << 20)}) == \
        f"spec field 'name_prefix' {TOO_LONG}"


@pytest.mark.parametrize("where", ["arch", "flavor", "family"])
def test_long_names_refused_by_their_length(engine, where):
    name = "g" * (MAX_STRING_BYTES + 1)
    kw = {"arch": ARCH, "flavor": FLAVOR, where: name}
    fam = kw.pop("family", "ir_core")
    assert _reason(engine, fam, {}, **kw) == f"{where} {TOO_LONG}"
    # a name C cannot carry (NUL, lone surrogate) that is also too long: length first
    kw[where] = "\ud800" * (MAX_STRING_BYTES // 3 + 1) if where != "family" else "\x00" * (MAX_STRING_BYTES + 1)
    fam = kw.pop("family", "ir_core")
    assert _reason(engine, fam, {}, **kw) == f"{where} {TOO_LONG}"


def _cffi_spec(fam_prefix, **strs):
    from cpp_engine._ffi import ffi, lib
    spec = ffi.new(f"{fam_prefix}_spec *", getattr(lib, f"{fam_prefix}_spec_default")())
    keep = []
    for k, v in strs.items():
        buf = ffi.new("char[]", v)
        keep.append(buf)
        setattr(spec, k, buf)
    return spec, keep


def test_c_api_reports_the_whole_reason_in_one_call():
    from cpp_engine._ffi import ffi, lib
    import python_engine
    value = "k" * 3000
    want = python_engine.validate("ir_core", {"kernel": value}, ARCH, FLAVOR)
    assert len(want) > 3000
    spec, keep = _cffi_spec("cpe_ir_core", kernel=value.encode())
    small = ffi.new("char[]", 16)
    assert lib.cpe_ir_core_validate(spec, b"gfx1250", b"llvm23", small, 16) == lib.CPE_REJECTED
    assert ffi.string(small).decode() == want[:15]
    need = lib.cpe_last_reason(ffi.NULL, 0)
    assert need == len(want.encode()) + 1
    whole = ffi.new("char[]", need)
    assert lib.cpe_last_reason(whole, need) == need
    assert ffi.string(whole).decode() == want
    # a short buffer gets a NUL-terminated prefix; after CPE_OK the reason is empty
    part = ffi.new("char[]", 5)
    assert lib.cpe_last_reason(part, 5) == need and ffi.string(part) == want[:4].encode()
    ok, keep2 = _cffi_spec("cpe_ir_core")
    assert lib.cpe_ir_core_validate(ok, b"gfx1250", b"llvm23", small, 16) == lib.CPE_OK
    assert lib.cpe_last_reason(ffi.NULL, 0) == 1


def test_c_api_refuses_an_over_long_c_string_without_reading_it_whole():
    from cpp_engine._ffi import ffi, lib
    spec, keep = _cffi_spec("cpe_conv_launch", name_prefix=b"a" * (8 << 20))
    buf = ffi.new("char[]", 256)
    assert lib.cpe_conv_launch_validate(spec, b"gfx1250", b"llvm23", buf, 256) == lib.CPE_REJECTED
    assert ffi.string(buf).decode() == f"spec field 'name_prefix' {TOO_LONG}"
    # the arch is read no further than the cap either
    ok, keep2 = _cffi_spec("cpe_ir_core")
    assert lib.cpe_ir_core_validate(ok, b"g" * (8 << 20), b"llvm23", buf, 256) == lib.CPE_REJECTED
    assert ffi.string(buf).decode() == f"arch {TOO_LONG}"


def test_last_reason_is_per_thread():
    from cpp_engine._ffi import ffi, lib
    got = {}

    def run(i):
        spec, keep = _cffi_spec("cpe_ir_core", kernel=f"nope{i}".encode() * 300)
        for _ in range(50):
            lib.cpe_ir_core_validate(spec, b"gfx1250", b"llvm23", ffi.NULL, 0)
            n = lib.cpe_last_reason(ffi.NULL, 0)
            buf = ffi.new("char[]", n)
            lib.cpe_last_reason(buf, n)
            got.setdefault(i, set()).add(ffi.string(buf).decode())
    ts = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i in range(4):
        assert len(got[i]) == 1
        assert got[i].pop().endswith(f"got '{f'nope{i}' * 300}'")


def test_binding_reads_a_long_reason_in_one_engine_call(monkeypatch):
    import cpp_engine
    from cpp_engine import _binding
    calls = []
    real = _binding._call

    def counting(fn, args):
        def once(buf, n):
            calls.append(n)
            return fn(buf, n)
        return real(once, args)
    monkeypatch.setattr(_binding, "_call", counting)
    value = "k" * 4000
    r = cpp_engine.validate("ir_core", {"kernel": value}, ARCH, FLAVOR)
    assert r.endswith(f"got '{value}'") and len(calls) == 1

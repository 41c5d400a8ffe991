"""The float spec field kind (C double), exercised through ir_core's field
``value`` and its kernel ``float_field`` (docs/ir_text.md "Float field
values", docs/families.md ir_core): both engines give the same bytes or the
same reason for every value, the value's text form keeps its bits and is the
same under a comma-decimal locale, the modules verify with llvmlite, and the
numerics plan checks the stored bits against numpy."""
from __future__ import annotations

import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from locale_helpers import comma_locale_or_skip

import cpp_engine
import python_engine
from parity.gate.fuzz_values import LyingFloat, float_from_bits
from python_engine.kernels.ir_core import KERNELS
from python_engine.spec.fields import Field, float_text, type_reason

NAN_BITS = (0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000123, 0x7FF8DEADBEEF0001, 0xFFFFFFFFFFFFFFFF)

# value -> the 16 hex digits of the double it is read as
ACCEPTED = [
    (0.5, "3FE0000000000000"),
    (-0.0, "8000000000000000"),
    (0.0, "0000000000000000"),
    (5e-324, "0000000000000001"),
    (1e308, "7FE1CCF385EBC8A0"),
    (3.4028235e38, "47EFFFFFE54DAFF8"),
    (float("inf"), "7FF0000000000000"),
    (float("-inf"), "FFF0000000000000"),
    (3, "4008000000000000"),
    (-7, "C01C000000000000"),
    (2 ** 53, "4340000000000000"),
    (-(2 ** 53), "C340000000000000"),
    (LyingFloat(0.1), "3FB999999999999A"),
]

REFUSED = [
    (2 ** 53 + 1, "spec field 'value' is an integer beyond 2**53 (not exactly a double)"),
    (-(2 ** 53) - 1, "spec field 'value' is an integer beyond 2**53 (not exactly a double)"),
    (10 ** 400, "spec field 'value' is an integer beyond 2**53 (not exactly a double)"),
    (True, "spec field 'value' must be a number"),
    (False, "spec field 'value' must be a number"),
    ("0.5", "spec field 'value' must be a number"),
    (None, "spec field 'value' must be a number"),
    ([0.5], "spec field 'value' must be a number"),
] + [(float_from_bits(b), "value must not be NaN (the IR prints every NaN as the canonical NaN), "
      f"got 0x{b:016X}") for b in NAN_BITS]

FLAVORS = ("llvm20", "llvm22", "llvm23")


def _outcome(E, spec, flavor="llvm23", arch="gfx1250"):
    try:
        r = E.lower("ir_core", spec, arch, flavor)
        assert E.validate("ir_core", spec, arch, flavor) is None
        return ("ok", r.kernel, r.text)
    except E.SpecRejected as e:
        assert E.validate("ir_core", spec, arch, flavor) == e.reason
        return ("rejected", e.reason)


def test_float_text_keeps_the_bits():
    for b in NAN_BITS + (0, 1 << 63, 1, 0x7FEFFFFFFFFFFFFF, 0x3FB999999999999A):
        assert float_text(float_from_bits(b)) == f"0x{b:016X}"


def test_kind_check():
    f = Field("x", "float", 0.0)
    assert type_reason(f, 1.5) is None and type_reason(f, float("nan")) is None
    assert type_reason(f, 2 ** 53) is None and type_reason(f, -(2 ** 53)) is None
    assert type_reason(f, 2 ** 53 + 1) == "spec field 'x' is an integer beyond 2**53 (not exactly a double)"
    for bad in (True, "1", None, b"1", 1j):
        assert type_reason(f, bad) == "spec field 'x' must be a number"


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("value,hexbits", ACCEPTED, ids=lambda v: repr(v))
def test_accepted_values(value, hexbits, flavor):
    spec = {"kernel": "float_field", "value": value}
    py = _outcome(python_engine, spec, flavor)
    assert _outcome(cpp_engine, spec, flavor) == py
    assert py[0] == "ok"
    assert py[1] == f"ir_core_float_field_t256_v0x{hexbits}"
    d = float_from_bits(int(hexbits, 16))
    with np.errstate(over="ignore"):
        f32 = float(np.float32(d))  # numpy's RNE cast; overflow to inf
    f32_bits = struct.unpack("<Q", struct.pack("<d", f32))[0]
    assert f"store float 0x{f32_bits:016X}, ptr addrspace(1) %p1, align 4\n" in py[2]
    assert f"store double 0x{hexbits}, ptr addrspace(1) %p2, align 8\n" in py[2]


def test_f32_rounding_in_the_text():
    text = python_engine.lower("ir_core", {"kernel": "float_field", "value": 3.4028235e38}, "gfx1250", "llvm23").text
    assert "store float 0x47EFFFFFE0000000," in text          # FLT_MAX, not inf
    text = python_engine.lower("ir_core", {"kernel": "float_field", "value": 1e308}, "gfx1250", "llvm23").text
    assert "store float 0x7FF0000000000000," in text          # overflow: inf
    text = python_engine.lower("ir_core", {"kernel": "float_field", "value": 5e-324}, "gfx1250", "llvm23").text
    assert "store float 0x0000000000000000," in text          # below half the f32 subnormal: +0
    text = python_engine.lower("ir_core", {"kernel": "float_field", "value": -0.0}, "gfx1250", "llvm23").text
    assert "store float 0x8000000000000000," in text


def test_int_is_the_float_of_the_same_value():
    for E in (python_engine, cpp_engine):
        assert _outcome(E, {"kernel": "float_field", "value": 3}) == _outcome(E, {"kernel": "float_field", "value": 3.0})
        assert dict(E.spec_fields("ir_core"))["value"] == 0.0
        assert type(dict(E.spec_fields("ir_core"))["value"]) is float


@pytest.mark.parametrize("kernel", ["float_field", "constants_f32", "loop_phi"])
@pytest.mark.parametrize("value,reason", REFUSED, ids=lambda v: repr(v)[:40])
def test_refused_values(value, reason, kernel):
    spec = {"kernel": kernel, "value": value}
    for E in (python_engine, cpp_engine):
        assert _outcome(E, spec) == ("rejected", reason), E.ENGINE


def test_nan_payload_crosses_the_c_boundary():
    """The C++ engine prints the NaN bits it was given (cffi passes the double unchanged)."""
    for b in NAN_BITS:
        r = cpp_engine.validate("ir_core", {"value": float_from_bits(b)}, "gfx1250", "llvm23")
        assert r.endswith(f"got 0x{b:016X}")


def test_subclass_is_read_as_its_bits():
    v = LyingFloat(float_from_bits(0x0000000000000001))
    for E in (python_engine, cpp_engine):
        r = E.lower("ir_core", {"kernel": "float_field", "value": v}, "gfx1250", "llvm23")
        assert r.kernel == "ir_core_float_field_t256_v0x0000000000000001"
        assert "abc" not in r.text and "7.0" not in r.text


@pytest.mark.parametrize("kernel", KERNELS)
def test_other_kernels_ignore_value(kernel):
    for E in (python_engine, cpp_engine):
        for value in (1.5, -0.0, float("inf"), 3):
            assert _outcome(E, {"kernel": kernel, "value": value}) == _outcome(E, {"kernel": kernel})


def test_cluster_and_threads_in_the_name():
    spec = {"kernel": "float_field", "value": -2.5, "threads": 64, "cluster": 4}
    py = _outcome(python_engine, spec)
    assert py == _outcome(cpp_engine, spec)
    assert py[1] == "ir_core_float_field_t64_c4_v0xC004000000000000"


def test_llvmlite_parses_and_verifies():
    llvm = pytest.importorskip("llvmlite.binding", reason="llvmlite is in the [test] extra")
    n = 0
    for flavor in ("llvm22", "llvm23"):
        for value, _ in ACCEPTED:
            r = python_engine.lower("ir_core", {"kernel": "float_field", "value": value}, "gfx1250", flavor)
            m = llvm.parse_assembly(r.text)
            m.verify()
            assert m.get_function(r.kernel) is not None
            n += 1
    assert n == 2 * len(ACCEPTED)


def test_numerics_plan_checks_the_stored_bits():
    from parity.sim.numerics import run_case, run_config, _Lowerer
    from parity.sim.plans.ir_core import ir_core_cases
    for value, _ in ACCEPTED:
        if isinstance(value, LyingFloat):
            continue
        o = run_config("ir_core", "float_field", {"kernel": "float_field", "value": value}, "gfx1250")
        assert o.ok and o.cases == 1, (value, o.problems)
    # the check sees a wrong byte: the plan of 0.25 against the kernel of 0.5
    spec = {"kernel": "float_field", "threads": 256, "cluster": 0, "value": 0.25}
    (case,) = ir_core_cases(spec, "gfx1250")
    case.kernels = {"k": ("ir_core", dict(spec, value=0.5), "gfx1250")}
    probs, _ = run_case(case, _Lowerer())
    assert probs and "out: byte" in probs[0]


LOCALE_SCRIPT = r"""
import importlib, locale, sys
locale.setlocale(locale.LC_ALL, "")
assert locale.localeconv()["decimal_point"] == sys.argv[2], locale.localeconv()["decimal_point"]
from parity.gate.fuzz_values import float_from_bits
E = importlib.import_module(sys.argv[1])
out = []
values = [0.5, -0.0, 5e-324, 1e308, 3.4028235e38, 0.1, -2.5, float("inf"), 3, True, 2 ** 53 + 1]
values += [float_from_bits(b) for b in (0x7FF0000000000001, 0xFFF8000000000123)]
for v in values:
    try:
        r = E.lower("ir_core", {"kernel": "float_field", "value": v}, "gfx1250", "llvm23")
        out.append(r.kernel + "\n" + r.text)
    except E.SpecRejected as e:
        out.append(e.reason)
sys.stdout.buffer.write("\x00".join(out).encode())
"""


def _run(module: str, loc: str | None) -> bytes:
    """The outputs of ``module`` in a process whose locale (setlocale(LC_ALL, ""))
    is ``loc`` (LC_NUMERIC included), else C."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LC_") and k != "LANG"}
    env["LC_ALL"] = loc or "C"
    env["LC_NUMERIC"] = loc or "C"
    res = subprocess.run([sys.executable, "-c", LOCALE_SCRIPT, module, "," if loc else "."], env=env,
                         capture_output=True, check=True)
    return res.stdout


def test_text_form_is_locale_independent():
    loc = comma_locale_or_skip()
    plain = _run("python_engine", None)
    assert b"0x8000000000000000" in plain and b"got 0xFFF8000000000123" in plain
    assert _run("python_engine", loc) == plain
    assert _run("cpp_engine", loc) == plain
    assert _run("cpp_engine", None) == plain

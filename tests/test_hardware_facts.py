"""The emulator against the public sources' own statements of the hardware
facts (docs/hardware_facts.md, issue 35, item 2).

The WMMA maps below are written out from each source's description, not from
the emulator: Triton's linear-layout bases (``LinearLayoutConversions.cpp``,
WMMA version 3 = gfx1250, kWidth 8), CK's tile-distribution factors
(``warp_gemm_attribute_wmma.hpp`` + the gfx12 base traits at K = 32) and IREE's
outer/thread/element triples (``IREEGPUAttrs.cpp`` ``getSingleSubgroupLayout``).
Each maps (lane, element) -> (row, column) of the operand's matrix.
"""
from __future__ import annotations

import contextlib
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from parity.sim import fp, hw_facts, rsrc, wmma
from parity.sim.rsrc import RsrcRefused

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "hardware_facts.md"


@contextlib.contextmanager
def reading(**kw):
    """Run under other readings ({row with '-' as '_': value}), then restore."""
    hw_facts.assume({k.replace("_", "-"): v for k, v in kw.items()})
    try:
        yield
    finally:
        hw_facts.assume({})


# --- the sources' maps -------------------------------------------------------------

def linear_layout(reg_bases, lane_bases):
    """{(lane, element): (row, col)} of a linear layout: each set bit of the
    register / lane index contributes its basis vector, XOR-combined (Triton's
    LinearLayout semantics)."""
    out = {}
    for lane in range(32):
        for e in range(2 ** len(reg_bases)):
            r = c = 0
            for bits, bases in ((e, reg_bases), (lane, lane_bases)):
                for i, (br, bc) in enumerate(bases):
                    if bits >> i & 1:
                        r ^= br
                        c ^= bc
            out[(lane, e)] = (r, c)
    return out


# Triton wmmaDotOperandToLinearLayout, version 3, operand A as (row m, col k):
# kWidth = 8 registers along k, 16 lanes along m, lane bit 4 along k (depth 2),
# then kDim / (depth * kWidth) = 2 repeats along k (register bit 3).
TRITON_A = linear_layout([(0, 1), (0, 2), (0, 4), (0, 16)], [(1, 0), (2, 0), (4, 0), (8, 0), (0, 8)])
# operand B as (row k, col n): the same with the non-k dimension n
TRITON_B = {le: (k, n) for le, (n, k) in TRITON_A.items()}
# Triton AMDWmmaEncodingAttr::toLinearLayout, version 2/3, as (row m, col n): registers
# along M 1, 2, 4; lanes along N 1..8, lane bit 4 along M 8
TRITON_CD = linear_layout([(1, 0), (2, 0), (4, 0)], [(0, 1), (0, 2), (0, 4), (0, 8), (8, 0)])


def ck_operand(k0=2, klane=2, k1=8):
    """CK AWarpDstrEncodingTrait: K = (K0PerLane, KLane, K1PerLane), outer to inner;
    P (lane) = KLane * 16 + M lane; Y (element) = K0 * K1PerLane + K1."""
    out = {}
    for a in range(k0):
        for b in range(klane):
            for c in range(k1):
                for m in range(16):
                    out[(b * 16 + m, a * k1 + c)] = (m, (a * klane + b) * k1 + c)
    return out


def ck_cd(cm0=1, cmlane=2, cm1=8):
    """CK CWarpDstrEncodingTrait: M = (CM0PerLane, CMLane, CM1PerLane), N lane 16;
    lane = CMLane * 16 + n; element = CM0 * CM1PerLane + CM1."""
    return {(b * 16 + n, a * cm1 + c): ((a * cmlane + b) * cm1 + c, n)
            for a in range(cm0) for b in range(cmlane) for c in range(cm1) for n in range(16)}


def iree(outer, thread, tstrides, element):
    """IREE MMASingleSubgroupLayout of a 2-D operand: lane = sum thread_i * tstride_i;
    position along dim i = (o_i * thread_i + t_i) * element_i + x_i; the element
    index runs over outer then element, row-major."""
    out = {}
    for o0 in range(outer[0]):
        for o1 in range(outer[1]):
            for t0 in range(thread[0]):
                for t1 in range(thread[1]):
                    lane = t0 * tstrides[0] + t1 * tstrides[1]
                    for x0 in range(element[0]):
                        for x1 in range(element[1]):
                            e = ((o0 * outer[1] + o1) * element[0] + x0) * element[1] + x1
                            out[(lane, e)] = ((o0 * thread[0] + t0) * element[0] + x0,
                                              (o1 * thread[1] + t1) * element[1] + x1)
    return out


IREE_A = iree((1, 1), (16, 2), (1, 16), (1, 16))        # gfx12Wmma16xK(32)
IREE_B = iree((1, 1), (2, 16), (16, 1), (16, 1))        # gfx12WmmaKx16(32)
IREE_CD = iree((1, 1), (2, 16), (16, 1), (8, 1))        # gfx12WmmaAcc16x16
IREE_GFX11_CD = iree((8, 1), (2, 16), (16, 1), (1, 1))  # WMMAR3_F32 accumulator


# --- the emulator's maps, read through its own unpack path ---------------------------

def _distinct(kind: str, n: int) -> np.ndarray:
    """n distinct positive values as the kind's register contents."""
    if kind == "bf16":
        return (0x3F80 + np.arange(n)).astype(np.uint16)      # distinct bit patterns, all normal
    return (1.0 + np.arange(n)).astype(np.float16)           # integers exact in half


def emulator_map(operand: str, kind: str) -> dict:
    """{(lane, element): (row, col)} the emulator gives ``operand`` (A, B, CD)."""
    if operand == "CD":
        frag = np.arange(256, dtype=np.float32).reshape(32, 8) + 1
        mat = wmma.unpack_cd(frag)
    else:
        frag = _distinct(kind, 512).reshape(32, 16)
        mat = (wmma.unpack_a if operand == "A" else wmma.unpack_b)(frag, kind)
        frag = wmma._to64(frag, kind)
    where = {float(v): rc for rc, v in np.ndenumerate(mat)}
    assert len(where) == mat.size
    return {(l, e): where[float(frag[l, e])] for l in range(frag.shape[0]) for e in range(frag.shape[1])}


@pytest.mark.parametrize("kind", ["bf16", "f16"])
def test_wmma_ab_maps_equal_triton_and_ck(kind):
    assert hw_facts.value("WMMA-AB-layout") == "blocks8"
    a, b = emulator_map("A", kind), emulator_map("B", kind)
    ck = ck_operand()
    assert a == TRITON_A == ck
    assert b == TRITON_B == {le: (k, m) for le, (m, k) in ck.items()}
    # spot values, from the sources' prose: lane 16 element 0 is k = 8; element 8 is k = 16 (+8)
    assert a[(16, 0)] == (0, 8) and a[(16, 8)] == (0, 24) and a[(5, 9)] == (5, 17)


@pytest.mark.parametrize("kind", ["bf16", "f16"])
def test_wmma_ab_other_reading_is_ireees(kind):
    assert emulator_map("A", kind) != IREE_A  # the sources disagree (docs/hardware_facts.md)
    with reading(WMMA_AB_layout="contiguous16"):
        assert emulator_map("A", kind) == IREE_A
        assert emulator_map("B", kind) == IREE_B


def test_wmma_cd_map_equals_all_three_sources():
    cd = emulator_map("CD", "f32")
    assert cd == TRITON_CD == ck_cd() == IREE_CD
    assert cd[(17, 3)] == (11, 1)
    with reading(WMMA_CD_layout="interleaved"):
        assert emulator_map("CD", "f32") == IREE_GFX11_CD


def test_shared_k_permutation_leaves_the_product_unchanged():
    rng = np.random.default_rng(35)
    A = rng.integers(-8, 8, (16, 32)).astype(np.float16)
    B = rng.integers(-8, 8, (32, 16)).astype(np.float16)
    C = rng.integers(-8, 8, (16, 16)).astype(np.float32)
    fa, fb, fc = wmma.pack_a(A), wmma.pack_b(B), wmma.pack_cd(C)   # loaded under blocks8
    want = A.astype(np.float64) @ B.astype(np.float64) + C
    with reading(WMMA_AB_layout="contiguous16"):                  # executed under IREE's reading
        d = wmma.unpack_cd(wmma.wmma_f32_16x16x32(fa, fb, fc, "f16"))
    assert np.array_equal(d, want.astype(np.float32))
    with reading(WMMA_CD_layout="interleaved"):
        d = wmma.unpack_cd(wmma.wmma_f32_16x16x32(fa, fb, fc, "f16"))
    assert not np.array_equal(d, want.astype(np.float32))


# --- conversions ------------------------------------------------------------------------

def _rne_bf16(x: float) -> int:
    """bfloat16 bits of a finite float32 value by exact arithmetic (IEEE RNE)."""
    v = Fraction(float(np.float32(x)))
    if v == 0:
        return 0x8000 if np.signbit(np.float32(x)) else 0
    sign = 0x8000 if v < 0 else 0
    v = abs(v)
    e = max(v.numerator.bit_length() - v.denominator.bit_length() - 1, -126)
    while Fraction(2) ** e > v:
        e -= 1
    while Fraction(2) ** (e + 1) <= v:
        e += 1
    e = max(e, -126)                                       # subnormals: the fixed minimum exponent
    q = v / Fraction(2) ** (e - 7)                         # 8 significant bits
    n = int(q)
    r = q - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2):
        n += 1
    val = Fraction(n) * Fraction(2) ** (e - 7)
    if val >= Fraction(2) ** 128:
        return sign | 0x7F80
    return sign | int(np.array(float(val), np.float32).view(np.uint32)) >> 16


def test_fptrunc_bf16_is_rne_against_exact_arithmetic():
    xs = [1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 1 + 2 ** -8 + 2 ** -20, 3.0e38, 3.4e38,
          1e-40, 2 ** -133 * 3, 0.1, -0.0, 65504.0, 1.7014118e38]
    got = fp.f32_to_bf16_hw(np.array(xs, np.float32))
    want = [_rne_bf16(x) for x in xs]
    assert [int(g) for g in got] == want
    assert int(fp.f32_to_bf16_hw(np.float32(1 + 2 ** -8))) == 0x3F80      # tie to even (down)
    assert int(fp.f32_to_bf16_hw(np.float32(1 + 3 * 2 ** -8))) == 0x3F82  # tie to even (up)
    nan = np.array([0x7FA00001], np.uint32).view(np.float32)
    assert int(fp.f32_to_bf16_hw(nan)[0]) == 0x7FE0                       # quieted, top payload kept


def test_fptrunc_bf16_rtz_reading_truncates_and_reference_stays_rne():
    x = np.float32(1 + 3 * 2 ** -8)
    with reading(CVT_F32_BF16="rtz"):
        assert int(fp.f32_to_bf16_hw(x)) == 0x3F81
        assert int(fp.f32_to_bf16_bits(x)) == 0x3F82   # the reference keeps IEEE rounding
    assert int(fp.f32_to_bf16_hw(x)) == 0x3F82


# --- buffer descriptors -------------------------------------------------------------------

def test_gfx1250_oob_select_readings():
    assert rsrc.decode("gfx1250", 0x2, 0, 100).nrec == 100
    with pytest.raises(RsrcRefused, match="OOB_SELECT"):
        rsrc.decode("gfx1250", 0x0, 0, 100)
    with reading(RSRC_gfx1250_OOB_SELECT="either"):
        assert rsrc.decode("gfx1250", 0x0, 0, 100).nrec == 100
        for bad in (0x3, 0x6, 0xA):  # swizzle, type: refused under both readings
            with pytest.raises(RsrcRefused):
                rsrc.decode("gfx1250", bad, 0, 100)


def test_unaligned_buffer_reading():
    assert rsrc.buffer_align_needed("gfx1250", 8) == 1
    with reading(BUFFER_UNALIGNED_gfx1250="natural"):
        assert [rsrc.buffer_align_needed("gfx1250", n) for n in (2, 4, 8, 16)] == [2, 4, 8, 16]
        assert rsrc.buffer_align_needed("gfx1100", 8) == 1
    assert rsrc.buffer_align_needed("gfx1250", 16) == 1


def test_assume_parse_rules():
    assert hw_facts.parse(["WMMA-CD-layout=interleaved,CVT-F32-BF16=rtz"]) == {
        "WMMA-CD-layout": "interleaved", "CVT-F32-BF16": "rtz"}
    for bad, msg in (("X=1", "not a hardware fact"), ("WMMA-CD-layout=x", "no reading"),
                     ("WMMA-CD-layout", "NAME=VALUE"), ("CVT-F32-BF16=rtz,CVT-F32-BF16=rne", "twice")):
        with pytest.raises(hw_facts.AssumeError, match=msg):
            hw_facts.parse(bad)


# --- the table ------------------------------------------------------------------------------

def _rows() -> dict[str, list[str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and len(cells) == 6 and cells[0] not in ("row", "---"):
            rows[cells[0]] = cells
    return rows


def test_table_rows_status_and_code_references():
    rows = _rows()
    assert {"WMMA-AB-layout", "WMMA-CD-layout", "BUFFER-OOB", "CLUSTER-ORDERING", "CVT-F32-BF16",
            "LDS-SIZE-gfx1250", "SWAIT-COUNTERS", "BARRIER-CLUSTER", "CLUSTER-DECODE"} <= set(rows)
    for name, cells in rows.items():
        status = cells[4]
        assert re.match(r"(\*\*)?(confirmed|single source|assumption)", status), (name, status)
        if status.startswith("confirmed"):
            # two independent projects/documents named among the sources
            named = {p for p in ("triton", "CK", "composable_kernel", "IREE", "iree", "rocMLIR", "LLVM",
                                 "LangRef", "AMD RDNA", "AMD CDNA", "MLIR", "IEEE", "AMDHSAKernelDescriptor")
                     if p.lower() in cells[3].lower()}
            assert len(named) >= 2, (name, named)
    for fact in hw_facts.FACTS.values():
        assert fact.name in rows, fact.name
        assert f"`{fact.default}`" in rows[fact.name][2], fact.name
    tagged = set()
    for py in (ROOT / "parity" / "sim").glob("*.py"):
        tagged |= set(re.findall(r"hardware_facts\.md: ([A-Za-z0-9-]+)", py.read_text(encoding="utf-8")))
    assert tagged and tagged <= set(rows), tagged - set(rows)


def test_lds_size_row_matches_the_engines_arch_table():
    import python_engine

    row = next(a for a in python_engine.arch_table() if a["name"] == "gfx1250")
    assert row["lds_bytes"] == 327680
    assert "327680" in _rows()["LDS-SIZE-gfx1250"][1]


# --- parity numerics --assume -----------------------------------------------------------------

def _numerics(*args, tmp_path=None):
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    out = tmp_path / "n.json"
    res = subprocess.run([sys.executable, "-m", "parity", "numerics", "--only", "ir_core", "-j", "1",
                          "--json", str(out), *args], capture_output=True, text=True, env=env, cwd=ROOT)
    return res, (json.loads(out.read_text()) if out.exists() else None)


def test_numerics_assume_shows_the_configs_that_depend_on_a_reading(tmp_path):
    res, doc = _numerics(tmp_path=tmp_path)
    assert res.returncode == 0 and doc["assume"] == {}
    res, doc = _numerics("--assume", "CVT-F32-BF16=rtz", tmp_path=tmp_path)
    assert res.returncode == 1 and doc["assume"] == {"CVT-F32-BF16": "rtz"}
    failed = sorted(c["config"] for c in doc["configs"] if not c["ok"])
    assert failed and all("cast" in n for n in failed), failed  # only the bf16 cast kernels depend on it
    assert "assumed: CVT-F32-BF16=rtz" in res.stdout


def test_numerics_assume_bad_input_is_one_error_line(tmp_path):
    res, _ = _numerics("--assume", "WMMA-CD-layout=diagonal", tmp_path=tmp_path)
    assert res.returncode == 2 and res.stderr.strip().splitlines()[-1].startswith("error: --assume: WMMA-CD-layout")
    assert "Traceback" not in res.stderr

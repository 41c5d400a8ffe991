"""The emulator's support for what LLVM's optimizer emits (parity/sim/ops_generic.py,
the constant-expression GEP and call fast-math flags of parity/sim/ir.py): each
intrinsic against an independent Python/numpy model, over edge values."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from parity.sim import Kernel, Poison, Unsupported
from parity.sim.ops_generic import fma_rounded, shuffle_tree

ATTR = '\nattributes #0 = { "amdgpu-flat-work-group-size"="32,32" }\n'


def run2(ty: str, body: str, a: np.ndarray, b: np.ndarray, rty: str | None = None, c=None) -> np.ndarray:
    """One wave: lane l loads a[l], b[l] (and c[l]) of type ``ty``, runs ``body`` (which
    defines %r of type ``rty``) and stores %r at out[l]."""
    rty = rty or ty
    out = np.zeros((32,) + a.shape[1:], a.dtype) if rty == ty else np.zeros(32, _dtype(rty))
    cdecl = ", ptr addrspace(1) %c" if c is not None else ""
    cload = f"""  %pc = getelementptr inbounds {ty}, ptr addrspace(1) %c, i64 %t
  %z = load {ty}, ptr addrspace(1) %pc, align 2
""" if c is not None else ""
    text = f"""define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b{cdecl}, ptr addrspace(1) %out) #0 {{
entry0:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t = zext i32 %tid to i64
  %pa = getelementptr inbounds {ty}, ptr addrspace(1) %a, i64 %t
  %x = load {ty}, ptr addrspace(1) %pa, align 2
  %pb = getelementptr inbounds {ty}, ptr addrspace(1) %b, i64 %t
  %y = load {ty}, ptr addrspace(1) %pb, align 2
{cload}{body}
  %po = getelementptr inbounds {rty}, ptr addrspace(1) %out, i64 %t
  store {rty} %r, ptr addrspace(1) %po, align 2
  ret void
}}
""" + ATTR
    args = {"a": np.ascontiguousarray(a), "b": np.ascontiguousarray(b), "out": out}
    if c is not None:
        args["c"] = np.ascontiguousarray(c)
    Kernel(text).launch((1, 1, 1), 32, args)
    return out


def _dtype(t: str):
    return {"i1": np.bool_, "i8": np.uint8, "i16": np.uint16, "i32": np.uint32, "i64": np.uint64,
            "float": np.float32, "half": np.float16}[t]


def _edge_u32(seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 2 ** 32, 32, dtype=np.uint64).astype(np.uint32)
    v[:8] = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 2, 0x80000001, 31]
    return v


@pytest.mark.parametrize("name", ["umin", "umax", "smin", "smax"])
def test_integer_min_max(name):
    a, b = _edge_u32(1), _edge_u32(2)
    b[:8] = [0xFFFFFFFF, 0, 0x80000000, 0x7FFFFFFF, 1, 2, 5, 0x80000000]
    got = run2("i32", f"  %r = call i32 @llvm.{name}.i32(i32 %x, i32 %y)", a, b)
    sa, sb = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    ua, ub = a.astype(np.int64), b.astype(np.int64)
    want = {"umin": np.minimum(ua, ub), "umax": np.maximum(ua, ub), "smin": np.minimum(sa, sb),
            "smax": np.maximum(sa, sb)}[name]
    assert list(got.view(np.int32 if name[0] == "s" else np.uint32)) == list(want)


def test_integer_min_on_vectors():
    a = np.arange(64, dtype=np.uint64).reshape(32, 2) * np.uint64(3)
    b = np.full((32, 2), 50, np.uint64)
    got = run2("<2 x i64>", "  %r = call <2 x i64> @llvm.umin.v2i64(<2 x i64> %x, <2 x i64> %y)", a, b)
    assert (got == np.minimum(a, b)).all()


@pytest.mark.parametrize("name", ["usub", "uadd", "ssub", "sadd"])
def test_saturating(name):
    a = _edge_u32(3).astype(np.uint16)
    b = _edge_u32(4).astype(np.uint16)
    a[:4], b[:4] = [0, 0x7FFF, 0x8000, 0xFFFF], [1, 1, 1, 0xFFFF]
    got = run2("i16", f"  %r = call i16 @llvm.{name}.sat.i16(i16 %x, i16 %y)", a, b)
    for x, y, r in zip(a, b, got):
        if name[0] == "u":
            exact = int(x) - int(y) if name == "usub" else int(x) + int(y)
            assert int(r) == min(max(exact, 0), 0xFFFF)
        else:
            xs, ys = int(np.uint16(x).view(np.int16)), int(np.uint16(y).view(np.int16))
            exact = xs - ys if name == "ssub" else xs + ys
            assert int(np.uint16(r).view(np.int16)) == min(max(exact, -32768), 32767)


@pytest.mark.parametrize("name", ["fshl", "fshr"])
def test_funnel_shifts(name):
    a, b = _edge_u32(5), _edge_u32(6)
    s = np.arange(32, dtype=np.uint32) * np.uint32(3)   # amounts 0..93: mod 32, incl. 0, 32, 64
    text_body = f"  %r = call i32 @llvm.{name}.i32(i32 %x, i32 %y, i32 %z)"
    got = run2("i32", text_body, a, b, c=s)
    for x, y, k, r in zip(a, b, s, got):
        cat = (int(x) << 32) | int(y)
        k = int(k) % 32
        want = ((cat << k) >> 32) & 0xFFFFFFFF if name == "fshl" else (cat >> k) & 0xFFFFFFFF
        assert int(r) == want


@pytest.mark.parametrize("name", ["ctpop", "ctlz", "cttz"])
def test_bit_counts(name):
    a = np.concatenate([_edge_u32(7).astype(np.uint64) << np.uint64(7), np.zeros(0, np.uint64)])
    a[8] = 1 << 63
    flag = "" if name == "ctpop" else ", i1 false"
    got = run2("i64", f"  %r = call i64 @llvm.{name}.i64(i64 %x{flag})", a, a)
    for x, r in zip(a, got):
        x = int(x)
        want = bin(x).count("1") if name == "ctpop" else 64 - x.bit_length() if name == "ctlz" else \
            (64 if x == 0 else (x & -x).bit_length() - 1)
        assert int(r) == want


def test_zero_poison_and_int_min_poison():
    a = np.zeros(32, np.uint32)
    with pytest.raises(Poison, match="ctlz of zero"):
        run2("i32", "  %r = call i32 @llvm.ctlz.i32(i32 %x, i1 true)", a, a)
    a[3] = 0x80000000
    with pytest.raises(Poison, match="INT_MIN"):
        run2("i32", "  %r = call i32 @llvm.abs.i32(i32 %x, i1 true)", a, a)
    got = run2("i32", "  %r = call i32 @llvm.abs.i32(i32 %x, i1 false)", a, a)
    assert int(got[3]) == 0x80000000


@pytest.mark.parametrize("name", ["minnum", "maxnum", "minimum", "maximum", "minimumnum", "maximumnum"])
def test_float_min_max(name):
    nan = np.float32(np.nan)
    a = np.array([1.0, nan, 2.0, nan, -0.0, 0.0, -3.0, np.inf] * 4, np.float32)
    b = np.array([2.0, 1.0, nan, nan, 0.0, -0.0, -np.inf, 5.0] * 4, np.float32)
    got = run2("float", f"  %r = call float @llvm.{name}.f32(float %x, float %y)", a, b)
    for x, y, r in zip(a, b, got):
        if np.isnan(x) and np.isnan(y):
            assert np.isnan(r)
        elif np.isnan(x) or np.isnan(y):
            if name in ("minimum", "maximum"):
                assert np.isnan(r)
            else:
                assert r == (y if np.isnan(x) else x)
        elif x == y:   # +-0: -0 is the smaller
            want_neg = (np.signbit(x) or np.signbit(y)) if "min" in name else (np.signbit(x) and np.signbit(y))
            assert r == 0 and bool(np.signbit(r)) == bool(want_neg)
        else:
            assert r == (min(x, y) if "min" in name else max(x, y))


def _round_f32(q: Fraction) -> np.float32:
    """RNE of an exact rational to float32 (finite range)."""
    x = np.float32(float(q))
    cands = [np.nextafter(x, np.float32(-np.inf)), x, np.nextafter(x, np.float32(np.inf))]
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - q), int(np.float32(c).view(np.uint32)) & 1))
    return np.float32(best)


def test_fma_is_one_rounding():
    rng = np.random.default_rng(8)
    a = (rng.standard_normal(4000) * 2.0 ** rng.integers(-20, 20, 4000)).astype(np.float32)
    b = (rng.standard_normal(4000) * 2.0 ** rng.integers(-20, 20, 4000)).astype(np.float32)
    c = (-(a.astype(np.float64) * b) * (1 + rng.standard_normal(4000) * 2.0 ** -20)).astype(np.float32)
    got = fma_rounded(a, b, c)
    for x, y, z, r in zip(a, b, c, got):
        assert r == _round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
    # the double-rounding trap: a*b = 1 + 2^-11 + 2^-24 is a float32 midpoint and c = 2^-80
    # tips it up; rounded to float64 first (c lost), then to float32, it ties down to even
    x = np.array([1 + 2 ** -12, 1 + 2 ** -12, -(1 + 2 ** -12)], np.float32)
    z = np.array([2 ** -80, -2 ** -80, -2 ** -80], np.float32)
    got = fma_rounded(x, x * np.float32([1, 1, -1]), z)
    naive = (x.astype(np.float64) * (x * np.float32([1, 1, -1])) + z).astype(np.float32)
    assert list(got) == [np.float32(1 + 2 ** -11 + 2 ** -23), np.float32(1 + 2 ** -11),
                         np.float32(-(1 + 2 ** -11 + 2 ** -23))]
    assert naive[0] != got[0]


def test_fma_through_the_ir():
    rng = np.random.default_rng(9)
    a, b, c = (rng.standard_normal(32).astype(np.float32) for _ in range(3))
    got = run2("float", "  %r = call float @llvm.fma.f32(float %x, float %y, float %z)", a, b, c=c)
    assert (got == fma_rounded(a, b, c)).all()


def test_vector_reductions():
    rng = np.random.default_rng(10)
    v = rng.integers(0, 2 ** 32, (32, 4), dtype=np.uint64).astype(np.uint32)
    got = run2("<4 x i32>", "  %r = call i32 @llvm.vector.reduce.add.v4i32(<4 x i32> %x)", v, v, rty="i32")
    assert list(got) == [int(s) % 2 ** 32 for s in v.astype(np.uint64).sum(axis=1)]
    got = run2("<4 x i32>", "  %r = call i32 @llvm.vector.reduce.smax.v4i32(<4 x i32> %x)", v, v, rty="i32")
    assert list(got.view(np.int32)) == list(v.view(np.int32).max(axis=1))


def test_fadd_reduction_orders(monkeypatch):
    """Sequential from the start value without reassoc; with it, the halving tree then the start.
    (The promise check refuses reassoc in the engines' IR; lifted here to test the operation.)"""
    from parity.sim import promises
    real = promises._check_flags

    def lifted(ins):
        flags = ins.extra.get("flags", ())
        ins.extra["flags"] = tuple(f for f in flags if f not in ("reassoc", "nsz"))
        try:
            real(ins)
        finally:
            ins.extra["flags"] = flags
    monkeypatch.setattr(promises, "_check_flags", lifted)
    from parity.sim import promises_ops
    real_op = promises_ops._flag_check
    monkeypatch.setattr(promises_ops, "_flag_check",
                        lambda K, ins, f, O, d: None if f in ("reassoc", "nsz") else real_op(K, ins, f, O, d))
    x = np.tile(np.array([2.0 ** 24, 1.0, -2.0 ** 24, 1.0], np.float32), (32, 1))
    seq = run2("<4 x float>", "  %r = call float @llvm.vector.reduce.fadd.v4f32(float -0.0, <4 x float> %x)",
               x, x, rty="float")
    tree = run2("<4 x float>", "  %r = call reassoc nsz float @llvm.vector.reduce.fadd.v4f32(float -0.0, "
                "<4 x float> %x)", x, x, rty="float")
    assert (seq == 1.0).all()       # ((2^24 + 1) - 2^24) + 1: the first 1 is absorbed
    assert (tree == 2.0).all()      # (2^24 - 2^24) + (1 + 1)
    assert (shuffle_tree(x.astype(np.float32), np.add) == 2.0).all()


def test_freeze_assume_and_wave_intrinsics():
    a = np.arange(32, dtype=np.uint32) * np.uint32(7)
    got = run2("i32", "  %r = freeze i32 %x", a, a)
    assert (got == a).all()
    body = """  %odd = trunc i32 %x to i1
  %m = call i32 @llvm.amdgcn.ballot.i32(i1 %odd)
  %r = call i32 @llvm.amdgcn.mbcnt.lo(i32 %m, i32 100)"""
    got = run2("i32", body, a, a)
    odd = (a & 1).astype(bool)
    assert list(got) == [100 + int(odd[:lane].sum()) for lane in range(32)]
    with pytest.raises(Poison, match="llvm.assume of false in lane 0"):
        run2("i32", "  %c = icmp ugt i32 %x, 0\n  call void @llvm.assume(i1 %c)\n  %r = add i32 %x, 0", a, a)


def test_unknown_intrinsic_is_a_named_failure():
    a = np.zeros(32, np.uint32)
    with pytest.raises(Unsupported, match=r"intrinsic llvm\.bitreverse\.i32 is not implemented"):
        run2("i32", "  %r = call i32 @llvm.bitreverse.i32(i32 %x)", a, a)
    with pytest.raises(Unsupported, match=r"llvm\.uadd\.with\.overflow"):
        run2("i32", "  %r = call i32 @llvm.uadd.with.overflow.i32(i32 %x, i32 %y)", a, a)


def test_constant_expression_gep_into_lds():
    """``getelementptr T, (getelementptr (i8, @lds, C)), i`` as opt folds LDS offsets: the
    address is @lds + C + i*size(T); an access past the allocation is still caught."""
    text = """@lds = internal addrspace(3) global [256 x i8] poison, align 16

define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
entry0:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %f = uitofp i32 %tid to float
  %p = getelementptr inbounds float, ptr addrspace(3) getelementptr inbounds nuw (i8, ptr addrspace(3) @lds, i32 128), i32 %tid
  store float %f, ptr addrspace(3) %p, align 4
  %q = getelementptr inbounds float, ptr addrspace(3) @lds, i32 %tid
  %w = getelementptr inbounds float, ptr addrspace(3) %q, i32 32
  %v = load float, ptr addrspace(3) %w, align 4
  %t = zext i32 %tid to i64
  %po = getelementptr inbounds float, ptr addrspace(1) %out, i64 %t
  store float %v, ptr addrspace(1) %po, align 4
  ret void
}
""" + ATTR
    out = np.zeros(32, np.float32)
    Kernel(text).launch((1, 1, 1), 32, {"out": out})
    assert list(out) == list(range(32))
    with pytest.raises(Exception, match="out-of-bounds|outside LDS"):
        Kernel(text.replace("i32 128)", "i32 192)")).launch((1, 1, 1), 32, {"out": out})

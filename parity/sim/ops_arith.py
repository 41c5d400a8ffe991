"""Op compilers for arithmetic: integer and float binary ops, compares, casts.

Each compiler turns one decoded instruction into a closure ``f(R, X)`` over
the register list ``R`` (parity/sim/kernel.py decodes; parity/sim/ops.py
dispatches). iN is held as uintN (i1 as bool), bfloat as its uint16 bits.
"""
from __future__ import annotations

import numpy as np

from . import ir
from .errors import Poison, Unsupported
from .fp import bf16_bits_to_f32, f32_to_bf16_hw as f32_to_bf16_bits  # hardware_facts.md: CVT-F32-BF16
from .memory import WAVE, bytes_of, first_lane

SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def as_signed(x, bits):
    return x.view(SIGNED[bits])


def sext64(x: np.ndarray, ty: ir.Ty) -> np.ndarray:
    """``x`` (iN held as uintN, i1 as bool) sign-extended to int64 (a view for i64:
    callers only read it)."""
    if ty.bits == 1:
        return -(x.astype(np.int64))
    if ty.bits == 64:
        return x.view(np.int64)
    return as_signed(x, ty.bits).astype(np.int64)


def int_binop(K, ins, where):
    """An integer binary operator compiled to a closure; ``nuw``/``nsw`` overflow, a shift
    amount >= the width and division by zero are Poison (LangRef) when K.check_poison."""
    op = ins.op
    a, b = (K.operand(o, where) for o in ins.ops)
    d = K.slot("%" + ins.dst)
    ty = ins.ty
    if ty.scalar.kind != "int":
        raise Unsupported(f"{op} on {ty.text}")
    if ty.scalar.bits == 1:
        return _i1_binop(op, a, b, d)
    if op in ("add", "sub", "mul"):
        return _arith(K, op, ty, ins.extra.get("flags", ()), a, b, d)
    if op in ("and", "or", "xor"):
        fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

        def f(R, X):
            R[d] = fn(R[a], R[b])
        return f
    if op in ("shl", "lshr", "ashr"):
        return _shift(K, op, ty, a, b, d)
    if op in ("udiv", "urem", "sdiv", "srem"):
        return _divrem(op, SIGNED[ty.scalar.bits], a, b, d)
    raise Unsupported(f"integer op {op}")


def _i1_binop(op, a, b, d):
    """i1 arithmetic is modulo 2: add/sub are xor, mul is and."""
    fn = {"add": np.logical_xor, "sub": np.logical_xor, "mul": np.logical_and, "and": np.logical_and,
          "or": np.logical_or, "xor": np.logical_xor}.get(op)
    if fn is None:
        raise Unsupported(f"{op} on i1")

    def f(R, X):
        R[d] = fn(R[a], R[b])
    return f


def _nuw_bad(op, bits, x, y, r):
    """Lanes where ``op nuw`` wraps (unsigned overflow): LangRef's poison condition."""
    if op == "add":
        return r < x
    if op == "sub":
        return x < y
    if bits <= 32:
        return x.astype(np.uint64) * y.astype(np.uint64) > np.uint64((1 << bits) - 1)
    nz = x != 0
    return nz & (r // np.where(nz, x, 1) != y)


def _nsw_bad(op, bits, sdt, x, y, r):
    """Lanes where ``op nsw`` overflows the signed range: LangRef's poison condition."""
    if op == "add":   # the sign bit of (x ^ r) & (y ^ r)
        return ((x ^ r) & (y ^ r)).view(sdt) < 0
    if op == "sub":
        return ((x ^ y) & (x ^ r)).view(sdt) < 0
    if bits <= 32:
        p = x.view(sdt).astype(np.int64) * y.view(sdt).astype(np.int64)
        return (p < -(1 << (bits - 1))) | (p >= (1 << (bits - 1)))
    xs, ys, rs = x.view(sdt), y.view(sdt), r.view(sdt)
    nz = xs != 0
    return nz & ((rs // np.where(nz, xs, 1) != ys) | ((xs == -1) & (ys == np.iinfo(sdt).min)))


def _arith(K, op, ty, flags, a, b, d):
    """add/sub/mul, wrapping; with ``nuw``/``nsw`` (and K.check_poison) an overflowing lane is Poison."""
    bits = ty.scalar.bits
    base = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
    nuw = "nuw" in flags and K.check_poison
    nsw = "nsw" in flags and K.check_poison
    if not (nuw or nsw):
        def f(R, X):
            R[d] = base(R[a], R[b])
        return f
    sdt = SIGNED[bits]
    small = np.uint64(31)   # mul i64: both operands below 2^31 (unsigned) cannot overflow either way
    wide = op == "mul" and bits == 64

    def f(R, X):
        x, y = R[a], R[b]
        r = base(x, y)
        if wide and not np.count_nonzero((x | y) >> small):
            R[d] = r
            return
        if nuw:
            bad = _nuw_bad(op, bits, x, y, r)
            if np.count_nonzero(bad):
                i = first_lane(bad)
                raise Poison(f"{op} nuw overflows i{bits} in lane {i} "
                             f"({int(np.asarray(x).flat[i])}, {int(np.asarray(y).flat[i])})")
        if nsw:
            bad = _nsw_bad(op, bits, sdt, x, y, r)
            if np.count_nonzero(bad):
                raise Poison(f"{op} nsw overflows i{bits} in lane {first_lane(bad)}")
        R[d] = r
    return f


def _shift(K, op, ty, a, b, d):
    """shl/lshr/ashr; a constant amount below the width compiles to one numpy shift, a
    run-time amount >= the width is Poison."""
    bits = ty.scalar.bits
    sdt = SIGNED[bits]
    yc = K.const_of(b)
    if yc is not None and not np.count_nonzero(yc >= bits):   # a constant amount below the width
        amt = yc.astype(ty.dtype if op != "ashr" else sdt)
        if op == "shl":
            def f(R, X):
                R[d] = np.left_shift(R[a], amt)
        elif op == "lshr":
            def f(R, X):
                R[d] = np.right_shift(R[a], amt)
        else:
            def f(R, X):
                R[d] = np.right_shift(R[a].view(sdt), amt).view(R[a].dtype)
        return f

    def f(R, X):
        x, y = R[a], R[b]
        if np.count_nonzero(y >= bits):
            raise Poison(f"{op} by {int(y.max())} >= width {bits}")
        if op == "shl":
            R[d] = np.left_shift(x, y.astype(x.dtype))
        elif op == "lshr":
            R[d] = np.right_shift(x, y.astype(x.dtype))
        else:
            R[d] = np.right_shift(x.view(sdt), y.astype(sdt)).view(x.dtype)
    return f


def _divrem(op, sdt, a, b, d):
    """udiv/urem/sdiv/srem; division by zero and INT_MIN / -1 are Poison (LangRef: UB)."""
    def f(R, X):
        x, y = R[a], R[b]
        if np.count_nonzero(y == 0):
            raise Poison(f"{op} by zero in lane {first_lane(y == 0)}")
        if op == "udiv":
            R[d] = x // y
        elif op == "urem":
            R[d] = x % y
        else:
            xs, ys = x.view(sdt), y.view(sdt)
            if ((xs == np.iinfo(sdt).min) & (ys == -1)).any():
                raise Poison(f"{op} overflows")
            q = np.abs(xs.astype(np.int64)) // np.abs(ys.astype(np.int64))
            q = np.where((xs < 0) != (ys < 0), -q, q)
            if op == "sdiv":
                R[d] = q.astype(sdt).view(x.dtype)
            else:
                R[d] = (xs.astype(np.int64) - q * ys.astype(np.int64)).astype(sdt).view(x.dtype)
    return f


def float_binop(K, ins, where):
    op = ins.op
    a, b = (K.operand(o, where) for o in ins.ops)
    d = K.slot("%" + ins.dst)
    fn = {"fadd": np.add, "fsub": np.subtract, "fmul": np.multiply, "fdiv": np.divide, "frem": np.fmod}[op]
    if ins.ty.scalar.kind == "bf16":
        # computed in float32 (exact inputs), rounded once to bf16: correctly rounded
        # for + - * / since 24 >= 2*8+2 (no double-rounding error)
        def f(R, X):
            R[d] = f32_to_bf16_bits(fn(bf16_bits_to_f32(R[a]), bf16_bits_to_f32(R[b])))
        return f
    if ins.ty.scalar.kind != "float":
        raise Unsupported(f"{op} on {ins.ty.text}")

    def f(R, X):
        R[d] = fn(R[a], R[b])
    return f


def icmp(ins, O, d):
    a, b = O
    pred = ins.extra["pred"]
    ty = ins.ops[0].ty
    if ty.kind == "ptr" or (ty.is_vec and ty.elem.kind == "ptr"):
        raise Unsupported("icmp on pointers")
    bits = ty.scalar.bits
    fn = {"eq": np.equal, "ne": np.not_equal, "ugt": np.greater, "uge": np.greater_equal,
          "ult": np.less, "ule": np.less_equal, "sgt": np.greater, "sge": np.greater_equal,
          "slt": np.less, "sle": np.less_equal}[pred]
    if pred[0] == "s" and bits > 1:
        sdt = SIGNED[bits]

        def f(R, X):
            R[d] = fn(R[a].view(sdt), R[b].view(sdt))
    elif pred[0] == "s":  # i1 signed: true is -1
        def f(R, X):
            R[d] = fn(~R[a], ~R[b])
    else:
        def f(R, X):
            R[d] = fn(R[a], R[b])
    return f


def fcmp(ins, O, d):
    a, b = O
    pred = ins.extra["pred"]
    bf = ins.ops[0].ty.scalar.kind == "bf16"
    base = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
            "lt": np.less, "le": np.less_equal}

    def vals(R):
        x, y = R[a], R[b]
        if bf:
            x, y = bf16_bits_to_f32(x), bf16_bits_to_f32(y)
        return x, y
    if pred in ("ord", "uno"):
        def f(R, X):
            x, y = vals(R)
            u = np.isnan(x) | np.isnan(y)
            R[d] = u if pred == "uno" else ~u
        return f
    if pred in ("true", "false"):
        raise Unsupported(f"fcmp {pred}")
    fn = base[pred[1:]]
    if pred[0] == "o":
        def f(R, X):
            x, y = vals(R)
            r = fn(x, y)
            R[d] = r & ~(np.isnan(x) | np.isnan(y)) if pred == "one" else r
    else:
        def f(R, X):
            x, y = vals(R)
            R[d] = fn(x, y) | np.isnan(x) | np.isnan(y)
    return f


def cast(ins, O, d, where):
    """A conversion instruction compiled to a closure. fptrunc to bfloat rounds to nearest
    even (parity/sim/fp.py); fptosi/fptoui of a value outside the target range is Poison
    (LangRef). Raises Unsupported for a conversion outside the emulator's subset."""
    v, = O
    op = ins.op
    src, dst = ins.ops[0].ty, ins.ty
    if src.is_vec != dst.is_vec and op != "bitcast":
        raise Unsupported(f"{op} between vector and scalar")
    build = _CASTS.get(op)
    if build is None:
        raise Unsupported(f"cast {op}")
    return build(op, src, dst, v, d)


def _astype(dt, v, d):
    def f(R, X):
        R[d] = R[v].astype(dt)
    return f


def _trunc(op, src, dst, v, d):
    if dst.scalar.bits == 1:
        def f(R, X):
            R[d] = (R[v] & 1).astype(np.bool_)
        return f
    return _astype(dst.dtype, v, d)


def _zext(op, src, dst, v, d):
    return _astype(dst.dtype, v, d)


def _sext(op, src, dst, v, d):
    dt, sdt = dst.dtype, SIGNED[dst.scalar.bits]
    if src.scalar.bits == 1:
        def f(R, X):
            R[d] = (-(R[v].astype(sdt))).view(dt)
        return f
    ssd = SIGNED[src.scalar.bits]

    def f(R, X):
        R[d] = R[v].view(ssd).astype(sdt).view(dt)
    return f


def _fptrunc(op, src, dst, v, d):
    if dst.scalar.kind != "bf16":
        return _astype(dst.dtype, v, d)
    if src.scalar.bits != 32:
        raise Unsupported(f"fptrunc {src.text} to bfloat")

    def f(R, X):
        R[d] = f32_to_bf16_bits(R[v])
    return f


def _fpext(op, src, dst, v, d):
    dt = dst.dtype
    if src.scalar.kind != "bf16":
        return _astype(dt, v, d)

    def f(R, X):
        R[d] = bf16_bits_to_f32(R[v]).astype(dt)
    return f


def _fptoint(op, src, dst, v, d):
    if src.scalar.kind == "bf16":
        raise Unsupported(f"{op} from bfloat")
    bits = dst.scalar.bits
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1)) if op == "fptosi" else (0, 2 ** bits)
    dt = dst.dtype
    tdt = SIGNED[bits] if op == "fptosi" else UNSIGNED[bits]

    def f(R, X):
        t = np.trunc(R[v].astype(np.float64))
        bad = np.isnan(t) | (t < lo) | (t >= hi)
        if bad.any():
            raise Poison(f"{op} of a value outside i{bits} (lane {first_lane(bad)})")
        R[d] = t.astype(tdt).view(dt)
    return f


def _inttofp(op, src, dst, v, d):
    if dst.scalar.kind == "bf16":
        raise Unsupported(f"{op} to bfloat")
    bits = src.scalar.bits
    if op == "sitofp" and bits > 1:
        dt, sdt = dst.dtype, SIGNED[bits]

        def f(R, X):
            R[d] = R[v].view(sdt).astype(dt)
        return f
    return _astype(dst.dtype, v, d)


def _bitcast(op, src, dst, v, d):
    ss, ds = src.scalar, dst.scalar
    if src.size != dst.size or ss.kind in ("ptr",) or ds.kind == "ptr" or ss.bits == 1:
        raise Unsupported(f"bitcast {src.text} to {dst.text}")
    dt = dst.dtype
    n = dst.n if dst.is_vec else 0

    def f(R, X):
        b = bytes_of(R[v]).view(dt)
        R[d] = b if n else b.reshape(WAVE)
    return f


#: conversion opcode -> fn(op, source type, destination type, operand slot, destination slot) -> closure
_CASTS = {"trunc": _trunc, "zext": _zext, "sext": _sext, "fptrunc": _fptrunc, "fpext": _fpext,
          "fptosi": _fptoint, "fptoui": _fptoint, "sitofp": _inttofp, "uitofp": _inttofp, "bitcast": _bitcast}

"""Op compilers for what LLVM's optimizer puts into a module: ``freeze`` and the
target-independent intrinsics (integer min/max/saturation/bit counts/funnel
shifts/abs, float min/max and fused multiply-add, vector reductions,
``llvm.assume``) plus the wave intrinsics ``opt -O3`` introduces on AMDGPU
(``readfirstlane`` of any scalar type, ``ballot``, ``mbcnt``).

The engines' own IR uses none of these today; the opt lane
(parity/sim/optimised.py, docs/sim.md "The IR after LLVM's optimizer") runs
modules after ``opt -O3`` that do. Semantics follow LLVM's LangRef
(https://llvm.org/docs/LangRef.html, the section of each intrinsic); values are
held as everywhere in the emulator (iN as uintN, i1 as bool, ``(32,)`` per
scalar register, ``(32, n)`` per ``<n x T>``). bfloat operands are refused
(:class:`Unsupported`) where a float intrinsic would need them: nothing the
optimizer produced from our kernels has them, and a guess would be silent.

:func:`generic_call` is the fallback of parity/sim/ops_call.py for a callee
not in its table; :func:`compile_extra` decodes the non-call instructions
(``freeze``). Anything not listed here stays :class:`Unsupported` naming the
intrinsic: a failure, never a skip.
"""
from __future__ import annotations

import numpy as np

from .errors import Poison, Unsupported
from .memory import WAVE, first_lane
from .ops_arith import SIGNED

#: reduction kinds of ``llvm.vector.reduce.<kind>``
_REDUCE = ("add", "mul", "and", "or", "xor", "smax", "smin", "umax", "umin",
           "fadd", "fmul", "fmax", "fmin", "fmaximum", "fminimum")


def compile_extra(K, ins, where):
    """``freeze``: the operand's value (the emulator reads a poison operand as zero,
    a value freeze may return). Raises Unsupported for any other op."""
    if ins.op == "freeze":
        a = K.operand(ins.ops[0], where)
        d = K.slot("%" + ins.dst)

        def f(R, X):
            R[d] = R[a]
        return f
    raise Unsupported(f"instruction {ins.op}")


def base_of(name: str) -> tuple[str, str] | None:
    """``(family, rest)`` of an intrinsic name: ``llvm.umin.v2i64`` -> ("umin", "v2i64"),
    ``llvm.vector.reduce.fadd.v4f32`` -> ("reduce.fadd", "v4f32"),
    ``llvm.amdgcn.ballot.i32`` -> ("amdgcn.ballot", "i32"); None when not ``llvm.``."""
    if not name.startswith("llvm."):
        return None
    parts = name[5:].split(".")
    if parts[0] == "vector" and len(parts) >= 3 and parts[1] == "reduce":
        return "reduce." + parts[2], ".".join(parts[3:])
    if parts[0] == "amdgcn" and len(parts) >= 2:
        return "amdgcn." + parts[1], ".".join(parts[2:])
    return parts[0], ".".join(parts[1:])


def generic_call(K, ins, O, d, where):
    """The closure of a call to a generic intrinsic (module doc); Unsupported otherwise."""
    name = ins.extra["callee"]
    fam = base_of(name)
    fn = _TABLE.get(fam[0]) if fam else None
    if fam and fam[0] in ("usub", "uadd", "ssub", "sadd") and not fam[1].startswith("sat."):
        fn = None   # llvm.uadd.with.overflow returns a struct: not modelled
    if fn is None:
        raise Unsupported(f"intrinsic {name} is not implemented by the emulator")
    return fn(K, ins, O, d, fam[0])


# -- integers ------------------------------------------------------------------------------

def _int_ty(ins, what):
    ty = ins.ty.scalar
    if ty.kind != "int":
        raise Unsupported(f"{what} on {ins.ty.text}")
    return ty.bits


def _minmax(K, ins, O, d, fam):
    bits = _int_ty(ins, fam)
    a, b = O
    if bits == 1:   # i1: true is -1 signed, 1 unsigned
        fn = {"umin": np.logical_and, "umax": np.logical_or, "smin": np.logical_or, "smax": np.logical_and}[fam]

        def f(R, X):
            R[d] = fn(R[a], R[b])
        return f
    pick = np.minimum if fam.endswith("min") else np.maximum
    if fam[0] == "s":
        sdt = SIGNED[bits]

        def f(R, X):
            x = R[a]
            R[d] = pick(x.view(sdt), R[b].view(sdt)).view(x.dtype)
        return f

    def f(R, X):
        R[d] = pick(R[a], R[b])
    return f


def _sat(K, ins, O, d, fam):
    bits = _int_ty(ins, fam)
    if bits == 1:
        raise Unsupported(f"llvm.{fam} on i1")
    a, b = O
    umax = np.array((1 << bits) - 1).astype(ins.ty.dtype)[()]
    sdt = SIGNED[bits]
    smin, smax = np.iinfo(sdt).min, np.iinfo(sdt).max

    def f(R, X):
        x, y = R[a], R[b]
        if fam == "usub":
            R[d] = np.where(x >= y, x - y, np.zeros_like(x))
        elif fam == "uadd":
            r = x + y
            R[d] = np.where(r < x, umax, r)
        else:
            r = x + y if fam == "sadd" else x - y
            xs, ys, rs = x.view(sdt), y.view(sdt), r.view(sdt)
            over = (((xs ^ rs) & (ys ^ rs)) if fam == "sadd" else ((xs ^ ys) & (xs ^ rs))) < 0
            sat = np.where(xs < 0, sdt(smin), sdt(smax))
            R[d] = np.where(over, sat, rs).view(x.dtype)
    return f


def _sat_family(K, ins, O, d, fam):
    return _sat(K, ins, O, d, fam.split(".")[0][:4])


def _abs(K, ins, O, d, fam):
    bits = _int_ty(ins, fam)
    a, flag = O
    if ins.ops[1].kind != "const":
        raise Unsupported("llvm.abs with a non-constant is_int_min_poison")
    int_min_poison = bool(ins.ops[1].value)
    sdt = SIGNED[bits]
    lo = np.iinfo(sdt).min

    def f(R, X):
        x = R[a].view(sdt)
        if int_min_poison and np.count_nonzero(x == lo):
            raise Poison(f"llvm.abs of INT_MIN with is_int_min_poison (lane {first_lane(x == lo)})")
        R[d] = np.where(x < 0, -x, x).view(R[a].dtype)
    return f


def _fsh(K, ins, O, d, fam):
    """fshl(a, b, s): the high half of (a:b) << (s mod bits); fshr: the low half of (a:b) >> (s mod bits)."""
    bits = _int_ty(ins, fam)
    a, b, s = O
    nb = np.uint64(bits)
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)

    def f(R, X):
        x, y = R[a].astype(np.uint64), R[b].astype(np.uint64)
        k = R[s].astype(np.uint64) % nb
        inv = (nb - k) % nb      # a shift by the width is no shift; k == 0 is handled below
        if fam == "fshl":
            r = ((x << k) & mask) | (y >> inv)
            r = np.where(k == 0, x, r)
        else:
            r = ((x << inv) & mask) | (y >> k)
            r = np.where(k == 0, y, r)
        R[d] = r.astype(R[a].dtype)
    return f


def _clz64(x: np.ndarray, bits: int) -> np.ndarray:
    """Leading zeros of uint64 ``x`` counted within ``bits`` (x below 2^bits): a
    binary search over the top 32, 16, ..., 1 bits."""
    n = np.zeros(x.shape, np.int64)
    v = x.astype(np.uint64)
    for sh in (32, 16, 8, 4, 2, 1):
        empty = (v >> np.uint64(64 - sh)) == 0
        n = np.where(empty, n + sh, n)
        v = np.where(empty, v << np.uint64(sh), v)
    n = np.where(x == 0, 64, n)
    return n - (64 - bits)


def _bitcount(K, ins, O, d, fam):
    bits = _int_ty(ins, fam)
    a = O[0]
    zero_poison = False
    if fam in ("ctlz", "cttz"):
        if ins.ops[1].kind != "const":
            raise Unsupported(f"llvm.{fam} with a non-constant is_zero_poison")
        zero_poison = bool(ins.ops[1].value)

    def f(R, X):
        x = R[a]
        if bits == 1:
            r = x if fam == "ctpop" else ~x
            R[d] = r
            return
        if zero_poison and np.count_nonzero(x == 0):
            raise Poison(f"llvm.{fam} of zero with is_zero_poison (lane {first_lane(x == 0)})")
        if fam == "ctpop":
            r = np.unpackbits(np.ascontiguousarray(x)[..., None].view(np.uint8), axis=-1).sum(-1)
        elif fam == "ctlz":
            r = _clz64(x.astype(np.uint64), bits)
        else:
            u = x.astype(np.uint64)
            low = u & (~u + np.uint64(1))          # the lowest set bit
            r = np.where(u == 0, bits, 63 - _clz64(low, 64))
        R[d] = np.asarray(r).astype(x.dtype)
    return f


# -- floats ----------------------------------------------------------------------------------

def _float_ty(ins, what):
    s = ins.ty.scalar
    if s.kind != "float":
        raise Unsupported(f"{what} on {ins.ty.text} (the emulator implements it for half, float and double)")
    return s.bits


def _fminmax(K, ins, O, d, fam):
    """minnum/maxnum: a NaN operand yields the other (IEEE minNum); minimum/maximum: NaN
    propagates; minimumnum/maximumnum: NaN yields the other. Every form orders -0 below
    +0 (LangRef allows either for minnum/maxnum; gfx1250's v_min/max_num_f32 order them,
    AMD RDNA4 ISA guide; an assumption for gfx1250)."""
    _float_ty(ins, fam)
    a, b = O
    is_min = "min" in fam
    propagate = fam in ("minimum", "maximum")

    def f(R, X):
        x, y = R[a], R[b]
        with np.errstate(invalid="ignore"):
            lt = (x < y) | ((x == y) & np.signbit(x) & ~np.signbit(y))
        pick = np.where(lt, x, y) if is_min else np.where(lt, y, x)
        xn, yn = np.isnan(x), np.isnan(y)
        if propagate:
            pick = np.where(xn, x, np.where(yn, y, pick))
        else:
            pick = np.where(xn, y, np.where(yn, x, pick))
        R[d] = pick.astype(x.dtype)
    return f


def fma_rounded(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` rounded once to the dtype of ``a`` (half or float): the product
    is exact in float64, the sum is computed in float64 with round-to-odd (TwoSum
    error, then the last bit forced odd when inexact), and round-to-odd at 53 bits
    followed by nearest-even at <= 24 bits is the correctly rounded result (Boldo and
    Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
    rounding to odd", IEEE TC 2008)."""
    dt = a.dtype
    p = a.astype(np.float64) * b.astype(np.float64)
    cc = c.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        s = p + cc
        bp = s - p
        e = (p - (s - bp)) + (cc - bp)
        odd = (s.view(np.uint64) & np.uint64(1)).astype(bool)
        fix = np.isfinite(s) & (e != 0) & ~odd
        s = np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
        return s.astype(dt)


def _fma(K, ins, O, d, fam):
    """fma: fused, one rounding. fmuladd: LLVM lets the backend fuse or not; AMDGPU
    fuses f32/f16 fmuladd when denormals are not flushed (AMDGPUISelLowering
    isFMAFasterThanFMulAndFAdd): modelled as fused, an assumption."""
    bits = _float_ty(ins, fam)
    a, b, c = O
    if bits == 64:
        raise Unsupported(f"llvm.{fam} on double")

    def f(R, X):
        R[d] = fma_rounded(R[a], R[b], R[c])
    return f


def _fabs(K, ins, O, d, fam):
    _float_ty(ins, fam)
    a = O[0]

    def f(R, X):
        R[d] = np.abs(R[a])
    return f


def _copysign(K, ins, O, d, fam):
    _float_ty(ins, fam)
    a, b = O

    def f(R, X):
        R[d] = np.copysign(R[a], R[b])
    return f


# -- vector reductions -------------------------------------------------------------------------

def shuffle_tree(v: np.ndarray, op) -> np.ndarray:
    """A (32, n) vector reduced by halving (n a power of two): ``v[:, :h] op v[:, h:]``
    until one element is left -- LLVM's shuffle reduction (llvm/lib/Transforms/Utils/
    LoopUtils.cpp ``getShuffleReduction``, used by ExpandReductions for a reassoc
    reduction; SelectionDAG splits a VECREDUCE the same way, lo op hi)."""
    while v.shape[1] > 1:
        h = v.shape[1] // 2
        v = op(v[:, :h], v[:, h:])
    return v[:, 0]


def _reduce(K, ins, O, d, fam):
    kind = fam.split(".", 1)[1]
    if kind not in _REDUCE:
        raise Unsupported(f"llvm.vector.reduce.{kind}")
    if kind in ("fadd", "fmul"):
        return _reduce_fp(K, ins, O, d, kind)
    v = O[0]
    vty = ins.ops[0].ty
    s = vty.elem
    if kind in ("fmax", "fmin", "fmaximum", "fminimum"):
        if s.kind != "float":
            raise Unsupported(f"llvm.vector.reduce.{kind} on {vty.text}")
        prop = kind in ("fmaximum", "fminimum")
        ismax = "max" in kind

        def f(R, X):
            x = R[v]
            if prop:
                r = (np.max if ismax else np.min)(x, axis=1)
            else:
                r = (np.fmax if ismax else np.fmin).reduce(x, axis=1)
            R[d] = r.astype(x.dtype)
        return f
    if s.kind != "int":
        raise Unsupported(f"llvm.vector.reduce.{kind} on {vty.text}")
    bits = s.bits
    if bits == 1:
        fn = {"add": np.logical_xor, "xor": np.logical_xor, "mul": np.logical_and, "and": np.logical_and,
              "umin": np.logical_and, "smax": np.logical_and, "or": np.logical_or, "umax": np.logical_or,
              "smin": np.logical_or}[kind]

        def f(R, X):
            R[d] = fn.reduce(R[v], axis=1)
        return f
    ufn = {"add": np.add, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or,
           "xor": np.bitwise_xor, "umax": np.maximum, "umin": np.minimum, "smax": np.maximum,
           "smin": np.minimum}[kind]
    signed = kind in ("smax", "smin")
    sdt = SIGNED[bits]

    def f(R, X):
        x = R[v]
        if signed:
            R[d] = ufn.reduce(x.view(sdt), axis=1).view(x.dtype)
        else:
            R[d] = ufn.reduce(x, axis=1, dtype=x.dtype)
    return f


def _reduce_fp(K, ins, O, d, kind):
    """``reduce.fadd(start, v)``: without ``reassoc`` sequential from the start value
    (LangRef); with it, the shuffle tree of the vector, then ``start op tree`` (what
    ExpandReductions emits; LangRef leaves the order unspecified)."""
    st, v = O
    vty = ins.ops[1].ty
    if vty.elem.kind != "float":
        raise Unsupported(f"llvm.vector.reduce.{kind} on {vty.text}")
    op = np.add if kind == "fadd" else np.multiply
    reassoc = bool({"reassoc", "fast"} & set(ins.extra.get("flags", ())))
    n = vty.n
    if reassoc and n & (n - 1):
        raise Unsupported(f"reassoc llvm.vector.reduce.{kind} of {n} elements (not a power of two)")

    def f(R, X):
        x = R[v]
        acc = R[st]
        if reassoc:
            R[d] = op(acc, shuffle_tree(x, op)).astype(x.dtype)
            return
        for k in range(n):
            acc = op(acc, x[:, k])
        R[d] = acc.astype(x.dtype)
    return f


# -- assume, wave intrinsics -----------------------------------------------------------------

def _assume(K, ins, O, d, fam):
    c, = O

    def f(R, X):
        cc = R[c]
        if np.count_nonzero(cc) != cc.size:
            raise Poison(f"llvm.assume of false in lane {first_lane(~cc)} (undefined behaviour)")
    return f


def _readfirstlane(K, ins, O, d, fam):
    if ins.ty.kind not in ("int", "float", "bf16"):
        raise Unsupported(f"llvm.amdgcn.{fam[7:]} of {ins.ty.text}")
    a, = O

    def f(R, X):
        x = R[a]
        R[d] = np.full(WAVE, x[0], dtype=x.dtype)
    return f


def _ballot(K, ins, O, d, fam):
    """ballot.i32 / .i64 of an i1: bit l set when lane l's operand is true (wave32:
    the upper 32 bits of i64 are zero; AMDGPUUsage, "llvm.amdgcn.ballot")."""
    if ins.ty.kind != "int" or ins.ty.bits not in (32, 64):
        raise Unsupported(f"llvm.amdgcn.ballot of {ins.ty.text}")
    c, = O
    weights = (np.uint64(1) << np.arange(WAVE, dtype=np.uint64))
    dt = ins.ty.dtype

    def f(R, X):
        m = np.uint64(np.sum(np.where(R[c], weights, np.uint64(0)), dtype=np.uint64))
        R[d] = np.full(WAVE, m, dtype=np.uint64).astype(dt)
    return f


def _mbcnt(K, ins, O, d, fam):
    """mbcnt.lo(mask, acc): acc + popcount(mask & ((1 << lane) - 1)) for lanes 0..31;
    mbcnt.hi(mask, acc): acc + the bits of mask below lane - 32, none in wave32
    (AMDGPU ISA ``V_MBCNT_LO/HI_U32_B32``)."""
    m, acc = O
    below = ((np.uint64(1) << np.arange(WAVE, dtype=np.uint64)) - np.uint64(1)).astype(np.uint32)
    hi = ins.extra["callee"].endswith(".hi")

    def f(R, X):
        if hi:
            R[d] = R[acc]
            return
        bits = np.unpackbits((R[m] & below)[:, None].view(np.uint8), axis=-1).sum(-1)
        R[d] = (R[acc] + bits.astype(np.uint32)).astype(np.uint32)
    return f


_TABLE = {
    "umin": _minmax, "umax": _minmax, "smin": _minmax, "smax": _minmax,
    "usub": _sat_family, "uadd": _sat_family, "ssub": _sat_family, "sadd": _sat_family,
    "abs": _abs, "fshl": _fsh, "fshr": _fsh, "ctpop": _bitcount, "ctlz": _bitcount, "cttz": _bitcount,
    "minnum": _fminmax, "maxnum": _fminmax, "minimum": _fminmax, "maximum": _fminmax,
    "minimumnum": _fminmax, "maximumnum": _fminmax, "fma": _fma, "fmuladd": _fma,
    "fabs": _fabs, "copysign": _copysign, "assume": _assume,
    "amdgcn.readfirstlane": _readfirstlane, "amdgcn.ballot": _ballot,
    "amdgcn.mbcnt": _mbcnt,
    **{"reduce." + k: _reduce for k in _REDUCE},
}

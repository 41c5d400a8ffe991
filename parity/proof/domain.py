"""The abstract values of the alignment/bounds proof: known low bits and an unsigned interval.

An integer value of width ``w`` (a vector: every element, joined) is the tuple
``(w, k, r, lo, hi)``: its low ``k`` bits are known to be ``r`` (a congruence
``v = r mod 2**k``: the known-bits domain restricted to a contiguous low run,
which is what alignment needs), and ``lo <= v <= hi`` as unsigned integers.
``k == w`` means the value is one constant. Every operation below
over-approximates the concrete one for every pair of concrete values the
inputs stand for (wrap-around widens the interval to the whole range; an
``nuw`` flag lets an overflowing result be treated as poison, as LangRef says).

A pointer is :class:`Ptr` (a base -- kernel argument or LDS global -- plus a
byte offset value of width 64); a buffer resource is :class:`Rsrc` (the base
pointer it was made from). ``None`` is "unknown" for anything.
"""

from __future__ import annotations

MASK = {w: (1 << w) - 1 for w in range(0, 129)}


def top(w: int):
    """The unknown ``w``-bit integer: no known bits, the whole unsigned range."""
    return (w, 0, 0, 0, MASK[w])


def const(w: int, c: int):
    """The ``w``-bit constant ``c`` (taken modulo 2**w)."""
    c &= MASK[w]
    return (w, w, c, c, c)


def tz(x: int, cap: int) -> int:
    """Trailing zero bits of ``x``, at most ``cap`` (``cap`` when x == 0)."""
    if x == 0:
        return cap
    return min((x & -x).bit_length() - 1, cap)


def align_bits(v) -> int:
    """Number of low bits known zero in every value ``v`` stands for (an i64 offset)."""
    w, k, r, _, _ = v
    return tz(r, k)


def _low(known: int) -> int:
    """Length of the run of ones at bit 0 of ``known``."""
    return tz(~known, 128)


def join(a, b):
    """Least upper bound of two integer values (None, unknown, absorbs)."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    w, ka, ra, la, ha = a
    _, kb, rb, lb, hb = b
    k = min(ka, kb, tz(ra ^ rb, 128))
    return (w, k, ra & MASK[k], min(la, lb), max(ha, hb))


def widen(old, new):
    """``new`` with the interval bound that moved since ``old`` pushed to the end of the range."""
    w, k, r, lo, hi = new
    if old is not None:
        if lo < old[3]:
            lo = 0
        if hi > old[4]:
            hi = MASK[w]
    return (w, k, r, lo, hi)


def _mk(w, k, r, lo, hi, nuw=False):
    k = min(k, w)
    if hi > MASK[w] or lo < 0:
        if nuw and lo >= 0 and lo <= MASK[w]:
            hi = MASK[w]
        else:
            lo, hi = 0, MASK[w]
    if k == w:
        lo = hi = r & MASK[w]
    elif lo == hi:
        return (w, w, lo, lo, lo)
    return (w, k, r & MASK[k], lo, hi)


def add(a, b, nuw=False):
    """``add``; ``nuw``: an overflowing result is poison, so the interval is clamped."""
    w, ka, ra, la, ha = a
    _, kb, rb, lb, hb = b
    k = min(ka, kb)
    return _mk(w, k, (ra + rb) & MASK[k], la + lb, ha + hb, nuw)


def sub(a, b, nuw=False):
    """``sub``; ``nuw`` as in :func:`add`."""
    w, ka, ra, la, ha = a
    _, kb, rb, lb, hb = b
    k = min(ka, kb)
    return _mk(w, k, (ra - rb) & MASK[k], la - hb, ha - lb, nuw)


def mul(a, b, nuw=False):
    """``mul``: known low bits ``min(ka + tz(rb), kb + tz(ra))``."""
    w, ka, ra, la, ha = a
    _, kb, rb, lb, hb = b
    k = min(w, ka + tz(rb, kb), kb + tz(ra, ka))
    return _mk(w, k, (ra * rb) & MASK[k], la * lb, ha * hb, nuw)


def is_const(v) -> bool:
    """True when ``v`` is one constant."""
    return v is not None and v[1] == v[0]


def shl(a, b, nuw=False):
    """``shl`` by a constant (else unknown)."""
    w = a[0]
    if not is_const(b) or b[2] >= w:
        return top(w)
    c = b[2]
    _, ka, ra, la, ha = a
    return _mk(w, ka + c, ra << c, la << c, ha << c, nuw)


def lshr(a, b):
    """``lshr`` by a constant (else unknown)."""
    w = a[0]
    if not is_const(b) or b[2] >= w:
        return top(w)
    c = b[2]
    _, ka, ra, la, ha = a
    if ka == w:
        return const(w, ra >> c)
    k = max(0, ka - c)
    return _mk(w, k, ra >> c, la >> c, ha >> c)


def ashr(a, b):
    """``ashr``: as ``lshr`` for a non-negative value, else unknown."""
    w = a[0]
    if a[4] <= MASK[w] >> 1:
        return lshr(a, b)
    return top(w)


def _bits(v):
    w, k, r, _, _ = v
    known = MASK[k] if k < w else MASK[w]
    return known, r & known


def band(a, b):
    """``and``: a result bit is known where both are, or where either is known 0."""
    w = a[0]
    KA, ra = _bits(a)
    KB, rb = _bits(b)
    known = (KA & KB) | (KA & ~ra) | (KB & ~rb)
    k = min(_low(known), w)
    return _mk(w, k, ra & rb, 0, min(a[4], b[4]))


def disjoint(a, b) -> bool:
    """True when no bit can be set in both: one operand's known-zero low bits
    cover every bit the other's interval can set."""
    for x, y in ((a, b), (b, a)):
        if y[4] < (1 << align_bits(x)):
            return True
    return False


def bor(a, b, disjoint=False):
    """``or`` (``disjoint``: as ``add``): known where both are, or either is known 1."""
    if disjoint:
        return add(a, b)
    w = a[0]
    KA, ra = _bits(a)
    KB, rb = _bits(b)
    known = (KA & KB) | (KA & ra) | (KB & rb)
    k = min(_low(known), w)
    hi = (1 << max(a[4].bit_length(), b[4].bit_length())) - 1
    return _mk(w, k, ra | rb, max(a[3], b[3]), hi)


def bxor(a, b):
    """``xor``."""
    w = a[0]
    k = min(a[1], b[1])
    hi = (1 << max(a[4].bit_length(), b[4].bit_length())) - 1
    return _mk(w, k, a[2] ^ b[2], 0, hi)


def udiv(a, b):
    """``udiv``: by a power of two as ``lshr``, by another constant through the interval."""
    w = a[0]
    if is_const(a) and is_const(b) and b[2]:
        return const(w, a[2] // b[2])
    if is_const(b) and b[2]:
        c = b[2]
        if c & (c - 1) == 0:
            return lshr(a, const(w, c.bit_length() - 1))
        return _mk(w, 0, 0, a[3] // c, a[4] // c)
    return _mk(w, 0, 0, 0, a[4])


def urem(a, b):
    """``urem``: by a power of two as ``and``; by a constant c keeps ``tz(c)`` low bits."""
    w = a[0]
    if is_const(a) and is_const(b) and b[2]:
        return const(w, a[2] % b[2])
    if is_const(b) and b[2]:
        c = b[2]
        if c & (c - 1) == 0:
            return band(a, const(w, c - 1))
        k = min(a[1], tz(c, w))
        if a[4] < c:
            return a
        return _mk(w, k, a[2], 0, c - 1)
    return _mk(w, 0, 0, 0, a[4] if b is None else min(a[4], max(b[4] - 1, 0)))


_UNSIGNED = {"eq": "eq", "ne": "ne", "ult": "ult", "ule": "ule", "ugt": "ugt", "uge": "uge",
             "slt": "ult", "sle": "ule", "sgt": "ugt", "sge": "uge"}


def icmp(pred: str, a, b):
    """``icmp pred a, b`` as an i1 value: the constant 1 / 0 where the operands' intervals
    or known low bits decide it for every pair of values they stand for, else unknown. A
    signed predicate is decided only when both operands are non-negative (then it is the
    unsigned one). LangRef 'icmp' instruction."""
    p = _UNSIGNED.get(pred)
    if p is None or a is None or b is None or (p != pred and not (nonneg(a) and nonneg(b))):
        return top(1)
    if p in ("ugt", "uge"):
        a, b, p = b, a, "ult" if p == "ugt" else "ule"
    if p == "ult":
        return const(1, 1) if a[4] < b[3] else const(1, 0) if a[3] >= b[4] else top(1)
    if p == "ule":
        return const(1, 1) if a[4] <= b[3] else const(1, 0) if a[3] > b[4] else top(1)
    k = min(a[1], b[1])
    differ = a[4] < b[3] or b[4] < a[3] or (a[2] ^ b[2]) & MASK[k] != 0
    same = is_const(a) and is_const(b) and a[2] == b[2]
    if differ or same:
        return const(1, int(same == (p == "eq")))
    return top(1)


def nonneg(a) -> bool:
    """True when every value ``a`` stands for is non-negative as a signed integer."""
    return a[4] <= MASK[a[0]] >> 1


def zext(a, W: int):
    """``zext`` to ``W`` bits."""
    w, k, r, lo, hi = a
    return (W, W if k == w else k, r, lo, hi)


def sext(a, W: int):
    """``sext`` to ``W`` bits (low bits kept; a possibly negative value loses its interval)."""
    w, k, r, lo, hi = a
    if nonneg(a):
        return zext(a, W)
    if k == w:
        return const(W, r - (1 << w) if r >> (w - 1) else r)
    return (W, k, r, 0, MASK[W])


def trunc(a, W: int):
    """``trunc`` to ``W`` bits."""
    w, k, r, lo, hi = a
    k = min(k, W)
    if hi <= MASK[W]:
        return _mk(W, k, r, lo, hi)
    return _mk(W, k, r, 0, MASK[W])


class Ptr:
    """A pointer: ``base`` (``%arg`` or ``@lds`` name, or None: unknown), its
    base alignment in bytes, the address space and the byte offset (i64 value)."""

    __slots__ = ("base", "align", "space", "off")

    def __init__(self, base, align: int, space: int, off):
        self.base = base
        self.align = align
        self.space = space
        self.off = off

    def __eq__(self, o):
        return (isinstance(o, Ptr) and o.base == self.base and o.align == self.align
                and o.space == self.space and o.off == self.off)

    def __hash__(self):
        return hash((self.base, self.off))


class Rsrc:
    """A buffer resource made from pointer ``ptr`` (make.buffer.rsrc)."""

    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr

    def __eq__(self, o):
        return isinstance(o, Rsrc) and o.ptr == self.ptr

    def __hash__(self):
        return hash(self.ptr)


def join_any(a, b):
    """Join of two abstract values of one SSA type (ints, Ptr, Rsrc); None is unknown."""
    if a is None or b is None:
        return None
    if isinstance(a, tuple) and isinstance(b, tuple):
        return join(a, b)
    if isinstance(a, Ptr) and isinstance(b, Ptr):
        if a.base == b.base and a.space == b.space:
            return Ptr(a.base, a.align, a.space, join(a.off, b.off))
        return Ptr(None, 1, a.space, top(64))
    if isinstance(a, Rsrc) and isinstance(b, Rsrc):
        p = join_any(a.ptr, b.ptr)
        return Rsrc(p)
    return None

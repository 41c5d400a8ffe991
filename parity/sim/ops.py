"""The instruction dispatcher: one decoded instruction -> its closure ``f(R, X)``.

:func:`compile_ins` handles control flow (``br`` with its phi edge moves,
``ret``), fences, ``select``, ``fneg`` and the vector element ops itself and
hands the rest to the op compilers: parity/sim/ops_arith.py (binary ops,
compares, casts), ops_memory.py (pointers, loads, stores, buffer access) and
ops_call.py (intrinsics). A closure returns ``None`` to fall through, the
:class:`DBlock` to branch to, or a control token (parity/sim/memory.py).
``K`` is the :class:`parity.sim.kernel.Kernel` being decoded (its register
slots and options).
"""
from __future__ import annotations

import numpy as np

from . import ir
from .errors import DivergentBranch, Poison, Unsupported
from .memory import CONTROL_RET, LANES, Ptr
from .ops_arith import as_signed, cast, fcmp, float_binop, icmp, int_binop
from .ops_call import call
from .ops_generic import compile_extra
from .ops_memory import gep, load, store
from .shadow import SCOPE_LEVEL


class DBlock:
    """A decoded basic block: its closures, their ``where`` texts, and its phis
    as ``(predecessor name, destination slot, source slot)``."""

    __slots__ = ("name", "ops", "texts", "phis", "index")

    def __init__(self, name: str, index: int):
        self.name = name
        self.index = index
        self.ops: list = []
        self.texts: list = []
        self.phis: list = []


def where_of(ins: ir.Ins) -> str:
    return f"`{ins.text}` (block {ins.block}, line {ins.line})"


def lane_ranges(ix) -> str:
    ix = list(int(i) for i in ix)
    out, start = [], None
    for k, i in enumerate(ix):
        if start is None:
            start = i
        if k + 1 == len(ix) or ix[k + 1] != i + 1:
            out.append(f"{start}" if start == i else f"{start}..{i}")
            start = None
    return ",".join(out)


def edge(src: DBlock, dst: DBlock):
    """The branch ``src -> dst``: the target and its phi moves (destination and source slots)."""
    moves = [(d, s) for pred, d, s in dst.phis if pred == src.name]
    dsts = tuple(d for d, _ in moves)
    srcs = tuple(s for _, s in moves)
    nphi = len({d for _, d, _ in dst.phis})
    if len(dsts) != nphi:
        raise Unsupported(f"block {dst.name} has phis without an edge from {src.name}")
    return dst, dsts, srcs


def compile_ins(K, ins: ir.Ins, db: DBlock, by_name: dict):
    """One instruction compiled to a closure ``f(R, X)`` over the register file R and the
    wave context X (a block terminator's closure returns the next block). Raises
    Unsupported for an instruction outside the emulator's subset."""
    op = ins.op
    where = where_of(ins)
    if op in ir.INT_BINOPS:
        return int_binop(K, ins, where)
    if op in ir.FLOAT_BINOPS:
        return float_binop(K, ins, where)
    O = [K.operand(o, where) for o in ins.ops] if op not in ("phi",) else []
    d = K.slot("%" + ins.dst) if ins.dst else None
    if op in ir.CASTS:
        return cast(ins, O, d, where)
    if op == "load":
        return load(K, ins, O, d, where)
    if op == "store":
        return store(K, ins, O, where)
    if op == "call":
        return call(K, ins, O, d, where)
    if op == "br":
        return _br(ins, O, db, by_name)
    if op in _SIMPLE:
        return _SIMPLE[op](ins, O, d, where)
    return compile_extra(K, ins, where)   # freeze (ops_generic.py); Unsupported otherwise


def _fneg(ins, O, d, where):
    a, = O
    if ins.ty.scalar.kind == "bf16":
        def f(R, X):
            R[d] = R[a] ^ np.uint16(0x8000)
    else:
        def f(R, X):
            R[d] = -R[a]
    return f


def _select(ins, O, d, where):
    """``select``: lane-wise; between pointers only into one memory (or a wave-uniform condition)."""
    c, a, b = O
    cty = ins.ops[0].ty
    if ins.ty.kind == "ptr":
        def f(R, X):
            pa, pb, cc = R[a], R[b], R[c]
            if pa.mem is not pb.mem:
                if cc.all():
                    R[d] = pa
                    return
                if not cc.any():
                    R[d] = pb
                    return
                raise Unsupported("select between pointers into different memories with a lane-varying condition")
            R[d] = Ptr(pa.mem, np.where(cc, pa.off, pb.off))
        return f
    if ins.ty.is_vec and not cty.is_vec:
        def f(R, X):
            R[d] = np.where(R[c][:, None], R[a], R[b])
    else:
        def f(R, X):
            R[d] = np.where(R[c], R[a], R[b])
    return f


def _element_index(R, i, ity, n: int, what: str):
    """A lane-wise element index, poison (LangRef) when outside 0..n-1."""
    idx = R[i]
    if ity.bits > 1:
        idx = as_signed(idx, ity.bits).astype(np.int64)
    if np.count_nonzero((idx < 0) | (idx >= n)):
        raise Poison(f"{what} index out of range 0..{n - 1}")
    return idx


def _extractelement(ins, O, d, where):
    v, i = O
    n = ins.ops[0].ty.n
    ity = ins.ops[1].ty

    def f(R, X):
        R[d] = R[v][LANES, _element_index(R, i, ity, n, "extractelement")]
    return f


def _insertelement(ins, O, d, where):
    v, e, i = O
    n = ins.ty.n
    ity = ins.ops[2].ty

    def f(R, X):
        idx = _element_index(R, i, ity, n, "insertelement")
        out = R[v].copy()
        out[LANES, idx] = R[e]
        R[d] = out
    return f


def _shufflevector(ins, O, d, where):
    a, b = O
    mask = np.array(ins.extra["mask"], np.int64)
    n = ins.ops[0].ty.n
    if (mask < 0).any() or (mask >= 2 * n).any():
        raise Unsupported("shufflevector mask with poison/out-of-range entries")
    if (mask < n).all():
        def f(R, X):
            R[d] = R[a][:, mask]
    else:
        def f(R, X):
            R[d] = np.concatenate((R[a], R[b]), axis=1)[:, mask]
    return f


def _fence(ins, O, d, where):
    """``fence [syncscope] ordering``: a release publishes at the scope's level, an acquire
    takes the workgroup (and cluster) phase (parity/sim/launch.py's memory model)."""
    if ins.extra["scope"] not in ("workgroup", "cluster", "agent", "system", "wavefront", "singlethread"):
        raise Unsupported(f"fence scope {ins.extra['scope']}")
    level = SCOPE_LEVEL[ins.extra["scope"]]
    ordering = ins.extra["ordering"]
    if ordering not in ("release", "acquire", "acq_rel", "seq_cst"):
        raise Unsupported(f"fence ordering {ordering}")
    rel = ordering != "acquire"
    acq = ordering != "release"

    def f(R, X):
        if rel and level >= 1:
            X.launch.release(X, level)
        if acq and level >= 1:
            X.acq1 = X.wg.phase
            if level >= 2:
                X.acq2 = X.cl.phase
        return None
    return f


def _ret(ins, O, d, where):
    def f(R, X):
        return CONTROL_RET
    return f


#: opcode -> fn(ins, operand slots, destination slot, where) -> closure
_SIMPLE = {"fneg": _fneg, "icmp": lambda ins, O, d, where: icmp(ins, O, d),
           "fcmp": lambda ins, O, d, where: fcmp(ins, O, d), "select": _select,
           "getelementptr": gep, "extractelement": _extractelement, "insertelement": _insertelement,
           "shufflevector": _shufflevector, "fence": _fence, "ret": _ret}


def _divergent(X, cc):
    on = np.flatnonzero(cc)
    return DivergentBranch(
        f"branch condition differs between lanes of wave {X.wave} (true in lanes "
        f"{lane_ranges(on)}, false in the others); kernels must keep branches wave-uniform")


def _jump(tgt, dsts, srcs):
    """An unconditional branch: the target's phi copies (parallel: read all, then write), then the block."""
    if not dsts:
        def f(R, X):
            return tgt
    elif len(dsts) == 1:
        d0, s0 = dsts[0], srcs[0]

        def f(R, X):
            R[d0] = R[s0]
            return tgt
    else:
        def f(R, X):
            vals = [R[s] for s in srcs]
            for dd, vv in zip(dsts, vals):
                R[dd] = vv
            return tgt
    return f


def _br(ins, O, db, by_name):
    """``br``: a jump, or a wave-uniform conditional branch (a lane-varying condition is a
    DivergentBranch error: the kernels keep branches wave-uniform)."""
    tg = ins.extra["targets"]
    for t in tg:
        if t not in by_name:
            raise Unsupported(f"branch to unknown block %{t}")
    if len(tg) == 1:
        return _jump(*edge(db, by_name[tg[0]]))
    c, = O
    if ins.ops[0].ty.is_vec:
        raise Unsupported("branch on a vector condition")
    t1, d1, s1 = edge(db, by_name[tg[0]])
    t2, d2, s2 = edge(db, by_name[tg[1]])
    if not (d1 or d2):
        def f(R, X):
            cc = R[c]
            n = np.count_nonzero(cc)
            if n == cc.size:
                return t1
            if not n:
                return t2
            raise _divergent(X, cc)
        return f

    def f(R, X):
        cc = R[c]
        n = np.count_nonzero(cc)
        if n == cc.size:
            tgt, dsts, srcs = t1, d1, s1
        elif not n:
            tgt, dsts, srcs = t2, d2, s2
        else:
            raise _divergent(X, cc)
        vals = [R[s] for s in srcs]
        for dd, vv in zip(dsts, vals):
            R[dd] = vv
        return tgt
    return f

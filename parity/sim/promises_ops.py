"""Per-instruction promise checks: a decoded closure wrapped with the poison and UB
rules of the flags and metadata its instruction carries (parity/sim/promises.py
lists every kind and refuses the unchecked ones at decode).

:func:`wrap` returns the closure unchanged when the instruction carries nothing
to check here (add/sub/mul ``nuw``/``nsw`` are checked inline by
parity/sim/ops_arith.py), else a closure that runs it and then checks the
operands and result (LangRef: the flag makes the result poison; the emulator
treats poison as an error, :class:`parity.sim.errors.Poison`) or, for memory
promises, the memory and bytes it touches (:class:`PromiseError`).
"""
from __future__ import annotations

import numpy as np

from .errors import Poison
from .fp import bf16_bits_to_f32
from .memory import first_lane
from .promises import PromiseError, range_pairs, scope_set

_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_BUFFER = ("llvm.amdgcn.raw.ptr.buffer.load.", "llvm.amdgcn.raw.ptr.buffer.store.")


def _signed(x, bits):
    if bits == 1:
        return -(x.astype(np.int64))
    return x.view(_SIGNED[bits]).astype(np.int64)


def wrap(K, ins, fn, where: str):
    """``fn`` (the closure of ``ins``) with the checks of its flags, metadata and
    pointer-argument attributes; ``K`` the Kernel (slots, ``promises``)."""
    checks = []
    flags = set(ins.extra.get("flags", ()))
    O = [K.operand(o, where) for o in ins.ops] if ins.op != "phi" else []
    d = K.slot("%" + ins.dst) if ins.dst else None
    for f in sorted(flags):
        c = _flag_check(K, ins, f, O, d)
        if c is not None:
            checks.append(c)
    md = ins.extra.get("md", {})
    nodes = K.module.md
    if "range" in md:
        checks.append(_range_check(ins, range_pairs(md["range"], nodes, ins.ty.scalar.bits, where), d))
    pre = []
    mem_slot, kind = _memory_operand(ins, O)
    if mem_slot is not None:
        pr = K.promises
        lds = ins.op in ("load", "store") and ins.ops[0 if ins.op == "load" else 1].ty.addrspace == 3
        if not lds and ((kind == "write" and pr.no_write) or (kind == "read" and pr.no_read)):
            pre.append(_arg_access(pr, mem_slot, kind))
        if "invariant.load" in md or "amdgpu.noclobber" in md:
            checks.append(_stable_load(pr, ins, mem_slot, "invariant.load" in md, where))
        if "noalias" in md or "alias.scope" in md:
            pre.append(_scoped(pr, ins, mem_slot, md, nodes, where))
    if not checks and not pre:
        return fn
    if len(checks) == 1 and not pre:
        c0 = checks[0]

        def f(R, X):
            r = fn(R, X)
            c0(R, X)
            return r
        return f
    if len(pre) == 1 and not checks:
        p0 = pre[0]

        def f(R, X):
            p0(R, X)
            return fn(R, X)
        return f

    def f(R, X):
        for c in pre:
            c(R, X)
        r = fn(R, X)
        for c in checks:
            c(R, X)
        return r
    return f


def _memory_operand(ins, O) -> tuple:
    """(slot of the pointer / resource operand, "read" | "write") of a memory instruction."""
    if ins.op == "load":
        return O[0], "read"
    if ins.op == "store":
        return O[1], "write"
    if ins.op == "call":
        c = ins.extra["callee"]
        if c.startswith(_BUFFER[0]):
            return O[0], "read"
        if c.startswith(_BUFFER[1]):
            return O[1], "write"
    return None, None


def _arg_access(pr, slot, kind):
    deny = pr.no_write if kind == "write" else pr.no_read
    what = "writes" if kind == "write" else "reads"

    def c(R, X):
        mem = R[slot].mem
        if mem.space == "global" and mem.name in deny:
            attr = [a for a in ("readonly", "writeonly", "readnone") if a in pr.params[mem.name]][0]
            raise PromiseError(f"the kernel {what} argument %{mem.name}, which is {attr} "
                               f"(LangRef 'Parameter Attributes': undefined behaviour)")
    return c


def _fvals(R, slot, ty):
    v = R[slot]
    return bf16_bits_to_f32(v) if ty.scalar.kind == "bf16" else v


def _base_in_bounds(K, op) -> bool:
    """The base operand is in bounds by construction: a pointer argument or LDS
    global (offset 0), or an inbounds getelementptr (checked where it is made)."""
    if op.kind == "glob" or (op.kind == "reg" and op.name in K.promises.params):
        return True
    if op.kind != "reg":
        return False
    defs = K.promises.defs
    if defs is None:
        defs = K.promises.defs = {i.dst: i for b in K.module.blocks for i in b.ins if i.dst}
    src = defs.get(op.name)
    return src is not None and src.op == "getelementptr" and "inbounds" in src.extra["flags"]


def _flag_check(K, ins, f, O, d):
    op = ins.op
    if f in ("nnan", "ninf"):
        return _fmf_check(ins, f, O, d)
    if f in ("nuw", "nsw") and op in ("add", "sub", "mul"):
        return None   # ops_arith checks these inline
    if op == "getelementptr":
        if f == "nusw" and "inbounds" in ins.extra["flags"]:
            return None
        return _gep_check(ins, f, O, d, _base_in_bounds(K, ins.ops[0]))
    src = ins.ops[0].ty.scalar if ins.ops else None
    bits = src.bits if src is not None else 0
    a = O[0] if O else None
    b = O[1] if len(O) > 1 else None
    if op == "shl":
        def c(R, X):
            x, y, r = R[a], R[b], R[d]
            if f == "nuw":
                bad = np.right_shift(r, y.astype(r.dtype)) != x
            else:
                bad = _signed(r, bits) >> y.astype(np.int64) != _signed(x, bits)
            if np.count_nonzero(bad):
                raise Poison(f"shl {f}: the shift drops {'a set bit' if f == 'nuw' else 'a bit unlike the sign'} in "
                             f"lane {first_lane(bad)} ({int(np.asarray(x).flat[first_lane(bad)])} << "
                             f"{int(np.asarray(y).flat[first_lane(bad)])}; LangRef 'shl' Instruction: poison)")
        return c
    if op == "trunc":
        dbits = ins.ty.scalar.bits

        def c(R, X):
            x, r = R[a], R[d]
            if f == "nuw":
                bad = r.astype(x.dtype) != x
            else:
                bad = _signed(r, dbits) != _signed(x, bits)
            if np.count_nonzero(bad):
                raise Poison(f"trunc {f}: the value does not fit i{dbits} "
                             f"{'unsigned' if f == 'nuw' else 'signed'} in lane {first_lane(bad)} "
                             f"(LangRef 'trunc .. to' Instruction: poison)")
        return c
    if f == "exact":
        def c(R, X):
            x, y = R[a], R[b]
            if op == "udiv":
                bad = x % y != 0
            elif op == "sdiv":
                bad = np.fmod(_signed(x, bits), _signed(y, bits)) != 0
            else:
                bad = np.left_shift(R[d], y.astype(x.dtype)) != x
            if np.count_nonzero(bad):
                raise Poison(f"{op} exact: a non-zero remainder or shifted-out bit in lane {first_lane(bad)} "
                             f"(LangRef '{op}' Instruction: poison)")
        return c
    if f == "disjoint":
        def c(R, X):
            bad = (R[a] & R[b]) != 0
            if np.count_nonzero(bad):
                raise Poison(f"or disjoint: the operands share a set bit in lane {first_lane(bad)} "
                             f"(LangRef 'or' Instruction: poison)")
        return c
    if f == "nneg":
        def c(R, X):
            bad = _signed(R[a], bits) < 0
            if np.count_nonzero(bad):
                raise Poison(f"{op} nneg: the operand is negative in lane {first_lane(bad)} "
                             f"(LangRef '{op}' Instruction: poison)")
        return c
    if f == "samesign":
        def c(R, X):
            bad = (_signed(R[a], bits) < 0) != (_signed(R[b], bits) < 0)
            if np.count_nonzero(bad):
                raise Poison(f"icmp samesign: the operands' signs differ in lane {first_lane(bad)} "
                             f"(LangRef 'icmp' Instruction: poison)")
        return c
    raise AssertionError(f"no check for flag {f} on {op}")   # promises.check_module refused it first


def _fmf_check(ins, f, O, d):
    """``nnan`` / ``ninf``: no operand and no result is NaN / infinite (select:
    its two value operands; fcmp: its operands)."""
    op = ins.op
    test = np.isnan if f == "nnan" else np.isinf
    fl = [(s, o.ty) for s, o in zip(O, ins.ops) if o.ty.scalar.kind in ("float", "bf16")]
    if op == "select":
        fl = fl[-2:]
    if ins.ty is not None and ins.ty.scalar.kind in ("float", "bf16") and op not in ("select", "fcmp"):
        fl.append((d, ins.ty))
    what = "NaN" if f == "nnan" else "an infinity"

    def c(R, X):
        for s, ty in fl:
            bad = test(_fvals(R, s, ty))
            if np.count_nonzero(bad):
                raise Poison(f"{op} {f}: an operand or the result is {what} in lane {first_lane(bad)} "
                             f"(LangRef 'Fast-Math Flags': poison)")
    return c


def _gep_check(ins, f, O, d, base_ok: bool):
    """``inbounds`` (and ``nusw`` alone, judged as inbounds: the emulator does not know
    the object's absolute address): the base and every partial sum of offsets stay in
    ``[0, size]`` of the object the pointer is based on; ``nuw``: every offset is
    non-negative (an index sign-extended to i64 and read as unsigned must not wrap)."""
    idx = [(s, o.ty) for s, o in zip(O[1:], ins.ops[1:])]
    strides, t = [], ins.extra["elem"]
    for k in range(len(idx)):
        if k:
            t = t.elem
        strides.append(t.size)
    base = O[0]
    one = len(idx) == 1 and f != "nuw"
    slow = _gep_slow(f, idx, strides, base)

    def c(R, X):   # in bounds: base and result offsets, read as unsigned, at most the size
        p = R[base]
        size = p.mem.data.size
        if one and int(R[d].off.view(np.uint64).max()) <= size and \
                (base_ok or int(p.off.view(np.uint64).max()) <= size):
            return
        slow(R, X)
    return c


def _gep_slow(f, idx, strides, base):
    def c(R, X):
        p = R[base]
        size = p.mem.data.size
        off = p.off
        steps = []
        for (s, ty), st in zip(idx, strides):
            step = _signed(R[s], ty.bits) * st
            steps.append(step)
            off = off + step
            if f != "nuw":
                bad = (off < 0) | (off > size)
                if np.count_nonzero(bad) or np.count_nonzero((p.off < 0) | (p.off > size)):
                    bad = bad | (p.off < 0) | (p.off > size)
                    k = first_lane(bad)
                    raise Poison(f"getelementptr {f}: byte offset {int(off[k])} in lane {k} is outside "
                                 f"{p.mem.label()} (in bounds: 0 .. {size}; LangRef 'getelementptr' "
                                 f"Instruction: poison)")
        if f == "nuw":
            for step in steps:
                if np.count_nonzero(step < 0):
                    raise Poison(f"getelementptr nuw: a negative offset in lane {first_lane(step < 0)} wraps "
                                 f"unsigned (LangRef 'getelementptr' Instruction: poison)")
    return c


def _range_check(ins, pairs, d):
    def c(R, X):
        v = R[d].astype(np.uint64)
        ok = np.zeros(v.shape, np.bool_)
        for lo, hi in pairs:
            lo_, hi_ = np.uint64(lo), np.uint64(hi)
            ok |= ((v >= lo_) & (v < hi_)) if lo < hi else ((v >= lo_) | (v < hi_))
        if not ok.all():
            k = first_lane(~ok)
            raise Poison(f"!range: the {ins.op}ed value {int(np.asarray(v).flat[k])} in lane {k} is outside "
                         f"{pairs} (LangRef '!range' metadata: poison)")
    return c


def _bytes_of_load(R, ins, slot):
    p = R[slot]
    return p.mem, (p.off[:, None] + np.arange(ins.ty.size, dtype=np.int64)).reshape(-1)


def _stable_load(pr, ins, slot, invariant: bool, where):
    kind = "!invariant.load" if invariant else "!amdgpu.noclobber"

    def c(R, X):
        mem, idx = _bytes_of_load(R, ins, slot)
        if mem.space == "lds":
            raise PromiseError(f"{kind} on an LDS load: the workgroup wrote those bytes during the launch "
                               f"(LDS starts undefined)")
        init = pr.initial[mem.name][idx]
        bad = mem.data[idx] != init
        if np.count_nonzero(bad):
            raise PromiseError(f"{kind}: byte offset {int(idx[bad][0])} of global {mem.name!r} was written "
                               f"earlier in the launch (LangRef '!invariant.load' / AMDGPUUsage "
                               f"'amdgpu.noclobber')")
        if invariant:
            pr.invariant.append((mem.name, idx, where))
    return c


def _scoped(pr, ins, slot, md, nodes, where):
    """``!alias.scope S`` and ``!noalias N``: bytes an access in scope s touches are
    never touched by an access whose ``!noalias`` names s (over the whole launch:
    stricter than LangRef's one invocation, the kernel's work-items counted alike)."""
    mine = scope_set(md["alias.scope"], nodes, where) if "alias.scope" in md else frozenset()
    avoid = scope_set(md["noalias"], nodes, where) if "noalias" in md else frozenset()
    nb = (ins.ty if ins.op == "load" else ins.ops[0].ty).size

    def c(R, X):
        p = R[slot]
        idx = (p.off[:, None] + np.arange(nb, dtype=np.int64)).reshape(-1)
        size = p.mem.data.size
        idx = idx[(idx >= 0) & (idx < size)]
        for s in avoid:
            m = pr.scopes.get(("in", s, id(p.mem)))
            if m is not None and np.count_nonzero(m[idx]):
                raise PromiseError(f"!noalias names scope {s}, but an access in that scope touched byte offset "
                                   f"{int(idx[m[idx]][0])} of {p.mem.label()} (LangRef '!noalias and "
                                   f"!alias.scope' metadata)")
        for s in mine:
            m = pr.scopes.get(("not", s, id(p.mem)))
            if m is not None and np.count_nonzero(m[idx]):
                raise PromiseError(f"an access in scope {s} touches byte offset {int(idx[m[idx]][0])} of "
                                   f"{p.mem.label()}, which an access whose !noalias names {s} touched "
                                   f"(LangRef '!noalias and !alias.scope' metadata)")
        for key, ss in (("in", mine), ("not", avoid)):
            for s in ss:
                m = pr.scopes.setdefault((key, s, id(p.mem)), np.zeros(size, np.bool_))
                m[idx] = True
    return c

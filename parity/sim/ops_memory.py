"""Op compilers for memory: getelementptr, load/store (global and LDS), raw buffer load/store.

Every access is bounds- and alignment-checked (parity/sim/memory.py); LDS
bytes no lane of the workgroup wrote read as an error; raw buffer loads
return zero past ``num_records`` and stores there are dropped; an in-range
buffer access must have the byte alignment the arch's hardware needs for its
width (``parity.sim.rsrc.BUFFER_UNALIGNED``, an assumption for gfx1250). Loads and
stores go through the race shadow when the launch keeps one, and through
``Kernel.bank_log`` (parity/sim/lds_banks.py) when one is set.
"""
from __future__ import annotations

import numpy as np

from . import hw_facts
from .errors import Misaligned, OutOfBounds, UninitializedRead, Unsupported
from .memory import LIM32, LANES64, WAVE, Ptr, buffer_range, bytes_of, check_access, first_lane, lane_span, write
from .ops_arith import sext64
from .rsrc import buffer_align_needed


def gep(ins, O, d, where):
    base = O[0]
    idx_slots = O[1:]
    elem = ins.extra["elem"]
    strides = []
    t = elem
    for k in range(len(idx_slots)):
        if k == 0:
            strides.append(t.size)
        else:
            if t.kind not in ("arr", "vec"):
                raise Unsupported(f"getelementptr index into {t.text}")
            t = t.elem
            strides.append(t.size)
    itys = [o.ty for o in ins.ops[1:]]
    for it in itys:
        if it.is_vec or it.kind != "int":
            raise Unsupported("getelementptr with vector or non-integer indices")
    if ins.ops[0].ty.is_vec:
        raise Unsupported("getelementptr on a vector of pointers")
    parts = list(zip(idx_slots, strides, itys))
    if len(parts) == 1:
        s0, st0, it0 = parts[0]
        if st0 == 1:
            def f(R, X):
                p = R[base]
                R[d] = Ptr(p.mem, p.off + sext64(R[s0], it0))
        else:
            def f(R, X):
                p = R[base]
                R[d] = Ptr(p.mem, p.off + sext64(R[s0], it0) * st0)
        return f

    def f(R, X):
        p = R[base]
        off = p.off
        for s, st, it in parts:
            off = off + sext64(R[s], it) * st
        R[d] = Ptr(p.mem, off)
    return f


def load(K, ins, O, d, where):
    p, = O
    ty = ins.ty
    if ty.scalar.kind in ("ptr",) or ty.scalar.bits == 1:
        raise Unsupported(f"load of {ty.text}")
    nb = ty.size
    ar = np.arange(nb, dtype=np.int64)
    dt = ty.dtype
    align = ins.extra["align"]
    vecn = ty.is_vec
    check = check_access
    what = f"load {ty.text}"
    kern = K
    pname = ins.ops[0].name if ins.ops[0].kind == "reg" else ""
    step = LANES64 * nb
    span = WAVE * nb

    def f(R, X):
        ptr = R[p]
        mem = ptr.mem
        off = ptr.off
        if kern.bank_log is not None and mem.space == "lds":
            kern.bank_log.record(where, "load", pname, off, nb)
        sl = lane_span(off, step, nb, align, mem.data.size)
        if sl is not None and (mem.init is None or np.count_nonzero(mem.init[sl]) == span):
            if mem.shadow is not None:
                mem.shadow.read(sl, X, mem, what)
            raw = mem.data[sl].copy().view(dt)
            R[d] = raw.reshape(WAVE, -1) if vecn else raw
            return
        check(mem, off, nb, align, "load", X)
        idx = off[:, None] + ar
        if mem.init is not None:
            ok = mem.init[idx]
            if np.count_nonzero(ok) != ok.size:
                k = first_lane(~ok)
                bi = int(idx[k][np.argmin(ok[k])])
                raise UninitializedRead(f"read of LDS byte offset {bi} of {mem.label()} that no lane of "
                                        f"this workgroup wrote (lane {k} of {X.launch.agent_name(X.agent)})")
        if mem.shadow is not None:
            mem.shadow.read(idx, X, mem, what)
        raw = mem.data[idx].view(dt)
        R[d] = raw if vecn else raw.reshape(WAVE)
    return f


def store(K, ins, O, where):
    v, p = O
    ty = ins.ops[0].ty
    if ty.scalar.kind == "ptr" or ty.scalar.bits == 1:
        raise Unsupported(f"store of {ty.text}")
    nb = ty.size
    ar = np.arange(nb, dtype=np.int64)
    align = ins.extra["align"]
    check = check_access
    what = f"store {ty.text}"
    kern = K
    pname = ins.ops[1].name if ins.ops[1].kind == "reg" else ""
    step = LANES64 * nb

    def f(R, X):
        ptr = R[p]
        mem = ptr.mem
        off = ptr.off
        if kern.bank_log is not None and mem.space == "lds":
            kern.bank_log.record(where, "store", pname, off, nb)
        sl = lane_span(off, step, nb, align, mem.data.size)
        if sl is None:
            check(mem, off, nb, align, "store", X)
            sl = off[:, None] + ar
        write(mem, sl, bytes_of(R[v]), X, what)
    return f


def range_offsets(R, vo, so, nrec: int, nb: int, what: str):
    """Per lane ``(off, chk)`` of a raw buffer access: ``off`` the byte offset of the
    address (voffset + soffset, int64), ``chk`` the offset the range check compares with
    num_records ``nrec``: voffset alone under the default reading of hardware fact
    BUFFER-OOB-SOFFSET (``excluded``: LLVM's IntrinsicsAMDGPU.td documents the raw buffer
    intrinsics' soffset as excluded from bounds checking; MLIR's AMDGPU dialect says it
    may or may not be counted; docs/hardware_facts.md), ``off`` under ``counted``. Under
    ``excluded`` a lane whose check passes but whose ``nb``-byte access reaches past
    num_records raises OutOfBounds: the hardware would touch memory past the buffer."""
    v = R[vo].astype(np.int64)
    off = v + R[so].astype(np.int64)
    if hw_facts.value("BUFFER-OOB-SOFFSET") == "counted":
        return off, off
    past = (v >= 0) & (v <= nrec - nb) & (v < LIM32) & ((off > nrec - nb) | (off < 0))
    if np.count_nonzero(past):
        k = int(np.argmax(past))
        raise OutOfBounds(f"{what} at voffset {int(v[k])} + soffset {int(off[k] - v[k])} (lane {k}): the range "
                          f"check passes on voffset but the access reaches past num_records={nrec} "
                          f"(BUFFER-OOB-SOFFSET=excluded: soffset is not range checked)")
    return off, v


def _buffer_align(o: np.ndarray, need: int, what: str, mem) -> None:
    """Every lane's byte address ``o`` (buffer base taken as aligned) is a
    multiple of ``need`` (rsrc.buffer_align_needed), else Misaligned."""
    if need > 1 and np.count_nonzero(o % need):
        k = int(np.argmax(o % need != 0))
        raise Misaligned(f"{what} at byte offset {int(o[k])} of {mem.label()} is not aligned to {need} bytes, "
                         f"the alignment the arch table needs for a {what.split()[-1]} buffer access "
                         f"(parity.sim.rsrc.BUFFER_UNALIGNED)")


def buffer_load(ins, O, d, arch: str = "gfx1250"):
    r, vo, so, aux = O
    ty = ins.ty
    nb = ty.size
    esz = ty.scalar.size
    ne = ty.n if ty.is_vec else 1
    ar = np.arange(nb, dtype=np.int64)
    dt = ty.dtype
    vecn = ty.is_vec
    what = f"buffer load {ty.text}"
    need = buffer_align_needed(arch, nb)

    step = LANES64 * nb

    def f(R, X):
        rs = R[r]
        if np.count_nonzero(R[aux]):
            raise Unsupported("buffer load with a non-zero aux operand")
        off, chk = range_offsets(R, vo, so, rs.nrec, nb, what)
        mem = rs.mem
        if not np.count_nonzero((chk < 0) | (chk > rs.nrec - nb) | (chk >= LIM32)):
            sl = lane_span(off + rs.base, step, nb, need, mem.data.size)   # every lane inside num_records
            if sl is not None:
                if mem.shadow is not None:
                    mem.shadow.read(sl, X, mem, what)
                raw = mem.data[sl].copy().view(dt)
                R[d] = raw.reshape(WAVE, -1) if vecn else raw
                return
        inr = buffer_range(chk, esz, ne, rs.nrec, what)
        mem = rs.mem
        out = np.zeros((WAVE, nb), np.uint8)
        if np.count_nonzero(inr):
            o = rs.base + off[inr]
            if o.min() < 0 or o.max() + nb > mem.data.size:
                k = int(np.argmax((o < 0) | (o + nb > mem.data.size)))
                raise OutOfBounds(f"{what} at byte offset {int(o[k])} is inside num_records={rs.nrec} but "
                                  f"outside {mem.label()}")
            _buffer_align(o, need, what, mem)
            idx = o[:, None] + ar
            if mem.shadow is not None:
                mem.shadow.read(idx, X, mem, what)
            out[inr] = mem.data[idx]
        raw = out.view(dt)
        R[d] = raw if vecn else raw.reshape(WAVE)
    return f


def buffer_store(ins, O, arch: str = "gfx1250"):
    v, r, vo, so, aux = O
    ty = ins.ops[0].ty
    nb = ty.size
    esz = ty.scalar.size
    ne = ty.n if ty.is_vec else 1
    ar = np.arange(nb, dtype=np.int64)
    what = f"buffer store {ty.text}"
    need = buffer_align_needed(arch, nb)

    step = LANES64 * nb

    def f(R, X):
        rs = R[r]
        if np.count_nonzero(R[aux]):
            raise Unsupported("buffer store with a non-zero aux operand")
        off, chk = range_offsets(R, vo, so, rs.nrec, nb, what)
        if not np.count_nonzero((chk < 0) | (chk > rs.nrec - nb) | (chk >= LIM32)):
            sl = lane_span(off + rs.base, step, nb, need, rs.mem.data.size)   # every lane inside num_records
            if sl is not None:
                write(rs.mem, sl, bytes_of(R[v]), X, what)
                return
        inr = buffer_range(chk, esz, ne, rs.nrec, what)
        if not np.count_nonzero(inr):
            return
        mem = rs.mem
        o = rs.base + off[inr]
        if o.min() < 0 or o.max() + nb > mem.data.size:
            k = int(np.argmax((o < 0) | (o + nb > mem.data.size)))
            raise OutOfBounds(f"{what} at byte offset {int(o[k])} is inside num_records={rs.nrec} but "
                              f"outside {mem.label()}")
        _buffer_align(o, need, what, mem)
        write(mem, o[:, None] + ar, bytes_of(R[v])[inr], X, what)
    return f

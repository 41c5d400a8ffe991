"""The emulator: decodes a parsed module once into closures, then runs launches.

Execution model (docs/sim.md):

* A wave is 32 lanes in lockstep. A register holds a numpy array over the
  lanes: shape ``(32,)`` for a scalar type, ``(32, n)`` for ``<n x T>``;
  pointers are :class:`Ptr` (memory + per-lane byte offsets), buffer resources
  :class:`Rsrc` (wave-uniform). A conditional branch whose condition differs
  between lanes raises :class:`DivergentBranch`.
* The waves of a workgroup run one at a time from barrier to barrier, the
  workgroups of a cluster one at a time from cluster barrier to cluster
  barrier; :meth:`Kernel.launch` runs the launch once in forward and once in
  reverse order (waves, workgroups and clusters all reversed) on copies of the
  buffers and compares every buffer byte for byte (:class:`RaceError` names the
  first differing address). A shadow race detector (per byte: last writer and
  last readers with their barrier phases) also reports unsynchronised
  cross-wave access to LDS and global memory at the instruction that does it.
* Every global/LDS access is bounds- and alignment-checked; LDS bytes no lane
  of the workgroup wrote read as an error; raw buffer loads return zero past
  ``num_records`` and stores there are dropped.

Every error is a :class:`SimError` naming the instruction (its text, block
and line).
"""
from __future__ import annotations

import numpy as np

from . import ir
from .rsrc import RsrcRefused
from .rsrc import decode as rsrc_decode
from .fp import bf16_bits_to_f32, f32_to_bf16_bits
from .wmma import wmma_f32_16x16x32

WAVE = 32
LANES = np.arange(WAVE)
LANES64 = LANES.astype(np.int64)


# -- errors ----------------------------------------------------------------------------

class SimError(Exception):
    """An emulated kernel did something wrong (or something the emulator cannot run)."""

    def __init__(self, msg: str, where: str | None = None):
        self.msg = msg
        self.where = where
        super().__init__(msg if where is None else f"{msg}\n  at {where}")

    def at(self, where: str) -> "SimError":
        if self.where is None:
            self.where = where
            self.args = (f"{self.msg}\n  at {where}",)
        return self


class Unsupported(SimError):
    """Outside the subset the emulator implements (a failure, never a skip)."""


class OutOfBounds(SimError):
    pass


class Misaligned(SimError):
    pass


class UninitializedRead(SimError):
    pass


class DivergentBranch(SimError):
    pass


class Poison(SimError):
    """A result LLVM defines as poison (nuw/nsw overflow, shift >= width, division by zero, ...)."""


class RaceError(SimError):
    pass


class BarrierMismatch(SimError):
    pass


class LaneConflict(SimError):
    """Lanes of one store wrote different bytes to the same address."""


class VisibilityError(SimError):
    """A read of bytes another wave/workgroup wrote in an earlier barrier phase
    without the release fence / barrier / acquire fence chain that makes the
    write visible (the memory-visibility model, docs/sim.md)."""


# -- values ----------------------------------------------------------------------------

class Memory:
    """A global buffer (kernel argument) or an LDS allocation, as bytes."""

    __slots__ = ("name", "space", "data", "init", "shadow")

    def __init__(self, name: str, space: str, data: np.ndarray, track_init: bool, shadow: bool):
        self.name = name
        self.space = space
        self.data = data
        self.init = np.zeros(data.size, np.bool_) if track_init else None
        self.shadow = Shadow(data.size) if shadow else None

    def label(self) -> str:
        return f"{'LDS' if self.space == 'lds' else 'global'} {self.name!r} ({self.data.size} bytes)"


class Ptr:
    __slots__ = ("mem", "off")

    def __init__(self, mem: Memory, off: np.ndarray):
        self.mem = mem
        self.off = off


class Rsrc:
    """A raw buffer resource (wave-uniform): memory, base byte offset, num_records."""

    __slots__ = ("mem", "base", "nrec")

    def __init__(self, mem: Memory, base: int, nrec: int):
        self.mem = mem
        self.base = base
        self.nrec = nrec


_CONTROL_BARRIER = "barrier"
_CONTROL_CLUSTER = "cluster barrier"
_CONTROL_RET = "ret"

#: syncscope -> level; a fence of level >= L orders for scope L (1 workgroup, 2 cluster)
SCOPE_LEVEL = {"singlethread": 0, "wavefront": 0, "workgroup": 1, "cluster": 2, "agent": 3, "system": 4}
NEVER = np.int64(1) << np.int64(62)   # "no such release fence (yet)"


# -- race shadow -------------------------------------------------------------------------

class Shadow:
    """Per byte: the last writer and the last readers, with the barrier phases
    they ran in. Two accesses are ordered when made by the same wave, by waves
    of one workgroup with a workgroup barrier between them, or by workgroups of
    one cluster with a cluster barrier between them. Writes that leave the
    bytes unchanged never race (surplus lanes re-store identical bytes)."""

    __slots__ = ("wa", "wg", "wph", "wcph", "wn1", "wn2", "ra", "rg", "rc", "rph", "rcph")

    def __init__(self, n: int):
        self.wa = np.full(n, -1, np.int64)     # writer agent
        self.wg = np.full(n, -1, np.int64)     # writer workgroup
        self.wph = np.zeros(n, np.int64)       # writer's workgroup phase
        self.wcph = np.zeros(n, np.int64)      # writer's cluster phase
        self.wn1 = np.zeros(n, np.int64)       # writer's count of workgroup(+)-scope releases before the write
        self.wn2 = np.zeros(n, np.int64)       # ... of cluster(+)-scope releases
        self.ra = np.full(n, -1, np.int64)     # reader agent (-2 several)
        self.rg = np.full(n, -1, np.int64)     # reader workgroup (-2 several)
        self.rc = np.full(n, -1, np.int64)     # reader cluster (-2 several)
        self.rph = np.zeros(n, np.int64)
        self.rcph = np.zeros(n, np.int64)

    @staticmethod
    def _ordered(agent, wg, cl, ph, cph, X) -> np.ndarray:
        return ((agent == X.agent) | ((wg == X.wgi) & (X.wg.phase > ph))
                | ((cl == X.cli) & (X.cl.phase > cph)))

    def read(self, idx: np.ndarray, X, mem: Memory, what: str):
        idx = idx.ravel()
        wa = self.wa[idx]
        cand = (wa >= 0) & (wa != X.agent)
        if cand.any():
            sel = idx[cand]
            wg = self.wg[sel]
            ok = self._ordered(wa[cand], wg, wg // X.S, self.wph[sel], self.wcph[sel], X)
            if not ok.all():
                k = int(np.argmin(ok))
                raise RaceError(f"race: {what} reads byte offset {int(sel[k])} of {mem.label()}, "
                                f"written by {X.launch.agent_name(int(wa[cand][k]))} with no barrier "
                                f"between the write and this read by {X.launch.agent_name(X.agent)}")
            self._visible(sel, wa[cand], wg, X, mem, what)
        ra = self.ra[idx]
        rg = self.rg[idx]
        rc = self.rc[idx]
        prev_ordered = (ra == -1) | self._ordered(ra, rg, rc, self.rph[idx], self.rcph[idx], X)
        same_wg = rg == X.wgi
        same_cl = rc == X.cli
        self.ra[idx] = np.where(prev_ordered, X.agent, -2)
        self.rg[idx] = np.where(prev_ordered | same_wg, X.wgi, -2)
        self.rc[idx] = np.where(prev_ordered | same_cl, X.cli, -2)
        self.rph[idx] = np.where(prev_ordered, X.wg.phase, np.maximum(self.rph[idx], X.wg.phase))
        self.rcph[idx] = np.where(prev_ordered, X.cl.phase, np.maximum(self.rcph[idx], X.cl.phase))

    def _visible(self, sel, wa, wg, X, mem: Memory, what: str):
        """The memory-visibility model: bytes ``sel`` written by other waves
        ``wa`` (workgroups ``wg``) and ordered before this read by a barrier
        are visible only through release fence -> barrier -> acquire fence:
        the writer's first release fence of at least the needed scope after
        the write lies in a barrier phase that has ended for the reader, and
        the reader's last acquire fence of that scope came after that barrier.
        Same workgroup: workgroup scope and workgroup phases (any barrier);
        other workgroups of the cluster: cluster scope and cluster phases."""
        run = X.launch
        same = wg == X.wgi
        for level, m in ((2, ~same), (1, same)):
            if not m.any():
                continue
            a = wa[m]
            b = sel[m]
            if level == 1:
                n, rel, cur, acq = self.wn1[b], run.rel1, X.wg.phase, X.acq1
            else:
                n, rel, cur, acq = self.wn2[b], run.rel2, X.cl.phase, X.acq2
            cap = rel.shape[1]
            rp = np.where(n < cap, rel[a, np.minimum(n, cap - 1)], NEVER)
            no_rel = rp >= cur           # no release fence before a barrier this reader passed
            no_acq = acq < rp + 1        # no acquire fence after that barrier
            bad = no_rel | no_acq
            if bad.any():
                k = int(np.argmax(bad))
                scope = "workgroup" if level == 1 else "cluster"
                bar = "s.barrier" if level == 1 else "s.cluster.barrier"
                writer = run.agent_name(int(a[k]))
                reader = run.agent_name(X.agent)
                if no_rel[k]:
                    miss = (f"the writer ({writer}) executed no release fence of {scope} scope or wider "
                            f"between the write and a {bar} before this read: missing "
                            f"`fence syncscope(\"{scope}\") release` before {bar}")
                else:
                    miss = (f"the reader ({reader}) executed no acquire fence of {scope} scope or wider "
                            f"after the {bar} that follows the writer's release: missing "
                            f"`fence syncscope(\"{scope}\") acquire` after {bar}")
                raise VisibilityError(f"visibility: {what} by {reader} reads byte offset {int(b[k])} of "
                                      f"{mem.label()} written by {writer} in an earlier barrier phase, but "
                                      f"{miss}")

    def write(self, idx: np.ndarray, changed: np.ndarray, X, mem: Memory, what: str):
        idx = idx.ravel()
        changed = changed.ravel()
        wa = self.wa[idx]
        wg = self.wg[idx]
        w_ok = (wa < 0) | self._ordered(wa, wg, wg // X.S, self.wph[idx], self.wcph[idx], X)
        bad = changed & ~w_ok
        if bad.any():
            k = int(np.argmax(bad))
            raise RaceError(f"race: {what} overwrites byte offset {int(idx[k])} of {mem.label()} with a "
                            f"different value; {X.launch.agent_name(int(wa[k]))} wrote it with no barrier "
                            f"before this write by {X.launch.agent_name(X.agent)}")
        ra = self.ra[idx]
        r_ok = (ra == -1) | self._ordered(ra, self.rg[idx], self.rc[idx], self.rph[idx], self.rcph[idx], X)
        bad = changed & ~r_ok
        if bad.any():
            k = int(np.argmax(bad))
            who = "several waves" if ra[k] == -2 else X.launch.agent_name(int(ra[k]))
            raise RaceError(f"race: {what} changes byte offset {int(idx[k])} of {mem.label()} that {who} "
                            f"read with no barrier before this write by {X.launch.agent_name(X.agent)}")
        upd = idx[changed | w_ok]
        self.wn1[upd] = X.nrel1
        self.wn2[upd] = X.nrel2
        self.wa[upd] = X.agent
        self.wg[upd] = X.wgi
        self.wph[upd] = X.wg.phase
        self.wcph[upd] = X.cl.phase


# -- numeric helpers -----------------------------------------------------------------------

_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _s(x, bits):
    return x.view(_SIGNED[bits])


def _lane(mask) -> int:
    m = np.asarray(mask)
    if m.ndim > 1:
        m = m.any(axis=tuple(range(1, m.ndim)))
    return int(np.argmax(m))


def _bytes_of(v: np.ndarray) -> np.ndarray:
    v = np.ascontiguousarray(v)
    return v.reshape(WAVE, -1).view(np.uint8)


def _sext64(x: np.ndarray, ty: ir.Ty) -> np.ndarray:
    if ty.bits == 1:
        return -(x.astype(np.int64))
    return _s(x, ty.bits).astype(np.int64)


# -- decoding ----------------------------------------------------------------------------

class DBlock:
    __slots__ = ("name", "ops", "texts", "phis", "index")

    def __init__(self, name: str, index: int):
        self.name = name
        self.index = index
        self.ops: list = []
        self.texts: list = []
        self.phis: list = []


#: intrinsic name -> handler key; names the Python table declares (python_engine/targets/intrinsics.py)
INTRINSICS = {
    "llvm.amdgcn.workitem.id.x": "tid_x",
    "llvm.amdgcn.workgroup.id.x": "wg_x",
    "llvm.amdgcn.workgroup.id.y": "wg_y",
    "llvm.amdgcn.workgroup.id.z": "wg_z",
    "llvm.amdgcn.s.barrier": "barrier",
    "llvm.amdgcn.s.cluster.barrier": "cluster_barrier",
    "llvm.amdgcn.make.buffer.rsrc.p8.p1": "rsrc",
    "llvm.amdgcn.make.buffer.rsrc.p1": "rsrc",
    "llvm.amdgcn.raw.ptr.buffer.load.f32": "bload",
    "llvm.amdgcn.raw.ptr.buffer.load.v2f32": "bload",
    "llvm.amdgcn.raw.ptr.buffer.load.v4f32": "bload",
    "llvm.amdgcn.raw.ptr.buffer.load.i16": "bload",
    "llvm.amdgcn.raw.ptr.buffer.store.f32": "bstore",
    "llvm.amdgcn.raw.ptr.buffer.store.v2f32": "bstore",
    "llvm.amdgcn.raw.ptr.buffer.store.v4f32": "bstore",
    "llvm.amdgcn.raw.ptr.buffer.store.i16": "bstore",
    "llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16": "wmma_bf16",
    "llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16": "wmma_f16",
    "llvm.amdgcn.readfirstlane.i32": "readfirstlane",
    "llvm.amdgcn.sched.barrier": "sched_barrier",
    "llvm.amdgcn.wave.barrier": "sched_barrier",   # a code-motion barrier: no effect here
}


class Kernel:
    """A parsed and decoded kernel, ready to launch any number of times."""

    def __init__(self, text: str, check_poison: bool = True, arch: str = "gfx1250"):
        """``arch`` picks how buffer resources are decoded and range-checked
        (parity/sim/rsrc.py: the V# layout and out-of-range rules per arch)."""
        self.arch = arch
        self.module = ir.parse(text)
        self.name = self.module.kernel
        self.check_poison = check_poison
        self.bank_log = None    # a parity.sim.lds_banks.BankLog to count LDS bank conflicts
        self.slots: dict = {}
        self.consts: list = []  # (slot, array)
        self.n_instructions = sum(len(b.ins) for b in self.module.blocks)
        for p in self.module.params:
            self._slot("%" + p.name)
        for g in self.module.lds:
            self._slot("@" + g.name)
        self._decode()

    # slots
    def _slot(self, key) -> int:
        s = self.slots.get(key)
        if s is None:
            s = self.slots[key] = len(self.slots)
        return s

    def _operand(self, op: ir.Operand, where: str) -> int:
        if op.kind == "reg":
            return self._slot("%" + op.name)
        if op.kind == "glob":
            if ("@" + op.name) not in self.slots:
                raise Unsupported(f"unknown global @{op.name}", where)
            return self.slots["@" + op.name]
        if op.kind == "poison":
            val = np.zeros(op.ty.n, op.ty.dtype) if op.ty.is_vec else np.zeros((), op.ty.dtype)
        elif op.kind == "const":
            val = np.asarray(op.value, dtype=op.ty.dtype)
        else:
            raise Unsupported(f"operand {op.kind}", where)
        key = ("const", op.ty.text, val.tobytes())
        if key in self.slots:
            return self.slots[key]
        s = self._slot(key)
        arr = np.ascontiguousarray(np.broadcast_to(val, (WAVE,) + val.shape))
        arr.setflags(write=False)
        self.consts.append((s, arr))
        return s

    def _decode(self):
        mod = self.module
        self.blocks = [DBlock(b.name, i) for i, b in enumerate(mod.blocks)]
        by_name = {b.name: b for b in self.blocks}
        if not self.blocks:
            raise Unsupported("kernel has no blocks")
        self.entry = self.blocks[0]
        # phis first: edge moves are attached to the branch of each predecessor
        for pb, db in zip(mod.blocks, self.blocks):
            k = 0
            while k < len(pb.ins) and pb.ins[k].op == "phi":
                ins = pb.ins[k]
                where = _where(ins)
                d = self._slot("%" + ins.dst)
                for v, pred in zip(ins.ops, ins.extra["preds"]):
                    if pred not in by_name:
                        raise Unsupported(f"phi names unknown block %{pred}", where)
                    db.phis.append((pred, d, self._operand(v, where)))
                k += 1
            for ins in pb.ins[k:]:
                if ins.op == "phi":
                    raise Unsupported("phi after a non-phi instruction", _where(ins))
        for pb, db in zip(mod.blocks, self.blocks):
            body = [i for i in pb.ins if i.op != "phi"]
            if not body or body[-1].op not in ("br", "ret"):
                raise Unsupported(f"block {pb.name} does not end in br or ret")
            for ins in body:
                where = _where(ins)
                try:
                    fn = self._compile(ins, db, by_name)
                except SimError as e:
                    raise e.at(where)
                except (KeyError, ValueError, TypeError, ir.ParseError) as e:
                    raise Unsupported(f"cannot decode: {e}", where) from e
                db.ops.append(fn)
                db.texts.append(where)
        self.nslots = len(self.slots)
        self.template = [None] * self.nslots
        for s, arr in self.consts:
            self.template[s] = arr

    # -- edges ---------------------------------------------------------------------------
    def _edge(self, src: DBlock, dst: DBlock):
        moves = [(d, s) for pred, d, s in dst.phis if pred == src.name]
        dsts = tuple(d for d, _ in moves)
        srcs = tuple(s for _, s in moves)
        nphi = len({d for _, d, _ in dst.phis})
        if len(dsts) != nphi:
            raise Unsupported(f"block {dst.name} has phis without an edge from {src.name}")
        return dst, dsts, srcs

    # -- instruction compilers -------------------------------------------------------------
    def _compile(self, ins: ir.Ins, db: DBlock, by_name: dict):
        op = ins.op
        where = _where(ins)
        if op in ir.INT_BINOPS:
            return self._int_binop(ins, where)
        if op in ir.FLOAT_BINOPS:
            return self._float_binop(ins, where)
        O = [self._operand(o, where) for o in ins.ops] if op not in ("phi",) else []
        d = self._slot("%" + ins.dst) if ins.dst else None
        if op == "fneg":
            a, = O
            if ins.ty.scalar.kind == "bf16":
                def f(R, X):
                    R[d] = R[a] ^ np.uint16(0x8000)
            else:
                def f(R, X):
                    R[d] = -R[a]
            return f
        if op == "icmp":
            return self._icmp(ins, O, d)
        if op == "fcmp":
            return self._fcmp(ins, O, d)
        if op == "select":
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
        if op in ir.CASTS:
            return self._cast(ins, O, d, where)
        if op == "getelementptr":
            return self._gep(ins, O, d, where)
        if op == "load":
            return self._load(ins, O, d, where)
        if op == "store":
            return self._store(ins, O, where)
        if op == "extractelement":
            v, i = O
            n = ins.ops[0].ty.n
            ity = ins.ops[1].ty

            def f(R, X):
                idx = R[i]
                if ity.bits > 1:
                    idx = _s(idx, ity.bits).astype(np.int64)
                if ((idx < 0) | (idx >= n)).any():
                    raise Poison(f"extractelement index out of range 0..{n - 1}")
                R[d] = R[v][LANES, idx]
            return f
        if op == "insertelement":
            v, e, i = O
            n = ins.ty.n
            ity = ins.ops[2].ty

            def f(R, X):
                idx = R[i]
                if ity.bits > 1:
                    idx = _s(idx, ity.bits).astype(np.int64)
                if ((idx < 0) | (idx >= n)).any():
                    raise Poison(f"insertelement index out of range 0..{n - 1}")
                out = R[v].copy()
                out[LANES, idx] = R[e]
                R[d] = out
            return f
        if op == "shufflevector":
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
        if op == "call":
            return self._call(ins, O, d, where)
        if op == "fence":
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
        if op == "br":
            tg = ins.extra["targets"]
            for t in tg:
                if t not in by_name:
                    raise Unsupported(f"branch to unknown block %{t}")
            if len(tg) == 1:
                tgt, dsts, srcs = self._edge(db, by_name[tg[0]])
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
            c, = O
            if ins.ops[0].ty.is_vec:
                raise Unsupported("branch on a vector condition")
            t1, d1, s1 = self._edge(db, by_name[tg[0]])
            t2, d2, s2 = self._edge(db, by_name[tg[1]])

            def f(R, X):
                cc = R[c]
                if cc.all():
                    tgt, dsts, srcs = t1, d1, s1
                elif not cc.any():
                    tgt, dsts, srcs = t2, d2, s2
                else:
                    on = np.flatnonzero(cc)
                    raise DivergentBranch(
                        f"branch condition differs between lanes of wave {X.wave} (true in lanes "
                        f"{_ranges(on)}, false in the others); kernels must keep branches wave-uniform")
                vals = [R[s] for s in srcs]
                for dd, vv in zip(dsts, vals):
                    R[dd] = vv
                return tgt
            return f
        if op == "ret":
            def f(R, X):
                return _CONTROL_RET
            return f
        raise Unsupported(f"instruction {op}")

    def _int_binop(self, ins, where):
        op = ins.op
        a, b = (self._operand(o, where) for o in ins.ops)
        d = self._slot("%" + ins.dst)
        ty = ins.ty
        bits = ty.scalar.bits
        flags = ins.extra.get("flags", ())
        if ty.scalar.kind != "int":
            raise Unsupported(f"{op} on {ty.text}")
        if bits == 1:
            fn = {"add": np.logical_xor, "sub": np.logical_xor, "mul": np.logical_and, "and": np.logical_and,
                  "or": np.logical_or, "xor": np.logical_xor}.get(op)
            if fn is None:
                raise Unsupported(f"{op} on i1")

            def f(R, X):
                R[d] = fn(R[a], R[b])
            return f
        check = self.check_poison
        nuw = "nuw" in flags and check
        nsw = "nsw" in flags and check
        sign = np.array(1 << (bits - 1), dtype=ty.dtype)[()]
        sdt = _SIGNED[bits]
        if op in ("add", "sub", "mul"):
            base = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
            if not (nuw or nsw):
                def f(R, X):
                    R[d] = base(R[a], R[b])
                return f

            def f(R, X):
                x, y = R[a], R[b]
                r = base(x, y)
                bad = None
                if nuw:
                    if op == "add":
                        bad = r < x
                    elif op == "sub":
                        bad = x < y
                    elif bits <= 32:
                        bad = x.astype(np.uint64) * y.astype(np.uint64) > np.uint64((1 << bits) - 1)
                    else:
                        nz = x != 0
                        bad = nz & (r // np.where(nz, x, 1) != y)
                    if bad.any():
                        raise Poison(f"{op} nuw overflows i{bits} in lane {_lane(bad)} "
                                     f"({int(np.asarray(x).flat[_lane(bad)])}, {int(np.asarray(y).flat[_lane(bad)])})")
                if nsw:
                    if op == "add":
                        bad = ((x ^ r) & (y ^ r) & sign) != 0
                    elif op == "sub":
                        bad = ((x ^ y) & (x ^ r) & sign) != 0
                    elif bits <= 32:
                        p = x.view(sdt).astype(np.int64) * y.view(sdt).astype(np.int64)
                        bad = (p < -(1 << (bits - 1))) | (p >= (1 << (bits - 1)))
                    else:
                        xs, ys, rs = x.view(sdt), y.view(sdt), r.view(sdt)
                        nz = xs != 0
                        bad = nz & ((rs // np.where(nz, xs, 1) != ys) | ((xs == -1) & (ys == np.iinfo(sdt).min)))
                    if bad.any():
                        raise Poison(f"{op} nsw overflows i{bits} in lane {_lane(bad)}")
                R[d] = r
            return f
        if op in ("and", "or", "xor"):
            fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

            def f(R, X):
                R[d] = fn(R[a], R[b])
            return f
        if op in ("shl", "lshr", "ashr"):
            def f(R, X):
                x, y = R[a], R[b]
                if (y >= bits).any():
                    raise Poison(f"{op} by {int(y.max())} >= width {bits}")
                if op == "shl":
                    R[d] = np.left_shift(x, y.astype(x.dtype))
                elif op == "lshr":
                    R[d] = np.right_shift(x, y.astype(x.dtype))
                else:
                    R[d] = np.right_shift(x.view(sdt), y.astype(sdt)).view(x.dtype)
            return f
        if op in ("udiv", "urem", "sdiv", "srem"):
            def f(R, X):
                x, y = R[a], R[b]
                if (y == 0).any():
                    raise Poison(f"{op} by zero in lane {_lane(y == 0)}")
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
        raise Unsupported(f"integer op {op}")

    def _float_binop(self, ins, where):
        op = ins.op
        a, b = (self._operand(o, where) for o in ins.ops)
        d = self._slot("%" + ins.dst)
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

    def _icmp(self, ins, O, d):
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
            sdt = _SIGNED[bits]

            def f(R, X):
                R[d] = fn(R[a].view(sdt), R[b].view(sdt))
        elif pred[0] == "s":  # i1 signed: true is -1
            def f(R, X):
                R[d] = fn(~R[a], ~R[b])
        else:
            def f(R, X):
                R[d] = fn(R[a], R[b])
        return f

    def _fcmp(self, ins, O, d):
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

    def _cast(self, ins, O, d, where):
        v, = O
        op = ins.op
        src, dst = ins.ops[0].ty, ins.ty
        ss, ds = src.scalar, dst.scalar
        if src.is_vec != dst.is_vec and op != "bitcast":
            raise Unsupported(f"{op} between vector and scalar")
        if op == "trunc":
            if ds.bits == 1:
                def f(R, X):
                    R[d] = (R[v] & 1).astype(np.bool_)
            else:
                dt = dst.dtype

                def f(R, X):
                    R[d] = R[v].astype(dt)
            return f
        if op == "zext":
            dt = dst.dtype

            def f(R, X):
                R[d] = R[v].astype(dt)
            return f
        if op == "sext":
            dt, sdt = dst.dtype, _SIGNED[ds.bits]
            if ss.bits == 1:
                def f(R, X):
                    R[d] = (-(R[v].astype(sdt))).view(dt)
            else:
                ssd = _SIGNED[ss.bits]

                def f(R, X):
                    R[d] = R[v].view(ssd).astype(sdt).view(dt)
            return f
        if op == "fptrunc":
            if ds.kind == "bf16":
                if ss.bits != 32:
                    raise Unsupported(f"fptrunc {src.text} to bfloat")

                def f(R, X):
                    R[d] = f32_to_bf16_bits(R[v])
                return f
            dt = dst.dtype

            def f(R, X):
                R[d] = R[v].astype(dt)
            return f
        if op == "fpext":
            dt = dst.dtype
            if ss.kind == "bf16":
                def f(R, X):
                    R[d] = bf16_bits_to_f32(R[v]).astype(dt)
            else:
                def f(R, X):
                    R[d] = R[v].astype(dt)
            return f
        if op in ("fptosi", "fptoui"):
            if ss.kind == "bf16":
                raise Unsupported(f"{op} from bfloat")
            bits = ds.bits
            lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1)) if op == "fptosi" else (0, 2 ** bits)
            dt = dst.dtype
            tdt = _SIGNED[bits] if op == "fptosi" else _UNSIGNED[bits]

            def f(R, X):
                t = np.trunc(R[v].astype(np.float64))
                bad = np.isnan(t) | (t < lo) | (t >= hi)
                if bad.any():
                    raise Poison(f"{op} of a value outside i{bits} (lane {_lane(bad)})")
                R[d] = t.astype(tdt).view(dt)
            return f
        if op in ("sitofp", "uitofp"):
            if ds.kind == "bf16":
                raise Unsupported(f"{op} to bfloat")
            dt = dst.dtype
            bits = ss.bits
            if op == "sitofp" and bits > 1:
                sdt = _SIGNED[bits]

                def f(R, X):
                    R[d] = R[v].view(sdt).astype(dt)
            else:
                def f(R, X):
                    R[d] = R[v].astype(dt)
            return f
        if op == "bitcast":
            if src.size != dst.size or ss.kind in ("ptr",) or ds.kind == "ptr" or ss.bits == 1:
                raise Unsupported(f"bitcast {src.text} to {dst.text}")
            dt = dst.dtype
            n = dst.n if dst.is_vec else 0

            def f(R, X):
                b = _bytes_of(R[v]).view(dt)
                R[d] = b if n else b.reshape(WAVE)
            return f
        raise Unsupported(f"cast {op}")

    def _gep(self, ins, O, d, where):
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

        def f(R, X):
            p = R[base]
            off = p.off
            for s, st, it in parts:
                off = off + _sext64(R[s], it) * st
            R[d] = Ptr(p.mem, off)
        return f

    def _check_access(self, mem: Memory, off: np.ndarray, nb: int, align: int, what: str, X):
        lo = off.min()
        if lo < 0 or off.max() + nb > mem.data.size:
            bad = (off < 0) | (off + nb > mem.data.size)
            k = int(np.argmax(bad))
            raise OutOfBounds(f"out-of-bounds {what} of {nb} bytes at byte offset {int(off[k])} of "
                              f"{mem.label()} (lane {k} of {X.launch.agent_name(X.agent)})")
        if align > 1 and (off % align).any():
            k = int(np.argmax(off % align != 0))
            raise Misaligned(f"{what} at byte offset {int(off[k])} of {mem.label()} is not aligned to "
                             f"the declared align {align} (lane {k})")

    def _load(self, ins, O, d, where):
        p, = O
        ty = ins.ty
        if ty.scalar.kind in ("ptr",) or ty.scalar.bits == 1:
            raise Unsupported(f"load of {ty.text}")
        nb = ty.size
        ar = np.arange(nb, dtype=np.int64)
        dt = ty.dtype
        align = ins.extra["align"]
        vecn = ty.is_vec
        check = self._check_access
        what = f"load {ty.text}"
        kern = self
        pname = ins.ops[0].name if ins.ops[0].kind == "reg" else ""

        def f(R, X):
            ptr = R[p]
            mem = ptr.mem
            off = ptr.off
            check(mem, off, nb, align, "load", X)
            if kern.bank_log is not None and mem.space == "lds":
                kern.bank_log.record(where, "load", pname, off, nb)
            idx = off[:, None] + ar
            if mem.init is not None:
                ok = mem.init[idx]
                if not ok.all():
                    k = _lane(~ok)
                    bi = int(idx[k][np.argmin(ok[k])])
                    raise UninitializedRead(f"read of LDS byte offset {bi} of {mem.label()} that no lane of "
                                            f"this workgroup wrote (lane {k} of {X.launch.agent_name(X.agent)})")
            if mem.shadow is not None:
                mem.shadow.read(idx, X, mem, what)
            raw = mem.data[idx].view(dt)
            R[d] = raw if vecn else raw.reshape(WAVE)
        return f

    def _store(self, ins, O, where):
        v, p = O
        ty = ins.ops[0].ty
        if ty.scalar.kind == "ptr" or ty.scalar.bits == 1:
            raise Unsupported(f"store of {ty.text}")
        nb = ty.size
        ar = np.arange(nb, dtype=np.int64)
        align = ins.extra["align"]
        check = self._check_access
        what = f"store {ty.text}"
        kern = self
        pname = ins.ops[1].name if ins.ops[1].kind == "reg" else ""

        def f(R, X):
            ptr = R[p]
            mem = ptr.mem
            off = ptr.off
            check(mem, off, nb, align, "store", X)
            if kern.bank_log is not None and mem.space == "lds":
                kern.bank_log.record(where, "store", pname, off, nb)
            idx = off[:, None] + ar
            _write(mem, idx, _bytes_of(R[v]), X, what)
        return f

    def _call(self, ins, O, d, where):
        name = ins.extra["callee"]
        key = INTRINSICS.get(name)
        if key is None:
            raise Unsupported(f"intrinsic {name} is not implemented by the emulator")
        if key == "tid_x":
            def f(R, X):
                R[d] = X.tid
            return f
        if key in ("wg_x", "wg_y", "wg_z"):
            k = "xyz".index(key[-1])

            def f(R, X):
                R[d] = X.wgid[k]
            return f
        if key == "barrier":
            def f(R, X):
                return _CONTROL_BARRIER
            return f
        if key == "cluster_barrier":
            def f(R, X):
                return _CONTROL_CLUSTER
            return f
        if key == "sched_barrier":
            # A scheduling hint for the compiler (sched.barrier, wave.barrier): no
            # effect on values or memory; the emulator runs a wave's lanes in lockstep.
            def f(R, X):
                return None
            return f
        if key == "readfirstlane":
            a, = O

            def f(R, X):
                R[d] = np.full(WAVE, R[a][0], dtype=R[a].dtype)
            return f
        if key == "rsrc":
            p, stride, nrec, flags = O
            arch = self.arch

            def f(R, X):
                ptr = R[p]
                for nm, val in (("base pointer", ptr.off), ("stride", R[stride]), ("num_records", R[nrec]),
                                ("flags", R[flags])):
                    if (val != val[0]).any():
                        raise Unsupported(f"make.buffer.rsrc with a lane-varying {nm}")
                try:
                    rr = rsrc_decode(arch, int(R[flags][0]), int(R[stride][0]), int(R[nrec][0]))
                except RsrcRefused as exc:
                    raise Unsupported(f"{exc} at `{ins.text}`") from None
                R[d] = Rsrc(ptr.mem, int(ptr.off[0]), rr.nrec)
            return f
        if key == "bload":
            return self._buffer_load(ins, O, d)
        if key == "bstore":
            return self._buffer_store(ins, O)
        if key in ("wmma_bf16", "wmma_f16"):
            na, a, nb_, b, cmod, c, ra, rb = O
            for k_, o in ((0, "neg_a"), (2, "neg_b"), (4, "c_mod"), (6, "reuse_a"), (7, "reuse_b")):
                if ins.ops[k_].kind != "const":
                    raise Unsupported(f"WMMA {o} must be an immediate")
            if int(ins.ops[4].value) != 0:
                raise Unsupported("WMMA c_mod other than 0")
            neg_a, neg_b = bool(ins.ops[0].value), bool(ins.ops[2].value)
            kind = "bf16" if key == "wmma_bf16" else "f16"

            def f(R, X):
                R[d] = wmma_f32_16x16x32(R[a], R[b], R[c], kind, neg_a, neg_b)
            return f
        raise Unsupported(f"intrinsic {name}")

    def _buffer_load(self, ins, O, d):
        r, vo, so, aux = O
        ty = ins.ty
        nb = ty.size
        esz = ty.scalar.size
        ne = ty.n if ty.is_vec else 1
        ar = np.arange(nb, dtype=np.int64)
        dt = ty.dtype
        vecn = ty.is_vec
        what = f"buffer load {ty.text}"

        def f(R, X):
            rs = R[r]
            if (R[aux] != 0).any():
                raise Unsupported("buffer load with a non-zero aux operand")
            off = R[vo].astype(np.int64) + R[so].astype(np.int64)
            inr = _buffer_range(off, esz, ne, rs.nrec, what)
            mem = rs.mem
            out = np.zeros((WAVE, nb), np.uint8)
            if inr.any():
                o = rs.base + off[inr]
                if o.min() < 0 or o.max() + nb > mem.data.size:
                    k = int(np.argmax((o < 0) | (o + nb > mem.data.size)))
                    raise OutOfBounds(f"{what} at byte offset {int(o[k])} is inside num_records={rs.nrec} but "
                                      f"outside {mem.label()}")
                idx = o[:, None] + ar
                if mem.shadow is not None:
                    mem.shadow.read(idx, X, mem, what)
                out[inr] = mem.data[idx]
            raw = out.view(dt)
            R[d] = raw if vecn else raw.reshape(WAVE)
        return f

    def _buffer_store(self, ins, O):
        v, r, vo, so, aux = O
        ty = ins.ops[0].ty
        nb = ty.size
        esz = ty.scalar.size
        ne = ty.n if ty.is_vec else 1
        ar = np.arange(nb, dtype=np.int64)
        what = f"buffer store {ty.text}"

        def f(R, X):
            rs = R[r]
            if (R[aux] != 0).any():
                raise Unsupported("buffer store with a non-zero aux operand")
            off = R[vo].astype(np.int64) + R[so].astype(np.int64)
            inr = _buffer_range(off, esz, ne, rs.nrec, what)
            if not inr.any():
                return
            mem = rs.mem
            o = rs.base + off[inr]
            if o.min() < 0 or o.max() + nb > mem.data.size:
                k = int(np.argmax((o < 0) | (o + nb > mem.data.size)))
                raise OutOfBounds(f"{what} at byte offset {int(o[k])} is inside num_records={rs.nrec} but "
                                  f"outside {mem.label()}")
            _write(mem, o[:, None] + ar, _bytes_of(R[v])[inr], X, what)
        return f

    # -- launching ---------------------------------------------------------------------------
    def launch(self, grid, block: int, args: dict, cluster=None, orders=("forward", "reverse"),
               shadow: bool = True, max_instructions: int = 200_000_000) -> "LaunchStats":
        """Run the kernel over ``grid`` (x, y, z) workgroups of ``block`` threads.

        ``args`` maps every parameter name to a numpy array (pointer parameters;
        C-contiguous, any dtype, used as raw bytes) or a Python int/float
        (scalars). ``cluster`` defaults to the module's ``amdgpu-cluster-dims``.
        Each order runs on fresh copies of the arrays; when every order
        completes and all agree byte for byte, the results are written back
        into the caller's arrays. Raises :class:`SimError`."""
        from .launch import run_launch
        return run_launch(self, grid, block, args, cluster, orders, shadow, max_instructions)


def _buffer_range(off: np.ndarray, esz: int, ne: int, nrec: int, what: str) -> np.ndarray:
    """Per lane: the whole access is inside ``num_records``. The raw-buffer range
    check is per element; an access with some elements in range and some out
    is reported (its hardware result depends on the generation's range-check
    granularity, and our kernels' admission rules exclude it)."""
    ends = off[:, None] + (np.arange(ne, dtype=np.int64) + 1) * esz  # (32, ne)
    inside = (off[:, None] >= 0) & (ends <= nrec) & (off[:, None] < 2 ** 32)
    allin = inside.all(axis=1)
    if ne > 1:
        part = inside.any(axis=1) & ~allin
        if part.any():
            k = int(np.argmax(part))
            raise OutOfBounds(f"{what} at offset {int(off[k])} straddles num_records={nrec} (lane {k}): "
                              f"part of the vector is in range and part is not")
    return allin


def _write(mem: Memory, idx: np.ndarray, vb: np.ndarray, X, what: str):
    old = mem.data[idx]
    changed = old != vb
    if mem.shadow is not None:
        mem.shadow.write(idx, changed, X, mem, what)
    mem.data[idx] = vb
    back = mem.data[idx]  # lanes that overlap with different bytes: the later lane won
    if (back != vb).any():
        k = _lane(back != vb)
        raise LaneConflict(f"lanes of one {what} write different bytes to {mem.label()} byte offset "
                           f"{int(idx[k][np.argmax(back[k] != vb[k])])} (lane {k} and another lane)")
    if mem.init is not None:
        mem.init[idx] = True


def _where(ins: ir.Ins) -> str:
    return f"`{ins.text}` (block {ins.block}, line {ins.line})"


def _ranges(ix) -> str:
    ix = list(int(i) for i in ix)
    out, start = [], None
    for k, i in enumerate(ix):
        if start is None:
            start = i
        if k + 1 == len(ix) or ix[k + 1] != i + 1:
            out.append(f"{start}" if start == i else f"{start}..{i}")
            start = None
    return ",".join(out)

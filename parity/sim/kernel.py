"""class :class:`Kernel`: a parsed module decoded once into closures, launched any number of times.

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

Modules: errors.py (the errors), memory.py (values, memories, checked
access), shadow.py (race shadow), ops.py with ops_arith.py, ops_memory.py and
ops_call.py (instruction -> closure), launch.py (the launch); this module
builds the register slots and decodes every block, and :meth:`Kernel.launch`
hands the decoded kernel to :func:`parity.sim.launch.run_launch`.
"""
from __future__ import annotations

import numpy as np

from . import ir, promises, promises_ops
from . import loops as LOOPS
from .errors import SimError, Unsupported
from .launch import LaunchStats, run_launch
from .memory import WAVE
from .coverage import ORDERED, Coverage, Site
from .ops import DBlock, compile_ins, where_of


class Kernel:
    """A parsed and decoded kernel, ready to launch any number of times."""

    def __init__(self, text: str, check_poison: bool = True, arch: str = "gfx1250", coverage: bool = False):
        """``arch`` picks how buffer resources are decoded and range-checked
        (parity/sim/rsrc.py: the V# layout and out-of-range rules per arch).
        ``coverage``: record which way every conditional branch and select goes
        (``self.coverage``, a :class:`parity.sim.coverage.Coverage`; None when off,
        and then the decoded closures carry no recording at all)."""
        self.arch = arch
        self.coverage = Coverage() if coverage else None
        self.module = ir.parse(text)
        self.name = self.module.kernel
        self.check_poison = check_poison
        self.bank_log = None    # a parity.sim.lds_banks.BankLog to count LDS bank conflicts
        self.slots: dict = {}
        self.consts: list = []  # (slot, array)
        self.n_instructions = sum(len(b.ins) for b in self.module.blocks)
        for p in self.module.params:
            self.slot("%" + p.name)
        for g in self.module.lds:
            self.slot("@" + g.name)
        self.promises = promises.check_module(self)   # refuses unchecked promise kinds (docs/sim.md)
        self._decode()

    # register slots (the op compilers in ops*.py call these while decoding)
    def slot(self, key) -> int:
        s = self.slots.get(key)
        if s is None:
            s = self.slots[key] = len(self.slots)
        return s

    def operand(self, op: ir.Operand, where: str) -> int:
        if op.kind == "reg":
            return self.slot("%" + op.name)
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
        s = self.slot(key)
        arr = np.ascontiguousarray(np.broadcast_to(val, (WAVE,) + val.shape))
        arr.setflags(write=False)
        self.consts.append((s, arr))
        return s

    def const_of(self, slot: int):
        """The (32,)-lane array of a constant operand's slot, None for a register."""
        for s, arr in self.consts:
            if s == slot:
                return arr
        return None

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
                where = where_of(ins)
                d = self.slot("%" + ins.dst)
                for v, pred in zip(ins.ops, ins.extra["preds"]):
                    if pred not in by_name:
                        raise Unsupported(f"phi names unknown block %{pred}", where)
                    db.phis.append((pred, d, self.operand(v, where)))
                k += 1
            for ins in pb.ins[k:]:
                if ins.op == "phi":
                    raise Unsupported("phi after a non-phi instruction", where_of(ins))
        loops = LOOPS.natural_loops(mod.blocks) if self.coverage is not None else {}
        carried = LOOPS.carried_only(mod.blocks, loops) if loops else set()
        for pb, db in zip(mod.blocks, self.blocks):
            body = [i for i in pb.ins if i.op != "phi"]
            if not body or body[-1].op not in ("br", "ret"):
                raise Unsupported(f"block {pb.name} does not end in br or ret")
            for ins in body:
                where = where_of(ins)
                try:
                    fn = compile_ins(self, ins, db, by_name)
                except SimError as e:
                    raise e.at(where)
                except (KeyError, ValueError, TypeError, ir.ParseError) as e:
                    raise Unsupported(f"cannot decode: {e}", where) from e
                fn = promises_ops.wrap(self, ins, fn, where)
                if self.coverage is not None and (
                        ins.op == "select" or (ins.op == "br" and len(ins.extra["targets"]) == 2)):
                    fn = self.coverage.wrap(fn, self.operand(ins.ops[0], where),
                                            Site("br" if ins.op == "br" else "select", ins.text, ins.block, ins.line),
                                            loop=loops.get(("in", db.index)), carried=ins.dst in carried,
                                            back=ins.op == "br" and LOOPS.is_back_edge(loops, db.index, [
                                                by_name[t].index for t in ins.extra["targets"] if t in by_name]))
                elif self.coverage is not None and ins.op == "icmp" and ins.extra["pred"] in ORDERED:
                    fn = self.coverage.wrap_cmp(fn, self.operand(ins.ops[0], where), self.operand(ins.ops[1], where),
                                                Site("cmp", ins.text, ins.block, ins.line))
                db.ops.append(fn)
                db.texts.append(where)
        for (what, bi), lp in loops.items():  # trip starts and loop exits (coverage per iteration class)
            db = self.blocks[bi]
            if what == "head" and db.ops:
                db.ops[0] = self.coverage.wrap_trip(db.ops[0], lp)
            elif what == "exit" and db.ops:
                db.ops[0] = self.coverage.wrap_exit(db.ops[0], lp)
        self.nslots = len(self.slots)
        self.template = [None] * self.nslots
        for s, arr in self.consts:
            self.template[s] = arr

    # -- launching ---------------------------------------------------------------------------
    def launch(self, grid, block: int, args: dict, cluster=None, orders=("forward", "reverse"),
               shadow: bool = True, max_instructions: int = 200_000_000) -> LaunchStats:
        """Run the kernel over ``grid`` (x, y, z) workgroups of ``block`` threads.

        ``args`` maps every parameter name to a numpy array (pointer parameters;
        C-contiguous, any dtype, used as raw bytes) or a Python int/float
        (scalars). ``cluster`` defaults to the module's ``amdgpu-cluster-dims``.
        Each order runs on fresh copies of the arrays; when every order
        completes and all agree byte for byte, the results are written back
        into the caller's arrays. Raises :class:`SimError`."""
        promises.check_launch(self, grid, block, cluster, args)
        return run_launch(self, grid, block, args, cluster, orders, shadow, max_instructions)

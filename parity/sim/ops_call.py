"""Op compilers for intrinsic calls: work-item ids, barriers, buffer resources and buffer access, WMMA.

:data:`INTRINSICS` maps each intrinsic the emulator implements to its handler
key; any other callee is :class:`Unsupported`. The barrier intrinsics return
the control tokens of parity/sim/memory.py, where the launch takes over.
"""
from __future__ import annotations

import numpy as np

from .errors import Unsupported
from .memory import CONTROL_BARRIER, CONTROL_CLUSTER, WAVE, Rsrc
from .ops_generic import generic_call
from .ops_memory import buffer_load, buffer_store
from .rsrc import RsrcRefused
from .rsrc import decode as rsrc_decode
from .wmma import wmma_f32_16x16x32

#: intrinsic name -> handler key; names the Python table declares (python_engine/ir/intrinsics.py)
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
    # a wait on the load counter: the emulator's loads complete when issued
    "llvm.amdgcn.s.wait.loadcnt": "sched_barrier",
}


def call(K, ins, O, d, where):
    name = ins.extra["callee"]
    key = INTRINSICS.get(name)
    if key is None:   # target-independent intrinsics and what opt -O3 introduces (ops_generic.py)
        return generic_call(K, ins, O, d, where)
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
            return CONTROL_BARRIER
        return f
    if key == "cluster_barrier":
        def f(R, X):
            return CONTROL_CLUSTER
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
        arch = K.arch

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
        return buffer_load(ins, O, d, K.arch)
    if key == "bstore":
        return buffer_store(ins, O, K.arch)
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

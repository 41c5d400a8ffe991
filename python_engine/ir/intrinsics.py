"""The intrinsic table: every intrinsic either engine may declare, keyed by a
stable name, in the order the printer declares them (DESIGN §2).
Twin: cpp_engine/src/ir/intrinsics.{h,cpp}.

Each row is ``(key, name, return type, parameter types)``; a row may override
those per flavor. Signatures follow LLVM ``IntrinsicsAMDGPU.td`` (and the
generic ``Intrinsics.td``) of the generation each flavor names.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from . import types as T


@dataclass(frozen=True)
class Intrinsic:
    """One resolved intrinsic: its LLVM name, return type and parameter types."""

    key: str
    name: str
    ret: T.Type
    params: tuple

    @property
    def declaration(self) -> str:
        ps = ", ".join(p.text for p in self.params)
        return f"declare {self.ret.text} @{self.name}({ps})"


@dataclass(frozen=True)
class Row:
    key: str
    name: str
    ret: T.Type
    params: tuple
    per_flavor: dict = field(default_factory=dict)  # canonical flavor -> (name, ret, params)

    def resolve(self, flavor: str) -> Intrinsic:
        name, ret, params = self.per_flavor.get(flavor, (self.name, self.ret, self.params))
        return Intrinsic(self.key, name, ret, params)


_G = T.GLOBAL_PTR
_R = T.RSRC_PTR
_V4F = T.vec(4, T.FLOAT)
_V2F = T.vec(2, T.FLOAT)
_V8F = T.vec(8, T.FLOAT)
_V16BF = T.vec(16, T.BFLOAT)
_V16H = T.vec(16, T.HALF)

TABLE = (
    Row("workitem_id_x", "llvm.amdgcn.workitem.id.x", T.I32, ()),
    Row("workgroup_id_x", "llvm.amdgcn.workgroup.id.x", T.I32, ()),
    Row("workgroup_id_y", "llvm.amdgcn.workgroup.id.y", T.I32, ()),
    Row("workgroup_id_z", "llvm.amdgcn.workgroup.id.z", T.I32, ()),
    Row("s_barrier", "llvm.amdgcn.s.barrier", T.VOID, ()),
    # LLVM 20: make.buffer.rsrc overloaded on the base pointer only, i32 num_records.
    # LLVM 22: result overloaded too (.p8.p1), num_records i64.
    Row("make_buffer_rsrc", "llvm.amdgcn.make.buffer.rsrc.p8.p1", _R, (_G, T.I16, T.I64, T.I32),
        {"llvm20": ("llvm.amdgcn.make.buffer.rsrc.p1", _R, (_G, T.I16, T.I32, T.I32))}),
    Row("raw_buffer_load_f32", "llvm.amdgcn.raw.ptr.buffer.load.f32", T.FLOAT, (_R, T.I32, T.I32, T.I32)),
    Row("raw_buffer_load_v4f32", "llvm.amdgcn.raw.ptr.buffer.load.v4f32", _V4F, (_R, T.I32, T.I32, T.I32)),
    Row("raw_buffer_store_f32", "llvm.amdgcn.raw.ptr.buffer.store.f32", T.VOID, (T.FLOAT, _R, T.I32, T.I32, T.I32)),
    Row("raw_buffer_store_v4f32", "llvm.amdgcn.raw.ptr.buffer.store.v4f32", T.VOID, (_V4F, _R, T.I32, T.I32, T.I32)),
    # -- conv_implicit_gemm (appended; the C++ table carries the same rows) --------------
    # gfx1250 wave32 WMMA, D(16x16 f32) = A(16x32) * B(32x16) + C. LLVM 22
    # IntrinsicsAMDGPU.td AMDGPUWmmaIntrinsicModsAllReuse: (i1 neg_a, A, i1 neg_b, B,
    # i16 c_mod, C, i1 reuse_a, reuse_b); the neg/mod/reuse operands are immargs
    # (LLVM attaches `immarg` itself when it parses the declaration).
    Row("wmma_f32_16x16x32_bf16", "llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16", _V8F,
        (T.I1, _V16BF, T.I1, _V16BF, T.I16, _V8F, T.I1, T.I1)),
    Row("wmma_f32_16x16x32_f16", "llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16", _V8F,
        (T.I1, _V16H, T.I1, _V16H, T.I16, _V8F, T.I1, T.I1)),
    # Makes the wave index an SGPR value so role branches are scalar (wave-uniform).
    Row("readfirstlane_i32", "llvm.amdgcn.readfirstlane.i32", T.I32, (T.I32,)),
    # gfx1250 workgroup-cluster barrier (LLVM 22.1): a workgroup barrier, then the
    # cluster barrier (s_barrier_signal/wait -3). Paired with syncscope("cluster") fences.
    Row("s_cluster_barrier", "llvm.amdgcn.s.cluster.barrier", T.VOID, ()),
    Row("raw_buffer_load_i16", "llvm.amdgcn.raw.ptr.buffer.load.i16", T.I16, (_R, T.I32, T.I32, T.I32)),
    Row("raw_buffer_load_v2f32", "llvm.amdgcn.raw.ptr.buffer.load.v2f32", _V2F, (_R, T.I32, T.I32, T.I32)),
    Row("raw_buffer_store_i16", "llvm.amdgcn.raw.ptr.buffer.store.i16", T.VOID, (T.I16, _R, T.I32, T.I32, T.I32)),
    Row("raw_buffer_store_v2f32", "llvm.amdgcn.raw.ptr.buffer.store.v2f32", T.VOID, (_V2F, _R, T.I32, T.I32, T.I32)),
    # Scheduling barrier (IntrinsicsAMDGPU.td int_amdgcn_sched_barrier, LLVM 15+: one
    # i32 immarg mask of the instruction classes that may cross; 0 = none). Emits no
    # machine instruction (AMDGPUUsage "llvm.amdgcn.sched.barrier"); keeps the conv
    # main loop's global loads above its WMMAs.
    Row("sched_barrier", "llvm.amdgcn.sched.barrier", T.VOID, (T.I32,)),
    # Wave barrier (IntrinsicsAMDGPU.td int_amdgcn_wave_barrier: no operands,
    # convergent, has side effects; AMDGPU codegen prints only a "; wave barrier"
    # comment, no machine instruction). A code-motion barrier for the wave: orders
    # the conv default epilogue's cross-lane LDS transpose writes and reads.
    Row("wave_barrier", "llvm.amdgcn.wave.barrier", T.VOID, ()),
    # gfx12+ wait on the load counter (IntrinsicsAMDGPU.td int_amdgcn_s_wait_loadcnt,
    # one i16 immarg: the count of newer loads that may stay outstanding; present in
    # LLVM 19, so llvm20 text verifies with opt-19). The conv uniform-tap loop waits
    # once for its held tile instead of LLVM's per-store graded waits.
    Row("s_wait_loadcnt", "llvm.amdgcn.s.wait.loadcnt", T.VOID, (T.I16,)),
)

_BY_KEY = {r.key: r for r in TABLE}


@lru_cache(maxsize=None)  # a few dozen (key, flavor) pairs; the builder asks on every call
def intrinsic(key: str, flavor: str) -> Intrinsic:
    """The intrinsic ``key`` as written for canonical ``flavor``; KeyError if unknown."""
    return _BY_KEY[key].resolve(flavor)


def table(flavor: str) -> tuple:
    """``(key, declaration line)`` of every row, in table order, for ``flavor``."""
    return tuple((r.key, r.resolve(flavor).declaration) for r in TABLE)

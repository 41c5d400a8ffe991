"""The launch the hardware is given (issue 34, item 2): device buffers with
guard zones, the kernarg segment as bytes, and the emulator's side of it.

The numerics plans (parity/sim/numerics.py) launch conv and reduce kernels
the way the product's runtime does (parity/runtime): the conv_launch plan
sizes every buffer; the runtime's own packer (:class:`parity.launch.kernarg.Kernarg`,
from the conv_abi argument list of the plan's variant) writes the kernarg
segment; and the emulator reads every kernel parameter back out of those
bytes at the offset and size LLVM gives it. So an argument list that differs
from the kernel's parameters (order, type, count), or a packer slip, reaches
the kernel as the wrong numbers, exactly as it would on a GPU.

Kernarg layout (:func:`kernarg_layout`): explicit arguments in declaration
order, each at the next offset aligned to its type's ABI alignment, size the
type's alloc size; the segment's explicit size rounded up to 8
(``.kernarg_segment_align``). Source: LLVM AMDGPUUsage.rst, "Code Object V3+
Metadata" (``.args`` ``.offset`` / ``.size``) and "Kernel Argument Segment";
implemented by ``AMDGPUSubtarget::getExplicitKernArgSize`` and
``AMDGPULowerKernelArguments`` (``alignTo(offset, DL.getABITypeAlign(ty)) +
DL.getTypeAllocSize(ty)``, no ``byref`` arguments here). ABI alignments from
the amdgcn datalayout: ``p1:64:64`` (8), ``i64:64`` (8), i32 / float 4,
i16 / half / bfloat 2, i8 / i1 1. This is a second implementation of the rule
(the runtime's is parity/launch/kernarg.py, from the conv_abi list); the
two meet only through the bytes. ``tests/test_sim_launch_route.py`` compares
it with the ``.args`` of compiled code objects where a linker is installed.

Device memory (:class:`Arena`): every buffer of a case is a view into one
byte arena at a 256-byte aligned "device address" (hipMalloc's alignment is
at least 256: an assumption, as on every HIP device), with a guard zone of
:data:`GUARD` bytes of a fixed pattern before and after it. The emulator's
memory of a pointer argument is exactly the buffer its address names, so any
access outside it is ``OutOfBounds`` at the instruction (a guard zone of
unbounded width); the guard bytes themselves are checked after every launch
(:meth:`Arena.check_guards`), so nothing on the launch route (the emulator's
write-back, the packer) writes outside a buffer unnoticed. A pointer argument
whose 8 bytes are not the address of a buffer of the case (nor 0, the plan's
``unused``) is an error naming the parameter, its offset and the address.
"""
from __future__ import annotations

import struct

import numpy as np

from parity.launch import kernarg as KA
from parity.launch.cluster import check_cluster
from parity.launch.errors import LaunchConfigError

from .errors import SimError

#: bytes of guard zone before and after every buffer
GUARD = 512
#: device addresses start here (0 is the null pointer of ``unused`` arguments)
BASE_ADDRESS = 0x7F00_0000_0000
#: buffer alignment in the arena (hipMalloc: at least 256; an assumption)
BUFFER_ALIGN = 256
KERNARG_ALIGN = 8


class GuardZoneWritten(SimError):
    """Bytes of a guard zone before or after a buffer changed during a launch."""


class KernargError(SimError):
    """The kernarg segment does not give the kernel what its parameters need."""


def _pattern(n: int) -> np.ndarray:
    return ((np.arange(n, dtype=np.int64) * 37 + 0x5B) & 0xFF).astype(np.uint8)


class Arena:
    """A case's buffers (name -> C-contiguous numpy array) copied into one byte
    arena with guard zones; :attr:`views` are the buffers the launches use,
    :attr:`address` their device addresses."""

    def __init__(self, buffers: dict):
        off, spans = 0, {}
        for name, arr in buffers.items():
            start = -(-(off + GUARD) // BUFFER_ALIGN) * BUFFER_ALIGN
            spans[name] = (start, arr.nbytes)
            off = start + arr.nbytes + GUARD
        self.data = _pattern(off + BUFFER_ALIGN)
        self.spans = spans
        self.views, self.address = {}, {}
        for name, arr in buffers.items():
            start, n = spans[name]
            raw = self.data[start:start + n]
            raw[...] = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
            self.views[name] = raw.view(arr.dtype).reshape(arr.shape)
            self.address[name] = BASE_ADDRESS + start
        self._guard = np.ones(self.data.size, np.bool_)
        for start, n in spans.values():
            self._guard[start:start + n] = False
        self._want = self.data[self._guard].copy()

    def resolve(self, address: int):
        """The buffer name whose device address is ``address``; None when none is."""
        for name, a in self.address.items():
            if a == address:
                return name
        return None

    def check_guards(self, what: str) -> None:
        """GuardZoneWritten naming the buffer and the byte when a guard byte changed."""
        bad = np.flatnonzero(self.data[self._guard] != self._want)
        if not bad.size:
            return
        pos = int(np.flatnonzero(self._guard)[bad[0]])
        near = min(self.spans.items(), key=lambda kv: min(abs(pos - kv[1][0]), abs(pos - kv[1][0] - kv[1][1])))
        name, (start, n) = near
        side = f"{start - pos} bytes before" if pos < start else f"{pos - start - n} bytes past the end of"
        raise GuardZoneWritten(f"{what}: {bad.size} guard byte(s) changed, first {side} buffer {name!r} "
                               f"({n} bytes, sized by the launch plan)")


#: IR type text -> (ABI alignment, alloc size) in the amdgcn datalayout
_SCALAR_LAYOUT = {"i1": (1, 1), "i8": (1, 1), "i16": (2, 2), "i32": (4, 4), "i64": (8, 8),
                  "half": (2, 2), "bfloat": (2, 2), "float": (4, 4), "double": (8, 8)}


def kernarg_layout(module) -> tuple:
    """``([(param, offset, size)], explicit bytes)`` of a parsed kernel module's
    parameters by LLVM's kernarg rule (module docstring). ``Unsupported``-style
    SimError for a parameter type the rule is not written for here (a
    ``byref`` aggregate, a vector, another address space)."""
    off, out = 0, []
    for p in module.params:
        t = p.ty
        if t.kind == "ptr":
            if t.addrspace != 1:
                raise KernargError(f"parameter %{p.name}: kernarg layout of a pointer in address space "
                                   f"{t.addrspace} is not modelled")
            align, size = 8, 8
        elif t.text in _SCALAR_LAYOUT:
            align, size = _SCALAR_LAYOUT[t.text]
        else:
            raise KernargError(f"parameter %{p.name}: kernarg layout of type {t.text} is not modelled")
        if any(a.startswith("byref") for a in p.attrs):
            raise KernargError(f"parameter %{p.name}: byref kernel arguments are not modelled")
        off = -(-off // align) * align
        out.append((p, off, size))
        off += size
    return out, -(-off // KERNARG_ALIGN) * KERNARG_ALIGN


def code_object_args(module) -> dict:
    """The ``.args`` metadata LLVM records for ``module``'s explicit arguments
    (``.name``, ``.offset``, ``.size``, ``.value_kind``), as the runtime's
    :func:`parity.launch.kernarg.check_against_metadata` reads a code object."""
    slots, size = kernarg_layout(module)
    args = [{".name": p.name, ".offset": o, ".size": s,
             ".value_kind": "global_buffer" if p.ty.kind == "ptr" else "by_value"} for p, o, s in slots]
    return {".args": args, ".kernarg_segment_size": size}


def read_kernarg(module, blob: bytes, arena: Arena, null: np.ndarray) -> dict:
    """Every parameter of ``module`` read from the kernarg bytes ``blob`` at its
    LLVM offset: integers (two's complement of the parameter's width, as the
    kernel reads them), floats, and pointers resolved to the arena buffer at
    that address (0 -> ``null``, a zero-byte buffer). KernargError when the
    segment is shorter than the kernel's explicit arguments or a pointer names
    no buffer."""
    slots, size = kernarg_layout(module)
    if len(blob) < size:
        raise KernargError(f"kernel {module.kernel}: the kernarg segment has {len(blob)} bytes, its explicit "
                           f"arguments take {size} (AMDGPUUsage, Kernel Argument Segment)")
    out = {}
    for p, off, n in slots:
        raw = blob[off:off + n]
        if p.ty.kind == "ptr":
            addr = int.from_bytes(raw, "little")
            name = "null" if addr == 0 else arena.resolve(addr)
            if name is None:
                raise KernargError(f"kernel {module.kernel}: pointer %{p.name} at kernarg offset {off} is "
                                   f"{addr:#x}, the address of no buffer of the launch")
            out[p.name] = null if name == "null" else arena.views[name]
        elif p.ty.kind == "int":
            v = int.from_bytes(raw, "little", signed=True) if p.ty.bits > 1 else raw[0] & 1
            out[p.name] = v
        elif p.ty.kind == "float":
            out[p.name] = struct.unpack({2: "<e", 4: "<f", 8: "<d"}[n], raw)[0]
        else:
            raise KernargError(f"parameter %{p.name}: type {p.ty.text} cannot be read from a kernarg segment")
    return out


_NULL = np.zeros(0, np.uint8)


def routed_args(variant: str, plan_args: dict, scalars, kernel, arena: Arena, acc_epilogue: str = "identity") -> dict:
    """A kernel's arguments as the hardware gets them: the plan's values (name ->
    int or text) resolved and packed by the runtime (parity/launch/kernarg.py,
    launch.py: the conv_abi list of ``variant``, device addresses of ``arena``),
    the runtime's launch-time check of that list against the kernel's ``.args``
    (:func:`code_object_args`: LLVM's layout of the kernel's own parameters), and
    every parameter read back from the packed bytes at its offset. ``acc_epilogue``:
    a ``reduce`` kernel's (a fused Stage 2's list is longer). KernargError naming
    the runtime's refusal."""
    slots, size = KA.variant_layout(variant, acc_epilogue)
    kinds = {s.name: s.kind for s in slots}
    try:
        vals = KA.resolve_values(plan_args, kinds, arena.address, scalars or {}, kernel.name)
        packed = KA.pack(slots, size, vals, kernel.name, variant)
        KA.check_against_metadata(slots, code_object_args(kernel.module), kernel.name)
    except LaunchConfigError as e:
        raise KernargError(f"the runtime refuses the launch: {e}") from None
    return read_kernarg(kernel.module, packed.bytes(), arena, _NULL)


def routed_cluster(kernel, grid, plan_cluster) -> tuple:
    """The cluster shape of a routed launch: the plan's (None: plain), checked by the
    runtime's launch-time rule (:func:`parity.launch.cluster.check_cluster`) against
    the kernel's ``amdgpu-cluster-dims`` (what the code object's ``.cluster_dims``
    records) and the grid; (1, 1, 1) for a plain launch."""
    try:
        cl = check_cluster(kernel.name, grid, plan_cluster, kernel.module.cluster_dims)
    except LaunchConfigError as e:
        raise SimError(f"the runtime refuses the launch: {e}") from None
    return cl or (1, 1, 1)

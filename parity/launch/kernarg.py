"""Kernel argument layout and packing (explicit arguments only).

Layout rule (LLVM ``AMDGPUUsage.rst``, "Code Object V3+ Metadata" ``.args``
``.offset``/``.size`` and "Kernel Argument Segment"; implemented by
``AMDGPULowerKernelArguments`` / ``AMDGPUSubtarget::getExplicitKernArgSize``):
explicit arguments are placed in declaration order, each at the next offset
aligned to the ABI alignment of its IR type (``ptr addrspace(1)`` 8 bytes,
``i64`` 8, ``i32`` 4, ``float`` 4), size = store size; the kernarg segment
itself is at least 8-byte aligned (``.kernarg_segment_align``), and hidden
arguments (filled by the HIP runtime) follow the explicit ones. The packer
follows the rule and, given the code object's metadata, checks every
argument's offset and size against what the compiler recorded, so a layout
disagreement is an error before any launch.

Values come by name from a conv_launch plan: integers, ``buffer <tensor>`` (a
device pointer from the caller's buffers), ``unused`` (null / 0.0) and
``caller`` (an epilogue scalar the caller supplies).
"""
from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass

from python_engine.facts import abi_args
from parity.launch.errors import LaunchConfigError

# kind -> (size, align, struct format)
KIND_LAYOUT = {
    "in_ptr": (8, 8, "<Q"), "out_ptr": (8, 8, "<Q"), "inout_ptr": (8, 8, "<Q"),
    "i64": (8, 8, "<q"), "i32": (4, 4, "<i"), "f32": (4, 4, "<f"),
}
KERNARG_ALIGN = 8
POINTER_KINDS = ("in_ptr", "out_ptr", "inout_ptr")


def _align(v: int, a: int) -> int:
    return (v + a - 1) // a * a


@dataclass(frozen=True)
class ArgSlot:
    name: str
    kind: str
    offset: int
    size: int


def layout(args) -> tuple:
    """``(slots, explicit_size)`` for ``(name, kind)`` pairs in order."""
    off, slots = 0, []
    for name, kind in args:
        size, align, _ = KIND_LAYOUT[kind]
        off = _align(off, align)
        slots.append(ArgSlot(name, kind, off, size))
        off += size
    return tuple(slots), _align(off, KERNARG_ALIGN)


def variant_layout(variant: str, acc_epilogue: str = "identity") -> tuple:
    """Layout of a conv ABI variant (``plain``, ``two_stage``, ``cluster``, ``reduce``);
    ``acc_epilogue``: the reduce kernel's (a fused Stage 2's arguments follow ``ks_count``)."""
    return layout(abi_args(variant, acc_epilogue))


def check_against_metadata(slots, kmeta: dict | None, kernel: str) -> None:
    """Raise LaunchConfigError when the code object's ``.args`` disagree with ``slots``."""
    if not kmeta:
        return
    explicit = [a for a in kmeta.get(".args", []) if not str(a.get(".value_kind", "")).startswith("hidden_")]
    if len(explicit) != len(slots):
        raise LaunchConfigError(f"{kernel}: the code object has {len(explicit)} explicit arguments, "
                                f"the ABI has {len(slots)}")
    for s, a in zip(slots, explicit):
        got = (a.get(".name"), a.get(".offset"), a.get(".size"))
        if got != (s.name, s.offset, s.size):
            raise LaunchConfigError(f"{kernel}: argument {s.name} is at offset {s.offset} size {s.size} "
                                    f"by the AMDGPU layout rule, the code object says "
                                    f"{got[0]} offset {got[1]} size {got[2]}")


def check_value(kernel: str, name: str, kind: str, v) -> None:
    """LaunchConfigError unless ``v`` fits argument ``name`` of ``kind``."""
    if kind == "f32":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise LaunchConfigError(f"{kernel}: argument {name} = {v!r} is not a number")
        try:
            struct.pack("<f", v)  # what Kernarg packs: a value beyond the f32 range cannot be
        except (OverflowError, struct.error):
            raise LaunchConfigError(f"{kernel}: argument {name} = {v!r} is outside the f32 range "
                                    f"(|v| <= 3.4028234663852886e+38)") from None
        return
    if isinstance(v, bool) or not isinstance(v, int):
        raise LaunchConfigError(f"{kernel}: argument {name} = {v!r} is not an integer")
    if kind in POINTER_KINDS and not 0 <= v < 1 << 64:
        raise LaunchConfigError(f"{kernel}: pointer {name} = {v} is not a 64-bit address")
    if kind == "i32" and not -(1 << 31) <= v < 1 << 31:
        raise LaunchConfigError(f"{kernel}: argument {name} = {v} does not fit i32")
    if kind == "i64" and not -(1 << 63) <= v < 1 << 63:
        raise LaunchConfigError(f"{kernel}: argument {name} = {v} does not fit i64")


class Kernarg:
    """A packed explicit-kernarg buffer (ctypes, 8-byte aligned) and the
    ``kernelParams`` array: one pointer per argument into the buffer."""

    def __init__(self, slots, size: int, values: dict, kernel: str = "kernel"):
        for s in slots:
            check_value(kernel, s.name, s.kind, values[s.name])
        self.slots = slots
        self.size = size
        self.values = dict(values)
        self.buffer = (ctypes.c_uint64 * max(1, size // 8))()  # c_uint64 -> 8-byte alignment
        base = ctypes.addressof(self.buffer)
        for s in slots:
            _, _, fmt = KIND_LAYOUT[s.kind]
            struct.pack_into(fmt, self.buffer, s.offset, values[s.name])
        self.params = (ctypes.c_void_p * max(1, len(slots)))(*[base + s.offset for s in slots])

    def bytes(self) -> bytes:
        return ctypes.string_at(ctypes.addressof(self.buffer), self.size)

    @property
    def params_address(self) -> int:
        """Address of the ``void*[]`` kernelParams array."""
        return ctypes.addressof(self.params)


def resolve_values(plan_args: dict, kinds: dict, buffers: dict, scalars: dict, kernel: str) -> dict:
    """Numbers for every argument of a plan's ``args`` block (name -> text or int)."""
    out = {}
    for name, v in plan_args.items():
        kind = kinds.get(name)
        if kind is None:
            raise LaunchConfigError(f"{kernel}: the plan names argument {name}, which the ABI does not have")
        if isinstance(v, int):
            out[name] = v
        elif v == "unused":
            out[name] = 0.0 if kind == "f32" else 0
        elif v.startswith("buffer "):
            t = v.split(" ", 1)[1]
            if t not in buffers:
                raise LaunchConfigError(f"{kernel}: argument {name} needs device buffer '{t}', "
                                        f"which was not given (have: {', '.join(sorted(buffers)) or '-'})")
            out[name] = int(buffers[t])
        elif v == "caller":
            if name not in scalars:
                raise LaunchConfigError(f"{kernel}: argument {name} is the caller's epilogue value; "
                                        f"pass it in scalars")
            out[name] = float(scalars[name])
        else:
            raise LaunchConfigError(f"{kernel}: argument {name} has an unknown plan value {v!r}")
    return out


def pack(slots, size: int, values: dict, kernel: str, variant: str) -> Kernarg:
    """The kernarg segment of ``values`` (by name, every argument of the ``variant``
    ABI's ``slots``, nothing else), or LaunchConfigError naming what is missing or
    extra. The one packing step of every launch, on a GPU and in the emulator
    (parity/sim/numerics.py)."""
    names = {s.name for s in slots}
    missing = [s.name for s in slots if s.name not in values]
    extra = [n for n in values if n not in names]
    if missing or extra:
        raise LaunchConfigError(f"{kernel}: argument values do not match the {variant} ABI "
                                f"(missing: {', '.join(missing) or '-'}; extra: {', '.join(extra) or '-'})")
    return Kernarg(slots, size, values, kernel)

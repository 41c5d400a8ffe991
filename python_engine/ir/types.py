"""LLVM IR types used by the engines (DESIGN §2).
Twin: cpp_engine/src/ir/types.{h,cpp}.

A type is an immutable value with its printed text. Scalar types are module
constants; vector and pointer types are built by :func:`vec` and :func:`ptr`
and interned, so ``vec(4, F32) is vec(4, F32)``.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Type:
    """An LLVM type.

    ``kind`` is one of ``void``, ``int``, ``float``, ``vector``, ``ptr``,
    ``array``; ``bits`` is the scalar width in bits (0 for void/ptr/aggregates),
    ``elem``/``count`` describe vectors and arrays, ``addrspace`` pointers.
    """

    text: str
    kind: str
    bits: int = 0
    elem: "Type | None" = None
    count: int = 0
    addrspace: int = 0

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.text

    @property
    def scalar(self) -> "Type":
        """The element type of a vector, else the type itself."""
        return self.elem if self.kind == "vector" else self


VOID = Type("void", "void")
I1 = Type("i1", "int", 1)
I8 = Type("i8", "int", 8)
I16 = Type("i16", "int", 16)
I32 = Type("i32", "int", 32)
I64 = Type("i64", "int", 64)
HALF = Type("half", "float", 16)
BFLOAT = Type("bfloat", "float", 16)
FLOAT = Type("float", "float", 32)
DOUBLE = Type("double", "float", 64)

_VEC: dict = {}
_PTR: dict = {}
_ARR: dict = {}


def vec(count: int, elem: Type) -> Type:
    """Fixed vector ``<count x elem>``; ``count`` >= 1, ``elem`` scalar int/float/ptr."""
    if count < 1 or elem.kind not in ("int", "float", "ptr"):
        raise ValueError(f"vector of {count} x {elem.text} is not a valid LLVM vector")
    key = (count, elem)
    t = _VEC.get(key)
    if t is None:
        t = Type(f"<{count} x {elem.text}>", "vector", elem.bits, elem, count)
        _VEC[key] = t
    return t


def ptr(addrspace: int = 0) -> Type:
    """Opaque pointer in ``addrspace`` (0 prints as plain ``ptr``).

    AMDGPU address spaces (LLVM AMDGPUUsage.rst, "Address Spaces"): 0 flat,
    1 global, 3 local (LDS), 4 constant, 5 private, 8 buffer resource.
    """
    t = _PTR.get(addrspace)
    if t is None:
        text = "ptr" if addrspace == 0 else f"ptr addrspace({addrspace})"
        t = Type(text, "ptr", 0, None, 0, addrspace)
        _PTR[addrspace] = t
    return t


def array(count: int, elem: Type) -> Type:
    """Array type ``[count x elem]`` (used for LDS globals)."""
    key = (count, elem)
    t = _ARR.get(key)
    if t is None:
        t = Type(f"[{count} x {elem.text}]", "array", 0, elem, count)
        _ARR[key] = t
    return t


GLOBAL_PTR = ptr(1)
LDS_PTR = ptr(3)
RSRC_PTR = ptr(8)

_BY_NAME = {t.text: t for t in (I1, I8, I16, I32, I64, HALF, BFLOAT, FLOAT, DOUBLE)}


def scalar(name: str) -> Type:
    """Scalar type by its LLVM name (``"i32"``, ``"bfloat"``, ...); KeyError if unknown."""
    return _BY_NAME[name]


def byte_size(t: Type) -> int:
    """Store size in bytes of a scalar or vector type (pointers: by address space, 64-bit
    except LDS/private which are 32-bit, buffer resources 128-bit; LLVM AMDGPU datalayout)."""
    if t.kind == "ptr":
        return {3: 4, 5: 4, 8: 16}.get(t.addrspace, 8)
    if t.kind == "vector":
        return byte_size(t.elem) * t.count
    if t.kind == "array":
        return byte_size(t.elem) * t.count
    return max(1, t.bits // 8)

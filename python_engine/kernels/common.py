"""Helpers shared by kernel families: module creation, kernel attributes, params. Twin: cpp_engine/src/kernels/common.{h,cpp}."""
from __future__ import annotations

from ..ir import types as T
from ..ir.function import Function, Module, Param

# Kernel attribute keys in the one order the printer writes them.
KERNEL_ATTR_ORDER = (
    "amdgpu-flat-work-group-size",
    "amdgpu-cluster-dims",
    "amdgpu-waves-per-eu",
    "uniform-work-group-size",
)

# Code object version 6 (LLVM AMDGPUUsage.rst, "Code Object V6 Metadata").
MODULE_FLAGS = (
    "!llvm.module.flags = !{!0}",
    '!0 = !{i32 1, !"amdhsa_code_object_version", i32 600}',
)


def kernel_attrs(threads: int, cluster_dims: tuple | None = None, waves_per_eu: int | None = None) -> tuple:
    """Ordered kernel attribute pairs: the exact flat work-group size
    ``threads,threads``; when given, ``amdgpu-cluster-dims`` ``x,y,z`` and
    ``amdgpu-waves-per-eu`` ``n`` (at least n waves per SIMD: LLVM limits the
    registers to that occupancy; AMDGPUUsage "LLVM IR Attributes"; the emulator's
    promise checker holds it to the launch's workgroup)."""
    vals = {
        "amdgpu-flat-work-group-size": f"{threads},{threads}",
        "uniform-work-group-size": "true",
    }
    if cluster_dims:
        vals["amdgpu-cluster-dims"] = ",".join(str(d) for d in cluster_dims)
    if waves_per_eu:
        vals["amdgpu-waves-per-eu"] = str(waves_per_eu)
    return tuple((k, vals[k]) for k in KERNEL_ATTR_ORDER if k in vals)


def in_ptr(name: str) -> Param:
    """Read-only global buffer parameter (``noalias``, no capture, ``readonly``)."""
    return Param(name, T.GLOBAL_PTR, ("noalias", "capture", "readonly"))


def out_ptr(name: str) -> Param:
    """Write-only global buffer parameter (``noalias``, no capture, ``writeonly``)."""
    return Param(name, T.GLOBAL_PTR, ("noalias", "capture", "writeonly"))


def inout_ptr(name: str) -> Param:
    """Read-write global buffer parameter (``noalias``, no capture)."""
    return Param(name, T.GLOBAL_PTR, ("noalias", "capture"))


def scalar(name: str, t: T.Type = T.I32) -> Param:
    """Plain scalar kernel argument."""
    return Param(name, t, ())


def new_module(flavor, arch, name: str, params: list, attrs: tuple) -> tuple:
    """A module with one ``amdgpu_kernel`` function; returns (module, function)."""
    fn = Function(name, params, T.VOID, "amdgpu_kernel", attrs)
    m = Module(flavor, arch, function=fn, metadata=list(MODULE_FLAGS))
    return m, fn

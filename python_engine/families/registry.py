"""The family registry of the Python engine: every family, once, in the
engine's family order (docs/families.md). Twin: cpp_engine/src/families/registry.cpp.

Every list that names all families is derived from :data:`FAMILY_MODULES`:
the engine API (``python_engine.FAMILIES``), and, checked against it by
tests/test_family_registry.py, the C++ engine's registry (the binding's
family order), the parity configs and golden shards, the numerics plans, the
fuzzers' rows and the docs table.

A family module provides ``FAMILY`` (its name), ``FIELDS`` (spec fields in
order, spec/fields.py ``Field``), ``validate(spec, arch, flavor)`` (first
failing rule's reason or None), ``kernel_name(spec, arch, flavor)`` and
``build(spec, arch, flavor)`` (``(name, Module | str)``).
"""
from __future__ import annotations

from ..kernels import conv_fwd_split_k_reduce, conv_implicit_gemm, ir_core
from . import conv_abi, conv_launch, perf_model, split_k_policy

FAMILY_MODULES = (ir_core, conv_fwd_split_k_reduce, conv_implicit_gemm, conv_abi, conv_launch,
                  split_k_policy, perf_model)
FAMILIES = tuple(m.FAMILY for m in FAMILY_MODULES)
BY_NAME = {m.FAMILY: m for m in FAMILY_MODULES}

"""python_engine.facts: the engine-facts API -- the engine's tables and small pure
functions that parity's runtime, catalog, AOT grid and oracles need, behind one public
module (docs/engine_api.md, "Engine facts"). Each name is the engine's own fact, not a copy:
the internals stay free to move while this module keeps its names.

The C++ engine gives the comparable facts as data in :mod:`cpp_engine.facts`
(``facts_data()`` in both modules); tests/test_engine_facts.py compares the two.
"""
from __future__ import annotations

from types import SimpleNamespace

from .families import conv_launch as _conv_launch
from .families.registry import BY_NAME as FAMILY_BY_NAME, FAMILIES as FAMILY_MODULES
from .ir.constants import small_float_bits
from .kernels import conv_abi as _conv_abi, conv_implicit_gemm as _cig
from .kernels.conv_launch import SPEC_FIELDS as CONV_LAUNCH_SPEC_FIELDS
from .kernels.conv_problem import ConvProblem
from .kernels.ir_core import FLOAT_VALUES as IR_CORE_FLOAT_VALUES, INT_VALUES as IR_CORE_INT_VALUES
from .kernels.ir_core import SUBNORMAL as IR_CORE_SUBNORMAL
from .policy.aot import CLUSTER_SIZES, REDUCE_DEGREES, reduce_spec
from .policy.fold import fold_width
from .policy.perf_model import layer_predictions, select_by_model
from .targets.arch import find_arch, processor_arch
from .targets.flavors import find_flavor

__all__ = ["ABI_VARIANTS", "CLUSTER_SIZES", "CONV_LAUNCH_SPEC_FIELDS", "ConvProblem", "FAMILY_BY_NAME",
           "FAMILY_MODULES", "IR_CORE_FLOAT_VALUES", "IR_CORE_INT_VALUES", "IR_CORE_SUBNORMAL", "REDUCE_DEGREES",
           "abi_args", "conv_kernel", "conv_launch", "facts_data", "find_arch", "find_flavor", "fold_width",
           "lds_bytes", "layer_predictions", "reduce_spec", "resolve_degree", "select_by_model",
           "small_float_bits"]

#: the kernel-argument layout variants of the conv kernels (conv_abi)
ABI_VARIANTS = _conv_abi.VARIANTS

#: the conv kernel's geometry the oracles need (field list, vector widths, pixel slots, two-deep rule,
#: which kernels carry the uniform-tap loop, which load A by row slots, in both K loops or in the tap loop only)
conv_kernel = SimpleNamespace(FAMILY=_cig.FAMILY, FIELDS=_cig.FIELDS, PIXEL_VECTORS=_cig.PIXEL_VECTORS,
                              pixel_slot=_cig.pixel_slot, D_VEC=_cig.D_VEC, OUT_VEC=_cig.OUT_VEC,
                              two_deep=_cig.two_deep, tap_loop_kernel=_cig.tap_loop_kernel, row_slots=_cig.row_slots,
                              tap_rows=_cig.tap_rows, tap_tile_kernel=_cig.tap_tile_kernel,
                              CHUNK=_cig.CHUNK,
                              WAVE=_cig.WAVE)

#: the conv_launch family's name, fields and ``split_k = -1`` resolution
conv_launch = SimpleNamespace(FAMILY=_conv_launch.FAMILY, FIELDS=_conv_launch.FIELDS, resolve=_conv_launch.resolve)


def abi_args(variant: str, acc_epilogue: str = "identity") -> tuple:
    """The kernel argument list of a conv ``variant`` (one of ABI_VARIANTS) with its
    accumulator epilogue: a tuple of (names, type) pairs in kernarg order. KeyError on
    an unknown variant or epilogue."""
    return _conv_abi.args(variant, acc_epilogue)


def lds_bytes(arch: str) -> int:
    """LDS bytes per workgroup of ``arch`` (the engine's arch table; LLVM AMDGPU.td's
    FeatureAddressableLocalMemorySize of the target). KeyError on an unknown arch."""
    a = find_arch(arch)
    if a is None:
        raise KeyError(arch)
    return a.lds_bytes


def resolve_degree(spec: dict, arch: str, flavor: str) -> tuple[dict, str]:
    """conv_launch's ``split_k = -1`` resolution: (spec with the policy's degree, "") or
    (spec, reason) when the policy refuses; a ValueError on an unknown arch or flavor
    (any LLVM AMDGPU processor is known: one outside the arch table resolves to 1)."""
    ar, fl = processor_arch(arch), find_flavor(flavor)
    if ar is None or fl is None:
        raise ValueError(f"unknown arch {arch!r} or flavor {flavor!r}")
    return _conv_launch.resolve(spec, ar, fl)


def facts_data() -> dict:
    """The facts both engines give as plain data (compared by tests/test_engine_facts.py):
    per-arch LDS bytes, ABI argument names per variant, the AOT grid's cluster sizes and
    reduce degrees, ir_core's value lists, and small-float rounding of fixed probes."""
    from .api import arch_table  # the arch names; a local import: api imports the families this module re-exports
    probes = (0.1, 1.0 / 3.0, -2.5e-3, 65504.0, 3.0e38)
    return {
        "lds_bytes": {a["name"]: lds_bytes(a["name"]) for a in arch_table()},
        "abi_args": {v: [list(p) for p in abi_args(v)] for v in ABI_VARIANTS},
        "abi_arg_names": {v: [p[0] for p in abi_args(v)] for v in ABI_VARIANTS},
        "cluster_sizes": list(CLUSTER_SIZES),
        "reduce_degrees": list(REDUCE_DEGREES),
        "ir_core_float_values": [repr(float(x)) for x in IR_CORE_FLOAT_VALUES],
        "ir_core_int_values": [[t.text, int(v)] for t, v in IR_CORE_INT_VALUES],
        "bf16_bits": [small_float_bits(d, 8, 7) for d in probes],
        "fp16_bits": [small_float_bits(d, 5, 10) for d in probes],
    }

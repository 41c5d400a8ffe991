"""Family ``conv_abi``: the convolution kernels' argument lists as text
(DESIGN §4), so both engines' argument order, types and attributes compare
byte for byte and sit in a golden shard like any kernel.
Twin: cpp_engine/src/families/conv_abi.{h,cpp}.

The argument lists themselves are data in :mod:`.conv_abi` (``args``,
``params``, ``text``); this module is the family wrapper: spec fields, rules
and the name. ``build`` returns the text, not an LLVM module (the engine API's
``lower`` passes a ``str`` through unprinted).

Spec fields, in order: ``direction`` (``fwd``; ``bwd_data`` and ``bwd_weight``
are known directions without kernels and are rejected with a reason),
``variant`` (``plain``, ``two_stage``, ``cluster``, ``reduce``),
``spatial_dims`` (2; 3 is a known request without kernels, rejected with a
reason), ``acc_epilogue`` (``identity``; ``bias``, ``scale``, ``relu``, ``clamp``,
``bias_relu``, ``bias_clamp`` only with variant ``reduce``: the fused Stage 2 takes its epilogue's
arguments after ``ks_count``). The capture attribute of the pointer arguments is spelled per flavor
(``nocapture`` at llvm20, ``captures(none)`` after), so the text depends on the
flavor; the cluster variant exists only where the cluster kernel does
(flavor llvm23).
"""
from __future__ import annotations

from ..kernels import acc_epilogue, conv_abi
from ..spec.fields import Field

FAMILY = "conv_abi"
FIELDS = (
    Field("direction", "str", "fwd"),
    Field("variant", "str", "plain"),
    Field("spatial_dims", "int", 2),
    Field("acc_epilogue", "str", "identity"),
)
ACC_EPILOGUES = acc_epilogue.ACC_EPILOGUES
DIRECTIONS = ("fwd", "bwd_data", "bwd_weight")
VARIANTS = conv_abi.VARIANTS  # plain, two_stage, cluster, reduce
KERNEL_ARCH = "gfx1250"


def _show(v) -> str:
    return "null" if v is None else f"'{v}'"


def validate(spec: dict, arch, flavor) -> str | None:
    """First failing rule's reason, or None. Order: direction (known, then
    implemented), variant, spatial_dims (3 has its own reason), acc_epilogue
    (known, then reduce only), arch, cluster flavor."""
    d = spec["direction"]
    if d not in DIRECTIONS:
        return f"direction must be fwd, bwd_data or bwd_weight, got {_show(d)}"
    if d != "fwd":
        return f"direction '{d}' has no kernels (only fwd is implemented)"
    v = spec["variant"]
    if v not in VARIANTS:
        return f"variant must be plain, two_stage, cluster or reduce, got {_show(v)}"
    n = spec["spatial_dims"]
    if n == 3:
        return "spatial_dims 3 (3-D convolution) has no kernels (only 2-D is implemented)"
    if n != 2:
        return f"spatial_dims must be 2 or 3, got {n}"
    acc = spec["acc_epilogue"]
    if acc not in ACC_EPILOGUES:
        return f"acc_epilogue must be {acc_epilogue.NAMES_TEXT}, got {_show(acc)}"
    if acc != "identity" and v != "reduce":
        return (f"acc_epilogue '{acc}' applies to variant reduce only (the forward kernels take "
                f"every epilogue argument)")
    if arch.name != KERNEL_ARCH:
        return f"arch {arch.name} has no conv kernels (requires gfx1250)"
    if v == "cluster" and not flavor.clusters:
        return "variant cluster requires flavor llvm23"
    return None


def kernel_name(spec: dict, arch, flavor) -> str:
    """``conv_abi_<direction>_<variant>[_<acc_epilogue>]`` (e.g.
    ``conv_abi_fwd_two_stage``, ``conv_abi_fwd_reduce_bias``; no suffix for identity)."""
    acc = spec["acc_epilogue"]
    return f"conv_abi_{spec['direction']}_{spec['variant']}" + ("" if acc == "identity" else f"_{acc}")


def build(spec: dict, arch, flavor):
    """(name, text) of a valid spec: :func:`conv_abi.text` of the variant."""
    return kernel_name(spec, arch, flavor), conv_abi.text(spec["variant"], flavor, spec["acc_epilogue"])

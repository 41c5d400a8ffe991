"""The convolution kernel argument lists, defined once as data (DESIGN §4,
family ``conv_abi``): one list per variant, printed as text so both engines'
argument order, types and attributes compare byte for byte.
Twin: cpp_engine/src/kernels/conv_abi.{h,cpp}.

Variants:
- ``plain``: the forward kernel with ``split_k == 1``.
- ``two_stage``: the forward kernel with ``split_k > 1`` (Stage 1): the plain
  list plus the split-K tail ``ws_ptr, ws_bytes, ks, ks_count``.
- ``cluster``: the forward kernel with ``split_k_cluster = S``: the same list as
  two-stage, but the workspace is read back (folded), so ``ws_ptr`` is not
  ``writeonly``.
- ``reduce``: the Stage-2 kernel (``conv_fwd_split_k_reduce.ARGS``).

Byte counts (``*_bytes``, i64) size the buffer resources; every forward-kernel
access is a raw buffer access whose offset is replaced by the byte count when
the element is outside the tensor (zero on load, dropped on store).
"""
from __future__ import annotations

from ..ir import types as T
from . import conv_fwd_split_k_reduce
from .common import in_ptr, inout_ptr, out_ptr, scalar
from .conv_problem import PROBLEM_ARGS

# (name, kind). Kinds: in_ptr, out_ptr, inout_ptr (global pointers, see common.py),
# i64, i32, f32.
HEAD = (
    ("x_ptr", "in_ptr"), ("x_bytes", "i64"),
    ("w_ptr", "in_ptr"), ("w_bytes", "i64"),
    ("d_ptr", "out_ptr"), ("d_bytes", "i64"),
    ("bias_ptr", "in_ptr"),        # fp32[K], read by acc_epilogue 'bias' only
    ("scale", "f32"),              # acc_epilogue 'scale'
    ("clamp_lo", "f32"), ("clamp_hi", "f32"),  # acc_epilogue 'clamp'
)
PROBLEM = tuple((n, "i32") for n in PROBLEM_ARGS)
SPLIT_TAIL_TWO_STAGE = (("ws_ptr", "out_ptr"), ("ws_bytes", "i64"), ("ks", "i32"), ("ks_count", "i32"))
SPLIT_TAIL_CLUSTER = (("ws_ptr", "inout_ptr"), ("ws_bytes", "i64"), ("ks", "i32"), ("ks_count", "i32"))

VARIANTS = ("plain", "two_stage", "cluster", "reduce")


def args(variant: str, acc_epilogue: str = "identity") -> tuple:
    """``(name, kind)`` of every argument of ``variant``, in order.
    ``acc_epilogue``: the reduce kernel's accumulator epilogue (its arguments
    follow ``ks_count``, :data:`conv_fwd_split_k_reduce.EPILOGUE_ARGS`); the
    forward variants take every epilogue argument whatever it is."""
    if variant == "plain":
        return HEAD + PROBLEM
    if variant == "two_stage":
        return HEAD + PROBLEM + SPLIT_TAIL_TWO_STAGE
    if variant == "cluster":
        return HEAD + PROBLEM + SPLIT_TAIL_CLUSTER
    if variant == "reduce":
        return conv_fwd_split_k_reduce.args(acc_epilogue)
    raise ValueError(f"unknown conv ABI variant {variant}")


_MAKE = {
    "in_ptr": in_ptr,
    "out_ptr": out_ptr,
    "inout_ptr": inout_ptr,
    "i64": lambda n: scalar(n, T.I64),
    "i32": lambda n: scalar(n, T.I32),
    "f32": lambda n: scalar(n, T.FLOAT),
}


def params(variant: str, acc_epilogue: str = "identity") -> list:
    """Kernel parameters of ``variant``."""
    return [_MAKE[kind](name) for name, kind in args(variant, acc_epilogue)]


def variant_of(split_k: int, split_k_cluster: int) -> str:
    """The forward variant a (valid) spec builds."""
    if split_k_cluster:
        return "cluster"
    return "two_stage" if split_k > 1 else "plain"


def text(variant: str, flavor, acc_epilogue: str = "identity") -> str:
    """The argument list as text: ``conv_abi <variant>`` then one line per
    argument ``<index> <name>: <llvm type>[ <attrs>]`` (attributes in print
    order, the capture attribute spelled as ``flavor`` spells it); LF, trailing newline.
    A non-identity ``acc_epilogue`` adds `` acc_epilogue=<e>`` to the first line."""
    lines = [f"conv_abi {variant}" + ("" if acc_epilogue == "identity" else f" acc_epilogue={acc_epilogue}")]
    for i, p in enumerate(params(variant, acc_epilogue)):
        attrs = " ".join(flavor.capture_attr if a == "capture" else a for a in p.attrs)
        lines.append(f"{i} {p.name}: {p.type.text}" + (f" {attrs}" if attrs else ""))
    return "\n".join(lines) + "\n"


def param_names(variant: str, acc_epilogue: str = "identity") -> tuple:
    """The argument names of ``variant`` (and the reduce kernel's ``acc_epilogue``), in order."""
    return tuple(n for n, _ in args(variant, acc_epilogue))


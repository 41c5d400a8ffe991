"""The accumulator epilogues, defined once (twin: cpp_engine/src/kernels/acc_epilogue.{h,cpp}).

An accumulator epilogue runs on the fp32 accumulator after the full fold and
before the cast to the output dtype, in every kernel that writes D: the plain
forward kernel, the cluster kernel's fold and the Stage-2 reduce kernel. Each
epilogue is a sequence of steps, applied in order:

- ``bias``: ``x + bias[c]`` (``bias``: fp32[K] indexed by the global output
  channel ``c = g*kpg + n``; a read past the bias buffer's bytes returns 0);
- ``scale``: ``x * scale`` (fp32 kernel argument);
- ``relu``: ``x < 0 ? 0 : x`` (an ordered compare, so NaN passes through);
- ``clamp``: ``min(max(x, clamp_lo), clamp_hi)`` as two ordered selects
  (``x < lo ? lo : x``, then ``> hi ? hi``; NaN passes through).

The fused inference forms (MIOpenDriver's ``-F 4`` conv + bias + activation)
compose two steps: ``bias_relu`` (bias, then relu) and ``bias_clamp`` (bias,
then clamp; MIOpen's clipped relu is clamp to ``[0, alpha]``).
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.values import const_float, i32, splat, zeroinit

ACC_EPILOGUES = ("identity", "bias", "scale", "relu", "clamp", "bias_relu", "bias_clamp")
NAMES_TEXT = "identity, bias, scale, relu, clamp, bias_relu or bias_clamp"
STEPS = {
    "identity": (),
    "bias": ("bias",),
    "scale": ("scale",),
    "relu": ("relu",),
    "clamp": ("clamp",),
    "bias_relu": ("bias", "relu"),
    "bias_clamp": ("bias", "clamp"),
}
# The Stage-2 reduce kernel's arguments per step (after ``ks_count``): bias is
# fp32[K] and its size in bytes; scale and the clamp bounds are fp32 values.
STEP_ARGS = {
    "bias": (("bias_ptr", "in_ptr"), ("bias_bytes", "i64")),
    "scale": (("scale", "f32"),),
    "relu": (),
    "clamp": (("clamp_lo", "f32"), ("clamp_hi", "f32")),
}


def steps(kind: str) -> tuple:
    """The steps of epilogue ``kind`` in order (KeyError for an unknown kind)."""
    return STEPS[kind]


def has(kind: str, step: str) -> bool:
    """Whether epilogue ``kind`` has ``step`` (``bias``, ``scale``, ``relu`` or
    ``clamp``); False for an unknown kind."""
    return step in STEPS.get(kind, ())


def args(kind: str) -> tuple:
    """``(name, kind)`` of the arguments epilogue ``kind`` takes as a separate
    kernel's arguments (the reduce kernel's tail), in step order."""
    return tuple(a for s in STEPS[kind] for a in STEP_ARGS[s])


def emit(b, kind: str, x, width: int, bias, param):
    """Emit the steps of ``kind`` on fp32 ``x`` (scalar, or <width x float>
    when ``width > 1``) and return the result (``x`` itself for identity).

    ``bias()`` emits and returns the fp32 bias of ``x``'s elements (the caller
    knows the channel indexing); ``param(name)`` returns the fp32 scalar kernel
    argument ``name`` (broadcast here). Errors: KeyError for an unknown kind."""
    vt = T.FLOAT if width == 1 else T.vec(width, T.FLOAT)

    def c(v):
        e = const_float(T.FLOAT, v)
        return e if width == 1 else splat(vt, e)

    def bc(name):  # broadcast an fp32 scalar argument
        v = param(name)
        if width == 1:
            return v
        ins = b.insertelement(zeroinit(vt), v, i32(0), "bc")
        return b.shufflevector(ins, ins, [0] * width, "bcast")
    for step in STEPS[kind]:
        if step == "bias":
            x = b.fadd(x, bias(), "biased")
        elif step == "scale":
            x = b.fmul(x, bc("scale"), "scaled")
        elif step == "relu":
            neg = b.fcmp("olt", x, c(0.0), "neg")
            x = b.select(neg, c(0.0), x, "relu")
        else:
            lo, hi = bc("clamp_lo"), bc("clamp_hi")
            below = b.fcmp("olt", x, lo, "below")
            x1 = b.select(below, lo, x, "clamp_l")
            above = b.fcmp("ogt", x1, hi, "above")
            x = b.select(above, hi, x1, "clamp_h")
    return x

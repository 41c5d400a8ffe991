"""Width folding (docs/policy.md). Twin: cpp_engine/src/policy/fold.{h,cpp}.

Fold ``f`` adjacent W positions into the channels when ``f`` divides the
filter width ``X``, the W stride, the input width ``W`` and the W padding
(and, for the channel index to stay the same, ``groups == 1`` and
``dil_w == 1``). With NHWC input and KYXC weights the folded problem
``C' = f*C, W' = W/f, X' = X/f, stride_w' = stride_w/f, pad_w' = pad_w/f``
reads the same bytes at the same offsets (``(w'*f + j)*C + c = w'*(f*C) + j*C + c``),
so its forward convolution computes the original output from the same
tensors with no copy: ``Wo`` is unchanged, a padded position is padded in
both. ``f`` is the largest such factor (the gcd). A 16x16 stride-16 patch
embedding with C = 3 becomes X' = 1 over 48 contiguous channels.

FLOP counts and references stay the original problem's; folding is applied
when selecting binaries and launching.
"""
from __future__ import annotations

from dataclasses import replace
from math import gcd

from ..kernels.conv_problem import ConvProblem


def fold_factor(p: ConvProblem) -> int:
    """The largest ``f`` that may be folded (1: none)."""
    if p.groups != 1 or p.dil_w != 1:
        return 1
    return gcd(gcd(p.X, p.stride_w), gcd(p.W, p.pad_w))


def fold_width(p: ConvProblem) -> tuple:
    """``(f, folded problem)``; ``(1, p)`` when nothing folds."""
    f = fold_factor(p)
    if f <= 1:
        return 1, p
    return f, replace(p, C=p.C * f, W=p.W // f, X=p.X // f, stride_w=p.stride_w // f, pad_w=p.pad_w // f)

"""The forward 2-D convolution problem (DESIGN §4): extents, derived sizes and
the problem block of kernel argument values.
Twin: cpp_engine/src/kernels/conv_problem.{h,cpp}.

Layouts: input NHWC, weights KYXC (per group ``[kpg][Y][X][cpg]``), output
NHWK, ``G`` groups packed in the channel dimension (``C = G*cpg``,
``K = G*kpg``). Per group the implicit GEMM is ``M = N*Ho*Wo`` output pixels
by ``kpg`` output channels over ``Kgemm = Y*X*cpg`` (c fastest, then x, then y).

The kernels are generic in every extent: they read the problem block below as
kernel arguments, so one binary serves every problem its launch admits.
"""
from __future__ import annotations

from dataclasses import dataclass

# The problem block of the forward kernel ABI, in argument order: the
# given extents first, then the derived ones (the kernel never divides to
# derive them). Every entry is an i32 kernel argument.
PROBLEM_ARGS = (
    "N", "C", "H", "W", "K", "Y", "X",
    "stride_h", "stride_w", "pad_h", "pad_w", "dil_h", "dil_w", "groups",
    "Ho", "Wo", "M", "kpg", "cpg", "Kgemm",
)


@dataclass(frozen=True)
class ConvProblem:
    """A forward 2-D convolution. ``groups`` divides both ``C`` and ``K``."""

    N: int
    C: int
    H: int
    W: int
    K: int
    Y: int
    X: int
    stride_h: int = 1
    stride_w: int = 1
    pad_h: int = 0
    pad_w: int = 0
    dil_h: int = 1
    dil_w: int = 1
    groups: int = 1

    @property
    def Ho(self) -> int:
        return (self.H + 2 * self.pad_h - self.dil_h * (self.Y - 1) - 1) // self.stride_h + 1

    @property
    def Wo(self) -> int:
        return (self.W + 2 * self.pad_w - self.dil_w * (self.X - 1) - 1) // self.stride_w + 1

    @property
    def M(self) -> int:
        return self.N * self.Ho * self.Wo

    @property
    def kpg(self) -> int:
        return self.K // self.groups

    @property
    def cpg(self) -> int:
        return self.C // self.groups

    @property
    def Kgemm(self) -> int:
        return self.Y * self.X * self.cpg

    def problem_args(self) -> dict:
        """The problem block: argument name -> value, in :data:`PROBLEM_ARGS` order."""
        return {n: getattr(self, n) for n in PROBLEM_ARGS}

    def x_elems(self) -> int:
        return self.N * self.H * self.W * self.C

    def w_elems(self) -> int:
        return self.K * self.Y * self.X * self.cpg

    def d_elems(self) -> int:
        return self.M * self.K

"""The records of a numerics plan (parity/sim/plans/): a case's buffers,
kernels, launches and check."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Buf:
    """A kernel argument that names a case buffer."""

    name: str


@dataclass
class Launch:
    kernel: str          # key into Case.kernels
    grid: tuple
    block: int
    args: dict           # param -> Buf | int | float
    cluster: tuple = None       # None: the kernel's amdgpu-cluster-dims
    kernel_name: str = None     # when given, the lowered kernel must have this name
    lds_bytes: int = None       # when given, the kernel's LDS allocations must total this
    #: the product's launch route (parity/sim/launch_route.py): the conv ABI variant and
    #: the plan's argument texts; the kernarg segment is packed by the runtime from
    #: these and the emulator reads ``args`` back from its bytes (None: ``args`` by name)
    variant: str = None
    plan_args: dict = None
    scalars: dict = None        # ``caller`` values
    plan_cluster: tuple = None  # the plan's cluster line (None: a plain launch)
    acc_epilogue: str = "identity"  # a ``reduce`` variant's epilogue (a fused Stage 2 takes more arguments)


@dataclass
class Case:
    name: str
    kernels: dict        # key -> (family, spec, arch)
    buffers: dict        # name -> np.ndarray
    launches: list
    check: object        # callable(buffers) -> list[str] of problems
    expect_error: object = None  # a SimError subclass the emulator must raise instead (and where)
    expect_where: str = ""
    classes: frozenset = frozenset()  # tile classes the case hits (parity/sim/cover.py)
    orders: tuple = ("forward", "reverse")  # wave orders (boundary problems: one; races show in either)


@dataclass
class Skipped:
    """A problem the conv_launch plan does not admit for this config (with its reason)."""

    name: str
    reason: str


#: (M, K): 1 element; M*K not a multiple of 2/4/8; a multiple of every vector but of
#: no threads*vector; several workgroups with a partial last wave.
REDUCE_PROBLEMS = ((1, 1), (7, 9), (16, 20), (33, 70))
REDUCE_KS_DEGREE0 = (1, 2, 5)
#: values whose conversion is an edge: ties (bf16 and fp16), overflow to inf,
#: subnormals, signed zero, inf, NaN
REDUCE_SPECIALS = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520.0, 65519.0,
                            -65520.0, 3.3961776e38, 1e-40, -1e-40, 2 ** -25, 3 * 2 ** -26, -0.0, np.inf,
                            -np.inf, np.nan], dtype=np.float32)
#: elements a reduce wave takes (parity/sim/plans/conv_fwd_split_k_reduce.py: wave32 lanes
#: of ``vector`` elements each); the elements past the last full wave run the scalar tail
REDUCE_WAVE = 32


def place_specials(ws: np.ndarray, vector: int, reserve: int, order_probe: bool = False) -> None:
    """Write :data:`REDUCE_SPECIALS` into slab 0 of a ``[ks][M*K]`` fp32 workspace (in
    place; the other slabs 0 there, but -0.0 under the -0.0 special, so that element
    sums to -0.0 at every ks): at the first elements (the vector path when M*K holds a
    full wave of ``vector``-element lanes) and, reversed so that NaN and the infinities
    come first, at the first elements of the scalar tail (the elements past the last
    full wave), leaving the last ``reserve`` elements (an order or cancellation probe's)
    alone. Without the tail copy, a fast-math flag ``nnan`` or ``ninf`` on the tail's
    slab sum met no NaN or infinity (CI's mutate-new survivor on
    fused_scale_bf16_v1_t64_d4); without the -0.0 column, relu's ``s < 0`` made ``s <= 0``
    met no -0.0 sum. ``order_probe`` (ks >= 3): the 8 elements after each copy (as far
    as ``reserve`` allows) hold +2^20 in slab 0, -2^20 in slab 1 and the others' values scaled
    into (-0.1, 0.1), so only the
    documented fold order (from slab 0) gives the reference bits
    (:func:`parity.sim.cover.reduce_order_probe`)."""
    mk = ws.shape[1]
    ns = min(mk, REDUCE_SPECIALS.size)
    tail0 = mk // (REDUCE_WAVE * vector) * (REDUCE_WAVE * vector)
    n = min(REDUCE_SPECIALS.size, mk - reserve - tail0) if tail0 > 0 else 0
    for at, vals in ((0, REDUCE_SPECIALS[:ns]), (tail0, REDUCE_SPECIALS[::-1][:max(n, 0)])):
        if vals.size == 0:
            continue
        span = slice(at, at + vals.size)
        ws[0, span] = vals
        ws[1:, span] = np.where(np.signbit(vals) & (vals == 0), np.float32(-0.0), np.float32(0.0))
        if order_probe and ws.shape[0] >= 3:
            probe = slice(at + vals.size, min(at + vals.size + 8, mk - reserve))
            ws[0, probe] = 2.0 ** 20
            ws[1, probe] = -2.0 ** 20
            ws[2:, probe] = np.fmod(ws[2:, probe], 1.0) * np.float32(0.1)


@dataclass
class ReduceProblem:
    """One reduce problem's data (:func:`parity.sim.plans.conv_fwd_split_k_reduce.reduce_cases`): the fp32
    slabs ``ws`` [ks][M*K], the wanted D bits ``want`` [M*K], the epilogue's buffers
    (``bias``) and its plan argument texts (``buffer bias``, byte counts, ``caller``),
    and the case name's suffix; ``caller``: the values of the ``caller`` scalars (None:
    :data:`parity.sim.numerics_fused.CALLER`)."""
    ws: np.ndarray
    want: np.ndarray
    bufs: dict
    plan_args: dict
    suffix: str = ""
    caller: dict | None = None


def and_then(first, second):
    """A check that runs ``first`` then ``second`` on the same buffers (problems of both)."""
    return lambda b: first(b) + second(b)

"""CPU emulator of the emitted gfx1250 LLVM IR (docs/sim.md).

    from parity.sim import Kernel
    k = Kernel(text)                       # parse + decode once
    k.launch((gx, gy, gz), 256, {"in": a, "out": b, "n": 7})

Runs every launch in forward and reverse wave order and raises
:class:`SimError` subclasses for races, out-of-bounds accesses, divergent
branches, uninitialised LDS reads, poison and unsupported IR.
"""
from .errors import (BarrierMismatch, DivergentBranch, LaneConflict, Misaligned, OutOfBounds,  # noqa: F401
                     Poison, RaceError, SimError, UninitializedRead, Unsupported)
from .ir import ParseError  # noqa: F401
from .kernel import Kernel  # noqa: F401

"""The emulator's errors: :class:`SimError` and one subclass per kind of fault.

Every error names the instruction that raised it (``SimError.at``: its text,
block and line, plus the wave when it ran). Subclasses are what callers and
tests match on; the message texts are part of the oracle's output.
"""
from __future__ import annotations


class SimError(Exception):
    """An emulated kernel did something wrong (or something the emulator cannot run)."""

    def __init__(self, msg: str, where: str | None = None):
        self.msg = msg
        self.where = where
        super().__init__(msg if where is None else f"{msg}\n  at {where}")

    def at(self, where: str) -> "SimError":
        if self.where is None:
            self.where = where
            self.args = (f"{self.msg}\n  at {where}",)
        return self


class Unsupported(SimError):
    """Outside the subset the emulator implements (a failure, never a skip)."""


class OutOfBounds(SimError):
    pass


class Misaligned(SimError):
    pass


class UninitializedRead(SimError):
    pass


class DivergentBranch(SimError):
    pass


class Poison(SimError):
    """A result LLVM defines as poison (nuw/nsw overflow, shift >= width, division by zero, ...)."""


class RaceError(SimError):
    pass


class BarrierMismatch(SimError):
    pass


class LaneConflict(SimError):
    """Lanes of one store wrote different bytes to the same address."""


class VisibilityError(SimError):
    """A read of bytes another wave/workgroup wrote in an earlier barrier phase
    without the release fence / barrier / acquire fence chain that makes the
    write visible (the memory-visibility model, docs/sim.md)."""

"""The emulator's runtime values and checked memory access.

A register holds a numpy array over the :data:`WAVE` lanes, a :class:`Ptr`
(a :class:`Memory` plus per-lane byte offsets) or a :class:`Rsrc` (a raw
buffer resource, wave-uniform). An instruction closure returns ``None``, the
next block, or one of the control tokens (:data:`CONTROL_BARRIER`,
:data:`CONTROL_CLUSTER`, :data:`CONTROL_RET`) at which the launch
(parity/sim/launch.py) takes over. The helpers here check an access
(:func:`check_access`, :func:`buffer_range`) and write bytes through the race
shadow and the LDS init map (:func:`write`).
"""
from __future__ import annotations

import numpy as np

from .errors import LaneConflict, Misaligned, OutOfBounds
from .shadow import Shadow

WAVE = 32
LIM32 = np.int64(1) << np.int64(32)   # a raw buffer offset at or past 2^32 is out of range
LANES = np.arange(WAVE)
LANES64 = LANES.astype(np.int64)


class Memory:
    """A global buffer (kernel argument) or an LDS allocation, as bytes."""

    __slots__ = ("name", "space", "data", "init", "shadow")

    def __init__(self, name: str, space: str, data: np.ndarray, track_init: bool, shadow: bool,
                 clustered: bool = False):
        """``data``: the bytes (uint8, 1-D); ``track_init``: record which bytes were
        written (LDS); ``shadow``: keep a race shadow; ``clustered``: waves of
        several workgroups of one cluster reach it (:class:`Shadow`)."""
        self.name = name
        self.space = space
        self.data = data
        self.init = np.zeros(data.size, np.bool_) if track_init else None
        self.shadow = Shadow(data.size, clustered) if shadow else None

    def label(self) -> str:
        return f"{'LDS' if self.space == 'lds' else 'global'} {self.name!r} ({self.data.size} bytes)"


class Ptr:
    __slots__ = ("mem", "off")

    def __init__(self, mem: Memory, off: np.ndarray):
        self.mem = mem
        self.off = off


class Rsrc:
    """A raw buffer resource (wave-uniform): memory, base byte offset, num_records."""

    __slots__ = ("mem", "base", "nrec")

    def __init__(self, mem: Memory, base: int, nrec: int):
        self.mem = mem
        self.base = base
        self.nrec = nrec


CONTROL_BARRIER = "barrier"
CONTROL_CLUSTER = "cluster barrier"
CONTROL_RET = "ret"


def first_lane(mask) -> int:
    """The first lane where ``mask`` (per lane, or per lane and element) holds."""
    m = np.asarray(mask)
    if m.ndim > 1:
        m = m.any(axis=tuple(range(1, m.ndim)))
    return int(np.argmax(m))


def bytes_of(v: np.ndarray) -> np.ndarray:
    v = np.ascontiguousarray(v)
    return v.reshape(WAVE, -1).view(np.uint8)


def lane_span(off: np.ndarray, step: np.ndarray, nb: int, align: int, size: int):
    """``slice(o, o + 32 * nb)`` when lane ``l`` accesses bytes ``o + l * nb`` ..
    ``+ nb`` (``step`` = ``LANES64 * nb``), the whole range lies inside ``size``
    bytes and every lane is aligned to ``align``: the access's bytes in lane
    order, one contiguous range that needs no per-byte index. Else ``None``
    (the caller checks the access byte by byte and reports what is wrong)."""
    o = int(off[0])
    if o < 0 or o + WAVE * nb > size or (align > 1 and (o % align or nb % align)):
        return None
    if np.count_nonzero(off != step + o):
        return None
    return slice(o, o + WAVE * nb)


def check_access(mem: Memory, off: np.ndarray, nb: int, align: int, what: str, X):
    """Every lane's ``nb``-byte access at byte offset ``off`` (per lane, int64)
    lies inside ``mem`` and is aligned to ``align`` (a power of two, LLVM's
    ``align``), else OutOfBounds / Misaligned naming the first bad lane. The
    common, good case costs two reductions: the largest offset read as
    unsigned (a negative one is huge) and the OR of all offsets (any low bit
    set in one lane is set in the OR)."""
    hi = int(off.astype(np.int64, copy=False).view(np.uint64).max())  # a negative offset reads as huge
    if hi <= mem.data.size - nb and (align <= 1 or not int(np.bitwise_or.reduce(off)) & (align - 1)):
        return
    bad = (off < 0) | (off > mem.data.size - nb)
    if np.count_nonzero(bad):
        k = int(np.argmax(bad))
        raise OutOfBounds(f"out-of-bounds {what} of {nb} bytes at byte offset {int(off[k])} of "
                          f"{mem.label()} (lane {k} of {X.launch.agent_name(X.agent)})")
    if align > 1 and np.count_nonzero(off % align):
        k = int(np.argmax(off % align != 0))
        raise Misaligned(f"{what} at byte offset {int(off[k])} of {mem.label()} is not aligned to "
                         f"the declared align {align} (lane {k})")


def buffer_range(off: np.ndarray, esz: int, ne: int, nrec: int, what: str) -> np.ndarray:
    """Per lane: the whole access is inside ``num_records``. The raw-buffer range
    check is per element; an access with some elements in range and some out
    is reported (its hardware result depends on the generation's range-check
    granularity, and our kernels' admission rules exclude it)."""
    # element e is inside when off >= 0, off < 2^32 and off + (e + 1) * esz <= nrec:
    # monotone in e, so "some inside" is element 0 inside, "all inside" the last
    ok0 = (off >= 0) & (off < LIM32)
    allin = ok0 & (off <= nrec - ne * esz)
    if ne > 1:
        part = ok0 & (off <= nrec - esz) & ~allin
        if np.count_nonzero(part):
            k = int(np.argmax(part))
            raise OutOfBounds(f"{what} at offset {int(off[k])} straddles num_records={nrec} (lane {k}): "
                              f"part of the vector is in range and part is not")
    return allin


def write(mem: Memory, idx, vb: np.ndarray, X, what: str):
    """Write ``vb`` ((32, nb) uint8, lane-major) to byte offsets ``idx`` of ``mem``
    ((32, nb) int64, or a :func:`lane_span` slice) through the race shadow; lanes
    writing different bytes to one address raise LaneConflict."""
    if isinstance(idx, slice):
        vb = vb.reshape(-1)
        if mem.shadow is not None:
            mem.shadow.write(idx, mem.data[idx] != vb, X, mem, what)
        mem.data[idx] = vb
        if mem.init is not None:
            mem.init[idx] = True
        return
    old = mem.data[idx]
    changed = old != vb
    if mem.shadow is not None:
        mem.shadow.write(idx, changed, X, mem, what)
    mem.data[idx] = vb
    back = mem.data[idx]  # lanes that overlap with different bytes: the later lane won
    if np.count_nonzero(back != vb):
        k = first_lane(back != vb)
        raise LaneConflict(f"lanes of one {what} write different bytes to {mem.label()} byte offset "
                           f"{int(idx[k][np.argmax(back[k] != vb[k])])} (lane {k} and another lane)")
    if mem.init is not None:
        mem.init[idx] = True


"""Hardware fact BUFFER-OOB-SOFFSET (docs/hardware_facts.md): whether a raw buffer
access's range check counts soffset. parity/sim/ops_memory.py ``range_offsets`` under
both readings, on hand-made lane values (32 lanes, offsets in bytes)."""
from __future__ import annotations

import numpy as np
import pytest

from parity.sim import hw_facts
from parity.sim.errors import OutOfBounds
from parity.sim.ops_memory import range_offsets

NREC = 4096   # num_records, bytes
NB = 16       # a 16-byte access


def _regs(vo, so):
    return {0: np.asarray(vo, dtype=np.uint32), 1: np.full(32, so, dtype=np.uint32)}


@pytest.fixture
def excluded():
    hw_facts.assume({})   # the default reading
    assert hw_facts.value("BUFFER-OOB-SOFFSET") == "excluded"
    yield


def test_counted_checks_voffset_plus_soffset():
    hw_facts.assume({"BUFFER-OOB-SOFFSET": "counted"})
    vo = np.arange(32) * 16
    off, chk = range_offsets(_regs(vo, 4000), 0, 1, NREC, NB, "buffer load")
    assert np.array_equal(off, vo + 4000) and np.array_equal(chk, off)   # lanes past 4080 read 0
    hw_facts.assume({})


def test_excluded_checks_voffset_alone(excluded):
    vo = np.arange(32) * 16
    off, chk = range_offsets(_regs(vo, 64), 0, 1, NREC, NB, "buffer load")
    assert np.array_equal(off, vo + 64) and np.array_equal(chk, vo)
    # an out-of-range voffset stays out of range with any soffset: no error, the lane reads 0
    off, chk = range_offsets(_regs(np.full(32, NREC), 512), 0, 1, NREC, NB, "buffer load")
    assert np.all(chk == NREC) and np.all(off == NREC + 512)


def test_excluded_refuses_an_in_range_voffset_carried_past_num_records(excluded):
    """The tap loops' look-ahead B loads before cap_kb: a filter row's start (in range)
    plus a K offset past the buffer's end."""
    vo = np.full(32, NREC - 1024)
    with pytest.raises(OutOfBounds, match=r"voffset 3072 \+ soffset 1024 \(lane 0\): the range check passes on "
                                          r"voffset but the access reaches past num_records=4096"):
        range_offsets(_regs(vo, 1024), 0, 1, NREC, NB, "buffer load <4 x float>")
    hw_facts.assume({"BUFFER-OOB-SOFFSET": "counted"})
    off, chk = range_offsets(_regs(vo, 1024), 0, 1, NREC, NB, "buffer load")
    assert np.all(chk == NREC)   # counted: the same access is out of range and reads 0
    hw_facts.assume({})

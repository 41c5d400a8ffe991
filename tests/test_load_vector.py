"""The load-width rule through both engines' API (``load_vector``; C
``cpe_conv_load_vector``): the same width for every channel count, the same
refusal for what is not a channel count (docs/engine_api.md)."""
from __future__ import annotations

import pytest

import cpp_engine
import python_engine
from python_engine.api import CPG_REASON


def test_both_engines_pick_the_same_width():
    got = [(python_engine.load_vector(c), cpp_engine.load_vector(c)) for c in range(1, 1025)]
    assert all(a == b for a, b in got)
    assert [a for a, _ in got[:16]] == [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 1, 4, 1, 2, 1, 8]
    big = (1 << 63) - 1
    assert python_engine.load_vector(big) == cpp_engine.load_vector(big) == 1
    assert python_engine.load_vector(1 << 62) == cpp_engine.load_vector(1 << 62) == 8


class LyingInt(int):
    def __int__(self):
        return 3

    def __index__(self):
        return 3


@pytest.mark.parametrize("bad", [0, -1, 1 << 63, True, False, 8.0, "8", None])
def test_not_a_channel_count_is_refused_alike(engine, bad):
    with pytest.raises(engine.SpecRejected) as e:
        engine.load_vector(bad)
    assert e.value.reason == CPG_REASON == cpp_engine._binding.CPG_REASON


def test_an_int_subclass_is_read_as_its_value(engine):
    assert engine.load_vector(LyingInt(16)) == 8

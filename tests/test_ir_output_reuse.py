"""The C++ engine's output path reuses per-thread and per-process state
(docs/cpp_engine.md, "The output path"): block text storage recycled per
thread (a block may start in storage a larger kernel left behind), intrinsic
declaration lines made once per process and per flavor, used intrinsics kept
by table row, parameter values found by hash, small integer constants made
once. Whatever a thread lowered before, and with threads interleaving, every
lowering prints the Python engine's bytes."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

import cpp_engine
import python_engine
from parity.config import load_families

#: IR families the output path prints (the text families build their own text), from the registry.
IR_FAMILIES = tuple(f.name for f in load_families() if f.output == "llvm_ir")


def _units():
    """Per IR family and flavor, the gate units with the largest and the smallest
    Python text: big kernels leave large storage behind, small ones reuse it."""
    units = []
    for fam in load_families():
        if fam.name not in IR_FAMILIES:
            continue
        by_flavor = {}
        for cfg in fam.configs:
            for fl in cfg.flavors:
                if cfg.expectation(fl).kind == "ok":
                    by_flavor.setdefault(fl, []).append((fam.name, dict(cfg.spec), cfg.arch, fl))
        for fl in sorted(by_flavor):
            sized = sorted(by_flavor[fl], key=lambda u: len(python_engine.lower(*u).text))
            units += [sized[-1], sized[0]]
    return units


@pytest.fixture(scope="module")
def units_and_texts():
    units = _units()
    return units, [python_engine.lower(*u).text for u in units]


def test_units_cover_every_ir_family_and_flavor(units_and_texts):
    units, texts = units_and_texts
    assert {(u[0], u[3]) for u in units} == {(f, fl) for f in IR_FAMILIES for fl in ("llvm20", "llvm22", "llvm23")}
    assert all(t.startswith("target datalayout") for t in texts)
    # The largest conv kernel is much longer than the smallest one (storage is reused across sizes).
    conv = [len(t) for u, t in zip(units, texts) if u[0] == "conv_implicit_gemm"]
    assert max(conv) > 4 * min(conv)


def test_serial_lowering_in_any_order_gives_the_python_bytes(units_and_texts):
    units, texts = units_and_texts
    order = list(range(len(units))) + list(reversed(range(len(units)))) + [0, len(units) - 1, 0]
    for i in order:
        assert cpp_engine.lower(*units[i]).text == texts[i], units[i]


def test_threads_interleaving_give_the_python_bytes(units_and_texts):
    units, texts = units_and_texts
    n = len(units)

    def rotation(k):  # every unit twice, starting at unit k
        return [(i, cpp_engine.lower(*units[i]).text) for i in ((k + j) % n for j in range(2 * n))]

    with ThreadPoolExecutor(max_workers=4) as pool:  # an engine error re-raises here
        results = list(pool.map(rotation, range(4)))
    assert [len(r) for r in results] == [2 * n] * 4
    for got in results:
        for i, text in got:
            assert text == texts[i], units[i]

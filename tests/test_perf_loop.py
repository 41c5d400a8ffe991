"""parity/perf/loop.py on real kernels: each is lowered by the Python engine and
compiled for gfx1250 the way ``parity perf`` compiles (parity/perf/compile_job.py);
the main loop's WMMA count per iteration must be the count derived from the spec,
fm * fn * (tile_k / 32) with fm = tile_m / (16 waves_m), fn = tile_n / (16 waves_n)."""
from __future__ import annotations

import re

import pytest

import python_engine as E
from python_engine.kernels import conv_implicit_gemm as CIG
from parity.perf.build import with_defaults
from parity.perf.compile_job import compile_asm
from parity.perf.loop import LoopError, find_loops, kernel_blocks, main_loop
from parity.perf.measure import measure, wmma_per_k_tile
from parity.perf.mix import mix

CASES = [
    ("conv_implicit_gemm", {}),                                                        # 64x64x32 w2x2
    ("conv_implicit_gemm", {"tile_k": 64, "split_k": 4, "split_k_cluster": 0}),                               # 64x64x64 two-stage
    ("conv_implicit_gemm", {"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1, "split_k": 2, "split_k_cluster": 0}),
    ("conv_implicit_gemm", {"tile_m": 32, "tile_n": 32, "waves_m": 1, "waves_n": 1}),  # 4 fragments, one wave
]

_cache: dict = {}


def compiled(family, spec):
    key = (family, tuple(sorted(spec.items())))
    if key not in _cache:
        r = E.lower(family, spec, "gfx1250", "llvm23")
        res = compile_asm(r.text, r.kernel, "gfx1250")
        assert res["ok"], res
        _cache[key] = (r.kernel, res["asm"], res["report"])
    return _cache[key]


def expected_wmma(spec):
    s = with_defaults("conv_implicit_gemm", spec)
    fm = s["tile_m"] // (16 * s["waves_m"])
    fn = s["tile_n"] // (16 * s["waves_n"])
    return fm * fn * (s["tile_k"] // 32)


def tiles_per_iteration(spec) -> int:
    """2 for the kernels with the uniform-tap loop, their main loop (two K tiles an
    iteration; its LDS-only fences carry !mmra), else 1."""
    text = E.lower("conv_implicit_gemm", with_defaults("conv_implicit_gemm", spec), "gfx1250", "llvm23").text
    return 2 if ", !mmra !" in text else 1


@pytest.mark.parametrize("family,spec", CASES, ids=lambda v: str(v))
def test_main_loop_wmma_count_is_the_specs(family, spec):
    kernel, asm, _ = compiled(family, spec)
    ml = main_loop(asm, kernel)
    m = mix(ml.body)
    assert m.wmma == expected_wmma(spec) * tiles_per_iteration(spec)
    assert wmma_per_k_tile(with_defaults(family, spec)) == expected_wmma(spec)
    # every WMMA of the kernel is in the main loop, or (kernels with the uniform-tap loop,
    # which is then the main loop) in the K walk beside it: as many beside the two-deep
    # walk, one K tile's beside the one-tile walk (64x64x64, tap_beside); and as many as
    # the main loop's in the tap-tile loop where the kernel has one (64x64x32, 64x64x64)
    full = with_defaults(family, spec)
    tap = family == CIG.FAMILY and CIG.tap_loop_kernel(full)
    walk = (m.wmma if CIG.two_deep(full) else m.wmma // 2) if tap else 0
    tile = m.wmma if tap and CIG.tap_tile_kernel(full) else 0
    assert sum(1 for line in ml.before + ml.body + ml.after if line.startswith("v_wmma")) == m.wmma + walk + tile
    head = next(b for b in kernel_blocks(asm, kernel) if b.label == ml.loop.header)
    assert any(c.startswith("%tap_loop") for c in head.comments) == tap, head.comments
    assert ml.loop.source == "llvm-loop-info" and ml.problems == []
    # the backedge: the loop's last branch goes back to its header
    branches = [s for s in ml.body if re.match(r"s_c?branch", s)]
    assert branches and branches[-1].split()[-1] == ml.loop.header


@pytest.mark.parametrize("case", [0, 3])
def test_backedge_method_finds_the_same_loop_without_llvm_comments(case):
    """The CFG's natural loops equal LLVM's loop information; the main loop's body
    too, except that terse assembly has no IR block names, so a two-deep kernel's
    uniform-tap loop (PREFERRED_LOOPS) is not told from the K walk beside it (both
    8 WMMAs): the longer, the K walk, is taken. Beside a one-tile walk (32x32x32 w1x1)
    the tap loop has the most WMMAs either way."""
    kernel, asm, _ = compiled(*CASES[case])
    terse = "\n".join(line.split(";", 1)[0].rstrip() for line in asm.splitlines())
    with_info = main_loop(asm, kernel)
    without = main_loop(terse, kernel)
    assert without.loop.source == "backedge"
    assert len(find_loops(kernel_blocks(terse, kernel))) == with_info.loops
    if not CIG.two_deep(with_defaults(*CASES[case])):
        assert without.body == with_info.body
    else:
        assert len(without.body) > len(with_info.body)
        assert mix(without.body).wmma == mix(with_info.body).wmma


def test_measure_of_the_64x64x32_kernel():
    kernel, asm, isa = compiled(*CASES[0])
    m = measure(asm, kernel, isa, with_defaults("conv_implicit_gemm", {}), mca_tool=None)
    # the two-deep pipelined loop: two K tiles per iteration
    assert m.mix.wmma == 8 and m.k_tiles_per_iteration == 2
    assert m.non_wmma_per_wmma == (m.mix.total - 8) / 8
    # per K tile a 64x64x32 tile loads (64 + 64) * 32 bf16 = 8 KiB from global memory into LDS,
    # in 16-byte vectors over 4 waves: 2 KiB per wave, 512 bytes per WMMA (4 WMMA)
    assert m.mix.to_json()["global_bytes_per_wmma"] == 512
    assert m.mix.global_load_bytes == 2 * 4 * 16
    # tile t+2's loads are first read by the next half's LDS stores, across its barrier
    assert m.prefetch == {"barriers": 1, "wmmas": 4, "lds_loads": 8, "loads": 8} and m.prefetch_tiles == 1.0
    assert m.vgprs and m.sgprs and m.lds_bytes and m.occupancy and m.scratch_bytes == 0
    assert m.epilogue_stores and sum(m.epilogue_stores.values()) > 0
    # beside it the tap-tile loop (docs/conv_implicit_gemm.md, "Tap-tile loop"): two K tiles
    # an iteration, the same WMMAs and loads, each tile its own A voffsets
    f = m.fallback
    assert f["loop"] == "tap-tile loop" and f["wmma"] == 8 and f["k_tiles"] == 2 and f["prefetch_tiles"] == 1.0
    assert f["non_wmma_per_wmma"] == (f["insns"] - 8) / 8 > m.non_wmma_per_wmma
    assert f["no_barrier_per_k_tile"] is None   # mca_tool None
    tap = main_loop(asm, kernel, named="%taptile_loop")
    assert mix(tap.body).wmma == 8 and tap.loop.header != main_loop(asm, kernel).loop.header
    with pytest.raises(LoopError, match="no loop named %nothing"):
        main_loop(asm, kernel, named="%nothing")


def test_fallback_of_a_tap_loop_tile_without_the_tap_tile_loop_is_the_k_walk():
    """The 32x32x32 w1x1 kernel carries the uniform-tap loop but not the tap-tile loop: its
    fallback figures are the K walk's loop (``%kloop``), one K tile an iteration."""
    spec = CASES[3][1]
    kernel, asm, isa = compiled(*CASES[3])
    m = measure(asm, kernel, isa, with_defaults("conv_implicit_gemm", spec), mca_tool=None)
    assert m.fallback["loop"] == "K walk" and m.fallback["k_tiles"] == 1.0 and m.fallback["wmma"] == 4


def test_kernel_without_a_loop_and_unknown_kernel():
    asm = "k:\n\tv_mov_b32 v0, 0\n\ts_endpgm\n.Lfunc_end0:\n"
    with pytest.raises(LoopError, match="has no loop"):
        main_loop(asm, "k")
    with pytest.raises(LoopError, match="not in the assembly"):
        main_loop(asm, "other")


def test_reduce_kernels_slab_loop_and_loop_free_degree():
    spec0 = {"dtype": "bf16", "vector": 8, "threads": 256, "degree": 0}
    spec8 = dict(spec0, degree=8)
    k0, asm0, isa0 = compiled("conv_fwd_split_k_reduce", spec0)
    k8, asm8, isa8 = compiled("conv_fwd_split_k_reduce", spec8)
    m0 = measure(asm0, k0, isa0, spec0, mca_tool=None)
    m8 = measure(asm8, k8, isa8, spec8, mca_tool=None)
    # degree 0: the run-time slab loop loads one 8-element fp32 slice per lane per trip (2 x 16 bytes)
    assert m0.loop_source == "llvm-loop-info" and m0.mix.wmma == 0
    assert m0.mix.global_load_bytes == 32 and m0.mix.global_store_bytes == 0
    # degree 8, unrolled: the whole kernel is measured (its one loop is the element-wise tail); statically
    # the vector path loads 8 slices of 8 fp32 (8 x 32 bytes per lane) and stores 8 bf16 (one 16-byte
    # store), the tail loads 8 slices of one fp32 (8 x 4 bytes) and stores one bf16 (2 bytes)
    assert m8.loop_source == "whole-kernel" and m8.loops == 1
    assert m8.mix.global_load_bytes == 8 * 32 + 8 * 4 and m8.epilogue_stores == {2: 1, 16: 1}

"""The K walk's carry problems and the tap-loop entry test problems of
parity/sim/cover.py (``cover_kwalk_drift``, ``cover_kwalk_c<j>``, ``cover_kwalk_x<j>``,
``cover_taps_cr<r>``, ``cover_taps_odd``, ``cover_taps_empty``): their geometry, and the
`parity mutate --per-kind 0` survivors of plain 32x32x32 w1x1, spk2 64x64 and skc4
32x32x32 w1x1 they were drawn against, each now caught (docs/sim.md)."""
from __future__ import annotations

import re

import pytest

import python_engine.api as api
from parity.configs.conv_implicit_gemm import CONFIGS
from parity.sim import cover
from parity.sim import numerics as N
from parity.sim.errors import SimError
from parity.sim.plans import conv_implicit_gemm as CONV_PLAN

ARCH = "gfx1250"
W1X1 = dict(next(c for c in CONFIGS if c.name == "plain_mem_default_32x32x32_w1x1_bf16").spec)


def _names(spec: dict) -> dict:
    return {p[0]: p for p in cover.conv_cover_problems(N._with_defaults("conv_implicit_gemm", spec))}


def test_short_last_tile():
    # plain tile_k 32: 17 tiles, the last of 8 K indices (q odd, s <= q); 12 tiles, the last full: no
    assert cover.short_last_tile(520, 1, 32) and not cover.short_last_tile(384, 1, 32)
    assert not cover.short_last_tile(360, 1, 32)   # 12 tiles (even), s 8: a two-deep loop runs them all
    # S 12: Kgemm 4840, ks 416 (13 tiles): slice 11 holds 264 = 8 tiles + 8
    assert cover.short_last_tile(4840, 12, 32) and not cover.short_last_tile(4520, 12, 32)


def test_tap_test_rows_by_tile_k_and_degree():
    # cpg 504 / 520 (tile_k 32), 1016 / 1032 (tile_k 64): the least Y x 1 filter whose slicing
    # gives a tap-loop slice (a tile-pair start, an even tile count at d > 1) a tap boundary inside a pair
    got = {(tk, d): tuple(cover.tap_test_rows(tk, d, c) for c in cpgs)
           for tk, cpgs in ((32, (504, 520)), (64, (1016, 1032))) for d in (1, 2, 3, 4, 8, 15)}
    assert got == {(32, 1): (2, 2), (32, 2): (2, 9), (32, 3): (3, 4), (32, 4): (2, 17), (32, 8): (2, 33),
                   (32, 15): (3, 3), (64, 1): (2, 2), (64, 2): (2, 17), (64, 3): (3, 4), (64, 4): (2, 33),
                   (64, 8): (2, None), (64, 15): (3, 3)}
    assert cover.tap_test_rows(32, 2, 520, most=8) is None


def test_kwalk_and_tap_test_problems_by_config_class():
    w = _names(W1X1)
    # Kgemm 520: 17 K tiles (at least 12; odd, the last of 8 K indices: cover.short_last_tile)
    assert w["cover_kwalk_drift"][1:11] == (1, 8, 17, 13, 8, 13, 5, (1, 1), (0, 0), (1, 2))
    assert [w[f"cover_kwalk_c{j}"][2] for j in (1, 2, 3)] == [40, 48, 56]
    assert w["cover_kwalk_c1"][3:10] == (2, 3, 8, 1, 2, (1, 1), (0, 1))
    assert [w[f"cover_kwalk_x{j}"][2:10] for j in (1, 3)] == [(8, 2, 3, 8, 2, 5, (1, 1), (1, 4)),
                                                           (8, 2, 3, 8, 2, 7, (1, 1), (1, 6))]
    assert w["cover_taps_cr63"][1:8] == (1, 504, 2, 7, 8, 2, 1) and w["cover_taps_cr65"][2:4] == (520, 2)
    plain = _names({})   # 64x64x32: no row slots, the tap loop beside the two-deep walk
    assert "cover_kwalk_drift" in plain and not any(n.startswith(("cover_kwalk_c", "cover_kwalk_x")) for n in plain)
    two = _names({"split_k": 4})   # degree 2: cover_diff_hok's slices cover the drift
    assert "cover_kwalk_drift" not in two and two["cover_taps_cr65"][2:4] == (520, 9)
    cl = _names({"split_k": 4, "split_k_cluster": 4})   # 11*4*32 < 40*37: slices of 12 K tiles, the last 10 + 8
    assert cl["cover_kwalk_drift"][6:8] == (37, 5) and cl["cover_taps_cr65"][6] == 17
    # slices of five K tiles at cpg 2*tile_k (an odd count: the K walk), split forms only
    assert two["cover_taps_odd"][2:8] == (64, 5, 7, 8, 5, 1) and cl["cover_taps_odd"][6] == 10
    assert "cover_taps_odd" not in plain
    pix = _names({"vector_a": 3, "vector_b": 3})   # padded-pixel: no K walk carries
    assert not any(n.startswith("cover_kwalk") for n in pix)


def _run(spec: dict, names, edit=lambda t: t) -> list:
    full = N._with_defaults("conv_implicit_gemm", spec)
    lw = N.TextLowerer("conv_implicit_gemm", full, ARCH, edit(api.lower("conv_implicit_gemm", full, ARCH, "llvm23").text))
    probs = [p for p in cover.conv_cover_problems(full) if p[0] in names]
    assert sorted(p[0] for p in probs) == sorted(names)
    out = []
    for case in CONV_PLAN.conv_cases(full, ARCH, lw, problems=probs):
        assert isinstance(case, N.Case), case   # admitted
        try:
            got, _ = N.run_case(case, lw)
        except SimError as exc:   # the emulator refused an access: a finding like a wrong D
            got = [f"{type(exc).__name__}: {exc}"]
        out += [f"{case.name}: {p}" for p in got]
    return out


def _in_block(block: str, pattern: str, repl: str, nth: int | None = None):
    """An edit: ``pattern`` -> ``repl`` on the lines of the blocks named ``block<N>``
    (every match, or only the ``nth``, 0-based)."""
    def edit(text):
        out, cur, seen, n = [], "", 0, 0
        for ln in text.split("\n"):
            if re.match(r"^[\w.]+:", ln):
                cur = ln
            if re.match(rf"{block}\d+:", cur) and re.search(pattern, ln):
                if nth is None or seen == nth:
                    ln, n = re.sub(pattern, repl, ln), n + 1
                seen += 1
            out.append(ln)
        assert n >= 1
        return "\n".join(out)
    return edit


NEW = ("cover_kwalk_drift", "cover_kwalk_c1", "cover_kwalk_c2", "cover_kwalk_c3", "cover_kwalk_x1",
       "cover_kwalk_x2", "cover_kwalk_x3", "cover_taps_cr63", "cover_taps_cr65")


def test_honest_w1x1_passes_the_new_problems():
    assert _run(W1X1, NEW) == []


@pytest.mark.parametrize("names, edit", [
    # the K loop's channel wrap 0 made -1 in every slot: k_c drifts one up per tile
    (("cover_kwalk_drift",), _in_block("kloop", r"(%k_cw\d+ = select i1 %k_cyc\d+, i32 %cpg, i32) 0$", r"\1 -1")),
    # the first step's channel carry of slot 1 (k_cn = 8 + 32 == cpg 40) and slot 3 (24 + 32 == 56) strict
    (("cover_kwalk_c1",), _in_block("kwalk", r"(%k_cyc\d+ = icmp) uge (i32 %k_cn\d+, %cpg)$", r"\1 ugt \2", 1)),
    (("cover_kwalk_c3",), _in_block("kwalk", r"(%k_cyc\d+ = icmp) uge (i32 %k_cn\d+, %cpg)$", r"\1 ugt \2", 3)),
    # the first step's x carry of slot 1 (tap 1, four taps a tile: x 5 == X) strict
    (("cover_kwalk_x1",), _in_block("kwalk", r"(%k_cyx\d+ = icmp) uge ", r"\1 ugt ", 1)),
    # the uniform-tap test by 63 or 65 (cpg 504 or 520 take the tap loop), the tile count by 33
    (("cover_taps_cr63",), _in_block("prologue", r"(%tp_cr\d+ = urem i32 %cpg,) 64$", r"\1 63")),
    (("cover_taps_cr65",), _in_block("prologue", r"(%tp_cr\d+ = urem i32 %cpg,) 64$", r"\1 65")),
    (("cover_taps_cr63",), _in_block("entry", r"(%ntiles\d+ = udiv i32 %k_span_up\d+,) 32$", r"\1 33")),
])
def test_w1x1_survivors_are_caught(names, edit):
    bad = _run(W1X1, names, edit)
    assert bad and bad[0].startswith(names[0]) and "outside the tolerance" in bad[0], bad


SPK2 = dict(next(c for c in CONFIGS if c.name == "spk2_mem_default_64x64_bf16").spec)


@pytest.mark.parametrize("block, pattern, repl", [
    ("prologue", r"(%tp_odd\d+ = and i32 %ntiles\d+,) 1$", r"\1 0"),   # odd slices into the tap loop
    ("prologue", r"(%tp_odd\d+ = and i32 %ntiles\d+,) 1$", r"\1 2"),   # 5 & 2 == 0: the same
    ("entry", r"(%ntiles\d+ = udiv i32 %k_span_up\d+,) 32$", r"\1 31"),  # six tiles: even
])
def test_spk2_tap_loop_odd_test_is_caught_by_cover_taps_odd(block, pattern, repl):
    assert _run(SPK2, ("cover_taps_odd",)) == []
    bad = _run(SPK2, ("cover_taps_odd",), _in_block(block, pattern, repl))
    assert bad and bad[0].startswith("cover_taps_odd") and "outside the tolerance" in bad[0], bad


def test_skc4_empty_slice_branch_is_caught_by_cover_taps_empty():
    """skc4 32x32x32 w1x1: ``any_tile = ntiles ugt 0`` made ``uge`` sends the empty slice 2
    (k_begin 64, ntiles 0: even, at cpg 64) into the tap loop, which has no K mask: its
    prologue's B loads start past the filter buffer (``OutOfBounds`` under the default
    reading of BUFFER-OOB-SOFFSET)."""
    spec = dict(next(c for c in CONFIGS if c.name == "skc4_mem_cshuffle_32x32x32_w1x1_bf16").spec)
    assert _names(spec)["cover_taps_empty"][1:8] == (1, 64, 2, 7, 8, 1, 1)
    assert "cover_taps_empty" not in _names({"split_k": 2, "split_k_cluster": 2})   # S 2: no empty slice
    assert _run(spec, ("cover_taps_empty",)) == []
    bad = _run(spec, ("cover_taps_empty",), _in_block("entry", r"(%any_tile\d+ = icmp) ugt ", r"\1 uge "))
    # the tap prologue's B loads of that empty slice start past the filter buffer: under the
    # emulator's default BUFFER-OOB-SOFFSET=excluded (soffset not range checked) the access is
    # refused; under `counted` they read zeros and D is wrong (outside the tolerance)
    assert bad and bad[0].startswith("cover_taps_empty") and "OutOfBounds" in bad[0] and "past num_records" in bad[0], bad


def test_skc4_carry_step_select_swap_is_caught_by_cover_kwalk_drift():
    """skc4 64x64: the K loop's ``k_ks = select k_cyc, k_dcy, 0`` with its arms swapped adds
    the carry's byte step on every tile; ``k_dcy`` is 0 at dilation 1 with one group, so only
    ``cover_kwalk_drift``'s dilation (1, 2) shows it."""
    spec = dict(next(c for c in CONFIGS if c.name == "skc4_mem_default_64x64_bf16").spec)
    assert _run(spec, ("cover_kwalk_drift",)) == []
    bad = _run(spec, ("cover_kwalk_drift",),
               _in_block("kloop", r"(%k_ks\d+ = select i1 %k_cyc\d+, i32) (%k_dcy\d+), i32 0$", r"\1 0, i32 \2"))
    assert bad and bad[0].startswith("cover_kwalk_drift") and "outside the tolerance" in bad[0], bad

"""The small-channel path of conv_implicit_gemm (padded-pixel vector widths 3, 5, 6,
7; docs/conv_implicit_gemm.md "Small-channel path"): the load pieces, the padded
reduction conv_launch slices, its admission rule, and the emitted loads, in both
engines (the ``engine`` fixture). Numerics: parity/sim/plans/conv_implicit_gemm.py CONV_PROBLEMS
(c3_dil, c5_pad, c6_groups, c7_pad, stem7x7) on the va3/va5/va6/va7 gate configs."""
import re

import pytest

from python_engine.kernels import conv_implicit_gemm as CIG

STEM = {"N": 1, "C": 3, "H": 224, "W": 224, "K": 64, "Y": 7, "X": 7, "stride_h": 2, "stride_w": 2,
        "pad_h": 3, "pad_w": 3}


@pytest.mark.parametrize("v,slot,pieces", [(1, 1, (2,)), (2, 2, (4,)), (3, 4, (4, 2)), (4, 4, (8,)),
                                           (5, 8, (8, 2)), (6, 8, (8, 4)), (7, 8, (8, 4, 2)), (8, 8, (16,))])
def test_pixel_slot_and_pieces(v, slot, pieces):
    assert CIG.pixel_slot(v) == slot
    assert CIG.pixel_pieces(v) == pieces
    assert sum(pieces) == 2 * v


def _plan(engine, spec, flavor="llvm23"):
    text = engine.lower("conv_launch", spec, "gfx1250", flavor).text
    return dict(ln.split(" ", 1) for ln in text.splitlines()[1:9])


def test_launch_slices_the_padded_reduction(engine):
    # stem: Kgemm 147, padded reduction 7*7*4 = 196; degree 4 -> ks = ceil(49/32)*32 = 64, 4 slices
    p = _plan(engine, dict(STEM, vector_a=3, vector_b=3, split_k=4, split_k_cluster=0, epilogue="cshuffle", degree=4))
    assert (p["ks"], p["ks_count"]) == ("64", "4")
    # the element-wise binary slices Kgemm 147: ks = ceil(37/32)*32 = 64, 3 slices
    p = _plan(engine, dict(STEM, vector_a=1, vector_b=1, split_k=4, split_k_cluster=0, epilogue="cshuffle", degree=4))
    assert (p["ks"], p["ks_count"]) == ("64", "3")


@pytest.mark.parametrize("C,groups,reason", [
    (6, 1, "vector_a 3 loads one padded pixel of 3 channels: it needs cpg = 3, got cpg 6"),
    (3, 3, "vector_a 3 loads one padded pixel of 3 channels: it needs cpg = 3, got cpg 1"),
])
def test_launch_needs_cpg_equal_to_the_pixel(engine, C, groups, reason):
    spec = dict(STEM, C=C, groups=groups, K=63, vector_a=3, vector_b=3, degree=1)
    assert engine.validate("conv_launch", spec, "gfx1250", "llvm23") == reason


@pytest.mark.parametrize("v,loads", [(3, ["float", "i16"]), (5, ["<2 x float>", "i16"]),
                                     (6, ["<2 x float>", "float"]), (7, ["<2 x float>", "float", "i16"])])
def test_pixel_loads_in_the_loop(engine, v, loads):
    text = engine.lower("conv_implicit_gemm", {"vector_a": v, "vector_b": v}, "gfx1250", "llvm23").text
    body = re.split(r"^kdone\d*:", re.split(r"^kloop\d*:", text, flags=re.M)[1], flags=re.M)[0]
    got = re.findall(r"= call (\S+(?: x \S+)?) @llvm\.amdgcn\.raw\.ptr\.buffer\.load\.\w+\(ptr addrspace\(8\) "
                     r"%\S+, i32 %\S+, i32 (\d+)", body)
    # each slot: its pieces at soffset 0, 4 or 8, ... in address order; A slots then B slots
    per_slot = [(t, str(sum(CIG.pixel_pieces(v)[:k]))) for k, t in enumerate(loads)]
    assert got[:len(loads)] == per_slot
    assert len(got) % len(loads) == 0 and got == per_slot * (len(got) // len(loads))
    # the LDS stores are pixel_slot(v)-element vectors
    nb = 2 * CIG.pixel_slot(v)
    stores = re.findall(r"store (<\d x float>) %\S+, ptr addrspace\(3\) %\S+, align (\d+)", body)
    assert stores and set(stores) == {(f"<{nb // 4} x float>", str(nb))}


def test_padded_width_in_the_name(engine):
    text = engine.lower("conv_implicit_gemm", {"vector_a": 3, "vector_b": 3}, "gfx1250", "llvm22").text
    assert "@conv_implicit_gemm_bf16_64x64x32_w2x2_mem_default_va3_vb3_identity(" in text

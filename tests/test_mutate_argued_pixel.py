"""The arguments drawn by the every-site run of the padded-pixel class (plain va3 vb3 bf16,
docs/sim.md "Every-site runs"): the K span and K limit arguments read the padded-pixel
reduction end ``k_padded`` = Y*X*slot as they read Kgemm, each shown on its survivor and
refused where its premise fails (a tap-loop kernel, a two-stage kernel)."""
from __future__ import annotations

from mutant_helpers import argued_names as _argued, conv_jobs

VA3 = "plain_mem_default_va3_vb3_bf16"
SPK4_VA3 = "spk4_mem_cshuffle_va3_vb3_bf16"
P64 = "plain_mem_default_64x64x32_w2x2_bf16"



def test_k_span_arguments_read_k_padded():
    span = _argued(VA3, "const_inc", r"%k_span\d+ = sub") | _argued(VA3, "const_dec", r"%k_span\d+ = sub")
    assert span == {"sub operand 0 -> 1": "K span rounding", "sub operand 0 -> -1": "K span one long"}
    up = _argued(VA3, "const_inc", r"%k_span_up\d+ = add") | _argued(VA3, "const_dec", r"%k_span_up\d+ = add")
    assert up == {"add operand 31 -> 32": "K span one long", "add operand 31 -> 30": "K span rounding"}
    div = _argued(VA3, "const_dec", r"%ntiles\d+ = udiv") | _argued(VA3, "const_inc", r"%ntiles\d+ = udiv")
    # tile_k - 1 only grows the count; tile_k + 1 can shrink it (a tile short: killed)
    assert div == {"udiv operand 32 -> 31": "K span one long", "udiv operand 32 -> 33": None}
    nz = _argued(VA3, "const_inc", r"%k_span_nz\d+ = select") | _argued(VA3, "const_dec", r"%k_span_nz\d+ = select")
    assert nz == {"i32 0 -> i32 1": "non-empty reduction", "i32 0 -> i32 -1": "non-empty reduction"}


def test_span_one_long_refuses_the_tap_loop_and_two_stage():
    # the tap-loop kernel: an extra tile may send the slice to the unmasked tap loop
    assert set(_argued(P64, "const_inc", r"%k_span_up\d+ = add").values()) == {None}
    assert set(_argued(P64, "const_dec", r"%ntiles\d+ = udiv").values()) == {None}
    # two-stage: k_span = k_end - k_begin, not the plain span
    assert "K span one long" not in _argued(SPK4_VA3, "const_dec", r"%ntiles\d+ = udiv").values()


def test_swapped_k_limit_reads_k_padded():
    got = _argued(VA3, "swap_operands", r"%[ab]_klim\d+ = sub")
    assert got == {"sub operands swapped": "swapped K limit"}
    assert len(conv_jobs(VA3, "swap_operands", r"%[ab]_klim\d+ = sub")) == 2

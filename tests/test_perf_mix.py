"""parity/perf/mix.py: classification and widths of a handwritten gfx1250 snippet."""
from __future__ import annotations

from parity.perf.mix import CLASSES, classify, mix, store_widths, width

SNIPPET = """\
v_wmma_f32_16x16x32_bf16 v[24:31], v[50:57], v[58:65], v[24:31]
v_wmma_f32_16x16x32_f16 v[16:23], v[50:57], v[66:73], v[16:23]
v_add_nc_u32_e32 v48, 64, v48
v_dual_mov_b32 v35, v33 :: v_dual_add_nc_u32 v34, 32, v34
v_nop
s_add_co_i32 s8, s8, 1
s_and_b32 s6, s8, 1
ds_load_b128 v[50:53], v74
ds_load_2addr_b32 v[1:2], v3 offset1:4
ds_store_b64 v82, v[58:59]
buffer_load_b128 v[58:61], v59, s[36:39], null offen
global_load_b32 v1, v[2:3], off
buffer_store_b16 v1, v2, s[0:3], null offen
buffer_store_b128 v[4:7], v2, s[0:3], null offen
s_wait_loadcnt 0x1
s_wait_dscnt 0x0
s_barrier_signal -1
s_barrier_wait -1
s_delay_alu instid0(VALU_DEP_1)
s_load_b64 s[6:7], s[4:5], 0x20
s_cbranch_scc1 .LBB0_2
""".splitlines()


def test_classes_of_the_snippet():
    m = mix(SNIPPET)
    assert m.total == 21
    assert m.counts == {"wmma": 2, "valu": 2, "salu": 2, "lds": 3, "global": 4, "wait": 4, "other": 4}
    assert list(m.counts) == list(CLASSES)
    assert m.non_wmma == 19 and m.per_wmma(m.non_wmma) == 9.5
    # per lane: loads 16 + 4, stores 2 + 16; LDS loads 16 + 2*4, store 8
    assert (m.global_load_bytes, m.global_store_bytes) == (20, 18)
    assert (m.lds_load_bytes, m.lds_store_bytes) == (24, 8)
    j = m.to_json()
    assert j["global_bytes_per_wmma"] == 32 * 38 / 2 and j["lds_bytes_per_wmma"] == 32 * 32 / 2
    assert j["mnemonics"]["s_barrier_wait"] == 1


def test_widths_and_store_histogram():
    assert [width(x) for x in ("buffer_store_b16", "buffer_store_b32", "buffer_store_b64", "buffer_store_b96",
                               "buffer_store_b128", "buffer_store_d16_hi_b16", "ds_store_2addr_b64",
                               "global_load_u8", "buffer_load_dwordx4", "s_add_co_i32")] == \
        [2, 4, 8, 12, 16, 2, 16, 1, 16, 0]
    assert store_widths(SNIPPET) == {2: 1, 16: 1}
    assert classify("v_swmmac_f32_16x16x64_bf16") == "wmma"
    assert classify("tensor_load_to_lds") == "global"
    assert classify("s_clause") == "other" and classify("s_mul_i32") == "salu"

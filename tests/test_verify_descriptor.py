"""`parity verify` reads the buffer descriptors of the compiled kernels
(parity/verify/descriptor.py) and compares them with the arch table: the
gfx1250 V# as LLVM 22.1 lowers it, every arch of the table, and a table that
claims the wrong word fails the config."""
from __future__ import annotations

import pytest

import python_engine as E
from parity.config import Config, Family
from parity.verify.descriptor import buffer_quads, check_descriptors, rsrc_calls
from verify_helpers import need_llvmlite

need_llvmlite()

from parity.verify.verify import FAIL, PASS, run_verify  # noqa: E402

ROWS = {r["name"]: r for r in E.arch_table()}
_TM: dict = {}


def _asm(text: str, arch: str) -> str:
    """Assembly of ``text`` for ``arch`` by llvmlite (LLVM 22.1), in process
    (the modules here are valid, nothing can abort)."""
    import llvmlite.binding as llvm
    if not _TM:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
    if arch not in _TM:
        _TM[arch] = llvm.Target.from_triple("amdgcn-amd-amdhsa").create_target_machine(cpu=arch, opt=3)
    m = llvm.parse_assembly(text)
    m.verify()
    return _TM[arch].emit_assembly(m)


def _copy(arch):
    threads = 64 if ROWS[arch]["wave_size"] == 64 else 32
    return E.lower("ir_core", {"kernel": "buffer_copy", "threads": threads}, arch, "llvm22")


def test_arch_table_descriptor_rows():
    g = ROWS["gfx1250"]
    assert (g["rsrc_layout"], g["rsrc_flags"], g["rsrc_word3"]) == ("gfx1250", 0x2, 0x20000000)
    assert g["rsrc_fields"] == [["base", 0, 57], ["num_records", 57, 45], ["stride", 108, 14], ["flags", 124, 4]]
    assert ROWS["gfx1201"]["rsrc_word3"] == ROWS["gfx1201"]["rsrc_flags"] == 0x31004000
    assert ROWS["gfx942"]["rsrc_word3"] == 0x00020000


@pytest.mark.parametrize("arch", sorted(ROWS))
def test_buffer_copy_descriptor_matches_the_table_at_every_arch(arch):
    r = _copy(arch)
    res = check_descriptors(_asm(r.text, arch), r.text, r.kernel, ROWS[arch])
    assert res.checked == 2 and res.problems == []


def test_gfx1250_quad_bits_as_llvm_lowers_them():
    """word 3 = flags << 28 (0x20000000 for flags 0x2); num_records' low 7 bits
    at bit 57 (word 1 bits 31:25), the rest in word 2."""
    r = _copy("gfx1250")
    asm = _asm(r.text, "gfx1250")
    (_, _, bits), _ = buffer_quads(asm, r.kernel)
    w3 = sum(b << i for i, b in enumerate(bits[96:]))
    assert w3 == 0x20000000
    # n_bytes is the third kernel argument, byte offset 16
    assert bits[57] == frozenset({57, 16 * 8})  # pointer bit 57 OR n_bytes bit 0 (LLVM does not mask)
    assert bits[64] == frozenset({16 * 8 + 7})
    assert bits[0] == frozenset({0})  # %in at offset 0


def test_gfx12_word_on_gfx1250_compiles_to_zero_and_fails_a_gfx12_table():
    """The issue's finding: the gfx11/gfx12 word 0x31004000 as flags never
    reaches a gfx1250 descriptor (word 3 compiles to 0); a table claiming it
    is caught at every buffer instruction."""
    r = _copy("gfx1250")
    text = r.text.replace("i32 2)", "i32 822099968)")
    asm = _asm(text, "gfx1250")
    assert "0x31004000" not in asm
    claim = dict(ROWS["gfx1250"], rsrc_flags=0x31004000, rsrc_word3=0x31004000)
    res = check_descriptors(asm, text, r.kernel, claim)
    assert res.checked == 2 and len(res.problems) == 2
    assert all("word 3 is 0x00000000, the arch table's rsrc_word3 for gfx1250 is 0x31004000" in p
               for p in res.problems)
    # the same IR for a gfx12 target keeps the word
    asm12 = _asm(text, "gfx1201")
    assert "0x31004000" in asm12
    assert check_descriptors(asm12, text, r.kernel, ROWS["gfx1201"]).problems == []
    # and the real table flags the IR's flags operand
    res = check_descriptors(asm, text, r.kernel, ROWS["gfx1250"])
    assert any("flags 0x31004000 differ from the arch table's rsrc_flags 0x00000002" in p for p in res.problems)


def test_wrong_layout_is_reported_field_by_field():
    r = _copy("gfx1250")
    asm = _asm(r.text, "gfx1250")
    wrong = dict(ROWS["gfx1201"], name="gfx1250", rsrc_flags=2, rsrc_word3=2)
    msg = " | ".join(check_descriptors(asm, r.text, r.kernel, wrong).problems)
    assert "num_records (bits 95:64) is not argument %n_bytes" in msg
    assert "flags (bits 127:96) are 0x20000000" in msg


def test_conv_kernel_descriptors_checked():
    spec = {"split_k": 2, "split_k_cluster": 0, "epilogue": "cshuffle"}
    r = E.lower("conv_implicit_gemm", spec, "gfx1250", "llvm23")
    asm = _asm(r.text, "gfx1250")
    calls = rsrc_calls(r.text)
    assert {c.base for c in calls} >= {"x_ptr", "w_ptr", "ws_ptr"}
    assert all(c.flags == 2 and c.stride == 0 for c in calls)
    res = check_descriptors(asm, r.text, r.kernel, ROWS["gfx1250"])
    assert res.checked >= 4 and res.problems == []
    bad = dict(ROWS["gfx1250"], rsrc_word3=0x20001000)
    assert len(check_descriptors(asm, r.text, r.kernel, bad).problems) == res.checked


def test_dataflow_meets_blocks_and_folds_brev():
    asm = """k:
\ts_load_b64 s[0:1], s[4:5], 0x0
\ts_mov_b32 s2, 64
\ts_cbranch_scc1 .LBB0_2
\ts_brev_b32 s3, 4
\ts_branch .LBB0_3
.LBB0_2:
\ts_mov_b32 s3, 0x20000000
.LBB0_3:
\tbuffer_load_b32 v0, v1, s[0:3], null offen
\tbuffer_store_b32 v0, v1, s[8:11], null offen
\ts_endpgm
.Lfunc_end0:
\t.amdhsa_user_sgpr_dispatch_ptr 1
\t.amdhsa_user_sgpr_queue_ptr 1
"""
    (l1, q1, b1), (l2, q2, b2) = buffer_quads(asm, "k")
    assert q1 == "s[0:3]" and sum(b << i for i, b in enumerate(b1[96:])) == 0x20000000
    assert b1[64:96] == [(64 >> i) & 1 for i in range(32)] and b1[5] == frozenset({5})
    assert q2 == "s[8:11]" and set(b2) == {None}


def test_parity_verify_fails_a_table_that_claims_the_gfx12_word(monkeypatch):
    """End to end: the stub engine's table claims gfx1250 word 3 0x31004000 and
    its kernel passes that as flags; the compiled descriptor has word 3 0."""
    monkeypatch.setenv("GFX12_RSRC_TABLE", "1")
    cfg = Config("gfx12_flags", arch="gfx1250", spec={"case": "gfx12_flags"}, flavors=("llvm22",))
    rep = run_verify([Family("stub", (cfg,))], engine="verify_stub_engine", flavors=("llvm22",), workers=1)
    [u] = rep.results
    assert u.status == FAIL and rep.result == "RED"
    assert any("buffer descriptor (gfx1250)" in e and "word 3 is 0x00000000" in e for e in u.errors), u.errors
    monkeypatch.delenv("GFX12_RSRC_TABLE")
    rep = run_verify([Family("stub", (cfg,))], engine="verify_stub_engine", flavors=("llvm22",), workers=1)
    [u] = rep.results
    assert u.status == FAIL
    assert any("rsrc_flags 0x00000002" in e for e in u.errors), u.errors

"""The numerics oracle catches what it exists for: each test builds a
deliberately broken kernel (by editing emitted text or with the IRBuilder)
and checks the emulator reports it (parity/sim, docs/sim.md)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import python_engine.api as api
from parity.sim import reference as ref
from parity.sim import DivergentBranch, Kernel, OutOfBounds, Poison, RaceError, UninitializedRead
from python_engine.ir import types as T
from python_engine.ir.builder import IRBuilder
from python_engine.ir.printer import print_module
from python_engine.ir.values import i32, i64
from python_engine.kernels.common import in_ptr, kernel_attrs, new_module, out_ptr
from python_engine.targets.arch import find_arch
from python_engine.targets.flavors import find_flavor


def _lower(family, spec):
    return api.lower(family, spec, "gfx1250", "llvm23").text


def _drop_barrier(text: str) -> str:
    lines = [ln for ln in text.split("\n") if "@llvm.amdgcn.s.barrier()" not in ln or ln.startswith("declare")]
    return "\n".join(lines)


def test_lds_barrier_runs_and_reverses():
    k = Kernel(_lower("ir_core", {"kernel": "lds_barrier", "threads": 64}))
    a = np.arange(64, dtype=np.float32)
    o = np.zeros(64, np.float32)
    k.launch((1, 1, 1), 64, {"in": a, "out": o})
    assert (o == a[::-1]).all()


def test_missing_barrier_is_uninitialised_lds_read():
    # Without the barrier the first wave reads LDS the other waves have not written yet.
    k = Kernel(_drop_barrier(_lower("ir_core", {"kernel": "lds_barrier", "threads": 64})))
    with pytest.raises(UninitializedRead) as e:
        k.launch((1, 1, 1), 64, {"in": np.zeros(64, np.float32), "out": np.zeros(64, np.float32)})
    assert "lds_buf" in str(e.value) and "%y" in str(e.value)


def _two_phase_lds(barrier_between_rounds: bool, threads: int = 64) -> str:
    """LDS ping: every lane writes lds[tid] = in[tid], barrier, then writes
    lds[tid] = 2*in[tid], (barrier?), reads lds[threads-1-tid] into out. The
    second barrier is the one a broken kernel forgets: LDS is initialised, so
    only the wave order decides what is read."""
    fl, ar = find_flavor("llvm23"), find_arch("gfx1250")
    m, fn = new_module(fl, ar, "two_phase", [in_ptr("in"), out_ptr("out")], kernel_attrs(threads))
    b = IRBuilder(m, fn)
    b.position(b.new_block("entry"))
    lds = m.add_lds("lds_buf", T.array(threads, T.FLOAT), 16)
    tid = b.call("workitem_id_x", [], "tid")
    t64 = b.cast("zext", tid, T.I64, "tidw")
    x = b.load(T.FLOAT, b.gep(T.FLOAT, fn.param("in"), [t64], "pin"), 4, "x")
    pl = b.gep(T.FLOAT, lds, [tid], "pl")
    b.store(x, pl, 4)

    def barrier():  # the fences make the LDS writes visible across the barrier (docs/sim.md)
        b.fence("workgroup", "release")
        b.call("s_barrier", [])
        b.fence("workgroup", "acquire")
    barrier()
    x2 = b.fadd(x, x, "xx")
    b.store(x2, pl, 4)
    if barrier_between_rounds:
        barrier()
    rev = b.sub(i32(threads - 1), tid, "rev")
    y = b.load(T.FLOAT, b.gep(T.FLOAT, lds, [rev], "pr"), 4, "y")
    b.store(y, b.gep(T.FLOAT, fn.param("out"), [t64], "pout"), 4)
    b.ret_void()
    return print_module(m)


def test_missing_barrier_race_detected_by_the_two_wave_orders():
    a = np.arange(64, dtype=np.float32)
    ok = Kernel(_two_phase_lds(True))
    o = np.zeros(64, np.float32)
    ok.launch((1, 1, 1), 64, {"in": a, "out": o})
    assert (o == 2 * a[::-1]).all()
    broken = Kernel(_two_phase_lds(False))
    # the order comparison alone (shadow detector off) sees the results differ
    with pytest.raises(RaceError) as e:
        broken.launch((1, 1, 1), 64, {"in": a, "out": np.zeros(64, np.float32)}, shadow=False)
    msg = str(e.value)
    assert "forward and reverse wave orders" in msg and "'out'" in msg and "byte offset" in msg
    # the shadow detector names the LDS address and the instruction
    with pytest.raises(RaceError) as e:
        broken.launch((1, 1, 1), 64, {"in": a, "out": np.zeros(64, np.float32)})
    msg = str(e.value)
    # forward order: wave 0 read lds[32..63] before wave 1 rewrote them (write-after-read)
    assert "LDS 'lds_buf'" in msg and "byte offset" in msg and "wave 0 read" in msg and "store float %xx" in msg


def test_out_of_bounds_store_names_buffer_offset_instruction():
    text = _lower("ir_core", {"kernel": "casts", "threads": 64})
    args = {"in": np.zeros(64, np.float32), "out": np.zeros(60, np.float32)}
    # with `inbounds` the address past one-past-the-end is poison at the getelementptr (docs/sim.md, Promises)
    with pytest.raises(Poison, match=r"getelementptr inbounds: byte offset 244 .* outside global 'out'"):
        Kernel(text).launch((1, 1, 1), 64, dict(args))
    k = Kernel(text.replace("getelementptr inbounds", "getelementptr"))
    with pytest.raises(OutOfBounds) as e:
        k.launch((1, 1, 1), 64, args)
    msg = str(e.value)
    assert "store" in msg and "'out'" in msg and "byte offset 240" in msg and "store float %f" in msg


def test_lane_divergent_branch():
    fl, ar = find_flavor("llvm23"), find_arch("gfx1250")
    m, fn = new_module(fl, ar, "divergent", [out_ptr("out")], kernel_attrs(32))
    b = IRBuilder(m, fn)
    b.position(b.new_block("entry"))
    tid = b.call("workitem_id_x", [], "tid")
    odd = b.icmp("ne", b.binop("and", tid, i32(1), "bit"), i32(0), "odd")
    then, done = b.new_block("then"), b.new_block("done")
    b.cond_br(odd, then, done)
    b.position(then)
    b.store(tid, b.gep(T.I32, fn.param("out"), [i64(0)], "p"), 4)
    b.br(done)
    b.position(done)
    b.ret_void()
    k = Kernel(print_module(m))
    with pytest.raises(DivergentBranch) as e:
        k.launch((1, 1, 1), 32, {"out": np.zeros(1, np.int32)})
    assert "br i1 %odd" in str(e.value) and "wave-uniform" in str(e.value)


def _reduce_case(text, M=7, K=9, ks=3, threads=64, vector=4):
    ws = np.random.default_rng(3).standard_normal((ks, M, K)).astype(np.float32)
    d = np.zeros(M * K, np.uint16)
    Kernel(text).launch((-(-M * K // (threads * vector)), 1, 1), threads,
                        {"ws_ptr": ws, "ws_bytes": ws.nbytes, "d_ptr": d, "d_bytes": d.nbytes,
                         "M": M, "K": K, "ks_count": ks})
    return d, ref.ref_cast_bits(ref.split_k_sum(ws).ravel(), "bf16")


def test_reduce_kernel_is_bit_exact():
    d, want = _reduce_case(_lower("conv_fwd_split_k_reduce",
                                  {"dtype": "bf16", "vector": 4, "threads": 64, "degree": 0}))
    assert (d == want).all()


def test_wrong_slab_index_is_a_numerics_mismatch():
    text = _lower("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 4, "threads": 64, "degree": 3})
    # the second slab's offset `off = idx + mk` becomes `idx + 1`: reads the wrong slab element
    broken, n = re.subn(r"(= add nuw nsw i64 %(?:elem|jc)\d+), %mk5", r"\1, 1", text)
    assert n == 2  # the vector path and the tail path
    d, want = _reduce_case(broken)
    assert not ref.same_bits_16(d, want, "bf16").all()


def test_buffer_load_out_of_range_reads_zero_and_store_is_dropped():
    k = Kernel(_lower("ir_core", {"kernel": "buffer_copy", "threads": 32}))
    src = np.arange(128, dtype=np.float32) + 1
    dst = np.full(128, -1.0, np.float32)
    k.launch((1, 1, 1), 32, {"in": src, "out": dst, "n_bytes": 160})
    assert (dst[:40] == src[:40]).all() and (dst[40:] == -1).all()


def test_conv_implicit_gemm_python_kernel_matches_reference():
    """The unregistered forward kernel (python_engine) through the conv numerics
    plan: plain bf16 64x64x32 on the plan's problems, both wave orders."""
    from parity.sim import numerics as N
    from python_engine.kernels import conv_implicit_gemm as C
    from python_engine.spec.fields import normalize

    class Lower(N._Lowerer):
        def kernel(self, family, spec, arch, flavor="llvm23"):
            if family != "conv_implicit_gemm":
                return super().kernel(family, spec, arch, flavor)
            s = normalize(C.FAMILY, C.FIELDS, spec)
            _, m = C.build(s, find_arch(arch), find_flavor(flavor))
            return Kernel(print_module(m))
    full = {f.name: f.default for f in C.FIELDS}
    full.update(split_k=2, split_k_cluster=0, epilogue="cshuffle")
    # the plan's first three problems (K walk, every epilogue path of a small problem): the
    # numerics lane runs every case of the same kernel through the engine API
    o = N.run_config("conv_implicit_gemm", "spk2_cshuffle", full, "gfx1250", Lower(), order=lambda cs: cs[:3])
    assert o.ok and o.cases == 3, o.problems


def _copy_args(n_bytes=512):
    return {"in": np.zeros(128, np.float32), "out": np.zeros(128, np.float32), "n_bytes": n_bytes}


def test_gfx1250_resource_decoded_from_flags_bits_3_0():
    """On gfx1250 only flags bits 3:0 reach the V# (bits 127:124): the arch
    table's 0x2 is OOB_SELECT 1 (the raw check); the gfx11/gfx12 word
    0x31004000 has bits 3:0 = 0 there, so the emulator refuses it as gfx1250
    hardware would not range-check it the way the kernel relies on."""
    from parity.sim import SimError
    text = _lower("ir_core", {"kernel": "buffer_copy", "threads": 32})
    assert text.count("i64 %nrec1, i32 2)") == 2  # flags 0x2 from the arch table
    Kernel(text, arch="gfx1250").launch((1, 1, 1), 32, _copy_args())
    k = Kernel(text.replace("i32 2)", "i32 822099968)"), arch="gfx1250")
    with pytest.raises(SimError) as e:
        k.launch((1, 1, 1), 32, _copy_args())
    msg = str(e.value)
    assert "0x31004000" in msg and "bits 127:124 = 0x0" in msg and "OOB_SELECT 0" in msg
    # swizzle (bit 0) or a TYPE (bits 3:2) are refused too
    for flags, what in ((3, "SWIZZLE_ENABLE 1"), (6, "TYPE 1")):
        with pytest.raises(SimError, match=what):
            Kernel(text.replace("i32 2)", f"i32 {flags})"), arch="gfx1250").launch((1, 1, 1), 32, _copy_args())


def test_gfx12_resource_needs_oob_select_3():
    """gfx1201 (gfx11/gfx12 V#): word 3 is flags verbatim; 0x31004000 (OOB_SELECT
    3) is accepted, the gfx1250 value 0x2 (OOB_SELECT 0 there) is refused."""
    from parity.sim import SimError
    text = api.lower("ir_core", {"kernel": "buffer_copy", "threads": 32}, "gfx1201", "llvm22").text
    assert text.count("i32 822099968)") == 2
    src = np.arange(128, dtype=np.float32) + 1
    dst = np.full(128, -1.0, np.float32)
    Kernel(text, arch="gfx1201").launch((1, 1, 1), 32, {"in": src, "out": dst, "n_bytes": 160})
    assert (dst[:40] == src[:40]).all() and (dst[40:] == -1).all()
    with pytest.raises(SimError) as e:
        Kernel(text.replace("i32 822099968)", "i32 2)"), arch="gfx1201").launch((1, 1, 1), 32, _copy_args())
    assert "OOB_SELECT = 3 in bits 29:28" in str(e.value) and "0x00000002" in str(e.value)


def test_rsrc_decode_per_arch():
    from parity.sim.rsrc import RsrcRefused, decode
    assert decode("gfx942", 0x00020000, 0, 100).nrec == 100
    with pytest.raises(RsrcRefused, match="ADD_TID_ENABLE"):
        decode("gfx950", 0x00820000, 0, 100)
    with pytest.raises(RsrcRefused, match="32-bit num_records"):
        decode("gfx1201", 0x31004000, 0, 1 << 32)
    assert decode("gfx1250", 2, 0, 1 << 40).nrec == 1 << 40  # 45-bit field
    with pytest.raises(RsrcRefused, match="45-bit num_records"):
        decode("gfx1250", 2, 0, 1 << 45)
    with pytest.raises(RsrcRefused, match="stride 16"):
        decode("gfx1250", 2, 16, 64)
    with pytest.raises(RsrcRefused, match="no buffer resource layout"):
        decode("gfx9000", 2, 0, 64)

"""Unit tests of the emulator's arithmetic: bf16/f16 RNE conversions, WMMA
against numpy matmul with the documented gfx1250 wave32 layout, integer
wraparound and poison, the reference convolution."""
from __future__ import annotations

import numpy as np
import pytest

from parity.sim import reference as ref
from parity.sim import wmma as W
from parity.sim import Kernel, Poison
from parity.sim.fp import bf16_bits_to_f32, f32_to_bf16_bits, f32_to_f16
from python_engine.ir.constants import small_float_bits


def _edge_floats(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    # ties for bf16 (low 16 bits 0x8000) and fp16-ish ties, around overflow and subnormals
    ties = (bits & np.uint32(0xFFFF0000)) | np.uint32(0x8000)
    special = np.array([0x3F808000, 0x3F818000, 0x7F7F8000, 0x7F7FFFFF, 0xFF7F8000, 0x00008000, 0x00018000,
                        0x80008000, 0x477FF000, 0x477FE000, 0x33000000, 0x33000001, 0x387FC000,
                        0x00000000, 0x80000000, 0x7F800000, 0xFF800000], np.uint32)
    return np.concatenate([bits, ties, special]).view(np.float32)


def test_bf16_rne_matches_exact_rounding():
    x = _edge_floats()
    got = f32_to_bf16_bits(x)
    fin = ~np.isnan(x)
    want = np.array([small_float_bits(float(v), 8, 7) for v in x[fin]], np.uint16)
    assert (got[fin] == want).all()
    assert (ref.ref_cast_bits(x, "bf16")[fin] == want).all()
    nan = np.isnan(x)
    assert np.isnan(bf16_bits_to_f32(got[nan])).all()


def test_bf16_known_values():
    x = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.3961776e38, -0.0, 1e-40], np.float32)
    assert [hex(v) for v in f32_to_bf16_bits(x)] == ["0x3f80", "0x3f82", "0x7f80", "0x8000", hex(small_float_bits(float(np.float32(1e-40)), 8, 7))]


def test_f16_rne_matches_exact_rounding():
    x = _edge_floats(seed=1)
    got = f32_to_f16(x).view(np.uint16)
    fin = ~np.isnan(x)
    want = np.array([small_float_bits(float(v), 5, 10) for v in x[fin]], np.uint16)
    assert (got[fin] == want).all()
    assert (ref.ref_cast_bits(x, "fp16")[fin] == want).all()
    assert [hex(v) for v in f32_to_f16(np.array([65520.0, 65519.0, 2 ** -25, 3 * 2 ** -26], np.float32)).view(np.uint16)] \
        == ["0x7c00", "0x7bff", "0x0", "0x1"]


@pytest.mark.parametrize("kind", ["bf16", "f16"])
def test_wmma_against_numpy_matmul(kind):
    rng = np.random.default_rng(5)
    A = rng.standard_normal((16, 32)).astype(np.float32)
    B = rng.standard_normal((32, 16)).astype(np.float32)
    C = rng.standard_normal((16, 16)).astype(np.float32)
    if kind == "bf16":
        Ab, Bb = f32_to_bf16_bits(A), f32_to_bf16_bits(B)
        A64, B64 = bf16_bits_to_f32(Ab).astype(np.float64), bf16_bits_to_f32(Bb).astype(np.float64)
    else:
        Ab, Bb = A.astype(np.float16), B.astype(np.float16)
        A64, B64 = Ab.astype(np.float64), Bb.astype(np.float64)
    a, b, c = W.pack_a(Ab), W.pack_b(Bb), W.pack_cd(C)
    # the documented layout, spelled out lane by lane
    for lane in (0, 5, 16, 31):
        h, r = lane // 16, lane % 16
        assert list(a[lane, :8]) == list(Ab[r, 8 * h: 8 * h + 8])
        assert list(a[lane, 8:]) == list(Ab[r, 16 + 8 * h: 24 + 8 * h])
        assert list(b[lane, :8]) == list(Bb[8 * h: 8 * h + 8, r])
        assert list(c[lane]) == list(C[8 * h: 8 * h + 8, r])
    d = W.wmma_f32_16x16x32(a, b, c, kind)
    D = W.unpack_cd(d)
    assert D.dtype == np.float32
    assert (D == (A64 @ B64 + C).astype(np.float32)).all()


def test_wmma_through_the_ir():
    text = """define amdgpu_kernel void @w(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) #0 {
entry0:
  %tid1 = call i32 @llvm.amdgcn.workitem.id.x()
  %t2 = zext i32 %tid1 to i64
  %pa3 = getelementptr inbounds <16 x bfloat>, ptr addrspace(1) %a, i64 %t2
  %va4 = load <16 x bfloat>, ptr addrspace(1) %pa3, align 32
  %pb5 = getelementptr inbounds <16 x bfloat>, ptr addrspace(1) %b, i64 %t2
  %vb6 = load <16 x bfloat>, ptr addrspace(1) %pb5, align 32
  %pc7 = getelementptr inbounds <8 x float>, ptr addrspace(1) %c, i64 %t2
  %vc8 = load <8 x float>, ptr addrspace(1) %pc7, align 32
  %r9 = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(i1 false, <16 x bfloat> %va4, i1 false, <16 x bfloat> %vb6, i16 0, <8 x float> %vc8, i1 false, i1 false)
  %pd10 = getelementptr inbounds <8 x float>, ptr addrspace(1) %d, i64 %t2
  store <8 x float> %r9, ptr addrspace(1) %pd10, align 32
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="32,32" }
"""
    rng = np.random.default_rng(2)
    A = f32_to_bf16_bits(rng.standard_normal((16, 32)).astype(np.float32))
    B = f32_to_bf16_bits(rng.standard_normal((32, 16)).astype(np.float32))
    C = rng.standard_normal((16, 16)).astype(np.float32)
    d = np.zeros((32, 8), np.float32)
    Kernel(text).launch((1, 1, 1), 32, {"a": W.pack_a(A).copy(), "b": W.pack_b(B).copy(),
                                        "c": W.pack_cd(C).copy(), "d": d})
    want = (bf16_bits_to_f32(A).astype(np.float64) @ bf16_bits_to_f32(B).astype(np.float64) + C).astype(np.float32)
    assert (W.unpack_cd(d) == want).all()


def _int_kernel(body: str, ty: str = "i32") -> Kernel:
    return Kernel(f"""define amdgpu_kernel void @k(ptr addrspace(1) %out, {ty} %a, {ty} %b) #0 {{
entry0:
{body}
  ret void
}}

attributes #0 = {{ "amdgpu-flat-work-group-size"="32,32" }}
""")


def test_integer_wraparound_and_signed_ops():
    k = _int_kernel("""  %x1 = add i32 %a, %b
  %x2 = mul i32 %a, %b
  %x3 = sdiv i32 %a, 7
  %x4 = srem i32 %a, 7
  %x5 = ashr i32 %a, 3
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 0
  store i32 %x1, ptr addrspace(1) %p, align 4
  %q = getelementptr inbounds i32, ptr addrspace(1) %out, i64 1
  store i32 %x2, ptr addrspace(1) %q, align 4
  %r = getelementptr inbounds i32, ptr addrspace(1) %out, i64 2
  store i32 %x3, ptr addrspace(1) %r, align 4
  %s = getelementptr inbounds i32, ptr addrspace(1) %out, i64 3
  store i32 %x4, ptr addrspace(1) %s, align 4
  %t = getelementptr inbounds i32, ptr addrspace(1) %out, i64 4
  store i32 %x5, ptr addrspace(1) %t, align 4""")
    out = np.zeros(5, np.int32)
    k.launch((1, 1, 1), 32, {"out": out, "a": -2147483000, "b": -1000})
    a, b = -2147483000, -1000
    assert list(out) == [np.int32(np.uint32((a + b) % 2 ** 32).view(np.int32)),
                         np.uint32((a * b) % 2 ** 32).view(np.int32), int(a / 7), a - 7 * int(a / 7), a >> 3]


def test_nsw_overflow_is_poison():
    k = _int_kernel("""  %x1 = add nsw i32 %a, %b
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 0
  store i32 %x1, ptr addrspace(1) %p, align 4""")
    with pytest.raises(Poison) as e:
        k.launch((1, 1, 1), 32, {"out": np.zeros(1, np.int32), "a": 2 ** 31 - 1, "b": 1})
    assert "add nsw" in str(e.value) and "%x1" in str(e.value)


def test_reference_conv_matches_direct_loops():
    rng = np.random.default_rng(0)
    N, H, Wd, G, cpg, kpg, Y, X = 1, 5, 6, 2, 3, 2, 2, 3
    x = rng.standard_normal((N, H, Wd, G * cpg))
    w = rng.standard_normal((G * kpg, Y, X, cpg))
    st, pd, dl = (2, 1), (1, 2), (2, 1)
    out = ref.conv_fwd(x, w, groups=G, stride=st, padding=pd, dilation=dl)
    Ho, Wo = out.shape[1:3]
    for n in range(N):
        for ho in range(Ho):
            for wo in range(Wo):
                for k in range(G * kpg):
                    g = k // kpg
                    s = 0.0
                    for y in range(Y):
                        for xx in range(X):
                            hi, wi = ho * st[0] - pd[0] + y * dl[0], wo * st[1] - pd[1] + xx * dl[1]
                            if 0 <= hi < H and 0 <= wi < Wd:
                                s += float(x[n, hi, wi, g * cpg:(g + 1) * cpg] @ w[k, y, xx])
                    assert abs(out[n, ho, wo, k] - s) < 1e-12


def test_endless_loop_through_a_barrier_hits_the_instruction_limit():
    """A loop that passes s.barrier on every trip returns to the scheduler each trip: the
    launch's instruction limit must still stop it (a mutated K-loop bound hung the
    mutation lane before the limit was checked at barriers too)."""
    from parity.sim import SimError
    k = Kernel("""declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @spin(ptr addrspace(1) %out) #0 {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %n, %loop ]
  %n = add i32 %i, 1
  call void @llvm.amdgcn.s.barrier()
  %again = icmp slt i32 %n, 100000
  br i1 %again, label %loop, label %done
done:
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" }
""")
    with pytest.raises(SimError, match="instruction limit of 5000 wave-instructions exceeded"):
        k.launch((1, 1, 1), 64, {"out": np.zeros(4, np.float32)}, orders=("forward",), max_instructions=5000)


# -- check_access: the two-reduction fast path and the per-lane reports -------------------

class _Agent:
    class launch:  # noqa: N801 - the attribute path check_access reads
        @staticmethod
        def agent_name(agent):
            return "wave 0"
    agent = 0


def _mem(nbytes: int):
    from parity.sim.memory import Memory
    return Memory("x", "global", np.zeros(nbytes, np.uint8), track_init=False, shadow=False)


def test_check_access_accepts_in_bounds_aligned_lanes():
    from parity.sim.memory import check_access
    off = np.arange(32, dtype=np.int64) * 16
    assert check_access(_mem(512), off, 16, 16, "load <4 x i32>", _Agent) is None


@pytest.mark.parametrize("lane,value,nbytes,msg", [
    (5, -16, 512, "byte offset -16"),     # negative: huge when read unsigned
    (31, 512, 512, "byte offset 512"),    # one past the end
    (0, 497, 512, "byte offset 497"),     # the last byte would be at 512
])
def test_check_access_reports_the_first_out_of_bounds_lane(lane, value, nbytes, msg):
    from parity.sim import OutOfBounds
    from parity.sim.memory import check_access
    off = np.arange(32, dtype=np.int64) * 8
    off[lane] = value
    with pytest.raises(OutOfBounds, match=f"{msg} .*lane {lane} of wave 0"):
        check_access(_mem(nbytes), off, 16, 1, "load", _Agent)


def test_check_access_reports_the_first_misaligned_lane():
    from parity.sim.memory import Misaligned, check_access
    off = np.arange(32, dtype=np.int64) * 16
    off[7] += 4
    off[9] += 8
    with pytest.raises(Misaligned, match=r"byte offset 116 .* align 16 \(lane 7\)"):
        check_access(_mem(1024), off, 16, 16, "load", _Agent)
    off[7] -= 4
    off[9] -= 8
    assert check_access(_mem(1024), off, 16, 16, "load", _Agent) is None

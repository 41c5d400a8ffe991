"""conv_implicit_gemm, Python engine only (the family is not registered until its
C++ twin exists, so these tests call the family module directly).

1. Validation: every rule's reason text, in rule order.
2. Names.
3. A numpy model of the kernel's documented index scheme (docs/conv_implicit_gemm.md:
   load slots, im2col gather, LDS layout, WMMA fragment layouts, epilogue element
   mapping, out-of-range offsets, slab layout, cluster fold rows) against a direct
   convolution, for strided/padded/dilated/grouped/partial-tile problems and
   split-K degrees.
4. Validity: llvmlite parses and verifies (llvm22, llvm23); gfx1250 compiles in a
   subprocess with no spills and no scratch; opt-19 verifies llvm20 when present.
"""
from __future__ import annotations

import itertools
import json
import re
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from python_engine.ir.printer import print_module
from python_engine.kernels import conv_abi
from python_engine.kernels import conv_implicit_gemm as CIG
from python_engine.kernels.conv_problem import ConvProblem
from python_engine.spec.fields import SpecRejected, normalize
from python_engine.targets.arch import find_arch
from python_engine.targets.flavors import find_flavor


def _validate(spec, arch="gfx1250", flavor="llvm23"):
    s = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    return CIG.validate(s, find_arch(arch), find_flavor(flavor))


def lower(spec, arch="gfx1250", flavor="llvm23"):
    s = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    r = CIG.validate(s, find_arch(arch), find_flavor(flavor))
    if r:
        raise SpecRejected(r)
    name, m = CIG.build(s, find_arch(arch), find_flavor(flavor))
    return name, print_module(m)


# -- 1. validation ----------------------------------------------------------------------

REJECTS = [
    ({"dtype": None}, "gfx1250", "llvm23", "dtype must be bf16 or fp16, got null"),
    ({"dtype": "fp32"}, "gfx1250", "llvm23", "dtype must be bf16 or fp16, got 'fp32'"),
    ({"tile_k": 16}, "gfx1250", "llvm23",
     "tile must be a multiple of the WMMA shape 16x16x32 (tile_m, tile_n multiples of 16, "
     "tile_k a multiple of 32, each at most 1024), got 64x64x16"),
    ({"tile_m": 40}, "gfx1250", "llvm23",
     "tile must be a multiple of the WMMA shape 16x16x32 (tile_m, tile_n multiples of 16, "
     "tile_k a multiple of 32, each at most 1024), got 40x64x32"),
    ({"waves_m": 8}, "gfx1250", "llvm23",
     "waves 8x2 must divide the tile 64x64 into per-wave tiles that are multiples of 16x16"),
    ({"waves_n": 0}, "gfx1250", "llvm23",
     "waves 2x0 must divide the tile 64x64 into per-wave tiles that are multiples of 16x16"),
    ({"pipeline": "lds"}, "gfx1250", "llvm23", "pipeline must be mem or wavelet, got 'lds'"),
    ({"pipeline": "wavelet", "num_load_waves": 0}, "gfx1250", "llvm23",
     "num_load_waves must be 1..8 for the wavelet pipeline, got 0"),
    ({"epilogue": None}, "gfx1250", "llvm23", "epilogue must be default or cshuffle, got null"),
    ({"tile_m": 256, "tile_n": 256, "waves_m": 8, "waves_n": 8}, "gfx1250", "llvm23",
     "work-group of 2048 threads exceeds 1024"),
    ({"vector_a": 9}, "gfx1250", "llvm23", "vector_a must be 1 to 8 elements, got 9"),
    ({"vector_b": 16}, "gfx1250", "llvm23", "vector_b must be 1 to 8 elements, got 16"),
    ({"vector_a": 0}, "gfx1250", "llvm23", "vector_a must be 1 to 8 elements, got 0"),
    ({"vector_a": 3}, "gfx1250", "llvm23", "padded-pixel loads (vector 3, 5, 6 or 7) need vector_a = vector_b "
                                           "(A and B share the padded K order), got 3 and 8"),
    ({"vector_a": 8, "vector_b": 7}, "gfx1250", "llvm23", "padded-pixel loads (vector 3, 5, 6 or 7) need "
                                                          "vector_a = vector_b (A and B share the padded K order), "
                                                          "got 8 and 7"),
    ({"acc_epilogue": "gelu"}, "gfx1250", "llvm23",
     "acc_epilogue must be identity, bias, scale, relu, clamp, bias_relu or bias_clamp, got 'gelu'"),
    ({"tile_m": 256, "tile_n": 256, "tile_k": 256, "waves_m": 4, "waves_n": 4}, "gfx1250", "llvm23",
     "LDS use of 524288 bytes exceeds the 327680 bytes of gfx1250"),
    ({"split_k": 4, "split_k_cluster": 0}, "gfx950", "llvm22",
     "arch gfx950 has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)"),
    ({}, "gfx1100", "llvm22", "arch gfx1100 has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)"),
    ({"split_k": -1, "split_k_cluster": 0}, "gfx1250", "llvm23", "split_k = -1 (auto) must be resolved before lowering"),
    ({"split_k": 0, "split_k_cluster": 0}, "gfx1250", "llvm23", "split_k must be 1 (off) or greater than 1 (two-stage), got 0"),
    ({"split_k": -2, "split_k_cluster": 0}, "gfx1250", "llvm23", "split_k must be 1 (off) or greater than 1 (two-stage), got -2"),
]
REJECTS += [
    ({"split_k": 4, "split_k_cluster": 4}, "gfx1250", "llvm22", "split_k_cluster requires flavor llvm23"),
    ({"split_k": 4, "split_k_cluster": 4}, "gfx1250", "llvm20", "split_k_cluster requires flavor llvm23"),
    ({"split_k": 4, "split_k_cluster": 4, "pipeline": "wavelet"}, "gfx1250", "llvm23",
     "split_k_cluster requires the mem pipeline"),
    ({"split_k": 4, "split_k_cluster": 1}, "gfx1250", "llvm23", "split_k_cluster must be 0 (off) or 2..15, got 1"),
    ({"split_k": 4, "split_k_cluster": 16}, "gfx1250", "llvm23", "split_k_cluster must be 0 (off) or 2..15, got 16"),
    ({"split_k": 1, "split_k_cluster": 4}, "gfx1250", "llvm23", "split_k_cluster requires split_k > 1 (the two-stage ABI)"),
    ({"name_prefix": "9x"}, "gfx1250", "llvm23", "name_prefix must be empty or an identifier, got '9x'"),
    ({"name_prefix": None}, "gfx1250", "llvm23", "name_prefix must be empty or an identifier, got null"),
]


@pytest.mark.parametrize("spec,arch,flavor,reason", REJECTS)
def test_reject_reasons(spec, arch, flavor, reason):
    assert _validate(spec, arch, flavor) == reason


def test_fields_order_and_defaults():
    assert [(f.name, f.default) for f in CIG.FIELDS] == [
        ("dtype", "bf16"), ("tile_m", 64), ("tile_n", 64), ("tile_k", 32), ("waves_m", 2), ("waves_n", 2),
        ("pipeline", "mem"), ("num_load_waves", 1), ("epilogue", "default"), ("vector_a", 8),
        ("vector_b", 8), ("acc_epilogue", "identity"), ("split_k", 1), ("split_k_cluster", 0),
        ("name_prefix", "")]


# -- 2. names ---------------------------------------------------------------------------

def test_names():
    assert lower({})[0] == "conv_implicit_gemm_bf16_64x64x32_w2x2_mem_default_va8_vb8_identity"
    assert lower({"split_k": 4, "split_k_cluster": 0})[0] == lower({"split_k": 32, "split_k_cluster": 0})[0] \
        == "conv_implicit_gemm_bf16_64x64x32_w2x2_mem_default_va8_vb8_identity_spk"
    assert lower({"split_k": 2, "split_k_cluster": 8, "epilogue": "cshuffle", "name_prefix": "net"})[0] == \
        "net_conv_implicit_gemm_bf16_64x64x32_w2x2_mem_cshuffle_va8_vb8_identity_spk_skc8"
    assert lower({"pipeline": "wavelet", "num_load_waves": 2})[0] == \
        "conv_implicit_gemm_bf16_64x64x32_w2x2_wavelet2_default_va8_vb8_identity"
    # num_load_waves does not change mem code, so it is not in the name and the bytes agree
    assert lower({"num_load_waves": 3}) == lower({})
    # any degree > 1 builds the same binary
    assert lower({"split_k": 2, "split_k_cluster": 0})[1] == lower({"split_k": 32, "split_k_cluster": 0})[1]


def test_abi_variants_and_params():
    fl = find_flavor("llvm23")
    t = conv_abi.text("two_stage", fl).splitlines()
    assert t[0] == "conv_abi two_stage"
    assert t[-4:] == ["30 ws_ptr: ptr addrspace(1) noalias captures(none) writeonly", "31 ws_bytes: i64",
                      "32 ks: i32", "33 ks_count: i32"]
    assert conv_abi.text("plain", find_flavor("llvm20")).splitlines()[1] == \
        "0 x_ptr: ptr addrspace(1) noalias nocapture readonly"
    assert conv_abi.text("reduce", fl).splitlines()[1].startswith("0 ws_ptr:")
    _, text = lower({"split_k": 4, "split_k_cluster": 4})
    assert "%ks_count)" in text.splitlines()[[i for i, l in enumerate(text.splitlines())
                                              if l.startswith("define")][0]]


def test_deterministic():
    for spec in ({}, {"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle"},
                 {"pipeline": "wavelet", "acc_epilogue": "bias", "epilogue": "cshuffle"}):
        assert lower(spec) == lower(spec)


# -- 3. numpy model of the index scheme -------------------------------------------------

def ref_conv(p: ConvProblem, x, w):
    """Direct convolution in float64: x NHWC, w KYXC -> NHWK."""
    out = np.zeros((p.N, p.Ho, p.Wo, p.K))
    for g in range(p.groups):
        xs = x[..., g * p.cpg:(g + 1) * p.cpg]
        ws = w[g * p.kpg:(g + 1) * p.kpg]
        for y in range(p.Y):
            for xx in range(p.X):
                for ho in range(p.Ho):
                    hi = ho * p.stride_h - p.pad_h + y * p.dil_h
                    if not 0 <= hi < p.H:
                        continue
                    for wo in range(p.Wo):
                        wi = wo * p.stride_w - p.pad_w + xx * p.dil_w
                        if not 0 <= wi < p.W:
                            continue
                        out[:, ho, wo, g * p.kpg:(g + 1) * p.kpg] += xs[:, hi, wi, :] @ ws[:, y, xx, :].T
    return out


class Buf:
    """A raw buffer with the range check: element index -> value; out of range reads 0,
    out-of-range writes are dropped (the offset the kernel selects is the byte count)."""

    def __init__(self, arr):
        self.a = arr.reshape(-1)

    def load(self, e, n, ok):
        if not ok or e + n > self.a.size:
            return np.zeros(n)
        return self.a[e:e + n].copy()

    def store(self, e, vals, ok):
        if ok and e + len(vals) <= self.a.size:
            self.a[e:e + len(vals)] = vals


def wmma(afr, bfr, c):
    """WMMA 16x16x32 on per-lane fragments (32 lanes x 16 elements each for A and B,
    32 x 8 for C): A lane l holds row l%16, K = 8*(l//16)+[0,8) then 16+8*(l//16)+[0,8);
    B lane l holds column l%16 with the same K split; C/D lane l element e holds
    row 8*(l//16)+e, column l%16."""
    A = np.zeros((16, 32))
    B = np.zeros((32, 16))
    for l in range(32):
        ks = [8 * (l // 16) + i for i in range(8)] + [16 + 8 * (l // 16) + i for i in range(8)]
        A[l % 16, ks] = afr[l]
        B[ks, l % 16] = bfr[l]
    Cm = np.zeros((16, 16))
    for l in range(32):
        for e in range(8):
            Cm[8 * (l // 16) + e, l % 16] = c[l][e]
    D = A @ B + Cm
    return [[D[8 * (l // 16) + e, l % 16] for e in range(8)] for l in range(32)]


def model(spec, p: ConvProblem, x, w, ks_count=1, ks=None, bias=None, scale=1.0, lo=0.0, hi=0.0):
    """Run the documented scheme on numpy arrays; returns (D as NHWK, ws or None)."""
    s = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    tm, tn, tk = s["tile_m"], s["tile_n"], s["tile_k"]
    va, vb = s["vector_a"], s["vector_b"]
    wm, wn = tm // s["waves_m"], tn // s["waves_n"]
    split = s["split_k"] > 1
    S = s["split_k_cluster"]
    T_ = CIG.threads(s)
    ncw = s["waves_m"] * s["waves_n"]
    lthreads = s["num_load_waves"] * 32 if s["pipeline"] == "wavelet" else T_
    kp, ncp = tk, tn + CIG.PAD_C  # logical rows (the LDS swizzle is a storage permutation)
    X, Wt = Buf(x.astype(np.float64)), Buf(w.astype(np.float64))
    D = np.zeros(p.M * p.K)
    Dbuf = Buf(D)
    ws = np.zeros((ks_count * p.M * p.K)) if split else None
    WS = Buf(ws) if split else None
    if not split:
        ks_count, ks = 1, p.Kgemm
    gx, gy = -(-p.M // tm), -(-p.kpg // tn)

    def acc_epi(v, nglob):
        e = s["acc_epilogue"]
        if e == "bias":
            return v + np.array([bias[n] if n < p.K else 0.0 for n in nglob])
        if e == "scale":
            return v * scale
        if e == "relu":
            return np.where(v < 0, 0.0, v)
        if e == "clamp":
            v1 = np.where(v < lo, lo, v)
            return np.where(v1 > hi, hi, v1)
        return v

    def write(vals, m, n, ok, g, sl):
        if split:
            WS.store(((sl * p.M + m) * p.K + g * p.kpg + n), vals, ok)
        else:
            Dbuf.store(m * p.K + g * p.kpg + n, acc_epi(np.array(vals), range(g * p.kpg + n, g * p.kpg + n + len(vals))), ok)

    for z in range(p.groups * ks_count):
        g, sl = (z // ks_count, z % ks_count) if split else (z, 0)
        kb = sl * ks
        ke = min(kb + ks, p.Kgemm)
        nt = -(-max(ke - kb, 0) // tk)
        for bx in range(gx):
            for by in range(gy):
                m0, n0 = bx * tm, by * tn
                acc = {(wv, l, i, j): np.zeros(8) for wv in range(ncw) for l in range(32)
                       for i in range(wm // 16) for j in range(wn // 16)}
                for t in range(nt):
                    k0 = kb + t * tk
                    la = np.full((tm, kp), np.nan)
                    lb = np.full((tn, kp), np.nan)
                    cnt = tm * (tk // va)
                    for lt in range(lthreads):
                        for j in range(-(-cnt // lthreads)):
                            v = min(lt + j * lthreads, cnt - 1)
                            row, kv = divmod(v, tk // va)
                            m, r = m0 + row, k0 + kv * va
                            img, pix = divmod(m, p.Ho * p.Wo)
                            ho, wo = divmod(pix, p.Wo)
                            q, c = divmod(r, p.cpg)
                            yy, xx = divmod(q, p.X)
                            hh = ho * p.stride_h - p.pad_h + yy * p.dil_h
                            ww = wo * p.stride_w - p.pad_w + xx * p.dil_w
                            ok = m < p.M and r < ke and 0 <= hh < p.H and 0 <= ww < p.W
                            e = ((img * p.H + hh) * p.W + ww) * p.C + g * p.cpg + c
                            la[row, kv * va:kv * va + va] = X.load(e, va, ok)
                    cnt = tn * (tk // vb)
                    for lt in range(lthreads):
                        for j in range(-(-cnt // lthreads)):
                            v = min(lt + j * lthreads, cnt - 1)
                            row, kv = divmod(v, tk // vb)
                            n, r = n0 + row, k0 + kv * vb
                            ok = n < p.kpg and r < ke
                            lb[row, kv * vb:kv * vb + vb] = Wt.load((g * p.kpg + n) * p.Kgemm + r, vb, ok)
                    for wv in range(ncw):
                        wmi, wni = divmod(wv, s["waves_n"])
                        for kk in range(tk // 32):
                            def frag(lds, base_row):
                                out = []
                                for l in range(32):
                                    k = kk * 32 + 8 * (l // 16)
                                    rr = base_row + l % 16
                                    out.append(np.concatenate([lds[rr, k:k + 8], lds[rr, k + 16:k + 24]]))
                                return out
                            for i in range(wm // 16):
                                fa = frag(la, wmi * wm + 16 * i)
                                for j in range(wn // 16):
                                    fb = frag(lb, wni * wn + 16 * j)
                                    c = [acc[(wv, l, i, j)] for l in range(32)]
                                    d = wmma(fa, fb, c)
                                    for l in range(32):
                                        acc[(wv, l, i, j)] = np.array(d[l])
                # epilogue
                if s["epilogue"] == "default":
                    for (wv, l, i, j), a in acc.items():
                        wmi, wni = divmod(wv, s["waves_n"])
                        n = n0 + wni * wn + 16 * j + l % 16
                        for e in range(8):
                            m = m0 + wmi * wm + 16 * i + 8 * (l // 16) + e
                            write([a[e]], m, n, m < p.M and n < p.kpg, g, sl)
                else:
                    lc = np.full((tm, ncp), np.nan)
                    for (wv, l, i, j), a in acc.items():
                        wmi, wni = divmod(wv, s["waves_n"])
                        for e in range(8):
                            lc[wmi * wm + 16 * i + 8 * (l // 16) + e, wni * wn + 16 * j + l % 16] = a[e]
                    cnt = tm * tn // 4
                    for tid in range(T_):
                        for jj in range(-(-cnt // T_)):
                            v = min(tid + jj * T_, cnt - 1)
                            row, cv = divmod(v, tn // 4)
                            m, n = m0 + row, n0 + 4 * cv
                            write(list(lc[row, 4 * cv:4 * cv + 4]), m, n, m < p.M and n < p.kpg, g, sl)
    if S:
        # The fold, after every slab of every cluster is written (the cluster barrier).
        R = -(-tm // S)
        for z in range(p.groups * ks_count):
            g, sl = divmod(z, ks_count)
            for bx in range(gx):
                for by in range(gy):
                    m0, n0 = bx * tm, by * tn
                    cnt = R * tn // 4
                    for tid in range(T_):
                        for jj in range(-(-cnt // T_)):
                            v = min(tid + jj * T_, cnt - 1)
                            rr, cv = divmod(v, tn // 4)
                            row = sl * R + rr
                            m, n = m0 + row, n0 + 4 * cv
                            ok = row < tm and m < p.M and n < p.kpg
                            tot = None
                            for k in range(S):
                                xk = WS.load((k * p.M + m) * p.K + g * p.kpg + n, 4, ok)
                                tot = xk if tot is None else tot + xk
                            Dbuf.store(m * p.K + g * p.kpg + n, tot, ok)
    return D.reshape(p.N, p.Ho, p.Wo, p.K), ws


PROBLEMS = {
    "strided_padded": ConvProblem(N=1, C=8, H=7, W=6, K=20, Y=3, X=3, stride_h=2, stride_w=1, pad_h=1, pad_w=1),
    "dilated_grouped": ConvProblem(N=2, C=16, H=6, W=5, K=8, Y=2, X=3, dil_h=2, dil_w=1, pad_w=2, groups=2),
    "pointwise": ConvProblem(N=1, C=40, H=5, W=5, K=36, Y=1, X=1),
}


def _data(p, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, size=(p.N, p.H, p.W, p.C)).astype(np.float64)
    w = rng.integers(-3, 4, size=(p.K, p.Y, p.X, p.cpg)).astype(np.float64)
    return x, w


SMALL = {"tile_m": 32, "tile_n": 16, "tile_k": 32, "waves_m": 2, "waves_n": 1}


@pytest.mark.parametrize("pname", sorted(PROBLEMS))
@pytest.mark.parametrize("variant", ["plain_default", "plain_cshuffle_wavelet", "spk3_cshuffle", "skc2_default"])
def test_model_matches_reference(pname, variant):
    p = PROBLEMS[pname]
    x, w = _data(p)
    ref = ref_conv(p, x, w)
    va = 8 if p.cpg % 8 == 0 else 4 if p.cpg % 4 == 0 else 1
    spec = dict(SMALL, vector_a=va, vector_b=va)
    if variant == "plain_default":
        D, _ = model(spec, p, x, w)
    elif variant == "plain_cshuffle_wavelet":
        spec.update(epilogue="cshuffle", pipeline="wavelet", num_load_waves=1)
        D, _ = model(spec, p, x, w)
    elif variant == "spk3_cshuffle":
        spec.update(epilogue="cshuffle", split_k=3, split_k_cluster=0)
        ks_count = 3
        ks = -(-p.Kgemm // ks_count // 32) * 32
        D, ws = model(spec, p, x, w, ks_count=ks_count, ks=ks)
        D = ws.reshape(ks_count, p.M, p.K).sum(axis=0).reshape(D.shape)   # Stage 2
    else:
        spec.update(split_k=2, split_k_cluster=2)
        ks = -(-p.Kgemm // 2 // 32) * 32
        D, _ = model(spec, p, x, w, ks_count=2, ks=ks)
    np.testing.assert_array_equal(D, ref)


def test_model_acc_epilogues():
    p = PROBLEMS["strided_padded"]
    x, w = _data(p, 1)
    ref = ref_conv(p, x, w)
    bias = np.arange(p.K, dtype=np.float64) - 5
    D, _ = model(dict(SMALL, vector_a=8, vector_b=8, acc_epilogue="bias", epilogue="cshuffle"), p, x, w, bias=bias)
    np.testing.assert_array_equal(D, ref + bias)
    D, _ = model(dict(SMALL, vector_a=8, vector_b=8, acc_epilogue="clamp"), p, x, w, lo=-4.0, hi=6.0)
    np.testing.assert_array_equal(D, np.clip(ref, -4, 6))


# -- 4. validity ------------------------------------------------------------------------

COMPILE = textwrap.dedent("""
    import sys, json, re
    import llvmlite.binding as llvm
    llvm.initialize_all_targets(); llvm.initialize_all_asmprinters()
    m = llvm.parse_assembly(sys.stdin.read()); m.verify()
    tm = llvm.Target.from_triple('amdgcn-amd-amdhsa').create_target_machine(cpu='gfx1250', opt=3)
    asm = tm.emit_assembly(m)
    def g(k):
        mm = re.search(r"\\s" + re.escape(k) + r":\\s+(\\d+)", asm)
        return int(mm.group(1)) if mm else -1
    print(json.dumps({k: g(k) for k in ('.vgpr_count', '.vgpr_spill_count', '.sgpr_spill_count',
                                         '.private_segment_fixed_size', '.group_segment_fixed_size')}))
""")

COMPILE_SPECS = {
    "mem_default_64": {},
    "mem_cshuffle_64_fp16": {"epilogue": "cshuffle", "dtype": "fp16"},
    "mem_default_128": {"tile_m": 128, "tile_n": 128},
    "wavelet_cshuffle": {"pipeline": "wavelet", "num_load_waves": 2, "epilogue": "cshuffle"},
    "spk_default": {"split_k": 4, "split_k_cluster": 0},
    "spk_wavelet_cshuffle": {"split_k": 4, "split_k_cluster": 0, "pipeline": "wavelet", "epilogue": "cshuffle"},
    "skc4_default": {"split_k": 4, "split_k_cluster": 4},
    "skc15_cshuffle": {"split_k": 4, "split_k_cluster": 15, "epilogue": "cshuffle"},
    "bias_cshuffle": {"acc_epilogue": "bias", "epilogue": "cshuffle"},
    "clamp_va1": {"acc_epilogue": "clamp", "vector_a": 1, "vector_b": 2},
}


@pytest.mark.parametrize("key", sorted(COMPILE_SPECS))
def test_compiles_without_spills(key):
    pytest.importorskip("llvmlite.binding")
    spec = COMPILE_SPECS[key]
    flavors = ("llvm23",) if spec.get("split_k_cluster") else ("llvm22", "llvm23")
    for fl in flavors:
        _, text = lower(spec, flavor=fl)
        r = subprocess.run([sys.executable, "-c", COMPILE], input=text, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        info = json.loads(r.stdout)
        assert info[".vgpr_spill_count"] == 0 and info[".sgpr_spill_count"] == 0, info
        assert info[".private_segment_fixed_size"] == 0, info
        s = normalize(CIG.FAMILY, CIG.FIELDS, spec)
        assert info[".group_segment_fixed_size"] == CIG.lds_bytes(s), info


STORES = textwrap.dedent("""
    import sys, json, re, collections
    import llvmlite.binding as llvm
    llvm.initialize_all_targets(); llvm.initialize_all_asmprinters()
    m = llvm.parse_assembly(sys.stdin.read()); m.verify()
    tm = llvm.Target.from_triple('amdgcn-amd-amdhsa').create_target_machine(cpu='gfx1250', opt=3)
    asm = tm.emit_assembly(m)
    print(json.dumps(collections.Counter(re.findall(r"^\\s+(buffer_store_\\w+|ds_\\w+)", asm, re.M))))
""")


@pytest.mark.parametrize("spec,wide", [
    ({}, {"buffer_store_b128": 4, "buffer_store_b16": 32, "ds_store_b16": 32}),
    ({"epilogue": "cshuffle"}, {"buffer_store_b128": 4, "buffer_store_b64": 8}),
    ({"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1}, {"buffer_store_b128": 1, "buffer_store_b16": 8}),
    ({"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle"}, {"buffer_store_b128": 9, "buffer_store_b64": 2}),
    ({"split_k": 4, "split_k_cluster": 0}, {"buffer_store_b128": 8, "buffer_store_b32": 32, "ds_store_2addr_b32": 16}),
    ({"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1, "split_k": 2, "split_k_cluster": 0},
     {"buffer_store_b128": 2, "buffer_store_b32": 8, "ds_store_2addr_b32": 4}),
], ids=["default", "cshuffle", "default_16x16", "cluster_fold", "default_slab", "default_slab_16x16"])
def test_sixteen_byte_d_stores(spec, wide):
    """The compiled epilogues (llvmlite / LLVM 22.1, gfx1250): the wide D path is
    16-byte buffer stores (default: 1 per 16x16 accumulator through the per-wave
    LDS transpose, 8 ds_store_b16 each; cshuffle: 1 per 8 channels), next to the
    narrow path kept for K or kpg not a multiple of 8. Two-stage default slabs: 2
    16-byte stores per accumulator through the fp32 transpose (8 b32 LDS stores,
    paired by LLVM into 4 ds_store_2addr_b32), next to the 8 scalar stores of the
    narrow path."""
    pytest.importorskip("llvmlite.binding")
    _, text = lower(spec, flavor="llvm23")
    r = subprocess.run([sys.executable, "-c", STORES], input=text, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    for k, v in wide.items():
        assert got.get(k, 0) == v, (k, got)


@pytest.mark.parametrize("spec,block", [({}, "epi_wide"), ({"split_k": 4, "split_k_cluster": 0}, "slab_wide"),
                                        ({"split_k": 4, "split_k_cluster": 4}, "slab_wide")],
                         ids=["d", "slab", "cluster_slab"])
def test_transpose_wave_barriers(spec, block):
    """The per-wave LDS transpose: per accumulator, its LDS stores, one
    wave.barrier, its LDS loads; a wave.barrier before every accumulator's stores
    but the first (RAW and WAR across lanes). Slabs: 2 <4 x float> loads and 2
    v4f32 buffer stores per accumulator, behind ((K | kpg) & 3) == 0."""
    _, text = lower(spec)
    body = _blocks(text)[block]
    seq = []
    for ln in body:
        if "@llvm.amdgcn.wave.barrier()" in ln:
            seq.append("W")
        elif ln.startswith("store ") and "addrspace(3)" in ln:
            seq.append("S")
        elif " = load " in ln and "addrspace(3)" in ln:
            seq.append("L")
    nacc = 4  # 64x64 tile, 2x2 waves: 2x2 accumulators per wave
    nld = 2 if spec.get("split_k", 1) > 1 else 1
    one = "S" * 8 + "W" + "L" * nld
    assert "".join(seq) == "W".join([one] * nacc)
    if spec.get("split_k", 1) > 1:
        assert sum("load <4 x float>" in ln for ln in body) == 2 * nacc
        assert sum("@llvm.amdgcn.raw.ptr.buffer.store.v4f32" in ln for ln in body) == 2 * nacc
        assert re.search(r"%ws_klow\d* = and i32 %ws_kk\d*, 3\n", text), "slab alignment test"
        assert re.search(r"br i1 %ws_wide\d*, label %slab_wide\d*, label %slab_narrow", text)
    assert "declare void @llvm.amdgcn.wave.barrier()" in text


def test_opt19_verifies_llvm20(tmp_path):
    from verify_helpers import need_opt19
    need_opt19()  # fails under CI without opt-19, like the verify oracle's llvm20 tests
    opt = shutil.which("opt-19")
    for i, spec in enumerate(({}, {"split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"},
                              {"pipeline": "wavelet", "acc_epilogue": "bias", "vector_a": 1})):
        _, text = lower(spec, flavor="llvm20")
        f = tmp_path / f"k{i}.ll"
        f.write_text(text)
        r = subprocess.run([opt, "-passes=verify", "-disable-output", str(f)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


# -- 7. the main loop: loop-carried im2col addressing and the software pipeline ----------

def _blocks(text: str) -> dict:
    """Block label (numeric suffix dropped) -> its instruction lines, for the kernel body."""
    out, cur = {}, None
    for ln in text.splitlines():
        if ln and not ln.startswith((" ", "define", "declare", "}", ";", "@", "!", "attributes", "target")) \
                and ln.endswith(":"):
            cur = ln[:-1].rstrip("0123456789")
            out[cur] = []
        elif cur and ln.startswith("  "):
            out[cur].append(ln.strip())
    return out


@pytest.mark.parametrize("spec", [{}, {"tile_m": 128, "tile_n": 128, "tile_k": 64}, {"vector_a": 1, "vector_b": 1},
                                  {"split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"}, {"pipeline": "wavelet"}],
                         ids=["mem", "mem128", "va1", "spk", "wavelet"])
def test_main_loop_has_no_division(spec):
    """The K-tile loop computes every A/B offset from loop-carried state: no udiv/urem
    in its blocks (the divisions happen once per workgroup, in the entry block)."""
    _, text = lower(spec)
    blocks = _blocks(text)
    loop = [b for b in blocks if b in ("kloop", "wl_load", "wl_compute", "wl_join")]
    assert "kloop" in loop
    for b in loop:
        bad = [ln for ln in blocks[b] if " udiv " in ln or " urem " in ln]
        assert bad == [], (b, bad)
    assert any(" udiv " in ln for ln in blocks["entry"])


def _line_kind(ln: str):
    """A K loop line's kind: load, fence (sched.barrier 0), wmma, lds_store, barrier;
    None for the others."""
    if "@llvm.amdgcn.raw.ptr.buffer.load" in ln:
        return "load"
    if "@llvm.amdgcn.sched.barrier(i32 0)" in ln:
        return "fence"
    if "@llvm.amdgcn.wmma" in ln:
        return "wmma"
    if ln.startswith("store ") and "addrspace(3)" in ln:
        return "lds_store"
    if "@llvm.amdgcn.s.barrier()" in ln:
        return "barrier"
    return None


def _loop_kinds(spec: dict) -> list:
    """The K loop's loads, scheduling barriers, WMMAs, LDS stores and barriers in order,
    runs of one kind squeezed to one, and the count of each kind."""
    _, text = lower(spec)
    kinds = [k for k in map(_line_kind, _blocks(text)["kloop"]) if k]
    squeezed = [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]
    return squeezed, {k: kinds.count(k) for k in set(kinds)}


def test_main_loop_pipeline_order():
    """mem, 64x64x32 (4 WMMAs per wave and tile): two halves per iteration, each the
    held tile's LDS stores, the next tile's buffer loads, sched.barrier(0), the WMMAs,
    sched.barrier(0), the barrier; 128x128x64's K walk (beside its uniform-tap loop,
    tap_beside) is the one-tile loop: tile t+1's buffer loads, sched.barrier(0), the
    WMMAs of K step 0, sched.barrier(0) (one K step's fragments live at a time), those
    of K step 1, sched.barrier(0), the LDS stores; wavelet has no scheduling barrier."""
    half = ["lds_store", "load", "fence", "wmma", "fence", "barrier"]
    squeezed, counts = _loop_kinds({})
    assert squeezed == half + half, squeezed
    assert counts == {"load": 8, "fence": 4, "wmma": 8, "lds_store": 8, "barrier": 2}
    squeezed, counts = _loop_kinds({"tile_m": 128, "tile_n": 128, "tile_k": 64})
    assert squeezed == ["load", "fence", "wmma", "fence", "wmma", "fence", "lds_store", "barrier"], squeezed
    assert counts["load"] == 16 and counts["wmma"] == 32 and counts["lds_store"] == 16 and counts["fence"] == 3
    _, wtext = lower({"pipeline": "wavelet"})
    assert "sched.barrier" not in wtext


@pytest.mark.parametrize("spec,pipelined", [
    ({}, True), ({"tile_k": 64, "waves_m": 4, "waves_n": 1}, False),
    ({"tile_m": 32, "tile_n": 32, "waves_m": 1, "waves_n": 1}, False),
    ({"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1}, False),
    ({"vector_a": 4}, False), ({"vector_a": 3, "vector_b": 3}, False), ({"pipeline": "wavelet"}, False)])
def test_which_tiles_pipeline_two_deep(spec, pipelined):
    """2 to 4 WMMAs per wave and K tile, 16-byte A and B slots, at most 4 of them per
    thread (the one-wave 32x32 tile has 8), mem pipeline: the unrolled two-deep loop (its barriers' fences LDS-only, the odd half's block
    absent: one block per iteration); else the one-tile double-buffered loop. The LDS-only
    fences are the two-deep loop's and the uniform-tap loop's (beside the 32x32x32 and
    16x16x32 w1x1 one-tile loops too: tap_beside)."""
    _, text = lower(spec)
    full = normalize(CIG.FAMILY, CIG.FIELDS, spec)
    assert CIG.two_deep(full) is pipelined
    tap = CIG.tap_loop_kernel(full)
    assert tap == (pipelined or spec in ({"tile_m": 32, "tile_n": 32, "waves_m": 1, "waves_n": 1},
                                         {"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1}))
    assert (", !mmra !1" in text) == tap
    assert ('!1 = !{!"amdgpu-synchronize-as", !"local"}' in text.split("\n")) == tap
    assert ("%buf" in text) != pipelined   # the dynamic buffer index t&1 of the one-tile loop


def _walk(k_begin, ntiles, tk, cpg, X, dh, dw, C, W):
    """The K-state recurrence of conv_implicit_gemm/slots.py Slots.advance in plain integers: yields
    (c, xd, yd, ko) per tile, starting from the divisions at k_begin."""
    sa, sb = tk // cpg, tk % cpg
    ay, ax = sa // X, sa % X
    pixb, rowb = 2 * C, 2 * C * W
    kstep = 2 * sb + ax * dw * pixb + ay * dh * rowb
    kstepc = kstep + dw * pixb - 2 * cpg
    dcx = dh * rowb - X * dw * pixb
    c, q = k_begin % cpg, k_begin // cpg
    xd, yd = (q % X) * dw, (q // X) * dh
    ko = yd * rowb + xd * pixb + 2 * c
    for _ in range(ntiles):
        yield c, xd, yd, ko
        c1 = c + sb
        cyc = c1 >= cpg
        c = c1 - (cpg if cyc else 0)
        xd1 = xd + (ax * dw + dw if cyc else ax * dw)
        cyx = xd1 >= X * dw
        xd = xd1 - (X * dw if cyx else 0)
        yd = yd + (ay * dh + dh if cyx else ay * dh)
        ko = ko + (kstepc if cyc else kstep) + (dcx if cyx else 0)


@pytest.mark.parametrize("tk", [32, 64, 128])
def test_k_state_walk_matches_division(tk):
    """The division-free walk equals r % cpg, (r / cpg) % X, (r / cpg) / X and the
    byte offset for every tile, over cpg 1..40 (dividing tile_k or not, below and
    above it), X 1..7, dilations 1..3 and slice starts mid filter row."""
    rng = np.random.default_rng(tk)
    for _ in range(400):
        cpg, X = int(rng.integers(1, 41)), int(rng.integers(1, 8))
        dh, dw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        C, W = cpg * int(rng.integers(1, 4)), int(rng.integers(1, 30))
        kb = int(rng.integers(0, 4 * cpg * X + 1))
        for t, (c, xd, yd, ko) in enumerate(_walk(kb, 12, tk, cpg, X, dh, dw, C, W)):
            r = kb + t * tk
            x, y = (r // cpg) % X, (r // cpg) // X
            assert (c, xd, yd) == (r % cpg, x * dw, y * dh), (cpg, X, kb, t)
            assert ko == 2 * ((y * dh * W + x * dw) * C + r % cpg)

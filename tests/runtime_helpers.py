"""Helpers of the runtime tests: synthetic code objects (no linker needed for
the launch logic) and a fake "GPU" that plays the conv kernels in numpy over
the fake HIP's host-backed memory, so the whole pipeline runs without a GPU."""
from __future__ import annotations

import ctypes
import os
import re

import numpy as np
import pytest

from fake_hip import read_params
from parity.runtime.codeobj import CodeObject, text_sha256
from parity.launch.errors import LinkerMissing
from parity.launch.kernarg import variant_layout


# The layer forms the GPU tests run (tests/test_runtime_gpu.py); test_runtime_codeobj builds them here.
LAYER = dict(N=2, C=64, H=10, W=9, K=96, Y=3, X=3, pad_h=1, pad_w=1)
GPU_FORMS = {
    "plain": dict(LAYER),
    "plain_cshuffle_strided": dict(LAYER, epilogue="cshuffle", stride_h=2, stride_w=2),
    "two_stage_d3": dict(LAYER, split_k=2, split_k_cluster=0, degree=3),
    "two_stage_d8_grouped": dict(LAYER, split_k=2, split_k_cluster=0, degree=8, groups=2),
    "cluster_s4": dict(LAYER, split_k=4, split_k_cluster=4, degree=4),
    "cluster_s2_cshuffle": dict(LAYER, split_k=2, split_k_cluster=2, degree=2, epilogue="cshuffle"),
}


def variant_of_kernel(name: str) -> str:
    if name.startswith("conv_fwd_split_k_reduce"):
        return "reduce"
    if re.search(r"_skc\d+$", name):
        return "cluster"
    return "two_stage" if name.endswith("_spk") else "plain"


_ACC = ("bias", "scale", "relu", "clamp", "bias_relu", "bias_clamp")


def acc_of_kernel(name: str) -> str:
    """The accumulator epilogue a kernel name carries (identity when none)."""
    if name.startswith("conv_fwd_split_k_reduce"):
        m = re.search(r"_d\d+_(\w+)$", name)
        return m.group(1) if m and m.group(1) in _ACC else "identity"
    m = re.search(r"_va\d+_vb\d+_(\w+?)(?:_spk|$)", name)
    return m.group(1) if m and m.group(1) in _ACC else "identity"


def _layout_of(kernel: str):
    v = variant_of_kernel(kernel)
    return variant_layout(v, acc_of_kernel(kernel) if v == "reduce" else "identity")


def fake_metadata(kernel: str) -> dict:
    slots, _ = _layout_of(kernel)
    meta = {".name": kernel, ".args": [{".name": s.name, ".offset": s.offset, ".size": s.size,
                                        ".value_kind": "by_value"} for s in slots]
            + [{".offset": 176, ".size": 4, ".value_kind": "hidden_block_count_x"}]}
    m = re.search(r"_skc(\d+)$", kernel)
    if m:
        meta[".cluster_dims"] = [1, 1, int(m.group(1))]
    return meta


def fake_code(kernel: str, text: str = "", flavor: str = "llvm23") -> CodeObject:
    return CodeObject(kernel, "gfx1250", flavor, text_sha256(text), b"\x7fELF-fake:" + kernel.encode(),
                      fake_metadata(kernel))


class FakeCache:
    """Duck-typed CodeObjectCache: records builds, returns synthetic code objects."""

    def __init__(self):
        self.built = []

    def build(self, kernel, text, arch, flavor):
        self.built.append((kernel, arch, flavor))
        return fake_code(kernel, text, flavor)


def linker_or_skip():
    """The LLVM 22 linker; a missing one fails under CI (bootstrap installs it), skips elsewhere."""
    from parity.runtime.codeobj import find_linker
    try:
        return find_linker()
    except LinkerMissing as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have the linker (scripts/bootstrap.sh installs lld-22): {exc}")
        pytest.skip(f"no LLVM 22 linker here: {exc}")


# ---------------------------------------------------------------- a numpy "GPU"

def _bits_to_f32(bits, dtype):
    if dtype == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
    return bits.view(np.float16).astype(np.float32)


def _read(addr, n, dt):
    return np.frombuffer(ctypes.string_at(addr, n), dt).copy()


def _write(addr, a):
    a = np.ascontiguousarray(a)
    ctypes.memmove(addr, a.ctypes.data, a.nbytes)


class NumpyGpu:
    """``fake.on_launch``: runs the kernel a launch names, in numpy, from its kernarg values."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.launches = []

    def __call__(self, fake, function, params, grid, block, cluster):
        from parity.sim.reference import cast_bits, conv_fwd
        kernel = function.split(":", 1)[1]
        variant = variant_of_kernel(kernel)
        epi = acc_of_kernel(kernel)
        slots, _ = _layout_of(kernel)
        v = read_params(params, slots)
        self.launches.append((kernel, variant, grid, cluster))
        if variant == "reduce":
            ws = _read(v["ws_ptr"], v["ws_bytes"], np.float32).reshape(v["ks_count"], -1)
            acc = ws[0].copy()
            for s in range(1, ws.shape[0]):
                acc = (acc + ws[s]).astype(np.float32)
            acc = self._epilogue(epi, v, acc.reshape(-1, v["K"])).ravel()
            _write(v["d_ptr"], cast_bits(acc, self.dtype))
            return
        x = _bits_to_f32(_read(v["x_ptr"], v["x_bytes"], np.uint16), self.dtype)
        w = _bits_to_f32(_read(v["w_ptr"], v["w_bytes"], np.uint16), self.dtype)
        x = x.reshape(v["N"], v["H"], v["W"], v["C"])
        w = w.reshape(v["K"], v["Y"], v["X"], v["cpg"])
        d = conv_fwd(x, w, groups=v["groups"], stride=(v["stride_h"], v["stride_w"]),
                     padding=(v["pad_h"], v["pad_w"]), dilation=(v["dil_h"], v["dil_w"])).astype(np.float32)
        if variant == "two_stage":  # raw partials: Stage 2 applies the epilogue
            ws = np.zeros((v["ks_count"],) + d.shape, np.float32)
            half = d / 2
            ws[0], ws[-1] = half, (d - half) if v["ks_count"] > 1 else d
            _write(v["ws_ptr"], ws)
        else:  # plain, or the cluster fold: the epilogue once, before the cast
            _write(v["d_ptr"], cast_bits(self._epilogue(epi, v, d), self.dtype))

    @staticmethod
    def _epilogue(epi, v, d):
        """The accumulator epilogue on fp32 ``d`` (channels last) from the kernarg values."""
        from parity.sim.numerics_fused import epilogue_f32
        if epi == "identity":
            return d
        bias = None
        if epi.startswith("bias"):   # bias, bias_relu, bias_clamp
            n = v["bias_bytes"] if "bias_bytes" in v else d.shape[-1] * 4
            bias = _read(v["bias_ptr"], n, np.float32)
        caller = {k: v[k] for k in ("scale", "clamp_lo", "clamp_hi") if k in v}
        ch = np.broadcast_to(np.arange(d.shape[-1]), d.shape)
        return epilogue_f32(epi, d.astype(np.float32), ch, bias, caller)

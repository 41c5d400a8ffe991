"""Runtime launch logic against a fake HIP (tests/fake_hip.py): arguments,
the cluster attribute's value, bind keeping the cluster shape, Stage 2 only
when needed, and every error path's message. No GPU, no linker."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from fake_hip import FakeHip, hipError_t, read_params
from runtime_helpers import FakeCache, NumpyGpu, fake_code
from parity.runtime import (ConvRun, Hip, HipError, HipUnavailable, Kernel, LaunchConfigError, Launcher,
                                   check_cluster, cluster_attribute, find_gfx1250, launch_plan, load_hip,
                                   prepare_launch, read_cluster_attribute)
from parity.launch.kernarg import check_against_metadata, layout, variant_layout

CLUSTER4 = dict(split_k=4, split_k_cluster=4, degree=4, C=64, K=64, H=8, W=8)
TWO_STAGE = dict(split_k=2, split_k_cluster=0, degree=3, C=64, K=64, H=8, W=8)
PLAIN = dict(C=64, K=64, H=8, W=8)


def hip_fake(**kw):
    f = FakeHip(**kw)
    return f, Hip(f)


def kernel_for(h, spec, flavor="llvm23"):
    plan = launch_plan(spec, "gfx1250", flavor)
    return plan, Kernel(h, fake_code(plan.kernel))


# ---------------------------------------------------------------- kernarg layout

def test_layout_follows_the_amdgpu_rule():
    slots, size = layout([("a", "i32"), ("p", "in_ptr"), ("b", "i32"), ("c", "f32"), ("q", "i64")])
    assert [(s.name, s.offset) for s in slots] == [("a", 0), ("p", 8), ("b", 16), ("c", 20), ("q", 24)]
    assert size == 32


def test_conv_layouts():
    s, n = variant_layout("plain")
    off = {x.name: x.offset for x in s}
    assert off["x_ptr"] == 0 and off["scale"] == 56 and off["clamp_hi"] == 64 and off["N"] == 68
    assert off["Kgemm"] == 144 and n == 152
    s, n = variant_layout("cluster")
    assert {x.name: x.offset for x in s}["ws_ptr"] == 152 and n == 176
    s, n = variant_layout("reduce")
    assert [(x.name, x.offset) for x in s] == [("ws_ptr", 0), ("ws_bytes", 8), ("d_ptr", 16), ("d_bytes", 24),
                                              ("M", 32), ("K", 36), ("ks_count", 40)] and n == 48


def test_layout_mismatch_with_code_object_metadata_is_an_error():
    slots, _ = variant_layout("reduce")
    meta = {".args": [{".name": s.name, ".offset": s.offset, ".size": s.size} for s in slots]}
    check_against_metadata(slots, meta, "k")
    meta[".args"][4][".offset"] = 36
    with pytest.raises(LaunchConfigError, match="argument M is at offset 32 size 4 by the AMDGPU layout rule"):
        check_against_metadata(slots, meta, "k")
    with pytest.raises(LaunchConfigError, match="6 explicit arguments, the ABI has 7"):
        check_against_metadata(slots, {".args": meta[".args"][:6]}, "k")


# ---------------------------------------------------------------- plain launch

def test_plain_launch_arguments_by_name_from_the_plan():
    f, h = hip_fake()
    plan, k = kernel_for(h, PLAIN)
    assert f.names() == ["hipModuleLoadData", "hipModuleGetFunction"]
    assert f.calls_of("hipModuleGetFunction")[0][1] == plan.kernel.encode()
    L = Launcher(k, plan.variant, plan.grid, plan.block, plan.cluster)
    p = prepare_launch(L, plan.args, {"x": 0x1000, "w": 0x2000, "d": 0x3000})
    p.launch("stream7")
    p.launch("stream7")
    calls = f.calls_of("hipModuleLaunchKernel")
    assert len(calls) == 2 and "hipDrvLaunchKernelEx" not in f.names()
    fn, grid, block, shared, stream, params, extra = calls[0]
    assert fn == f"function:{plan.kernel}" and grid == plan.grid and block == plan.block
    assert shared == 0 and stream == "stream7" and extra is None
    v = read_params(params, L.slots)
    assert v["x_ptr"] == 0x1000 and v["w_ptr"] == 0x2000 and v["d_ptr"] == 0x3000
    assert v["bias_ptr"] == 0 and v["scale"] == 0.0
    for name in ("N", "C", "H", "W", "K", "M", "Kgemm", "x_bytes", "d_bytes"):
        assert v[name] == plan.args[name], name
    assert calls[1][5] == params  # packed once, the same buffer every launch


def test_caller_scalars_and_missing_buffers():
    f, h = hip_fake()
    plan, k = kernel_for(h, dict(PLAIN, acc_epilogue="clamp"))
    L = Launcher(k, plan.variant, plan.grid, plan.block)
    with pytest.raises(LaunchConfigError, match="clamp_lo is the caller's epilogue value"):
        prepare_launch(L, plan.args, {"x": 1, "w": 2, "d": 3})
    with pytest.raises(LaunchConfigError, match="needs device buffer 'd', which was not given"):
        prepare_launch(L, plan.args, {"x": 1, "w": 2}, {"clamp_lo": -1, "clamp_hi": 1})
    p = prepare_launch(L, plan.args, {"x": 1, "w": 2, "d": 3}, {"clamp_lo": -1.5, "clamp_hi": 2.25})
    v = read_params(p.kernarg.params_address, L.slots)
    assert (v["clamp_lo"], v["clamp_hi"]) == (-1.5, 2.25)


def test_bind_rejects_missing_or_extra_names():
    f, h = hip_fake()
    plan, k = kernel_for(h, PLAIN)
    L = Launcher(k, plan.variant, plan.grid, plan.block)
    with pytest.raises(LaunchConfigError, match=r"missing: Kgemm; extra: -"):
        L.bind({n: 0 for n in list(L.kinds)[:-1]})
    with pytest.raises(LaunchConfigError, match=r"extra: ks"):
        L.bind(dict({n: 0 for n in L.kinds}, ks=1))
    with pytest.raises(LaunchConfigError, match="does not fit i32"):
        L.bind(dict({n: 0 for n in L.kinds}, M=1 << 31))


# ---------------------------------------------------------------- cluster launch

def test_cluster_launch_goes_through_launch_ex_with_the_attribute():
    f, h = hip_fake()
    plan, k = kernel_for(h, CLUSTER4)
    assert plan.cluster == (1, 1, 4) and not plan.needs_stage2
    L = Launcher(k, plan.variant, plan.grid, plan.block, plan.cluster)
    p = prepare_launch(L, plan.args, {"x": 1, "w": 2, "d": 3, "ws": 4})
    assert p.cluster == (1, 1, 4)
    p.launch("s1")
    assert "hipModuleLaunchKernel" not in f.names()
    (cfg, fn, params, extra), = f.calls_of("hipDrvLaunchKernelEx")
    assert (cfg["gridDimX"], cfg["gridDimY"], cfg["gridDimZ"]) == plan.grid
    assert (cfg["blockDimX"], cfg["blockDimY"], cfg["blockDimZ"]) == plan.block
    assert cfg["hStream"] == "s1" and cfg["numAttrs"] == 1 and cfg["sharedMemBytes"] == 0
    assert cfg["attr"] == (4, (1, 1, 4))           # hipLaunchAttributeClusterDimension, clusterDim
    assert extra is None
    v = read_params(params, L.slots)
    assert v["ws_ptr"] == 4 and v["ks_count"] == 4 and v["ks"] == plan.ks


def test_cluster_attribute_bytes():
    f = FakeHip()
    a = cluster_attribute(f, (2, 3, 5))
    raw = bytes((__import__("ctypes").c_ubyte * 72).from_address(int(a)))
    assert raw[:4] == (4).to_bytes(4, "little") and raw[4:8] == b"\0" * 4
    assert raw[8:20] == b"".join(v.to_bytes(4, "little") for v in (2, 3, 5))
    assert raw[20:] == b"\0" * 52
    assert read_cluster_attribute(a) == (4, (2, 3, 5))
    assert a.id == f.hipLaunchAttributeID.hipLaunchAttributeClusterDimension


def test_cluster_attribute_refuses_a_short_struct():
    f = FakeHip()

    class Short(f.hipLaunchAttribute_st):
        def c_sizeof(self):
            return 8
    f.hipLaunchAttribute_st = Short
    with pytest.raises(LaunchConfigError, match="value union at offset 8"):
        cluster_attribute(f, (1, 1, 2))


def test_bind_keeps_the_cluster_shape():
    f, h = hip_fake()
    plan, k = kernel_for(h, CLUSTER4)
    L = Launcher(k, plan.variant, plan.grid, plan.block, plan.cluster)
    p = L.bind({n: 0 for n in L.kinds})
    assert p.cluster == L.cluster == (1, 1, 4)
    with pytest.raises(AttributeError):
        p.cluster = None  # read-only: a prepared cluster launch cannot become a plain one
    for _ in range(3):
        p.launch()
    assert f.names().count("hipDrvLaunchKernelEx") == 3 and "hipModuleLaunchKernel" not in f.names()
    assert all(c[0]["attr"] == (4, (1, 1, 4)) for c in f.calls_of("hipDrvLaunchKernelEx"))


def test_cluster_kernel_never_launches_plain():
    f, h = hip_fake()
    plan, k = kernel_for(h, CLUSTER4)
    with pytest.raises(LaunchConfigError, match="cluster barrier synchronising nothing"):
        Launcher(k, plan.variant, plan.grid, plan.block, None)
    with pytest.raises(LaunchConfigError, match=r"built for cluster \(1, 1, 4\), but cluster \(1, 1, 2\)"):
        Launcher(k, plan.variant, plan.grid, plan.block, (1, 1, 2))
    plan2, k2 = kernel_for(h, TWO_STAGE)
    with pytest.raises(LaunchConfigError, match="has no cluster dims, but cluster"):
        Launcher(k2, plan2.variant, plan2.grid, plan2.block, (1, 1, 3))
    assert not any(n.startswith(("hipModuleLaunch", "hipDrvLaunch")) for n in f.names())


def test_check_cluster_shape():
    assert check_cluster("k", (2, 3, 8), (1, 1, 4), (1, 1, 4)) == (1, 1, 4)
    with pytest.raises(LaunchConfigError, match="grid z = 6 is not a multiple of cluster z = 4"):
        check_cluster("k", (2, 3, 6), (1, 1, 4), (1, 1, 4))
    with pytest.raises(LaunchConfigError, match="grid x = 3 is not a multiple of cluster x = 2"):
        check_cluster("k", (3, 1, 1), (2, 1, 1), (2, 1, 1))
    with pytest.raises(LaunchConfigError, match="has 32 workgroups, above the limit 16"):
        check_cluster("k", (4, 1, 8), (4, 1, 8), (4, 1, 8))
    with pytest.raises(LaunchConfigError, match="cluster must be three positive integers"):
        check_cluster("k", (4, 1, 8), (1, 0, 4), (1, 1, 4))
    assert check_cluster("k", (4, 1, 8), (4, 1, 8), (4, 1, 8), max_volume=32) == (4, 1, 8)


def test_launch_ex_is_the_only_caller_of_hipDrvLaunchKernelEx():
    root = Path(__file__).resolve().parents[1]
    sites = []
    for p in list((root / "python_engine").rglob("*.py")) + list((root / "parity").rglob("*.py")):
        for i, line in enumerate(p.read_text().splitlines()):
            if re.search(r"hipDrvLaunchKernelEx\b", line) and not line.lstrip().startswith("#"):
                if "call(\"hipDrvLaunchKernelEx\"" in line or re.search(r"\.hipDrvLaunchKernelEx\(", line):
                    sites.append(f"{p.relative_to(root)}:{i + 1}")
    assert len(sites) == 1 and sites[0].startswith("parity/runtime/launch.py"), sites


# ---------------------------------------------------------------- errors

def test_launch_failure_names_the_call_error_and_kernel():
    f, h = hip_fake()
    plan, k = kernel_for(h, CLUSTER4)
    p = Launcher(k, plan.variant, plan.grid, plan.block, plan.cluster).bind(
        {s.name: 0 for s in variant_layout("cluster")[0]})
    f.fail["hipDrvLaunchKernelEx"] = hipError_t.hipErrorInvalidClusterSize
    with pytest.raises(HipError) as e:
        p.launch()
    assert str(e.value).startswith("hipDrvLaunchKernelEx failed: hipErrorInvalidClusterSize (920): "
                                   f"{plan.kernel} grid {plan.grid}")
    assert "cluster (1, 1, 4)" in str(e.value) and e.value.code == 920
    plan2, k2 = kernel_for(h, PLAIN)
    p2 = Launcher(k2, plan2.variant, plan2.grid, plan2.block).bind({s.name: 0 for s in variant_layout("plain")[0]})
    f.fail["hipModuleLaunchKernel"] = hipError_t.hipErrorLaunchFailure
    with pytest.raises(HipError, match=r"hipModuleLaunchKernel failed: hipErrorLaunchFailure \(719\)"):
        p2.launch()


def test_module_load_errors():
    f, h = hip_fake()
    f.fail["hipModuleLoadData"] = hipError_t.hipErrorInvalidImage
    with pytest.raises(HipError, match=r"hipModuleLoadData failed: hipErrorInvalidImage \(200\): loading k1"):
        Kernel(h, fake_code("k1"))
    f.fail["hipModuleGetFunction"] = hipError_t.hipErrorNotFound
    with pytest.raises(HipError, match="hipModuleGetFunction failed: hipErrorNotFound .*kernel k2"):
        Kernel(h, fake_code("k2"))
    assert f.names()[-1] == "hipModuleUnload"  # the module is not leaked


def test_unknown_error_code_still_has_a_message():
    class Bare:
        def hipMalloc(self, n):
            return (77, None)
    with pytest.raises(HipError, match=r"hipMalloc failed: hipError 77 \(77\)"):
        Hip(Bare()).call("hipMalloc", 4)


def test_missing_hip_python(monkeypatch):
    import builtins
    real = builtins.__import__

    def imp(name, *a, **kw):
        if name == "hip" or name.startswith("hip."):
            raise ModuleNotFoundError("No module named 'hip'")
        return real(name, *a, **kw)
    monkeypatch.setattr(builtins, "__import__", imp)
    with pytest.raises(HipUnavailable, match=r"cannot import hip-python .*pip install 'splitk-parity\[runtime\]'"):
        load_hip()
    with pytest.raises(HipUnavailable, match="cannot import hip-python"):
        Hip()


def test_missing_function_in_binding():
    with pytest.raises(HipUnavailable, match="has no hipDrvLaunchKernelEx"):
        Hip(object()).call("hipDrvLaunchKernelEx")


def test_find_gfx1250():
    f, h = hip_fake()
    assert find_gfx1250(h) == 0 and f.calls_of("hipSetDevice") == [(0,)]
    f, h = hip_fake(arch="gfx942:sramecc+:xnack-", devices=2)
    with pytest.raises(HipUnavailable, match="no gfx1250 GPU: device 0 is gfx942:sramecc"):
        find_gfx1250(h)
    f, h = hip_fake(devices=0)
    with pytest.raises(HipUnavailable, match="no HIP device found"):
        find_gfx1250(h)
    f, h = hip_fake()
    f.fail["hipGetDeviceCount"] = hipError_t.hipErrorNoDevice
    with pytest.raises(HipUnavailable, match="no GPU: hipGetDeviceCount failed .*hipErrorNoDevice"):
        find_gfx1250(h)


# ---------------------------------------------------------------- the pipeline

def _run(spec, dtype="bf16", flavor="llvm23"):
    from parity.runtime.pipeline import random_inputs
    f, h = hip_fake()
    gpu = NumpyGpu(dtype)
    f.on_launch = gpu
    cache = FakeCache()
    spec = dict(spec, dtype=dtype)
    with ConvRun(spec, "gfx1250", flavor, hip=h, cache=cache) as run:
        x, w, xb, wb = random_inputs(spec, 1)
        run.upload(xb, wb)
        run.run()
        d = run.download()
        t = run.time(reps=5, warmup=1)
    return f, gpu, cache, run, (x, w, d), t


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("spec", [PLAIN, TWO_STAGE, CLUSTER4], ids=["plain", "two_stage", "cluster"])
def test_pipeline_stage2_only_when_needed(spec, dtype):
    from parity.runtime.pipeline import check_output
    f, gpu, cache, run, (x, w, d), t = _run(spec, dtype)
    plan = run.plan
    kinds = [v for _, v, _, _ in gpu.launches]
    per_run = ["two_stage", "reduce"] if plan.needs_stage2 else [plan.variant]
    assert kinds == per_run * (1 + 1 + 5)  # run, warmup, timed
    assert len(cache.built) == (2 if plan.needs_stage2 else 1)
    allocs = [a[0] for a in f.calls_of("hipMalloc")]
    assert allocs[:3] == [plan.args["x_bytes"], plan.args["w_bytes"], plan.args["d_bytes"]]
    assert (plan.workspace_bytes in allocs[3:]) == bool(plan.workspace_bytes)
    if plan.needs_stage2:
        assert gpu.launches[1][2] == ((plan.stage2_args["M"] * plan.stage2_args["K"] + 1023) // 1024, 1, 1)
    ok, ratio, nbad = check_output(dict(spec, dtype=dtype), x, w, d)
    assert ok, (ratio, nbad)
    streams = {a[-1] for a in f.calls_of("hipMemcpyAsync")}
    assert len(streams) == 1  # every copy on the run's one stream
    assert t.median_ms == 0.5 and t.tflops > 0
    # host copies only through pinned buffers: every memcpy's host side is a hipHostMalloc address
    assert f.names().count("hipHostMalloc") == 3
    for dst, src, n, kind, stream in f.calls_of("hipMemcpyAsync"):
        host, dev = (src, dst) if kind == f.hipMemcpyKind.hipMemcpyHostToDevice else (dst, src)
        assert int(host) in f.pinned and int(dev) in f.device
    # teardown freed everything
    assert f.names().count("hipFree") == len(allocs) and f.names().count("hipHostFree") == 3
    assert f.names().count("hipModuleUnload") == len(cache.built) and "hipStreamDestroy" in f.names()
    assert not f.mem


def test_pipeline_launch_order_on_one_stream():
    f, gpu, cache, run, _, _ = _run(TWO_STAGE)
    launches = [(n, a) for n, a in f.calls if n == "hipModuleLaunchKernel"]
    fns = [a[0] for _, a in launches[:2]]
    assert fns[0].startswith("function:conv_implicit_gemm") and fns[1].startswith("function:conv_fwd_split_k_reduce")
    assert len({a[4] for _, a in launches}) == 1


def test_pipeline_upload_size_mismatch():
    f, h = hip_fake()
    with ConvRun(PLAIN, "gfx1250", "llvm23", hip=h, cache=FakeCache()) as run:
        with pytest.raises(LaunchConfigError, match="x has 2 bytes, the plan expects"):
            run.upload(np.zeros(1, np.uint16), np.zeros(1, np.uint16))


def test_pipeline_out_of_memory_frees_what_it_had():
    f, h = hip_fake()
    f.fail["hipMalloc"] = hipError_t.hipErrorOutOfMemory
    run = ConvRun(PLAIN, "gfx1250", "llvm23", hip=h, cache=FakeCache())
    with pytest.raises(HipError, match=r"hipMalloc failed: hipErrorOutOfMemory \(2\): \d+ bytes for x"):
        with run:
            pass
    run.close()
    assert "hipStreamDestroy" in f.names() and "hipModuleUnload" in f.names()


# ---------------------------------------------------------------- fused split-K (issue 36)

@pytest.mark.parametrize("acc", ["bias", "scale", "relu", "clamp", "bias_relu", "bias_clamp"])
@pytest.mark.parametrize("form", [TWO_STAGE, CLUSTER4], ids=["two_stage", "cluster"])
def test_fused_split_runs_end_to_end(form, acc):
    """A fused layer's two-stage launch runs the identity Stage 1 (epilogue arguments
    unused) then the fused reduce with the epilogue's arguments packed after ks_count;
    the cluster launch passes them to the fold. D matches the fused reference."""
    import numpy as np
    from parity.runtime.pipeline import check_output, random_inputs
    f, h = hip_fake()
    gpu = NumpyGpu("bf16")
    f.on_launch = gpu
    spec = dict(form, dtype="bf16", acc_epilogue=acc)
    scalars = {"scale": 0.75, "clamp_lo": -0.25, "clamp_hi": 0.25}
    bias = np.linspace(-1.0, 1.0, spec["K"]).astype(np.float32)
    with ConvRun(spec, "gfx1250", "llvm23", hip=h, cache=FakeCache(), scalars=scalars) as run:
        x, w, xb, wb = random_inputs(spec, 3)
        run.upload(xb, wb, bias if acc.startswith("bias") else None)
        run.run()
        d = run.download()
        plan = run.plan
    names = [k for k, _, _, _ in gpu.launches]
    if plan.needs_stage2:
        assert names[1] == f"conv_fwd_split_k_reduce_bf16_v4_t256_d0_{acc}"
        assert run.reduce_spec["acc_epilogue"] == acc
        extra = {"bias": ["bias_ptr", "bias_bytes"], "scale": ["scale"], "relu": [],
                 "clamp": ["clamp_lo", "clamp_hi"], "bias_relu": ["bias_ptr", "bias_bytes"],
                 "bias_clamp": ["bias_ptr", "bias_bytes", "clamp_lo", "clamp_hi"]}[acc]
        assert list(plan.stage2_args)[7:] == extra
        assert all(plan.args[n] == "unused" for n in ("bias_ptr", "scale", "clamp_lo", "clamp_hi"))
    else:
        assert names == [plan.kernel] and plan.variant == "cluster"
    ok, ratio, nbad = check_output(spec, x, w, d, bias, scalars)
    assert ok, (ratio, nbad)
    # the unfused reference differs (the epilogue is really applied): relu and clamp
    # change negative / large values, bias and scale every value
    ok0, _, _ = check_output(dict(spec, acc_epilogue="identity"), x, w, d)
    assert not ok0


def test_fused_stage2_refuses_an_unfused_reduce():
    from parity.launch.errors import LaunchConfigError
    from parity.runtime.pipeline import reduce_spec
    with pytest.raises(LaunchConfigError, match="reduce spec acc_epilogue identity != the layer's bias"):
        ConvRun(dict(TWO_STAGE, dtype="bf16", acc_epilogue="bias"), "gfx1250", "llvm23", hip=hip_fake()[1],
                cache=FakeCache(), reduce=reduce_spec("bf16"))

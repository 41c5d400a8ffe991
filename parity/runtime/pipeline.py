"""A convolution on the GPU from a conv_launch spec: code objects, device
buffers, the Stage 1 launch and, only when the plan says ``needs_stage2``,
the reduce kernel after it on the same stream; host copies go through pinned
buffers (a pageable copy registers the host range with the driver, which must
not overlap a kernel in flight); timing with events.

The plan (:mod:`.plan`) decides grid, block, cluster shape, workspace bytes
and every argument value. The one thing it leaves open is the Stage-2 grid,
which depends on the reduce kernel's spec: ``ceil(M*K / (threads*vector))``
workgroups along x (conv_fwd_split_k_reduce's contract).
"""
from __future__ import annotations

import ctypes
import statistics
from dataclasses import dataclass

import numpy as np

from python_engine.facts import conv_launch as CL
from python_engine.facts import conv_kernel as CIG
from python_engine.facts import CONV_LAUNCH_SPEC_FIELDS as SPEC_FIELDS
from python_engine.spec.fields import normalize
from parity.launch.reduce_launch import reduce_launch_reason
from parity.launch.cluster import DEFAULT_MAX_CLUSTER_VOLUME
from .codeobj import CodeObjectCache, build_kernel
from parity.launch.errors import HipUnavailable, LaunchConfigError
from .hip_api import Hip
from .launch import Kernel, Launcher, prepare_launch
from parity.launch.plan import LaunchPlan, buffer_bytes, launch_plan
from parity.launch.stage2 import REDUCE_THREADS, REDUCE_VECTOR, reduce_grid, reduce_spec  # noqa: F401 (names of this module)
from parity.sim.reference import cast_bits, conv_abs_fwd, conv_fwd, conv_tolerance, epilogue_f64, epilogue_has
from python_engine.spec.fields import SpecRejected
from python_engine.facts import find_arch, find_flavor

def resolve_auto(spec: dict, arch: str, flavor: str) -> dict:
    """``split_k = -1`` (auto) replaced by the split-K policy's degree (conv_launch's
    ``resolve``, issue 8); other specs unchanged."""
    if spec["split_k"] != -1:
        return spec
    ar, fl = find_arch(arch), find_flavor(flavor)
    if ar is None or fl is None:
        raise SpecRejected(f"unknown arch {arch!r} or flavor {flavor!r}")
    out, reason = CL.resolve(spec, ar, fl)
    if reason:
        raise SpecRejected(reason)
    return out


def find_gfx1250(hip: Hip) -> int:
    """Index of the first gfx1250 device (made current), or HipUnavailable saying what was found."""
    try:
        n = hip.call("hipGetDeviceCount")
    except Exception as exc:  # noqa: BLE001 - no driver / no device is "unavailable", not a crash
        raise HipUnavailable(f"no GPU: hipGetDeviceCount failed ({exc})") from None
    found = []
    for i in range(int(n or 0)):
        props = hip.call("hipGetDeviceProperties", i)
        name = getattr(props, "gcnArchName", b"")
        name = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
        if name.split(":")[0] == "gfx1250":
            hip.call("hipSetDevice", i)
            return i
        found.append(f"device {i} is {name}")
    raise HipUnavailable("no gfx1250 GPU: " + ("; ".join(found) if found else "no HIP device found"))


@dataclass
class Timing:
    times_ms: list
    flops: int

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def tflops(self) -> float:
        return self.flops / (self.median_ms * 1e-3) / 1e12


def conv_flops(plan: LaunchPlan) -> int:
    a = plan.args
    return 2 * a["M"] * a["K"] * a["Kgemm"]


class ConvRun:
    """Build, load, allocate and launch one conv_launch spec. Use as a context
    manager (frees device memory, pinned buffers, modules, stream, events).

    ``reduce``: the Stage-2 spec (``conv_fwd_split_k_reduce``), e.g. the one the
    split-K policy selected; default :func:`reduce_spec` (degree 0, any ks_count)."""

    def __init__(self, spec: dict, arch: str = "gfx1250", flavor: str = "llvm23", hip: Hip | None = None,
                 cache: CodeObjectCache | None = None, scalars: dict | None = None,
                 max_cluster_volume: int = DEFAULT_MAX_CLUSTER_VOLUME, reduce: dict | None = None):
        self.spec = resolve_auto(normalize(CL.FAMILY, CL.FIELDS, spec), arch, flavor)
        self.plan = launch_plan(self.spec, arch, flavor)
        self.hip = hip  # loaded in setup(): building needs no HIP
        self.cache = cache or CodeObjectCache()
        self.scalars = dict(scalars or {})
        self.dtype = self.spec["dtype"]
        binary = {f: self.spec[f] for f in SPEC_FIELDS}
        self.fwd_code = build_kernel(CIG.FAMILY, binary, arch, flavor, self.cache)
        if self.fwd_code.kernel != self.plan.kernel:
            raise LaunchConfigError(f"built {self.fwd_code.kernel}, the plan launches {self.plan.kernel}")
        acc = self.spec["acc_epilogue"]
        self.reduce_spec = dict(reduce) if reduce else reduce_spec(self.dtype, acc)
        if self.reduce_spec["dtype"] != self.dtype:
            raise LaunchConfigError(f"reduce spec dtype {self.reduce_spec['dtype']} != {self.dtype}")
        racc = self.reduce_spec.get("acc_epilogue", "identity")
        if self.plan.needs_stage2 and racc != acc:
            raise LaunchConfigError(f"reduce spec acc_epilogue {racc} != the layer's {acc} (Stage 2 applies "
                                    f"the layer's epilogue once, after the fold)")
        if self.plan.needs_stage2:
            why = reduce_launch_reason(self.reduce_spec, self.plan.stage2_args)
            if why:
                raise LaunchConfigError(f"Stage 2 refused: {why}")
        self.red_code = (build_kernel("conv_fwd_split_k_reduce", self.reduce_spec, arch, flavor, self.cache)
                         if self.plan.needs_stage2 else None)
        self._max_cv = max_cluster_volume
        self._dev, self._pinned, self._kernels, self._events = {}, {}, [], []
        self.stream = None
        self.stage1 = self.stage2 = None

    # ---------------------------------------------------------------- setup
    def setup(self):
        if self.hip is None:
            self.hip = Hip()
        h, p = self.hip, self.plan
        self.stream = h.call("hipStreamCreate")
        fwd = Kernel(h, self.fwd_code)
        self._kernels.append(fwd)
        sizes = buffer_bytes(p, epilogue_has(self.spec["acc_epilogue"], "bias"))
        for t, n in sizes.items():
            self._dev[t] = h.call("hipMalloc", n, detail=f"{n} bytes for {t}")
        for t in ("x", "w", "d", "bias"):
            if t in sizes:
                self._pinned[t] = (h.call("hipHostMalloc", sizes[t], 0, detail=f"pinned {t}"), sizes[t])
        bufs = {t: int(v) for t, v in self._dev.items()}
        L1 = Launcher(fwd, p.variant, p.grid, p.block, p.cluster, self._max_cv)
        self.stage1 = prepare_launch(L1, p.args, bufs, self.scalars)
        if p.needs_stage2:
            red = Kernel(h, self.red_code)
            self._kernels.append(red)
            rs = self.reduce_spec
            L2 = Launcher(red, "reduce", reduce_grid(p, rs), (rs["threads"], 1, 1),
                          acc_epilogue=rs.get("acc_epilogue", "identity"))
            self.stage2 = prepare_launch(L2, p.stage2_args, bufs, self.scalars)
        return self

    # ---------------------------------------------------------------- copies
    def _kind(self, name):
        return getattr(self.hip.mod.hipMemcpyKind, name)

    def upload(self, x_bits: np.ndarray, w_bits: np.ndarray, bias: np.ndarray | None = None):
        """Copy the uint16 bit patterns of x (NHWC) and w (KYXC) (and fp32 bias) to the device."""
        h = self.hip
        items = [("x", np.ascontiguousarray(x_bits, np.uint16)), ("w", np.ascontiguousarray(w_bits, np.uint16))]
        if "bias" in self._pinned:
            items.append(("bias", np.ascontiguousarray(bias, np.float32)))
        for t, a in items:
            ptr, n = self._pinned[t]
            if a.nbytes != n:
                raise LaunchConfigError(f"{t} has {a.nbytes} bytes, the plan expects {n}")
            ctypes.memmove(int(ptr), a.ctypes.data, n)
            h.call("hipMemcpyAsync", self._dev[t], ptr, n, self._kind("hipMemcpyHostToDevice"), self.stream)
        h.call("hipStreamSynchronize", self.stream)

    def download(self) -> np.ndarray:
        """D (NHWK) as uint16 bit patterns."""
        ptr, n = self._pinned["d"]
        self.hip.call("hipMemcpyAsync", ptr, self._dev["d"], n, self._kind("hipMemcpyDeviceToHost"), self.stream)
        self.hip.call("hipStreamSynchronize", self.stream)
        out = np.empty(n // 2, np.uint16)
        ctypes.memmove(out.ctypes.data, int(ptr), n)
        return out

    # ---------------------------------------------------------------- launches
    def launch(self):
        """Stage 1, then Stage 2 on the same stream only when the plan needs it."""
        self.stage1.launch(self.stream)
        if self.plan.needs_stage2:
            self.stage2.launch(self.stream)

    def run(self):
        self.launch()
        self.hip.call("hipStreamSynchronize", self.stream)

    def time(self, reps: int = 20, warmup: int = 3) -> Timing:
        h = self.hip
        for _ in range(warmup):
            self.launch()
        start, stop = h.call("hipEventCreate"), h.call("hipEventCreate")
        self._events += [start, stop]
        times = []
        for _ in range(reps):
            h.call("hipEventRecord", start, self.stream)
            self.launch()
            h.call("hipEventRecord", stop, self.stream)
            h.call("hipEventSynchronize", stop)
            times.append(float(h.call("hipEventElapsedTime", start, stop)))
        return Timing(times, conv_flops(self.plan))

    # ---------------------------------------------------------------- teardown
    def close(self):
        h = self.hip
        if h is None:
            return
        errors = []

        def attempt(fn, *a):
            try:
                h.call(fn, *a)
            except Exception as exc:  # noqa: BLE001 - free everything, report the first failure
                errors.append(exc)
        for e in self._events:
            attempt("hipEventDestroy", e)
        for ptr, _ in self._pinned.values():
            attempt("hipHostFree", ptr)
        for v in self._dev.values():
            attempt("hipFree", v)
        for k in self._kernels:
            try:
                k.unload()
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)
        if self.stream is not None:
            attempt("hipStreamDestroy", self.stream)
        self._events, self._pinned, self._dev, self._kernels, self.stream = [], {}, {}, [], None
        if errors:
            raise errors[0]

    def __enter__(self):
        """:meth:`setup`; when setup fails, everything it already acquired
        (device and pinned buffers, stream, loaded modules) is released before
        the error propagates (``__exit__`` does not run then)."""
        try:
            return self.setup()
        except BaseException:
            try:
                self.close()
            except Exception:  # noqa: BLE001 - the setup error is the one to report
                pass
            raise

    def __exit__(self, *exc):
        self.close()
        return False


# ---------------------------------------------------------------- data and checking

def random_inputs(spec: dict, seed: int = 0) -> tuple:
    """(x float64 rounded to dtype, w likewise, x bits, w bits) for a conv_launch spec."""

    s = normalize(CL.FAMILY, CL.FIELDS, spec)
    rng = np.random.default_rng(seed)
    cpg = s["C"] // s["groups"]
    x32 = rng.standard_normal((s["N"], s["H"], s["W"], s["C"])).astype(np.float32)
    w32 = (rng.standard_normal((s["K"], s["Y"], s["X"], cpg)) / np.sqrt(s["Y"] * s["X"] * cpg)).astype(np.float32)
    xb, wb = cast_bits(x32, s["dtype"]), cast_bits(w32, s["dtype"])
    return bits_to_float(xb, s["dtype"]), bits_to_float(wb, s["dtype"]), xb, wb


def bits_to_float(bits: np.ndarray, dtype: str) -> np.ndarray:
    bits = np.asarray(bits, np.uint16)
    if dtype == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return bits.view(np.float16).astype(np.float64)


def check_output(spec: dict, x: np.ndarray, w: np.ndarray, d_bits: np.ndarray, bias: np.ndarray | None = None,
                 scalars: dict | None = None) -> tuple:
    """Compare D with the numpy reference (parity/sim/reference.py); (ok, worst error / tolerance, count bad).
    A fused layer's reference applies its ``acc_epilogue`` to the float64 result: ``bias``
    (fp32[K]) added per output channel, ``scalars['scale']`` (the tolerance scaled
    alike), relu, clamp to ``scalars['clamp_lo'/'clamp_hi']``; bias_relu and bias_clamp
    are bias then the activation (:func:`parity.sim.reference.epilogue_f64`)."""

    s = normalize(CL.FAMILY, CL.FIELDS, spec)
    kw = dict(groups=s["groups"], stride=(s["stride_h"], s["stride_w"]), padding=(s["pad_h"], s["pad_w"]),
              dilation=(s["dil_h"], s["dil_w"]))
    ref = conv_fwd(x, w, **kw)
    absum = conv_abs_fwd(x, w, **kw)
    ref, absum = epilogue_f64(s["acc_epilogue"], ref, bias, dict(scalars or {}), absum)
    tol = conv_tolerance(s["dtype"], s["Y"] * s["X"] * (s["C"] // s["groups"]), absum, ref)
    got = bits_to_float(d_bits, s["dtype"]).reshape(ref.shape)
    err = np.abs(got - ref)
    bad = ~(err <= tol)
    ratio = float(np.max(err / tol)) if err.size else 0.0
    return not bad.any(), ratio, int(bad.sum())

"""A fake of hip-python's ``hip`` module for the runtime tests: the same
function names and result tuples, every call recorded, no GPU.

"Device" memory is real host memory (ctypes buffers), so copies round-trip
and a test's ``on_launch`` hook can play a kernel. ``fail[name] = code``
makes the next call of ``name`` return that error code.
"""
from __future__ import annotations

import ctypes
import enum
import struct
from types import SimpleNamespace


class hipError_t(enum.IntEnum):
    hipSuccess = 0
    hipErrorInvalidValue = 1
    hipErrorOutOfMemory = 2
    hipErrorInvalidConfiguration = 9
    hipErrorNoDevice = 100
    hipErrorInvalidImage = 200
    hipErrorNotFound = 500
    hipErrorLaunchFailure = 719
    hipErrorInvalidClusterSize = 920


class hipMemcpyKind(enum.IntEnum):
    hipMemcpyHostToHost = 0
    hipMemcpyHostToDevice = 1
    hipMemcpyDeviceToHost = 2


class hipLaunchAttributeID(enum.IntEnum):
    hipLaunchAttributeIgnore = 0
    hipLaunchAttributeAccessPolicyWindow = 1
    hipLaunchAttributeCooperative = 2
    hipLaunchAttributeSynchronizationPolicy = 3
    hipLaunchAttributeClusterDimension = 4


class hipLaunchAttribute_st:
    """Like the binding: owns sizeof(C struct) = 72 zeroed bytes; only ``id`` is a field."""

    def __init__(self):
        self._buf = (ctypes.c_uint64 * 9)()

    def c_sizeof(self):
        return 72

    def __int__(self):
        return ctypes.addressof(self._buf)

    @property
    def id(self):
        return hipLaunchAttributeID(struct.unpack("<i", ctypes.string_at(int(self), 4))[0])

    @id.setter
    def id(self, v):
        if not isinstance(v, hipLaunchAttributeID):
            raise TypeError("'value' must be of type 'hipLaunchAttributeID'")
        ctypes.memmove(int(self), struct.pack("<i", int(v)), 4)


class HIP_LAUNCH_CONFIG_st:
    FIELDS = ("gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ",
              "sharedMemBytes", "hStream", "attrs", "numAttrs")

    def __init__(self):
        for f in self.FIELDS:
            setattr(self, f, None if f in ("hStream", "attrs") else 0)


class FakeHip:
    hipError_t = hipError_t
    hipMemcpyKind = hipMemcpyKind
    hipLaunchAttributeID = hipLaunchAttributeID
    hipLaunchAttribute_st = hipLaunchAttribute_st
    HIP_LAUNCH_CONFIG_st = HIP_LAUNCH_CONFIG_st

    def __init__(self, arch: str = "gfx1250:sramecc+:xnack-", devices: int = 1):
        self.calls = []
        self.fail = {}
        self.arch = arch
        self.devices = devices
        self.mem = {}          # address -> ctypes buffer (device and pinned)
        self.modules = {}
        self.on_launch = None  # fn(fake, function, params_address, grid, block, cluster)
        self._n = 0
        self.elapsed_ms = 0.5
        self.pinned = set()     # every address hipHostMalloc returned
        self.device = set()     # every address hipMalloc returned

    # -- helpers
    def _rec(self, name, *args):
        self.calls.append((name, args))
        code = self.fail.pop(name, None)
        return hipError_t(code) if code is not None else hipError_t.hipSuccess

    def names(self):
        return [c[0] for c in self.calls]

    def calls_of(self, name):
        return [a for n, a in self.calls if n == name]

    def _alloc(self, n):
        b = (ctypes.c_uint64 * ((n + 7) // 8 or 1))()
        self.mem[ctypes.addressof(b)] = b
        return ctypes.addressof(b)

    def _handle(self, kind):
        self._n += 1
        return f"{kind}{self._n}"

    # -- errors
    def hipGetErrorName(self, err):
        return hipError_t.hipSuccess, hipError_t(err).name.encode()

    # -- device
    def hipGetDeviceCount(self):
        e = self._rec("hipGetDeviceCount")
        return (e, self.devices) if e == 0 else (e, 0)

    def hipGetDeviceProperties(self, i):
        return self._rec("hipGetDeviceProperties", i), SimpleNamespace(gcnArchName=self.arch.encode())

    def hipSetDevice(self, i):
        return (self._rec("hipSetDevice", i),)

    # -- modules
    def hipModuleLoadData(self, image):
        e = self._rec("hipModuleLoadData", bytes(image[:4]))
        if e:
            return e, None
        h = self._handle("module")
        self.modules[h] = bytes(image)
        return e, h

    def hipModuleGetFunction(self, module, name):
        e = self._rec("hipModuleGetFunction", module, name)
        return (e, None) if e else (e, f"function:{name.decode()}")

    def hipModuleUnload(self, module):
        self.modules.pop(module, None)
        return (self._rec("hipModuleUnload", module),)

    # -- launches
    def hipModuleLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        e = self._rec("hipModuleLaunchKernel", f, (gx, gy, gz), (bx, by, bz), shared, stream, params, extra)
        if e == 0 and self.on_launch:
            self.on_launch(self, f, params, (gx, gy, gz), (bx, by, bz), None)
        return (e,)

    def hipDrvLaunchKernelEx(self, config, f, params, extra):
        from parity.launch.cluster import read_cluster_attribute
        snap = {k: getattr(config, k) for k in HIP_LAUNCH_CONFIG_st.FIELDS}
        snap["attr"] = read_cluster_attribute(config.attrs) if config.attrs is not None else None
        e = self._rec("hipDrvLaunchKernelEx", snap, f, params, extra)
        if e == 0 and self.on_launch:
            grid = (config.gridDimX, config.gridDimY, config.gridDimZ)
            block = (config.blockDimX, config.blockDimY, config.blockDimZ)
            self.on_launch(self, f, params, grid, block, snap["attr"][1])
        return (e,)

    # -- memory
    def hipMalloc(self, n):
        e = self._rec("hipMalloc", n)
        if e:
            return e, None
        a = self._alloc(n)
        self.device.add(a)
        return e, a

    def hipHostMalloc(self, n, flags):
        e = self._rec("hipHostMalloc", n, flags)
        if e:
            return e, None
        a = self._alloc(n)
        self.pinned.add(a)
        return e, a

    def hipFree(self, p):
        self.mem.pop(int(p), None)
        return (self._rec("hipFree", p),)

    def hipHostFree(self, p):
        self.mem.pop(int(p), None)
        return (self._rec("hipHostFree", p),)

    def hipMemcpyAsync(self, dst, src, n, kind, stream):
        e = self._rec("hipMemcpyAsync", dst, src, n, kind, stream)
        if e == 0:
            ctypes.memmove(int(dst), int(src), n)
        return (e,)

    # -- streams and events
    def hipStreamCreate(self):
        return self._rec("hipStreamCreate"), self._handle("stream")

    def hipStreamSynchronize(self, s):
        return (self._rec("hipStreamSynchronize", s),)

    def hipStreamDestroy(self, s):
        return (self._rec("hipStreamDestroy", s),)

    def hipEventCreate(self):
        return self._rec("hipEventCreate"), self._handle("event")

    def hipEventRecord(self, ev, s):
        return (self._rec("hipEventRecord", ev, s),)

    def hipEventSynchronize(self, ev):
        return (self._rec("hipEventSynchronize", ev),)

    def hipEventElapsedTime(self, a, b):
        return self._rec("hipEventElapsedTime", a, b), self.elapsed_ms

    def hipEventDestroy(self, ev):
        return (self._rec("hipEventDestroy", ev),)


def read_params(params_address: int, slots) -> dict:
    """Decode a kernelParams array (one pointer per slot) back to values by name."""
    from parity.launch.kernarg import KIND_LAYOUT
    ptrs = (ctypes.c_void_p * len(slots)).from_address(params_address)
    out = {}
    for s, p in zip(slots, ptrs):
        fmt = KIND_LAYOUT[s.kind][2]
        out[s.name] = struct.unpack(fmt, ctypes.string_at(p, s.size))[0]
    return out

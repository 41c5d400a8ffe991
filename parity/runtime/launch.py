"""Loading kernels and launching them: plain launches through
``hipModuleLaunchKernel``, cluster launches through ``hipDrvLaunchKernelEx``
with the cluster-dimension attribute (:func:`launch_ex` is the only caller of
``hipDrvLaunchKernelEx`` in the project).

Arguments travel as ``kernelParams``: an array of pointers, one per explicit
argument, into a buffer packed once by the AMDGPU kernarg layout
(:mod:`.kernarg`). Not ``extra`` (``HIP_LAUNCH_PARAM_BUFFER_POINTER``): CLR's
``hipDrvLaunchKernelEx`` drops ``extra`` and passes only ``kernelParams`` on,
so one form serves both launch calls.

:func:`prepare_launch` / :meth:`Launcher.bind` give a :class:`PreparedLaunch`
for a timed loop: arguments packed once, the launch configuration (and for a
cluster launcher the attribute) built once, and the cluster shape carried
from the launcher, never droppable.
"""
from __future__ import annotations

from parity.launch.cluster import DEFAULT_MAX_CLUSTER_VOLUME, check_cluster, cluster_attribute
from .codeobj import CodeObject
from parity.launch.errors import LaunchConfigError
from .hip_api import Hip
from parity.launch.kernarg import Kernarg, check_against_metadata, pack, resolve_values, variant_layout  # noqa: F401 (pack: a name of this module)


class Kernel:
    """A code object loaded as a module, and its kernel function."""

    def __init__(self, hip: Hip, code: CodeObject):
        self.hip, self.code = hip, code
        self.module = hip.call("hipModuleLoadData", code.data, detail=f"loading {code.kernel}")
        try:
            self.function = hip.call("hipModuleGetFunction", self.module, code.kernel.encode("utf-8"),
                                     detail=f"kernel {code.kernel}")
        except Exception:
            self.unload()
            raise

    def unload(self):
        if self.module is not None:
            m, self.module = self.module, None
            self.hip.call("hipModuleUnload", m)


def launch_ex(hip: Hip, config, function, params: int, what: str):
    """The one place that calls ``hipDrvLaunchKernelEx``."""
    hip.call("hipDrvLaunchKernelEx", config, function, params, None, detail=what)


class Launcher:
    """One kernel at one grid/block (and cluster shape), checked before any launch."""

    def __init__(self, kernel: Kernel, variant: str, grid, block, cluster=None,
                 max_cluster_volume: int = DEFAULT_MAX_CLUSTER_VOLUME, acc_epilogue: str = "identity"):
        self.kernel, self.hip = kernel, kernel.hip
        self.name = kernel.code.kernel
        self.variant = variant
        self.grid = tuple(int(v) for v in grid)
        self.block = tuple(int(v) for v in block)
        if len(self.block) != 3 or min(self.block) < 1:
            raise LaunchConfigError(f"{self.name}: block must be three positive integers, got {block!r}")
        self.cluster = check_cluster(self.name, self.grid, cluster, kernel.code.cluster_dims,
                                     max_cluster_volume)
        self.slots, self.kernarg_size = variant_layout(variant, acc_epilogue)
        check_against_metadata(self.slots, kernel.code.metadata, self.name)
        self.kinds = {s.name: s.kind for s in self.slots}

    def describe(self) -> str:
        c = f" cluster {self.cluster}" if self.cluster else ""
        return f"{self.name} grid {self.grid} block {self.block}{c}"

    def bind(self, values: dict) -> "PreparedLaunch":
        """Pack numeric argument values (by name, every ABI argument) once."""
        return PreparedLaunch(self, pack(self.slots, self.kernarg_size, values, self.name, self.variant))

    def launch(self, values: dict, stream=None):
        self.bind(values).launch(stream)


def prepare_launch(launcher: Launcher, plan_args: dict, buffers: dict, scalars: dict | None = None):
    """Bind a conv_launch plan's argument block (values by name: numbers,
    ``buffer <t>`` from ``buffers``, ``unused``, ``caller`` from ``scalars``)."""
    values = resolve_values(plan_args, launcher.kinds, buffers, scalars or {}, launcher.name)
    return launcher.bind(values)


class PreparedLaunch:
    """A bound launch: call :meth:`launch` in a loop. Grid, block and cluster
    are the launcher's (read-only); a cluster launcher's prepared launch always
    goes through :func:`launch_ex` with the cluster attribute."""

    def __init__(self, launcher: Launcher, kernarg: Kernarg):
        self._launcher = launcher
        self.kernarg = kernarg
        self._config = None
        self._attr = None
        if launcher.cluster is not None:
            mod = launcher.hip.mod
            self._attr = cluster_attribute(mod, launcher.cluster)
            cfg = mod.HIP_LAUNCH_CONFIG_st()
            (cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ) = launcher.grid
            (cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ) = launcher.block
            cfg.sharedMemBytes = 0  # the kernels' LDS is static (group_segment_fixed_size)
            cfg.attrs = self._attr
            cfg.numAttrs = 1
            self._config = cfg

    launcher = property(lambda self: self._launcher)
    grid = property(lambda self: self._launcher.grid)
    block = property(lambda self: self._launcher.block)
    cluster = property(lambda self: self._launcher.cluster)

    def launch(self, stream=None):
        L = self._launcher
        if L.cluster is not None:
            self._config.hStream = stream
            launch_ex(L.hip, self._config, L.kernel.function, self.kernarg.params_address, L.describe())
        else:
            L.hip.call("hipModuleLaunchKernel", L.kernel.function, *L.grid, *L.block, 0, stream,
                       self.kernarg.params_address, None, detail=L.describe())

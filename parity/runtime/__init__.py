"""parity.runtime: build code objects and launch the kernels on a
gfx1250 through hip-python (docs/runtime.md).

Importing this package never imports hip-python or llvmlite; they load when
first needed and a missing one is a clear error (:class:`HipUnavailable`,
:class:`CodeObjectError`).
"""
from parity.launch.cluster import DEFAULT_MAX_CLUSTER_VOLUME, check_cluster, cluster_attribute, read_cluster_attribute
from .codeobj import (CodeObject, CodeObjectCache, Linker, build_code_object, build_kernel, default_cache_dir,
                      find_linker)
from parity.launch.errors import (CodeObjectError, HipError, HipUnavailable, LaunchConfigError, LinkerMissing,
                     RuntimeFailure)
from .hip_api import Hip, load_hip
from .launch import Kernel, Launcher, PreparedLaunch, launch_ex, prepare_launch
from .pipeline import ConvRun, Timing, check_output, find_gfx1250, random_inputs
from parity.launch.plan import LaunchPlan, launch_plan, parse_plan

__all__ = [
    "CodeObject", "CodeObjectCache", "CodeObjectError", "ConvRun", "DEFAULT_MAX_CLUSTER_VOLUME", "Hip",
    "HipError", "HipUnavailable", "Kernel", "LaunchConfigError", "LaunchPlan", "Launcher", "Linker",
    "LinkerMissing", "PreparedLaunch", "RuntimeFailure", "Timing", "build_code_object", "build_kernel",
    "check_cluster", "check_output", "cluster_attribute", "default_cache_dir", "find_gfx1250", "find_linker",
    "launch_ex", "launch_plan", "load_hip", "parse_plan", "prepare_launch", "random_inputs",
    "read_cluster_attribute",
]

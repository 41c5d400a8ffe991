"""The cluster-dimension launch attribute, and cluster-shape checks.

hip-python's ``hipLaunchAttribute_st`` (= ``hipLaunchAttribute``) exposes
``id`` and ``pad`` only: the anonymous union that holds the value is not a
field of the Python wrapper. The C layout (``hip_runtime_api.h``)::

    typedef struct hipLaunchAttribute_st {
      hipLaunchAttributeID id;                     // offset 0, 4 bytes
      char pad[8 - sizeof(hipLaunchAttributeID)];  // offset 4
      union { hipLaunchAttributeValue val;         // offset 8, 64 bytes
              hipLaunchAttributeValue value; };    //   (char pad[64], 8-aligned)
    } hipLaunchAttribute;                          // 72 bytes

and for ``hipLaunchAttributeClusterDimension`` the value is ``clusterDim``,
``struct { unsigned int x, y, z; }`` at the start of the union. The workaround:
allocate the attribute through the binding (so it owns ``sizeof`` of the real
C struct, zeroed), set ``id`` through the binding, then write ``x, y, z`` as
three little-endian uint32 at ``int(attr) + 8`` with ``ctypes.memmove`` and
read the 20 bytes back to check them. :func:`read_cluster_attribute` decodes
the same bytes (tests use it on the fake's attribute, which is backed by a
real 72-byte buffer).
"""
from __future__ import annotations

import ctypes
import struct

from parity.launch.errors import LaunchConfigError

ATTR_VALUE_OFFSET = 8
ATTR_C_SIZE = 72
CLUSTER_DIM_FORMAT = "<III"
# hipLaunchAttributeID::hipLaunchAttributeClusterDimension (Ignore=0, AccessPolicyWindow,
# Cooperative, SynchronizationPolicy, ClusterDimension=4); used when the binding's enum lacks it.
CLUSTER_DIMENSION_ID = 4
# Workgroups per cluster the launcher admits. The conv kernels use S <= 15; 16 is
# the gfx1250 cluster limit this project assumes (no GPU here to query it).
DEFAULT_MAX_CLUSTER_VOLUME = 16


def _cluster_id(mod):
    enum = getattr(mod, "hipLaunchAttributeID", None)
    v = getattr(enum, "hipLaunchAttributeClusterDimension", None) if enum is not None else None
    return v if v is not None else CLUSTER_DIMENSION_ID


def cluster_attribute(mod, dims):
    """A ``hipLaunchAttribute`` of ``mod`` (hip-python's ``hip`` or a fake) with
    id ClusterDimension and value ``clusterDim = dims``."""
    x, y, z = (int(v) for v in dims)
    attr = mod.hipLaunchAttribute_st()
    size = attr.c_sizeof() if hasattr(attr, "c_sizeof") else ATTR_C_SIZE
    if size < ATTR_VALUE_OFFSET + 12:
        raise LaunchConfigError(f"hipLaunchAttribute is {size} bytes in this hip-python build; the "
                                f"cluster workaround needs the value union at offset {ATTR_VALUE_OFFSET}")
    attr.id = _cluster_id(mod)
    addr = int(attr)
    raw = struct.pack(CLUSTER_DIM_FORMAT, x, y, z)
    ctypes.memmove(addr + ATTR_VALUE_OFFSET, raw, len(raw))
    if ctypes.string_at(addr + ATTR_VALUE_OFFSET, len(raw)) != raw:
        raise LaunchConfigError("the cluster attribute's value did not read back as written")
    return attr


def read_cluster_attribute(attr) -> tuple:
    """``(id, (x, y, z))`` decoded from an attribute's memory."""
    addr = int(attr)
    aid, = struct.unpack("<i", ctypes.string_at(addr, 4))
    return aid, struct.unpack(CLUSTER_DIM_FORMAT, ctypes.string_at(addr + ATTR_VALUE_OFFSET, 12))


def _dims(v, what) -> tuple:
    t = tuple(v)
    if len(t) != 3 or any(isinstance(a, bool) or not isinstance(a, int) or a < 1 for a in t):
        raise LaunchConfigError(f"{what} must be three positive integers, got {v!r}")
    return t


def check_cluster(kernel: str, grid, cluster, kernel_cluster, max_volume: int = DEFAULT_MAX_CLUSTER_VOLUME):
    """Validate a launch's cluster shape before anything is launched:
    the request against the kernel's own ``.cluster_dims`` (a cluster kernel
    never launches plain: its cluster barrier would synchronise nothing), every
    grid dimension a multiple of the cluster's, the volume within the limit."""
    grid = _dims(grid, "grid")
    if cluster is not None:
        cluster = _dims(cluster, "cluster")
    if kernel_cluster is not None and cluster is None:
        raise LaunchConfigError(
            f"{kernel} is a cluster kernel (cluster dims {tuple(kernel_cluster)}): it must launch with "
            f"that cluster shape; a plain launch would leave its cluster barrier synchronising nothing")
    if cluster is None:
        return None
    if kernel_cluster is None:
        raise LaunchConfigError(f"{kernel} has no cluster dims, but cluster {cluster} was requested")
    if tuple(kernel_cluster) != cluster:
        raise LaunchConfigError(f"{kernel} was built for cluster {tuple(kernel_cluster)}, "
                                f"but cluster {cluster} was requested")
    for axis, g, c in zip("xyz", grid, cluster):
        if g % c:
            raise LaunchConfigError(f"{kernel}: grid {axis} = {g} is not a multiple of cluster {axis} = {c}")
    vol = cluster[0] * cluster[1] * cluster[2]
    if vol > max_volume:
        raise LaunchConfigError(f"{kernel}: cluster {cluster} has {vol} workgroups, above the limit {max_volume}")
    return cluster

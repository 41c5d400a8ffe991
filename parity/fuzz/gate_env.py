"""The world ``parity fuzz --gate`` attacks the gate in: a scratch directory with a
tiny echo engine, a configs package and a valid golden directory, and the OS
conditions a case can ask for (no capability to override file modes, a
file-size limit, a tiny or read-only tmpfs, a full file system, a held lock).

The echo engine (:data:`ECHO_ENGINE`) implements the engine API of
docs/engine_api.md just enough for the gate: it lowers a spec to a short
fixed text and rejects when the spec says so. It is not a kernel generator;
the lane tests the gate's handling of its own inputs (shards, configs,
command lines, environments), where the engines only need to agree, fast.
"""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
from pathlib import Path

ECHO_ENGINE = '''
"""Echo engine of `parity fuzz --gate` (parity/fuzz/gate_env.py): a fixed text per spec."""
from collections import namedtuple
FAMILIES = ("fam_a", "fam_b")
Lowered = namedtuple("Lowered", "kernel text")
_FLAVORS = {"llvm20": "llvm20", "llvm22": "llvm22", "llvm23": "llvm23", "llvm24": "llvm23"}


class SpecRejected(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def resolve_flavor(name):
    try:
        return _FLAVORS[name]
    except (KeyError, TypeError):
        raise SpecRejected("unknown flavor " + repr(name)) from None


def flavor_table():
    return tuple({"flavor": k, "canonical": v} for k, v in _FLAVORS.items())


def spec_fields(family):
    return (("kernel", "k"),)


def validate(family, spec, arch, flavor):
    try:
        lower(family, spec, arch, flavor)
    except SpecRejected as e:
        return e.reason
    return None


def kernel_name(family, spec, arch, flavor):
    return lower(family, spec, arch, flavor).kernel


def lower(family, spec, arch, flavor):
    flavor = resolve_flavor(flavor)
    if family not in FAMILIES:
        raise SpecRejected("unknown family " + repr(family))
    if arch != "gfx1250":
        raise SpecRejected("unknown arch " + repr(arch))
    if spec.get("needs_llvm23") and flavor != "llvm23":
        raise SpecRejected(spec["needs_llvm23"])
    if spec.get("reject"):
        raise SpecRejected(spec["reject"])
    kernel = family + "_" + str(spec.get("kernel", "k"))
    return Lowered(kernel, "; flavor " + flavor + "\\ndefine void @" + kernel + "() {\\n  ret void\\n}\\n")
'''

FAMILY_SOURCE = '''
from parity.config import Config, reject, reject_before_llvm23
FAMILY = "{family}"
R23 = "amdgpu-cluster-dims requires flavor llvm23"
CONFIGS = [
    Config("plain", arch="gfx1250", spec={{"kernel": "plain"}}),
    Config("other", arch="gfx1250", spec={{"kernel": "other"}}),
    Config("must_reject", arch="gfx1250", spec={{"reject": "tile_k must be a multiple of 32"}},
           expect=reject("tile_k must be a multiple of 32")),
    Config("cluster", arch="gfx1250", spec={{"kernel": "cluster", "needs_llvm23": R23}},
           per_flavor=reject_before_llvm23(R23)),
    Config("only23", arch="gfx1250", spec={{"kernel": "only23"}}, flavors=("llvm23",)),
]
'''

FAMILIES = ("fam_a", "fam_b")


def write_world(root: Path, tag: str) -> tuple[str, str]:
    """Write the echo engine module and a configs package into ``root``; returns (engine, package)."""
    root = Path(root)
    engine, package = f"gate_echo_{tag}", f"gate_cfg_{tag}"
    (root / f"{engine}.py").write_text(ECHO_ENGINE, encoding="utf-8")
    pkg = root / package
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    for fam in FAMILIES:
        (pkg / f"{fam}.py").write_text(FAMILY_SOURCE.format(family=fam), encoding="utf-8")
    return engine, package


# -- OS conditions -------------------------------------------------------------------------------

_PR_CAPBSET_DROP = 24
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """Drop every capability of this process and of what it executes (bounding set,
    then effective/permitted), so root obeys file modes like any user (no
    CAP_DAC_OVERRIDE). Meant for a forked child or a ``preexec_fn``; a no-op
    where the calls are refused (not root: there is nothing to drop)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    hdr = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    libc.capset(ctypes.byref(hdr), data)


def limit_file_size(nbytes: int):
    """A preexec callable: RLIMIT_FSIZE of ``nbytes`` (a write past it fails with
    EFBIG; SIGXFSZ ignored so the process is told, not killed)."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return apply


def mount_tmpfs(where: Path, size: str = "64k") -> bool:
    """Mount a tmpfs of ``size`` at ``where``; False when this process may not mount."""
    Path(where).mkdir(parents=True, exist_ok=True)
    try:
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                           capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def remount(where: Path, opts: str) -> bool:
    """``mount -o remount,OPTS WHERE`` (e.g. ``ro``); False when refused."""
    try:
        return subprocess.run(["mount", "-o", f"remount,{opts}", str(where)],
                              capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def umount(where: Path) -> None:
    """Lazily unmount ``where`` (errors ignored)."""
    try:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        pass


def fill(directory: Path) -> None:
    """Fill the file system holding ``directory`` to its last byte (a file ``filler``)."""
    fd = os.open(Path(directory) / "filler", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for size in (65536, 4096, 1):
            while True:
                try:
                    if os.write(fd, b"\0" * size) < size:
                        break
                except OSError:
                    break
    finally:
        os.close(fd)


def snapshot(d: Path) -> dict[str, bytes]:
    """{name: bytes} of the shards (``*.json`` regular files, not hidden) directly in ``d``."""
    out = {}
    try:
        entries = sorted(Path(d).iterdir())
    except OSError:
        return out
    for p in entries:
        try:
            if p.suffix == ".json" and not p.name.startswith(".") and p.is_file() and not p.is_symlink():
                out[p.name] = p.read_bytes() if p.stat().st_size <= 16 * 2**20 else b"<large>"
        except OSError:
            out[p.name] = b"<unreadable>"
    return out

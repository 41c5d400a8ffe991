"""OS conditions for the gate's robustness tests and its fuzz lane (issue 24): a
stub gate environment on disk, ``parity`` run as a real process, and ways to
make the file system refuse (no capability to override permissions, a tiny
or read-only tmpfs, a file-size limit, a held golden lock)."""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import gate_stubs

FAM_B = gate_stubs.GREEN_FAMILY.replace('FAMILY = "fam_a"', 'FAMILY = "fam_b"')

_PR_CAPBSET_DROP = 24


def drop_capabilities() -> None:
    """preexec_fn: drop every capability from the bounding set, so the exec'd
    process (root or not) obeys file modes like any user (no CAP_DAC_OVERRIDE)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)


def limit_file_size(nbytes: int):
    """preexec_fn: RLIMIT_FSIZE of ``nbytes`` (a write past it fails with EFBIG;
    SIGXFSZ ignored so the process is told, not killed)."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return apply


class StubGate:
    """Stub engines + a configs package (fam_a, fam_b) in ``root``, and a valid golden dir."""

    def __init__(self, root: Path):
        self.root = Path(root)
        tag = uuid.uuid4().hex[:8]
        self.good, _ = gate_stubs.write_engines(self.root, f"go{tag}")
        self.configs = gate_stubs.write_configs(self.root, f"gocfg{tag}",
                                                {"fam_a": gate_stubs.GREEN_FAMILY, "fam_b": FAM_B})
        self.common = ["--engines", f"{self.good},{self.good}", "--configs", self.configs,
                       "--timeout", "20", "-j", "1"]
        self.valid = self.root / "valid_golden"
        self.valid.mkdir()
        r = self.run(["write", "--no-oracles", "--golden-dir", str(self.valid)])
        assert r.returncode == 0, r.stdout + r.stderr
        self.shards = {p.name: p.read_bytes() for p in self.valid.glob("*.json")}

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        env["PYTHONPATH"] = os.pathsep.join([str(self.root), env.get("PYTHONPATH", "")]).strip(os.pathsep)
        return env

    def golden(self, where: Path) -> Path:
        """A fresh copy of the valid golden dir at ``where``."""
        where.mkdir(parents=True, exist_ok=True)
        for name, data in self.shards.items():
            (where / name).write_bytes(data)
        return where

    def argv(self, args: list[str]) -> list[str]:
        cmd, rest = args[0], args[1:]
        common = [] if cmd in ("show", "diff", "merge-golden") else self.common
        return [sys.executable, "-m", "parity", cmd, *common, *rest]

    def run(self, args: list[str], timeout: float = 120, preexec=None, env=None) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(args), capture_output=True, text=True, timeout=timeout,
                              env=env or self.env(), cwd=self.root, preexec_fn=preexec,
                              errors="surrogateescape")

    def popen(self, args: list[str]) -> subprocess.Popen:
        return subprocess.Popen(self.argv(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.env(), cwd=self.root, errors="surrogateescape")


def snapshot(d: Path) -> dict:
    """{name: bytes} of the regular files directly in ``d`` (the lock file left out)."""
    out = {}
    for p in sorted(Path(d).iterdir()):
        if p.name != ".parity-golden.lock" and p.is_file() and not p.is_symlink():
            out[p.name] = p.read_bytes()
    return out


def mount_tmpfs(where: Path, size: str = "64k", ro: bool = False) -> bool:
    """Mount a tmpfs of ``size`` at ``where`` (True), or False when this process may not mount."""
    where.mkdir(parents=True, exist_ok=True)
    opts = f"size={size}" + (",ro" if ro else "")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True)
    return r.returncode == 0


def remount(where: Path, opts: str) -> bool:
    r = subprocess.run(["mount", "-o", f"remount,{opts}", str(where)], capture_output=True)
    return r.returncode == 0


def umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(directory: Path) -> None:
    """Fill the file system of ``directory`` to the last byte."""
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

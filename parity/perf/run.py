"""A perf run: lower, compile (in parallel), measure (llvm-mca in parallel) -> {FAMILY/CONFIG: Measure}."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .build import Unit, compile_units
from .measure import Measure, measure
from parity.cli.interrupt import thread_pool


@dataclass
class Side:
    """The measures of one tree (the working tree, or the base ref)."""
    label: str
    commit: str | None
    measures: dict = field(default_factory=dict)    # FAMILY/CONFIG -> Measure
    problems: list = field(default_factory=list)
    kernels: int = 0                                # distinct kernels compiled
    seconds: float = 0.0


def measure_units(label: str, units: list[Unit], *, jobs: int, timeout: float, mca_tool: str | None,
                  commit: str | None = None, progress=None) -> Side:
    """Compile every distinct kernel of ``units`` and measure it; one Measure per unit."""
    t0 = time.perf_counter()
    side = Side(label, commit)
    total = len({u.sha256 + "@" + u.arch for u in units})
    done = [0]

    def tick(*_):
        done[0] += 1
        if progress:
            progress(done[0], 2 * total)
    compiled = compile_units(units, workers=jobs, on_result=tick)
    side.kernels = len(compiled)
    first: dict[str, Unit] = {}
    for u in units:
        first.setdefault(u.sha256 + "@" + u.arch, u)

    def one(key: str) -> Measure:
        u, res = first[key], compiled[key]
        if not res.get("ok"):
            m = Measure(u.kernel, ok=False, error=f"{res.get('stage', 'compile')}: {res.get('error')}")
        else:
            m = measure(res["asm"], u.kernel, res["report"], u.spec, mca_tool=mca_tool, mca_timeout=timeout)
        tick()
        return m
    keys = list(first)
    with thread_pool(max(1, jobs)) as ex:  # Ctrl-C cancels the queued measures (parity/cli/interrupt.py)
        by_sha = dict(zip(keys, ex.map(one, keys)))
    for u in units:
        side.measures[u.key] = by_sha[u.sha256 + "@" + u.arch]
    for key, m in side.measures.items():
        if not m.ok:
            side.problems.append(f"{key}: {m.error}")
        elif m.mca_error:
            side.problems.append(f"{key}: {m.mca_error}")
    side.seconds = time.perf_counter() - t0
    return side

"""The fuzz run: batches of generated specs over the worker pool, bounded in
time and/or spec count, then every failure shrunk and written out.

Work is cut into batches of ``BATCH`` consecutive spec indices of one family
(families in turn), sent to the pool ``ROUND`` batches per worker at a time.
A worker that dies or hangs charges a CRASH to the spec it was running (its
progress note); the rest of that batch is re-queued.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from parity.gate.pool import WorkerPool

from parity.gate.fuzz_check import PASSING
from parity.gate.fuzz_generate import generate
from .repro import write_reproducer
from .shrink import shrink
import python_engine

BATCH = 25
ROUND = 4
MAX_REPRODUCERS = 3   # per family and verdict (a repeated detail text is shrunk once)
SHRINK_SECONDS = 120  # total time spent shrinking after the run


@dataclass
class Failure:
    family: str
    index: int
    verdict: str
    detail: str
    reproducer: str = ""


@dataclass
class FuzzReport:
    seed: int
    families: tuple
    seconds: float = 0.0
    counts: dict = field(default_factory=dict)   # family -> verdict -> n
    failures: list = field(default_factory=list)
    restarts: int = 0

    @property
    def specs(self) -> int:
        return sum(sum(c.values()) for c in self.counts.values())

    @property
    def failed(self) -> int:
        return sum(n for c in self.counts.values() for v, n in c.items() if v not in PASSING)


def _crash_result(job, message, note):
    try:
        idx = int(note)
    except (TypeError, ValueError):
        idx = job[3]
    return {"crashed": idx, "message": message}


def run_fuzz(families, *, seed: int, seconds: float | None, specs: int | None, jobs: int | None,
             out_dir: Path | None, timeout: float = 30.0, modules=("python_engine", "cpp_engine"),
             progress: Callable[[FuzzReport], None] | None = None, cluster=None) -> FuzzReport:
    """Fuzz ``families`` until ``seconds`` pass or ``specs`` specs ran (the
    first reached; at least one must be given), shrink each failure and write
    reproducers to ``out_dir``. ``cluster`` (parity/gate/executor.py, ``--scheduler``):
    the batches and the shrinking run there, ``ROUND`` batches per worker thread."""
    rep = FuzzReport(seed, tuple(families), counts={f: {} for f in families})
    nxt = {f: 0 for f in families}           # next unused index per family
    redo: deque = deque()                     # (family, start, count) re-queued
    t0 = time.monotonic()
    order = deque(families)
    failures_raw = []
    with WorkerPool(modules, workers=cluster.threads() if cluster else jobs, timeout=timeout,
                    cluster=cluster) as pool:
        def budget_left() -> int | None:
            return None if specs is None else specs - rep.specs

        while True:
            if seconds is not None and time.monotonic() - t0 >= seconds:
                break
            left = budget_left()
            if left is not None and left <= 0:
                break
            batch_jobs = []
            planned = 0
            while len(batch_jobs) < pool.max_workers * ROUND:
                if left is not None and planned >= left:
                    break
                if redo:
                    fam, start, count = redo.popleft()
                else:
                    fam = order[0]
                    order.rotate(-1)
                    count = BATCH if left is None else max(1, min(BATCH, left - planned))
                    start = nxt[fam]
                    nxt[fam] += count
                planned += count
                batch_jobs.append(("fuzz", seed, fam, start, count, tuple(modules)))
            results = pool.run(batch_jobs, _crash_result, chunk_size=1)
            for job, res in zip(batch_jobs, results):
                fam, start, count = job[2], job[3], job[4]
                c = rep.counts[fam]
                if isinstance(res, dict) and "crashed" in res:
                    i = res["crashed"]
                    c["CRASH"] = c.get("CRASH", 0) + 1
                    failures_raw.append((fam, i, "CRASH", res["message"]))
                    for j in range(start, i):  # specs before the crash passed or failed unseen:
                        redo.append((fam, j, 1))  # run them again one by one
                    if i + 1 < start + count:
                        redo.append((fam, i + 1, start + count - i - 1))
                    continue
                if not isinstance(res, dict) or "counts" not in res:
                    c["CRASH"] = c.get("CRASH", 0) + count
                    failures_raw.append((fam, start, "CRASH", f"batch error: {res!r}"[:300]))
                    continue
                for v, n in res["counts"].items():
                    c[v] = c.get(v, 0) + n
                for i, v, detail in res["failures"]:
                    failures_raw.append((fam, i, v, detail))
            rep.restarts = pool.restarts
            if progress:
                rep.seconds = time.monotonic() - t0
                progress(rep)
        rep.seconds = time.monotonic() - t0
        # Shrink and write: one reproducer per distinct shrunk input, at most
        # MAX_REPRODUCERS per (family, verdict).
        per_kind: dict = {}
        shrink_end = time.monotonic() + SHRINK_SECONDS
        for fam, i, v, detail in failures_raw:
            f = Failure(fam, i, v, detail)
            rep.failures.append(f)
            if (out_dir is None or per_kind.get((fam, v), 0) >= MAX_REPRODUCERS
                    or (fam, v, detail) in per_kind or time.monotonic() > shrink_end):
                continue
            per_kind[(fam, v, detail)] = 1
            per_kind[(fam, v)] = per_kind.get((fam, v), 0) + 1
            f.reproducer = str(_shrink_and_write(pool, out_dir, seed, fam, i, v, detail, modules))
    return rep


def _shrink_and_write(pool, out_dir, seed, family, index, verdict, detail, modules) -> Path:
    spec, arch, flavor, _ = generate(seed, family, index)
    defaults = dict(python_engine.spec_fields(family))
    last = {"detail": detail}

    def still_fails(s, a, fl) -> bool:
        res = pool.run([("fuzz_one", family, s, a, fl, tuple(modules))],
                       lambda job, msg, note: ("CRASH", msg), chunk_size=1)[0]
        v = res[0] if isinstance(res, (tuple, list)) else "CRASH"
        if v == verdict:
            last["detail"] = res[1] if isinstance(res, (tuple, list)) else str(res)
            return True
        return False

    spec, arch, flavor = shrink(spec, arch, flavor, defaults, still_fails, budget=150)
    return write_reproducer(out_dir, family, verdict, last["detail"], seed, index, spec, arch, flavor)

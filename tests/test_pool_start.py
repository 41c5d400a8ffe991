"""WorkerPool.start (workers importing the engines while the gate reads its inputs),
close (a starting worker is killed; a serving one leaves with status 0)."""

import os
import signal

from parity.gate.pool import WorkerPool


def _crash(job, message, note):
    return {"crash": message}


def test_a_started_worker_runs_the_jobs_and_no_second_one_starts_for_one_job():
    pool = WorkerPool(("python_engine",), workers=2, timeout=120)
    try:
        pool.start(1)
        [w] = pool._workers
        [out] = pool.run([("resolve_flavors", "python_engine", ["llvm24", "llvm99"])], on_crash=_crash)
        assert out == {"flavors": {"llvm24": "llvm23", "llvm99": None}}
        assert pool._workers == [w]  # the started worker ran it; no other was started
    finally:
        pool.close()
    assert w.proc.exitcode == 0  # told to stop: it left by itself


def test_start_respects_the_pool_size():
    pool = WorkerPool(("python_engine",), workers=1)
    try:
        pool.start(3)
        assert len(pool._workers) == 1
    finally:
        pool.close()


def test_close_kills_a_worker_that_is_still_starting():
    pool = WorkerPool(("python_engine",), workers=1)
    pool.start(1)
    [w] = pool._workers
    pool.close()  # e.g. the configs were refused before any job: nothing to wait for
    assert w.proc.exitcode == -signal.SIGKILL
    assert pool._workers == []


def test_small_gate_runs_use_one_worker_without_jobs_option():
    from parity.config import load_families
    from parity.gate.runner import JOBS_PER_WORKER, auto_workers, run_gate
    assert auto_workers(1) == 1 and auto_workers(JOBS_PER_WORKER) == 1
    assert auto_workers(JOBS_PER_WORKER + 1) == min(2, os.cpu_count() or 1)
    fams = load_families(only=["ir_core"])
    pool = WorkerPool(("python_engine", "cpp_engine"), workers=2, timeout=120)
    try:
        report = run_gate(fams, flavors=("llvm23",), pool=pool)
        assert report.green and len(report.results) < JOBS_PER_WORKER
        assert len(pool._workers) == 1  # the pool may hold two; this run started one
        report = run_gate(fams, flavors=("llvm23",), pool=pool, workers=2)  # --jobs 2: as asked
        assert report.green and len(pool._workers) == min(2, len(report.results))
    finally:
        pool.close()

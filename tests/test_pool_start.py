"""WorkerPool.start (workers importing the engines while the gate reads its inputs),
close (a starting worker is killed; a serving one leaves with status 0)."""

import signal

from parity.pool import WorkerPool


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

"""A crash-isolating worker pool for engine calls.

Each worker is a ``spawn``-ed process that imports the engine modules once,
then runs chunks of jobs and streams one result per job back. The parent
tracks which job each worker is running, so when a worker dies (segfault in a
C++ binding, ``os._exit``, ``abort``) or exceeds the per-job timeout (it is
killed), exactly that job is reported as crashed, the rest of its chunk is
requeued, and a fresh worker replaces the dead one. The run always goes on.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any, Callable, Sequence

from parity.cli.interrupt import leave_sigint_to_parent, workers_ignore_sigint
from parity.config import DEFAULT_TIMEOUT

# Job = (kind, args) -- dispatched by parity.gate.worker.run_job in the worker.
Job = tuple

DEFAULT_STARTUP_TIMEOUT = 120.0


class PoolError(RuntimeError):
    """The pool cannot make progress (workers fail before running anything)."""

def _describe_exit(exitcode: int | None) -> str:
    if exitcode is None:
        return "worker died"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"worker killed by {name}"
    return f"worker exited with status {exitcode}"


def _worker_main(conn, modules: tuple[str, ...], extra_path: tuple[str, ...]) -> None:
    leave_sigint_to_parent()  # Ctrl-C: the parent stops (daemonic workers end with it), no traceback here
    for p in reversed(extra_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    from parity.gate import worker  # the engines' side: the parent never imports it (nor the engines through it)

    worker.serve(conn, modules)
    # The parent said stop (or went away): leave without the interpreter's teardown
    # (collecting every module of both engines), which the parent would wait for.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@dataclass
class _Worker:
    proc: Any
    conn: Any
    ready: bool = False
    chunk: deque = field(default_factory=deque)  # job indices, head = running
    started_head: bool = False  # the head job sent a note/start (attributable)
    note: str = ""
    deadline: float = 0.0


class WorkerPool:
    """Run jobs in worker processes; see module docstring.

    ``on_crash(job, message, note)`` builds the result for a job whose worker
    died or timed out (``note`` is the last progress note the job sent, e.g.
    the engine it was calling).
    """

    def __init__(
        self,
        modules: Sequence[str],
        *,
        workers: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        extra_path: Sequence[str] = (),
        context: str = "spawn",
        cluster=None,
    ) -> None:
        self.modules = tuple(modules)
        #: a parity.gate.executor.Cluster: run() sends the jobs there (``--scheduler``)
        self.cluster = cluster
        self.max_workers = max(1, workers or os.cpu_count() or 1)
        self.timeout = float(timeout)
        self.startup_timeout = float(startup_timeout)
        self.extra_path = tuple(extra_path) or tuple(p for p in sys.path if p)
        self.ctx = mp.get_context(context)
        self._workers: list[_Worker] = []
        self.restarts = 0

    # -- lifecycle ---------------------------------------------------------
    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start_worker(self) -> _Worker:
        parent, child = self.ctx.Pipe(duplex=True)
        proc = self.ctx.Process(
            target=_worker_main, args=(child, self.modules, self.extra_path), daemon=True
        )
        with workers_ignore_sigint():  # the worker never sees Ctrl-C, from its first instruction
            proc.start()
        child.close()
        w = _Worker(proc, parent, deadline=time.monotonic() + self.startup_timeout)
        self._workers.append(w)
        return w

    def _kill(self, w: _Worker) -> None:
        if w in self._workers:
            self._workers.remove(w)
        try:
            if w.proc.is_alive():
                w.proc.kill()
            w.proc.join(5)
        except Exception:
            pass
        try:
            w.conn.close()
        except Exception:
            pass

    def start(self, n: int = 1) -> None:
        """Start workers now, up to ``n`` (and the pool's size), so that they import
        the engines while the caller still reads its inputs; :meth:`run` uses them."""
        if self.cluster is not None:
            return
        while len(self._workers) < min(n, self.max_workers):
            self._start_worker()

    def close(self) -> None:
        for w in list(self._workers):
            if not w.ready:  # still starting (never given a job): nothing to finish
                self._kill(w)
                continue
            try:
                w.conn.send(None)
            except Exception:
                pass
        for w in list(self._workers):
            try:
                w.proc.join(1)
            except Exception:
                pass
            self._kill(w)
        self._workers.clear()

    # -- running -----------------------------------------------------------
    def run(
        self,
        jobs: Sequence[Job],
        on_crash: Callable[[Job, str, str], Any],
        *,
        chunk_size: int | None = None,
        on_result: Callable[[int, Any], None] | None = None,
        workers: int | None = None,
    ) -> list[Any]:
        """Run ``jobs``; their results in job order. ``workers``: at most this many
        worker processes for this run (None: the pool's size). A job whose worker
        dies or times out while running it gets ``on_crash(job, message, note)``
        as its result; PoolError when workers die three times before any job."""
        n = len(jobs)
        size = min(self.max_workers, workers or self.max_workers)
        if n == 0:
            return []
        if self.cluster is not None:  # --scheduler: the same jobs on Dask (parity/gate/executor.py)
            return self.cluster.run_gate_jobs(jobs, on_crash, on_result, job_timeout=self.timeout)
        if chunk_size is None:
            chunk_size = max(1, min(16, n // (size * 4) or 1))
        r = _Run(self, jobs, on_crash, on_result, chunk_size)
        try:
            while r.remaining:
                # keep the pool at size
                want = min(size, len(r.pending) + sum(1 for w in self._workers if w.chunk))
                while len(self._workers) < want:
                    self._start_worker()
                for w in list(self._workers):
                    r.assign(w)
                busy = [w for w in self._workers if w.chunk or not w.ready]
                if not busy:
                    if r.pending:
                        continue
                    break
                r.wait_round(busy)
                r.expire()
        except BaseException:
            self.close()
            raise
        return r.results


class _Run:
    """The state of one :meth:`WorkerPool.run`: which jobs are pending, assigned
    (each worker's ``chunk``) and done, and the handling of worker messages,
    deaths and deadlines."""

    def __init__(self, pool: "WorkerPool", jobs: Sequence[Job], on_crash, on_result, chunk_size: int):
        self.pool, self.jobs, self.on_crash, self.on_result = pool, jobs, on_crash, on_result
        self.chunk_size = chunk_size
        self.results: list[Any] = [None] * len(jobs)
        self.done = [False] * len(jobs)
        self.pending: deque[int] = deque(range(len(jobs)))
        self.remaining = len(jobs)
        self.fruitless_deaths = 0

    def finish(self, i: int, value: Any) -> None:
        """Job ``i``'s result (the first one counts)."""
        if self.done[i]:
            return
        self.done[i] = True
        self.results[i] = value
        self.remaining -= 1
        if self.on_result is not None:
            self.on_result(i, value)

    def assign(self, w: _Worker) -> None:
        """Send an idle, ready worker the next chunk of pending jobs."""
        if w.chunk or not self.pending or not w.ready:
            return
        idxs = []
        while self.pending and len(idxs) < self.chunk_size:
            idxs.append(self.pending.popleft())
        try:
            w.conn.send([(i, self.jobs[i]) for i in idxs])
        except (OSError, EOFError, ValueError):
            self.pending.extendleft(reversed(idxs))
            return
        w.chunk.extend(idxs)
        w.started_head = False
        w.note = ""
        w.deadline = time.monotonic() + self.pool.timeout

    def fail_worker(self, w: _Worker, message: str) -> None:
        """Kill ``w``: the job it had started gets ``on_crash``, the rest of its chunk
        goes back to pending."""
        self.drain(w)  # anything it managed to send before dying
        chunk = list(w.chunk)
        self.pool._kill(w)
        self.pool.restarts += 1
        if chunk and w.started_head:
            head = chunk.pop(0)
            self.finish(head, self.on_crash(self.jobs[head], message, w.note))
            self.fruitless_deaths = 0
        else:
            self.fruitless_deaths += 1
            if self.fruitless_deaths >= 3:
                raise PoolError(f"engine worker processes die before running any job ({message})")
        self.pending.extendleft(reversed([i for i in chunk if not self.done[i]]))

    def handle(self, w: _Worker, msg: Any) -> None:
        """One message from ``w``: ready, start, note or result."""
        kind = msg[0]
        if kind == "ready":
            w.ready = True
        elif kind in ("start", "note"):
            if w.chunk and msg[1] == w.chunk[0]:
                w.started_head = True
                w.note = msg[2] if kind == "note" else ""
        elif kind == "result":  # ("result", i, value[, the job that starts now or None])
            i, value = msg[1], msg[2]
            if w.chunk and w.chunk[0] == i:
                w.chunk.popleft()
            elif i in w.chunk:
                w.chunk.remove(i)
            w.started_head = False
            w.note = ""
            w.deadline = time.monotonic() + self.pool.timeout
            self.finish(i, value)
            if len(msg) > 3 and msg[3] is not None:
                self.handle(w, ("start", msg[3]))
        else:
            raise PoolError(f"unexpected message from worker: {kind!r}")

    def drain(self, w: _Worker) -> bool:
        """Read every pending message; False when the pipe is closed."""
        try:
            while w.conn.poll():
                self.handle(w, w.conn.recv())
        except (EOFError, OSError):
            return False
        return True

    def wait_round(self, busy: list) -> None:
        """Wait for a message or an exit of a busy worker, until the nearest deadline;
        read what came and fail the workers that died."""
        now = time.monotonic()
        next_deadline = min(w.deadline for w in busy)
        waitables = {}
        for w in busy:
            waitables[w.conn] = w
            waitables[w.proc.sentinel] = w
        ready = wait(list(waitables), timeout=max(0.0, next_deadline - now))
        seen = set()
        for obj in ready:
            w = waitables[obj]
            if id(w) in seen or w not in self.pool._workers:
                continue
            seen.add(id(w))
            alive = self.drain(w)
            if not alive or not w.proc.is_alive():
                w.proc.join(1)
                self.fail_worker(w, _describe_exit(w.proc.exitcode))

    def expire(self) -> None:
        """Fail every busy worker past its deadline (a start-up or a job timeout)."""
        now = time.monotonic()
        for w in list(self.pool._workers):
            if (w.chunk or not w.ready) and now >= w.deadline and w in self.pool._workers:
                if not self.drain(w):
                    self.fail_worker(w, _describe_exit(w.proc.exitcode))
                    continue
                if now < w.deadline:
                    continue
                if w.ready:
                    msg = f"timeout: no result after {self.pool.timeout:g}s (worker killed)"
                else:
                    msg = f"worker did not start within {self.pool.startup_timeout:g}s"
                self.fail_worker(w, msg)

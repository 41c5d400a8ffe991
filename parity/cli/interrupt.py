"""Ctrl-C (SIGINT) in the commands' pools: thread pools it stops (``parity
verify``'s opt and proof threads, ``parity perf``'s measuring threads) and
process-pool workers that leave it to their parent.

``with ThreadPoolExecutor(...)`` waits, on the way out of an exception, for
every queued job to run (``shutdown(wait=True)``), and the interpreter's exit
joins the pool's threads: after Ctrl-C a run went on with its queue for
minutes before it ended. :func:`thread_pool` and :func:`cancel_on_error`
cancel the queued jobs instead when their block is left by an exception; the
jobs running then finish (their subprocesses got the same SIGINT).

A terminal's Ctrl-C reaches every process of the foreground group: each
``multiprocessing`` worker printed its own KeyboardInterrupt traceback.
:func:`leave_sigint_to_parent` (a pool ``initializer``) makes a worker ignore
it; the parent's KeyboardInterrupt ends the pool (``Pool.terminate`` on the
way out of its ``with`` block) and ``parity`` prints one ``error:`` line
(parity/base/outputs.py, exit 130).
"""
from __future__ import annotations

import signal
import threading
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def cancel_on_error(*pools: Executor) -> Iterator[None]:
    """Run the block; when an exception (KeyboardInterrupt included) leaves it, shut
    ``pools`` down without waiting, their queued jobs cancelled, and re-raise."""
    try:
        yield
    except BaseException:
        for p in pools:
            p.shutdown(wait=False, cancel_futures=True)
        raise


@contextmanager
def thread_pool(workers: int) -> Iterator[ThreadPoolExecutor]:
    """A ``ThreadPoolExecutor`` of ``workers`` threads (>= 1): a normal exit of the
    block waits for its jobs; an exception cancels the jobs not started
    (:func:`cancel_on_error`) and propagates at once."""
    ex = ThreadPoolExecutor(max_workers=workers)
    with cancel_on_error(ex):
        yield ex
    ex.shutdown(wait=True)


def leave_sigint_to_parent() -> None:
    """Pool worker initializer: ignore SIGINT (the parent stops the pool)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def workers_ignore_sigint() -> Iterator[None]:
    """Start child processes inside this block so that they never see SIGINT.

    SIGINT is *blocked* (``pthread_sigmask``) in the calling thread while the block
    runs, and ignored (the main thread): a child forked there inherits the blocked
    mask, one spawned there the ignored disposition across its ``exec`` (Python
    keeps an inherited SIG_IGN), so a Ctrl-C that reaches the whole
    process group from the child's first instruction (its imports included)
    stays pending in it and prints nothing (issue 39: an ``initializer`` runs
    only after the imports). The caller keeps its Ctrl-C: a SIGINT that arrives
    inside the block is delivered when the block ends (the mask is restored),
    never lost. Children started this way end by their parent (daemonic pool
    workers, ``close``/``kill``), never by Ctrl-C."""
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask: the old way, main thread only
        old = None
    # A ``spawn``-ed child starts with an empty mask (``_posixsubprocess`` resets it: found by
    # ``parity fuzz --gate``, issue 39), but an ignored disposition survives its exec and
    # Python keeps it: SIG_IGN too, from the main thread. With SIGINT blocked meanwhile, a
    # Ctrl-C that arrives in between stays pending (Linux queues a blocked signal even while
    # it is ignored) and reaches the restored handler when the mask is restored.
    prev = None
    if threading.current_thread() is threading.main_thread():
        try:
            prev = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except (OSError, ValueError):
            prev = None
    try:
        yield
    finally:
        if prev is not None:
            signal.signal(signal.SIGINT, prev)
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

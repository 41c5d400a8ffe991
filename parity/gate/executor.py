"""The heavy lanes' jobs on a Dask distributed cluster: ``--scheduler ADDRESS``
(or ``PARITY_SCHEDULER``; the flag wins) on ``parity aot --build``, ``mutate``,
``numerics``, ``verify`` and ``fuzz`` (docs/scale.md).

One seam under the five lanes: each lane keeps its local process pool as the
default and, given a scheduler, hands the same picklable job function and the
same job list to :meth:`Cluster.map`, which

* submits every job under its own key (``<lane>-<run token>-<index>``) with a
  bounded number in flight, so the scheduler runs a job at most once at a time;
* stores each result by job index and returns them in job order (never in
  completion order), so a verdict list, a kill rate and a manifest do not
  depend on which worker finished first;
* leaves a lost worker's jobs to the scheduler, which reruns them on another
  worker (a job counts once: the first result of its key); a job whose
  workers die ``distributed.scheduler.allowed-failures`` + 1 times (default
  3 + 1) gets the lane's crash result, like a crash in the local pool;
* runs every job through :func:`_guarded`, which refuses a worker whose
  checkout differs from the client's (the engines are imported from the
  checkout: the workers must be started with this checkout's ``.venv``), and
  bounds the job's time when the lane gives a ``job_timeout`` (the local pool's
  ``--timeout``): a job past it gets the lane's crash result ("timeout: ...")
  and its worker process ends, so the nanny starts a fresh one (the jobs that
  process was running are rerun by the scheduler, each counted once).

Dask is the optional extra ``splitk-parity[distributed]``; without it, or with
an unreachable scheduler, :func:`open_cluster` raises :class:`SchedulerError`
(one line; the commands print it as ``error:`` and exit 2).
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import socket
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

ENV = "PARITY_SCHEDULER"
EXTRA = "distributed"
#: seconds to reach the scheduler before ``error:`` (assumption: a scheduler on the
#: same network answers within a second; 10 s covers a loaded machine).
CONNECT_TIMEOUT = 10.0
#: seconds a worker process lives on after a job timed out, so the job's timeout result
#: reaches the scheduler before the process ends (assumption: the worker's batched stream
#: sends a finished task within ~100 ms; 2 s covers a loaded machine; a result that misses
#: it is rerun and times out again, ending as the lane's crash result either way)
RETIRE_DELAY = 2.0
#: exit status of a worker process ended after a timed-out job (its nanny restarts it)
RETIRE_STATUS = 70
#: a result slot of a job that did not run (``map``'s ``deadline`` passed first)
NOT_RUN = object()


def progress_tick(progress: Callable[[Any, int, int], None] | None, total: int) -> Callable[[int, Any], None]:
    """An ``on_result`` for :meth:`Cluster.map` that counts the results and calls
    ``progress(value, done, total)`` after each (``done`` from 1; nothing when
    ``progress`` is None): a lane's progress line for its jobs in completion order."""
    done = 0

    def tick(_index: int, value: Any) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(value, done, total)
    return tick


class SchedulerError(Exception):
    """One line: the extra is missing, the scheduler is unreachable, or a worker runs
    another checkout."""


class FromEnv(str):
    """A scheduler address read from ``$PARITY_SCHEDULER``: its refusal names the variable
    (:func:`cluster_for`), not a ``--scheduler`` the user never typed."""


#: ``--scheduler local``: this machine's process pool, whatever ``$PARITY_SCHEDULER`` says.
LOCAL = "local"


def scheduler_address(flag: str | None) -> str | None:
    """The scheduler to use: ``--scheduler`` if given, else ``$PARITY_SCHEDULER``, else
    None (the local process pool). ``local`` (or an empty value, which the parser
    refuses on the command line) means local."""
    if flag is not None:
        return None if flag.strip() in ("", LOCAL) else flag.strip()
    return FromEnv(os.environ.get(ENV, "").strip()) or None


def _address(text: str) -> str:
    """argparse type of ``--scheduler``: a non-empty address, or ``local``."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"empty (give tcp://HOST:PORT, or {LOCAL} for this machine's pool)")
    return text


def add_argument(parser) -> None:
    """Add ``--scheduler ADDRESS`` to a lane's subcommand parser."""
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None, type=_address,
                        help=f"run the jobs on this Dask scheduler (tcp://host:8786; default ${ENV}, "
                             f"else the local process pool; {LOCAL}: the local pool whatever ${ENV} says; "
                             f"needs splitk-parity[{EXTRA}]; docs/scale.md)")


def _location(module: str) -> str | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return None
    return os.path.realpath(os.path.dirname(spec.origin))


@functools.lru_cache(maxsize=1)
def fingerprint() -> tuple:
    """This process's checkout: (sys.prefix, the package directories of parity,
    python_engine and cpp_engine, the sha256 of python_engine's sources), without
    importing the engines. Equal on the client and every worker of one checkout."""
    from parity.gate.provenance import python_sources_digest
    pe = _location("python_engine")
    return (os.path.realpath(sys.prefix), _location("parity"), pe, _location("cpp_engine"),
            python_sources_digest(pe) if pe else None)


class ForeignWorker(RuntimeError):
    """Raised on a worker whose :func:`fingerprint` is not the client's."""


class JobTimeout(Exception):
    """Raised on a worker for a job that ran past the lane's ``job_timeout``."""


def _guarded(expected: tuple, fn: Callable, item: Any, timeout: float | None = None) -> Any:
    """On a worker: ``fn(item)`` after checking the worker runs the client's checkout.
    With ``timeout`` (seconds), a job still running after it raises :class:`JobTimeout`
    and its worker process is retired (:func:`_retire_worker`): a Python thread cannot
    be stopped, so the process that holds the hung thread ends instead."""
    mine = fingerprint()
    if mine != expected:
        raise ForeignWorker(f"Dask worker on {socket.gethostname()} (pid {os.getpid()}) runs parity from "
                            f"{mine[1]} with python {mine[0]}, not this checkout's {expected[1]} with "
                            f"{expected[0]}: start the workers with this checkout's .venv (docs/scale.md)")
    if timeout is None:
        return fn(item)
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn(item)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the worker's thread below
            box["error"] = exc
    t = threading.Thread(target=run, name="parity-job", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        restarted = _retire_worker()
        raise JobTimeout(f"timeout: no result after {timeout:g}s on Dask worker {socket.gethostname()} "
                         f"(pid {os.getpid()}{', worker restarted' if restarted else ', worker left running'})")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _retire_worker() -> bool:
    """End this worker process :data:`RETIRE_DELAY` seconds from now if a nanny will
    start a fresh one (``dask worker`` and ``LocalCluster(processes=True)`` run one);
    True if it will. A worker without a nanny (``processes=False``: the client's own
    process) is left running with the hung thread (False)."""
    try:
        from distributed import get_worker
        nanny = getattr(get_worker(), "nanny", None)
    except Exception:  # noqa: BLE001 - not inside a Dask worker (a direct call in a test)
        return False
    if not nanny:
        return False
    threading.Timer(RETIRE_DELAY, os._exit, (RETIRE_STATUS,)).start()
    return True


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


class Cluster:
    """A connected Dask client plus the client's checkout fingerprint; see the module
    docstring. Use :func:`open_cluster`."""

    def __init__(self, client, address: str):
        self.client, self.address = client, address
        self.expected = fingerprint()

    def threads(self) -> int:
        """Worker threads the scheduler has now (the ``workers`` of a manifest)."""
        return max(1, sum(self.client.nthreads().values()))

    def check_workers(self) -> None:
        """Refuse the cluster now (SchedulerError) if a worker runs another checkout."""
        seen = self.client.run(fingerprint)
        for addr, fp in sorted(seen.items()):
            if tuple(fp) != self.expected:
                raise SchedulerError(f"--scheduler {self.address}: worker {addr} runs parity from {fp[1]} "
                                     f"with python {fp[0]}, not this checkout's {self.expected[1]}; start the "
                                     f"workers with this checkout's .venv (docs/scale.md)")

    def map(self, fn: Callable, items: Sequence, *, name: str, on_crash: Callable[[Any, str], Any],
            on_result: Callable[[int, Any], None] | None = None, deadline: float | None = None,
            window: int | None = None, job_timeout: float | None = None) -> list:
        """``[fn(item) for item in items]`` on the cluster, in job order.

        ``fn`` must be importable on the workers (a module-level function of this
        checkout). A job raising an exception, or whose workers kept dying, gets
        ``on_crash(item, message)``. ``on_result(index, value)`` in completion order.
        ``deadline`` (time.monotonic()): submit no job after it and cancel the
        unfinished ones (their slots hold :data:`NOT_RUN`). At most ``window`` jobs
        in flight (default 4 per worker thread, at least 8). ``job_timeout`` (seconds of
        one job's run on its worker; None: unbounded): a job past it gets
        ``on_crash(item, "JobTimeout: timeout: ...")`` and its worker is restarted."""
        from distributed import as_completed
        token = uuid.uuid4().hex[:12]
        n = len(items)
        results: list = [NOT_RUN] * n
        done = [False] * n
        window = window or max(8, 4 * self.threads())
        nxt = 0
        index: dict = {}  # key -> (job index, future) of the jobs in flight
        if n == 0:
            return results
        ac = as_completed(loop=self.client.loop)

        def submit_more() -> None:
            nonlocal nxt
            while nxt < n and len(index) < window and (deadline is None or time.monotonic() < deadline):
                f = self.client.submit(_guarded, self.expected, fn, items[nxt], job_timeout,
                                       key=f"{name}-{token}-{nxt}", pure=False)
                index[f.key] = (nxt, f)
                ac.add(f)
                nxt += 1

        submit_more()
        try:
            for fut in ac:
                i, _ = index.pop(fut.key)
                value = self._value(fut, items[i], on_crash)
                if not done[i]:  # a key's first result counts
                    done[i] = True
                    results[i] = value
                    if on_result is not None:
                        on_result(i, value)
                if deadline is not None and time.monotonic() >= deadline:
                    break
                submit_more()
        finally:
            if index:  # a deadline, an error or Ctrl-C: nothing left running for this run
                self.client.cancel([f for _, f in index.values()])
        return results

    @staticmethod
    def _value(fut, item, on_crash) -> Any:
        from distributed.scheduler import KilledWorker
        if fut.status == "finished":
            return fut.result()
        try:
            exc = fut.exception()
        except Exception as e:  # noqa: BLE001 - a cancelled future: its job is a crash
            exc = e
        if isinstance(exc, ForeignWorker):
            raise SchedulerError(str(exc))
        if isinstance(exc, KilledWorker):
            return on_crash(item, f"the Dask workers running this job died repeatedly ({_first_line(exc)})")
        return on_crash(item, _first_line(exc))

    def run_gate_jobs(self, jobs: Sequence, on_crash: Callable[[Any, str, str], Any],
                      on_result: Callable[[int, Any], None] | None = None,
                      job_timeout: float | None = None) -> list:
        """parity.gate.pool.WorkerPool's ``run`` here: the gate's jobs, results in job order,
        a job that raised, timed out (``job_timeout`` s) or whose workers died given
        ``on_crash(job, message, "")``."""
        return self.map(_gate_job, list(jobs), name="gate", on_crash=lambda j, m: on_crash(j, m, ""),
                        on_result=on_result, job_timeout=job_timeout)

    def close(self) -> None:
        try:
            self.client.close(timeout=5)
        except Exception:  # noqa: BLE001 - closing a lost connection
            pass


def _probe(address: str, timeout: float) -> None:
    """SchedulerError for an address Dask cannot parse, or a tcp/tls one where nothing
    accepts a connection within ``timeout`` (before a Client exists: a Client that
    failed to connect prints a traceback when collected)."""
    from distributed.comm import parse_address, parse_host_port
    from distributed.comm.registry import backends
    try:
        scheme, loc = parse_address(address, strict=False)
        if scheme not in backends:
            raise ValueError(f"unknown scheme {scheme!r} (known: {', '.join(sorted(backends))})")
        if scheme in ("tcp", "tls"):
            host, port = parse_host_port(loc)
            if not port:
                raise ValueError("no port (the scheduler's default is 8786: tcp://HOST:8786)")
    except (ValueError, TypeError) as exc:
        raise SchedulerError(f"--scheduler {address}: not a Dask scheduler address ({exc})") from None
    if scheme in ("tcp", "tls"):
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except OSError as exc:
            raise SchedulerError(f"--scheduler {address}: cannot connect to {host}:{port} within {timeout:g} s "
                                 f"({_first_line(exc)})") from None


def _quiet_client(base):
    """``distributed.Client`` whose collection after a failed connection closes within a
    second and prints nothing (the command has said ``error:`` already)."""
    class Client(base):
        def __del__(self):
            try:
                self.close(timeout=1)
            except Exception:  # noqa: BLE001 - never connected
                pass
    return Client


def open_cluster(address: str, timeout: float | None = None) -> Cluster:
    """Connect to the Dask scheduler at ``address`` and check its workers' checkout.
    Raises SchedulerError (one line) when ``distributed`` is not installed, the
    address is malformed, the scheduler does not answer within ``timeout`` seconds
    (default :data:`CONNECT_TIMEOUT`), it has no worker, or a
    worker runs another checkout."""
    try:
        import distributed
    except ImportError:
        raise SchedulerError(f"--scheduler needs Dask: pip install 'splitk-parity[{EXTRA}]' "
                             f"(or pip install -e '.[{EXTRA}]' in the checkout; docs/scale.md)") from None
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    _probe(address, timeout)
    try:
        client = _quiet_client(distributed.Client)(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:  # accepted, then no handshake in time (asyncio's TimeoutError too)
        raise SchedulerError(f"--scheduler {address}: no Dask scheduler answered within {timeout:g} s "
                             f"({_first_line(exc)})") from None
    except Exception as exc:  # noqa: BLE001 - a reply Dask's comm layer could not decode
        raise SchedulerError(f"--scheduler {address}: the server there accepted the connection but does not "
                             f"speak Dask's protocol (its reply failed to decode: {type(exc).__name__}); "
                             f"give the scheduler's address (docs/scale.md)") from None
    c = Cluster(client, address)
    try:
        if not client.nthreads():
            client.wait_for_workers(1, timeout=timeout)
        c.check_workers()
    except SchedulerError:
        c.close()
        raise
    except Exception as exc:  # noqa: BLE001 - no worker joined in time
        c.close()
        raise SchedulerError(f"--scheduler {address}: no Dask worker joined within {timeout:g} s "
                             f"({_first_line(exc)})") from None
    return c


@contextmanager
def cluster_for(address: str | None) -> Iterator[Cluster | None]:
    """``open_cluster(address)`` for the ``with`` block (closed after), or None when
    ``address`` is None (the lane runs its local pool)."""
    if not address:
        yield None
        return
    try:
        c = open_cluster(address)
    except SchedulerError as exc:
        if not isinstance(address, FromEnv):
            raise
        raise SchedulerError(str(exc).replace(f"--scheduler {address}:", f"{ENV}={address} (from the environment; "
                                              "--scheduler overrides it):", 1)) from None
    try:
        yield c
    finally:
        c.close()


def _gate_job(job: tuple) -> Any:
    """On a worker: one gate job ``(kind, *args)`` (parity/gate/worker.py's table), as
    the local pool's worker runs it (an exception is the job's ``job_error``)."""
    from parity.gate import worker
    from parity.gate.outcomes import crash_line
    try:
        return worker.run_job(job, lambda s: None)
    except Exception as exc:  # noqa: BLE001 - same contract as worker.serve
        return {"job_error": crash_line(f"{type(exc).__name__}: {exc}")}


"""LLVM work in worker processes.

LLVM aborts the whole process on some errors ("LLVM ERROR: Cannot select:
intrinsic ..." for an intrinsic on the wrong target, an assertion for an
unknown CPU). So every llvmlite call (the set-up of parity/llvm/compile.py)
runs in a worker subprocess
(``python -c 'from parity.verify.compile_worker import serve; serve()'``) that reads one JSON job per line
on stdin and answers one JSON line on a private pipe. Its stderr goes to a
file the parent reads: when a worker dies, the job it was running is
reported as failed with LLVM's message (the tail of that stderr), a fresh
worker takes the next job, and the run goes on. The gate's engine pool
(parity.gate.pool) is not used here because it cannot capture a dead child's
stderr, which is the whole message of an LLVM abort.

Job kinds: ``compile`` (parse, verify, compile once to assembly, the code
object assembled from it, ISA report; parity/llvm_compile.compile_module, so
through the compile cache), ``probe`` (intrinsic existence by wrong-signature declarations),
``tables`` (an engine's intrinsic and arch tables, imported in isolation),
``readback`` (the module parsed and printed back, parity/verify/readback.py).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from queue import Empty, Queue
from typing import Any, Callable, Sequence

from parity.llvm.compile import CompileError, compile_module, message_line, parse_verify
from parity.cli.interrupt import workers_ignore_sigint
from parity.verify.assemble import EM_AMDGPU, AssembleError, assemble_facts, elf_facts, find_llvm_mc
from parity.verify.intrinsics_check import DeclError, parse_decl, right_signature_module, wrong_signature_modules

DEFAULT_TIMEOUT = 120.0
_WORKER_MAIN = "from parity.verify.compile_worker import serve; serve()"
_STDERR_TAIL = 2000
_REPO = str(Path(__file__).resolve().parents[2])

# ----------------------------------------------------------------------------
# inside the worker
# ----------------------------------------------------------------------------

_probe_cache: dict = {}


def _err(exc: BaseException) -> str:
    return message_line(exc) or type(exc).__name__


def _parse_verify(text: str):
    """(module, None) or (None, (stage, message)): :func:`parity.llvm.compile.parse_verify`."""
    try:
        return parse_verify(text), None
    except CompileError as exc:
        return None, (exc.stage, _err(exc.__cause__))


def _object_facts(text: str, asm: str, triple: str, arch: str) -> dict:
    """The code object's size and ELF machine: ``asm`` assembled by LLVM 22's llvm-mc
    (parity/verify/assemble.py), or, with no llvm-mc of llvmlite's LLVM release,
    the object llvmlite compiles (a second code generation). Raises CompileError."""
    from llvmlite import binding as llvm  # the [verify] extra: worker side only

    tool = find_llvm_mc(llvm.llvm_version_info[0])
    if tool is not None:
        try:
            return assemble_facts(asm, triple, arch, tool)
        except AssembleError as exc:
            raise CompileError("assemble", str(exc)) from exc
    return elf_facts(compile_module(text, arch, "object").output)


def job_compile(job: dict) -> dict:
    """Parse, verify and compile a module once, to verbose assembly (through the
    compile cache); its code object's size and ELF machine; the ISA report and,
    with an ``arch_row``, the buffer-descriptor check."""
    from parity.verify.isa_report import build_report  # PyYAML ([verify] extra): worker side only

    text, kernel, arch = job["text"], job["kernel"], job["arch"]
    try:
        c = compile_module(text, arch, "asm")  # verbose: keeps AMDGPUAsmPrinter's "; Occupancy:" comments
    except CompileError as exc:
        return {"ok": False, "stage": exc.stage, "error": exc.message or type(exc.__cause__).__name__}
    if kernel not in c.defined:
        return {"ok": False, "stage": "verify", "error": f"module defines no function @{kernel}"}
    asm = c.output
    try:
        obj = _object_facts(text, asm, c.triple, arch)
    except CompileError as exc:
        return {"ok": False, "stage": exc.stage, "error": exc.message}
    rep = build_report(asm, kernel, arch, object_bytes=obj["bytes"])
    desc = None
    if job.get("arch_row"):
        from parity.verify.descriptor import check_descriptors  # PyYAML via isa_report: worker side only
        desc = check_descriptors(asm, text, kernel, job["arch_row"]).to_json()
    out = {"ok": True, "report": rep.to_json(), "externals": c.externals, "descriptors": desc,
           "elf": obj["elf_machine"] == EM_AMDGPU, "cached": c.cached}
    if job.get("keep_asm"):
        out["asm"] = asm
    return out


def _probe_one(line: str, check_right: bool) -> dict:
    try:
        d = parse_decl(line)
    except DeclError as exc:
        return {"known": False, "error": str(exc), "probes": []}
    probes = []
    known = False
    for what, text in wrong_signature_modules(d):
        _, err = _parse_verify(text)
        probes.append({"probe": what, "rejected": bool(err), "error": err[1] if err else ""})
        if err:
            known = True
            break
    out = {"name": d.name, "known": known, "probes": probes}
    if check_right:
        _, err = _parse_verify(right_signature_module(d))
        out["right_ok"] = err is None
        out["right_error"] = err[1] if err else ""
    return out


def job_probe(job: dict) -> dict:
    res = {}
    for line in job["decls"]:
        key = (line, bool(job.get("check_right")))
        if key not in _probe_cache:
            _probe_cache[key] = _probe_one(line, key[1])
        res[line] = _probe_cache[key]
    return {"ok": True, "results": res}


def job_tables(job: dict) -> dict:
    try:
        E = importlib.import_module(job["module"])
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "error": f"cannot import {job['module']}: {type(exc).__name__}: {_err(exc)}"}
    tables = {}
    for fl in job["flavors"]:
        tables[fl] = [list(row) for row in E.intrinsic_table(fl)]
    return {"ok": True, "intrinsics": tables, "arch": [dict(a) for a in E.arch_table()]}


def job_readback(job: dict) -> dict:
    """``text`` parsed by llvmlite's LLVM and printed back (``str(module)``, no
    passes; verified only with ``"verify": true``, the compile job verifies
    otherwise): the read-back of parity/verify/readback.py."""
    from llvmlite import binding as llvm  # the [verify] extra: worker side only

    try:
        mod = llvm.parse_assembly(job["text"])
        if job.get("verify"):
            mod.verify()
        return {"ok": True, "printed": str(mod)}
    except RuntimeError as exc:
        return {"ok": False, "stage": "parse", "error": _err(exc)}


def job_selftest(job: dict) -> dict:
    if job.get("action") == "abort":
        sys.stderr.write("LLVM ERROR: selftest abort\n")
        sys.stderr.flush()
        os.abort()
    return {"ok": True}


HANDLERS: dict[str, Callable[[dict], dict]] = {
    "compile": job_compile, "probe": job_probe, "tables": job_tables, "selftest": job_selftest,
    "readback": job_readback,
}


def serve() -> None:
    # The protocol gets a private copy of stdout; fd 1 then points at stderr so
    # nothing LLVM (or an engine) prints can corrupt it.
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        out.write(json.dumps(handle(json.loads(line))) + "\n")
        out.flush()


def handle(job: dict) -> dict:
    """One job's answer (its handler's; a handler's exception is a failed job)."""
    try:
        return HANDLERS[job["kind"]](job)
    except Exception as exc:  # noqa: BLE001 - a bug here is a failed job, not a dead worker
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
        return {"ok": False, "stage": "worker", "error": f"{type(exc).__name__}: {_err(exc)}{where}"}


def handle_remote(job: dict) -> dict:
    """On a Dask worker (``parity verify --scheduler``): :func:`handle` in-process, its
    answer through JSON as the local worker's (same lists, same keys)."""
    return json.loads(json.dumps(handle(job)))


# ----------------------------------------------------------------------------
# in the parent
# ----------------------------------------------------------------------------

def _describe_exit(rc: int | None) -> str:
    if rc is None:
        return "worker died"
    if rc < 0:
        try:
            return f"worker killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"worker killed by signal {-rc}"
    return f"worker exited with status {rc}"


def llvm_message(stderr: str) -> str:
    """The most telling lines of a dead worker's stderr (LLVM ERROR / assertion first)."""
    lines = [l.rstrip() for l in stderr.splitlines() if l.strip()]
    key = [l for l in lines if "LLVM ERROR" in l or "Assertion" in l or "error:" in l
           or "not a recognized processor" in l]
    pick = key or lines[-5:]
    # drop the repeated "not a recognized processor" warnings to one
    seen, out = set(), []
    for l in pick:
        if l not in seen:
            seen.add(l)
            out.append(l)
    msg = " | ".join(out)
    return msg[-_STDERR_TAIL:] if len(msg) > _STDERR_TAIL else msg


class _Proc:
    def __init__(self, env: dict):
        self.errpath = tempfile.NamedTemporaryFile(prefix="parity-verify-", suffix=".stderr",
                                                   delete=False).name
        self.errfile = open(self.errpath, "wb")
        with workers_ignore_sigint():  # Ctrl-C: the parent ends it; no traceback from its imports
            self.p = subprocess.Popen([sys.executable, "-c", _WORKER_MAIN],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errfile,
                                      env=env, text=True, encoding="utf-8", bufsize=1)

    def stderr_since(self, pos: int) -> str:
        try:
            with open(self.errpath, "rb") as f:
                f.seek(pos)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def stderr_size(self) -> int:
        try:
            return os.path.getsize(self.errpath)
        except OSError:
            return 0

    def close(self, kill: bool = False) -> None:
        try:
            if kill and self.p.poll() is None:
                self.p.kill()
            elif self.p.poll() is None:
                self.p.stdin.close()
            self.p.wait(5)
        except Exception:  # noqa: BLE001
            try:
                self.p.kill()
                self.p.wait(5)
            except Exception:  # noqa: BLE001
                pass
        for fobj in (self.p.stdout, self.errfile):
            try:
                fobj.close()
            except Exception:  # noqa: BLE001
                pass
        try:
            os.unlink(self.errpath)
        except OSError:
            pass


class CompileWorkers:
    """Run jobs on ``workers`` worker subprocesses (default os.cpu_count()).

    Each result is the worker's answer, or for a job whose worker died or hung
    ``{"ok": False, "crashed": True, "stage": "abort"|"timeout", "error": msg}``
    with LLVM's stderr in the message. Anything the worker wrote to stderr
    during a job that did not kill it is attached as ``"stderr"``.

    ``keep=True``: the worker processes outlive a :meth:`run` and serve the next
    one (no new interpreter, llvmlite and engine import per run); the caller
    then ends them with :meth:`close` (or ``with CompileWorkers(keep=True) as cw``).
    """

    def __init__(self, workers: int | None = None, timeout: float = DEFAULT_TIMEOUT, keep: bool = False,
                 cluster=None):
        #: a parity.gate.executor.Cluster (``--scheduler``): :meth:`run` sends the jobs there
        self.cluster = cluster
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.timeout = float(timeout)
        env = dict(os.environ)
        # the parent's sys.path, so engines (and test stubs) import as they do here
        paths = [_REPO] + [p for p in sys.path if p] + env.get("PYTHONPATH", "").split(os.pathsep)
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.env = env
        self.restarts = 0
        self.keep = keep
        self._idle: list[_Proc] = []
        self._idle_lock = threading.Lock()

    def __enter__(self) -> "CompileWorkers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the kept worker processes (``keep=True``); a no-op otherwise."""
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for proc in idle:
            proc.close()

    def _run_one(self, proc: _Proc | None, job: dict) -> tuple[_Proc | None, dict]:
        if proc is None or proc.p.poll() is not None:
            if proc is not None:
                proc.close()
            proc = _Proc(self.env)
        pos = proc.stderr_size()
        timer_fired = threading.Event()

        def kill():
            timer_fired.set()
            try:
                proc.p.kill()
            except Exception:  # noqa: BLE001
                pass

        timer = threading.Timer(self.timeout, kill)
        timer.daemon = True  # a pending timeout must not hold the interpreter's exit (Ctrl-C)
        timer.start()
        try:
            proc.p.stdin.write(json.dumps(job) + "\n")
            proc.p.stdin.flush()
            line = proc.p.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        finally:
            timer.cancel()
        if line:
            try:
                res = json.loads(line)
            except json.JSONDecodeError:
                res = {"ok": False, "stage": "worker", "error": f"unreadable worker answer: {line[:200]!r}"}
            err = proc.stderr_since(pos).strip()
            if err:
                res["stderr"] = err[-_STDERR_TAIL:]
            return proc, res
        try:
            proc.p.wait(10)
        except subprocess.TimeoutExpired:
            proc.p.kill()
            proc.p.wait(5)
        stderr = proc.stderr_since(pos)
        msg = llvm_message(stderr)
        if timer_fired.is_set():
            res = {"ok": False, "crashed": True, "stage": "timeout",
                   "error": f"timeout: no answer after {self.timeout:g}s (worker killed)"
                            + (f"; stderr: {msg}" if msg else "")}
        else:
            res = {"ok": False, "crashed": True, "stage": "abort",
                   "error": f"{_describe_exit(proc.p.returncode)}: {msg or '(no message on stderr)'}"}
        proc.close()
        self.restarts += 1
        return None, res

    def run(self, jobs: Sequence[dict], on_result: Callable[[int, dict], None] | None = None) -> list[dict]:
        results: list[Any] = [None] * len(jobs)
        if not jobs:
            return results
        if self.cluster is not None:  # a lost worker's job reruns; one dying every time is an abort
            return self.cluster.map(handle_remote, list(jobs), name="verify", on_result=on_result,
                                    job_timeout=self.timeout,
                                    on_crash=lambda job, msg: {"ok": False, "crashed": True, "error": msg,
                                                               "stage": "timeout" if msg.startswith("JobTimeout")
                                                               else "abort"})
        q: Queue = Queue()
        for i in range(len(jobs)):
            q.put(i)
        lock = threading.Lock()
        errors: list[BaseException] = []
        stop = threading.Event()  # set when the caller is interrupted (Ctrl-C): take no new job

        def loop():
            proc = None
            if self.keep:
                with self._idle_lock:
                    proc = self._idle.pop() if self._idle else None
            try:
                while not stop.is_set():
                    try:
                        i = q.get_nowait()
                    except Empty:
                        return
                    proc, res = self._run_one(proc, jobs[i])
                    results[i] = res
                    if on_result is not None:
                        with lock:
                            on_result(i, res)
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
            finally:
                if proc is not None and self.keep and proc.p.poll() is None:
                    with self._idle_lock:
                        self._idle.append(proc)
                elif proc is not None:
                    proc.close()

        threads = [threading.Thread(target=loop, daemon=True)
                   for _ in range(min(self.workers, len(jobs)))]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        except BaseException:
            stop.set()
            raise
        if errors:
            raise errors[0]
        return results


if __name__ == "__main__":
    serve()

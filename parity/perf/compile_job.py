"""One kernel compiled to gfx1250 assembly, in a worker process of :func:`compile_all`.

The compile is the runtime's and the AOT build's
(:func:`parity.llvm.compile.compile_text`: llvmlite's LLVM 22.1, parse,
verify, a target machine for the module's triple -- ``amdgcn-amd-amdhsa`` --
with ``cpu=<arch>`` and ``opt=3``) in its ``"asm"`` mode: the assembly instead
of the object, with verbose comments on (``set_asm_verbosity(True)``, as the
validity oracle compiles): they carry LLVM's loop information (:mod:`.loop`)
and the AsmPrinter's resource comments. Verbosity changes comments only, not
code. The resources come from the same reader as ``parity verify``'s ISA
report (parity/verify/isa_report.py).

LLVM aborts the process on some errors, so jobs run in a process pool
(spawned, as parity/aot/build.py runs its jobs); a dead worker fails the
kernels it held with one line, and the run goes on with a fresh pool.
"""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context

from parity.cli.interrupt import cancel_on_error, workers_ignore_sigint
from parity.llvm.compile import CompileError, compile_text


def compile_asm(text: str, kernel: str, arch: str) -> dict:
    """``{"ok": True, "asm", "report"}`` (report: ISAReport.to_json()) or ``{"ok": False, "stage", "error"}``."""
    from parity.verify.isa_report import build_report  # PyYAML ([verify] extra): compile side only
    try:
        asm = compile_text(text, arch, "asm")
    except CompileError as exc:
        return {"ok": False, "stage": exc.stage, "error": exc.message}
    return {"ok": True, "asm": asm, "report": build_report(asm, kernel, arch).to_json()}


def compile_all(jobs: list[tuple[str, str, str]], workers: int, on_result=None) -> list[dict]:
    """:func:`compile_asm` of every ``(text, kernel, arch)`` on ``workers`` processes, results in order.
    A job whose worker died is retried once in a fresh pool, then answered with ``stage`` "abort"."""
    results: list = [None] * len(jobs)
    todo = list(range(len(jobs)))
    for attempt in (0, 1):
        if not todo:
            break
        died = []
        with ProcessPoolExecutor(max_workers=max(1, min(workers, len(todo))),
                                 mp_context=get_context("spawn")) as pool:
            with workers_ignore_sigint():  # Ctrl-C: only this process stops the pool
                futs = {pool.submit(compile_asm, *jobs[i]): i for i in todo}
            with cancel_on_error(pool):   # Ctrl-C: the queued jobs are cancelled, not run
                for f in as_completed(futs):
                    i = futs[f]
                    try:
                        results[i] = f.result()
                    except BrokenProcessPool:
                        died.append(i)
                        continue
                    if on_result:
                        on_result(i, results[i])
        todo = sorted(died)
    for i in todo:
        results[i] = {"ok": False, "stage": "abort",
                      "error": f"the LLVM worker died compiling {jobs[i][1]} (parity verify shows LLVM's message)"}
        if on_result:
            on_result(i, results[i])
    return results

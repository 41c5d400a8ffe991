"""llvmlite in this process: the one LLVM set-up of the tools that compile.

Every compile of parity goes through here: the runtime's child process
(parity/runtime/_compile_worker.py), the AOT build's workers
(parity/aot/worker.py), the validity oracle's worker subprocesses
(parity/verify/compile_worker.py) and the perf report's process pool
(parity/perf/compile_job.py). The API:

* :func:`binding` -- ``llvmlite.binding`` with every target and asm printer
  initialised, once per process;
* :func:`llvm_version` -- the LLVM llvmlite is built on (``22.1.0``);
* :func:`parse_verify` -- parse and verify IR text (stage ``parse`` or
  ``verify`` in a :class:`CompileError`);
* :func:`target_machine` -- the cached target machine for a triple and CPU
  at ``opt=3``, with verbose assembly comments or without;
* :func:`compile_text` -- parse, verify and compile in one call, in one of
  two modes: ``"object"`` (the ELF relocatable object, plain target machine:
  the runtime and the AOT build) or ``"asm"`` (the assembly with verbose
  comments, which carry LLVM's loop information and the AsmPrinter's resource
  and occupancy comments: the perf report). The validity oracle, which wants
  both from one verbose target machine, uses the pieces.

Every error is the ``RuntimeError`` llvmlite raises, as a
:class:`CompileError` naming its stage with LLVM's message on one line.
LLVM aborts the whole process on some errors (an intrinsic the target cannot
select, an unknown CPU), so callers run these functions in a process of their
own, never in the parent of a run.
"""
from __future__ import annotations

DEFAULT_TRIPLE = "amdgcn-amd-amdhsa"
MODES = ("object", "asm")

_llvm = None
_machines: dict = {}


class CompileError(RuntimeError):
    """``stage`` (parse, verify, compile) failed with LLVM's ``message`` (one line)."""

    def __init__(self, stage: str, message: str):
        super().__init__(f"{stage}: {message}")
        self.stage = stage
        self.message = message


def message_line(exc: BaseException) -> str:
    """An exception's message with every run of white space (LLVM's newlines) made one space; never cut."""
    return " ".join(str(exc).split())


def binding():
    """``llvmlite.binding``, all targets and asm printers initialised (once per process).
    Raises ImportError when llvmlite is not installed."""
    global _llvm
    if _llvm is None:
        import llvmlite.binding as llvm  # optional: the [verify] / [runtime] extras; loaded on first use
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _llvm = llvm
    return _llvm


def llvm_version() -> str:
    """The LLVM version llvmlite is built on, e.g. ``22.1.0``."""
    return ".".join(str(v) for v in binding().llvm_version_info)


def parse_verify(text: str):
    """The verified llvmlite module of IR ``text``; :class:`CompileError` with stage
    ``parse`` or ``verify`` (the original error as its ``__cause__``)."""
    llvm = binding()
    try:
        m = llvm.parse_assembly(text)
    except RuntimeError as exc:
        raise CompileError("parse", message_line(exc)) from exc
    try:
        m.verify()
    except RuntimeError as exc:
        raise CompileError("verify", message_line(exc)) from exc
    return m


def target_machine(triple: str, arch: str, *, asm_comments: bool = False):
    """The target machine for ``triple`` with ``cpu=arch`` at ``opt=3``, one per
    (triple, arch, asm_comments) in this process. ``asm_comments``: verbose
    assembly (comments only, the code is the same). llvmlite's RuntimeError for
    a triple no target serves propagates as it is."""
    key = (triple, arch, asm_comments)
    if key not in _machines:
        tm = binding().Target.from_triple(triple).create_target_machine(cpu=arch, opt=3)
        if asm_comments:
            tm.set_asm_verbosity(True)
        _machines[key] = tm
    return _machines[key]


def compile_text(text: str, arch: str, mode: str = "object"):
    """IR ``text`` parsed, verified and compiled for ``arch`` (-O3) at the module's triple
    (``amdgcn-amd-amdhsa`` when it names none). ``mode`` "object": the ELF relocatable
    object (bytes); "asm": the assembly with verbose comments (str). Raises
    :class:`CompileError` (stage parse, verify or compile)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    m = parse_verify(text)
    try:
        tm = target_machine(m.triple or DEFAULT_TRIPLE, arch, asm_comments=mode == "asm")
        return tm.emit_object(m) if mode == "object" else tm.emit_assembly(m)
    except RuntimeError as exc:
        raise CompileError("compile", message_line(exc)) from exc

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
* :func:`compile_module` -- parse, verify and compile in one call, in one of
  two modes: ``"object"`` (the ELF relocatable object, plain target machine:
  the runtime and the AOT build) or ``"asm"`` (the assembly with verbose
  comments, which carry LLVM's loop information and the AsmPrinter's resource
  and occupancy comments: the perf report and the validity oracle), through
  the compile cache (parity/llvm/compile_cache.py): a module compiled before for
  the same LLVM, CPU and mode is not parsed or compiled again;
* :func:`compile_text` -- the same, the output alone.

Every error is the ``RuntimeError`` llvmlite raises, as a
:class:`CompileError` naming its stage with LLVM's message on one line.
LLVM aborts the whole process on some errors (an intrinsic the target cannot
select, an unknown CPU), so callers run these functions in a process of their
own, never in the parent of a run.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

from parity.llvm import compile_cache

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


@dataclass
class Compiled:
    """One compile of :func:`compile_module`.

    ``output``: the object (bytes) or the assembly (str); ``triple``: the
    module's target triple; ``defined``: the functions the module defines;
    ``externals``: the functions it declares that are not ``llvm.`` intrinsics;
    ``stderr``: what LLVM printed on stderr during the compile ("" none, None
    not known: stderr was not a file); ``cached``: read from the compile cache."""
    output: bytes | str
    triple: str
    defined: list[str] = field(default_factory=list)
    externals: list[str] = field(default_factory=list)
    stderr: str | None = None
    cached: bool = False


def _llvm_key() -> str:
    import llvmlite  # optional: the [verify] / [runtime] extras

    return f"LLVM {llvm_version()} (llvmlite {llvmlite.__version__})"


def cache_key(text: str, arch: str, mode: str) -> str:
    """The compile-cache key of IR ``text`` compiled for ``arch`` in ``mode``:
    sha256 of the text, the LLVM (and llvmlite) version, the CPU, -O3, the mode
    and asm verbosity."""
    return compile_cache.key(mode, text, llvm=_llvm_key(), cpu=arch, opt=3, asm_comments=mode == "asm")


def _stderr_pos() -> int | None:
    try:
        st = os.fstat(2)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _stderr_since(pos: int | None) -> str | None:
    if pos is None:
        return None
    try:
        with open("/proc/self/fd/2", "rb") as f:
            f.seek(pos)
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def cpu_named(output: bytes | str, arch: str) -> bool:
    """Whether LLVM compiled ``output`` for the processor ``arch`` (not a generic one
    it falls back to for a CPU it does not know): the assembly's ``.amdgcn_target``
    names it, or the AMDGPU ELF's e_flags carry a processor (EF_AMDGPU_MACH, the
    low byte, non-zero). Only such compiles are cached."""
    if isinstance(output, str):
        return re.search(rf'^\s*\.amdgcn_target\s+"[^"]*--{re.escape(arch)}[:"]', output, re.M) is not None
    return (output[:4] == b"\x7fELF" and len(output) >= 52 and int.from_bytes(output[18:20], "little") == 224
            and output[48] != 0)


def compile_module(text: str, arch: str, mode: str = "object") -> Compiled:
    """IR ``text`` parsed, verified and compiled for ``arch`` (-O3) at the module's triple
    (``amdgcn-amd-amdhsa`` when it names none), or read from the compile cache.
    ``mode`` "object": the ELF relocatable object (bytes); "asm": the assembly with
    verbose comments (str). A cache hit writes the compile's recorded stderr to
    fd 2, as the compile did. Raises :class:`CompileError` (stage parse, verify or
    compile), ValueError for an unknown mode."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    k = cache_key(text, arch, mode) if compile_cache.cache_dir() is not None else None
    e = compile_cache.load(k) if k else None
    if e is not None:
        md = e.meta
        if md.get("stderr"):
            os.write(2, md["stderr"].encode("utf-8"))
        out = e.data.decode("utf-8") if mode == "asm" else e.data
        return Compiled(out, md.get("triple", DEFAULT_TRIPLE), list(md.get("defined", [])),
                        list(md.get("externals", [])), md.get("stderr"), cached=True)
    m = parse_verify(text)
    triple = m.triple or DEFAULT_TRIPLE
    defined = [f.name for f in m.functions if not f.is_declaration]
    externals = [f.name for f in m.functions if f.is_declaration and not f.name.startswith("llvm.")]
    pos = _stderr_pos()
    try:
        tm = target_machine(triple, arch, asm_comments=mode == "asm")
        out = tm.emit_object(m) if mode == "object" else tm.emit_assembly(m)
    except RuntimeError as exc:
        raise CompileError("compile", message_line(exc)) from exc
    err = _stderr_since(pos)
    if k and cpu_named(out, arch):
        compile_cache.store(k, {"triple": triple, "defined": defined, "externals": externals, "stderr": err},
                            out.encode("utf-8") if isinstance(out, str) else bytes(out))
    return Compiled(out, triple, defined, externals, err)


def compile_text(text: str, arch: str, mode: str = "object"):
    """IR ``text`` parsed, verified and compiled for ``arch`` (-O3) at the module's triple
    (``amdgcn-amd-amdhsa`` when it names none), through the compile cache
    (:func:`compile_module`). ``mode`` "object": the ELF relocatable object (bytes);
    "asm": the assembly with verbose comments (str). Raises :class:`CompileError`
    (stage parse, verify or compile)."""
    return compile_module(text, arch, mode).output

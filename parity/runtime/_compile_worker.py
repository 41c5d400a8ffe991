"""One LLVM compile in a child process: ``python -m
parity.runtime._compile_worker IR_PATH OBJ_PATH ARCH``.

LLVM aborts the whole process on some errors (an intrinsic the target cannot
select, an unknown CPU), so the parent never runs llvmlite itself; it reads
this process's exit status and stderr (see parity/verify/compile_worker.py
for the same reasoning in the verify oracle). Exit 0: the ELF relocatable
object is at OBJ_PATH. Exit 2: a ``<stage>: <message>`` line on stderr.
"""
from __future__ import annotations

import os
import sys


_llvm = None
_machines: dict = {}


class CompileError(RuntimeError):
    """``stage`` (parse, verify, compile) failed with LLVM's message."""

    def __init__(self, stage: str, message: str):
        super().__init__(f"{stage}: {message}")
        self.stage = stage


def llvm_version() -> str:
    """The LLVM version llvmlite is built on, e.g. ``22.1.0``."""
    return ".".join(str(v) for v in _binding().llvm_version_info)


def _binding():
    global _llvm
    if _llvm is None:
        import llvmlite.binding as llvm
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _llvm = llvm
    return _llvm


def compile_text(text: str, arch: str) -> bytes:
    """The ELF relocatable object of LLVM IR ``text`` for ``arch`` (llvmlite, -O3),
    in this process: parse, verify, emit_object. Raises :class:`CompileError`.
    LLVM may abort the process on some errors, so callers run this in a process
    of their own (this module's ``main``, or a worker of parity.aot)."""
    llvm = _binding()
    stage = "parse"
    try:
        m = llvm.parse_assembly(text)
        stage = "verify"
        m.verify()
        stage = "compile"
        triple = m.triple or "amdgcn-amd-amdhsa"
        key = (triple, arch)
        if key not in _machines:
            _machines[key] = llvm.Target.from_triple(triple).create_target_machine(cpu=arch, opt=3)
        return _machines[key].emit_object(m)
    except RuntimeError as exc:
        raise CompileError(stage, " ".join(str(exc).split())) from None


def main(argv) -> int:
    ir_path, obj_path, arch = argv
    try:
        _binding()
    except ImportError as exc:
        sys.stderr.write(f"import: llvmlite is not installed ({exc}); pip install 'splitk-parity[runtime]'\n")
        return 2
    with open(ir_path, encoding="utf-8") as f:
        text = f.read()
    try:
        obj = compile_text(text, arch)
    except CompileError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    tmp = obj_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(obj)
    os.replace(tmp, obj_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

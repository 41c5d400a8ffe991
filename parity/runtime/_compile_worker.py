"""One LLVM compile in a child process: ``python -m
parity.runtime._compile_worker IR_PATH OBJ_PATH ARCH``.

LLVM aborts the whole process on some errors (an intrinsic the target cannot
select, an unknown CPU), so the parent never runs llvmlite itself; it reads
this process's exit status and stderr (see parity/verify/compile_worker.py
for the same reasoning in the verify oracle). The compile is
:func:`parity.llvm.compile.compile_text` in object mode. Exit 0: the ELF
relocatable object is at OBJ_PATH. Exit 2: a ``<stage>: <message>`` line on
stderr.
"""
from __future__ import annotations

import os
import sys

from parity.llvm.compile import CompileError, binding, compile_text


def main(argv) -> int:
    ir_path, obj_path, arch = argv
    try:
        binding()
    except ImportError as exc:
        sys.stderr.write(f"import: llvmlite is not installed ({exc}); pip install 'splitk-parity[runtime]'\n")
        return 2
    with open(ir_path, encoding="utf-8") as f:
        text = f.read()
    try:
        obj = compile_text(text, arch, "object")
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

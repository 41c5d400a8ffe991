"""One LLVM compile in a child process: ``python -m
python_engine.runtime._compile_worker IR_PATH OBJ_PATH ARCH``.

LLVM aborts the whole process on some errors (an intrinsic the target cannot
select, an unknown CPU), so the parent never runs llvmlite itself; it reads
this process's exit status and stderr (see parity/verify/compile_worker.py
for the same reasoning in the verify oracle). Exit 0: the ELF relocatable
object is at OBJ_PATH. Exit 2: a ``<stage>: <message>`` line on stderr.
"""
from __future__ import annotations

import os
import sys


def main(argv) -> int:
    ir_path, obj_path, arch = argv
    try:
        import llvmlite.binding as llvm
    except ImportError as exc:
        sys.stderr.write(f"import: llvmlite is not installed ({exc}); pip install 'splitk-parity[runtime]'\n")
        return 2
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    with open(ir_path, encoding="utf-8") as f:
        text = f.read()
    for stage in ("parse", "verify", "compile"):
        try:
            if stage == "parse":
                m = llvm.parse_assembly(text)
            elif stage == "verify":
                m.verify()
            else:
                tm = llvm.Target.from_triple(m.triple or "amdgcn-amd-amdhsa").create_target_machine(
                    cpu=arch, opt=3)
                obj = tm.emit_object(m)
        except RuntimeError as exc:
            sys.stderr.write(f"{stage}: {' '.join(str(exc).split())}\n")
            return 2
    tmp = obj_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(obj)
    os.replace(tmp, obj_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

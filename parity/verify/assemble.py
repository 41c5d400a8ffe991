"""The validity oracle's code object, from the one assembly it compiles.

`parity verify` compiles each module once, to the verbose assembly its ISA
report and descriptor check read (parity/llvm_compile.compile_module). The
code object it also checks (an AMDGPU ELF; its size in the report) is made by
assembling that assembly with LLVM's own assembler, ``llvm-mc`` of the same
LLVM major release (Debian's ``llvm-22``, which scripts/bootstrap.sh installs
for ``llvm-mca-22``; ``$PARITY_LLVM_MC`` names another): a few milliseconds
instead of a second code generation. Assembling also checks that every
instruction LLVM printed parses and encodes for the CPU. Without such an
``llvm-mc`` the object comes from llvmlite (a second code generation, as
before). Results are kept in the compile cache (kind ``mc-object``, keyed by
the assembly's sha256, llvm-mc's version, the triple and CPU).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache

from parity.llvm import compile_cache

ENV = "PARITY_LLVM_MC"
EM_AMDGPU = 224


class AssembleError(RuntimeError):
    """llvm-mc refused the assembly: ``message`` is its first error lines."""


@lru_cache(maxsize=None)
def find_llvm_mc(major: int) -> tuple[str, str] | None:
    """(path, version line) of an ``llvm-mc`` of LLVM ``major`` (``$PARITY_LLVM_MC``,
    else ``llvm-mc-<major>`` on PATH), or None when there is none of that release."""
    cand = os.environ.get(ENV) or shutil.which(f"llvm-mc-{major}")
    if not cand:
        return None
    try:
        p = subprocess.run([cand, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"LLVM version (\d+)\.[\w.]+", p.stdout)
    if p.returncode != 0 or not m or int(m.group(1)) != major:
        return None
    return cand, m.group(0)


def elf_facts(obj: bytes) -> dict:
    """``{"bytes": size, "elf_machine": e_machine or None}`` of an object file's bytes."""
    machine = int.from_bytes(obj[18:20], "little") if obj[:4] == b"\x7fELF" and len(obj) > 19 else None
    return {"bytes": len(obj), "elf_machine": machine}


def assemble_facts(asm: str, triple: str, arch: str, tool: tuple[str, str], timeout: float = 120.0) -> dict:
    """:func:`elf_facts` of ``asm`` assembled by ``tool`` (path, version) for ``triple``
    and ``arch``, through the compile cache. Raises :class:`AssembleError`."""
    k = compile_cache.key("mc-object", asm, tool=tool[1], triple=triple, cpu=arch)
    e = compile_cache.load(k)
    if e is not None and "bytes" in e.meta:
        return {"bytes": e.meta["bytes"], "elf_machine": e.meta.get("elf_machine")}
    try:
        p = subprocess.run([tool[0], f"-triple={triple}", f"-mcpu={arch}", "-filetype=obj", "-o", "-"],
                           input=asm.encode("utf-8"), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise AssembleError(f"{tool[1]} llvm-mc: no answer after {timeout:g}s") from exc
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0 or "error:" in err:
        lines = [l.strip() for l in err.splitlines() if "error:" in l] or [l.strip() for l in err.splitlines()[-3:]]
        raise AssembleError(" | ".join(lines[:3]) or f"llvm-mc exited {p.returncode}")
    facts = elf_facts(p.stdout)
    compile_cache.store(k, facts, b"")
    return facts

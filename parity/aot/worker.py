"""One AOT job in a worker process: compile the IR with llvmlite
(parity/llvm_compile.compile_text in object mode, in this process), link
with ld.lld (parity/runtime/codeobj.link_object), check the code object
and read its resources from the metadata note (runtime/elf.py), write the
file atomically. The parent (:mod:`.build`) runs these in a process pool, so
an LLVM abort takes down one worker, not the build.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from .manifest import resources
from parity.llvm.compile import CompileError, compile_text, llvm_version
from parity.runtime.codeobj import find_linker, link_object
from parity.runtime.elf import check_code_object
from parity.launch.errors import CodeObjectError

_linker = None


def _find_linker():
    global _linker
    if _linker is None:
        _linker = find_linker()
    return _linker


def build_one(job: dict) -> dict:
    """``job``: ``kernel``, ``arch``, ``text``, ``out`` (absolute path of the code object, or
    None: the bytes are returned as ``data``, not written). Returns ``{"ok": True, "sha256", "bytes", "resources", "compile", "link"}`` or
    ``{"ok": False, "error"}``."""

    t0 = time.perf_counter()
    try:
        obj = compile_text(job["text"], job["arch"], "object")
    except CompileError as exc:
        return {"ok": False, "error": f"compile: {exc}"}
    t1 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="splitk-aot-") as wd:
            data = link_object(obj, wd, _find_linker())
        md = check_code_object(data, job["kernel"], job["arch"])
    except CodeObjectError as exc:
        return {"ok": False, "error": f"link: {exc}"}
    t2 = time.perf_counter()
    out = job["out"]
    if out is None:  # on a Dask worker: the parent writes the file (build_remote)
        return {"ok": True, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "data": data,
                "resources": resources(md, job["arch"]), "compile": t1 - t0, "link": t2 - t1}
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = f"{out}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)
    return {"ok": True, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
            "resources": resources(md, job["arch"]), "compile": t1 - t0, "link": t2 - t1}


def build_remote(job: dict) -> dict:
    """On a Dask worker (``parity aot --build --scheduler``): :func:`build_one` returning the
    code object's bytes as ``data`` (the worker may not share the build directory)."""
    return build_one(dict(job, out=None))


def versions() -> dict:
    """The LLVM version of llvmlite and the linker's version (checked in the parent before a build)."""
    return {"llvm_version": llvm_version(), "linker": _find_linker().version}

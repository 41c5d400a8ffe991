"""Load kernels from an AOT manifest instead of compiling them (docs/runtime.md).

``parity aot --flavor F --build DIR`` (parity/aot/, docs/aot.md) writes
``DIR/manifest.json``: a versioned JSON document whose ``jobs`` list holds,
per kernel, its identity hash, kernel name, spec, the sha256 of the IR text
it was built from (``ir_sha256``), the code-object file (relative to the
manifest's directory) with its sha256, and the ISA resources.

:class:`AotManifest` finds the entry of a kernel whose IR text is the one the
engine emits now (same kernel name, arch, flavor and ``ir_sha256``), reads
its code object, checks the file's sha256 against the manifest and the ELF
with :func:`.elf.check_code_object`, and returns a :class:`.codeobj.CodeObject`.
An entry built from other IR (the engine changed since the build) is not
used: the caller compiles instead (``misses`` says why).
"""
from __future__ import annotations

import hashlib
import json
import os

from parity.base.escape import shown
from parity.base.json_guard import load_json
from parity.base.input_files import MAX_CODE_OBJECT_BYTES, MAX_MANIFEST_BYTES, InputFileError, read_bytes

from .elf import check_code_object
from parity.launch.errors import CodeObjectError
from .objects import CodeObject, text_sha256

MANIFEST_FORMAT = "splitk-parity-aot-manifest"
MANIFEST_VERSION = 1


def read_manifest(path: str) -> dict:
    """The manifest document at ``path``; CodeObjectError when it is not a
    regular file of at most MAX_MANIFEST_BYTES (checked before open:
    parity/base/input_files.py), not UTF-8 JSON, or not of this format and version."""
    name = shown(path)
    try:
        data = read_bytes(path, "AOT manifest", MAX_MANIFEST_BYTES)
    except InputFileError as e:
        raise CodeObjectError(str(e)) from None
    try:
        doc = load_json(data, str(path), max_bytes=MAX_MANIFEST_BYTES)
    except (ValueError, RecursionError) as e:
        raise CodeObjectError(f"AOT manifest {name} is not UTF-8 JSON ({shown(e)})") from None
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else doc
        raise CodeObjectError(f"{name}: format must be {MANIFEST_FORMAT!r}, got {shown(repr(got)[:200], 80)}")
    if doc.get("version") != MANIFEST_VERSION:
        raise CodeObjectError(f"{name}: manifest version {shown(repr(doc.get('version'))[:200], 80)} is not "
                              f"{MANIFEST_VERSION} (rebuild with this checkout's parity aot --build)")
    if not isinstance(doc.get("jobs"), list):
        raise CodeObjectError(f"{name}: jobs must be a list")
    return doc


class AotManifest:
    """A loaded manifest; :meth:`code_object` returns a kernel's prebuilt code object."""

    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        self.dir = os.path.dirname(self.path)
        self.doc = read_manifest(path)
        self.arch = self.doc.get("arch")
        self.flavor = self.doc.get("flavor")
        self._by_kernel = {j["kernel"]: j for j in self.doc["jobs"] if isinstance(j, dict) and "kernel" in j}
        self.hits = 0
        self.misses: list = []   # (kernel, why) of kernels the manifest did not serve

    def __len__(self) -> int:
        return len(self._by_kernel)

    def entry(self, kernel: str) -> dict | None:
        return self._by_kernel.get(kernel)

    def code_object(self, kernel: str, text: str, arch: str, flavor: str):
        """The prebuilt code object of ``kernel`` lowered to ``text`` at ``arch``/``flavor``,
        or None (reason appended to ``misses``). A damaged file (sha256 or ELF check
        fails) raises CodeObjectError: the manifest promised a kernel it cannot give."""
        e = self._by_kernel.get(kernel)
        why = None
        if e is None:
            why = "not in the manifest"
        elif (self.arch, self.flavor) != (arch, flavor):
            why = f"the manifest is for {self.arch}/{self.flavor}, not {arch}/{flavor}"
        elif e.get("ir_sha256") != text_sha256(text):
            why = "built from other IR (the engine changed since the build)"
        if why:
            self.misses.append((kernel, why))
            return None
        p = os.path.join(self.dir, e["code_object"])
        try:
            data = read_bytes(p, "code object", MAX_CODE_OBJECT_BYTES)
        except InputFileError as exc:
            raise CodeObjectError(f"AOT manifest {shown(self.path)}: {exc}") from None
        if hashlib.sha256(data).hexdigest() != e.get("code_object_sha256"):
            raise CodeObjectError(f"AOT manifest {self.path}: {p} does not match its sha256")
        meta = check_code_object(data, kernel, arch)
        self.hits += 1
        return CodeObject(kernel, arch, flavor, e["ir_sha256"], data, meta, p)

"""Code objects: LLVM IR text -> ELF relocatable object (llvmlite, in a child
process) -> HSA code object (``ld.lld -shared``), cached on disk.

Linker: LLVM 22's ``ld.lld`` (Debian ``lld-22``, installed by
scripts/bootstrap.sh), the same LLVM generation as llvmlite 0.50 (LLVM 22.1)
that writes the objects; see docs/runtime.md for why. Lookup order:
``$SPLITK_LLD`` (a path, used as given), ``ld.lld-22`` on PATH,
``/usr/lib/llvm-22/bin/ld.lld``, the ``ziglang`` package's ``ld.lld``
(``python -m ziglang ld.lld``); every found linker but ``$SPLITK_LLD`` must
report LLD >= 22.

Cache: one file per (kernel name, sha256 of the IR text, arch, flavor) in
``$SPLITK_CODE_OBJECT_CACHE`` (default ``$XDG_CACHE_HOME/splitk-parity/code-objects``,
``~/.cache/...``), or the directory given to :class:`CodeObjectCache`.
An AOT manifest (``CodeObjectCache(manifest=...)``, runtime/manifest.py) is
consulted first: a kernel it holds for the same IR is loaded, not compiled.
Writers hold a per-entry file lock and publish by atomic rename, so parallel
processes building the same kernel link it once and never read half a file.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from filelock import FileLock
import importlib.util

from .elf import check_code_object
from parity.launch.errors import CodeObjectError, LinkerMissing
from .manifest import AotManifest
from .objects import CodeObject, text_sha256
import python_engine as api

MIN_LLD_MAJOR = 22
COMPILE_TIMEOUT = 600.0
LINK_TIMEOUT = 120.0
_REPO = str(Path(__file__).resolve().parents[2])
INSTALL_LLD = ("install Debian's lld-22 (scripts/bootstrap.sh does: apt-get install lld-22) "
               "or set SPLITK_LLD to an LLVM 22 ld.lld")


@dataclass(frozen=True)
class Linker:
    argv: tuple          # the command prefix, e.g. ("/usr/bin/ld.lld-22",)
    version: str         # "LLD 22.1.8"
    major: int


def _lld_version(argv) -> tuple:
    try:
        r = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{' '.join(argv)} --version failed: {exc}"
    m = re.search(r"LLD (\d+)\.(\d+)(?:\.(\d+))?", r.stdout + r.stderr)
    if not m:
        return None, f"{' '.join(argv)} --version printed no LLD version"
    return (m.group(0), int(m.group(1))), None


def _candidates():
    for name in ("ld.lld-22",):
        p = shutil.which(name)
        if p:
            yield (p,)
    p = "/usr/lib/llvm-22/bin/ld.lld"
    if os.path.exists(p):
        yield (p,)
    try:
        if importlib.util.find_spec("ziglang") is not None:
            yield (sys.executable, "-m", "ziglang", "ld.lld")
    except (ImportError, ValueError):
        pass


def find_linker() -> Linker:
    """The linker to use, or LinkerMissing saying what was tried and what to install."""
    env = os.environ.get("SPLITK_LLD")
    if env:
        v, err = _lld_version((env,))
        if v is None:
            raise LinkerMissing(f"SPLITK_LLD={env} is not a working ld.lld: {err}")
        return Linker((env,), v[0], v[1])
    tried = []
    for argv in _candidates():
        v, err = _lld_version(argv)
        if v is None:
            tried.append(err)
            continue
        if v[1] < MIN_LLD_MAJOR:
            tried.append(f"{' '.join(argv)} is {v[0]} (gfx1250 code objects need LLD >= {MIN_LLD_MAJOR})")
            continue
        return Linker(tuple(argv), v[0], v[1])
    detail = "; ".join(tried) if tried else "no ld.lld-22, /usr/lib/llvm-22/bin/ld.lld or ziglang found"
    raise LinkerMissing(f"no LLVM {MIN_LLD_MAJOR} linker for AMDGPU code objects ({detail}); {INSTALL_LLD}")


def _tail(s: str, n: int = 2000) -> str:
    lines = [ln.strip() for ln in s.splitlines() if ln.strip()]
    key = [ln for ln in lines if "LLVM ERROR" in ln or "error:" in ln or ":" in ln[:10]]
    msg = " | ".join(key or lines[-5:])
    return msg[-n:]


def compile_object(text: str, arch: str, workdir: str, timeout: float = COMPILE_TIMEOUT) -> bytes:
    """The ELF relocatable object of ``text`` for ``arch`` (llvmlite -O3, child process)."""
    ir = os.path.join(workdir, "kernel.ll")
    obj = os.path.join(workdir, "kernel.o")
    with open(ir, "w", encoding="utf-8") as f:
        f.write(text)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_REPO, env.get("PYTHONPATH", "")) if p)
    try:
        r = subprocess.run([sys.executable, "-m", "parity.runtime._compile_worker", ir, obj, arch],
                           capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise CodeObjectError(f"compile for {arch}: no result after {timeout:g}s (worker killed)") from None
    if r.returncode != 0:
        how = (f"worker exited with status {r.returncode}" if r.returncode > 0
               else f"worker killed by signal {-r.returncode}")
        raise CodeObjectError(f"compile for {arch} failed ({how}): {_tail(r.stderr) or '(no message)'}")
    with open(obj, "rb") as f:
        return f.read()


def link_object(obj: bytes, workdir: str, linker: Linker | None = None,
                timeout: float = LINK_TIMEOUT) -> bytes:
    """``ld.lld -shared`` of one object: the loadable HSA code object bytes."""
    linker = linker or find_linker()
    src = os.path.join(workdir, "link_in.o")
    out = os.path.join(workdir, "link_out.hsaco")
    with open(src, "wb") as f:
        f.write(obj)
    try:
        r = subprocess.run([*linker.argv, "-shared", "--no-undefined", src, "-o", out],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CodeObjectError(f"link: {linker.argv[0]} gave no result after {timeout:g}s") from None
    if r.returncode != 0:
        raise CodeObjectError(f"link with {linker.version} failed: {_tail(r.stderr + r.stdout)}")
    with open(out, "rb") as f:
        return f.read()


def default_cache_dir() -> str:
    env = os.environ.get("SPLITK_CODE_OBJECT_CACHE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "splitk-parity", "code-objects")


class CodeObjectCache:
    """Code objects on disk keyed by kernel identity (name + sha256 of the IR
    text) and flavor (and arch); ``build`` compiles and links on a miss."""

    def __init__(self, directory: str | None = None, linker: Linker | None = None, manifest=None):
        """``manifest``: an :class:`.manifest.AotManifest` (or its path) consulted
        before the cache: a kernel it holds for the same IR is loaded, not compiled."""
        self.dir = Path(directory or default_cache_dir())
        self._linker = linker
        if isinstance(manifest, (str, os.PathLike)):
            manifest = AotManifest(str(manifest))
        self.manifest = manifest
        self.hits = 0
        self.builds = 0

    def key(self, kernel: str, text: str, arch: str, flavor: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel or ""):
            raise CodeObjectError(f"kernel name {kernel!r} is not an identifier")
        return f"{kernel}.{arch}.{flavor}.{text_sha256(text)}"

    def path(self, kernel, text, arch, flavor) -> Path:
        return self.dir / (self.key(kernel, text, arch, flavor) + ".hsaco")

    def _load(self, p: Path, kernel, text, arch, flavor) -> CodeObject | None:
        try:
            data = p.read_bytes()
        except OSError:
            return None
        try:
            meta = check_code_object(data, kernel, arch)
        except CodeObjectError:
            return None  # a damaged entry is rebuilt
        return CodeObject(kernel, arch, flavor, text_sha256(text), data, meta, str(p))

    def build(self, kernel: str, text: str, arch: str, flavor: str) -> CodeObject:
        p = self.path(kernel, text, arch, flavor)
        if self.manifest is not None:
            co = self.manifest.code_object(kernel, text, arch, flavor)
            if co is not None:
                return co
        co = self._load(p, kernel, text, arch, flavor)
        if co is not None:
            self.hits += 1
            return co
        self.dir.mkdir(parents=True, exist_ok=True)
        with FileLock(str(p) + ".lock"):
            co = self._load(p, kernel, text, arch, flavor)
            if co is not None:
                self.hits += 1
                return co
            data, meta = build_code_object(text, kernel, arch, linker=self._linker)
            tmp = p.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(data)
            os.replace(tmp, p)
            side = {"kernel": kernel, "arch": arch, "flavor": flavor, "text_sha256": text_sha256(text)}
            p.with_suffix(".json").write_text(json.dumps(side, sort_keys=True) + "\n")
            self.builds += 1
            return CodeObject(kernel, arch, flavor, text_sha256(text), data, meta, str(p))


def build_code_object(text: str, kernel: str, arch: str, linker: Linker | None = None) -> tuple:
    """Compile + link + validate, no cache: ``(code object bytes, kernel metadata)``."""
    linker = linker or find_linker()
    with tempfile.TemporaryDirectory(prefix="splitk-co-") as wd:
        obj = compile_object(text, arch, wd)
        data = link_object(obj, wd, linker)
    return data, check_code_object(data, kernel, arch)


def build_kernel(family: str, spec: dict, arch: str, flavor: str,
                 cache: CodeObjectCache | None = None) -> CodeObject:
    """Lower ``family``/``spec`` with the Python engine and build (or fetch) its code object."""
    lo = api.lower(family, spec, arch, flavor)
    return (cache or CodeObjectCache()).build(lo.kernel, lo.text, arch, api.resolve_flavor(flavor))

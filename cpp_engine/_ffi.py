"""cffi ABI-mode declarations of the C API and the loaded library.

The declarations are read from the installed C headers
(``<prefix>/include/cpp_engine/*.h``, the same files a C program includes), so
the binding can never drift from the headers: comments, preprocessor lines,
the ``extern "C"`` guard and the ``CPE_API`` export macro are stripped and the
rest goes to ``ffi.cdef``. ``cpp_engine.h`` comes first (the shared types),
then the family headers in name order.
"""
from __future__ import annotations

import os
import re

import cffi

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_CPLUSPLUS_GUARD = re.compile(r'#ifdef __cplusplus\s*\n\s*(extern "C" \{|\})\s*\n\s*#endif')


def header_cdef(text: str) -> str:
    """The cffi-ready declarations of one C header's text."""
    text = _COMMENT.sub("", text)
    text = _CPLUSPLUS_GUARD.sub("", text)
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    return "\n".join(lines).replace("CPE_API ", "")


def headers_cdef(include_dir: str) -> str:
    """Declarations of every header in ``include_dir`` (cpp_engine.h first).
    Raises FileNotFoundError when cpp_engine.h is not there."""
    names = sorted(n for n in os.listdir(include_dir) if n.endswith(".h"))
    names.remove("cpp_engine.h")
    out = []
    for n in ["cpp_engine.h"] + names:
        with open(os.path.join(include_dir, n), encoding="utf-8") as f:
            out.append(header_cdef(f.read()))
    return "\n".join(out)


def _installed_libpath():
    """The ``_libpath`` module of the installed distribution, for a source tree's
    ``cpp_engine/`` that has no built library.

    Python run from a checkout's root after a non-editable install (``pip
    install .``, a wheel) imports the checkout's ``cpp_engine/`` (the working
    directory comes first on ``sys.path``) instead of the installed package.
    Its Python files are the binding itself; only the library, the headers and
    ``_libpath.py`` come from the build, so they are taken from the installed
    distribution (``importlib.metadata``'s record of
    ``cpp_engine/_libpath.py``). None when nothing is installed."""
    import importlib.metadata as md
    import importlib.util
    try:
        dist = md.distribution("splitk-parity")
    except md.PackageNotFoundError:
        return None
    path = os.path.abspath(str(dist.locate_file("cpp_engine/_libpath.py")))
    if not os.path.isfile(path) or os.path.dirname(path) == os.path.dirname(os.path.abspath(__file__)):
        return None
    spec = importlib.util.spec_from_file_location("cpp_engine._libpath", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _load():
    try:
        from . import _libpath
    except ImportError:
        _libpath = _installed_libpath()
        if _libpath is None:
            raise ImportError("cpp_engine is not built: no cpp_engine/_libpath.py here and no installed "
                              "splitk-parity; run `bash scripts/bootstrap.sh` (or `pip install .`)") from None
    f = cffi.FFI()
    f.cdef(headers_cdef(os.path.join(_libpath.PREFIX, "include", "cpp_engine")))
    return f, f.dlopen(_libpath.LIBRARY), _libpath


ffi, lib, libpath = _load()

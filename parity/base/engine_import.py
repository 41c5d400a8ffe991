"""Importing an engine without letting a broken one take the CLI down (docs/cli.md,
"A broken engine").

The ``parity`` program starts without importing either engine (``--help``,
``--version``, ``merge-golden``, the golden git drivers and every command that
lowers no kernel work while ``python_engine/`` holds a conflict marker or
``cpp_engine/src/`` does not compile). A command that lowers kernels imports the
engines it runs through :func:`import_engine` first; a failure is
:class:`EngineImportError`, whose text is one line naming the file, the line and
the error::

    python engine failed to import: python_engine/kernels/ir_core.py:812: invalid syntax (conflict marker?)
    cpp engine failed to build: cpp_engine/src/kernels/ir_core.cpp:96: expected unqualified-id (conflict marker?)

The C++ engine's editable install rebuilds the library when ``cpp_engine`` is
imported (pyproject.toml ``editable.rebuild``); the compiler's messages of that
rebuild are captured (file descriptor 2, :func:`captured_stderr`) and the first
``error:`` line is the one shown. A library that builds but cannot be loaded
(``dlopen``) is ``cpp engine failed to load: ...``.

Imports nothing of parity but :mod:`parity.base.escape` (the bottom layer).
"""
from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType, TracebackType

from parity.base.escape import shown

#: The engine names of ``--engines`` and the packages they import.
ENGINE_PACKAGES = {"python": "python_engine", "cpp": "cpp_engine"}
#: What git writes on the lines of an unresolved merge (``git merge``, diff3 style too).
CONFLICT_MARKERS = ("<<<<<<<", "=======", ">>>>>>>", "|||||||")
#: The project root (parity/base/engine_import.py -> parents[2]): paths in messages are relative to it.
ROOT = Path(__file__).resolve().parents[2]
#: A compiler's or linker's error line: ``FILE:LINE[:COL]: [fatal ]error: MESSAGE``.
_COMPILER_ERROR = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(?P<msg>.*)$")
#: CMake's own error: ``CMake Error at FILE:LINE (command):``.
_CMAKE_ERROR = re.compile(r"^CMake Error at (?P<file>[^:]+):(?P<line>\d+)")
#: A linker error without a source line (``undefined reference to``, ``ld: ...``).
_LINK_ERROR = re.compile(r"(undefined reference to .*|ld(?:\.\w+)?: error: .*|collect2: error: .*)$")


#: How an engine is imported (the tests stand a failing rebuild in for it).
_import = importlib.import_module


class EngineImportError(Exception):
    """An engine that cannot be imported, built or loaded; ``str()`` is the one line to print."""


def relative(path: str | os.PathLike) -> str:
    """``path`` relative to the project root when it lies under it, else as given (escaped)."""
    try:
        return shown(Path(path).resolve().relative_to(ROOT).as_posix())
    except (ValueError, OSError):
        return shown(str(path))


def source_path(path: str) -> str:
    """A path a build tool printed (relative to its build directory: ``../../cpp_engine/src/x.cpp``)
    as a path under the project root when it names a file of the project, else as printed."""
    if os.path.isabs(path):
        return path
    for anchor in ("cpp_engine/", "python_engine/", "CMakeLists.txt"):
        at = path.find(anchor)
        if at >= 0 and (ROOT / path[at:]).exists():
            return str(ROOT / path[at:])
    return path


def marker_note(path: str | os.PathLike, lineno: int | None) -> str:
    """`` (conflict marker?)`` when line ``lineno`` of ``path`` (1-based) starts with a git
    conflict marker, `` (conflict marker at line N)`` when another line of the file does,
    else the empty string (an unreadable file: the empty string)."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    if lineno and 0 < lineno <= len(lines) and lines[lineno - 1].startswith(CONFLICT_MARKERS):
        return " (conflict marker?)"
    first = next((i for i, text in enumerate(lines, 1) if text.startswith(CONFLICT_MARKERS[::2])), None)
    return f" (conflict marker at line {first})" if first else ""


def _innermost_engine_frame(tb: TracebackType | None, package: str):
    """(file, line) of the innermost traceback frame inside the engine package ``package``, or None."""
    found = None
    while tb is not None:
        fname = tb.tb_frame.f_code.co_filename
        if f"{os.sep}{package}{os.sep}" in fname:
            found = (fname, tb.tb_lineno)
        tb = tb.tb_next
    return found


def first_line(text: object) -> str:
    """The first non-empty line of ``text`` (escaped), or the empty string."""
    return shown(next((t.strip() for t in str(text).splitlines() if t.strip()), ""), limit=300)


def engine_import_error(engine: str, exc: BaseException) -> str:
    """The one line for ``exc`` raised by importing ``engine`` ("python" or "cpp"):
    ``<engine> engine failed to import: FILE:LINE: ERROR``. A SyntaxError names its own
    file and line; any other error the innermost frame inside the engine's package."""
    package = ENGINE_PACKAGES.get(engine, engine)
    head = f"{engine} engine failed to import"
    if isinstance(exc, SyntaxError) and exc.filename:
        return (f"{head}: {relative(exc.filename)}:{exc.lineno}: {shown(exc.msg)}"
                f"{marker_note(exc.filename, exc.lineno)}")
    where = _innermost_engine_frame(exc.__traceback__, package)
    msg = f"{type(exc).__name__}: {first_line(exc)}" if first_line(exc) else type(exc).__name__
    if where is None:
        return f"{head}: {msg}"
    return f"{head}: {relative(where[0])}:{where[1]}: {msg}{marker_note(*where)}"


def build_error(output: str) -> str | None:
    """``FILE:LINE: MESSAGE`` of the first compiler, CMake or linker error in ``output``
    (a build log), with the conflict-marker note; None when it holds none."""
    for raw in output.splitlines():
        text = raw.strip()
        m = _COMPILER_ERROR.match(text) or _CMAKE_ERROR.match(text)
        if m:
            path = source_path(m.group("file"))
            msg = m.groupdict().get("msg") or "CMake error"
            note = "" if "conflict marker" in msg else marker_note(path, int(m.group("line")))
            return f"{relative(path)}:{m.group('line')}: {shown(msg, limit=300)}{note}"
    for raw in output.splitlines():
        m = _LINK_ERROR.search(raw.strip())
        if m:
            return shown(m.group(1), limit=300)
    return None


@contextmanager
def captured_stderr():
    """Collect what this process and its children write on file descriptor 2 (a build
    run by an import) into the list yielded; nothing is shown while it runs."""
    box: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield box
        finally:
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            box.append(tmp.read().decode("utf-8", errors="replace"))


def cpp_import_error(exc: BaseException, output: str) -> str:
    """The one line for a failed ``import cpp_engine`` whose rebuild wrote ``output``."""
    if isinstance(exc, subprocess.CalledProcessError) or "Error" in output and build_error(output):
        where = build_error(output + "\n" + str(getattr(exc, "stdout", "") or ""))
        return f"cpp engine failed to build: {where or 'cmake --build failed (' + first_line(exc) + ')'}"
    if isinstance(exc, OSError) or "cannot open shared object" in str(exc) or "undefined symbol" in str(exc):
        return f"cpp engine failed to load: {first_line(exc)}"
    return engine_import_error("cpp", exc)


def import_engine(engine: str) -> ModuleType:
    """Import the engine ``engine`` ("python", "cpp" or a module name) and return it;
    :class:`EngineImportError` with one line when it cannot be imported (a syntax error,
    a conflict marker, a failed C++ rebuild, a library that does not load). The C++
    rebuild's output is shown only when the import fails (summarised) -- or, after a
    successful import, written to stderr as it came."""
    package = ENGINE_PACKAGES.get(engine, engine)
    if package in sys.modules:
        return sys.modules[package]
    if package != "cpp_engine":
        try:
            return _import(package)
        except Exception as exc:  # noqa: BLE001 - SyntaxError and anything a module body raises
            sys.modules.pop(package, None)
            raise EngineImportError(engine_import_error(engine, exc)) from None
    failure = None
    with captured_stderr() as box:
        try:
            module = _import(package)
        except Exception as exc:  # noqa: BLE001 - CalledProcessError (rebuild), OSError (dlopen), ...
            failure = exc
    output = box[0] if box else ""
    if failure is not None:
        sys.modules.pop(package, None)
        raise EngineImportError(cpp_import_error(failure, output)) from None
    output = without_glob_notices(output)
    if output:
        sys.stderr.write(output)
    return module


#: CMake's CONFIGURE_DEPENDS re-glob notice (CMakeLists.txt globs src/**/*.cpp and the
#: headers): ``-- GLOB mismatch!``, ``The following files were added:`` (or removed), then
#: one ``  +PATH`` / ``  -PATH`` line per file, printed twice per glob.
_GLOB_NOTICE = re.compile(r"^-- GLOB mismatch!\n(?:The following files were (?:added|removed):\n"
                          r"(?:  [+-][^\n]*\n)*)*", re.M)


def without_glob_notices(output: str) -> str:
    """A successful rebuild's output without CMake's glob notices: after `parity new-family`
    (or any added or removed C++ file) the first command printed 15 such lines on stderr
    before its results, though nothing was wrong; any other output is kept as it came."""
    return _GLOB_NOTICE.sub("", output)


def engine_failure(exc: BaseException) -> str | None:
    """The one line of :func:`engine_import_error` when ``exc`` comes from an engine's own
    sources (a SyntaxError in one of their files, or a frame of the traceback inside
    ``python_engine/`` or ``cpp_engine/``); None when it does not (a bug elsewhere)."""
    if isinstance(exc, EngineImportError):
        return str(exc)
    for engine, package in ENGINE_PACKAGES.items():
        if isinstance(exc, SyntaxError) and exc.filename and f"{os.sep}{package}{os.sep}" in exc.filename:
            return engine_import_error(engine, exc)
        if not isinstance(exc, SyntaxError) and _innermost_engine_frame(exc.__traceback__, package):
            return engine_import_error(engine, exc)
    return None

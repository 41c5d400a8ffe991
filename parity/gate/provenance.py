"""The first line of every gate command: which goldens, which engines.

    parity: golden /src/splitk-parity/golden | python_engine 0.1.0 /src/splitk-parity/python_engine |
            cpp_engine 0.1.0 /src/splitk-parity/cpp_engine/libcpp_engine.so C++ sources sha256:1a2b3c4d5e6f

(one line). The package version is the installed distribution's
(``splitk-parity``); the C++ engine adds its library path, its own version
(``cpe_version``) and the digest of the C++ sources it was built from
(``cpe_source_digest``, parity/base/stale.py). Locations come from the import
system without importing the Python engine; the C++ engine is imported (the
gate does so anyway, after the stale-build check), unless that check trusted
the build stamp (``stale.recorded_engine``: the same three facts, recorded
from the library by the last check that loaded it).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from importlib.metadata import PackageNotFoundError, version
from parity.base import stale
from parity.base.escape import shown
from parity.base.project import find_project_root, is_project_root
from parity.gate.runner import engine_module

DIST = "splitk-parity"


def _dist_version() -> str:
    try:
        return version(DIST)
    except PackageNotFoundError:
        return "not installed"


def _location(module: str) -> str | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return None
    return str(Path(spec.origin).resolve().parent)


def engine_part(name: str) -> str:
    """``<module> <version> <location>[ ...]`` for an engine name (python, cpp or a module)."""
    mod = engine_module(name)
    loc = _location(mod)
    if loc is None:
        return f"{mod} not importable"
    if mod != "cpp_engine":
        return f"{mod} {_dist_version()} {loc}"
    rec = stale.recorded_engine()
    if rec is not None:  # the stale check trusted its stamp: the library's own words, not loaded here
        return f"cpp_engine {rec['version']} {rec['library']} C++ sources sha256:{rec['digest'][:12]}"
    try:
        import cpp_engine as C  # cpp_engine: its import rebuilds the C++ library and can fail (parity/base/stale.py)
        digest = getattr(C, "source_digest", lambda: "unknown")()
        return f"cpp_engine {C.version()} {C.library_path()} C++ sources sha256:{digest[:12]}"
    except Exception as exc:  # noqa: BLE001 -- reported, the gate reports CRASH per config
        return f"cpp_engine {loc} (cannot be imported: {type(exc).__name__})"


def provenance_line(golden_dir: Path | None, engines=("python", "cpp")) -> str:
    """One line naming the golden directory and both engines (location, version, C++ digest)."""
    parts = [f"golden {golden_dir}" if golden_dir is not None else "golden none (no checkout at or above the working directory)"]
    parts += [engine_part(e) for e in dict.fromkeys(engines)]
    return "parity: " + " | ".join(shown(p, limit=1000) for p in parts)


# -- the engines must be the checkout's (issue 22, item 6) ---------------------------

#: The option that lets check / write / diff use engines from elsewhere on purpose.
ALLOW_FOREIGN = "--allow-foreign-engines"


def python_sources_digest(package_dir: Path) -> str:
    """sha256 over the ``*.py`` files under ``package_dir`` (relative path and bytes, sorted)."""
    h = hashlib.sha256()
    for p in sorted(Path(package_dir).rglob("*.py")):
        h.update(p.relative_to(package_dir).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _engine_origin(mod: str) -> tuple[Path | None, str]:
    """(package directory, what to call it) of an engine module, without importing
    python_engine; cpp_engine is named by its library (it is imported anyway)."""
    loc = _location(mod)
    if loc is None:
        return None, mod
    if mod == "cpp_engine":
        rec = stale.recorded_engine()
        if rec is not None:  # the stale check trusted its stamp (parity/base/stale.py)
            return Path(loc), f"cpp_engine {rec['library']}"
        try:
            import cpp_engine as C  # cpp_engine: its import rebuilds the C++ library and can fail (parity/base/stale.py)
            return Path(loc), f"cpp_engine {C.library_path()}"
        except Exception:  # noqa: BLE001 -- the gate reports an unimportable engine itself
            return Path(loc), f"cpp_engine {loc}"
    return Path(loc), f"{mod} {loc}"


def _same_sources(mod: str, pkg: Path, root: Path) -> bool:
    """An engine installed outside any checkout (a wheel): built from ``root``'s sources?"""
    if mod == "python_engine":
        mine = root / "python_engine"
        return mine.is_dir() and python_sources_digest(pkg) == python_sources_digest(mine)
    try:
        import cpp_engine as C  # cpp_engine: its import rebuilds the C++ library and can fail (parity/base/stale.py)
        built = C.source_digest()
    except Exception:  # noqa: BLE001 -- no digest: cannot be shown to be this checkout's
        return False
    return built == stale.source_digest(root)


def foreign_engines(golden_dir: Path | None, engines=("python", "cpp"), start: Path | None = None) -> str | None:
    """One error line when an engine the command runs is not the checkout's, else None.

    The checkout is the one holding ``golden_dir`` (else the one holding the
    working directory); with neither (a scratch ``--golden-dir``, no checkout)
    there is nothing to compare. ``python_engine`` and ``cpp_engine`` are
    checked (other engine modules are test stubs named on purpose): an engine
    inside a splitk-parity checkout must be inside this one; an engine installed
    outside any checkout (a wheel) must have been built from this checkout's
    sources (the ``*.py`` files of python_engine; cpp_engine's recorded C++
    source digest, parity/base/stale.py)."""
    root = None
    if golden_dir is not None and is_project_root(Path(golden_dir).resolve().parent):
        root = Path(golden_dir).resolve().parent
    elif golden_dir is None:
        root = find_project_root(start)
    if root is None:
        return None
    for e in dict.fromkeys(engines):
        mod = engine_module(e)
        if mod not in ("python_engine", "cpp_engine"):
            continue
        pkg, label = _engine_origin(mod)
        if pkg is None:
            continue
        theirs = find_project_root(pkg)
        if theirs == root:
            continue
        if theirs is None and _same_sources(mod, pkg, root):
            continue
        where = f"another checkout ({shown(str(theirs))})" if theirs else "an install built from other sources"
        return (f"the engines are not this checkout's: golden/ of {shown(str(root))}, but {shown(label)} comes "
                f"from {where}; activate this checkout's environment (bash scripts/bootstrap.sh in "
                f"{shown(str(root))}, then . .venv/bin/activate), or pass {ALLOW_FOREIGN} to use these "
                f"engines on purpose")
    return None

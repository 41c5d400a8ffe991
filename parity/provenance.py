"""The first line of every gate command: which goldens, which engines.

    parity: golden /src/splitk-parity/golden | python_engine 0.1.0 /src/splitk-parity/python_engine |
            cpp_engine 0.1.0 /src/splitk-parity/cpp_engine/libcpp_engine.so C++ sources sha256:1a2b3c4d5e6f

(one line). The package version is the installed distribution's
(``splitk-parity``); the C++ engine adds its library path, its own version
(``cpe_version``) and the digest of the C++ sources it was built from
(``cpe_source_digest``, parity/stale.py). Locations come from the import
system without importing the Python engine; the C++ engine is imported (the
gate does so anyway, after the stale-build check).
"""

from __future__ import annotations

from parity.escape import shown

import importlib.util
from pathlib import Path
from importlib.metadata import PackageNotFoundError, version
from parity.runner import engine_module

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
    try:
        import cpp_engine as C  # cpp_engine: its import rebuilds the C++ library and can fail (parity/stale.py)
        digest = getattr(C, "source_digest", lambda: "unknown")()
        return f"cpp_engine {C.version()} {C.library_path()} C++ sources sha256:{digest[:12]}"
    except Exception as exc:  # noqa: BLE001 -- reported, the gate reports CRASH per config
        return f"cpp_engine {loc} (cannot be imported: {type(exc).__name__})"


def provenance_line(golden_dir: Path | None, engines=("python", "cpp")) -> str:
    """One line naming the golden directory and both engines (location, version, C++ digest)."""
    parts = [f"golden {golden_dir}" if golden_dir is not None else "golden none (no checkout at or above the working directory)"]
    parts += [engine_part(e) for e in dict.fromkeys(engines)]
    return "parity: " + " | ".join(shown(p, limit=1000) for p in parts)

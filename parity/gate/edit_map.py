"""The edit map of ``parity check --changed`` (docs/gate.md, "Checking only what an
edit reached"): for every config, the engine functions its lowering ran.

Recorded by :func:`record` in a fresh interpreter (``python -m parity.gate.edit_map
OUT``), so the Python engine's import runs under the recorder too:

* Python: a ``sys.settrace`` hook (call events only, no line tracing) notes the
  code object of every call into ``python_engine/`` while one (config, flavor)
  is lowered; each becomes a unit ``path::name`` (parity/gate/edit_units.py).
  A memo (a ``functools`` cache of a ``python_engine`` module, or a
  module-level dict whose name holds ``MEMO`` or ``CACHE``) would hide the
  calls that filled it from the configs that reuse it: the cheap ones
  (:data:`PER_CONFIG_RESET`) are emptied before every config, the others before
  every family, and a family that used one gives every config of it the units
  of the whole family. Functions run while the engine is imported are the *import-time*
  units, with those the config modules (parity/configs/) call while they are
  loaded (their specs may be computed by the engine): a change to one is
  unmappable.
* C++: ``cpp_engine.lower_origins`` gives the builder call behind every line
  (the divergence locator, docs/gate.md); each call's line is mapped to the
  function holding it. Functions that make no builder call are reached through
  their Python twin instead (parity/gate/changed.py).

The map records the unit hashes of every engine source it was recorded from
(:func:`parity.gate.edit_units.unit_hashes`), so a later run knows which
configs' records still hold (those that reached no unit changed since).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from parity.base.json_guard import load_json
from parity.gate import edit_units as U

VERSION = 4
MAP_NAME = "parity_edit_map.json"
PY_ROOT = "python_engine"
CPP_ROOT = "cpp_engine/src"
#: Engine files a change to which is never mapped (headers, CMake, anything not .py/.cpp).
ENGINE_DIRS = (PY_ROOT, CPP_ROOT, "cpp_engine/include", "cpp_engine/cmake")


def map_path(root: Path) -> Path:
    """Where the map of the checkout ``root`` lives (``build/``, git-ignored)."""
    return Path(root) / "build" / MAP_NAME


def engine_files(root: Path) -> list[str]:
    """Every file under :data:`ENGINE_DIRS` (relative, ``/``-separated, sorted; no caches)."""
    out = []
    for d in ENGINE_DIRS:
        base = Path(root) / d
        if base.is_dir():
            out += [p.relative_to(root).as_posix() for p in base.rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    return sorted(out)


def mapped(path: str) -> bool:
    """Whether ``path`` is mapped by function (an engine ``.py`` or ``.cpp``)."""
    return (path.startswith(PY_ROOT + "/") and path.endswith(".py")) or \
        (path.startswith(CPP_ROOT + "/") and path.endswith(".cpp"))


def file_sha(root: Path, path: str) -> str:
    """The short sha256 of a file's bytes (the ``<sha>`` entry of :func:`file_table`)."""
    return hashlib.sha256((Path(root) / path).read_bytes()).hexdigest()[:16]


def file_stat(root: Path, path: str) -> list:
    """``[mtime_ns, size]`` of a file: a file whose stat matches the map's is not hashed again."""
    st = (Path(root) / path).stat()
    return [st.st_mtime_ns, st.st_size]


def file_table(root: Path, path: str) -> dict:
    """``{"<sha>": file_sha}`` plus the unit hashes of a mapped file
    (:func:`parity.gate.edit_units.unit_hashes`), or plus ``"<file>"`` for any other
    file (and a mapped file that does not parse)."""
    data = (Path(root) / path).read_bytes()
    out = {"<sha>": file_sha(root, path)}
    if mapped(path):
        try:
            return {**out, **U.unit_hashes(path, data.decode("utf-8"))}
        except (SyntaxError, UnicodeDecodeError, ValueError):
            pass
    return {**out, "<file>": out["<sha>"]}


# -- recording (runs in a fresh interpreter) --------------------------------------------

class _Recorder:
    def __init__(self, root: Path):
        self.prefix = str(Path(root).resolve() / PY_ROOT) + os.sep
        self.rel = len(str(Path(root).resolve())) + 1
        self.ids: dict = {}
        self.seen: set = set()

    def __call__(self, frame, event, arg):
        if event == "call":
            code = frame.f_code
            u = self.ids.get(code, 0)
            if u == 0:
                u = self.ids[code] = self._unit(code)
            if u is not None:
                self.seen.add(u)
        return None

    def _unit(self, code):
        f = os.path.abspath(code.co_filename)
        if not f.startswith(self.prefix):
            return None
        name = U.normalise_qualname(getattr(code, "co_qualname", code.co_name))
        return f"{f[self.rel:].replace(os.sep, '/')}::{name}" if name else None


#: Modules whose memos are cheap to fill again (table lookups): emptied before every
#: config. The other memos are emptied before every family, and a family that used one
#: gives each of its configs the units of all of them.
PER_CONFIG_RESET = ("python_engine.ir.",)


def _memos(prefixes=(PY_ROOT + ".",)):
    """Every memo of the Python engine modules under ``prefixes``: their ``functools``
    caches and the module-level dicts whose name holds ``MEMO`` or ``CACHE``."""
    for mname, mod in list(sys.modules.items()):
        if not mname.startswith(tuple(prefixes)):
            continue
        for k, v in list(vars(mod).items()):
            if isinstance(v, functools._lru_cache_wrapper):
                yield v
            elif isinstance(v, dict) and ("MEMO" in k.upper() or "CACHE" in k.upper()):
                yield v


def _reset_memos(prefixes=(PY_ROOT + ".",)) -> None:
    for m in _memos(prefixes):
        (m.cache_clear if hasattr(m, "cache_clear") else m.clear)()


def _memos_used() -> bool:
    """Whether a memo not emptied per config holds anything."""
    return any((m.cache_info().currsize if hasattr(m, "cache_info") else len(m)) for m in _memos()
               if not _per_config(m))


def _per_config(m) -> bool:
    mod = getattr(getattr(m, "__wrapped__", None), "__module__", None)
    if mod is None:  # a dict: find its module
        mod = next((n for n, x in list(sys.modules.items()) if n.startswith(PY_ROOT + ".")
                    and any(v is m for v in vars(x).values())), "")
    return mod.startswith(PER_CONFIG_RESET)


def _cpp_units(root: Path, origins, spans_cache: dict) -> set:
    out = set()
    for o in origins:
        if not o or ":" not in o:
            continue
        path, _, line = o.rpartition(":")
        if not path.endswith(".cpp") or not line.isdigit():
            continue
        if path not in spans_cache:
            try:
                spans_cache[path] = U.cpp_spans((Path(root) / path).read_text(encoding="utf-8"))
            except OSError:
                spans_cache[path] = []
        n = int(line)
        inner = [s for s in spans_cache[path] if s.first <= n <= s.last]
        if inner:
            out.add(f"{path}::{max(inner, key=lambda s: s.first).name}")
    return out


def record(root: Path, families=None) -> dict:
    """Lower every config at every flavor it applies to with both engines and return
    the map (see the module doc). ``families``: only those (tests); the others are
    then unknown to the map, so ``--changed`` always checks them."""
    root = Path(root).resolve()
    rec = _Recorder(root)
    if PY_ROOT in sys.modules:
        raise RuntimeError("the edit map is recorded in a fresh interpreter (python_engine already imported)")
    sys.settrace(rec)
    import python_engine as P  # noqa: F401 -- imported under the recorder: the import-time units
    sys.settrace(None)
    import_time = set(rec.seen)
    from parity.base import stale
    problem = stale.check_cpp_build()
    if problem:
        raise RuntimeError(problem)
    import cpp_engine as C
    from parity.config import load_families
    rec.seen = set()
    sys.settrace(rec)  # config modules may call the engine (perf_model: load_vector, fold_width)
    try:
        fams = load_families(only=families)
    finally:
        sys.settrace(None)
    import_time = sorted(import_time | rec.seen)
    configs, py, cpp = [], {}, {}
    spans_cache: dict = {}
    for fam in fams:
        _reset_memos()
        first, seen_all = len(configs), set()
        t0 = time.perf_counter()
        for cfg in fam.configs:
            idx = len(configs)
            configs.append(f"{fam.name}/{cfg.name}")
            for fl in cfg.flavors:
                if not cfg.applies(fl):
                    continue
                _reset_memos(PER_CONFIG_RESET)
                rec.seen = set()
                sys.settrace(rec)
                try:
                    P.lower(fam.name, dict(cfg.spec), cfg.arch, fl)
                except Exception:  # noqa: BLE001 -- a rejection or crash ran code too
                    pass
                finally:
                    sys.settrace(None)
                seen_all |= rec.seen
                for u in rec.seen:
                    py.setdefault(u, set()).add(idx)
                try:
                    _, origins = C.lower_origins(fam.name, dict(cfg.spec), cfg.arch, fl)
                except Exception:  # noqa: BLE001
                    origins = ()
                for u in _cpp_units(root, origins, spans_cache):
                    cpp.setdefault(u, set()).add(idx)
        if _memos_used():  # a config may have reused what an earlier one of the family computed
            for u in seen_all:
                py.setdefault(u, set()).update(range(first, len(configs)))
        print(f"edit map: {fam.name} {len(configs) - first} configs {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
    return {"version": VERSION, "families": sorted(f.name for f in fams),
            "files": {p: file_table(root, p) for p in engine_files(root)},
            "stat": {p: file_stat(root, p) for p in engine_files(root)},
            "configs": configs, "import_time": import_time,
            "py": {u: sorted(v) for u, v in sorted(py.items())},
            "cpp": {u: sorted(v) for u, v in sorted(cpp.items())}}


def build(root: Path, out: Path | None = None, families=None, timeout: float = 900) -> Path:
    """Record the map of ``root`` in a fresh interpreter and write it (atomically) to
    ``out`` (default :func:`map_path`); RuntimeError with the child's last line on failure."""
    out = Path(out) if out is not None else map_path(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "parity.gate.edit_map", str(root), str(out)]
    if families:
        cmd += ["--only", ",".join(families)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(root))
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"recording the edit map failed: {last}")
    return out


def load(path: Path) -> dict | None:
    """The map at ``path``, or None when missing, unreadable or of another version."""
    try:
        doc = load_json(Path(path).read_bytes(), str(path))  # size, UTF-8 and depth caps first
    except (OSError, ValueError):  # JsonInputError is a ValueError: a corrupt map is re-recorded
        return None
    return doc if isinstance(doc, dict) and doc.get("version") == VERSION else None


def main(argv: list[str]) -> int:
    root, out = Path(argv[0]), Path(argv[1])
    fams = argv[3].split(",") if len(argv) > 3 and argv[2] == "--only" else None
    t0 = time.perf_counter()
    doc = record(root, fams)
    doc["seconds"] = round(time.perf_counter() - t0, 2)
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

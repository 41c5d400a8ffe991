"""The numerics result cache: a config's ``parity numerics`` outcome, kept on disk so
that a run over unchanged inputs does not emulate the config again (issue 40 item 4;
docs/sim.md, "The result cache").

Opt-in: ``$PARITY_NUMERICS_CACHE`` names a directory (CI: ``build/ci-cache/numerics``,
.ci/run); unset, empty or ``off``/``0``/``no``/``none``/``false``: no cache, every config
runs (the default). A relative directory is taken against the working directory of the
``parity numerics`` command.

An entry is keyed by the sha256 of a canonical JSON of: the entry format; the *oracle
version* (:func:`oracle_version`: the sha256 of every ``.py`` file of ``parity/sim``
(emulator, plans, references, coverage), ``parity/launch`` (the launch-plan reading the
plans use) and ``python_engine`` (the IR the emulator runs, the spec defaults and the
facts tables the plans read), with numpy's and Python's versions); the family, config
name, spec with the engine's defaults, arch; whether coverage was recorded; and the
``--assume`` hardware-fact readings. The IR text of every kernel a config runs is a
function of the Python engine's sources, the spec and the arch, so it is covered by the
key without lowering anything first: a lookup costs one file read. One byte changed in
any of those files (a kernel edit, an emulator fix) changes every key: nothing is reused
across an oracle or engine change, only across commits that leave them alone (docs, tests,
the gate, CI, the C++ engine alone).

Not cached: the opt lane (``--opt``), ``--ir``/mutants (parity/sim/numerics.TextLowerer),
runs on a Dask cluster (``--scheduler``), and failed outcomes (a failure is always
recomputed, so a flaky failure cannot be pinned).

File format (``<dir>/<key[:2]>/<key>.json``): ``{"format": 1, "sha256": <of the outcome
JSON>, "outcome": <tagged JSON>}``, written atomically (temp file + ``os.replace``), read
through parity/base/json_guard.py; a corrupt or unreadable entry is a miss (and is deleted). The outcome's tuples, dicts and
:class:`parity.sim.cases.Skipped` records round-trip exactly (:func:`encode` /
:func:`decode`); an outcome holding anything else is not stored.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from pathlib import Path

from parity.base.json_guard import load_json
from parity.base.outputs import write_bytes_atomic
from parity.base.project import golden_dir_holding
from parity.sim.cases import Skipped

ENV = "PARITY_NUMERICS_CACHE"
OFF = ("", "off", "0", "no", "none", "false")
FORMAT = 1
_SOURCES = ("parity/sim", "parity/launch", "python_engine")
_ROOT = Path(__file__).resolve().parents[2]
_VERSION: str | None = None


def cache_dir() -> Path | None:
    """The cache directory from ``$PARITY_NUMERICS_CACHE`` (absolute), or None when it is off."""
    v = os.environ.get(ENV, "").strip()
    if v.lower() in OFF:
        return None
    return Path(os.path.abspath(os.path.expanduser(v)))


def settings_error() -> str | None:
    """What is wrong with ``$PARITY_NUMERICS_CACHE``, as one line, or None (also when the
    cache is off): a path that exists and is not a directory (the cache was turned off in
    silence), or a golden directory or one below it (entries were written into golden/).
    ``parity numerics`` refuses the run with it (exit 2) before any work."""
    d = cache_dir()
    if d is None:
        return None
    try:
        if d.exists() and not d.is_dir():
            return (f"{ENV}: {d} exists and is not a directory (a directory to create or reuse, "
                    f"or off to disable the cache)")
        gold = golden_dir_holding(d / "entry")
    except OSError as exc:  # a name too long, a symlink loop, ...
        return f"{ENV}: the numerics cache directory {d} cannot be used ({exc.strerror or exc})"
    if gold is not None:
        return (f"{ENV}: {d} is in a golden directory ({gold}); the cache goes elsewhere "
                f"(e.g. build/numerics-cache)")
    return None


def oracle_version() -> str:
    """sha256 (hex) of the sources the outcome depends on (see the module doc), computed once
    per process: each ``.py`` file's path relative to the checkout and bytes, sorted by path,
    then numpy's and Python's versions."""
    global _VERSION
    if _VERSION is None:
        import numpy
        h = hashlib.sha256(f"format {FORMAT}\n".encode())
        files = sorted(p for d in _SOURCES for p in (_ROOT / d).rglob("*.py"))
        for p in files:
            h.update(p.relative_to(_ROOT).as_posix().encode() + b"\0")
            h.update(p.read_bytes() + b"\0")
        h.update(f"numpy {numpy.__version__} python {sys.version_info[0]}.{sys.version_info[1]}".encode())
        _VERSION = h.hexdigest()
    return _VERSION


def config_key(family: str, config: str, spec: dict, arch: str, coverage: bool, assumed: dict) -> str:
    """The entry key (sha256 hex) of one config's run; ``spec`` with the engine's defaults."""
    doc = {"format": FORMAT, "oracle": oracle_version(), "family": family, "config": config,
           "spec": sorted((k, repr(v)) for k, v in spec.items()), "arch": arch, "coverage": bool(coverage),
           "assume": sorted((k, repr(v)) for k, v in assumed.items())}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def encode(obj):
    """Tagged JSON of ``obj``: tuples ``{"t": [...]}``, dicts ``{"d": [[k, v], ...]}``, Skipped
    ``{"s": [name, reason]}``; str, int, float, bool, None and lists as themselves.
    TypeError for anything else."""
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if isinstance(obj, list):
        return [encode(v) for v in obj]
    if isinstance(obj, tuple):
        return {"t": [encode(v) for v in obj]}
    if isinstance(obj, dict):
        return {"d": [[encode(k), encode(v)] for k, v in obj.items()]}
    if isinstance(obj, Skipped):
        return {"s": [obj.name, obj.reason]}
    raise TypeError(f"the numerics cache cannot store a {type(obj).__name__}")


def decode(obj):
    """The inverse of :func:`encode`."""
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    if isinstance(obj, dict):
        (tag, val), = obj.items()
        if tag == "t":
            return tuple(decode(v) for v in val)
        if tag == "d":
            return {_hashable(decode(k)): decode(v) for k, v in val}
        if tag == "s":
            return Skipped(*val)
        raise ValueError(f"unknown tag {tag!r}")
    return obj


def _hashable(k):
    if isinstance(k, list):
        raise ValueError("a list as a dict key")
    return k


def _path(d: Path, key: str) -> Path:
    return d / key[:2] / f"{key}.json"


def load(d: Path, key: str, outcome_cls):
    """The cached outcome (an ``outcome_cls``) under ``key``, or None (a miss; a corrupt entry is deleted)."""
    p = _path(d, key)
    try:
        raw = p.read_bytes()
    except OSError:
        return None
    try:
        doc = load_json(raw, str(p))   # size, UTF-8 and depth caps (a shared cache dir is outside input)
        body = json.dumps(doc["outcome"], sort_keys=True).encode()
        if doc.get("format") != FORMAT or doc.get("sha256") != hashlib.sha256(body).hexdigest():
            raise ValueError("checksum")
        fields = decode(doc["outcome"])
        return outcome_cls(**fields)
    except (ValueError, KeyError, TypeError):
        try:
            p.unlink()
        except OSError:
            pass
        return None


def store(d: Path, key: str, outcome) -> bool:
    """Store a passing ``outcome`` (a dataclass) under ``key``; False when it is not stored
    (failed, unencodable, or the directory is not writable: the cache never fails a run)."""
    if not outcome.ok:
        return False
    try:
        enc = encode({f.name: getattr(outcome, f.name) for f in dataclasses.fields(outcome)})
        body = json.dumps(enc, sort_keys=True)
        doc = {"format": FORMAT, "sha256": hashlib.sha256(body.encode()).hexdigest(), "outcome": enc}
        p = _path(d, key)
        p.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(p, json.dumps(doc, sort_keys=True).encode(), fsync=False)
        return True
    except (TypeError, OSError, ValueError):
        return False

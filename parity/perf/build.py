"""The kernels a perf report measures: lowered IR, compiled to gfx1250 assembly.

Lowering: the working tree's Python engine in the gate's worker pool
(:func:`parity.ir_diff.lower_working`), or REF's own Python engine from
``git archive`` (:func:`parity.ir_diff.lower_ref`) for ``--base``. The gate
holds both engines to one text, so one engine's IR is the IR.

Compiling: :mod:`.compile_job` in a process pool: llvmlite (LLVM 22.1)
parses and verifies the text and a target machine for
``amdgcn-amd-amdhsa`` / gfx1250 at ``opt=3`` -- the options of the
runtime's and the AOT build's compile
(python_engine/runtime/_compile_worker.compile_text) -- emits the assembly,
with verbose comments (the loop information :mod:`.loop` reads). Identical
texts are compiled once.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

ARCH = "gfx1250"


class BuildError(RuntimeError):
    """One line: the kernels cannot be lowered or compiled."""


@dataclass
class Unit:
    """One accepted config lowered to IR."""
    family: str
    config: str
    arch: str
    flavor: str
    spec: dict
    kernel: str
    text: str

    @property
    def key(self) -> str:
        return f"{self.family}/{self.config}"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def _units(families, flavor: str, outcomes: dict[str, dict], specs: dict | None = None) -> tuple[list[Unit], list[str]]:
    """(units that lowered, one line per config that crashed) from outcomes keyed FAMILY/CONFIG@FLAVOR."""
    units, problems = [], []
    for key, o in outcomes.items():
        name, fl = key.rsplit("@", 1)
        fam, cfg = name.split("/", 1)
        if fl != flavor:
            continue
        if o["status"] == "ok":
            spec = (specs or {}).get(name, {})
            arch = spec.pop("__arch__", ARCH) if spec else ARCH
            units.append(Unit(fam, cfg, arch, fl, with_defaults(fam, spec), o["kernel"], o["text"]))
        elif o["status"] != "rejected":
            problems.append(f"{key}: {o['status']}: {o.get('error')}")
    return units, problems


def with_defaults(family: str, spec: dict) -> dict:
    """``spec`` over the working tree's field defaults of ``family`` (the kernel's FIELDS), so
    tile fields a config leaves out are known (a base ref is read with today's defaults)."""
    try:
        import importlib
        mod = importlib.import_module(f"python_engine.kernels.{family}")
        fields = mod.FIELDS
    except (ImportError, AttributeError):
        return dict(spec)
    return {**{f.name: f.default for f in fields}, **spec}


def config_specs(families) -> dict[str, dict]:
    """FAMILY/CONFIG -> spec (with the config's arch under ``__arch__``)."""
    return {f"{f.name}/{c.name}": {**dict(c.spec), "__arch__": c.arch} for f in families for c in f.configs}


def lower_working(families, flavor: str, *, workers: int, timeout: float) -> tuple[list[Unit], list[str]]:
    """The working tree's accepted configs of ``families`` at ``flavor`` (rejections left out)."""
    from parity import ir_diff
    outs = ir_diff.lower_working(families, (flavor,), workers=workers, timeout=timeout)
    specs = config_specs(families)
    return _units(families, flavor, outs, {k: dict(v) for k, v in specs.items()})


def lower_base(ref: str, families, flavor: str, *, root: Path) -> tuple[str, list[Unit], list[str]]:
    """(commit, units, crash lines) of REF's own Python engine for the families of the
    working tree's selection (configs narrowed by name where the selection is).
    Raises :class:`parity.ir_diff.BaseError` for a bad ref or an engine that cannot be imported."""
    from parity import ir_diff
    commit = ir_diff.resolve_ref(root, ref)
    with tempfile.TemporaryDirectory(prefix="parity-perf-base-") as tmp:
        ir_diff.extract(root, commit, Path(tmp))
        _, outs = ir_diff.lower_ref(Path(tmp), [f.name for f in families], (flavor,), {}, ref)
    wanted = {f"{f.name}/{c.name}" for f in families for c in f.configs}
    outs = {k: v for k, v in outs.items() if k.rsplit("@", 1)[0] in wanted}
    units, problems = _units(families, flavor, outs, {k: dict(v) for k, v in config_specs(families).items()})
    return commit, units, problems


def compile_units(units: list[Unit], *, workers: int, on_result=None) -> dict[str, dict]:
    """``sha256@arch`` -> :func:`.compile_job.compile_asm`'s answer (``ok``, ``asm``, ``report`` = the
    ISA report) for every distinct (text, arch) of ``units``, on ``workers`` processes."""
    from .compile_job import compile_all
    todo: dict[str, Unit] = {}
    for u in units:
        todo.setdefault(u.sha256 + "@" + u.arch, u)
    keys = list(todo)
    results = compile_all([(todo[k].text, todo[k].kernel, todo[k].arch) for k in keys], workers,
                          on_result=on_result)
    return dict(zip(keys, results))


def default_jobs() -> int:
    return os.cpu_count() or 1

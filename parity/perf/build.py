"""The kernels a perf report measures: lowered IR, compiled to gfx1250 assembly.

Lowering: the working tree's Python engine in the gate's worker pool
(:func:`parity.golden.ir_diff.lower_working`), or for ``--base`` REF's own Python
engine, extracted with ``git archive`` and run as ``parity diff --base`` runs
it (parity/golden/ref_tree.py), lowering the working tree's config specs. The gate
holds both engines to one text, so one engine's IR is the IR.

Compiling: :mod:`.compile_job` in a process pool: llvmlite (LLVM 22.1)
parses and verifies the text and a target machine for
``amdgcn-amd-amdhsa`` / gfx1250 at ``opt=3`` -- the options of the
runtime's and the AOT build's compile
(parity/llvm_compile.compile_text, in its "asm" mode) -- emits the assembly,
with verbose comments (the loop information :mod:`.loop` reads). Identical
texts are compiled once.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import python_engine
from parity.golden import ir_diff
from parity.golden.ref_tree import lower_at_ref, resolve_ref

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
        fields = python_engine.spec_fields(family)
    except python_engine.SpecRejected:
        return dict(spec)
    return {**dict(fields), **spec}


def config_specs(families) -> dict[str, dict]:
    """FAMILY/CONFIG -> spec (with the config's arch under ``__arch__``)."""
    return {f"{f.name}/{c.name}": {**dict(c.spec), "__arch__": c.arch} for f in families for c in f.configs}


def lower_working(families, flavor: str, *, workers: int, timeout: float) -> tuple[list[Unit], list[str]]:
    """The working tree's accepted configs of ``families`` at ``flavor`` (rejections left out)."""
    outs = ir_diff.lower_working(families, (flavor,), workers=workers, timeout=timeout)
    specs = config_specs(families)
    return _units(families, flavor, outs, {k: dict(v) for k, v in specs.items()})


def lower_base(ref: str, families, flavor: str, *, root: Path) -> tuple[str, list[Unit], list[str]]:
    """(commit, units, problem lines): the working tree's accepted configs of ``families`` (their specs,
    archs and ``flavor``) lowered by REF's own Python engine, extracted with ``git archive``
    (:func:`parity.golden.ref_tree.lower_at_ref`, a ``units`` request). Pairing by spec means a
    config added after REF is still compared; a spec REF rejects is left out with a problem line.
    Raises :class:`parity.golden.ref_tree.BaseError` for a bad ref or an engine that cannot be imported."""
    commit = resolve_ref(root, ref)
    specs = config_specs(families)
    req_units = []
    for f in families:
        for c in f.configs:
            if c.applies(flavor) and c.expectation(flavor).kind == "ok":
                req_units.append({"key": f"{f.name}/{c.name}@{flavor}", "family": f.name,
                                  "spec": dict(c.spec), "arch": c.arch, "flavor": flavor})
    outs = lower_at_ref(root, commit, ref, {"kind": "units", "units": req_units})["units"]
    units, problems = _units(families, flavor, outs, {k: dict(v) for k, v in specs.items()})
    problems += [f"{k}: rejected at {ref}: {o['reason']}" for k, o in outs.items() if o["status"] == "rejected"]
    return commit, units, problems


def compile_units(units: list[Unit], *, workers: int, on_result=None) -> dict[str, dict]:
    """``sha256@arch`` -> :func:`.compile_job.compile_asm`'s answer (``ok``, ``asm``, ``report`` = the
    ISA report) for every distinct (text, arch) of ``units``, on ``workers`` processes."""
    from .compile_job import compile_all  # PyYAML ([verify] extra) via isa_report: off the CLI start-up
    todo: dict[str, Unit] = {}
    for u in units:
        todo.setdefault(u.sha256 + "@" + u.arch, u)
    keys = list(todo)
    results = compile_all([(todo[k].text, todo[k].kernel, todo[k].arch) for k in keys], workers,
                          on_result=on_result)
    return dict(zip(keys, results))

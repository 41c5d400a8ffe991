"""The kernels a perf report measures: lowered IR, compiled to gfx1250 assembly.

Lowering: the working tree's Python engine in the gate's worker pool
(:func:`parity.ir_diff.lower_working`), or for ``--base`` REF's own Python
engine, extracted with ``git archive`` as ``parity diff --base`` does
(parity/ir_diff.py), lowering the working tree's config specs. The gate
holds both engines to one text, so one engine's IR is the IR.

Compiling: :mod:`.compile_job` in a process pool: llvmlite (LLVM 22.1)
parses and verifies the text and a target machine for
``amdgcn-amd-amdhsa`` / gfx1250 at ``opt=3`` -- the options of the
runtime's and the AOT build's compile
(parity/runtime/_compile_worker.compile_text) -- emits the assembly,
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


#: Runs in a subprocess with the working directory at the extracted REF tree (the same isolation
#: as parity/ir_diff.py's REF script): argv request JSON path, answer JSON path. Imports only REF's
#: python_engine and lowers the working tree's specs with it.
_REF_SCRIPT = r'''
import json, os, sys, traceback
sys.meta_path[:] = [f for f in sys.meta_path if "ScikitBuild" not in type(f).__name__]
root = os.getcwd()
sys.path.insert(0, root)
for m in list(sys.modules):
    if m.split(".")[0] in ("parity", "python_engine"):
        del sys.modules[m]
req = json.load(open(sys.argv[1]))
try:
    import python_engine as E
except Exception as exc:
    json.dump({"error": traceback.format_exception_only(type(exc), exc)[-1].strip()}, open(sys.argv[2], "w"))
    sys.exit(0)
if not os.path.abspath(E.__file__).startswith(root):
    json.dump({"error": "python_engine was imported from " + E.__file__ + ", not from the ref"}, open(sys.argv[2], "w"))
    sys.exit(0)
units = {}
for u in req["units"]:
    try:
        r = E.lower(u["family"], u["spec"], u["arch"], u["flavor"])
        o = {"status": "ok", "kernel": r.kernel, "text": r.text}
    except Exception as exc:
        if type(exc).__name__ == "SpecRejected":
            o = {"status": "rejected", "reason": str(getattr(exc, "reason", exc))}
        else:
            o = {"status": "crash", "error": type(exc).__name__ + ": " + (str(exc).splitlines() or [""])[0]}
    units[u["key"]] = o
json.dump({"units": units}, open(sys.argv[2], "w"))
'''


def lower_base(ref: str, families, flavor: str, *, root: Path) -> tuple[str, list[Unit], list[str]]:
    """(commit, units, problem lines): the working tree's accepted configs of ``families`` (their specs,
    archs and ``flavor``) lowered by REF's own Python engine, extracted with ``git archive``
    (:func:`parity.ir_diff.resolve_ref`, :func:`parity.ir_diff.extract`). Pairing by spec means a
    config added after REF is still compared; a spec REF rejects is left out with a problem line.
    Raises :class:`parity.ir_diff.BaseError` for a bad ref or an engine that cannot be imported."""
    import json
    import subprocess
    import sys

    from parity import ir_diff
    commit = ir_diff.resolve_ref(root, ref)
    specs = config_specs(families)
    req_units = []
    for f in families:
        for c in f.configs:
            if c.applies(flavor) and c.expectation(flavor).kind == "ok":
                req_units.append({"key": f"{f.name}/{c.name}@{flavor}", "family": f.name,
                                  "spec": dict(c.spec), "arch": c.arch, "flavor": flavor})
    with tempfile.TemporaryDirectory(prefix="parity-perf-base-") as tmp:
        ir_diff.extract(root, commit, Path(tmp))
        reqp, ansp = Path(tmp) / ".perf-req.json", Path(tmp) / ".perf-ans.json"
        reqp.write_text(json.dumps({"units": req_units}))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["SKBUILD_EDITABLE_SKIP"] = os.pathsep.join([env.get("SKBUILD_EDITABLE_SKIP", ""), "1"])
        r = subprocess.run([sys.executable, "-c", _REF_SCRIPT, str(reqp), str(ansp)], cwd=tmp, env=env,
                           capture_output=True, text=True)
        if r.returncode or not ansp.exists():
            last = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
            raise ir_diff.BaseError(f"the Python engine at {ref} crashed while lowering: {last}")
        doc = json.loads(ansp.read_text())
    if "error" in doc:
        raise ir_diff.BaseError(f"the Python engine at {ref} cannot be imported: {doc['error']}")
    outs = doc["units"]
    units, problems = _units(families, flavor, outs, {k: dict(v) for k, v in specs.items()})
    problems += [f"{k}: rejected at {ref}: {o['reason']}" for k, o in outs.items() if o["status"] == "rejected"]
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

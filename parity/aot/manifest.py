"""The AOT manifest (docs/aot.md): write, gate, validate, merge, compare.

Document (JSON, keys sorted, LF, trailing newline), format and version from
:mod:`parity.runtime.manifest` (the runtime reads it)::

    {"format": "splitk-parity-aot-manifest", "version": 1,
     "arch": "gfx1250", "flavor": "llvm23", "llvm_version": "22.1.0", "linker": "LLD 22.1.8",
     "grid_jobs": 3350, "shard": [1, 3] | null,
     "build": {"wall_seconds", "workers", "built", "reused", "failed"},
     "jobs": [entry, ...]}                     # in grid order ("index")

An entry: ``index`` (position in the grid), ``identity`` (16 hex digits),
``label``, ``kernel``, ``family``, ``spec`` (every field), ``ir_sha256`` (of
the emitted IR text), ``llvm_version``, ``code_object`` (path relative to the
manifest), ``code_object_sha256``, ``code_object_bytes``, the resources read
from the code object's metadata note (``vgprs``, ``sgprs``, ``vgpr_spills``,
``sgpr_spills``, ``scratch_bytes`` = private segment, ``dynamic_stack``, ``lds_bytes`` = group
segment, ``workgroup_size``, ``occupancy`` in waves per SIMD from
parity/verify/isa_report.py's gfx1250 rules) and ``build_seconds``
(``emit``, ``compile``, ``link``, ``total``).

The content of an entry is everything but ``code_object`` (a path) and
``build_seconds`` (a measurement); two manifests are equal when their
top-level identity fields and every entry's content are.
"""
from __future__ import annotations

import hashlib
import json
import os

from parity.base.escape import shown
from parity.base.outputs import write_report
from parity.base.input_files import MAX_CODE_OBJECT_BYTES, InputFileError, read_bytes
from parity.runtime.elf import check_code_object
from parity.launch.errors import CodeObjectError
from parity.runtime.manifest import MANIFEST_FORMAT, MANIFEST_VERSION

from .shard import shard_of

ENTRY_KEYS = ("index", "identity", "label", "kernel", "family", "spec", "ir_sha256", "llvm_version",
              "code_object", "code_object_sha256", "code_object_bytes", "vgprs", "sgprs", "vgpr_spills",
              "sgpr_spills", "scratch_bytes", "dynamic_stack", "lds_bytes", "workgroup_size", "occupancy",
              "build_seconds")
VOLATILE_KEYS = ("code_object", "build_seconds")
HEAD_KEYS = ("format", "version", "arch", "flavor", "llvm_version", "grid_jobs")

# Grid jobs allowed to spill or use scratch, label -> reason (the verify gate's
# allow_spill escape). Empty: every job of the grid builds with 0 spills.
ALLOW_SPILL: dict = {}


def dumps(doc: dict) -> str:
    return json.dumps(doc, sort_keys=True, indent=1) + "\n"


def write(doc: dict, path: str) -> None:
    """Write ``doc`` to ``path`` atomically, or in place for a device or FIFO
    (:func:`parity.base.outputs.write_report`); OSError when it cannot be written."""
    write_report(path, dumps(doc))


def gate(entry: dict, lds_limit: int) -> str | None:
    """The grid gate of one entry: 0 spills, 0 scratch, LDS within the arch limit
    (unless :data:`ALLOW_SPILL` names the job for spills/scratch)."""
    what = []
    if entry["vgpr_spills"] or entry["sgpr_spills"] or entry["scratch_bytes"] or entry["dynamic_stack"]:
        if entry["label"] not in ALLOW_SPILL:
            what.append(f"{entry['vgpr_spills']} VGPR spills, {entry['sgpr_spills']} SGPR spills, "
                        f"{entry['scratch_bytes']} scratch bytes"
                        + (", a dynamic stack" if entry["dynamic_stack"] else ""))
    if entry["lds_bytes"] > lds_limit:
        what.append(f"LDS {entry['lds_bytes']} bytes exceeds the limit of {lds_limit}")
    return "; ".join(what) or None


def content(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if k not in VOLATILE_KEYS}


def grid_rows(engine, flavor: str) -> list:
    """``[(index, family, hash, label, spec dict)]`` of the grid at ``flavor`` (the engine's job list)."""
    n, text = engine.aot_jobs_text(flavor)
    rows = []
    for i, line in enumerate(text.splitlines()):
        fam, h, label, spec_text = line.split("\t")
        spec = {}
        for kv in spec_text.split(";"):
            k, v = kv.split("=", 1)
            spec[k] = int(v) if v.lstrip("-").isdigit() else v
        rows.append((i, fam, h, label, spec))
    if len(rows) != n:
        raise ValueError(f"count_jobs {n} != {len(rows)} enumerated jobs at {flavor}")
    return rows


def validate(doc: dict, path: str, engine, lds_limit: int, check_files: bool = True) -> list:
    """Problems of a manifest read from ``path`` (empty: valid): its job set is the
    grid at its flavor (or its shard of it), each job exactly once and as the grid
    defines it; every code object exists, matches its sha256, is a valid code
    object of its kernel whose metadata agrees with the entry; every job passes
    the gate."""

    errs = []
    for k in HEAD_KEYS:
        if k not in doc:
            errs.append(f"missing top-level key {k}")
    if errs:
        return errs
    rows = grid_rows(engine, doc["flavor"])
    if doc["grid_jobs"] != len(rows):
        errs.append(f"grid_jobs {doc['grid_jobs']} != {len(rows)} jobs of the grid at {doc['flavor']}")
    shard = doc.get("shard")
    want = {h: (i, fam, label, spec) for i, fam, h, label, spec in rows
            if shard is None or shard_of(h, shard[1]) == shard[0]}
    seen = set()
    base = os.path.dirname(os.path.abspath(path))
    for e in doc["jobs"]:
        missing = [k for k in ENTRY_KEYS if k not in e]
        if missing:
            errs.append(f"entry {e.get('label', '?')}: missing {', '.join(missing)}")
            continue
        h = e["identity"]
        if h in seen:
            errs.append(f"{e['label']}: job {h} is there more than once")
            continue
        seen.add(h)
        if h not in want:
            errs.append(f"{e['label']}: job {h} is not in the grid" + (f" shard {shard[0]}/{shard[1]}" if shard else ""))
            continue
        i, fam, label, spec = want[h]
        if (e["index"], e["family"], e["label"], e["spec"]) != (i, fam, label, spec):
            errs.append(f"{e['label']}: index/family/label/spec differ from the grid's job {h} ({label})")
        if e["llvm_version"] != doc["llvm_version"]:
            errs.append(f"{e['label']}: built with LLVM {e['llvm_version']}, the manifest says {doc['llvm_version']}")
        g = gate(e, lds_limit)
        if g:
            errs.append(f"{e['label']}: {g}")
        if check_files:
            p = os.path.join(base, e["code_object"])
            try:
                data = read_bytes(p, "code object", MAX_CODE_OBJECT_BYTES)
            except InputFileError as exc:
                errs.append(f"{shown(e['label'])}: {exc}")
                continue
            if hashlib.sha256(data).hexdigest() != e["code_object_sha256"] or len(data) != e["code_object_bytes"]:
                errs.append(f"{e['label']}: {e['code_object']} does not match its sha256/bytes")
                continue
            try:
                md = check_code_object(data, e["kernel"], doc["arch"])
            except CodeObjectError as exc:
                errs.append(f"{e['label']}: {exc}")
                continue
            got = resources(md, doc["arch"])
            diff = [f"{k} {e[k]} != {v}" for k, v in got.items() if e[k] != v]
            if diff:
                errs.append(f"{e['label']}: the code object's metadata says " + ", ".join(diff))
    for h in sorted(set(want) - seen, key=lambda x: want[x][0]):
        errs.append(f"job {h} ({want[h][2]}) is missing")
    return errs


def resources(md: dict, arch: str) -> dict:
    """The entry's resource fields from a kernel's metadata (amdhsa.kernels entry,
    AMDGPUUsage "Code Object V3+ Metadata"); occupancy by the gfx1250 rules of
    parity/verify/isa_report.py (None for other arches)."""
    from parity.verify.isa_report import occupancy_gfx1250  # PyYAML ([verify] extra) via parity.verify.isa_report

    vgprs = int(md.get(".vgpr_count", 0))
    lds = int(md.get(".group_segment_fixed_size", 0))
    wg = int(md.get(".max_flat_workgroup_size", 0)) or None
    return {"vgprs": vgprs, "sgprs": int(md.get(".sgpr_count", 0)),
            "vgpr_spills": int(md.get(".vgpr_spill_count", 0)), "sgpr_spills": int(md.get(".sgpr_spill_count", 0)),
            "scratch_bytes": int(md.get(".private_segment_fixed_size", 0)),
            "dynamic_stack": bool(md.get(".uses_dynamic_stack", False)), "lds_bytes": lds,
            "workgroup_size": wg or 0,
            "occupancy": occupancy_gfx1250(vgprs, lds, wg) if arch == "gfx1250" else None}


def compare(a: dict, b: dict) -> list:
    """Differences between two manifests' contents (top-level identity fields and
    every entry but its path and timings); empty when equal."""
    out = [f"{k}: {a.get(k)!r} != {b.get(k)!r}" for k in HEAD_KEYS if a.get(k) != b.get(k)]
    ea = {e["identity"]: content(e) for e in a["jobs"]}
    eb = {e["identity"]: content(e) for e in b["jobs"]}
    for h in sorted(set(ea) | set(eb)):
        if h not in eb:
            out.append(f"job {h} ({ea[h]['label']}) only in the first")
        elif h not in ea:
            out.append(f"job {h} ({eb[h]['label']}) only in the second")
        elif ea[h] != eb[h]:
            keys = sorted(k for k in set(ea[h]) | set(eb[h]) if ea[h].get(k) != eb[h].get(k))
            out.append(f"job {h} ({ea[h]['label']}) differs in {', '.join(keys)}")
    if [e["identity"] for e in a["jobs"]] != [e["identity"] for e in b["jobs"]] and not out:
        out.append("the jobs are in a different order")
    return out


def merge(docs: list, paths: list, out_path: str) -> tuple:
    """Join shard manifests into one (code-object paths made relative to
    ``out_path``'s directory), in grid order. Returns ``(doc, problems)``:
    a job in two manifests, or manifests of different arch/flavor/LLVM/version."""
    errs = []
    first = docs[0]
    for d, p in zip(docs[1:], paths[1:]):
        for k in HEAD_KEYS:
            if d.get(k) != first.get(k):
                errs.append(f"{p}: {k} {d.get(k)!r} differs from {paths[0]}'s {first.get(k)!r}")
    out_dir = os.path.dirname(os.path.abspath(out_path))
    jobs, where = [], {}
    for d, p in zip(docs, paths):
        base = os.path.dirname(os.path.abspath(p))
        for e in d["jobs"]:
            if e["identity"] in where:
                errs.append(f"job {e['identity']} ({e['label']}) is in {where[e['identity']]} and in {p}")
                continue
            where[e["identity"]] = p
            e = dict(e, code_object=os.path.relpath(os.path.join(base, e["code_object"]), out_dir))
            jobs.append(e)
    jobs.sort(key=lambda e: e["index"])
    builds = [d.get("build") or {} for d in docs]
    doc = {k: first.get(k) for k in HEAD_KEYS}
    doc.update(linker=first.get("linker"), shard=None, jobs=jobs,
               build={"merged_from": len(docs),
                      "wall_seconds": round(sum(b.get("wall_seconds", 0) for b in builds), 3),
                      "built": sum(b.get("built", 0) for b in builds),
                      "reused": sum(b.get("reused", 0) for b in builds),
                      "failed": sum(b.get("failed", 0) for b in builds)})
    return doc, errs


HEAD = {"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION}

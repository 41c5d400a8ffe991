"""``parity aot --flavor F --build DIR [--jobs N] [--shard I/N] [--json PATH]``:
the AOT grid of one flavor built to code objects (docs/aot.md).

The parent lowers every job with the C++ engine (the IR text and its
sha256), keeps a job whose previous entry in ``DIR/manifest.json`` has the
same IR sha256 and LLVM version and whose code object is intact (not
rebuilt), and hands the others to ``--jobs`` worker processes
(:mod:`.worker`: llvmlite compile + ld.lld link). It writes
``DIR/co/<label>.hsaco`` and ``DIR/manifest.json`` (:mod:`.manifest`) and
gates every job: 0 spills, 0 scratch, LDS within the arch limit. A worker
that dies (an LLVM abort) fails the jobs it held after one retry; the build
goes on. A progress bar (rich) is drawn only when stderr is a terminal.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context

from parity.runtime.manifest import MANIFEST_FORMAT, MANIFEST_VERSION

from . import manifest as M
from .shard import shard_of
from .worker import build_one, versions
from parity.base.input_files import MAX_CODE_OBJECT_BYTES, InputFileError, read_bytes
from parity.launch.errors import CodeObjectError
from parity.runtime.manifest import read_manifest
from python_engine.facts import lds_bytes

ARCH = "gfx1250"
MANIFEST = "manifest.json"


def _old_entries(path: str, llvm: str) -> dict:
    """Entries of a previous manifest at ``path`` built with ``llvm`` (identity -> entry)."""
    if not os.path.exists(path):
        return {}
    try:
        doc = read_manifest(path)
    except CodeObjectError:
        return {}  # another format or version: rebuild everything
    return {e["identity"]: e for e in doc["jobs"] if e.get("llvm_version") == llvm}


def _intact(base: str, e: dict) -> bool:
    try:
        data = read_bytes(os.path.join(base, e["code_object"]), "code object", MAX_CODE_OBJECT_BYTES)
    except (InputFileError, TypeError):
        return False
    return hashlib.sha256(data).hexdigest() == e["code_object_sha256"]


class _Progress:
    """rich's progress bar on a terminal, nothing otherwise."""

    def __init__(self, total: int, label: str, enabled: bool):
        self.bar = None
        if enabled:
            # rich: only when a bar is drawn on a terminal
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)
            from rich.console import Console  # rich: only when drawing on a terminal
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True),
                                transient=True)
            self.task = self.bar.add_task(label, total=total)
            self.bar.start()

    def advance(self):
        if self.bar:
            self.bar.advance(self.task)

    def close(self):
        if self.bar:
            self.bar.stop()


def build(flavor: str, out_dir: str, jobs: int | None = None, shard: tuple | None = None,
          json_path: str | None = None, progress: bool | None = None, out=None, err=None, keep=None) -> int:
    """Build (see the module docstring). Returns 0 when every selected job is
    built or reused and passes the gate, else 1 (2 for bad arguments).
    ``keep``: a predicate on a grid row ``(index, family, hash, label, spec)``
    that selects a class of jobs (bench/aot_plain.py; its manifest holds only
    those, so ``parity aot validate`` reports the rest missing)."""
    import cpp_engine as engine  # cpp_engine: its import rebuilds the C++ library and can fail (parity/base/stale.py)

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        flavor = engine.resolve_flavor(flavor)
    except engine.SpecRejected as e:
        print(f"error: --flavor: {e.reason}", file=err)
        return 2
    workers = jobs or os.cpu_count() or 1
    if workers < 1:
        print(f"error: --jobs must be at least 1, got {workers}", file=err)
        return 2
    vers = versions()
    llvm = vers["llvm_version"]
    lds_limit = lds_bytes(ARCH)
    rows = M.grid_rows(engine, flavor)
    todo = [r for r in rows if (shard is None or shard_of(r[2], shard[1]) == shard[0]) and (keep is None or keep(r))]
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.abspath(out_dir)
    mpath = os.path.join(base, MANIFEST)
    old = _old_entries(mpath, llvm)
    where = f" shard {shard[0]}/{shard[1]}" if shard else ""
    bar = _Progress(len(todo), f"aot {flavor}{where}", sys.stderr.isatty() if progress is None else progress)

    entries, failed = {}, []
    t_emit = t_compile = t_link = 0.0
    built = reused = 0
    t0 = time.perf_counter()
    ctx = get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
    inflight = {}  # future -> (row, emit seconds, ir sha, kernel, co path, tries)

    def lower(row):
        i, fam, h, label, spec = row
        t = time.perf_counter()
        lo = engine.lower(fam, spec, ARCH, flavor)
        return lo, time.perf_counter() - t

    def submit(row, emit_s, sha, kernel, text, rel, tries):
        job = {"kernel": kernel, "arch": ARCH, "text": text, "out": os.path.join(base, rel)}
        inflight[pool.submit(build_one, job)] = (row, emit_s, sha, kernel, rel, tries)

    def finish(fut):
        nonlocal pool, built, t_compile, t_link
        row, emit_s, sha, kernel, rel, tries = inflight.pop(fut)
        i, fam, h, label, spec = row
        try:
            r = fut.result()
        except BrokenProcessPool:
            if tries >= 1:
                r = {"ok": False, "error": "the worker process died twice (an LLVM abort?)"}
            else:
                # every job in flight died with the pool: a new pool, each retried once
                again = [(row, emit_s, sha, kernel, rel, tries)] + [inflight.pop(f) for f in list(inflight)]
                pool.shutdown(wait=False, cancel_futures=True)
                pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
                for rw, es, s, k, rl, t in again:
                    lo, _ = lower(rw)
                    submit(rw, es, s, k, lo.text, rl, t + 1)
                return
        bar.advance()
        if not r["ok"]:
            failed.append((label, r["error"]))
            print(f"FAILED {label}: {r['error']}", file=err)
            return
        built += 1
        t_compile += r["compile"]
        t_link += r["link"]
        entries[h] = {"index": i, "identity": h, "label": label, "kernel": kernel, "family": fam, "spec": spec,
                      "ir_sha256": sha, "llvm_version": llvm, "code_object": rel,
                      "code_object_sha256": r["sha256"], "code_object_bytes": r["bytes"], **r["resources"],
                      "build_seconds": {"emit": round(emit_s, 4), "compile": round(r["compile"], 4),
                                        "link": round(r["link"], 4),
                                        "total": round(emit_s + r["compile"] + r["link"], 4)}}

    try:
        for row in todo:
            i, fam, h, label, spec = row
            lo, emit_s = lower(row)
            t_emit += emit_s
            sha = hashlib.sha256(lo.text.encode("utf-8")).hexdigest()
            rel = f"co/{label}.hsaco"
            o = old.get(h)
            if o and o["ir_sha256"] == sha and o["label"] == label and _intact(base, o):
                entries[h] = dict(o, index=i, spec=spec)
                reused += 1
                bar.advance()
                continue
            submit(row, emit_s, sha, lo.kernel, lo.text, rel, 0)
            while len(inflight) >= 2 * workers:
                done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                for f in done:
                    if f in inflight:
                        finish(f)
        while inflight:
            done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            for f in done:
                if f in inflight:
                    finish(f)
    finally:
        bar.close()
        pool.shutdown(wait=True, cancel_futures=True)
    wall = time.perf_counter() - t0

    doc = {"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "arch": ARCH, "flavor": flavor,
           "llvm_version": llvm, "linker": vers["linker"], "grid_jobs": len(rows),
           "shard": list(shard) if shard else None,
           "build": {"wall_seconds": round(wall, 3), "workers": workers, "built": built, "reused": reused,
                     "failed": len(failed)},
           "jobs": sorted(entries.values(), key=lambda e: e["index"])}
    M.write(doc, mpath)
    gated = [(e["label"], g) for e in doc["jobs"] for g in [M.gate(e, lds_limit)] if g]
    for label, g in gated:
        print(f"GATE {label}: {g}", file=err)
    js = doc["jobs"]
    cpu = t_emit + t_compile + t_link
    share = (lambda x: f"{100 * x / cpu:.0f}%") if cpu > 0 else (lambda x: "-")
    summary = {
        "flavor": flavor, "arch": ARCH, "shard": doc["shard"], "jobs": len(todo), "grid_jobs": len(rows),
        "built": built, "reused": reused, "failed": len(failed), "gate_failures": len(gated),
        "workers": workers, "wall_seconds": round(wall, 3),
        "jobs_per_second": round(built / wall, 3) if built and wall > 0 else None,
        "emit_seconds": round(t_emit, 3), "compile_seconds": round(t_compile, 3), "link_seconds": round(t_link, 3),
        "max_vgprs": max((e["vgprs"] for e in js), default=None),
        "max_sgprs": max((e["sgprs"] for e in js), default=None),
        "vgpr_spills": sum(e["vgpr_spills"] for e in js), "sgpr_spills": sum(e["sgpr_spills"] for e in js),
        "max_scratch_bytes": max((e["scratch_bytes"] for e in js), default=None),
        "max_lds_bytes": max((e["lds_bytes"] for e in js), default=None),
        "min_occupancy": min((e["occupancy"] for e in js if e["occupancy"] is not None), default=None),
        "manifest": mpath,
    }
    print(f"parity aot: {len(todo)} jobs at {flavor} ({ARCH}){where}: built {built}, reused {reused}, "
          f"failed {len(failed)} in {wall:.1f} s with {workers} worker(s)"
          + (f" ({summary['jobs_per_second']} jobs/s)" if summary["jobs_per_second"] else "")
          + f"; job-seconds emit {t_emit:.1f} ({share(t_emit)}), LLVM {t_compile:.1f} ({share(t_compile)}), "
            f"link {t_link:.1f} ({share(t_link)})", file=out)
    print(f"gate: max VGPRs {summary['max_vgprs']}, spills {summary['vgpr_spills']} VGPR / "
          f"{summary['sgpr_spills']} SGPR, max scratch {summary['max_scratch_bytes']} B, max LDS "
          f"{summary['max_lds_bytes']} B (limit {lds_limit}), min occupancy {summary['min_occupancy']}; "
          f"{len(gated)} job(s) over; manifest {mpath}", file=out)
    if json_path:
        M.write(summary, json_path)
    return 1 if failed or gated else 0

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
from .worker import build_one, build_remote, versions
from parity.base.input_files import MAX_CODE_OBJECT_BYTES, InputFileError, read_bytes
from parity.launch.errors import CodeObjectError
from parity.runtime.manifest import read_manifest
from python_engine.facts import lds_bytes

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


def arch_of(label: str) -> str:
    """The arch of a grid job from its label ``<kernel>.<arch>.<flavor>`` (the grid takes its
    arches from the resolver's arch table: docs/aot.md)."""
    return label.rsplit(".", 2)[1]


def build(flavor: str, out_dir: str, jobs: int | None = None, shard: tuple | None = None,
          json_path: str | None = None, progress: bool | None = None, out=None, err=None, keep=None,
          cluster=None) -> int:
    """Build (see the module docstring). Returns 0 when every selected job is
    built or reused and passes the gate, else 1 (2 for bad arguments).
    ``cluster`` (parity/gate/executor.py, ``--scheduler``): the compile and link jobs
    run there (the parent lowers, writes the code objects and the manifest).
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
    rows = M.grid_rows(engine, flavor)
    arches = sorted({arch_of(r[3]) for r in rows})
    if len(arches) != 1:
        print(f"error: the grid at {flavor} spans the arches {', '.join(arches)}; a manifest holds one arch "
              f"(docs/aot.md)", file=err)
        return 2
    todo = [r for r in rows if (shard is None or shard_of(r[2], shard[1]) == shard[0]) and (keep is None or keep(r))]
    os.makedirs(out_dir, exist_ok=True)
    b = _Build(engine, flavor, arches[0], os.path.abspath(out_dir), cluster.threads() if cluster else workers, err)
    where = f" shard {shard[0]}/{shard[1]}" if shard else ""
    bar = _Progress(len(todo), f"aot {flavor}{where}", sys.stderr.isatty() if progress is None else progress)
    if cluster is not None:
        b.run_on(cluster, todo, bar)
    else:
        b.run(todo, bar)
    doc = b.manifest(len(rows), shard)
    M.write(doc, b.mpath)
    gated = [(e["label"], g) for e in doc["jobs"] for g in [M.gate(e, b.lds_limit)] if g]
    for label, g in gated:
        print(f"GATE {label}: {g}", file=err)
    summary = b.summary(doc, len(todo), len(rows), len(gated))
    _print_summary(summary, where, b.lds_limit, out)
    if json_path:
        M.write(summary, json_path)
    return 1 if b.failed or gated else 0


class _Build:
    """One build's state: the worker pool, the jobs in flight, the manifest entries and the
    time spent per phase (emit in the parent; compile and link in the workers)."""

    def __init__(self, engine, flavor: str, arch: str, base: str, workers: int, err):
        self.engine, self.flavor, self.arch, self.base, self.workers, self.err = engine, flavor, arch, base, workers, err
        self.vers = versions()
        self.llvm = self.vers["llvm_version"]
        self.lds_limit = lds_bytes(arch)
        self.mpath = os.path.join(base, MANIFEST)
        self.old = _old_entries(self.mpath, self.llvm)
        self.entries, self.failed = {}, []
        self.t_emit = self.t_compile = self.t_link = 0.0
        self.built = self.reused = 0
        self.wall = 0.0
        self.ctx = get_context("spawn")
        self.pool = None
        self.inflight = {}  # future -> (row, emit seconds, ir sha, kernel, co path, tries)
        self.bar = None

    def lower(self, row):
        """The C++ engine's lowering of one grid row at its label's arch, and its seconds."""
        i, fam, h, label, spec = row
        t = time.perf_counter()
        lo = self.engine.lower(fam, spec, arch_of(label), self.flavor)
        return lo, time.perf_counter() - t

    def submit(self, row, emit_s, sha, kernel, text, rel, tries):
        job = {"kernel": kernel, "arch": arch_of(row[3]), "text": text, "out": os.path.join(self.base, rel)}
        self.inflight[self.pool.submit(build_one, job)] = (row, emit_s, sha, kernel, rel, tries)

    def run(self, todo: list, bar) -> None:
        """Reuse or build every row of ``todo``; at most 2 jobs per worker in flight."""
        self.bar = bar
        t0 = time.perf_counter()
        self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=self.ctx)
        try:
            for row in todo:
                self._reuse_or_submit(row)
                self._drain(2 * self.workers)
            self._drain(1)
        finally:
            bar.close()
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.wall = time.perf_counter() - t0

    def run_on(self, cluster, todo: list, bar) -> None:
        """:meth:`run` on a Dask cluster: lower a chunk of rows here, build the ones not
        reused there (:func:`.worker.build_remote`), write their code objects here."""
        self.bar = bar
        t0 = time.perf_counter()
        step = max(256, 8 * self.workers)  # IR texts held at once: one chunk's
        try:
            for k in range(0, len(todo), step):
                pending = []
                for row in todo[k:k + step]:
                    self._reuse_or_submit(row, pending)
                jobs = [{"kernel": p[3], "arch": arch_of(p[0][3]), "text": p[5]} for p in pending]
                for p in pending:
                    del p[5:]  # the text lives in its job until sent
                cluster.map(build_remote, jobs, name="aot", on_result=lambda i, r: self._landed(pending[i], r),
                            on_crash=lambda job, msg: {"ok": False, "error": f"the Dask workers building it "
                                                                             f"died: {msg}"})
        finally:
            bar.close()
        self.wall = time.perf_counter() - t0

    def _landed(self, p: list, r: dict) -> None:
        """A Dask job's result: its code object written here, then recorded like a local one."""
        row, emit_s, sha, kernel, rel = p
        if r.get("ok"):
            path = os.path.join(self.base, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.tmp{os.getpid()}"
            with open(tmp, "wb") as f:
                f.write(r.pop("data"))
            os.replace(tmp, path)
        self.bar.advance()
        if not r["ok"]:
            self.failed.append((row[3], r["error"]))
            print(f"FAILED {row[3]}: {r['error']}", file=self.err)
            return
        self._record(row, emit_s, sha, kernel, rel, r)

    def _reuse_or_submit(self, row, pending: list | None = None) -> None:
        i, fam, h, label, spec = row
        lo, emit_s = self.lower(row)
        self.t_emit += emit_s
        sha = hashlib.sha256(lo.text.encode("utf-8")).hexdigest()
        rel = f"co/{label}.hsaco"
        o = self.old.get(h)
        if o and o["ir_sha256"] == sha and o["label"] == label and _intact(self.base, o):
            self.entries[h] = dict(o, index=i, spec=spec)
            self.reused += 1
            self.bar.advance()
            return
        if pending is not None:
            pending.append([row, emit_s, sha, lo.kernel, rel, lo.text])
            return
        self.submit(row, emit_s, sha, lo.kernel, lo.text, rel, 0)

    def _drain(self, limit: int) -> None:
        """Wait for finished jobs until fewer than ``limit`` are in flight."""
        while len(self.inflight) >= limit:
            done, _ = wait(list(self.inflight), return_when=FIRST_COMPLETED)
            for f in done:
                if f in self.inflight:
                    self._finish(f)

    def _finish(self, fut) -> None:
        row, emit_s, sha, kernel, rel, tries = self.inflight.pop(fut)
        try:
            r = fut.result()
        except BrokenProcessPool:
            if tries >= 1:
                r = {"ok": False, "error": "the worker process died twice (an LLVM abort?)"}
            else:
                self._restart_pool([(row, emit_s, sha, kernel, rel, tries)])
                return
        self.bar.advance()
        label = row[3]
        if not r["ok"]:
            self.failed.append((label, r["error"]))
            print(f"FAILED {label}: {r['error']}", file=self.err)
            return
        self._record(row, emit_s, sha, kernel, rel, r)

    def _restart_pool(self, again: list) -> None:
        """Every job in flight died with the pool: a new pool, each job retried once."""
        again += [self.inflight.pop(f) for f in list(self.inflight)]
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=self.ctx)
        for rw, es, s, k, rl, t in again:
            lo, _ = self.lower(rw)
            self.submit(rw, es, s, k, lo.text, rl, t + 1)

    def _record(self, row, emit_s, sha, kernel, rel, r) -> None:
        i, fam, h, label, spec = row
        self.built += 1
        self.t_compile += r["compile"]
        self.t_link += r["link"]
        self.entries[h] = {"index": i, "identity": h, "label": label, "kernel": kernel, "family": fam, "spec": spec,
                           "ir_sha256": sha, "llvm_version": self.llvm, "code_object": rel,
                           "code_object_sha256": r["sha256"], "code_object_bytes": r["bytes"], **r["resources"],
                           "build_seconds": {"emit": round(emit_s, 4), "compile": round(r["compile"], 4),
                                             "link": round(r["link"], 4),
                                             "total": round(emit_s + r["compile"] + r["link"], 4)}}

    def manifest(self, grid_jobs: int, shard) -> dict:
        """The manifest document (parity/runtime/manifest.py's format), jobs in grid order."""
        return {"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "arch": self.arch, "flavor": self.flavor,
                "llvm_version": self.llvm, "linker": self.vers["linker"], "grid_jobs": grid_jobs,
                "shard": list(shard) if shard else None,
                "build": {"wall_seconds": round(self.wall, 3), "workers": self.workers, "built": self.built,
                          "reused": self.reused, "failed": len(self.failed)},
                "jobs": sorted(self.entries.values(), key=lambda e: e["index"])}

    def summary(self, doc: dict, jobs: int, grid_jobs: int, gate_failures: int) -> dict:
        """The ``--json`` summary: counts, seconds per phase and the gate's resource maxima."""
        js, wall, built = doc["jobs"], self.wall, self.built
        return {
            "flavor": self.flavor, "arch": self.arch, "shard": doc["shard"], "jobs": jobs, "grid_jobs": grid_jobs,
            "built": built, "reused": self.reused, "failed": len(self.failed), "gate_failures": gate_failures,
            "workers": self.workers, "wall_seconds": round(wall, 3),
            "jobs_per_second": round(built / wall, 3) if built and wall > 0 else None,
            "emit_seconds": round(self.t_emit, 3), "compile_seconds": round(self.t_compile, 3),
            "link_seconds": round(self.t_link, 3),
            "max_vgprs": max((e["vgprs"] for e in js), default=None),
            "max_sgprs": max((e["sgprs"] for e in js), default=None),
            "vgpr_spills": sum(e["vgpr_spills"] for e in js), "sgpr_spills": sum(e["sgpr_spills"] for e in js),
            "max_scratch_bytes": max((e["scratch_bytes"] for e in js), default=None),
            "max_lds_bytes": max((e["lds_bytes"] for e in js), default=None),
            "min_occupancy": min((e["occupancy"] for e in js if e["occupancy"] is not None), default=None),
            "manifest": self.mpath,
        }


def _print_summary(s: dict, where: str, lds_limit: int, out) -> None:
    cpu = s["emit_seconds"] + s["compile_seconds"] + s["link_seconds"]
    share = (lambda x: f"{100 * x / cpu:.0f}%") if cpu > 0 else (lambda x: "-")
    print(f"parity aot: {s['jobs']} jobs at {s['flavor']} ({s['arch']}){where}: built {s['built']}, "
          f"reused {s['reused']}, failed {s['failed']} in {s['wall_seconds']:.1f} s with {s['workers']} worker(s)"
          + (f" ({s['jobs_per_second']} jobs/s)" if s["jobs_per_second"] else "")
          + f"; job-seconds emit {s['emit_seconds']:.1f} ({share(s['emit_seconds'])}), "
            f"LLVM {s['compile_seconds']:.1f} ({share(s['compile_seconds'])}), "
            f"link {s['link_seconds']:.1f} ({share(s['link_seconds'])})", file=out)
    print(f"gate: max VGPRs {s['max_vgprs']}, spills {s['vgpr_spills']} VGPR / "
          f"{s['sgpr_spills']} SGPR, max scratch {s['max_scratch_bytes']} B, max LDS "
          f"{s['max_lds_bytes']} B (limit {lds_limit}), min occupancy {s['min_occupancy']}; "
          f"{s['gate_failures']} job(s) over; manifest {s['manifest']}", file=out)

"""Benchmark of the AOT build (``parity aot --build``, docs/aot.md).

    python bench/aot.py [--sample-shards K] [--flavors llvm20,llvm22,llvm23] [--manifest PATH ...]

Builds a deterministic sample of the llvm23 grid (shard 1/K by identity
hash, from scratch, in temporary directories) once with ``--jobs 1`` and once
with ``--jobs 2`` and prints: jobs per second at each, the speedup of
``--jobs 2`` over ``--jobs 1``, the share of emit (C++ engine), LLVM
(llvmlite compile) and link (ld.lld) in the build's job-seconds (the sum of
each step's wall time per job, measured where it runs), and the
whole grid's wall time per flavor on this machine estimated from the
``--jobs 2`` rate (``count_jobs(flavor) / rate``). For each ``--manifest``
(a full build's manifest.json) it prints the measured wall time, job count,
rate and the emit / LLVM / link shares of that build. The machine's load
during the run changes every figure: run it on an idle machine.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.aot.build import build  # noqa: E402
from parity.cli.common import Parser, at_least_one, flavor_list  # noqa: E402
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402


def _sample(k: int, jobs: int, tmp: str) -> dict:
    d = os.path.join(tmp, f"j{jobs}")
    js = os.path.join(tmp, f"j{jobs}.json")
    with contextlib.redirect_stdout(io.StringIO()):
        rc = build("llvm23", d, jobs=jobs, shard=(1, k), json_path=js, progress=False)
    with open(js, encoding="utf-8") as f:
        s = json.load(f)
    if rc != 0:
        raise SystemExit(f"bench/aot.py: the sample build failed (rc {rc}): {s}")
    return s


def _shares(emit: float, llvm: float, link: float) -> str:
    cpu = emit + llvm + link
    return (f"emit {emit:.1f} s ({100 * emit / cpu:.1f}%), LLVM {llvm:.1f} s ({100 * llvm / cpu:.1f}%), "
            f"link {link:.1f} s ({100 * link / cpu:.1f}%) of {cpu:.1f} job-seconds")


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample-shards", type=at_least_one("--sample-shards"), default=40, metavar="K",
                    help="sample = shard 1/K of the llvm23 grid (default 40: about 47 jobs)")
    ap.add_argument("--flavors", type=flavor_list("--flavors"), default="llvm20,llvm22,llvm23",
                    help="flavors of the full-grid figures, comma-separated (default llvm20,llvm22,llvm23)")
    ap.add_argument("--manifest", action="append", default=[], metavar="PATH",
                    help="a full build's manifest.json: print its measured figures")
    a = ap.parse_args(argv)
    import cpp_engine

    print(f"machine: {os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f} at start")
    with tempfile.TemporaryDirectory(prefix="splitk-bench-aot-") as tmp:
        one = _sample(a.sample_shards, 1, tmp)
        two = _sample(a.sample_shards, 2, tmp)
    n = one["built"]
    r1, r2 = n / one["wall_seconds"], n / two["wall_seconds"]
    print(f"sample: shard 1/{a.sample_shards} of llvm23 = {n} jobs, built from scratch")
    print(f"  --jobs 1: {one['wall_seconds']:.1f} s wall, {r1:.2f} jobs/s")
    print(f"  --jobs 2: {two['wall_seconds']:.1f} s wall, {r2:.2f} jobs/s")
    print(f"  speedup of --jobs 2 over --jobs 1: {one['wall_seconds'] / two['wall_seconds']:.2f}x")
    for s in (one, two):
        busy = s["compile_seconds"] + s["link_seconds"]
        print(f"  --jobs {s['workers']}: workers busy {busy:.1f} job-seconds in {s['wall_seconds']:.1f} s wall "
              f"(overlap {busy / s['wall_seconds']:.2f}; with free cores --jobs 2 reaches ~2x)")
    print(f"  time split (--jobs 1): {_shares(one['emit_seconds'], one['compile_seconds'], one['link_seconds'])}")
    for fl in a.flavors.split(","):
        total, _ = cpp_engine.aot_jobs_text(fl)
        print(f"whole grid {fl}: {total} jobs, estimated {total / r2 / 60:.1f} min wall at --jobs 2 "
              f"({total / r1 / 60:.1f} min at --jobs 1)")
    for p in a.manifest:
        with open(p, encoding="utf-8") as f:
            doc = json.load(f)
        b = doc.get("build") or {}
        js = doc["jobs"]
        emit = sum(e["build_seconds"]["emit"] for e in js)
        llvm = sum(e["build_seconds"]["compile"] for e in js)
        link = sum(e["build_seconds"]["link"] for e in js)
        wall = b.get("wall_seconds") or 0
        print(f"measured {p}: {len(js)} jobs at {doc['flavor']}, {b.get('workers')} worker(s), built "
              f"{b.get('built')}, wall {wall:.1f} s ({wall / 60:.1f} min, "
              f"{(b.get('built') or 0) / wall if wall else 0:.2f} jobs/s); {_shares(emit, llvm, link)}; "
              f"spills {sum(e['vgpr_spills'] + e['sgpr_spills'] for e in js)}, "
              f"max scratch {max(e['scratch_bytes'] for e in js)} B, max VGPRs {max(e['vgprs'] for e in js)}, "
              f"max LDS {max(e['lds_bytes'] for e in js)} B")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

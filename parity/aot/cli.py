"""The ``parity aot`` command line (docs/aot.md, docs/policy.md)::

    parity aot [--flavor F] [--only X,..] [--emit DIR] [--check] [--shard I/N] [--json PATH]
                                                                      list / write .ll / compare engines
    parity aot [--flavor F] --build DIR [--jobs N] [--shard I/N] [--json PATH]
    parity aot merge MANIFEST... --out PATH [--compare MANIFEST]      join shard manifests
    parity aot validate MANIFEST                                      check a manifest against the grid

Exit status: 0 done, 1 a failed job / gate / validation / comparison, 2 bad arguments
(one ``error:`` line on stderr). ``--flavor`` defaults to llvm23.
"""
from __future__ import annotations

import os
import sys
import time

import python_engine
from parity.cli.common import (add_compile_cache_option, add_options, die, finish, parse_only, progress,
                               writable_file)
from parity.base.outputs import OutputError, ensure_dir, write_text_atomic
from python_engine.facts import lds_bytes

from parity.base.escape import shown

from .shard import ShardError, parse_shard, shard_of


def add_command(sub) -> None:
    """``parity aot`` on the ``parity`` subparsers (parity/app/main.py)."""
    a = sub.add_parser("aot", help="the AOT job grid: list, --emit DIR, --check, --build DIR; merge, validate")
    a.add_argument("--emit", metavar="DIR", help="write DIR/<label>.ll and DIR/jobs.tsv")
    a.add_argument("--check", action="store_true", help="lower every job with both engines and compare")
    a.add_argument("--build", metavar="DIR", help="build the code objects and DIR/manifest.json")
    a.add_argument("--shard", metavar="I/N", help="only shard I of N of the jobs (by identity hash)")
    a.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    a.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="with --build: compile and link on this Dask scheduler (default $PARITY_SCHEDULER, else "
                        "the local process pool; needs splitk-parity[distributed]; docs/scale.md)")
    # --only FAMILY[/LABEL], --flavor (default llvm23), --jobs N (with --build), --json PATH
    add_options(a, only="jobs", flavor=True, flavor_default="llvm23", jobs=True, json=True,
                timeout=False, engines=False)
    add_compile_cache_option(a)
    a.set_defaults(func=cmd_aot, aot_action=None)
    s = a.add_subparsers(dest="aot_action")
    m = s.add_parser("merge", help="join shard manifests; every job of the grid exactly once")
    m.add_argument("manifests", nargs="+", metavar="MANIFEST", help="the shard manifests (manifest.json of each "
                                                                    "--build --shard I/N)")
    m.add_argument("--out", required=True, metavar="PATH", type=writable_file("--out"),
                   help="the merged manifest to write (checked writable before the shards are read)")
    m.add_argument("--compare", metavar="MANIFEST", help="also require the merged content to equal this manifest's")
    v = s.add_parser("validate", help="check a manifest: the grid's jobs, code objects, gate")
    v.add_argument("manifest", metavar="MANIFEST", help="a manifest.json written by --build or merge")


def cmd_aot(args) -> int:
    if args.aot_action == "merge":
        return cmd_merge(args)
    if args.aot_action == "validate":
        return cmd_validate(args.manifest)
    try:
        shard = parse_shard(args.shard)
    except ShardError as e:
        return die(str(e))
    if not args.build:
        if args.jobs is not None:
            return die("--jobs needs --build DIR (listing, --emit and --check run in one process)")
        if args.scheduler is not None:
            return die("--scheduler needs --build DIR (listing, --emit and --check run in one process)")
        args.shard_range = shard
        return cmd_grid(args)
    if args.only:
        return die("--only selects jobs to list, --emit or --check; --build builds the grid (use --shard I/N)")
    # .build and .manifest read code objects through parity.runtime (pyelftools, msgpack:
    # the [runtime] extra), loaded only by the commands that build or read a manifest.
    from .build import build  # pyelftools + msgpack ([runtime] extra) via parity.runtime
    from parity.gate import executor as X  # distributed: only with --scheduler
    try:
        with X.cluster_for(X.scheduler_address(args.scheduler)) as cluster:
            return build(args.flavor, args.build, jobs=args.jobs, shard=shard, json_path=args.json,
                         progress=False if args.no_progress else None, cluster=cluster)
    except X.SchedulerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _spec_of(spec_text: str) -> dict:
    """A job's spec from the grid's ``k=v;k=v`` text (integers where the value is one)."""
    spec = {}
    for kv in spec_text.split(";"):
        k, v = kv.split("=", 1)
        spec[k] = int(v) if v.lstrip("-").isdigit() else v
    return spec


def _only_error(rows: list, fams, names: dict, flavor: str) -> str | None:
    """The one-line reason ``--only`` names no job of the grid, or None."""
    known = sorted({r[0] for r in rows})
    unknown = [f for f in fams if f not in known]
    labels = {(r[0], r[2]) for r in rows}
    missing = [f"{f}/{x}" for f, xs in names.items() for x in sorted(xs) if (f, x) not in labels]
    if unknown:
        return (f"--only: no AOT jobs of famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)} "
                f"(families of the grid: {', '.join(known)})")
    if missing:
        return f"--only: no AOT job {', '.join(missing)} at {flavor}"
    return None


class _GridRun:
    """``parity aot`` without --build: each selected job listed, or lowered by the C++ engine
    (--emit DIR writes its text) and by the Python engine too (--check compares them)."""

    def __init__(self, args, cpp, flavor: str):
        self.args, self.cpp, self.flavor = args, cpp, flavor
        self.t_cpp = self.t_py = 0.0
        self.mismatches = 0

    def job(self, fam: str, h: str, label: str, spec_text: str) -> dict:
        """One job's record; raises OSError when --emit cannot write its file."""
        args = self.args
        job = {"family": fam, "hash": h, "label": label}
        if not (args.emit or args.check):
            print(f"{h}  {label}")
            return job
        spec = _spec_of(spec_text)
        arch = label.rsplit(".", 2)[1]  # <kernel>.<arch>.<flavor>: the grid's arch of this job
        t = time.perf_counter()
        out = self.cpp.lower(fam, spec, arch, self.flavor)
        self.t_cpp += time.perf_counter() - t
        if args.emit:
            path = os.path.join(args.emit, f"{label}.ll")
            write_text_atomic(path, out.text)
            job["file"] = path
        if args.check:
            t = time.perf_counter()
            mine = python_engine.lower(fam, spec, arch, self.flavor)
            self.t_py += time.perf_counter() - t
            job["identical"] = (mine.kernel, mine.text) == (out.kernel, out.text)
            if not job["identical"]:
                print(f"MISMATCH {label}", file=sys.stderr)
                self.mismatches += 1
        if not args.emit:
            print(f"{h}  {label}")
        return job

    def timing(self, ok: bool) -> str:
        args = self.args
        t = f"; lowered with cpp in {self.t_cpp:.2f} s" if (args.emit or args.check) else ""
        if args.check:
            t += f", python in {self.t_py:.2f} s, every job IDENTICAL" if ok else ", MISMATCH"
        return t


def cmd_grid(args) -> int:
    """The grid itself: list the jobs, --emit DIR (the C++ engine's text), --check (both engines)."""
    import cpp_engine as cpp  # cpp_engine: its import rebuilds the C++ library and can fail (parity/base/stale.py)
    try:
        n, text = cpp.aot_jobs_text(args.flavor)
        flavor = cpp.resolve_flavor(args.flavor)
    except cpp.SpecRejected as e:
        return die(f"--flavor: {e.reason}")
    rows = [ln.split("\t") for ln in text.splitlines()]
    try:
        fams, names = parse_only(args.only, None)  # jobs: exact names (no arch selector)
    except ValueError as e:
        return die(str(e))
    why = _only_error(rows, fams, names, flavor) if fams else None
    if why:
        return die(why)
    problems = [f"count_jobs {n} != {len(rows)} enumerated jobs"] if len(rows) != n else []
    if args.check and python_engine.aot_jobs_text(args.flavor) != (n, text):  # the whole grid, before --shard
        problems.append("the Python engine's job list differs from the C++ engine's")
    shard = getattr(args, "shard_range", None)  # (I, N) from parity/aot/cli.py
    if shard:
        rows = [r for r in rows if shard_of(r[1], shard[1]) == shard[0]]
        text = "".join("\t".join(r) + "\n" for r in rows)
    if fams:
        rows = [r for r in rows if r[0] in fams and (r[0] not in names or r[2] in names[r[0]])]
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    if args.emit:
        try:
            ensure_dir(args.emit, "--emit")
        except OutputError as e:
            return die(str(e))
    run = _GridRun(args, cpp, flavor)
    jobs_out = []
    try:
        with progress("aot", len(rows)) as bar:
            for i, row in enumerate(rows):
                jobs_out.append(run.job(*row))
                if bar:
                    bar(i + 1)
        if args.emit:
            write_text_atomic(os.path.join(args.emit, "jobs.tsv"), text)
    except OSError as e:
        return die(f"{e.filename}: {e.strerror}")
    ok = not problems and run.mismatches == 0
    sel = f"{len(rows)} of {n}" if fams else f"{n}"
    where = f", shard {shard[0]}/{shard[1]}: {len(rows)} jobs" if shard else ""
    arches = ", ".join(sorted({r[2].rsplit(".", 2)[1] for r in rows})) or "no arch"
    print(f"{sel} AOT jobs at {flavor} ({arches}){where}{run.timing(ok)}"
          + (f"; written to {args.emit}/" if args.emit else ""))
    return finish(args, "aot", ok, {"flavor": flavor, "count_jobs": n, "jobs": jobs_out,
                                    "shard": list(shard) if shard else None,
                                    "checked": bool(args.check), "emit": args.emit, "problems": problems})


def _lds_limit(doc: dict) -> int | None:
    """The LDS limit (bytes) of the manifest's arch (python_engine.facts), None for an arch
    the engines do not know (the manifest's validation names it)."""
    try:
        return lds_bytes(doc["arch"])
    except (KeyError, ValueError, TypeError):
        return None


def _read(path):
    # parity.runtime needs pyelftools + msgpack (the [runtime] extra): only aot merge / validate load it.
    from parity.launch.errors import CodeObjectError  # pyelftools + msgpack ([runtime] extra) via parity.runtime
    from parity.runtime.manifest import read_manifest  # pyelftools + msgpack ([runtime] extra) via parity.runtime
    try:
        return read_manifest(path), None
    except CodeObjectError as e:
        return None, str(e)


def cmd_validate(path: str) -> int:
    import cpp_engine  # cpp_engine: its import rebuilds the C++ library and can fail (parity/base/stale.py)
    from . import manifest as M  # reads code objects through parity.runtime (pyelftools, msgpack)

    doc, e = _read(path)
    if doc is None:
        print(f"error: {e}", file=sys.stderr)
        return 2
    limit = _lds_limit(doc)
    if limit is None:
        print(f"error: {shown(path)}: arch {shown(doc.get('arch'))} is not an arch the engines know", file=sys.stderr)
        return 2
    errs = M.validate(doc, path, cpp_engine, limit)
    for x in errs[:50]:
        print(f"INVALID {shown(x)}", file=sys.stderr)
    if len(errs) > 50:
        print(f"... and {len(errs) - 50} more", file=sys.stderr)
    shard = f" shard {doc['shard'][0]}/{doc['shard'][1]}" if doc.get("shard") else ""
    print(f"parity aot validate: {shown(path)}: {len(doc['jobs'])} jobs at {shown(doc['flavor'])}{shown(shard)} "
          f"(grid {shown(doc['grid_jobs'])}), LLVM {shown(doc['llvm_version'])}: "
          + ("valid" if not errs else f"{len(errs)} problem(s)"))
    return 1 if errs else 0


def cmd_merge(args) -> int:
    from . import manifest as M  # reads code objects through parity.runtime (pyelftools, msgpack)

    docs = []
    for p in args.manifests:
        doc, e = _read(p)
        if doc is None:
            print(f"error: {e}", file=sys.stderr)
            return 2
        docs.append(doc)
    merged, errs = M.merge(docs, args.manifests, args.out)
    if errs:
        for x in errs:
            print(f"error: {x}", file=sys.stderr)
        print("error: parity aot merge: nothing written", file=sys.stderr)
        return 1
    try:
        M.write(merged, args.out)
    except OSError as exc:  # full disk, a directory gone since the check
        return die(f"--out {shown(args.out)}: cannot write: {shown(exc.strerror or exc)}")
    rc = cmd_validate(args.out)
    if args.compare:
        other, e = _read(args.compare)
        if other is None:
            print(f"error: {e}", file=sys.stderr)
            return 2
        diff = M.compare(merged, other)
        for x in diff[:50]:
            print(f"DIFFERS {x}", file=sys.stderr)
        print(f"parity aot merge: {args.out} " + ("equals" if not diff else f"differs from ({len(diff)})")
              + f" {args.compare} (content: every job but its path and timings)")
        rc = rc or (1 if diff else 0)
    return rc

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

import sys


def add_command(sub, cmd_list) -> None:
    """Register ``parity aot`` on the ``parity`` subparsers; ``cmd_list`` is the
    listing / --emit / --check command (parity/layers.py)."""
    from parity.cli_common import add_options
    a = sub.add_parser("aot", help="the AOT job grid: list, --emit DIR, --check, --build DIR; merge, validate")
    a.add_argument("--emit", metavar="DIR", help="write DIR/<label>.ll and DIR/jobs.tsv")
    a.add_argument("--check", action="store_true", help="lower every job with both engines and compare")
    a.add_argument("--build", metavar="DIR", help="build the code objects and DIR/manifest.json")
    a.add_argument("--shard", metavar="I/N", help="only shard I of N of the jobs (by identity hash)")
    a.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    # --only FAMILY[/LABEL], --flavor (default llvm23), --jobs N (with --build), --json PATH
    add_options(a, only="jobs", flavor=True, flavor_default="llvm23", jobs=True, json=True,
                timeout=False, engines=False)
    a.set_defaults(func=lambda args: cmd_aot(args, cmd_list), aot_action=None)
    s = a.add_subparsers(dest="aot_action")
    m = s.add_parser("merge", help="join shard manifests; every job of the grid exactly once")
    m.add_argument("manifests", nargs="+", metavar="MANIFEST")
    m.add_argument("--out", required=True, metavar="PATH")
    m.add_argument("--compare", metavar="MANIFEST", help="also require the merged content to equal this manifest's")
    v = s.add_parser("validate", help="check a manifest: the grid's jobs, code objects, gate")
    v.add_argument("manifest", metavar="MANIFEST")


def cmd_aot(args, cmd_list) -> int:
    from .shard import ShardError, parse_shard

    if args.aot_action == "merge":
        return cmd_merge(args)
    if args.aot_action == "validate":
        return cmd_validate(args.manifest)
    from parity.cli_common import die
    try:
        shard = parse_shard(args.shard)
    except ShardError as e:
        return die(str(e))
    if not args.build:
        if args.jobs is not None:
            return die("--jobs needs --build DIR (listing, --emit and --check run in one process)")
        args.shard_range = shard
        return cmd_list(args)
    if args.only:
        return die("--only selects jobs to list, --emit or --check; --build builds the grid (use --shard I/N)")
    from .build import build
    return build(args.flavor, args.build, jobs=args.jobs, shard=shard, json_path=args.json,
                 progress=False if args.no_progress else None)


def _lds_limit() -> int:
    from python_engine.targets.arch import find_arch
    return find_arch("gfx1250").lds_bytes


def _read(path):
    from parity.runtime.errors import CodeObjectError
    from parity.runtime.manifest import read_manifest
    try:
        return read_manifest(path), None
    except CodeObjectError as e:
        return None, str(e)


def cmd_validate(path: str) -> int:
    import cpp_engine
    from . import manifest as M

    doc, e = _read(path)
    if doc is None:
        print(f"error: {e}", file=sys.stderr)
        return 2
    errs = M.validate(doc, path, cpp_engine, _lds_limit())
    for x in errs[:50]:
        print(f"INVALID {x}", file=sys.stderr)
    if len(errs) > 50:
        print(f"... and {len(errs) - 50} more", file=sys.stderr)
    shard = f" shard {doc['shard'][0]}/{doc['shard'][1]}" if doc.get("shard") else ""
    print(f"parity aot validate: {path}: {len(doc['jobs'])} jobs at {doc['flavor']}{shard} "
          f"(grid {doc['grid_jobs']}), LLVM {doc['llvm_version']}: "
          + ("valid" if not errs else f"{len(errs)} problem(s)"))
    return 1 if errs else 0


def cmd_merge(args) -> int:
    import cpp_engine
    from . import manifest as M

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
    M.write(merged, args.out)
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

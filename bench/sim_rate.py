"""Worker of bench/sim.py: times the emulator of one checkout on pickled launches.

    python bench/sim_rate.py TREE WORKLOADS.pkl REPEATS
    python bench/sim_rate.py --numerics TREE JOBS [--coverage] [--opt] [--only=F1,F2] [--select=F/N,...]

``TREE`` is the checkout whose ``parity.sim`` runs (the editable install's
import hook is removed so that ``TREE`` wins over this venv's checkout);
``WORKLOADS.pkl`` a list of dicts ``{"name", "text", "grid", "block",
"cluster", "args", "shadow", "coverage"}``. Prints one JSON line:
``{name: {"instructions", "wall": [s, ...], "cpu": [s, ...]} | {"error": msg}}``
(wave-instructions of one launch in both orders; per repeat its wall and
process CPU seconds).
"""
from __future__ import annotations

import json
import os
import pickle
import sys
import time


#: One BLAS thread: numpy's OpenBLAS wakes worker threads on a matrix product (the
#: WMMA's 16x16 ``A @ B``) that then spin-wait, charging this process up to twice
#: the launch's wall time in CPU seconds (measured: reduce 7.4 M lane-instructions
#: per CPU-s against 14.5 M per wall-s). The products are too small to gain from
#: threads, so the CPU-s rate is made comparable with the wall rate. Set before
#: numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _use_tree(tree: str) -> None:
    sys.meta_path = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    sys.path.insert(0, tree)


_USAGE = ("python bench/sim_rate.py TREE WORKLOADS.pkl REPEATS | --numerics TREE JOBS [--coverage] [--opt] "
          "[--only=F1,F2] [--select=F/N,...] (bench/sim.py's worker)")


def _usage_error(argv) -> str | None:
    """One line when ``argv`` is not what bench/sim.py passes (a user running the worker by
    hand got an IndexError traceback for ``--help`` or no arguments)."""
    numerics = bool(argv) and argv[0] == "--numerics"
    count = argv[1:3] if numerics else argv
    if len(count) != 2 + (not numerics) or not (argv[2] if numerics else argv[-1]).isdigit():
        return f"error: bench/sim_rate.py: usage: {_USAGE}"
    tree = argv[1] if numerics else argv[0]
    if not os.path.isdir(tree):
        return f"error: bench/sim_rate.py: TREE {tree!r} is not a directory (a checkout)"
    if not numerics and not os.path.isfile(argv[1]):
        return f"error: bench/sim_rate.py: WORKLOADS {argv[1]!r} is not a file (bench/sim.py's pickle)"
    return None


def main(argv) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage: {_USAGE}\n\n{__doc__.split(chr(10) + chr(10), 2)[2].strip()}")
        return 0
    bad = _usage_error(argv)
    if bad:
        print(bad, file=sys.stderr)
        return 2
    if argv[0] == "--numerics":   # time run_all of TREE (the work of `parity numerics`)
        return _numerics(argv[1], int(argv[2]), "--coverage" in argv[3:],
                         next((x.split("=", 1)[1].split(",") for x in argv[3:] if x.startswith("--only=")), None),
                         "--opt" in argv[3:],
                         next((x.split("=", 1)[1].split(",") for x in argv[3:] if x.startswith("--select=")), None))
    tree, path, repeats = argv[0], argv[1], int(argv[2])
    _use_tree(tree)
    import numpy as np
    from parity.sim import Kernel
    out = {}
    with open(path, "rb") as fh:
        work = pickle.load(fh)
    for w in work:
        try:
            kw = {"coverage": True} if w["coverage"] else {}
            k = Kernel(w["text"], **kw)
        except Exception as e:  # an older emulator without an intrinsic today's kernel uses
            out[w["name"]] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0]}"}
            continue
        walls, cpus, n = [], [], 0
        for _ in range(repeats):
            a = {p: (v.copy() if isinstance(v, np.ndarray) else v) for p, v in w["args"].items()}
            t0, c0 = time.perf_counter(), time.process_time()
            st = k.launch(w["grid"], w["block"], a, cluster=w["cluster"], shadow=w["shadow"])
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            n = st.instructions
        out[w["name"]] = {"instructions": n, "wall": walls, "cpu": cpus}
    print(json.dumps(out))
    return 0


def _numerics(tree: str, jobs: int, coverage: bool, only, opt: bool = False, select=None) -> int:
    """Run every numerics config of ``tree`` (of the families ``only``, None:
    all) on ``jobs`` workers (``coverage``: with coverage recording, a tree
    that has it) and print one JSON line: wall seconds, wave-instructions,
    configs, passing configs, CPU seconds of this process and its workers, and
    the seconds the workers spent in configs (their sum over jobs x wall: how
    busy the workers were); ``opt``: with the opt lane (parity/sim/optimised.py),
    and per config its seconds and the lane's stats (``per_config``)."""
    import inspect
    import resource
    _use_tree(tree)
    os.chdir(tree)
    from parity.sim import numerics as N
    kw = {"coverage": True} if coverage and "coverage" in inspect.signature(N.run_all).parameters else {}
    if opt:
        kw["opt"] = True
    if select:   # FAMILY/NAME items: those configs only
        kw["select"] = {tuple(x.split("/", 1)) for x in select}
    t0 = time.perf_counter()
    res = N.run_all(only, jobs, **kw)
    wall = time.perf_counter() - t0
    cpu = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for f in ("ru_utime", "ru_stime"))
    print(json.dumps({"wall": wall, "instructions": sum(o.instructions for o in res), "configs": len(res),
                      "ok": sum(1 for o in res if o.ok), "cpu": cpu, "coverage": bool(kw),
                      "busy": sum(o.seconds for o in res),
                      **({"per_config": [[o.family, o.config, o.seconds, o.ok, o.opt] for o in res]} if opt else {})}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

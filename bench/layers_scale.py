"""``parity layers`` at scale: peak RSS and wall time of generated catalogs (issue 39).

    python bench/layers_scale.py [--sizes 1000,10000,100000] [--limit-kb 2000000]
                                 [--distinct 3] [--no-numerics] [--no-verify] [--keep DIR]

Each catalog holds ``N`` layers, each named apart (``net_l000001`` ...), whose
commands cycle through the first ``--distinct`` layers of the shipped catalog
(parity/data/layers.txt), as a network's repeated blocks do (the issue's "4,000
layers hold 3 distinct kernels"). ``parity layers`` runs once per size as a
child process under an address-space limit of ``--limit-kb`` KiB (``ulimit -v``;
0: none); printed per size: the exit status, the wall time, the child's peak
RSS (``wait4``), microseconds per layer and the report's last line. The report
itself goes to a file (one row and its detail lines per layer). Linear time is
the per-layer figure staying flat as ``N`` grows tenfold; memory that grows
with the distinct kernels, not the layers, is the RSS staying flat.

Figures are of this machine under its current load; they are not a gate.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.cli.common import Parser, integer, integer_list  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _commands(distinct: int) -> list[str]:
    """The commands (without names) of the first ``distinct`` layers of the shipped catalog."""
    out = []
    for line in (ROOT / "parity" / "data" / "layers.txt").read_text().splitlines():
        s = line.split("#", 1)[0].strip()
        if s:
            out.append(s.split(":", 1)[1].strip())
        if len(out) == distinct:
            break
    return out


def write_catalog(path: Path, n: int, distinct: int) -> int:
    """Write an ``n``-layer catalog cycling through ``distinct`` commands; returns its size in bytes."""
    cmds = _commands(distinct)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(f"net_l{i:06d}: {cmds[i % len(cmds)]}\n")
    return path.stat().st_size


def run_one(catalog: Path, report: Path, limit_kb: int, extra: list[str]) -> dict:
    """Run ``parity layers CATALOG`` under the limit: {rc, seconds, rss_mb, last}."""
    def limit():
        if limit_kb:
            resource.setrlimit(resource.RLIMIT_AS, (limit_kb * 1024, limit_kb * 1024))
    t0 = time.perf_counter()
    with open(report, "wb") as out, open(str(report) + ".err", "wb") as err:
        p = subprocess.Popen([sys.executable, "-m", "parity", "layers", str(catalog), *extra],
                             stdout=out, stderr=err, preexec_fn=limit, cwd=ROOT)
        _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    lines = report.read_text(errors="replace").splitlines()
    errs = Path(str(report) + ".err").read_text(errors="replace").splitlines()
    last = lines[-1] if lines else (errs[-1] if errs else "")
    return {"rc": p.returncode, "seconds": secs, "rss_mb": usage.ru_maxrss / 1024, "last": last}


def main(argv=None) -> int:
    ap = Parser(prog="layers_scale.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=integer_list("--sizes"), default="1000,10000,100000",
                    help="comma-separated catalog sizes in layers (default 1000,10000,100000)")
    ap.add_argument("--limit-kb", type=integer("--limit-kb", lo=0), default=2000000,
                    help="address-space limit of each run in KiB, as `ulimit -v` (default 2000000; 0: none)")
    ap.add_argument("--distinct", type=integer("--distinct", lo=1), default=3,
                    help="distinct commands the layers cycle through (default 3)")
    ap.add_argument("--no-numerics", action="store_true", help="pass --no-numerics to parity layers")
    ap.add_argument("--no-verify", action="store_true", help="pass --no-verify to parity layers")
    ap.add_argument("--keep", metavar="DIR", help="write the catalogs and reports into DIR (default: a temp dir)")
    a = ap.parse_args(argv)
    sizes = a.sizes
    extra = [f for f, on in (("--no-numerics", a.no_numerics), ("--no-verify", a.no_verify)) if on]
    with tempfile.TemporaryDirectory(prefix="layers_scale.") as tmp:
        where = Path(a.keep) if a.keep else Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        print(f"parity layers, {a.distinct} distinct command(s), limit "
              + (f"{a.limit_kb} KiB address space" if a.limit_kb else "none") + (f", {' '.join(extra)}" if extra else ""))
        print(f"{'layers':>8s} {'MB cat':>7s} {'rc':>3s} {'wall s':>8s} {'us/layer':>9s} {'RSS MB':>7s}  last line")
        worst = 0
        for n in sizes:
            cat = where / f"layers_{n}.txt"
            size = write_catalog(cat, n, a.distinct)
            r = run_one(cat, where / f"layers_{n}.out", a.limit_kb, extra)
            worst = max(worst, r["rc"])
            print(f"{n:8d} {size / 1e6:7.2f} {r['rc']:3d} {r['seconds']:8.1f} {1e6 * r['seconds'] / n:9.0f} "
                  f"{r['rss_mb']:7.0f}  {r['last'][:150]}", flush=True)
    return 0 if worst == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

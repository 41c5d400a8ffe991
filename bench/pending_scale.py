"""Pending golden entries at scale: ``parity check`` writing them and ``parity review
--list`` listing them (issue 39).

    python bench/pending_scale.py [--sizes 10000,50000,100000] [--family ir_core] [--keep DIR]

For each size ``N``: a copy of golden/ whose ``--family`` shard also holds ``N``
orphan entries (``llvm23/orphan_000001`` ... as ``{"rejected": "bench"}``: configs
that no longer exist), then ``parity check --golden-dir COPY`` (RED: it writes the
family's pending file, ``N`` orphans) and ``parity review --list --golden-dir COPY``
(one group: "config no longer exists"). Printed per size: the wall time of each
command, the pending file's size and the review's last line. Linear is the
per-entry time staying flat as ``N`` grows; the issue's target is 100,000 pending
entries listed in under 5 s.

Figures are of this machine under its current load; they are not a gate.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.cli.common import Parser, integer_list  # noqa: E402
from parity.golden import shards as G  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def orphan_golden(where: Path, family: str, n: int) -> Path:
    """A copy of golden/ at ``where`` whose ``family`` shard also holds ``n`` orphans."""
    if where.exists():
        shutil.rmtree(where)
    shutil.copytree(ROOT / "golden", where)
    flavors = G.load_shard(where, family)
    flavors.setdefault("llvm23", {}).update({f"orphan_{i:06d}": {"rejected": "bench"} for i in range(n)})
    G.shard_path(where, family).write_text(G.render_shard(family, flavors))
    return where


def timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "parity", *argv], capture_output=True, text=True, env=env, cwd=ROOT)
    return time.perf_counter() - t0, r


def main(argv=None) -> int:
    ap = Parser(prog="pending_scale.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=integer_list("--sizes"), default="10000,50000,100000",
                    help="comma-separated orphan counts (default 10000,50000,100000)")
    ap.add_argument("--family", default="ir_core", help="the family whose shard gets the orphans (default ir_core)")
    ap.add_argument("--keep", metavar="DIR", help="make the golden copies in DIR (default: a temp dir)")
    a = ap.parse_args(argv)
    sizes = a.sizes
    with tempfile.TemporaryDirectory(prefix="pending_scale.") as tmp:
        base = Path(a.keep) if a.keep else Path(tmp)
        print(f"{'pending':>8s} {'check s':>8s} {'rc':>3s} {'MB .new':>8s} {'list s':>7s} {'rc':>3s} "
              f"{'us/entry':>9s}  review's last line")
        worst = 0
        for n in sizes:
            gdir = orphan_golden(base / f"golden_{n}", a.family, n)
            t_check, rc = timed(["check", "--golden-dir", str(gdir), "--only", a.family])
            new = gdir / f"{a.family}.json.new"
            size = new.stat().st_size / 1e6 if new.exists() else 0.0
            t_list, rl = timed(["review", "--list", "--golden-dir", str(gdir)])
            last = (rl.stdout.strip().splitlines() or rl.stderr.strip().splitlines() or [""])[-1]
            worst = max(worst, rl.returncode)
            print(f"{n:8d} {t_check:8.1f} {rc.returncode:3d} {size:8.2f} {t_list:7.2f} {rl.returncode:3d} "
                  f"{1e6 * t_list / n:9.1f}  {last[:150]}", flush=True)
    return 0 if worst == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

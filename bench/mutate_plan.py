"""Peak memory of planning ``parity mutate`` over the whole catalog (every site of
every accepted conv_implicit_gemm and conv_fwd_split_k_reduce config).

    python bench/mutate_plan.py [--per-kind K] [--cap-gb G] [--repeats N] [--base REF]

Runs the planning step of ``parity mutate`` (``numerics.accepted_configs`` then
``parity.mutate.run.plan``, no mutant judged) in a child process whose address
space is capped at ``--cap-gb`` GiB (``RLIMIT_AS``, so a shared machine stays
safe), and prints per repeat the mutants planned, the wall seconds and the
child's peak resident set (``ru_maxrss``, MiB), then the median against the
goal (at most 1 GiB at ``--per-kind 0``). ``--base REF`` measures the commit REF
too, from a temporary detached ``git worktree`` (removed afterwards) whose
``parity`` and ``python_engine`` are imported in place of this checkout's (the
planning needs no C++ engine). Memory does not depend on the machine's load, so
the figures are absolute; the seconds are noisy.
"""
from __future__ import annotations

import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GOAL_MIB = 1024
FAMILIES = ("conv_implicit_gemm", "conv_fwd_split_k_reduce")


def _peak_mib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def child(tree: str, per_kind: int, cap_bytes: int) -> int:
    """Plan in this process (imports from ``tree``, memory capped): one JSON line."""
    resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from sim_rate import _use_tree
    _use_tree(tree)
    from parity.config import load_families
    from parity.mutate import run as R
    from parity.sim import numerics as N
    t0 = time.perf_counter()
    try:
        configs = N.accepted_configs(list(FAMILIES), families=load_families(only=list(FAMILIES)))
        n = len(R.plan(configs, 0, per_kind=per_kind or None))
        out = {"configs": len(configs), "mutants": n}
    except MemoryError:
        out = {"error": "MemoryError"}
    out.update(seconds=round(time.perf_counter() - t0, 2), peak_mib=_peak_mib(), tree=str(Path(R.__file__).parents[2]))
    print(json.dumps(out))
    return 0


def measure(tree: Path, per_kind: int, cap_gb: int) -> dict:
    cmd = [sys.executable, __file__, "--child", str(tree), str(per_kind), str(cap_gb * 1024 ** 3)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"error: the planning child for {tree} exited {p.returncode}: {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:  # before any import of parity: the child imports the tree's
        return child(argv[1], int(argv[2]), int(argv[3]))
    if __package__ in (None, ""):
        sys.path.insert(0, str(ROOT))
    from parity.cli.common import Parser, git_commit, integer
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-kind", type=integer("--per-kind", lo=0), default=0, metavar="K",
                    help="sites per mutation kind and config, as `parity mutate --per-kind` (default 0: every site)")
    ap.add_argument("--cap-gb", type=integer("--cap-gb", lo=1), default=6, metavar="G",
                    help="the child's address-space cap in GiB (default 6)")
    ap.add_argument("--repeats", type=integer("--repeats", lo=1), default=1, metavar="N",
                    help="planning runs per tree; the median is reported (default 1)")
    ap.add_argument("--base", type=git_commit("--base"), default=None, metavar="REF",
                    help="also measure this commit, from a temporary detached worktree (default: none)")
    a = ap.parse_args(argv)
    trees = [("this checkout", ROOT, None)]
    tmp = None
    if a.base:
        tmp = Path(tempfile.mkdtemp(prefix="bench-mutate-plan-")) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tmp), a.base], check=True)
        trees.append((f"base {a.base[:10]}", tmp, None))
    try:
        for name, tree, _ in trees:
            runs = [measure(tree, a.per_kind, a.cap_gb) for _ in range(a.repeats)]
            for r in runs:
                print(f"{name}: {json.dumps(r)}")
            peak = statistics.median(r["peak_mib"] for r in runs)
            failed = [r for r in runs if "error" in r]
            verdict = ("not met (" + failed[0]["error"] + f" under the {a.cap_gb} GiB cap)") if failed else \
                ("met" if peak <= GOAL_MIB else "not met")
            print(f"{name}: planning --per-kind {a.per_kind}: peak RSS {peak:.0f} MiB (median of {len(runs)}), "
                  f"goal <= {GOAL_MIB} MiB: {verdict}")
    finally:
        if tmp is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tmp)], check=False)
            shutil.rmtree(tmp.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    from parity.base.outputs import run_quietly_on_broken_pipe
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

"""Benchmark of `parity verify` (issue 25, item 3: <= 45 s on a quiet machine).

    python bench/verify.py [--repeats N] [--base SHA] [--no-base] [--only fam,...] [--clean-base]

Times whole runs of ``parity verify`` (wall seconds, median of N repeats) in
three settings, in the same run so the machine's load is shared:

* **cold**: the compile cache disabled (``PARITY_COMPILE_CACHE=off``): every
  module parsed and compiled; this is the goal's measure;
* **warm**: a private cache directory filled by one untimed run first: what a
  second verify (or perf, layers, write, the AOT build after it) costs;
* **base**: the issue's base commit (default 24d40b6) in a detached git
  worktree of its own, with its own virtual environment and C++ engine build,
  cached under ``~/.cache/splitk-parity/bench-base-<sha>`` (built on first
  use: a venv whose third-party packages come from this checkout's venv
  through a ``.pth`` file, the project installed editable without
  dependencies). ``--clean-base`` removes it (``git worktree remove``).

Prints each figure against the 45 s goal and cold/base, warm/base as ratios;
under load the absolute times mean little, so each ratio is also applied to
the base commit's quiet figure (67 s, issue 25) against the goal.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from parity.cli.common import Parser, at_least_one, family_list, git_commit  # noqa: E402
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402
GOAL_S = 45.0
BASE_SHA = "24d40b6"
BASE_QUIET_S = 67.0  # issue 25: `parity verify` at the base commit on a quiet machine (2 cores)


def base_dir(sha: str) -> Path:
    return Path(os.path.expanduser("~/.cache/splitk-parity")) / f"bench-base-{sha}"


def build_base(sha: str) -> Path:
    """The base commit's checkout with its own venv (built once, then reused); its python."""
    d = base_dir(sha)
    py = d / ".venv" / "bin" / "python"
    if (d / ".bench-ready").exists():
        return py
    if d.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(d)], check=False)
        shutil.rmtree(d, ignore_errors=True)
    d.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(d), sha], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(d / ".venv")], check=True)
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # third-party packages (llvmlite, PyYAML, cffi, the build tools) from this venv; the project itself
    # (parity, python_engine, the C++ engine) built from the base checkout
    Path(site, "_bench_parent_site.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                    "--no-build-isolation", "-e", str(d)], check=True)
    (d / ".bench-ready").write_text(sha + "\n")
    return py


def clean_base(sha: str) -> None:
    d = base_dir(sha)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(d)], check=False)
    shutil.rmtree(d, ignore_errors=True)


def run_verify(py: Path, cwd: Path, env: dict, only: str | None) -> tuple[float, str]:
    cmd = [str(py), "-m", "parity", "verify"] + (["--only", only] if only else [])
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    last = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
    if p.returncode not in (0, 1) or "RESULT" not in last:
        sys.exit(f"error: {' '.join(cmd)} (in {cwd}) exited {p.returncode}: {p.stderr.strip()[-400:]}")
    return wall, last


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=at_least_one("--repeats"), default=3,
                    help="timed runs per setting; the median is reported (default 3)")
    ap.add_argument("--base", type=git_commit("--base"), default=BASE_SHA, help=f"base commit (default {BASE_SHA})")
    ap.add_argument("--no-base", action="store_true", help="skip the base commit")
    ap.add_argument("--only", type=family_list("--only"), default=None, help="families, comma-separated (default: all)")
    ap.add_argument("--clean-base", action="store_true", help="remove the cached base build and exit")
    ap.add_argument("--build-base", action="store_true", help="build the base checkout and exit")
    a = ap.parse_args(argv)
    if a.clean_base:
        clean_base(a.base)
        return 0
    base_py = None if a.no_base else build_base(a.base)
    if a.build_base:
        print(base_py)
        return 0
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    cache = tempfile.mkdtemp(prefix="bench-verify-cache-")
    here_py = Path(sys.executable)
    cold_env = {**env, "PARITY_COMPILE_CACHE": "off"}
    warm_env = {**env, "PARITY_COMPILE_CACHE": cache}
    try:
        run_verify(here_py, ROOT, warm_env, a.only)  # fills the warm cache (untimed)
        times: dict[str, list[float]] = {"cold": [], "warm": [], "base": []}
        results: dict[str, str] = {}
        for _ in range(a.repeats):  # interleaved, so a change of load hits every setting alike
            for name, py, cwd, e in (("cold", here_py, ROOT, cold_env), ("warm", here_py, ROOT, warm_env),
                                     ("base", base_py, base_dir(a.base), env)):
                if py is None:
                    continue
                w, results[name] = run_verify(py, cwd, e, a.only)
                times[name].append(w)
                print(f"bench/verify.py: {name} {w:.1f} s (load {os.getloadavg()[0]:.1f})", file=sys.stderr,
                      flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"parity verify{' --only ' + a.only if a.only else ''}: median wall of {a.repeats} runs, "
          f"load {load:.1f} on {os.cpu_count()} cores")
    med = {k: statistics.median(v) for k, v in times.items() if v}
    rows = [("cold cache (goal's measure)", "cold"), ("warm cache", "warm"), (f"base {a.base}", "base")]
    for label, k in rows:
        if k not in med:
            continue
        ratio = ""
        if "base" in med and k != "base":
            r = med[k] / med["base"]
            q = r * BASE_QUIET_S
            ratio = (f"  {r:.2f}x base (on a quiet machine: {r:.2f} x {BASE_QUIET_S:.0f} s = {q:.0f} s, "
                     f"goal {'met' if q <= GOAL_S else 'not met'})")
        goal = f"  goal <= {GOAL_S:.0f} s: {'met' if med[k] <= GOAL_S else 'not met'}" if k != "base" else ""
        print(f"  {label:30s} {med[k]:7.1f} s  (runs {', '.join(f'{t:.1f}' for t in times[k])}){ratio}{goal}"
              f"  [{results[k]}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

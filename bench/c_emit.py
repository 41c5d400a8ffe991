"""Benchmark of IR text emission from C (issue 25, item 4).

    python bench/c_emit.py [--repeats N] [--rounds R] [--base REF] [--no-base] [--callgrind]

Builds bench/c_emit.c against the installed C++ engine (the library this
checkout's binding loads) and against the engine of the base commit REF
(default 24d40b6, issue 25's base; built once with plain CMake in a temporary
detached worktree, cached under ~/.cache/splitk-parity/bench-base-<sha>/),
then runs both N times, alternating, over the conv family: every
conv_implicit_gemm config x flavor the gate expects to lower. Each run lowers
every unit R times through cpe_conv_lower. Prints, per engine, the median
MB/s of IR text (10^6 bytes per CPU second of the lowering thread, and the
same per wall second), the current one against the 1 GB/s goal and as a
ratio against the base measured in the same run. ``--callgrind`` adds the
instructions per byte of IR inside cpe_conv_lower (valgrind, every 14th unit).
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.cli.common import Parser, at_least_one, git_commit  # noqa: E402
from parity.config import load_families  # noqa: E402
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "bench" / "c_emit.c"
BASE = "24d40b6"
GOAL_MB_S = 1000.0
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "splitk-parity"
_LINE = re.compile(r"bytes=(\d+) kernels=(\d+) rejected=(\d+) rounds=(\d+) cpu_s=([\d.]+) wall_s=([\d.]+)")


def units_text() -> str:
    """One line per conv_implicit_gemm unit the gate expects to lower: arch,
    flavor, then field=value pairs (c_emit.c's units file)."""
    lines = []
    for fam in load_families():
        if fam.name != "conv_implicit_gemm":
            continue
        for cfg in fam.configs:
            for fl in cfg.flavors:
                if cfg.expectation(fl).kind != "ok":
                    continue
                pairs = [f"{k}={'' if v is None else v}" for k, v in cfg.spec.items()]
                lines.append("\t".join([cfg.arch, fl] + pairs))
    return "\n".join(lines) + "\n"


def _run(cmd, **kw) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))} failed (exit {r.returncode}): {r.stderr.strip()[-2000:]}")
    return r.stdout


def compile_driver(include_dir: Path, library: Path, out: Path) -> Path:
    """c_emit.c built against `library` (headers in `include_dir`), rpath set."""
    cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
    _run([cc, "-O2", "-std=c99", "-Wall", "-I", str(include_dir), str(SOURCE), str(library),
          f"-Wl,-rpath,{library.parent}", "-o", str(out)])
    return out


def current_engine() -> tuple:
    """(include dir, library) of the engine this checkout's binding loads."""
    from cpp_engine._ffi import libpath
    return Path(libpath.PREFIX) / "include", Path(libpath.LIBRARY)


def base_engine(ref: str) -> tuple:
    """(include dir, library) of `ref`'s engine, built once (Release, plain
    CMake) in a temporary detached worktree and installed into the cache."""
    sha = _run(["git", "-C", str(ROOT), "rev-parse", "--verify", ref + "^{commit}"]).strip()
    home = CACHE / f"bench-base-{sha}"
    prefix = home / "prefix"
    libs = sorted((prefix / "lib").glob("libcpp_engine.so*")) if (prefix / "lib").is_dir() else []
    if not libs:
        print(f"building the engine of {ref} ({sha[:12]}) into {home} (once)", flush=True)
        home.mkdir(parents=True, exist_ok=True)
        tree = Path(tempfile.mkdtemp(prefix="c_emit_base_"))
        try:
            _run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), sha])
            build = home / "build"
            _run(["cmake", "-S", str(tree), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                  "-DCMAKE_INSTALL_LIBDIR=lib"])
            _run(["cmake", "--build", str(build), "--target", "cpp_engine", "-j", "2"])
            _run(["cmake", "--install", str(build), "--prefix", str(prefix)])
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           capture_output=True)
            shutil.rmtree(tree, ignore_errors=True)
        libs = sorted((prefix / "lib").glob("libcpp_engine.so*"))
        if not libs:
            sys.exit(f"error: the build of {ref} installed no libcpp_engine.so under {prefix / 'lib'}")
    return prefix / "include", libs[0]


def run_once(exe: Path, units: Path, rounds: int) -> dict:
    m = _LINE.search(_run([str(exe), str(units), str(rounds)]))
    if not m:
        sys.exit(f"error: {exe} printed no figures line")
    b, k, rej, r, cpu, wall = m.groups()
    total = int(b) * int(r)
    return {"bytes": int(b), "kernels": int(k), "rejected": int(rej),
            "cpu_mb_s": total / float(cpu) / 1e6, "wall_mb_s": total / float(wall) / 1e6}


#: --callgrind counts every CALLGRIND_STRIDE-th unit (valgrind runs ~50x slower than native).
CALLGRIND_STRIDE = 14


def instructions_per_byte(exe: Path, units: Path) -> float | None:
    """Instructions inside cpe_conv_lower per byte of IR over every
    CALLGRIND_STRIDE-th unit (callgrind, rounds=1: the untimed pass and one
    round, so two passes); None without valgrind."""
    if not shutil.which("valgrind"):
        return None
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "cg.out"
        some = Path(d) / "units.tsv"
        lines = units.read_text(encoding="utf-8").splitlines()
        some.write_text("\n".join(lines[::CALLGRIND_STRIDE]) + "\n", encoding="utf-8")
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            "--collect-atstart=no", "--toggle-collect=cpe_conv_lower",
                            str(exe), str(some), "1"], capture_output=True, text=True)
        m = _LINE.search(r.stdout)
        tot = re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text() if out.exists() else "", re.M)
        if r.returncode != 0 or not m or not tot:
            return None
        return int(tot.group(1)) / (2 * int(m.group(1)))


_repeats = at_least_one("--repeats")
_rounds = at_least_one("--rounds")


def main(argv=None) -> int:
    p = Parser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=_repeats, default=5, help="runs per engine (median); default 5")
    p.add_argument("--rounds", type=_rounds, default=3, help="passes over the units per run; default 3")
    p.add_argument("--base", type=git_commit("--base"), default=BASE, help=f"git ref of the base engine (default {BASE}, issue 25's base)")
    p.add_argument("--no-base", action="store_true", help="measure the current engine only")
    p.add_argument("--callgrind", action="store_true", help="also count instructions per byte (valgrind)")
    a = p.parse_args(argv)

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        units = d / "units.tsv"
        units.write_text(units_text(), encoding="utf-8")
        engines = {"current": compile_driver(*current_engine(), d / "c_emit_current")}
        if not a.no_base:
            engines[f"base {a.base}"] = compile_driver(*base_engine(a.base), d / "c_emit_base")
        runs = {name: [] for name in engines}
        for _ in range(a.repeats):
            for name, exe in engines.items():
                runs[name].append(run_once(exe, units, a.rounds))
        med = {}
        for name, rs in runs.items():
            cpu = statistics.median(r["cpu_mb_s"] for r in rs)
            wall = statistics.median(r["wall_mb_s"] for r in rs)
            med[name] = cpu
            r0 = rs[0]
            rej = f", {r0['rejected']} rejected" if r0["rejected"] else ""
            print(f"{name}: {cpu:,.0f} MB/s of IR ({cpu / 1000:.2f} GB/s) per CPU-s, {wall:,.0f} MB/s per wall-s; "
                  f"{r0['kernels']} conv_implicit_gemm kernels{rej}, {r0['bytes'] / 1e6:.2f} MB a pass, "
                  f"median of {a.repeats} runs x {a.rounds} passes")
        cur = med["current"]
        verdict = "met" if cur >= GOAL_MB_S else "not met"
        print(f"goal >= {GOAL_MB_S / 1000:.0f} GB/s of IR from C: {cur / 1000:.2f} GB/s, {verdict}")
        if not a.no_base:
            print(f"ratio current / base {a.base}: {cur / med[f'base {a.base}']:.2f}x (same run, CPU time)")
        if a.callgrind:
            for name, exe in engines.items():
                ipb = instructions_per_byte(exe, units)
                print(f"{name}: " + (f"{ipb:.1f} instructions per byte of IR (callgrind, cpe_conv_lower inclusive, "
                                     f"every {CALLGRIND_STRIDE}th unit)"
                                     if ipb is not None else "instructions per byte unavailable (valgrind)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

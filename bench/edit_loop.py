"""The edit-to-verdict loop (issue 40, item 3): four figures, each against the
command the base offered, in one run, on scratch edits that are always undone.

    python bench/edit_loop.py [--repeats N] [--figures cpp,py,changed,write]

The figures (each the median of N runs; wall seconds and CPU seconds of every
process the command ran, children included, so a loaded machine's figure can
be read as the quiet one it stands for):

cpp      a one-line C++ edit (a statement added in the body of ``constants_int``,
         cpp_engine/src/kernels/ir_core.cpp; a new value each run, so ccache
         cannot serve it) to the verdict of ``parity check --changed`` (the
         editable install rebuilds the library on import); base: ``parity check``.
py       a one-line Python edit in a function every accepted config of a family
         runs (``_body`` of python_engine/kernels/conv_fwd_split_k_reduce.py: 183
         configs) to the verdict of ``parity check --changed``; base: ``parity check``.
changed  a one-line Python edit that one config runs (``_constants_int`` of
         python_engine/kernels/ir_core.py) to the verdict of ``parity check
         --changed``; base: ``parity check``.
write    an IR change of one config in both engines (``ir_core/constants_int``:
         its last store's pointer renamed, a new name each run) to ``parity write
         --changed`` against a scratch copy of golden/ (the oracles run on the
         one changed config); base: ``parity write``. The C++ library is
         rebuilt before each timed write (that is the cpp figure's part).

Goals (issue 40): cpp <= 5 s, py <= 2 s, changed < 1 s, write <= 10 s, quiet.
The machine load (1-minute average) is printed before and after. Bytecode
caching is on for the commands (PYTHONDONTWRITEBYTECODE is removed from their
environment), as on a developer's machine. The edit map (build/, recorded by
the first ``--changed`` run) is recorded before the timed runs.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.cli.common import Parser, at_least_one  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))
from scratch_edit import Scratch  # noqa: E402  (bench/scratch_edit.py)
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PY = ROOT / "python_engine/kernels/ir_core.py"
CPP = ROOT / "cpp_engine/src/kernels/ir_core.cpp"
GOALS = {"cpp": 5.0, "py": 2.0, "changed": 1.0, "write": 10.0}
PY_ANCHOR = "def _constants_int(b: IRBuilder, spec) -> None:\n"
RED = ROOT / "python_engine/kernels/conv_fwd_split_k_reduce.py"
RED_ANCHOR = "def _body(b: IRBuilder, spec: dict, wave: int) -> None:\n"
CPP_ANCHOR = "void constants_int(IRBuilder &b, const IrCoreSpec &) {\n"
PY_LAST = '    p = b.gep(T.I8, out, [i64(off)], "p")\n    b.store(const_float(T.DOUBLE, 0.1), p, 1)\n'
CPP_LAST = ('    const Value p = b.gep(i8(), out, {ci64(off)}, "p");\n'
            '    b.store(const_float(double_(), 0.1), p, 1);\n')


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run(*args: str) -> tuple[float, float, str]:
    """(wall s, CPU s of the command and its children, output) of ``parity ARGS``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "parity", *args], cwd=ROOT, capture_output=True, text=True, env=_env())
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        raise SystemExit(f"error: parity {' '.join(args)} exited {r.returncode}: {out.strip().splitlines()[-1:]}")
    return wall, cpu, out


def _insert(path: Path, anchor: str, line: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(anchor) == 1, f"{path}: the anchor of the bench edit is gone"
    path.write_text(text.replace(anchor, anchor + line), encoding="utf-8")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: the text of the bench edit is gone"
    path.write_text(text.replace(old, new), encoding="utf-8")


_n = [int(time.time()) % 100000]


def _next() -> int:
    _n[0] += 1
    return _n[0]


def edit_cpp() -> None:
    _insert(CPP, CPP_ANCHOR, f"    [[maybe_unused]] volatile int edit_loop_probe = {_next()};\n")


def edit_py() -> None:
    _insert(PY, PY_ANCHOR, f"    _edit_loop_probe = {_next()}  # noqa: F841\n")


def edit_family() -> None:
    _insert(RED, RED_ANCHOR, f"    _edit_loop_probe = {_next()}  # noqa: F841\n")


def edit_ir() -> None:
    n = _next()
    _replace(PY, PY_LAST, PY_LAST.replace('"p"', f'"pe{n}_"'))
    _replace(CPP, CPP_LAST, CPP_LAST.replace('"p"', f'"pe{n}_"'))


def _rebuild() -> None:
    subprocess.run([sys.executable, "-c", "import cpp_engine"], cwd=ROOT, check=True, env=_env())


def measure(edit, args: tuple, repeats: int, golden: bool = False, prebuild: bool = False) -> tuple:
    walls, cpus = [], []
    for _ in range(repeats):
        with Scratch(PY, CPP, RED), tempfile.TemporaryDirectory() as tmp:
            extra: tuple = ()
            if golden:
                shutil.copytree(ROOT / "golden", Path(tmp) / "g")
                extra = ("--golden-dir", str(Path(tmp) / "g"))
            edit()
            if prebuild:
                _rebuild()
            w, c, out = run(*args, *extra)
            walls.append(w)
            cpus.append(c)
    _rebuild()  # the restored sources built again, outside the timing
    return statistics.median(walls), statistics.median(cpus)


FIGURES = {  # name: (edit, new command, base command, golden copy, rebuild first)
    "cpp": (edit_cpp, ("check", "--changed"), ("check",), False, False),
    "py": (edit_family, ("check", "--changed"), ("check",), False, False),
    "changed": (edit_py, ("check", "--changed"), ("check",), False, False),
    "write": (edit_ir, ("write", "--changed"), ("write",), True, True),
}


def _figures(text: str) -> list:
    names = [f.strip() for f in text.split(",") if f.strip()]
    bad = [n for n in names if n not in FIGURES]
    if bad or not names:
        import argparse
        raise argparse.ArgumentTypeError(f"unknown figure {bad[0]!r} (known: {', '.join(FIGURES)})" if bad
                                         else "no figure named")
    return names


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main(argv=None) -> int:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=at_least_one("--repeats"), default=3, help="runs per figure and side (median); default 3")
    p.add_argument("--figures", type=_figures, default="cpp,py,changed,write",
                   help="which figures, comma-separated (default all four: cpp,py,changed,write)")
    a = p.parse_args(argv)
    names = a.figures
    print(f"edit loop: load {_load()} (1-minute average) at start, {os.cpu_count()} CPUs, {a.repeats} runs each")
    run("check", "--changed")  # records the edit map when it is missing (not timed)
    rows = []
    for n in names:
        edit, new, base, golden, pre = FIGURES[n]
        bw, bc = measure(edit, base, a.repeats, golden, pre)
        nw, nc = measure(edit, new, a.repeats, golden, pre)
        rows.append((n, " ".join(new), nw, nc, " ".join(base), bw, bc))
    print(f"{'figure':<8} {'command':<22} {'wall s':>7} {'cpu s':>6} | {'base command':<13} {'wall s':>7} "
          f"{'cpu s':>6} | {'wall ratio':>10} {'goal s':>6}")
    for n, new, nw, nc, base, bw, bc in rows:
        print(f"{n:<8} parity {new:<15} {nw:7.2f} {nc:6.2f} | parity {base:<6} {bw:7.2f} {bc:6.2f} | "
              f"{nw / bw:10.2f} {GOALS[n]:6.1f}")
    print(f"edit loop: load {_load()} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(run_quietly_on_broken_pipe(main))

"""What ``parity new-family`` adds beside the engines' skeleton (parity/app/new_family.py):
the family's numerics plan, and the run that must pass before it says done.

* :func:`render_plan`: ``parity/sim/plans/NAME.py`` of an IR family, a working plan of
  the skeleton kernel (one workgroup of ``threads`` lanes, both wave orders, the
  emulator's checks), with TODOs pointing at the ``--like`` family's plan.
* :func:`done_commands`: ``parity write --only NAME`` (the oracles, then the golden
  shard) and pytest on every family-sensitive test file (:func:`family_tests`:
  the files that iterate or compare the family registry, or take every config,
  family name or golden shard, found by scanning tests/, plus :data:`ALWAYS`). ``--no-tests`` prints them instead of running them.

Imports: the standard library only (the commands run in child processes, so the
engines rebuilt for the new family are the ones imported).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from string import Template

#: A test line that iterates, parametrizes over or compares a family list of the registry, or
#: takes every family's configs, names or golden shards (a new family joins those lists).
FAMILY_SENSITIVE = re.compile(r"(for .* in |parametrize\(|== |set\().*(\bFAMILIES\b|load_families\(|FAMILY_MODULES"
                              r"|registry\(\)|fuzz_families\(|families\(\)|\bPLANS\b)"
                              r"|accepted_configs\(\)[ \t]*$|family_names\(\)|\(ROOT / \"golden\"\)\.glob\(", re.M)
#: Family-sensitive without naming the registry: the twin files, the C++ include layers
#: and every public header in a C program, and the scaffold itself.
ALWAYS = ("tests/test_twins.py", "tests/test_include_layers.py", "tests/test_c_embed.py",
          "tests/test_new_family.py")


def family_tests(root: Path) -> list:
    """The family-sensitive test files of the checkout at ``root`` (relative paths, sorted)."""
    found = {str(p.relative_to(root)) for p in (root / "tests").glob("test_*.py")
             if FAMILY_SENSITIVE.search(p.read_text(encoding="utf-8"))}
    return sorted(found | {a for a in ALWAYS if (root / a).is_file()})


def done_commands(root: Path, name: str) -> list:
    """The commands (argv lists, run at ``root``) that must pass before the scaffold is done."""
    return [[sys.executable, "-m", "parity", "write", "--only", name],
            [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *family_tests(root)]]


def shown_command(argv: list) -> str:
    """``argv`` as a contributor types it (``python`` for this interpreter)."""
    return " ".join(["python" if i == 0 else a for i, a in enumerate(argv)])


def run_done(root: Path, name: str, run=subprocess.run) -> int:
    """Run :func:`done_commands` in order, output shown; 0 when all pass, else 1 after
    one line naming the command that failed (the files stay: fix and run it again)."""
    for argv in done_commands(root, name):
        print(f"running: {shown_command(argv)}", flush=True)
        rc = run(argv, cwd=root).returncode
        if rc:
            print(f"not done: `{shown_command(argv)}` failed (exit {rc}); the skeleton is written: "
                  f"fix it and run the command again", flush=True)
            return 1
    print(f"done: {name} is blessed and every family-sensitive test passes", flush=True)
    return 0


PLAN = Template('''\
"""The numerics plan of $name (parity/sim/plans/__init__.py), as written by
``parity new-family $name --like $like``: each config's kernel runs once on one
workgroup of ``threads`` lanes, in both wave orders, under the emulator's checks
(races, out-of-bounds accesses, divergent branches, poison, unsupported IR).

TODO($name): give the kernel its buffers and check them against a numpy reference
(the model: $model; docs/contributing.md, "4. Oracles"), with problems that take
every branch and select both ways (parity numerics --coverage --only $name).
"""
from __future__ import annotations

from parity.sim.cases import Case, Launch

TOLERANCE = "TODO($name): what the check compares and how close (skeleton: the kernel runs, no output yet)"


def cases(spec: dict, arch: str, lowerer) -> list:
    """One case per config: the ``$name`` kernel of ``spec`` on grid (1, 1, 1) with
    ``threads`` lanes and no arguments (the skeleton kernel takes none)."""
    kern = {"k": ("$name", spec, arch)}
    # TODO($name): the buffers (numpy arrays), the launch arguments
    # ({param: Buf("name") | int | float}) and a check returning problem strings.
    return [Case("one_workgroup", kern, {}, [Launch("k", (1, 1, 1), spec["threads"], {})], lambda bufs: [])]
''')


OPT_SAMPLE = ".ci/opt_sample.txt"


def opt_sample_edit(root: Path, name: str) -> dict:
    """``{OPT_SAMPLE: (old, new)}``: the CI opt lane's sample (docs/ci.md, numerics-opt)
    with ``NAME/defaults`` appended, or ``{}`` for a checkout without the file."""
    p = root / OPT_SAMPLE
    if not p.is_file():
        return {}
    old = p.read_text(encoding="utf-8")
    return {OPT_SAMPLE: (old, old + ("" if old.endswith("\n") or not old else "\n") + f"{name}/defaults\n")}


def render_plan(root: Path, name: str, like: str) -> str:
    """``parity/sim/plans/NAME.py`` of an IR family scaffolded ``--like`` ``like``."""
    model = f"parity/sim/plans/{like}.py" if (root / f"parity/sim/plans/{like}.py").is_file() \
        else "parity/sim/plans/ir_core.py"
    return PLAN.substitute(name=name, like=like, model=model)

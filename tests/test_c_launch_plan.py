"""The C API's structured launch plan (cpe_conv_launch_lower_plan) embedded from
C: for every conv_launch config of the gate at llvm23, a C program
(tests/c/launch_plan.c, built against the installed headers and library)
prints the plan's values, and they equal the Python engine's plan
(parity.launch.plan.LaunchPlan); a rejected spec gives the Python
engine's reason."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import cpp_engine
import python_engine
from parity.config import load_families
from parity.launch.plan import launch_plan

ROOT = Path(__file__).resolve().parents[1]
CC = shutil.which("cc") or shutil.which("gcc")
KINDS = {0: "value", 1: "buffer", 2: "unused", 3: "caller"}


@pytest.fixture(scope="module")
def plan_exe(tmp_path_factory):
    if CC is None:
        if os.environ.get("CI"):
            pytest.fail("CI must provide a C compiler (cc)")
        pytest.skip("no C compiler")
    prefix = Path(cpp_engine.cmake_prefix())
    lib = Path(cpp_engine.library_path())
    exe = tmp_path_factory.mktemp("c_plan") / "launch_plan"
    res = subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{prefix / 'include'}",
                          str(ROOT / "tests" / "c" / "launch_plan.c"), str(lib), f"-Wl,-rpath,{lib.parent}",
                          "-o", str(exe)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return exe


def _specs():
    """The conv_launch configs at llvm23 a flat C spec can carry (known fields,
    int or space-free str values; configs about unknown fields, None or wrong
    kinds are the binding's business, tests/test_conv_abi_launch.py)."""
    fields = {n for n, _ in python_engine.spec_fields("conv_launch")}
    fam = next(f for f in load_families() if f.name == "conv_launch")

    def flat(spec):
        return all(k in fields and ((type(v) is int and -2**63 <= v < 2**63) or
                                    (isinstance(v, str) and v.isprintable() and " " not in v))
                   for k, v in spec.items())
    return [(c.name, dict(c.spec)) for c in fam.configs if c.applies("llvm23") and flat(c.spec)]


def _line(spec: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in spec.items()) + "\n"


def _arg_value(kind: str, value: int, tensor):
    return {"value": value, "buffer": f"buffer {tensor}", "unused": "unused", "caller": "caller"}[kind]


def test_c_plan_equals_the_python_plan(plan_exe):
    specs = _specs()
    assert len(specs) >= 40
    res = subprocess.run([str(plan_exe)], input="".join(_line(s) for _, s in specs), capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    outs = [json.loads(ln) for ln in res.stdout.splitlines()]
    assert len(outs) == len(specs)
    admitted = 0
    variants = set()
    for (name, spec), c in zip(specs, outs):
        why = python_engine.validate("conv_launch", spec, "gfx1250", "llvm23")
        if why is not None:
            assert c == {"status": 1, "reason": why}, name
            continue
        admitted += 1
        assert c["status"] == 0, (name, c)
        p = launch_plan(spec, "gfx1250", "llvm23")
        variants.add(p.variant)
        assert (c["kernel"], c["variant"], c["degree"], c["ks"], c["ks_count"]) == \
            (p.kernel, p.variant, p.degree, p.ks, p.ks_count), name
        assert (tuple(c["grid"]), tuple(c["block"]), c["lds_bytes"], c["workspace_bytes"]) == \
            (p.grid, p.block, p.lds_bytes, p.workspace_bytes), name
        assert tuple(c["cluster"]) == (p.cluster or (0, 0, 0)), name
        assert bool(c["needs_stage2"]) == p.needs_stage2, name
        text = python_engine.lower("conv_launch", spec, "gfx1250", "llvm23").text
        data = [ln.split()[1] for ln in text.splitlines() if ln.startswith("data_slices ")]
        if data:
            assert c["data_slices"] == int(data[0]), name
        else:
            assert c["data_slices"] <= c["ks_count"], name
        for got, want in ((c["args"], p.args), (c["stage2_args"], p.stage2_args)):
            assert [a[0] for a in got] == list(want), name           # names in ABI order
            assert {a[0]: _arg_value(KINDS[a[1]], a[2], a[3]) for a in got} == want, name
    assert admitted >= 30
    assert variants == {"plain", "two_stage", "cluster"}


def test_c_plan_rejection_and_null_out(plan_exe):
    res = subprocess.run([str(plan_exe)], input="degree=0\nsplit_k=4 split_k_cluster=0 degree=4\n", capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    a, b = (json.loads(ln) for ln in res.stdout.splitlines())
    spec0 = {"degree": 0}
    assert a == {"status": 1, "reason": python_engine.validate("conv_launch", spec0, "gfx1250", "llvm23")}
    p = launch_plan({"split_k": 4, "split_k_cluster": 0, "degree": 4})
    assert b["status"] == 0 and b["needs_stage2"] == 1 and p.needs_stage2
    assert [x[0] for x in b["stage2_args"]] == list(p.stage2_args)

"""Embedding the C++ engine from C: the installed headers are plain C99, and the
example program in examples/c_embed builds against the installed CMake package
and library and prints the same bytes as the Python engine, also under a
comma-decimal locale."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import cpp_engine
import python_engine

ROOT = Path(__file__).resolve().parents[1]
CC = shutil.which("cc") or shutil.which("gcc")
CMAKE = shutil.which("cmake")


def _need(tool, name):
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide {name}")
        pytest.skip(f"{name} is not installed")


def test_every_header_is_strict_c99(tmp_path):
    _need(CC, "a C compiler (cc)")
    inc = Path(cpp_engine.cmake_prefix()) / "include"
    headers = sorted(p.name for p in (inc / "cpp_engine").glob("*.h"))
    assert "cpp_engine.h" in headers and "conv_implicit_gemm.h" in headers
    src = tmp_path / "all.c"
    src.write_text("".join(f"#include <cpp_engine/{h}>\n" for h in headers) + "int main(void) { return 0; }\n")
    res = subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{inc}",
                          "-c", str(src), "-o", str(tmp_path / "all.o")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


@pytest.fixture(scope="module")
def c_embed(tmp_path_factory):
    _need(CC, "a C compiler (cc)")
    _need(CMAKE, "cmake")
    build = tmp_path_factory.mktemp("c_embed")
    cfg = subprocess.run([CMAKE, "-S", str(ROOT / "examples" / "c_embed"), "-B", str(build),
                          f"-DCMAKE_PREFIX_PATH={cpp_engine.cmake_prefix()}"], capture_output=True, text=True)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    bld = subprocess.run([CMAKE, "--build", str(build)], capture_output=True, text=True)
    assert bld.returncode == 0, bld.stdout + bld.stderr
    return build / "c_embed"


@pytest.mark.parametrize("locale_env", [None, "de_DE.UTF-8"])
def test_c_example_prints_the_python_engines_bytes(c_embed, locale_env):
    env = dict(os.environ)
    if locale_env:
        env["LC_ALL"] = locale_env
    res = subprocess.run([str(c_embed)], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    want = python_engine.lower("ir_core", {"kernel": "lds_barrier", "threads": 256}, "gfx1250", "llvm23").text
    assert res.stdout == want
    assert "rejected: amdgpu-cluster-dims requires flavor llvm23" in res.stderr
    assert "null kernel -> status 1: kernel must be one of" in res.stderr
    # cpe_last_reason: the whole reason after one call with a 32-byte buffer
    reason = python_engine.validate("ir_core", {"kernel": "k" * 2048}, "gfx1250", "llvm23")
    assert f"long reason: {len(reason)} bytes, buffer held 31, whole ends ...{reason[-12:]}\n" in res.stderr

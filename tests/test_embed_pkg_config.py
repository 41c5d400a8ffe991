"""Embedding conventions of the C library (docs/cpp_engine.md, "pkg-config"):
the installed cpp_engine.pc resolves against the installed prefix (relocatable:
its prefix comes from ${pcfiledir}), `cc main.c $(pkg-config --cflags --libs
cpp_engine)` builds examples/c_embed against the editable install's prefix and
the program prints the Python engine's bytes with no RUNPATH at all; the
editable prefix holds the development link libcpp_engine.so, so `-L$P
-lcpp_engine` links; and the C API names a C caller's NULL arch or flavor as
NULL while Python callers still read the Python engine's 'None'.

scripts/check_install.sh covers the wheel's .pc, the CMake install (shared and
-DBUILD_SHARED_LIBS=OFF static) and the installed example's $ORIGIN RUNPATH."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

import cpp_engine
import python_engine
from cpp_engine._ffi import ffi, lib

ROOT = Path(__file__).resolve().parents[1]
MAIN_C = ROOT / "examples" / "c_embed" / "main.c"
CC = shutil.which("cc") or shutil.which("gcc")
PKG_CONFIG = shutil.which("pkg-config")
PREFIX = Path(cpp_engine.cmake_prefix())
SONAME = "libcpp_engine.so.0.1"
ARCHES = "gfx1250, gfx942, gfx950, gfx1100, gfx1201"
FLAVORS = "llvm20, llvm22, llvm23, llvm24"


def _need(tool, name):
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide {name} (scripts/bootstrap.sh installs it)")
        pytest.skip(f"{name} is not installed (scripts/bootstrap.sh installs it)")


def _editable() -> bool:
    """The editable install's prefix lives in the checkout's build/ (docs/cpp_engine.md)."""
    return (ROOT / "build") in PREFIX.parents


def _pkg_config(pc_dir: Path, *args: str) -> str:
    env = {**os.environ, "PKG_CONFIG_PATH": str(pc_dir)}
    env.pop("PKG_CONFIG_LIBDIR", None)
    res = subprocess.run([PKG_CONFIG, *args, "cpp_engine"], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def _runpaths(path: Path) -> list:
    with open(path, "rb") as f:
        dyn = ELFFile(f).get_section_by_name(".dynamic")
        return [t.runpath if t.entry.d_tag == "DT_RUNPATH" else t.rpath for t in dyn.iter_tags()
                if t.entry.d_tag in ("DT_RUNPATH", "DT_RPATH")]


def _want() -> str:
    return python_engine.lower("ir_core", {"kernel": "lds_barrier", "threads": 256}, "gfx1250", "llvm23").text


@pytest.fixture(scope="module")
def pc_dir():
    _need(PKG_CONFIG, "pkg-config")
    d = PREFIX / "lib" / "pkgconfig"
    assert (d / "cpp_engine.pc").is_file(), f"no cpp_engine.pc under {d}"
    return d


def test_pkg_config_names_the_installed_prefix(pc_dir):
    flags = _pkg_config(pc_dir, "--cflags", "--libs").split()
    inc = [Path(f[2:]) for f in flags if f.startswith("-I")]
    libdirs = [Path(f[2:]) for f in flags if f.startswith("-L")]
    assert len(inc) == 1 and inc[0].resolve() == (PREFIX / "include").resolve()
    assert (inc[0] / "cpp_engine" / "cpp_engine.h").is_file()
    assert len(libdirs) == 1 and libdirs[0].resolve() == PREFIX.resolve()
    assert _pkg_config(pc_dir, "--modversion") == cpp_engine.version()
    # the editable prefix links by name (it has libcpp_engine.so); a wheel names the file
    assert ("-lcpp_engine" if _editable() else f"-l:{SONAME}") in flags
    # what a --static link would add: the C++ runtime (GCC: -lstdc++)
    static = _pkg_config(pc_dir, "--libs", "--static").split()
    assert "-lstdc++" in static or "-lc++" in static


def test_pkg_config_file_is_relocatable(pc_dir, tmp_path):
    """A copy of the prefix's .pc, headers' dir and library: pkg-config points into the copy."""
    moved = tmp_path / "moved"
    shutil.copytree(pc_dir, moved / "lib" / "pkgconfig")
    flags = _pkg_config(moved / "lib" / "pkgconfig", "--cflags", "--libs").split()
    assert [Path(f[2:]).resolve() for f in flags if f[:2] in ("-I", "-L")] == [
        (moved / "include").resolve(), moved.resolve()]


@pytest.fixture(scope="module")
def pc_example(pc_dir, tmp_path_factory):
    """examples/c_embed/main.c built with cc and nothing but pkg-config's flags."""
    _need(CC, "a C compiler (cc)")
    out = tmp_path_factory.mktemp("c_embed_pc") / "c_embed"
    flags = _pkg_config(pc_dir, "--cflags", "--libs").split()
    res = subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-o", str(out), str(MAIN_C), *flags],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return out


def test_pkg_config_build_prints_the_python_engines_bytes(pc_example, pc_dir):
    libdir = _pkg_config(pc_dir, "--variable=libdir")
    res = subprocess.run([str(pc_example)], capture_output=True, text=True,
                         env={**os.environ, "LD_LIBRARY_PATH": libdir})
    assert res.returncode == 0, res.stderr
    assert res.stdout == _want()
    assert "rejected: amdgpu-cluster-dims requires flavor llvm23" in res.stderr


def test_pkg_config_build_has_no_runpath_into_the_build_tree(pc_example):
    assert _runpaths(pc_example) == []     # pkg-config adds no rpath: nothing points into build/


def test_installed_library_has_no_runpath():
    """The library needs only the C/C++ runtime: no search path of its own, none into build/."""
    lib_file = PREFIX / SONAME
    assert lib_file.is_file() and not lib_file.is_symlink()
    assert _runpaths(lib_file) == []


def test_editable_prefix_has_the_development_link(tmp_path):
    if not _editable():
        pytest.skip(f"not an editable install ({PREFIX}): a wheel holds no symlinks")
    _need(CC, "a C compiler (cc)")
    link = PREFIX / "libcpp_engine.so"
    assert link.is_symlink() and os.readlink(link) == SONAME
    out = tmp_path / "c_embed"
    res = subprocess.run([CC, "-std=c99", "-o", str(out), str(MAIN_C), f"-I{PREFIX / 'include'}", f"-L{PREFIX}",
                          "-lcpp_engine"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    with open(out, "rb") as f:
        needed = [t.needed for t in ELFFile(f).get_section_by_name(".dynamic").iter_tags()
                  if t.entry.d_tag == "DT_NEEDED"]
    assert SONAME in needed                # loads the soname, not the development link


def _c_reason(call) -> str:
    buf = ffi.new("char[]", 512)
    assert call(buf, 512) == lib.CPE_REJECTED
    return ffi.string(buf).decode()


def test_c_api_names_a_null_arch_or_flavor_null():
    spec = lib.cpe_ir_core_spec_default()
    spec.kernel = kernel = ffi.new("char[]", b"lds_barrier")  # noqa: F841 (kept alive for the call)
    spec.threads = 256
    p_spec = ffi.new("cpe_ir_core_spec *", spec)
    out = ffi.new("char **")
    count = ffi.new("int64_t *")
    canon = ffi.new("char[]", 64)
    assert _c_reason(lambda b, n: lib.cpe_ir_core_validate(p_spec, ffi.NULL, b"llvm23", b, n)) == \
        f"arch NULL is not one of {ARCHES}"
    assert _c_reason(lambda b, n: lib.cpe_ir_core_validate(p_spec, b"gfx1250", ffi.NULL, b, n)) == \
        f"flavor NULL is not one of {FLAVORS}"
    # flavor first, as for strings: an unknown flavor with a NULL arch names the flavor
    assert _c_reason(lambda b, n: lib.cpe_ir_core_validate(p_spec, ffi.NULL, b"llvm99", b, n)) == \
        f"flavor 'llvm99' is not one of {FLAVORS}"
    assert _c_reason(lambda b, n: lib.cpe_resolve_flavor(ffi.NULL, canon, 64, b, n)) == \
        f"flavor NULL is not one of {FLAVORS}"
    assert _c_reason(lambda b, n: lib.cpe_intrinsic_table_text(ffi.NULL, out, b, n)) == \
        f"flavor NULL is not one of {FLAVORS}"
    assert _c_reason(lambda b, n: lib.cpe_aot_jobs_text(ffi.NULL, out, count, b, n)) == \
        f"flavor NULL is not one of {FLAVORS}"


@pytest.mark.parametrize("engine", [python_engine, cpp_engine], ids=["python", "cpp"])
def test_python_callers_still_read_none(engine):
    with pytest.raises(engine.SpecRejected) as e:
        engine.lower("ir_core", {"kernel": "lds_barrier"}, None, "llvm23")
    assert str(e.value) == f"arch 'None' is not one of {ARCHES}"
    with pytest.raises(engine.SpecRejected) as e:
        engine.resolve_flavor(None)
    assert str(e.value) == f"flavor 'None' is not one of {FLAVORS}"

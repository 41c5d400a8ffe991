"""The editable rebuild is skipped when the recorded build inputs match (parity/base/stale.py
record_build / skip_unchanged_rebuild), and runs again after any edit of a build input."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from parity.base import stale

REPO = Path(__file__).resolve().parents[1]


class ScikitBuildRedirectingFinder:  # the name scikit-build-core's finder has
    def __init__(self, path):
        self.path = str(path)
        self.rebuild_flag = True

    def find_spec(self, *a, **k):
        return None


def _tree(tmp_path) -> Path:
    """A project root holding a copy of every C++ build input."""
    root = tmp_path / "root"
    for d in stale.DIGEST_DIRS + stale.BUILD_ONLY_DIRS:
        shutil.copytree(REPO / d, root / d)
    shutil.copy(REPO / "CMakeLists.txt", root / "CMakeLists.txt")
    return root


@pytest.fixture
def build(tmp_path, monkeypatch):
    """(project root, library, finder) with the finder on sys.meta_path."""
    root = _tree(tmp_path)
    (tmp_path / "build").mkdir()
    lib = tmp_path / "build" / "libcpp_engine.so.0.1"
    lib.write_bytes(b"\x7fELF library")
    finder = ScikitBuildRedirectingFinder(tmp_path / "build")
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    return root, lib, finder


def test_unchanged_inputs_switch_the_rebuild_off(build):
    root, lib, finder = build
    inputs = stale.build_inputs_digest(root)
    assert stale.skip_unchanged_rebuild(inputs) is False and finder.rebuild_flag is True  # no stamp yet
    assert stale.trusted_stamp(inputs) is None
    stale.record_build(inputs, str(lib), "0.1.0", "ab" * 32)
    assert stale.trusted_stamp(inputs)["digest"] == "ab" * 32
    stamp = Path(finder.path) / stale.STAMP_NAME
    assert stamp.is_file() and inputs in stamp.read_text()
    assert stale.skip_unchanged_rebuild(stale.build_inputs_digest(root)) is True
    assert finder.rebuild_flag is False


@pytest.mark.parametrize("edit", ["cpp_engine/src/ir/printer.cpp", "cpp_engine/include/cpp_engine/cpp_engine.h",
                                  "cpp_engine/cmake/source_digest.cmake", "CMakeLists.txt"])
def test_an_edited_build_input_rebuilds(build, edit):
    root, lib, finder = build
    stale.record_build(stale.build_inputs_digest(root), str(lib))
    with open(root / edit, "a", encoding="utf-8") as fh:
        fh.write("\n")  # a one-byte edit
    assert stale.skip_unchanged_rebuild(stale.build_inputs_digest(root)) is False
    assert finder.rebuild_flag is True


def test_a_replaced_library_or_a_broken_stamp_rebuilds(build):
    root, lib, finder = build
    inputs = stale.build_inputs_digest(root)
    stale.record_build(inputs, str(lib))
    lib.write_bytes(b"\x7fELF another library")  # installed by something else since the stamp
    assert stale.skip_unchanged_rebuild(inputs) is False and finder.rebuild_flag is True
    (Path(finder.path) / stale.STAMP_NAME).write_text("{not json")
    assert stale.skip_unchanged_rebuild(inputs) is False and finder.rebuild_flag is True
    stale.record_build(inputs, str(lib))
    stale.forget_build()
    assert not (Path(finder.path) / stale.STAMP_NAME).exists()
    assert stale.skip_unchanged_rebuild(inputs) is False


_CHECK = textwrap.dedent("""
    import sys
    from parity.base import stale
    print(stale.check_cpp_build())
""")

_PROVENANCE = textwrap.dedent("""
    import sys
    from parity.gate import provenance
    from parity.base import stale
    assert stale.check_cpp_build() is None
    print("cpp_engine" in sys.modules)
    print(provenance.engine_part("cpp"))
    import cpp_engine as C
    print(f"cpp_engine {C.version()} {C.library_path()} C++ sources sha256:{C.source_digest()[:12]}")
""")


def _editable_build_dir():
    finders = [f for f in sys.meta_path if type(f).__name__ == "ScikitBuildRedirectingFinder"]
    return getattr(finders[0], "path", None) if finders else None


@pytest.mark.skipif(_editable_build_dir() is None or shutil.which("cmake") is None,
                    reason="needs the editable install (scikit-build-core's redirecting finder) and cmake")
def test_parity_runs_cmake_only_when_the_stamp_does_not_match(tmp_path):
    """End to end in a fresh interpreter, with a `cmake` on PATH that logs each call
    and runs the real one: a matching stamp runs no cmake; a stamp of other build
    inputs (what any source edit makes it) runs cmake --build and --install."""
    real = shutil.which("cmake")
    spy = tmp_path / "bin" / "cmake"
    spy.parent.mkdir()
    log = tmp_path / "cmake.log"
    spy.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n')
    spy.chmod(0o755)
    env = dict(os.environ, PATH=f"{spy.parent}{os.pathsep}{os.environ['PATH']}")
    env.pop(stale.CHECKED_ENV, None)

    def check() -> list[str]:
        if log.exists():
            log.unlink()
        r = subprocess.run([sys.executable, "-c", _CHECK], cwd=REPO, env=env, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0 and r.stdout.strip() == "None", r.stdout + r.stderr
        return log.read_text().splitlines() if log.exists() else []

    check()  # rebuilds if needed and writes the stamp
    stamp = Path(_editable_build_dir()) / stale.STAMP_NAME
    assert stamp.is_file()
    assert check() == []  # unchanged inputs: no cmake at all
    r = subprocess.run([sys.executable, "-c", _PROVENANCE], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    loaded, recorded, real = r.stdout.splitlines()
    assert loaded == "False"  # the check trusted the stamp: no cffi, no library load
    assert recorded == real  # the provenance it prints is what the library says
    text = stamp.read_text()
    for _ in range(5):
        # the stamp of other sources; another test's parity process (an xdist worker) may write
        # the stamp back between the two steps (its check finds the library current): then again
        stamp.write_text(text.replace('"inputs": "', '"inputs": "0'))
        calls = check()
        if calls:
            break
    assert [c.split()[:2] for c in calls] == [["--build", "."], ["--install", "."]]
    assert stamp.read_text() == text  # written again for the sources on disk

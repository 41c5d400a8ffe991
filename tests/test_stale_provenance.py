"""Stale-build detection (parity/base/stale.py, cpe_source_digest) and the gate's provenance line."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import cpp_engine
from parity.base import stale
from parity.app.main import main as parity_main

REPO = Path(__file__).resolve().parents[1]


def _copy_sources(dst: Path) -> Path:
    for d in stale.DIGEST_DIRS:
        shutil.copytree(REPO / d, dst / d)
    shutil.copy(REPO / "CMakeLists.txt", dst / "CMakeLists.txt")
    return dst


def test_library_digest_matches_the_sources_it_was_built_from():
    built = cpp_engine.source_digest()
    assert re.fullmatch(r"[0-9a-f]{64}", built)
    assert built == stale.source_digest(REPO)
    assert stale.check_cpp_build() is None


def test_digest_covers_sources_headers_and_cmakelists():
    files = stale.digest_files(REPO)
    assert "CMakeLists.txt" in files
    assert "cpp_engine/include/cpp_engine/cpp_engine.h" in files
    assert "cpp_engine/src/kernels/conv_fwd_split_k_reduce.cpp" in files
    assert files == sorted(files) and not any(f.startswith("cpp_engine/cmake/") for f in files)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake (the C++ build needs it too)")
def test_cmake_script_and_python_compute_the_same_digest(tmp_path):
    root = _copy_sources(tmp_path / "tree")
    (root / "cpp_engine" / "src" / "new_file.h").write_text("// added\n")
    out = tmp_path / "digest.cpp"
    subprocess.run(["cmake", f"-DROOT={root}", f"-DOUT={out}", "-P",
                    str(REPO / "cpp_engine" / "cmake" / "source_digest.cmake")], check=True)
    m = re.search(r'return "([0-9a-f]{64})";', out.read_text())
    assert m and m.group(1) == stale.source_digest(root)
    assert m.group(1) != stale.source_digest(REPO)


def test_a_one_line_edit_makes_the_library_stale_in_one_line(tmp_path):
    root = _copy_sources(tmp_path / "tree")
    before = stale.source_digest(root)
    assert stale.stale_message(before, before, root) is None
    f = root / "cpp_engine" / "src" / "kernels" / "conv_fwd_split_k_reduce.cpp"
    f.write_text(f.read_text() + "// one more line\n")
    after = stale.source_digest(root)
    msg = stale.stale_message(before, after, root)
    assert msg is not None and "\n" not in msg
    assert f"built from C++ sources sha256:{before[:12]}" in msg and f"sha256:{after[:12]}" in msg
    assert msg.endswith("rebuild it: bash scripts/bootstrap.sh (reinstalls the editable package; the CMake build is incremental)")


def test_gate_stops_before_any_verdict_on_a_stale_library(monkeypatch, capsys):
    monkeypatch.setattr(stale, "check_cpp_build", lambda: "cpp_engine is stale: ...; rebuild it: X")
    rc = parity_main(["check", "--only", "ir_core"])
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""  # no provenance, no verdict
    assert err.strip().splitlines() == ["error: cpp_engine is stale: ...; rebuild it: X"]


def test_first_line_names_golden_dir_and_both_engines(capsys):
    rc = parity_main(["check", "--only", "ir_core", "--flavor", "llvm23"])
    out, _ = capsys.readouterr()
    assert rc == 0, out
    first = out.splitlines()[0]
    assert first.startswith(f"parity: golden {REPO / 'golden'} | python_engine ")
    assert f" {REPO / 'python_engine'} | cpp_engine {cpp_engine.version()} {cpp_engine.library_path()} " in first
    assert first.endswith(f"C++ sources sha256:{cpp_engine.source_digest()[:12]}")


def test_no_checkout_is_a_one_line_error_never_the_package_tree(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for cmd in (["check", "--only", "ir_core"], ["write", "--only", "ir_core"]):
        monkeypatch.delenv("CI", raising=False)
        rc = parity_main(cmd)
        out, err = capsys.readouterr()
        assert rc == 2 and out == ""
        assert err.strip().splitlines() == [
            f"error: no splitk-parity checkout at or above {tmp_path.resolve()} (looked for pyproject.toml "
            "and golden/); run inside a checkout or pass --golden-dir DIR"]
    # review and diff --base take the old IR from a git ref: --golden-dir cannot stand in for a
    # checkout (diff has no such option), so their line does not offer it
    for cmd, what in ((["review", "--list"], "parity review"),
                      (["diff", "--base", "HEAD", "--only", "ir_core"], "parity diff --base")):
        rc = parity_main(cmd)
        out, err = capsys.readouterr()
        assert rc == 2 and out == ""
        assert err.strip().splitlines() == [
            f"error: {what} needs a splitk-parity git checkout at or above {tmp_path.resolve()} (the old IR "
            "comes from a git ref of it); run it inside a checkout"]


def test_children_of_a_checked_process_skip_the_import_rebuild(monkeypatch):
    class ScikitBuildRedirectingFinder:  # the name scikit-build-core's finder has
        rebuild_flag = True

        def find_spec(self, *a, **k):
            return None

    f = ScikitBuildRedirectingFinder()
    monkeypatch.setattr("sys.meta_path", [f, *__import__("sys").meta_path])
    monkeypatch.delenv(stale.CHECKED_ENV, raising=False)
    assert stale.skip_import_rebuild() is False and f.rebuild_flag is True
    monkeypatch.setenv(stale.CHECKED_ENV, "1")
    assert stale.skip_import_rebuild() is True and f.rebuild_flag is False


def test_python_only_commands_do_not_need_the_cpp_build(monkeypatch, capsys):
    """Review finding: a C++ compile error must not stop `parity show` with the Python engine."""
    import parity.base.stale as S
    from parity.app.main import main as parity_main
    monkeypatch.setattr(S, "check_cpp_build", lambda: "cpp_engine: the C++ rebuild on import failed")
    assert parity_main(["show", "ir_core/casts"]) == 0
    assert "define amdgpu_kernel" in capsys.readouterr().out
    assert parity_main(["show", "ir_core/casts", "--engine", "cpp"]) == 2
    assert "rebuild on import failed" in capsys.readouterr().err

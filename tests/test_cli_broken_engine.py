"""A broken engine never takes the CLI or git down (issue 38 item 1, docs/cli.md "A broken engine").

The Python engine is broken in a copy of the tree (python_engine/, parity/, golden/,
pyproject.toml under tmp_path), run with the editable install's finder removed so the
copy's packages are the ones imported: the worktree is never edited. The C++ engine's
rebuild is replaced by the real compiler run on a broken copy of one engine source
(``g++ -fsyntax-only``), so the message is parsed from real compiler output.
"""
from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parity.base import engine_import as EI

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<<<<<<< HEAD"

#: Runs parity's main from the tree in the working directory (not the editable install's).
WRAPPER = """
import os, sys
sys.meta_path[:] = [f for f in sys.meta_path if "ScikitBuild" not in type(f).__name__]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity.app.main import main
raise SystemExit(main(sys.argv[1:]))
"""


def _ignore(_dir, names):
    return [n for n in names if n in ("__pycache__", ".pytest_cache")]


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the project's Python packages, golden/ and pyproject.toml."""
    t = tmp_path_factory.mktemp("broken") / "tree"
    t.mkdir()
    for d in ("python_engine", "parity", "golden"):
        shutil.copytree(ROOT / d, t / d, ignore=_ignore)
    shutil.copy(ROOT / "pyproject.toml", t / "pyproject.toml")
    (t / "run_parity.py").write_text(WRAPPER)
    return t


def _break(tree: Path, rel: str, line: int, text: str) -> tuple[Path, str]:
    """Insert ``text`` as line ``line`` of ``tree/rel``; returns the path and its old text."""
    p = tree / rel
    old = p.read_text()
    lines = old.splitlines(keepends=True)
    lines.insert(line - 1, text + "\n")
    p.write_text("".join(lines))
    return p, old


def _parity(tree: Path, *argv: str, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    return subprocess.run([sys.executable, str(tree / "run_parity.py"), *argv], cwd=cwd or tree, env=env,
                          capture_output=True, text=True, timeout=300, **kw)


@pytest.mark.parametrize("text,why", [(MARKER, "invalid syntax (conflict marker?)"),
                                      ("def broken(:", "invalid syntax")])
def test_python_engine_broken(tree, text, why):
    p, old = _break(tree, "python_engine/kernels/ir_core.py", 40, text)
    try:
        r = _parity(tree, "--help")
        assert r.returncode == 0, r.stderr
        assert "check" in r.stdout and "merge-golden" in r.stdout and "Traceback" not in r.stderr
        # a command whose module imports the engine is listed, with the reason once
        assert "unavailable now: python engine failed to import: python_engine/kernels/ir_core.py:40" in \
            " ".join(r.stdout.split())
        r = _parity(tree, "--version")
        assert r.returncode == 0 and "python engine failed to import" in r.stdout
        for argv in (["check"], ["check", "--only", "ir_core"], ["list"], ["fuzz", "--seconds", "1"]):
            r = _parity(tree, *argv)
            assert r.returncode == 2, (argv, r.stderr)
            assert r.stdout == ""
            assert r.stderr.splitlines() == [f"error: python engine failed to import: "
                                             f"python_engine/kernels/ir_core.py:40: {why}"], argv
        for argv in (["check", "--help"], ["merge-golden", "--help"], ["golden-textconv", "--help"]):
            assert _parity(tree, *argv).returncode == 0, argv
        shard = tree / "golden" / "ir_core.json"
        r = _parity(tree, "golden-textconv", str(shard))  # no git repository here: shown as text
        assert r.returncode == 0 and r.stdout.startswith("# parity golden-textconv")
    finally:
        p.write_text(old)


def test_merge_driver_and_git_log_with_a_conflict_marker(tree, tmp_path):
    """merge-golden merges and advises resolving the engine sources first; `git log -p` and
    `git diff` of golden/ exit 0 through the textconv while the engine holds a marker."""
    shutil.copytree(tree, tmp_path / "repo", ignore=_ignore)
    repo = tmp_path / "repo"
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    for other in (repo / "golden").glob("*.json"):  # one shard: the textconv lowers one family
        if other.name != "conv_abi.json":
            other.unlink()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitattributes").write_text("golden/*.json diff=parity-golden\n")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    cmd = f"{sys.executable} {repo / 'run_parity.py'} golden-textconv"
    subprocess.run([*git, "config", "diff.parity-golden.textconv", cmd], check=True)
    # one shard change committed, then the engine broken in the working tree
    shard = repo / "golden" / "conv_abi.json"
    base = shard.read_text()
    key = next(k for k, v in json.loads(base).items() if isinstance(v, dict) and "sha256" in v)

    def with_sha(digit: str) -> str:
        doc = json.loads(base)
        doc[key] = dict(doc[key], sha256=digit * 64)
        return json.dumps(doc, indent=1, sort_keys=True) + "\n"
    shard.write_text(with_sha("0"))
    subprocess.run([*git, "commit", "-qam", "change"], check=True)
    _break(repo, "python_engine/kernels/ir_core.py", 40, MARKER)
    r = subprocess.run([*git, "log", "-p", "--", "golden/"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"== {key} " in r.stdout  # the entry's header line from the textconv
    shard.write_text(with_sha("3"))  # a blob no commit holds: lowered with the working tree's (broken) engine
    r = subprocess.run([*git, "diff", "--", "golden/"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0
    assert "cannot be imported: python_engine/kernels/ir_core.py:40: invalid syntax" in r.stderr
    # the merge driver after a conflicting merge: one advice line, engine sources first
    o, a, b = (tmp_path / n for n in ("o.json", "a.json", "b.json"))
    o.write_text(base)
    a.write_text(with_sha("1"))
    b.write_text(with_sha("2"))
    r = _parity(repo, "merge-golden", str(o), str(a), str(b), "golden/conv_abi.json")
    assert r.returncode == 1, r.stderr
    [line] = r.stderr.splitlines()
    assert "resolve the engine sources first" in line
    assert line.index("resolve the engine sources first") < line.index("parity write --only conv_abi")


# -- the C++ engine -------------------------------------------------------------------------

def _compile_broken(tmp_path: Path, line: int, text: str):
    """A stand-in for the editable rebuild: g++ on a copy of cpp_engine/src/kernels/ir_core.cpp with
    ``text`` inserted at ``line``, its messages on fd 2 as ninja's are; raises CalledProcessError."""
    rel = "cpp_engine/src/kernels/ir_core.cpp"
    copy = tmp_path / rel
    copy.parent.mkdir(parents=True)
    _break_file(ROOT / rel, copy, line, text)
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")

    def fake_import(name):
        if name != "cpp_engine":
            return importlib.import_module(name)
        cmd = [cxx, "-std=c++17", "-fsyntax-only", f"-I{ROOT / 'cpp_engine/include'}", f"-I{ROOT / 'cpp_engine/src'}",
               f"-I{ROOT / 'cpp_engine/src/kernels'}", str(copy)]
        r = subprocess.run(cmd, cwd=tmp_path)  # stderr inherited: fd 2, as the rebuild's compiler
        raise subprocess.CalledProcessError(r.returncode or 1, ["cmake", "--build", "."])
    return fake_import


def _break_file(src: Path, dst: Path, line: int, text: str) -> None:
    lines = src.read_text().splitlines(keepends=True)
    lines.insert(line - 1, text + "\n")
    dst.write_text("".join(lines))


@pytest.mark.parametrize("text,why", [(MARKER, "version control conflict marker in file"),
                                      ("int broken = ;", "expected primary-expression")])
def test_cpp_engine_build_failure_is_one_line(tmp_path, monkeypatch, capfd, text, why):
    monkeypatch.setattr(EI, "ROOT", tmp_path)
    monkeypatch.setattr(EI, "_import", _compile_broken(tmp_path, 30, text))
    monkeypatch.delitem(sys.modules, "cpp_engine", raising=False)
    with pytest.raises(EI.EngineImportError) as info:
        EI.import_engine("cpp")
    msg = str(info.value)
    assert msg.startswith("cpp engine failed to build: cpp_engine/src/kernels/ir_core.cpp:30: "), msg
    assert why in msg and "\n" not in msg
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # the compiler's messages were captured, not shown


def test_cpp_engine_build_failure_stops_check_with_one_line(tmp_path, monkeypatch, capsys):
    """`parity check`: the preamble's C++ build check prints the one line and exits 2."""
    from parity.app.main import main
    from parity.base import stale
    monkeypatch.setattr(EI, "ROOT", tmp_path)
    monkeypatch.setattr(EI, "_import", _compile_broken(tmp_path, 30, MARKER))
    monkeypatch.delitem(sys.modules, "cpp_engine", raising=False)
    monkeypatch.setattr(stale, "skip_unchanged_rebuild", lambda inputs: False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.chdir(ROOT)
    assert main(["check", "--only", "ir_core"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == ["error: cpp engine failed to build: cpp_engine/src/kernels/ir_core.cpp:30: "
                                "version control conflict marker in file"]


def test_cpp_engine_load_failure_is_one_line(monkeypatch):
    def fake_import(name):
        raise OSError("cannot load library '/x/libcpp_engine.so': /x/libcpp_engine.so: undefined symbol: cpe_y")
    monkeypatch.setattr(EI, "_import", fake_import)
    monkeypatch.delitem(sys.modules, "cpp_engine", raising=False)
    with pytest.raises(EI.EngineImportError) as info:
        EI.import_engine("cpp")
    assert str(info.value) == ("cpp engine failed to load: cannot load library '/x/libcpp_engine.so': "
                               "/x/libcpp_engine.so: undefined symbol: cpe_y")


def test_build_error_parsing():
    log = ("[1/3] Building CXX object x.o\nFAILED: x.o\n"
           "../../cpp_engine/src/kernels/ir_core.cpp:12:5: error: 'foo' was not declared in this scope\n"
           "../../cpp_engine/src/kernels/ir_core.cpp:14:1: error: second\n")
    assert EI.build_error(log) == "cpp_engine/src/kernels/ir_core.cpp:12: 'foo' was not declared in this scope"
    assert EI.build_error("CMake Error at CMakeLists.txt:7 (add_library):\n") == "CMakeLists.txt:7: CMake error"
    assert EI.build_error("x.o: undefined reference to `cpe_x'\n") == "undefined reference to `cpe_x'"
    assert EI.build_error("all fine\n") is None


GLOB_NOTICE = ("-- GLOB mismatch!\nThe following files were added:\n  +/r/cpp_engine/include/cpp_engine/x.h\n"
               "-- GLOB mismatch!\nThe following files were added:\n  +/r/cpp_engine/src/api/x.cpp\n"
               "  +/r/cpp_engine/src/families/x.cpp\n-- GLOB mismatch!\nThe following files were removed:\n"
               "  -/r/cpp_engine/src/families/y.cpp\n")


def test_a_successful_rebuild_shows_its_output_without_cmakes_glob_notices(monkeypatch, capfd):
    # after `parity new-family`, the first command printed CMake's re-glob notice (15 lines
    # on stderr) before its results; the rest of a successful rebuild's output still shows
    def fake_import(name):
        os.write(2, ("note: kept\n" + GLOB_NOTICE + "warning: kept too\n").encode())
        return sys  # any module: the import succeeded
    monkeypatch.setattr(EI, "_import", fake_import)
    monkeypatch.delitem(sys.modules, "cpp_engine", raising=False)
    assert EI.import_engine("cpp") is sys
    out, err = capfd.readouterr()
    assert out == "" and err == "note: kept\nwarning: kept too\n"
    assert EI.without_glob_notices(GLOB_NOTICE) == ""

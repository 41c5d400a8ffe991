"""``parity new-family`` (parity/app/new_family.py, docs/contributing.md): the
skeleton it writes is registered and builds in both engines.

One module-scoped fixture copies the checkout (tracked files and new ones git
does not ignore) to a temporary directory, runs ``parity new-family demo_ir
--like ir_core`` and ``parity new-family demo_text --like conv_abi`` there,
builds the copy's C++ engine with CMake (the one slow step: about a minute and a
half on two cores when compiled from scratch; see :func:`_build_like_the_checkout`
for how a compiler cache makes it a few seconds) and runs the copy's own
python_engine, cpp_engine and parity in child processes: a ``sitecustomize``
shim on ``PYTHONPATH`` takes the editable install's redirecting finder out of
``sys.meta_path``, so the copy's packages are imported, and the copy's
``cpp_engine/_libpath.py`` points at the library built from the copy's sources
(the gate's stale-build check compares the two).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parity.app import new_family as NF
from parity.app import new_family_done as NFD

REPO = Path(__file__).resolve().parent.parent
CMAKE = shutil.which("cmake") or str(Path(sys.executable).parent / "cmake")
NINJA = shutil.which("ninja") or str(Path(sys.executable).parent / "ninja")
FAMILIES = {"demo_ir": "ir_core", "demo_text": "conv_abi"}

SHIM = '''\
import sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "ScikitBuildRedirectingFinder"]
'''


def _copy_checkout(dst: Path) -> Path:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                         check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, out):
        src = REPO / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    return dst


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


class Copy:
    """A scaffolded copy of the checkout with its own C++ build."""

    def __init__(self, root: Path, shim: Path):
        self.root = root
        self.env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONPATH")}
        self.env["PYTHONPATH"] = f"{shim}{os.pathsep}{root}"
        self.scaffold = {}

    def run(self, *args, check=False) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, *args], cwd=self.root, env=self.env, capture_output=True, text=True,
                           timeout=900)
        if check and r.returncode:
            raise AssertionError(f"{args} exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        return r

    def parity(self, *args, check=False) -> subprocess.CompletedProcess:
        return self.run("-m", "parity", *args, check=check)


def _build_like_the_checkout(root: Path) -> tuple:
    """``(build dir, CMake options, environment)`` for the copy's C++ build. With ccache (the
    checkout's editable build or the environment names it as the compiler launcher, and it is
    on PATH): the editable build's compilers, generator and Release flags, a build directory
    at the editable build's depth (``<copy>/build/<its name>``) and ``CCACHE_BASEDIR`` = the
    copy, so every translation unit the scaffold leaves alone has the command line the
    bootstrap compiled and is a cache hit (CI: .ci/run's cache, filled by the set-up lane;
    docs/ci.md). Without it: ``-O1`` in a plain build directory (the cheapest cold compile)."""
    caches = sorted(REPO.glob("build/*/CMakeCache.txt"))
    cache = caches[0].read_text() if caches else ""
    val = {}
    for line in cache.splitlines():   # NAME:TYPE=VALUE
        key, eq, v = line.partition("=")
        if eq and not line.startswith(("#", "//")):
            val[key.split(":")[0]] = v
    launcher = os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER") or val.get("CMAKE_CXX_COMPILER_LAUNCHER", "")
    if caches and Path(launcher).name == "ccache" and shutil.which(launcher):
        opts = [f"-DCMAKE_{lang}_COMPILER_LAUNCHER={launcher}" for lang in ("C", "CXX")]
        opts += [f"-D{k}={val[k]}" for k in ("CMAKE_C_COMPILER", "CMAKE_CXX_COMPILER") if Path(val.get(k, "")).exists()]
        if val.get("CMAKE_GENERATOR") == "Ninja" and Path(NINJA).exists():
            opts += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={NINJA}"]
        return root / "build" / caches[0].parent.name, opts, {"CCACHE_BASEDIR": str(root)}
    gen = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={NINJA}"] if Path(NINJA).exists() else []
    return root.parent / "build", [*gen, "-DCMAKE_CXX_FLAGS_RELEASE=-O1"], {}


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Copy:
    base = tmp_path_factory.mktemp("new_family")
    shim = base / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SHIM)
    c = Copy(_copy_checkout(base / "repo"), shim)
    for name, like in FAMILIES.items():
        c.scaffold[name] = c.parity("new-family", name, "--like", like, "--no-tests", check=True)
    build, opts, env = _build_like_the_checkout(c.root)
    prefix = base / "prefix"
    for cmd in ([CMAKE, "-S", str(c.root), "-B", str(build), *opts, "-DCMAKE_BUILD_TYPE=Release",
                 "-DCMAKE_INSTALL_LIBDIR=lib"],
                [CMAKE, "--build", str(build), "-j", "2"],
                [CMAKE, "--install", str(build), "--prefix", str(prefix)]):
        r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    lib = prefix / "lib" / "libcpp_engine.so.0.1"
    assert lib.exists(), sorted(p.name for p in (prefix / "lib").iterdir())
    (c.root / "cpp_engine" / "_libpath.py").write_text(
        f"LIBRARY = {str(lib)!r}\nPREFIX = {str(prefix)!r}\nVERSION = '0.1.0'\nSONAME = 'libcpp_engine.so.0.1'\n")
    return c


@pytest.fixture(scope="module")
def gate(copy):
    """``parity check`` before and after ``parity write`` of the two new families."""
    only = ",".join(FAMILIES)
    before = copy.parity("check", "--only", only)
    write = copy.parity("write", "--only", only)
    after = copy.parity("check", "--only", only)
    return before, write, after


def test_the_scaffold_writes_every_file_once_and_names_its_twin(copy):
    for name in FAMILIES:
        out = copy.scaffold[name].stdout
        written = [ln.split()[1] for ln in out.splitlines() if ln.startswith("  wrote  ")]
        edited = [ln.split()[1] for ln in out.splitlines() if ln.startswith("  edited ")]
        assert (len(written), len(edited)) == ((7, 4) if name == "demo_ir" else (6, 3)), out
        assert (".ci/opt_sample.txt" in edited) == (name == "demo_ir"), out
        assert ("parity/sim/plans/demo_ir.py" in written) == (name == "demo_ir"), out
        for rel in written:
            first = (copy.root / rel).read_text().splitlines()[0]
            assert "twin" in first.lower() or rel.startswith(("parity/configs/", "parity/sim/plans/")), f"{rel}: {first}"
        assert f"parity write --only {name}" in out and f"parity check --only {name}" in out
        assert "not run (--no-tests)" in out and "tests/test_family_registry.py" in out, out
    assert not list(copy.root.rglob("*.new-family-*.tmp"))


def test_both_engines_lower_the_placeholder_config_to_the_same_bytes(copy):
    code = """
import cpp_engine, python_engine
from parity.config import load_families
fams = {f.name: f for f in load_families()}
for name in ("demo_ir", "demo_text"):
    (cfg,) = fams[name].configs
    for flavor in ("llvm20", "llvm22", "llvm23"):
        a = python_engine.lower(name, dict(cfg.spec), cfg.arch, flavor)
        b = cpp_engine.lower(name, dict(cfg.spec), cfg.arch, flavor)
        assert (a.kernel, a.text) == (b.kernel, b.text), (name, flavor)
        print(name, flavor, a.kernel, len(a.text))
print(python_engine.__file__, cpp_engine.library_path())
"""
    r = copy.run("-c", code, check=True)
    assert str(copy.root) in r.stdout, r.stdout  # the copy's engines, not the checkout's
    assert "demo_ir llvm23 demo_ir_t256" in r.stdout and "demo_text llvm20 demo_text" in r.stdout


def test_check_reports_missing_then_write_blesses_and_check_is_green(gate):
    before, write, after = gate
    assert before.returncode == 1 and "MISSING" in before.stdout, before.stdout + before.stderr
    assert write.returncode == 0, write.stdout + write.stderr
    assert after.returncode == 0 and "RESULT: GREEN" in after.stdout, after.stdout + after.stderr
    for name in FAMILIES:
        assert f"golden {name}.json: clean" in after.stdout


def test_the_registry_completeness_test_passes_in_the_copy(copy, gate):
    # one file: serial (-n 0), not two xdist workers each importing both engines for it
    r = copy.run("-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "tests/test_family_registry.py")
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]


def test_the_include_layers_stay_clean(copy):
    copy.run("scripts/check_includes.py", str(copy.root / "cpp_engine" / "src"), check=True)


@pytest.mark.parametrize("args, says", [
    (["Bad_Name", "--like", "ir_core"], "is not a lowercase identifier"),
    (["two__underscores", "--like", "ir_core"], "is not a lowercase identifier"),
    (["demo_ir", "--like", "ir_core"], "exists"),
    (["ir_core", "--like", "conv_abi"], "exists"),
    (["common", "--like", "ir_core"], "exists"),            # python_engine/kernels/common.py
    (["reduce", "--like", "ir_core"], "clashes with the C identifier cpe_reduce"),
    (["output", "--like", "ir_core"], "clashes with the C identifier cpe_output"),
    (["family", "--like", "ir_core"], "clashes with the C identifier cpe_family_count"),
    (["delete", "--like", "ir_core"], "reserved"),
    (["fresh", "--like", "nope"], "--like 'nope' is not a family"),
])
def test_refusals_are_one_error_line_and_write_nothing(copy, args, says):
    before = _tree_digest(copy.root)
    r = copy.parity("new-family", *args)
    assert r.returncode == 2 and r.stdout == "", r.stdout + r.stderr
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1 and says in r.stderr, r.stderr
    assert _tree_digest(copy.root) == before


def test_a_failure_half_way_leaves_the_tree_as_it_was(tmp_path, monkeypatch):
    root = _copy_checkout(tmp_path / "repo")
    before = _tree_digest(root)
    p = NF.plan(root, "half_way", "ir_core")
    real, calls = os.replace, []

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 5:
            raise OSError("disk full")
        real(src, dst)
    monkeypatch.setattr(NF.os, "replace", flaky)
    with pytest.raises(OSError, match="disk full"):
        NF.write(root, p)
    assert len(calls) == 5
    assert _tree_digest(root) == before


def test_a_template_whose_fields_cannot_build_gives_the_minimal_spec(tmp_path):
    root = _copy_checkout(tmp_path / "repo")
    ir = NF.plan(root, "tiny", "conv_implicit_gemm")  # an IR family without a `threads` field
    assert (ir.kind, ir.fields) == ("ir", NF.MINIMAL_FIELDS) and "threads" in ir.note
    text = NF.plan(root, "tiny", "conv_launch")  # a text family: any int/str fields will do
    assert text.kind == "text" and text.note == "" and len(text.fields) == 30
    assert 'OUTPUT = "text"' in text.new["parity/configs/tiny.py"]
    assert "NUMERICS_OPT_OUT" not in ir.new["parity/configs/tiny.py"]  # an IR family gets a plan instead
    plan = ir.new["parity/sim/plans/tiny.py"]
    assert "model: parity/sim/plans/conv_implicit_gemm.py" in plan and 'TOLERANCE = "TODO(tiny)' in plan
    assert "parity/sim/plans/tiny.py" not in text.new and "NUMERICS_OPT_OUT" in text.new["parity/configs/tiny.py"]


def test_the_skeleton_plan_runs_in_the_numerics_oracle(copy, gate):
    r = copy.parity("numerics", "--only", "demo_ir", "-v")
    assert r.returncode == 0 and "PASS demo_ir/defaults: 1 cases, 1 launches" in r.stdout, r.stdout + r.stderr


def test_done_runs_write_then_every_family_sensitive_test(tmp_path, monkeypatch, capsys):
    tests = NFD.family_tests(REPO)
    for f in ("tests/test_family_registry.py", "tests/test_fuzz.py", "tests/test_twins.py",
              "tests/test_new_family.py", "tests/test_determinism.py", "tests/test_sim_plans.py",
              # every config's cost order, every family's name and shard (issue 33's toy family trial)
              "tests/test_sim_schedule.py", "tests/test_completion.py", "tests/test_precommit.py"):
        assert f in tests, tests
    assert "tests/test_sim_shadow.py" not in tests  # names no family list
    assert "tests/test_mutate_new_kinds.py" not in tests  # looks one config up in accepted_configs()
    ran = []

    class Done:
        def __init__(self, rc):
            self.returncode = rc

    assert NFD.run_done(REPO, "toy", run=lambda argv, cwd: ran.append(argv) or Done(0)) == 0
    assert [a[1:6] for a in ran] == [["-m", "parity", "write", "--only", "toy"], ["-m", "pytest", "-q", "-n", "0"]]
    assert ran[1][-len(tests):] == tests and capsys.readouterr().out.endswith("every family-sensitive test passes\n")
    ran.clear()
    assert NFD.run_done(REPO, "toy", run=lambda argv, cwd: ran.append(argv) or Done(3)) == 1
    assert len(ran) == 1 and "not done: `python -m parity write --only toy` failed (exit 3)" in capsys.readouterr().out


def test_the_report_counts_an_entry_added_inside_a_line():
    # registry.py's FAMILY_MODULES gains an entry on an existing line: +1 -1, not "+0 lines"
    assert NF._line_delta("a = (x, y)\n", "a = (x, y, z)\n") == "+1 -1 lines"
    assert NF._line_delta("a\nb\n", "a\nnew\nb\n") == "+1 -0 lines"
    assert NF._line_delta("a\nb\n", "a\nb\n") == "+0 -0 lines"

"""The layer rule of DESIGN.md section 1 (docs/architecture.md): no circle of
modules, and the engines import nothing from parity or each other.

An AST scan of every module under python_engine/, cpp_engine/ and parity/:
module-level and function-local imports, relative imports resolved, and
``from pkg import submodule`` counted as an import of the submodule. The
layer contracts and the package-level circle check are import-linter's (``lint-imports``, the
``[tool.importlinter]`` table of pyproject.toml); the last test shows that
both this scan and lint-imports catch a planted back-arrow.
"""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("python_engine", "cpp_engine", "parity", "spec_front")
#: Modules the build writes (not in the source tree): cpp_engine/_libpath.py (the CMake install, .gitignore).
GENERATED = ("cpp_engine._libpath",)


def module_files(root: Path) -> dict[str, Path]:
    """{dotted module name: file} of every .py under the project's packages."""
    out = {}
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            if "__pycache__" in parts or any(p.startswith(".") for p in parts):
                continue
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    return out


def imports_of(name: str, path: Path, known: set[str]) -> dict[str, int]:
    """{imported project module: first line} of one module (any depth of the tree)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                found.append((sub if sub in known else mod, node.lineno))
    out: dict[str, int] = {}
    for target, line in found:
        while target and target not in known:  # a.b.name -> a.b (the module holding the name)
            target = target.rpartition(".")[0]
        if target and target != name:
            out.setdefault(target, line)
    return out


def import_graph(root: Path) -> dict[str, dict[str, int]]:
    files = module_files(root)
    known = set(files) | set(GENERATED)
    return {m: imports_of(m, f, known) for m, f in files.items()}


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def describe(graph, comp: list[str]) -> str:
    inside = set(comp)
    edges = [f"{m} -> {t} (line {graph[m][t]})" for m in comp for t in sorted(graph[m]) if t in inside]
    return f"circle of {len(comp)} modules: {', '.join(comp)}\n    " + "\n    ".join(edges)


def cycle_report(graph) -> str:
    return "\n".join(describe(graph, c) for c in cycles(graph))


@pytest.fixture(scope="module")
def graph():
    return import_graph(ROOT)


def test_scan_sees_every_kind_of_import(graph):
    # module level, function local, relative, and `from pkg import submodule`
    assert "parity.gate.fuzz_check" in graph["parity.gate.worker"]
    assert "parity.runtime.manifest" in graph["parity.runtime.codeobj"]
    assert "parity.runtime.cli" in graph["parity.app.main"]            # local: `parity run` only
    assert "python_engine.api" in graph["python_engine"]          # `from .api import ...`
    assert "parity.mutate.run" in graph["parity.mutate.cli"]      # `from parity.mutate import run as R`


def test_no_circle(graph):
    report = cycle_report(graph)
    assert not report, "import circles (move the shared piece down into a module both import):\n" + report


def test_engines_import_no_parity_and_not_each_other(graph):
    bad = [f"{m} -> {t} (line {line})" for m, ts in graph.items() for t, line in ts.items()
           if (m.startswith("python_engine") and t.split(".")[0] in ("parity", "cpp_engine"))
           or (m.startswith("cpp_engine") and t.split(".")[0] in ("parity", "python_engine"))
           or (m.startswith("spec_front") and t.split(".")[0] != "spec_front")]
    assert not bad, ("the engines must not import parity or each other, spec_front nothing of the project:\n"
                     + "\n".join(bad))


def _copy_tree(dst: Path) -> None:
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, dst / pkg, ignore=shutil.ignore_patterns(
            "__pycache__", "src", "include", "cmake", "*.so*"))
    shutil.copy(ROOT / "pyproject.toml", dst / "pyproject.toml")


def _lint_imports(tree: Path) -> subprocess.CompletedProcess:
    exe = Path(sysconfig.get_path("scripts")) / "lint-imports"
    if not exe.exists():
        exe = shutil.which("lint-imports")
    if not exe:
        pytest.skip("lint-imports is not installed (pip install -e '.[test]')")
    # the copy, not the editable install, on the path: grimp finds packages by import spec
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONSAFEPATH": "1"}
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "[sys.meta_path.remove(f) for f in list(sys.meta_path) if 'Redirecting' in type(f).__name__];"
            "from importlinter.cli import lint_imports_command; sys.argv = ['lint-imports', '--no-cache'];"
            "lint_imports_command()")
    return subprocess.run([sys.executable, "-c", code, str(tree)], cwd=tree, env=env, capture_output=True,
                          text=True, timeout=300)


def test_lint_imports_passes_on_the_checkout(tmp_path):
    _copy_tree(tmp_path)
    r = _lint_imports(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "BROKEN" not in r.stdout and "0 broken" in r.stdout


@pytest.mark.parametrize("plant", ["layer back-arrow", "parity circle", "deep parity import", "parity layer back-arrow"])
def test_a_planted_back_arrow_fails(tmp_path, plant):
    _copy_tree(tmp_path)
    if plant == "layer back-arrow":  # the bottom layer importing a kernel that imports it
        fields = tmp_path / "python_engine/spec/fields.py"
        fields.write_text(fields.read_text(encoding="utf-8")
                          + "\n\ndef planted():\n    from python_engine.kernels import conv_launch\n    return conv_launch\n")
        expect_cycle, expect_contract = True, "python_engine layers"
    elif plant == "parity circle":  # two parity modules importing each other, one of them function-locally
        (tmp_path / "parity/planted_a.py").write_text("from parity import planted_b\n")
        (tmp_path / "parity/planted_b.py").write_text("def f():\n    from . import planted_a\n    return planted_a\n")
        expect_cycle, expect_contract = True, "no circle of modules"
    elif plant == "deep parity import":  # a new deep import, not in the contract's list of debt
        (tmp_path / "parity/planted.py").write_text("from python_engine.policy import split_k\n")
        expect_cycle, expect_contract = False, "parity reaches python_engine only through its public API"
    else:  # the bottom package reaching up into the golden workflow (no module circle: only the layers)
        suggest = tmp_path / "parity/base/suggest.py"
        suggest.write_text(suggest.read_text(encoding="utf-8")
                           + "\n\ndef planted():\n    from parity.golden import shards\n    return shards\n")
        expect_cycle, expect_contract = False, "parity layers"

    g = import_graph(tmp_path)
    planted = [c for c in cycles(g) if any("planted" in m or m == "python_engine.spec.fields" for m in c)]
    assert bool(planted) == expect_cycle, cycle_report(g)

    r = _lint_imports(tmp_path)
    assert r.returncode != 0, r.stdout + r.stderr
    assert re.search(r"Contracts: \d+ kept, [1-9]\d* broken", r.stdout), r.stdout + r.stderr
    broken = r.stdout.split("Broken contracts", 1)[1]
    assert expect_contract in " ".join(broken.split()), r.stdout

"""Name the twin (docs/architecture.md, "Twins"): a Python engine module and its
C++ twin share folder and file name, and each says in its first paragraph
which file is its twin (or that it has none, and why)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / "python_engine"
CPP = ROOT / "cpp_engine" / "src"
HEAD = 8  # the twin is named in a file's first paragraph (at most this many lines)
PY_ONLY = {"__main__.py": "the pointer to the parity commands", "api.py": "its twins are cpp_engine/src/api/*.cpp",
           "facts.py": "its twin is cpp_engine/facts.py (the same facts through the C API)"}


def _head(path: Path) -> str:
    """The first paragraph of the file's leading docstring or comment: lines up
    to the first blank (or bare ``//``) line, at most HEAD."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[:HEAD]:
        if not line.strip() or line.strip() == "//":
            break
        out.append(line)
    return "\n".join(out).lower()


def _py_modules() -> list:
    out = []
    for p in sorted(PY.rglob("*.py")):
        rel = p.relative_to(PY)
        if rel.as_posix() in PY_ONLY or rel.as_posix() == "__init__.py":
            continue
        if p.name == "__init__.py" and rel.parent.as_posix() in ("ir", "kernels", "policy", "targets", "spec",
                                                                 "families"):
            continue
        out.append(p)
    return out


@pytest.mark.parametrize("path", _py_modules(), ids=lambda p: p.relative_to(PY).as_posix())
def test_python_module_has_a_cpp_twin_and_names_it(path):
    rel = path.relative_to(PY)
    stem = rel.parent if path.name == "__init__.py" else rel.with_suffix("")
    twins = [CPP / f"{stem}.h", CPP / f"{stem}.cpp"]
    assert any(t.is_file() for t in twins), f"{rel}: no C++ twin {stem}.h/.cpp under cpp_engine/src"
    assert "twin" in _head(path) and f"cpp_engine/src/{stem.as_posix()}" in _head(path), \
        f"{rel}: its first paragraph does not name cpp_engine/src/{stem.as_posix()}"


@pytest.mark.parametrize("path", sorted(p for p in CPP.rglob("*") if p.suffix in (".h", ".cpp")),
                         ids=lambda p: p.relative_to(CPP).as_posix())
def test_cpp_file_names_its_python_twin(path):
    assert "twin" in _head(path), f"{path.relative_to(CPP)}: its first paragraph names no twin"

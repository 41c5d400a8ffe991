"""No source file over 800 lines in python_engine/, cpp_engine/src/ or parity/
(docs/architecture.md): a file that grows past it is split by phase or
concept, with the same file names in both engines."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 800
TREES = ("python_engine", "cpp_engine/src", "parity")
SOURCE = {".py", ".cpp", ".h", ".c"}


def test_no_source_file_over_the_limit():
    files = [p for t in TREES for p in (ROOT / t).rglob("*") if p.suffix in SOURCE and p.is_file()]
    assert len(files) > 100  # the trees are there
    long = sorted((len(p.read_text(encoding="utf-8").splitlines()), p.relative_to(ROOT).as_posix())
                  for p in files)
    over = [f"{path}: {n} lines" for n, path in long if n > LIMIT]
    assert not over, f"over {LIMIT} lines (split by phase, docs/architecture.md): " + "; ".join(over)

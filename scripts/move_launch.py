#!/usr/bin/env python3
"""Issue 33 item 2: the launch-ABI modules move below sim, into parity/launch/.

Run from a checkout's root: ``python scripts/move_launch.py [--rewrite-only]``.
Without the flag it moves the files (git mv) and splits the two pure pieces out of
runtime modules, then rewrites imports; with it, only the import rewrite is applied
(for re-applying to another branch's files after merging this move).
Old -> new module paths are MOVES (and the two names that left a module, NAMES).
"""
import re
import subprocess
import sys
from pathlib import Path

MOVES = {
    "parity.runtime.errors": "parity.launch.errors",
    "parity.runtime.plan": "parity.launch.plan",
    "parity.runtime.kernarg": "parity.launch.kernarg",
    "parity.runtime.cluster": "parity.launch.cluster",
    "parity.catalog.reduce_launch": "parity.launch.reduce_launch",
}
# names that moved out of a module that stays (the module re-imports them, so old
# imports keep working; the sim's imports are pointed at the new home)
NAMES = {
    ("parity.runtime.pipeline", "reduce_grid"): "parity.launch.stage2",
    ("parity.runtime.pipeline", "reduce_spec"): "parity.launch.stage2",
    ("parity.runtime.launch", "pack"): "parity.launch.kernarg",
}


def rewrite(text: str) -> str:
    """Every old dotted module path and file path in ``text`` replaced by the new one
    (``from parity.runtime import kernarg`` forms included)."""
    text = re.sub(r"^(\s*)from parity\.runtime import (errors|plan|kernarg|cluster)\b", r"\1from parity.launch import \2",
                  text, flags=re.M)
    text = re.sub(r"^(\s*)from parity\.catalog import reduce_launch\b", r"\1from parity.launch import reduce_launch",
                  text, flags=re.M)
    for old, new in MOVES.items():
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
        text = text.replace(old.replace(".", "/") + ".py", new.replace(".", "/") + ".py")
    return text


def rewrite_relative(path: Path, text: str) -> str:
    """In parity/runtime/*.py: ``from .errors`` etc. become absolute imports of parity.launch."""
    if path.parent.as_posix().endswith("parity/runtime"):
        for mod in ("errors", "plan", "kernarg", "cluster"):
            text = re.sub(rf"^from \.{mod} import", f"from parity.launch.{mod} import", text, flags=re.M)
    if path.parent.as_posix().endswith("parity/catalog"):
        text = re.sub(r"^from \.reduce_launch import", "from parity.launch.reduce_launch import", text, flags=re.M)
    return text


def main() -> None:
    rewrite_only = "--rewrite-only" in sys.argv
    if not rewrite_only:
        Path("parity/launch").mkdir(exist_ok=True)
        for old, new in MOVES.items():
            subprocess.run(["git", "mv", old.replace(".", "/") + ".py", new.replace(".", "/") + ".py"], check=True)
    files = [p for d in ("parity", "tests", "scripts", "docs", "python_engine", "cpp_engine")
             for p in Path(d).rglob("*") if p.suffix in (".py", ".md", ".toml") and p.is_file()]
    files += [Path("pyproject.toml"), Path("check_byte_identity.py")]
    for p in files:
        if not p.exists() or p.name == "move_launch.py" or p.name == "MOVE.md":
            continue
        s = p.read_text()
        t = rewrite_relative(p, rewrite(s))
        if p.parent.as_posix().endswith("parity/launch"):
            t = re.sub(r"^from \.errors import", "from parity.launch.errors import", t, flags=re.M)
        if t != s:
            p.write_text(t)


if __name__ == "__main__":
    main()

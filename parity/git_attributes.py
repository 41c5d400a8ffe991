"""The one writer of the project's .gitattributes lines for its git drivers.

``parity merge-golden --install`` and ``parity golden-textconv --install``
each register a driver in git's config and name it for ``golden/*.json`` in
.gitattributes; this module adds such a line once, keeping every other line.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["add_attribute_line"]


def add_attribute_line(root: Path, line: str) -> list[str]:
    """Append ``line`` to ``root/.gitattributes`` unless it is there already.

    Returns ``["added `LINE` to PATH"]`` when it wrote, ``[]`` otherwise.
    Raises OSError when the file cannot be read or written (the caller
    prints it as one error line)."""
    attrs = root / ".gitattributes"
    lines = attrs.read_text(encoding="utf-8").splitlines() if attrs.exists() else []
    if line in lines:
        return []
    attrs.write_text("\n".join(lines + [line]) + "\n", encoding="utf-8")
    return [f"added `{line}` to {attrs}"]

"""The one writer of the project's .gitattributes lines for its git drivers.

``parity merge-golden --install`` and ``parity golden-textconv --install``
each register a driver in git's config and name it for ``golden/*.json`` in
.gitattributes; this module adds such a line once, keeping every other line.
"""
from __future__ import annotations

import os
from pathlib import Path

from parity.base.escape import shown
from parity.base.input_files import InputFileError, read_bytes
from parity.base.outputs import write_bytes_atomic

#: A .gitattributes larger than this is not one we append to (the project's is a few lines).
MAX_ATTRIBUTES_BYTES = 1 << 20

__all__ = ["add_attribute_line", "LF_LINES", "pin_line_ends"]

#: The lines that keep golden shards and pending files LF on every checkout (core.autocrlf=true
#: included): gitattributes(5) ``text eol=lf``.
LF_LINES = ("golden/*.json text eol=lf", "golden/*.json.new text eol=lf")


def add_attribute_line(root: Path, line: str) -> list[str]:
    """Append ``line`` to ``root/.gitattributes`` unless it is there already.

    Returns ``["added `LINE` to PATH"]`` when it wrote, ``[]`` otherwise.
    Raises OSError when the file cannot be read or written (the caller
    prints it as one error line)."""
    attrs = root / ".gitattributes"
    try:  # a FIFO or device is an error, not a hang; the other lines are kept byte for byte
        data = read_bytes(attrs, ".gitattributes", MAX_ATTRIBUTES_BYTES) if os.path.lexists(attrs) else b""
    except InputFileError as exc:
        raise OSError(str(exc)) from None
    if line.encode("utf-8") in data.replace(b"\r\n", b"\n").split(b"\n"):
        return []
    sep = b"\n" if data and not data.endswith(b"\n") else b""
    write_bytes_atomic(attrs, data + sep + line.encode("utf-8") + b"\n", prefix=".gitattributes.")
    return [f"added `{line}` to {shown(attrs)}"]


def pin_line_ends(root: Path) -> list[str]:
    """Add :data:`LF_LINES` to ``root/.gitattributes`` (each once); what was done, as lines."""
    done: list[str] = []
    for line in LF_LINES:
        done += add_attribute_line(root, line)
    return done

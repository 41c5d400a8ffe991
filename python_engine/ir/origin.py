"""Origin recording: the divergence locator's debug mode (docs/gate.md,
"Finding the builder call behind a difference").
Twin: cpp_engine/src/ir/origin.{h,cpp}.

While recording is on for the calling thread, every IR builder records the
source location (file and line) of the builder call that made each
instruction and block (the caller's frame: the first frame outside
ir/builder.py), and :func:`python_engine.api.lower_origins` turns the printed
module into a table of one location per line (ir/printer.py
``line_origins``). Recording never changes a printed byte. It is off by
default; off, a builder stores nothing (one flag read per builder, one test
per instruction).
"""
from __future__ import annotations

import sys
import threading

_local = threading.local()
_ROOT = "python_engine/"


def recording() -> bool:
    """Whether the calling thread records origins (default False)."""
    return getattr(_local, "on", False)


def set_recording(on: bool) -> None:
    """Switch recording on or off for the calling thread."""
    _local.on = bool(on)


def text(filename: str | None, line: int) -> str:
    """``"python_engine/<path>.py:<line>"`` (the path from its last
    ``python_engine/``; the file as given when it has none); ``""`` for None."""
    if filename is None:
        return ""
    f = filename.replace("\\", "/")
    at = f.rfind("/" + _ROOT)
    return f"{f[at + 1:] if at >= 0 else f}:{line}"


def caller(skip_file: str) -> tuple:
    """``(filename, line)`` of the innermost frame of the calling thread whose
    file is not ``skip_file`` (the builder's own module), skipping this function's own frame."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename == skip_file:
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else (None, 0)

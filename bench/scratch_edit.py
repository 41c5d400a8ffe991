"""A scratch edit of tracked files for the edit-loop benches (bench/edit_loop.py,
bench/golden_loop.py): the files' exact bytes are saved on entry and written back
on exit, also when the bench fails or is interrupted."""
from __future__ import annotations

from pathlib import Path


class Scratch:
    """Edits files and restores their exact bytes on exit."""

    def __init__(self, *paths: Path):
        self.saved = {p: p.read_bytes() for p in paths}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p, data in self.saved.items():
            p.write_bytes(data)

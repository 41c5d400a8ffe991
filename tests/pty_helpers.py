"""Reading what a child process wrote to a pseudo-terminal (tests that need isatty true)."""
from __future__ import annotations

import os


def drain(master: int) -> bytes:
    """Every byte readable from the pty ``master`` until the child side closes
    (EOF, or EIO once the last slave descriptor is gone); ``master`` is left open."""
    chunks = []
    while True:
        try:
            b = os.read(master, 4096)
        except OSError:
            break
        if not b:
            break
        chunks.append(b)
    return b"".join(chunks)

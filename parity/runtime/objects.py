"""The value a code-object source gives (a linked, validated kernel) and the
IR identity it is keyed by; below both sources, the cache (codeobj.py) and the
AOT manifest (manifest.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class CodeObject:
    """A linked, validated code object of one kernel."""

    kernel: str
    arch: str
    flavor: str
    text_sha256: str
    data: bytes
    metadata: dict       # the kernel's entry of amdhsa.kernels (args, segment sizes, .cluster_dims)
    path: str | None = None

    @property
    def cluster_dims(self) -> tuple | None:
        """The kernel's required cluster shape (``.cluster_dims`` metadata), None when it has none."""
        c = self.metadata.get(".cluster_dims")
        if not c or tuple(c) in ((0, 0, 0), (1, 1, 1)):
            return None
        return tuple(int(v) for v in c)

    @property
    def group_segment_bytes(self) -> int:
        return int(self.metadata.get(".group_segment_fixed_size", 0))


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

"""The splitk-parity gate: byte identity of the two engines, golden shards, CLI.

See docs/gate.md.
"""

__all__ = ["CANONICAL_FLAVORS"]

from parity.config import CANONICAL_FLAVORS  # noqa: E402

"""The splitk-parity gate: byte identity of the two engines, golden shards, CLI.

See docs/gate.md.
"""

from parity import _early_sigint

_early_sigint.install()  # first thing: Ctrl-C while the CLI imports is one error line (issue 39)

__all__ = ["CANONICAL_FLAVORS"]

from parity.config import CANONICAL_FLAVORS  # noqa: E402

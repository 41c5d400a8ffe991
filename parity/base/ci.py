"""Whether the process runs under CI, decided as Jest (is-ci / ci-info) and insta decide it.

``CI`` unset, empty, ``0`` or ``false`` (any case, surrounding blanks ignored) is not CI;
any other value is. ``CI=false`` is how a developer says "not CI" in a shell that CI
tooling configured, so it must not refuse ``parity write``.
"""
from __future__ import annotations

import os

NOT_CI = ("", "0", "false")


def is_ci(environ=None) -> bool:
    """True when ``CI`` is set to anything but empty, ``0`` or ``false`` (case-insensitive)."""
    value = (os.environ if environ is None else environ).get("CI")
    return value is not None and value.strip().lower() not in NOT_CI

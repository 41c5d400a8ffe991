"""A comma-decimal locale for the locale-independence tests (bootstrap installs
de_DE.UTF-8): the printers must emit the same bytes under it (DESIGN section 2)."""
from __future__ import annotations

import locale
import os

import pytest

COMMA_LOCALES = ("de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8")


def comma_locale() -> str | None:
    """The first of COMMA_LOCALES this machine has, or None; the process's own
    LC_NUMERIC is left at "C"."""
    for name in COMMA_LOCALES:
        try:
            locale.setlocale(locale.LC_NUMERIC, name)
        except locale.Error:
            continue
        finally:
            locale.setlocale(locale.LC_NUMERIC, "C")
        return name
    return None


def comma_locale_or_skip() -> str:
    """:func:`comma_locale`, or fail under CI (.ci/run installs de_DE.UTF-8) /
    skip with the reason elsewhere."""
    loc = comma_locale()
    if loc is None:
        if os.environ.get("CI"):
            pytest.fail("CI must provide a comma-decimal locale (de_DE.UTF-8); .ci/run installs it")
        pytest.skip("no comma-decimal locale installed here (install locales and generate de_DE.UTF-8)")
    return loc

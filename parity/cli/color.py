"""Colour on or off for what the commands print (docs/cli.md, "Colour").

``--color=auto|always|never`` (on ``parity`` and on every subcommand; default
auto) decides: ``always`` and ``never`` are final (a command-line choice
overrides ``NO_COLOR``, as https://no-color.org asks); ``auto`` colours a
stream only when it is a terminal, ``TERM`` is not ``dumb`` and ``NO_COLOR`` is
unset or empty. Colour is ANSI SGR codes around a verdict word; the text
without them is the same bytes as uncoloured output.
"""
from __future__ import annotations

import os

CHOICES = ("auto", "always", "never")
GREEN, RED, YELLOW, BOLD = "32", "31", "33", "1"

_choice = "auto"


def set_choice(choice: str) -> None:
    """Set the process's --color choice; ValueError for anything but :data:`CHOICES`."""
    global _choice
    if choice not in CHOICES:
        raise ValueError(f"--color must be one of {', '.join(CHOICES)}, got {choice!r}")
    _choice = choice


def enabled(stream) -> bool:
    """Whether text written to ``stream`` (a file object) is coloured."""
    if _choice != "auto":
        return _choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def paint(text: str, code: str, stream) -> str:
    """``text`` in SGR ``code`` when colour is on for ``stream``, else ``text``."""
    return f"\x1b[{code}m{text}\x1b[0m" if enabled(stream) else text


def verdict(word: str, stream) -> str:
    """A verdict word (GREEN, RED, INCOMPLETE, ...) coloured by what it says."""
    code = GREEN if word == "GREEN" else YELLOW if word == "INCOMPLETE" else RED
    return paint(word, code, stream)

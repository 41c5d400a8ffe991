"""``parity mutate --match RE``: the planned sites whose honest IR line matches RE (docs/cli.md,
docs/sim.md "Mutation lane").

:func:`regex` is the option's argparse type (a compiled pattern; empty, not a pattern, or one
that matches the empty string: refused). :func:`matched` narrows a plan to the sites whose
honest line RE searches, under three rules, each one ``ValueError`` naming ``--match``:

* a pattern that matches every honest instruction line of the planned configs' kernels
  (``.``, ``\\b``, ``\\S``, ``' '``: each instruction line is indented and holds a word) is
  no filter: omit ``--match`` (the refusal of ``^`` at parse time only catches patterns
  matching the empty string);
* a pattern that matches no planned site's line selects nothing;
* the search (the guard and the sites together) must end within :data:`MATCH_SECONDS`
  of wall time: Python's ``re`` backtracks, so ``(.*)*!`` on an IR line runs for ever.
  SIGALRM in the main process ends it (another thread: no limit; Ctrl-C still works,
  the search checks for signals).
"""
from __future__ import annotations

import argparse
import re
import signal
import threading
from contextlib import contextmanager
from typing import Iterator

from parity.base.escape import shown

#: Wall seconds the ``--match`` search may take over a plan. The whole catalog at every site
#: (``--per-kind 0``) is about 10^5 distinct lines: well under a second with a plain pattern.
MATCH_SECONDS = 10.0


def regex(flag: str):
    """argparse type for ``flag``: a non-empty Python regular expression (compiled), refused with
    the compiler's reason. An empty one, or one matching the empty string (``^``, ``a*``), would
    match every line (omit the flag instead); that probe runs under :data:`MATCH_SECONDS` like
    the search (a pattern whose backtracking on ``""`` has no end is refused at that limit); a
    repetition count past the compiler's limit (``a{99999999999}``) raises OverflowError,
    not re.error: before, a traceback. argparse names the flag (``argument --match: ...``)."""
    def parse(text: str):
        if not text:
            raise argparse.ArgumentTypeError(f"empty (it would match every site; omit {flag} instead)")
        try:
            rx = re.compile(text)
        except (re.error, OverflowError, RecursionError) as e:
            raise argparse.ArgumentTypeError(f"not a regular expression ({e}): '{shown(text)}'")
        try:   # under the search's limit: '(?:$|^|\\Z)'*20 + '(?!)' backtracks 3^20 ways on ""
            with time_limit(MATCH_SECONDS):
                empty = rx.search("") is not None
        except MatchTimeout:
            raise argparse.ArgumentTypeError(f"'{shown(text)}' took more than the limit of {MATCH_SECONDS:g}s "
                                             f"to search the empty string (a nested or repeated alternative "
                                             f"backtracks without end; simplify the pattern)") from None
        if empty:   # '^', 'a*', '$': it matches every line, like an empty one
            raise argparse.ArgumentTypeError(f"'{shown(text)}' matches the empty string, so every site "
                                             f"(omit {flag} instead)")
        return rx
    return parse


def site_line(site, lines: list | None = None) -> str:
    """The honest IR line a planned :class:`parity.mutate.run.Site` changes (its key's line
    index), or the key's text for a site that is not a line (``launch_plan`` fields).
    ``lines``: ``site.original`` split at newlines, when the caller has it."""
    key = site.site
    i = key[0] if isinstance(key, tuple) and key and isinstance(key[0], int) else None
    if i is None:
        return str(key)
    lines = site.original.split("\n") if lines is None else lines
    return lines[i] if 0 <= i < len(lines) else str(key)


class MatchTimeout(Exception):
    """The ``--match`` search ran past its limit (raised by the SIGALRM handler)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`MatchTimeout` in the block after ``seconds`` of wall time (SIGALRM; in
    another thread than the main one, or without ``setitimer``, no limit)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum, frame):
        raise MatchTimeout()
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _instruction_lines(texts) -> set:
    """The distinct instruction lines (indented, not blank) of the kernel ``texts``."""
    return {ln for t in texts for ln in t.split("\n") if ln[:1] in (" ", "\t") and ln.strip()}


def matched(rx: re.Pattern, sites: list, per_kind: int = 0, seconds: float | None = None) -> list:
    """The ``sites`` (planned, at least one) whose honest line ``rx`` searches, in order;
    ``ValueError`` naming ``--match`` when ``rx`` matches every instruction line of their
    kernels, matches none of their lines, or the search takes more than ``seconds`` (default
    :data:`MATCH_SECONDS`)."""
    limit = MATCH_SECONDS if seconds is None else seconds
    split = {}   # the lines of each kernel text (one string shared by the sites of a config)
    for s in sites:
        if id(s.original) not in split:
            split[id(s.original)] = s.original.split("\n")
    keys = [site_line(s, split[id(s.original)]) for s in sites]
    body = _instruction_lines(s.original for s in {id(s.original): s for s in sites}.values())
    pat = shown(rx.pattern)
    try:
        with time_limit(limit):
            if body and all(rx.search(ln) for ln in body):
                raise ValueError(f"--match: /{pat}/ matches every honest instruction line of the {len(split)} "
                                 f"planned config(s), so every site (omit --match instead)")
            hit = {k: rx.search(k) is not None for k in set(keys)}
    except MatchTimeout:
        raise ValueError(f"--match: /{pat}/ took more than the limit of {limit:g}s to search the "
                         f"{len(set(keys) | body)} honest line(s) of the plan (a nested repeat such as "
                         f"'(.*)*' backtracks without end; simplify the pattern)") from None
    out = [s for s, k in zip(sites, keys) if hit[k]]
    if not out:
        sampled = f"; --per-kind {per_kind} samples sites, --per-kind 0 plans every one" if per_kind else ""
        raise ValueError(f"--match: /{pat}/ matches no honest line of the {len(sites)} planned "
                         f"site(s) (searched in each site's IR line, e.g. '%name[0-9]* = icmp'{sampled})")
    return out

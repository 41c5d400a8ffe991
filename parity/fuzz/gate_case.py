"""One case of ``parity fuzz --gate``: the kind of input (:class:`Kind`), the
scratch world it is set up in (:class:`Case`), and the hostile texts every
kind draws from (:data:`HOSTILE`). The kinds: parity/fuzz/gate_kinds*.py;
the runner: parity/fuzz/gate_run.py."""
from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

#: Texts that try to end a line and start a forged one. Every one carries
#: ``FORGED`` right after its break, so a forged output line starts with it.
HOSTILE = ("\nFORGED", "\rFORGED", "\r\nFORGED", "\u2028FORGED", "\u2029FORGED", "\x85FORGED", "\x1cFORGED",
           "\x1dFORGED", "\x1eFORGED", "\x0bFORGED", "\x0cFORGED", "\x1b[2K\rFORGED", "\udc80\nFORGED",
           "\x00\nFORGED", "\ud800\u2028FORGED", "\N{RIGHT-TO-LEFT OVERRIDE}\nFORGED")

#: The hostile texts a UTF-8 file can hold (a lone surrogate cannot be a shard's family).
HOSTILE_UTF8 = tuple(t for t in HOSTILE if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in t))

REFUSED = frozenset({2})
RED = frozenset({1})
GREEN = frozenset({0})


def fsname(text: str) -> bytes:
    """``text`` as one file-name component: bytes, ``/`` and NUL replaced by ``_``; a
    surrogate that is no escaped byte is written as its (invalid UTF-8) encoding."""
    try:
        raw = os.fsencode(text)
    except UnicodeEncodeError:
        raw = text.encode("utf-8", errors="surrogatepass")
    return raw.replace(b"/", b"_").replace(b"\0", b"_")


class SkipKind(Exception):
    """A kind this machine cannot set up (e.g. no tmpfs mount without root)."""


@dataclass
class Case:
    """A kind's scratch world: a fresh copy of the valid golden directory, and what the
    command runs with (``extra`` options, environment, working directory, OS conditions)."""

    world: object  # gate_run.World
    golden: Path
    rng: random.Random
    command: str
    extra: list = field(default_factory=list)
    raw: list | None = None  # the whole argv after `parity`, when a kind writes it itself
    env: dict = field(default_factory=dict)
    cwd: Path | None = None
    preexec: list = field(default_factory=list)
    cleanup: list = field(default_factory=list)
    fresh: bool = False  # run `python -m parity` (an encoding, a locale) instead of a fork
    golden_arg: bool = True
    sys_path: list = field(default_factory=list)  # prepended to the child's sys.path (config packages)
    common: list | None = None  # instead of the world's common options (another --configs)

    def __post_init__(self):
        if not self.env:
            self.env = self.world.env() if hasattr(self.world, "env") else dict(os.environ)
        if self.cwd is None:
            self.cwd = self.golden.parent

    @property
    def dir(self) -> Path:
        """The case's own scratch directory (holds ``golden/``)."""
        return self.golden.parent

    @property
    def shard(self) -> Path:
        return self.golden / "fam_a.json"

    def hostile(self) -> str:
        return self.rng.choice(HOSTILE)

    def hostile_utf8(self) -> str:
        """A hostile text that UTF-8 can carry (no lone surrogate): for a file name that
        must also be a valid shard's ``family`` field."""
        return self.rng.choice(HOSTILE_UTF8)

    def argv(self) -> list[str]:
        if self.raw is not None:
            return list(self.raw)
        w = self.world
        cmd = self.command
        if cmd in ("check", "write", "list"):
            argv = [cmd, *(self.common or w.common), *self.extra]
            if cmd != "list" and self.golden_arg:
                argv += ["--golden-dir", str(self.golden)]
            if cmd == "write":
                argv += ["--no-oracles"]  # the echo engine's text is not LLVM IR: no oracle applies
                if "--lock-timeout" not in self.extra:
                    argv += ["--lock-timeout", "2"]
            return argv
        if cmd == "show":
            return ["show", *self.extra, "--engine", w.engine, "--configs", w.package, "--timeout", "20"]
        if cmd == "diff":
            return ["diff", *self.extra, "--engines", f"{w.engine},{w.engine}", "--configs", w.package,
                    "--timeout", "20"]
        return [cmd, *self.extra]


@dataclass(frozen=True)
class Kind:
    """One kind of hostile input: ``make(case)`` sets it up; ``commands`` are tried in turn;
    ``expect`` the exit statuses the contract allows (per command, or one set for all);
    ``depends``: a branch whose fixes the kind needs (reported with its failures);
    ``post(case, status, stdout, stderr)``: what else must hold after the command (None,
    or the failure's detail: verdict BAD_STATE), e.g. no temp file after Ctrl-C, no
    entry lost by concurrent writers."""

    name: str
    group: str
    make: Callable[[Case], None]
    commands: tuple = ("check",)
    expect: object = REFUSED
    bound: float = 40.0
    depends: str = ""
    post: Callable | None = None

    def allowed(self, command: str) -> frozenset:
        if isinstance(self.expect, dict):
            return frozenset(self.expect[command])
        return frozenset(self.expect)

"""The terminal side of ``parity review``: single-key answers and a pager (as ``cargo insta review``).

On a terminal (stdin and stdout both ttys) a decision is one key press, read in
cbreak mode (termios/tty; the terminal's mode is restored on every exit path,
Ctrl-C included); without a terminal, or when termios is missing, a line is read
(the first character decides). A group longer than the screen is paged: its
header (id, entries, verdict) stays on the first lines of every page, the
status line says where you are; space/j/Enter page down, b/k page up.
"""
from __future__ import annotations

import os
import shutil
import sys

PAGE_DOWN, PAGE_UP = (" ", "j", "\r", "\n"), ("b", "k")


def line_reader(read=input):
    """``key(prompt) -> str``: a whole line, its first character (EOF: ``q``)."""
    def key(prompt: str) -> str:
        try:
            ans = read(prompt).strip().lower()
        except EOFError:
            return "q"
        return ans[:1] if ans else "\n"
    return key


def key_reader(stdin=None, stdout=None):
    """``key(prompt) -> str``: one key press in cbreak mode on a terminal; a line otherwise."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    try:
        import termios
        import tty
        fd = stdin.fileno()
        if not (os.isatty(fd) and stdout.isatty()):
            raise OSError("not a terminal")
        termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError, AttributeError):
        return line_reader()

    def key(prompt: str) -> str:
        old = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd)  # before the prompt: a key typed as soon as it shows is read, not line-buffered
            stdout.write(prompt)
            stdout.flush()
            ch = os.read(fd, 1).decode("utf-8", errors="replace")
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, old)
        if ch in ("", "\x04"):  # EOF / Ctrl-D
            ch = "q"
        if ch == "\x03":
            raise KeyboardInterrupt
        stdout.write((ch if ch.isprintable() else "") + "\n")
        return ch.lower()
    return key


def screen_rows(default: int = 24) -> int:
    """The terminal's rows (``LINES`` or the tty's size), at least 8."""
    return max(8, shutil.get_terminal_size((80, default)).lines)


def pages(head: list[str], body: list[str], rows: int) -> list[list[str]]:
    """The group split into screens of ``rows`` lines: ``head`` on each, then a slice of
    ``body``, a status line; one page (no status line) when everything fits."""
    if len(head) + len(body) + 1 <= rows:
        return [head + body]
    room = max(1, rows - len(head) - 2)
    out = []
    for start in range(0, len(body), room):
        chunk = body[start:start + room]
        out.append(head + chunk + [f"-- lines {start + 1}-{start + len(chunk)} of {len(body)}"
                                   f"{'' if start + room >= len(body) else '; space/j: more, b/k: back'} --"])
    return out

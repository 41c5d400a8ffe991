"""The one writer of the project's .gitattributes lines for its git drivers, and
of the drivers' git config.

``parity merge-golden --install`` and ``parity golden-textconv --install``
each register a driver in git's config and name it for ``golden/*.json`` in
.gitattributes; this module adds such a line once, keeping every other line,
and writes the driver's config where the checkout's own interpreter is meant:
a linked worktree (``git worktree add``) gets its own config (git-worktree(1),
``extensions.worktreeConfig``), so registering from a worktree's venv does not
repoint the main checkout's drivers at that venv.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from parity.base.escape import shown
from parity.base.input_files import InputFileError, read_bytes
from parity.base.outputs import write_bytes_atomic

#: A .gitattributes larger than this is not one we append to (the project's is a few lines).
MAX_ATTRIBUTES_BYTES = 1 << 20

__all__ = ["add_attribute_line", "LF_LINES", "pin_line_ends", "set_driver_config"]

#: The lines that keep golden shards and pending files LF on every checkout (core.autocrlf=true
#: included): gitattributes(5) ``text eol=lf``.
LF_LINES = ("golden/*.json text eol=lf", "golden/*.json.new text eol=lf")


def add_attribute_line(root: Path, line: str) -> list[str]:
    """Append ``line`` to ``root/.gitattributes`` unless it is there already.

    Returns ``["added `LINE` to PATH"]`` when it wrote, ``[]`` otherwise.
    Raises OSError when the file cannot be read or written (the caller
    prints it as one error line)."""
    attrs = root / ".gitattributes"
    try:  # a FIFO or device is an error, not a hang; the other lines are kept byte for byte
        data = read_bytes(attrs, ".gitattributes", MAX_ATTRIBUTES_BYTES) if os.path.lexists(attrs) else b""
    except InputFileError as exc:
        raise OSError(str(exc)) from None
    if line.encode("utf-8") in data.replace(b"\r\n", b"\n").split(b"\n"):
        return []
    sep = b"\n" if data and not data.endswith(b"\n") else b""
    write_bytes_atomic(attrs, data + sep + line.encode("utf-8") + b"\n", prefix=".gitattributes.")
    return [f"added `{line}` to {shown(attrs)}"]


def pin_line_ends(root: Path) -> list[str]:
    """Add :data:`LF_LINES` to ``root/.gitattributes`` (each once); what was done, as lines."""
    done: list[str] = []
    for line in LF_LINES:
        done += add_attribute_line(root, line)
    return done


def _git_out(root: Path, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if r.returncode:
        raise OSError(f"git {' '.join(args)}: {(r.stderr.strip().splitlines() or ['failed'])[-1]}")
    return r.stdout.strip()


def is_linked_worktree(root: Path) -> bool:
    """True when ``root`` is a linked worktree (its git dir is not the common git dir)."""
    git_dir = Path(_git_out(root, "rev-parse", "--absolute-git-dir"))
    common = Path(_git_out(root, "rev-parse", "--git-common-dir"))
    if not common.is_absolute():
        common = (root / common)
    return git_dir.resolve() != common.resolve()


def set_driver_config(root: Path, key: str, value: str) -> str:
    """``git config KEY VALUE`` for the checkout at ``root``: in a linked worktree with
    ``--worktree`` (``extensions.worktreeConfig`` switched on first), elsewhere in the
    repository's config. Returns where it went ("worktree" or "repository"); raises
    OSError naming the git command that failed."""
    if is_linked_worktree(root):
        _git_out(root, "config", "extensions.worktreeConfig", "true")
        _git_out(root, "config", "--worktree", key, value)
        return "worktree"
    _git_out(root, "config", key, value)
    return "repository"

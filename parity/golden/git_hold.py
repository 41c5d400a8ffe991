"""The golden lock held for the whole git command that ran the merge driver (issue 39).

git checks the work tree clean, runs ``parity merge-golden`` for each golden shard
both sides changed, and only after the driver has exited writes the result over the
work tree file itself (unlink, then create). A driver that takes the golden lock for
its own run only leaves a gap: a ``parity write`` waiting for the lock takes it the
moment the driver exits, replaces the shard, and git then writes the merge result over
that change (``parity fuzz --gate``'s concurrent_git_merge_write: 2 of 8 cases lost
``write``'s entries after the driver took the lock). So a driver run by git keeps the
lock until that git process has ended: it takes the lock (``flock`` on
``golden/.parity-golden.lock``, as filelock does in every other writer), merges, and
leaves the locked descriptor to a detached child that waits for git to end. Later
drivers of the same git command find :data:`MARK` naming their git and go ahead (the
lock is theirs already); any other writer waits, as for any lock holder.

Linux only (``/proc`` names the git ancestor); elsewhere the driver locks its own run.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path

from parity.base.escape import shown
from parity.golden import shards as G

#: Names the pid of the git command the lock is held for (removed when git has ended).
MARK = ".parity-golden.lock.git"
#: Longest a hand-off holds the lock (seconds): a git command waiting for an editor, or one
#: whose parent never reaps it, does not keep golden/ locked for longer.
MAX_HOLD = 3600.0


def _stat(pid: int) -> tuple[str, str, int] | None:
    """(comm, state, ppid) of ``pid`` from /proc, None when it is gone or there is no /proc."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    head, _, rest = text.rpartition(")")
    fields = rest.split()
    try:
        return head.partition("(")[2], fields[0], int(fields[1])
    except (IndexError, ValueError):
        return None


def git_ancestor() -> int | None:
    """The pid of the git process that ran this driver: the parent, or the parent of the
    ``sh -c`` git runs a driver command through. None when there is none (a driver run by
    hand) or no /proc."""
    pid = os.getppid()
    for _ in range(3):
        st = _stat(pid)
        if st is None:
            return None
        if st[0] == "git":
            return pid
        if st[2] <= 1:
            return None
        pid = st[2]
    return None


def _alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] not in ("Z", "X")


def held_for(golden_dir: Path, git_pid: int) -> bool:
    """True when an earlier driver of the git command ``git_pid`` holds the lock for it."""
    try:
        text = (Path(golden_dir) / MARK).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return False
    return text == str(git_pid) and _alive(git_pid)


def _hand_off(fd: int, golden_dir: Path, git_pid: int) -> None:
    """A detached child keeps ``fd`` (the locked descriptor) open until ``git_pid`` ends."""
    if os.fork() != 0:
        return
    try:  # the child: no terminal, no pipe of git's held open, only the lock
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            os.dup2(null, std)
        os.closerange(3, fd)
        os.closerange(fd + 1, 1 << 16)
        end = time.monotonic() + MAX_HOLD
        while _alive(git_pid) and time.monotonic() < end:
            time.sleep(0.02)
        mark = Path(golden_dir) / MARK
        try:
            if mark.read_text().strip() == str(git_pid):
                mark.unlink()
        except OSError:
            pass
    finally:
        os._exit(0)  # closing the last descriptor releases the lock


@contextmanager
def lock_for_git(golden_dir: Path, git_pid: int, timeout: float = G.LOCK_TIMEOUT):
    """Take the golden lock for the block; when the block ends normally keep it held until
    the git command ``git_pid`` has ended (:func:`_hand_off`); on an exception release it.
    GoldenError (one line naming the lock file) when it is still held after ``timeout``
    seconds or cannot be taken."""
    import fcntl

    path = Path(golden_dir) / G.LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise G.GoldenError(f"{shown(path)}: cannot take the golden lock: {exc.strerror or exc}; "
                            "nothing was written") from None
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise G.GoldenError(f"{shown(path)}: the golden lock is still held after {timeout:g} s (a "
                                    "`parity write` running?); nothing was written; merge again when it has "
                                    "finished") from None
            time.sleep(0.05)
    try:
        yield
        (Path(golden_dir) / MARK).write_text(f"{git_pid}\n")
        _hand_off(fd, golden_dir, git_pid)
    except BaseException:
        fcntl.flock(fd, fcntl.LOCK_UN)
        raise
    finally:
        os.close(fd)  # after a hand-off the child's descriptor keeps the lock

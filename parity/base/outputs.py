"""Command-line output helpers shared by ``emit``, ``run`` and the ``parity``
commands (issue 14): output directories checked up front, file names checked
against the file system's limit before anything is written, and a closed
stdout pipe (``| head``) that ends the printing quietly without stopping the
work."""
from __future__ import annotations

import errno
import os
from pathlib import Path
import signal
import stat
import sys
import tempfile
import threading


class OutputError(ValueError):
    """An output path that cannot be used; ``str()`` is one line naming it."""

def ensure_dir(path: str, what: str) -> str:
    """Create directory ``path`` if needed and check it is a writable
    directory; OutputError (``what`` names the option, e.g. ``--out``)."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise OutputError(f"{what} {path}: exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{what} {path}: cannot create the directory: {e.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {path}: the directory is not writable")
    return path


def check_dir_to_be(path: str, what: str) -> str:
    """Check, without creating it, that directory ``path`` can be made or reused later
    (a run that writes into it only on a finding, like ``parity fuzz --out``): it is a
    writable directory, or it does not exist and its nearest existing ancestor is one.
    OutputError naming ``what`` otherwise (checked before the run, not at its end)."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise OutputError(f"{what} {path}: exists and is not a directory")
    up = os.path.abspath(path)
    while not os.path.lexists(up):
        up = os.path.dirname(up)
    if not os.path.isdir(up):
        raise OutputError(f"{what} {path}: {up} is not a directory")
    if not os.access(up, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {path}: {up} is not writable")
    return path


def name_max(directory: str) -> int:
    """The longest file name (bytes) the file system of ``directory`` allows
    (``pathconf PC_NAME_MAX``; 255 when it cannot say)."""
    try:
        n = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        n = -1
    return n if n and n > 0 else 255


def check_file_names(directory: str, names, what: str) -> None:
    """OutputError when a file name in ``names`` (plus a 16-byte margin for
    the temp-file prefix/suffix) is longer than the file system allows."""
    limit = name_max(directory)
    for n in names:
        size = len(os.fsencode(n))
        if size + 16 > limit:
            raise OutputError(f"{what}: file name {n[:40]}... is {size} bytes; the file system allows "
                              f"{limit} (less 16 for the temp file); use a shorter name")


def write_bytes_atomic(path, data: bytes, prefix: str | None = None, suffix: str = ".tmp",
                       fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically: a uniquely named temp file in
    the same directory (``prefix`` + random + ``suffix``; default prefix
    ``.<name>.``), fsync'd (not with ``fsync=False``: the compile cache, whose
    entries carry their own checksum), mode 0644, then ``os.replace``. A failure (or a
    kill) never leaves a half-written ``path``; the temp file is removed on
    any exception."""
    d, base = os.path.split(os.fspath(path))
    fd, tmp = tempfile.mkstemp(prefix=prefix if prefix is not None else f".{base}.", suffix=suffix,
                               dir=d or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def written_in_place(path) -> bool:
    """``path`` is written in place, never replaced by a rename: an existing file that is
    not a regular one (a device, a FIFO), or any path under /dev or /proc (``/dev/stdout``
    and ``/dev/fd/N`` name the caller's descriptor, whatever it is open on)."""
    p = Path(path)
    return (p.exists() and not p.is_file()) or os.path.abspath(p).startswith(("/dev/", "/proc/"))


#: ``--json -``: the report goes to stdout (parity/cli/common.py ``json_on_stdout``).
STDOUT = "-"

#: FIFOs opened for writing when their option was checked ({absolute path: descriptor}):
#: kept open until the report is written, so their reader sees no end of file in between.
_HELD_FIFOS: dict[str, int] = {}


def open_fifo(path) -> int:
    """The FIFO ``path`` opened for writing without blocking (then made blocking), or the one
    already opened; OSError ENXIO when it has no reader (a plain open would block until one
    comes: after a run, for ever). The descriptor is kept for :func:`write_report`."""
    key = os.path.abspath(path)
    if key not in _HELD_FIFOS:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.set_blocking(fd, True)
        _HELD_FIFOS[key] = fd
    return _HELD_FIFOS[key]


def _to_stdout(data: bytes) -> None:
    """``data`` to file descriptor 1 itself (its offset and O_APPEND kept: reopening
    /dev/stdout for writing would truncate a file stdout is redirected to with ``>>``)."""
    for stream in (sys.stdout, sys.__stdout__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def write_report(path, text: str) -> None:
    """Write a report (``--json PATH``, ``parity aot merge --out PATH``) of ``text`` (UTF-8, LF):
    to a regular file atomically (:func:`write_bytes_atomic`; through a symlink, the file it
    names, so the link stays); to a path :func:`written_in_place` says, directly. Before, the
    rename replaced such a path with a regular file (run as root, ``--json /dev/stdout`` or
    ``/dev/full`` replaced the device node); ``-`` (:data:`STDOUT`) to stdout. OSError when
    it cannot be written."""
    if path == STDOUT:
        _to_stdout(text.encode("utf-8"))
        return
    if written_in_place(path):
        fifo = os.path.exists(path) and stat.S_ISFIFO(os.stat(path).st_mode)
        if fifo:  # never block on a FIFO nobody reads: ENXIO, one error line
            open_fifo(path)
        fd = _HELD_FIFOS.pop(os.path.abspath(path), None)
        with (os.fdopen(fd, "w", encoding="utf-8", newline="\n") if fd is not None
              else open(path, "w", encoding="utf-8", newline="\n")) as f:
            f.write(text)
        return
    write_bytes_atomic(os.path.realpath(path), text.encode("utf-8"), fsync=False)


def write_text_atomic(path: str, text: str) -> None:
    """Write ``text`` (UTF-8, LF) to ``path`` atomically (:func:`write_bytes_atomic`)."""
    write_bytes_atomic(path, text.encode("utf-8"))


_stdout_closed = False


def out(line: str = "") -> None:
    """Print ``line`` to stdout; when the reader has gone (EPIPE), stdout is
    pointed at /dev/null and the caller goes on (its files still get written)."""
    global _stdout_closed
    if _stdout_closed:
        return
    try:
        print(line, flush=True)
    except BrokenPipeError:
        quiet_stdout()
    except OSError as e:
        if e.errno != errno.EPIPE:
            raise
        quiet_stdout()


def quiet_stdout() -> None:
    """Send the rest of stdout to /dev/null (after EPIPE), so the interpreter's
    final flush does not print a BrokenPipeError."""
    global _stdout_closed
    _stdout_closed = True
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


class _KeepGoingStdout:
    """A stdout proxy for commands that change files: once the reader has gone
    (EPIPE), the rest of the output is dropped and the command runs to its end,
    so ``parity write | head -1`` still writes its shards."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        if _stdout_closed:
            return len(text)
        try:
            return self._stream.write(text)
        except (BrokenPipeError, ValueError):
            quiet_stdout()
            return len(text)

    def flush(self):
        if _stdout_closed:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            quiet_stdout()

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _FirstLine:
    """A stdout proxy that writes ``line`` before the first output and then passes
    everything through: a command that stops on bad input (its error on stderr) prints nothing
    on stdout, one that runs prints ``line`` first."""

    def __init__(self, stream, line: str):
        self._stream = stream
        self._line = line

    def write(self, text):
        if text and self._line is not None:
            # (the proxy stays installed: print() holds only a borrowed reference to
            # sys.stdout while it writes, so swapping it out here would free it mid-call)
            line, self._line = self._line, None
            self._stream.write(line + "\n")
        return self._stream.write(text)

    def flush(self):
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def print_first_on_stdout(line: str) -> None:
    """Print ``line`` on stdout just before the first output of the process (and
    never if nothing is printed)."""
    sys.stdout = _FirstLine(sys.stdout, line)


class _HeldLine:
    """``line`` held for ``target`` until :meth:`release` (once)."""

    def __init__(self, target, line: str):
        self.target, self.line = target, line

    def release(self):
        if self.line is not None:
            line, self.line = self.line, None
            self.target.write(line + "\n")
            self.target.flush()


class _Releases:
    """A stream proxy that releases a :class:`_HeldLine` before its first output, except
    output on a line that starts with ``skip`` (an ``error: `` line passes and keeps it held)."""

    def __init__(self, stream, held: _HeldLine, skip: str | None = None):
        self._stream, self._held, self._skip = stream, held, skip
        self._line_start, self._skipping = True, False

    def write(self, text):
        if text and self._held.line is not None:
            if self._line_start:
                self._skipping = self._skip is not None and text.startswith(self._skip)
            if not self._skipping:
                self._held.release()
            self._line_start = text.endswith("\n")
        return self._stream.write(text)

    def flush(self):
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def print_first_on_stderr(line: str, error_prefix: str) -> None:
    """Print ``line`` on stderr just before the command's first output on stdout or its first
    stderr line that does not start with ``error_prefix``: a command that stops on bad input
    prints its one ``error:`` line alone, one that runs prints ``line`` first on stderr (for
    commands whose stdout is the result: IR, a patch, JSON). A proxy a previous in-process
    run left installed is replaced, not wrapped (its held line would print twice)."""
    out, err = sys.stdout, sys.stderr
    out = out._stream if isinstance(out, (_Releases, _FirstLine)) else out
    err = err._stream if isinstance(err, _Releases) else err
    held = _HeldLine(err, line)
    sys.stdout = _Releases(out, held)
    sys.stderr = _Releases(err, held, error_prefix)


def keep_going_on_broken_pipe() -> None:
    """Make a closed stdout pipe harmless for the rest of the process: output is
    dropped, work goes on (for commands that write files; exit status is the
    command's own)."""
    if not isinstance(sys.stdout, _KeepGoingStdout):
        sys.stdout = _KeepGoingStdout(sys.stdout)


#: The standard streams :func:`reopen_closed_std_streams` found closed ("stdout", "stderr").
CLOSED_STREAMS: set[str] = set()


def reopen_closed_std_streams() -> None:
    """Give a closed stdout or stderr (``parity list >&-``: Python then has
    ``sys.stdout = None``) a /dev/null on its descriptor, so output is dropped
    instead of ending the run in an AttributeError, here and in every worker the
    run starts (they inherit the descriptor)."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            CLOSED_STREAMS.add(name)
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)  # inheritable, as a standard stream is
                os.close(null)
            else:
                os.set_inheritable(fd, True)  # os.open's descriptors are not (PEP 446)
            setattr(sys, name, open(fd, "w", encoding="utf-8", closefd=False))


#: Exit status of a run stopped by Ctrl-C (SIGINT): 128 + 2, what a shell reports for it.
EXIT_INTERRUPTED = 130


def run_quietly_on_broken_pipe(main, argv=None) -> int:
    """``main(argv)``; a BrokenPipeError (stdout closed by ``| head``) ends it
    quietly: no traceback, exit status 141 (128 + SIGPIPE, what a shell
    reports for a writer killed by a closed pipe). Ctrl-C (KeyboardInterrupt)
    ends it with one ``error:`` line and exit status :data:`EXIT_INTERRUPTED`
    (130), no traceback; the ``with`` blocks it unwinds have closed their
    pools and removed their temporary files, and every file the commands
    write is replaced whole (written beside it, then renamed), so a golden
    shard is the old one or the new one."""
    from parity import _early_sigint
    try:
        _early_sigint.arm()  # from here a Ctrl-C is the KeyboardInterrupt handled below
        rc = main(argv)
        sys.stdout.flush()  # output still buffered for a reader that has gone fails here, not at exit
        _early_sigint.quiet_exit()  # done: a Ctrl-C from here on is ignored (CLI), never a traceback on the way out
        return rc
    except BrokenPipeError:
        quiet_stdout()
        return 141
    except KeyboardInterrupt:
        return interrupted()


def interrupted() -> int:
    """After a KeyboardInterrupt: one ``error:`` line, exit status :data:`EXIT_INTERRUPTED`."""
    if threading.current_thread() is threading.main_thread():
        # a second SIGINT (a terminal's repeated Ctrl-C, `timeout` signalling the
        # process and then its group) would raise again while the interpreter joins
        # the pools' threads on its way out: "Exception ignored ... KeyboardInterrupt"
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    if sys.stderr.isatty():
        print(file=sys.stderr)  # off the progress bar's line
    print("error: interrupted (Ctrl-C): stopped before the end; every file written is whole "
          "(written beside, then renamed)", file=sys.stderr)
    # CPython marks a KeyboardInterrupt that left code run from a string (exec of a dataclass's
    # generated __init__ during an import) as unhandled even once caught, and its Py_RunMain
    # then kills the process with SIGINT at exit, after this line (issue 39)
    from parity import _early_sigint
    _early_sigint.forget_interrupt()
    return EXIT_INTERRUPTED

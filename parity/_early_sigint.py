"""Ctrl-C from the first instruction of ``parity`` (issue 39).

``parity``'s console script and ``python -m parity`` import the ``parity``
package before anything else of the project; ``parity/__init__.py`` calls
:func:`install` first thing, so a SIGINT that arrives while the command's
modules are still being imported (numpy, the engines, the CLI) ends the
process with one ``error:`` line and exit status 130 instead of a
KeyboardInterrupt traceback. Once the command runs inside
``run_quietly_on_broken_pipe`` (parity/base/outputs.py), :func:`arm` puts
Python's own handler back, so the ``with`` blocks unwind, pools close and
temp files go as before.

Only ``os`` and ``sys`` (already loaded by the interpreter) and the builtin
``_signal`` (``import signal`` loads ``enum``: a Ctrl-C during that import was a
traceback, found by ``parity fuzz --gate``) are used here. What stays outside: the interpreter's own
start-up (``site`` and the editable install's path hook) before the package
is imported, a few milliseconds.
"""
from __future__ import annotations

import os
import sys

import _signal as signal  # the builtin: `import signal` loads enum, a window the fuzz lane hit

_MESSAGE = b"error: interrupted (Ctrl-C) while parity was starting: nothing was run or written\n"


def _starting(signum, frame) -> None:  # noqa: ARG001 - a signal handler's signature
    try:
        os.write(2, _MESSAGE)
    finally:
        os._exit(130)


def is_cli() -> bool:
    """True in the ``parity`` console script and ``python -m parity`` (argv[0] is ``-m``
    while runpy imports the package), never in a program that imports the package.
    Asked while the package is imported: runpy then puts ``.../parity/__main__.py`` in
    argv[0], so later callers use :data:`_CLI`, what :func:`install` found."""
    arg0 = sys.argv[0] if sys.argv else ""
    return arg0 == "-m" or os.path.basename(arg0) in ("parity", "parity.exe", "parity-script.py")


#: [True] once :func:`install` ran in the CLI. ``quiet_exit`` asked :func:`is_cli` at the end of
#: the run, when ``python -m parity``'s argv[0] is already the ``__main__.py`` path: SIGINT was
#: never ignored on the way out, and a Ctrl-C during finalization killed the finished command by
#: the signal with no output (issue 39, found by 80 timed Ctrl-Cs of `python -m parity write`).
_CLI = [False]


def _unraisable(u) -> None:
    """``sys.unraisablehook`` of the CLI: a Ctrl-C that arrived while a finalizer ran (a
    ``Popen.__del__``) was printed as "Exception ignored ... KeyboardInterrupt" and the
    command went on to the end (issue 39, found by ``parity fuzz --gate``). It is raised
    again in the main thread, outside the finalizer: a helper thread interrupts the main
    thread a moment later (``_thread.interrupt_main``, a no-op once SIGINT is ignored)."""
    if u.exc_type is not None and issubclass(u.exc_type, KeyboardInterrupt):
        try:
            import _thread
            import time

            def later():
                time.sleep(0.01)
                _thread.interrupt_main()
            _thread.start_new_thread(later, ())
        except Exception:  # noqa: BLE001 - interpreter shutdown: nothing left to stop
            pass
        return
    _PREVIOUS_HOOK[0](u)


_PREVIOUS_HOOK = [sys.__unraisablehook__]


def install() -> None:
    """Install the start-up handler (main thread, CLI only; a SIGINT left ignored by the
    parent -- ``nohup``, a pool worker -- stays ignored) and :func:`_unraisable`."""
    if not is_cli():
        return
    _CLI[0] = True
    if sys.unraisablehook is not _unraisable:
        _PREVIOUS_HOOK[0] = sys.unraisablehook
        sys.unraisablehook = _unraisable
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _starting)
    except (ValueError, OSError):  # not the main thread
        pass


def arm() -> None:
    """Give SIGINT back to Python (KeyboardInterrupt) once the command's own handling is in
    place; a no-op when :func:`install` did not install the start-up handler."""
    try:
        if signal.getsignal(signal.SIGINT) is _starting:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):
        pass


def forget_interrupt() -> None:
    """Clear CPython's "KeyboardInterrupt went unhandled" mark (``_Py_UnhandledKeyboardInterrupt``).

    The interpreter sets it whenever a KeyboardInterrupt leaves code run from a string
    (``exec``/``eval`` of text: a dataclass's generated ``__init__``, a namedtuple's
    ``__new__``; ``parity write`` runs 96 of them in its lazy imports after :func:`arm`),
    caught or not, and ``Py_RunMain`` then ends the process with ``kill(getpid(), SIGINT)``
    after finalization, whatever ``SystemExit`` said: the one ``error: interrupted`` line,
    then death by SIGINT instead of exit 130 (issue 39: 5 of 60 Ctrl-Cs timed into
    ``python -m parity write``'s imports, 0 of 80 with this). Every run of string code
    resets the mark first, so running a constant clears it."""
    exec("pass")  # noqa: S102 - a constant: resets the interpreter's unhandled-interrupt mark


def quiet_exit() -> None:
    """Ignore SIGINT once the command has returned (CLI only) and :func:`forget_interrupt`:
    a Ctrl-C during the interpreter's own finalization, where Python has put SIGINT back to
    its default action, killed a finished run by the signal (found by ``parity fuzz
    --gate``); a KeyboardInterrupt some code swallowed must not kill it at exit either."""
    if not _CLI[0]:
        return
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):
        pass
    forget_interrupt()

"""One in-process run of the `parity` command line for the bad-input tests."""
from __future__ import annotations

from parity.app.main import main as parity_main


def run(capsys, *argv) -> tuple:
    """``(exit code, stdout, stderr)`` of ``parity *argv`` run in this process; an
    argparse error leaves through ``SystemExit`` (main() in a process) and counts as its code."""
    try:
        rc = parity_main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err

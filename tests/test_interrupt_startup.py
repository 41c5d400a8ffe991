"""Ctrl-C from the first instruction of every process `parity` starts (issue 39).

SIGINT is sent to the whole process group (what a terminal's Ctrl-C does) at
sampled times in the first 2 s of `parity check` (the parent importing, the
gate pool's workers importing the engines, the run): never a traceback, exit
130 with one `error:` line (or 0 when the run had already finished)."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARITY = Path(sys.executable).with_name("parity")


def _interrupt_at(cmd: list[str], delay: float) -> tuple[int, str]:
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, env={**os.environ, "NO_COLOR": "1"})
    time.sleep(delay)
    try:
        os.killpg(p.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    try:
        out, err = p.communicate(timeout=60)
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # any worker left over (none expected)
        except ProcessLookupError:
            pass
    return p.returncode, err.decode("utf-8", "replace")


@pytest.mark.parametrize("entry", ["script", "module"])
def test_sigint_at_sampled_times_in_the_first_two_seconds_prints_no_traceback(entry):
    cmd = ([str(PARITY)] if entry == "script" else [sys.executable, "-m", "parity"]) + \
        ["check", "--only", "ir_core", "-j", "2"]
    rng = random.Random(39)
    # dense near the start (the package's imports), then the pool workers' imports. Not sampled:
    # the interpreter's own start-up and the console script's `import re, sys` before it imports
    # `parity` (about 60-90 ms here), which no code of the project runs in (docs/cli.md)
    delays = [0.1, 0.13, 0.17, 0.25] + sorted(rng.uniform(0.1, 2.0) for _ in range(8))
    for d in delays:
        rc, err = _interrupt_at(cmd, d)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, (d, err[-2000:])
        # 0/1: the check had already finished; -SIGINT: killed before the interpreter installed any handler
        assert rc in (130, 0, 1, -signal.SIGINT), (d, rc, err[-500:])
        if rc == 130:
            lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
            assert len(lines) == 1 and "interrupted" in lines[0], (d, err)


def test_a_pool_worker_started_under_the_block_never_sees_sigint():
    # the mask is inherited across spawn's exec: SIGINT to the worker while it imports is pending, not raised
    from parity.cli.interrupt import workers_ignore_sigint
    code = "import signal,os,time; os.kill(os.getpid(), signal.SIGINT); time.sleep(0.2); print('alive')"
    with workers_ignore_sigint():
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=30)
    assert (p.returncode, out.strip(), err) == (0, b"alive", b"")
    # and the caller's own handling is back after the block
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())

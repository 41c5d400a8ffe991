"""bench/gate.py's per-process lowering passes (run by its kernels/CPU-s figures):
``--lower ENGINE`` and ``--lower-native cpp`` (the C++ engine's native calls
alone) print ``<CPU seconds> <kernels> <unexpected rejections>`` over the same
units. Counts only: no timing is asserted."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.gate import accepted_units
from parity.config import load_families

ROOT = Path(__file__).resolve().parents[1]
ONLY = "conv_abi,ir_core,split_k_policy"


def _run(*args: str) -> tuple[float, int, int]:
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "gate.py"), *args, "--only", ONLY], capture_output=True,
                       text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    secs, n, failures = r.stdout.split()
    return float(secs), int(n), int(failures)


@pytest.mark.parametrize("args", [("--lower", "cpp"), ("--lower-native", "cpp"), ("--lower", "python")])
def test_each_pass_lowers_every_accepted_unit_once(args):
    want = len(list(accepted_units(load_families(only=ONLY.split(",")))))
    secs, n, failures = _run(*args)
    assert want > 200 and n == want  # conv_abi 13 + ir_core 53 + split_k_policy 207 units today
    assert failures == 0 and secs > 0

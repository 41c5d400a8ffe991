"""Same bytes whatever the process: two PYTHONHASHSEED values, and the C++
engine in a process whose LC_NUMERIC is a comma-decimal locale."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from locale_helpers import comma_locale_or_skip


DIGEST = r"""
import hashlib, sys, itertools, importlib
engine = importlib.import_module(sys.argv[1])
if len(sys.argv) > 2:
    import locale
    locale.setlocale(locale.LC_ALL, sys.argv[2])
    assert locale.localeconv()["decimal_point"] == ","
h = hashlib.sha256()
for fam in engine.FAMILIES:
    for fl in ("llvm20", "llvm22", "llvm23"):
        for spec in ({},  {"threads": 64}):
            try:
                r = engine.lower(fam, spec, "gfx1250", fl)
                h.update(r.kernel.encode() + r.text.encode())
            except engine.SpecRejected as e:
                h.update(e.reason.encode())
from python_engine.kernels.ir_core import KERNELS
for k in KERNELS:
    h.update(engine.lower("ir_core", {"kernel": k}, "gfx1250", "llvm23").text.encode())
print(h.hexdigest())
"""


def _digest(module: str, seed: str, loc: str | None = None) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    args = [sys.executable, "-c", DIGEST, module] + ([loc] if loc else [])
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.parametrize("module", ["python_engine", "cpp_engine"])
def test_hash_seed_independent(module):
    a = _digest(module, "1")
    b = _digest(module, "4242")
    assert len(a) == 64 and a == b


def test_cpp_engine_locale_independent():
    loc = comma_locale_or_skip()
    plain = _digest("cpp_engine", "0")
    assert _digest("cpp_engine", "0", loc) == plain
    assert _digest("python_engine", "0", loc) == plain

"""Reproducer files: one runnable Python file per distinct failure.

``<DIR>/<family>-<VERDICT>-<hash>.py`` rebuilds the shrunk spec (parity/gate/fuzz_values.py
``code_repr``), states the verdict, detail, seed and spec index it came from,
and when run (``python FILE``) checks it again through both engines in that
process (parity/gate/fuzz_check.py ``replay``; a CRASH may kill it, which is the
reproduction), exit 0 when it passes."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from parity.gate.fuzz_values import code_repr

TEMPLATE = '''"""parity fuzz reproducer: {verdict} in family {family}.

{detail}
Found by `parity fuzz --seed {seed}` (spec #{index}), shrunk. Run: python {name}
"""
from parity.gate.fuzz_values import LyingFloat, LyingInt, LyingStr, float_from_bits  # noqa: F401 (used by SPEC)

FAMILY = {family_r}
SPEC = {spec}
ARCH = {arch}
FLAVOR = {flavor}

if __name__ == "__main__":
    from parity.gate.fuzz_check import replay
    raise SystemExit(replay(FAMILY, SPEC, ARCH, FLAVOR))
'''


def write_reproducer(out_dir: Path, family: str, verdict: str, detail: str, seed: int, index: int,
                     spec: dict, arch, flavor) -> Path:
    """Write the reproducer (atomically) and return its path; the name hashes
    the shrunk input, so the same failure found twice is one file."""
    body = f"{code_repr(spec)}|{code_repr(arch)}|{code_repr(flavor)}"
    h = hashlib.sha256(f"{family}|{verdict}|{body}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
    name = f"{family}-{verdict}-{h}.py"
    text = TEMPLATE.format(verdict=verdict, family=family, detail=detail.encode("ascii", "backslashreplace")
                           .decode("ascii").replace('"""', "'''"), seed=seed, index=index, name=name,
                           family_r=repr(family), spec=code_repr(spec), arch=code_repr(arch),
                           flavor=code_repr(flavor))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / name
    tmp = out_dir / f".{name}.tmp"
    tmp.write_text(text.encode("ascii", "backslashreplace").decode("ascii"), encoding="ascii")
    os.replace(tmp, path)
    return path

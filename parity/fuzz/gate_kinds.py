"""Every input kind of ``parity fuzz --gate`` (docs/fuzz.md lists them): the
shard kinds (parity/fuzz/gate_kinds_shard.py) and the directory, file system,
command-line, environment, config, merge-driver and catalog kinds
(parity/fuzz/gate_kinds_env.py), and the signal, pending, scale and concurrent kinds of
issue 39 (parity/fuzz/gate_kinds_scale.py)."""
from __future__ import annotations

from parity.fuzz import gate_kinds_env, gate_kinds_scale, gate_kinds_shard

KINDS = tuple(gate_kinds_shard.KINDS + gate_kinds_env.KINDS + gate_kinds_scale.KINDS)

_names = [k.name for k in KINDS]
if len(set(_names)) != len(_names):  # a kind is counted once: its name is its identity
    raise ImportError(f"duplicate gate fuzz kinds: {sorted({n for n in _names if _names.count(n) > 1})}")

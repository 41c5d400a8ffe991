"""cpp_engine.facts: the engine facts the C++ engine computes, as plain data, for
comparison with :func:`python_engine.facts.facts_data` (docs/engine_api.md, "Engine facts").

Every value here comes out of libcpp_engine through its existing C API (no Python copy):
the LDS bytes per arch from ``cpe_arch_table_text`` (via :func:`arch_table`), the AOT
grid's reduce degrees and cluster sizes from the jobs of ``cpe_aot_jobs_text`` (via
:func:`aot_jobs_text`), the argument names per ABI variant from the ``conv_abi`` text
family's listing (via :func:`lower`). The Python-only facts (types, perf-model rows,
ir_core value lists, small-float rounding) have no C API entry yet: they are not in
``facts_data()`` of this engine, and the comparison covers the keys both give.
"""
from __future__ import annotations

import re

from ._binding import aot_jobs_text, arch_table, lower

__all__ = ["facts_data"]

#: the flavor whose AOT grid is read: the first with cluster launches in its grid
#: (llvm22 has none); checked by tests/test_engine_facts.py against the Python engine's constants
_FLAVOR = "llvm23"
#: the conv_abi variants (the Python engine's ABI_VARIANTS; compared by the test)
_VARIANTS = ("plain", "two_stage", "cluster", "reduce")


def _reduce_degrees(jobs: str) -> list:
    """The distinct ``degree`` values of the conv_fwd_split_k_reduce jobs, ascending."""
    out = set()
    for line in jobs.splitlines():
        cols = line.split("\t")
        if len(cols) == 4 and cols[0] == "conv_fwd_split_k_reduce":
            fields = dict(f.split("=", 1) for f in cols[3].split(";") if "=" in f)
            out.add(int(fields["degree"]))
    return sorted(out)


def _cluster_sizes(jobs: str) -> list:
    """The distinct nonzero ``split_k_cluster`` values of the conv_implicit_gemm jobs, ascending."""
    found = re.findall(r"(?:^|;)split_k_cluster=(\d+)", jobs.replace("\t", ";"), flags=re.M)
    return sorted({int(v) for v in found if int(v)})


def _abi_arg_names(variant: str) -> list:
    """The argument names of the conv_abi listing (``<index> <name>: <type>`` lines) of ``variant``."""
    spec = {"direction": "fwd", "variant": variant, "spatial_dims": 2, "acc_epilogue": "identity"}
    text = lower("conv_abi", spec, "gfx1250", _FLAVOR).text
    return [m.group(1) for m in re.finditer(r"^\d+ (\w+):", text, flags=re.M)]


def facts_data() -> dict:
    """Facts computed by the C++ engine: ``lds_bytes`` {arch: int bytes} and
    ``reduce_degrees`` [int] (0 = the one-pass reduce), ``cluster_sizes`` [int] and
    ``abi_arg_names`` {variant: [name]}. EngineError if the library fails."""
    _count, jobs = aot_jobs_text(_FLAVOR)
    return {
        "lds_bytes": {a["name"]: int(a["lds_bytes"]) for a in arch_table()},
        "reduce_degrees": _reduce_degrees(jobs),
        "cluster_sizes": _cluster_sizes(jobs),
        "abi_arg_names": {v: _abi_arg_names(v) for v in _VARIANTS},
    }

"""cpp_engine.facts: the engine facts the C++ engine computes, as plain data, for
comparison with :func:`python_engine.facts.facts_data` (docs/engine_api.md, "Engine facts").

Every value here comes out of libcpp_engine through its existing C API (no Python copy):
the LDS bytes per arch from ``cpe_arch_table_text`` (via :func:`arch_table`), the AOT
grid's reduce degrees from the reduce kernels of ``cpe_aot_jobs_text`` (via
:func:`aot_jobs_text`). The Python-only facts (types, perf-model rows, ABI layouts,
ir_core value lists, small-float rounding) have no C API entry yet: they are not in
``facts_data()`` of this engine, and the comparison covers the keys both give.
"""
from __future__ import annotations

from ._binding import aot_jobs_text, arch_table

__all__ = ["facts_data"]

#: the flavor whose AOT grid is read (the grid is the same for every flavor; assumption
#: checked by tests/test_engine_facts.py against the Python engine's constants)
_FLAVOR = "llvm22"


def _reduce_degrees(jobs: str) -> list:
    """The distinct ``degree`` values of the conv_fwd_split_k_reduce jobs, ascending."""
    out = set()
    for line in jobs.splitlines():
        cols = line.split("\t")
        if len(cols) == 4 and cols[0] == "conv_fwd_split_k_reduce":
            fields = dict(f.split("=", 1) for f in cols[3].split(";") if "=" in f)
            out.add(int(fields["degree"]))
    return sorted(out)


def facts_data() -> dict:
    """Facts computed by the C++ engine: ``lds_bytes`` {arch: int bytes} and
    ``reduce_degrees`` [int] (0 = the one-pass reduce). EngineError if the library fails."""
    _count, jobs = aot_jobs_text(_FLAVOR)
    return {
        "lds_bytes": {a["name"]: int(a["lds_bytes"]) for a in arch_table()},
        "reduce_degrees": _reduce_degrees(jobs),
    }

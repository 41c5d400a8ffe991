"""The AOT job grid: the binaries built ahead of time (docs/policy.md).
Twin: cpp_engine/src/policy/aot.{h,cpp}.

Per flavor, gfx1250 only, in this order:

1. two-stage split-K forward binaries (``split_k > 1``, the ``_spk`` binary that
   serves every degree) on the small WMMA tiles :data:`TWO_STAGE_TILES` x
   tile_k :data:`TWO_STAGE_TILE_K` x epilogue :data:`TWO_STAGE_EPILOGUES`,
   bf16 and fp16, mem pipeline, 16-byte vectors (8 elements);
2. the reduce kernels they need: bf16 and fp16, vector 8, 256 threads,
   degree 0 (run-time slice loop, any ``ks_count``) and the unrolled degrees
   :data:`REDUCE_DEGREES` the policy produces (powers of two; selection uses
   an unrolled one only when ``ks_count`` equals it);
3. at flavors with clusters (llvm23) only: cluster binaries
   ``split_k_cluster = S`` for S in :data:`CLUSTER_SIZES` on the mem/cshuffle
   tiles :data:`CLUSTER_TILES`, tile_k 64, 16-byte vectors, bf16 and fp16.

Waves per tile: ``min(2, tile_m/16) x min(2, tile_n/16)``.
:func:`count_jobs` computes the count arithmetically; tests hold it equal to
``len(jobs(flavor))``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..kernels import conv_fwd_split_k_reduce as RED
from ..kernels import conv_implicit_gemm as CIG
from ..targets.flavors import find_flavor
from .identity import KernelIdentity

ARCH = "gfx1250"
DTYPES = ("bf16", "fp16")
TWO_STAGE_TILES = ((16, 16), (16, 32), (32, 32), (64, 32), (64, 64))
TWO_STAGE_TILE_K = (32, 64)
TWO_STAGE_EPILOGUES = ("default", "cshuffle")
REDUCE_VECTOR = 8
REDUCE_THREADS = 256
REDUCE_DEGREES = (0, 2, 4, 8, 16, 32)
CLUSTER_TILES = ((16, 32), (32, 32), (64, 32), (64, 64), (128, 128))
CLUSTER_SIZES = (4, 8, 12, 15)
CLUSTER_TILE_K = 64
VECTOR = 8  # 16-byte vectors of a 2-byte dtype


@dataclass(frozen=True)
class Job:
    family: str
    spec: dict
    identity: KernelIdentity

    def line(self) -> str:
        """``<family>\\t<hash>\\t<label>\\t<spec as name=value;...>`` (spec in field order)."""
        spec = ";".join(f"{k}={v}" for k, v in self.spec.items())
        return f"{self.family}\t{self.identity.hash()}\t{self.identity.label()}\t{spec}"


def waves(tile_m: int, tile_n: int) -> tuple:
    return min(2, tile_m // 16), min(2, tile_n // 16)


def conv_spec(dtype: str, tm: int, tn: int, tk: int, epilogue: str, split_k: int = 2, s: int = 0) -> dict:
    wm, wn = waves(tm, tn)
    v = {f.name: f.default for f in CIG.FIELDS}
    v.update(dtype=dtype, tile_m=tm, tile_n=tn, tile_k=tk, waves_m=wm, waves_n=wn, pipeline="mem",
             epilogue=epilogue, vector_a=VECTOR, vector_b=VECTOR, split_k=split_k, split_k_cluster=s)
    return v


def reduce_spec(dtype: str, degree: int) -> dict:
    return {"dtype": dtype, "vector": REDUCE_VECTOR, "threads": REDUCE_THREADS, "degree": degree}


def _flavor(flavor):
    fl = find_flavor(flavor) if isinstance(flavor, str) else flavor
    if fl is None:
        raise ValueError(f"flavor '{flavor}' is not one of llvm20, llvm22, llvm23, llvm24")
    return fl


def jobs(flavor) -> list:
    """Every job of ``flavor`` (a name or row), in grid order."""
    fl = _flavor(flavor)
    out = []
    for dt in DTYPES:
        for tm, tn in TWO_STAGE_TILES:
            for tk in TWO_STAGE_TILE_K:
                for epi in TWO_STAGE_EPILOGUES:
                    s = conv_spec(dt, tm, tn, tk, epi)
                    out.append(Job(CIG.FAMILY, s, KernelIdentity.of_conv(s, ARCH, fl.canonical)))
    for dt in DTYPES:
        for d in REDUCE_DEGREES:
            s = reduce_spec(dt, d)
            out.append(Job(RED.FAMILY, s, KernelIdentity.of_reduce(s, ARCH, fl.canonical)))
    if fl.clusters:
        for dt in DTYPES:
            for tm, tn in CLUSTER_TILES:
                for S in CLUSTER_SIZES:
                    s = conv_spec(dt, tm, tn, CLUSTER_TILE_K, "cshuffle", 2, S)
                    out.append(Job(CIG.FAMILY, s, KernelIdentity.of_conv(s, ARCH, fl.canonical)))
    return out


def count_jobs(flavor) -> int:
    fl = _flavor(flavor)
    n = len(DTYPES) * (len(TWO_STAGE_TILES) * len(TWO_STAGE_TILE_K) * len(TWO_STAGE_EPILOGUES)
                       + len(REDUCE_DEGREES))
    if fl.clusters:
        n += len(DTYPES) * len(CLUSTER_TILES) * len(CLUSTER_SIZES)
    return n


def job_hashes(flavor) -> frozenset:
    return _hashes(_flavor(flavor).canonical)


@lru_cache(maxsize=None)
def _hashes(canonical: str) -> frozenset:
    return frozenset(j.identity.hash() for j in jobs(canonical))


def jobs_text(flavor) -> str:
    """One :meth:`Job.line` per job, LF, trailing newline (compared with the C++ engine)."""
    return "".join(j.line() + "\n" for j in jobs(flavor))

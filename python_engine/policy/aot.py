"""The AOT job grid: the binaries built ahead of time (docs/policy.md).
Twin: cpp_engine/src/policy/aot.{h,cpp}.

Per flavor and per arch of :data:`ARCHES` (the arch table's rows with the
16x16x32 WMMA the kernels use, the arches the split-K resolver gives the split
form, policy/split_k.py: gfx1250 today), in this order:

1. two-stage split-K forward binaries (``split_k > 1``, the ``_spk`` binary that
   serves every degree), per dtype (:data:`DTYPES`), over

   * tiles ``tile_m x tile_n`` with both sides in :data:`TILE_SIDES`
     (16x16 .. 128x128, non-square included), ``tile_m`` outer;
   * wave layouts ``waves_m x waves_n`` with both in :data:`WAVE_COUNTS`
     (``waves_m`` outer) that split the tile into per-wave tiles of whole
     16x16 WMMA tiles, with at most :data:`MAX_COMPUTE_WAVES` compute waves
     and at most :data:`MAX_WAVE_FRAGMENTS` accumulator tiles per wave;
   * ``tile_k`` in :data:`TILE_K`;
   * pipelines :data:`PIPELINES`: ``mem`` and ``wavelet`` with 1 and 2 load waves;
   * A/B vector widths :data:`VECTORS` (``vector_a = vector_b``; 4, 2 and 1
     for channel counts per group that 8 does not divide: 1 for odd ones and
     depthwise layers, which fit the load budget only on six layouts: the
     reference's 910 two-stage jobs per dtype, docs/policy.md);
   * epilogues :data:`EPILOGUES`;

   keeping the combinations whose load lanes issue at most
   :data:`MAX_LOADS_PER_LANE` global loads per K tile
   (:func:`loads_per_lane`), the register budget that keeps every job free of
   spills and scratch (docs/policy.md gives the measurements);
2. the reduce kernels they need: per dtype and per vector width
   :data:`REDUCE_VECTORS` (selection takes the largest that divides K), 256
   threads, degree 0 (run-time slice loop, any ``ks_count``) and the unrolled
   degrees :data:`REDUCE_DEGREES` (powers of two; selection uses an unrolled
   one only when ``ks_count`` equals it);
3. at flavors with clusters (llvm23) only: cluster binaries
   ``split_k_cluster = S`` for S in :data:`CLUSTER_SIZES` on the mem/cshuffle
   tiles :data:`CLUSTER_TILES`, tile_k 64, 16-byte vectors, waves
   ``min(2, tile/16)`` per axis, bf16 and fp16;
4. plain forward binaries (``split_k = 1``, issue 37): the plain candidates
   every selection mode can pick (the perf model's plain candidates, the
   seed's 64x64 binary among them): per accumulator epilogue
   (:data:`ACC_EPILOGUES`) and dtype, every tile of :data:`TILE_SIDES` at its
   default wave layout :func:`waves`, the spec defaults emit lowers
   (:data:`PLAIN_TILE_K`, ``mem``, ``default`` epilogue), vectors
   :data:`PLAIN_VECTORS` (every width ``load_vector`` gives: 8, 4, 2, 1 and
   the padded-pixel 3, 5, 6, 7), keeping those within the perf model's
   candidate budget :data:`PLAIN_MAX_LOADS` (:func:`candidate_loads`).

:func:`count_jobs` counts the grid without building a spec; tests hold it
equal to ``len(jobs(flavor))``. :func:`miss_reason` says why a binary is not
an AOT job.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..kernels import conv_fwd_split_k_reduce as RED
from ..kernels import conv_implicit_gemm as CIG
from ..targets.flavors import find_flavor
from .identity import KernelIdentity
from .split_k import SPLIT_ARCHES

#: The grid's arches, from the resolver's arch table (issue 37, item 4): the
#: rows with the 16x16x32 WMMA the kernels use (policy/split_k.py
#: ``SPLIT_ARCHES``; gfx1250 today). Each arch's jobs follow the previous arch's.
ARCHES = SPLIT_ARCHES
DTYPES = ("bf16", "fp16")
TILE_SIDES = (16, 32, 64, 128)
WAVE_COUNTS = (1, 2, 4)
MAX_COMPUTE_WAVES = 8          # waves_m * waves_n
MAX_WAVE_FRAGMENTS = 16        # 16x16 accumulator tiles per wave (128 fp32 VGPRs)
TILE_K = (32, 64)
PIPELINES = (("mem", 1), ("wavelet", 1), ("wavelet", 2))  # (pipeline, num_load_waves)
VECTORS = (8, 4, 2, 1)
EPILOGUES = ("default", "cshuffle")
MAX_LOADS_PER_LANE = 16        # global loads per load lane per K tile
REDUCE_VECTORS = (8, 4, 2)
REDUCE_THREADS = 256
REDUCE_DEGREES = (0, 2, 4, 8, 16, 32)
CLUSTER_TILES = ((16, 32), (32, 32), (64, 32), (64, 64), (128, 128))
CLUSTER_SIZES = (4, 8, 12, 15)
CLUSTER_TILE_K = 64
# fused split-K (issue 36): the reduce kernels and the cluster binaries again per accumulator
# epilogue (two-stage Stage 1 of a fused layer is the identity binary, conv_implicit_gemm.stage1_acc)
FUSED_EPILOGUES = ("bias", "scale", "relu", "clamp", "bias_relu", "bias_clamp")
ACC_EPILOGUES = ("identity",) + FUSED_EPILOGUES
# plain jobs (issue 37): the perf model's plain candidates at emit's spec (conv_implicit_gemm defaults)
PLAIN_TILE_K = 32              # conv_implicit_gemm's default tile_k (emit never sets it)
PLAIN_VECTORS = (8, 4, 2, 1, 3, 5, 6, 7)  # every width conv_implicit_gemm.load_vector returns
PLAIN_MAX_LOADS = 32           # = perf_model.MAX_LOADS_PER_LANE (a test holds them equal)
PLAIN_MAX_LOADS_ONE_WAVE = 30  # = perf_model.MAX_LOADS_ONE_WAVE: 16x16 w1x1 vector 1 spills SGPRs


def plain_budget(wm: int, wn: int) -> int:
    """The plain jobs' load budget at ``wm`` x ``wn`` waves (perf_model.load_budget's)."""
    return PLAIN_MAX_LOADS_ONE_WAVE if wm * wn == 1 else PLAIN_MAX_LOADS
VECTOR = 8  # 16-byte vectors of a 2-byte dtype (cluster binaries)
WAVE = 32


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
    """The default wave layout of a tile: ``min(2, tile/16)`` per axis (cluster binaries)."""
    return min(2, tile_m // 16), min(2, tile_n // 16)


def wave_layouts(tile_m: int, tile_n: int) -> list:
    """The grid's wave layouts of a tile, ``waves_m`` outer (see the module docstring)."""
    out = []
    for wm in WAVE_COUNTS:
        for wn in WAVE_COUNTS:
            if tile_m % (16 * wm) or tile_n % (16 * wn) or wm * wn > MAX_COMPUTE_WAVES:
                continue
            if (tile_m // (16 * wm)) * (tile_n // (16 * wn)) > MAX_WAVE_FRAGMENTS:
                continue
            out.append((wm, wn))
    return out


def loads_per_lane(tile_m: int, tile_n: int, tile_k: int, wm: int, wn: int, pipeline: str,
                   load_waves: int, vector: int) -> int:
    """Global loads one load lane issues per K tile: ``(tile_m + tile_n) * tile_k``
    elements in ``vector``-element loads over the load lanes (every lane for
    ``mem``, ``32 * num_load_waves`` for ``wavelet``), rounded up."""
    lanes = WAVE * (wm * wn if pipeline == "mem" else load_waves)
    n = (tile_m + tile_n) * tile_k
    return -(-n // (vector * lanes))


def candidate_loads(tm: int, tn: int, tk: int, wm: int, wn: int, pipeline: str, load_waves: int,
                    vector: int) -> int:
    """The perf model's load count of a candidate: :func:`loads_per_lane` at the
    slot width ``CIG.pixel_slot(vector)`` times the loads per slot
    (``len(CIG.pixel_pieces(vector))``: 2 or 3 for a padded pixel, else 1)."""
    return (loads_per_lane(tm, tn, tk, wm, wn, pipeline, load_waves, CIG.pixel_slot(vector))
            * len(CIG.pixel_pieces(vector)))


def plain_axes():
    """(tm, tn, wm, wn, vector) of the plain jobs of one dtype and epilogue, in grid order."""
    out = []
    for tm in TILE_SIDES:
        for tn in TILE_SIDES:
            wm, wn = waves(tm, tn)
            for v in PLAIN_VECTORS:
                if candidate_loads(tm, tn, PLAIN_TILE_K, wm, wn, "mem", 1, v) <= plain_budget(wm, wn):
                    out.append((tm, tn, wm, wn, v))
    return out


def plain_spec(dtype: str, tm: int, tn: int, vector: int, acc_epilogue: str = "identity") -> dict:
    """The grid's plain spec (split_k 1) of one tile at its default waves."""
    wm, wn = waves(tm, tn)
    return dict(conv_spec(dtype, tm, tn, PLAIN_TILE_K, "default", 1, 0, wm, wn, "mem", 1, vector),
                acc_epilogue=acc_epilogue)


def _two_stage_axes():
    """(dtype, tm, tn, wm, wn, tk, pipeline, load_waves, vector, epilogue) of every
    two-stage job, in grid order."""
    for dt in DTYPES:
        for tm in TILE_SIDES:
            for tn in TILE_SIDES:
                for wm, wn in wave_layouts(tm, tn):
                    for tk in TILE_K:
                        for pipe, lw in PIPELINES:
                            for v in VECTORS:
                                if loads_per_lane(tm, tn, tk, wm, wn, pipe, lw, v) > MAX_LOADS_PER_LANE:
                                    continue
                                for epi in EPILOGUES:
                                    yield dt, tm, tn, wm, wn, tk, pipe, lw, v, epi


def conv_spec(dtype: str, tm: int, tn: int, tk: int, epilogue: str, split_k: int = 2, s: int = 0,
              wm: int = 0, wn: int = 0, pipeline: str = "mem", load_waves: int = 1,
              vector: int = VECTOR) -> dict:
    """A conv_implicit_gemm spec of the grid (``wm = wn = 0``: the default layout :func:`waves`)."""
    if not wm:
        wm, wn = waves(tm, tn)
    v = {f.name: f.default for f in CIG.FIELDS}
    v.update(dtype=dtype, tile_m=tm, tile_n=tn, tile_k=tk, waves_m=wm, waves_n=wn, pipeline=pipeline,
             num_load_waves=load_waves, epilogue=epilogue, vector_a=vector, vector_b=vector,
             split_k=split_k, split_k_cluster=s)
    return v


def reduce_spec(dtype: str, degree: int, vector: int = REDUCE_VECTORS[0], acc_epilogue: str = "identity") -> dict:
    """The grid's reduce spec (``threads`` :data:`REDUCE_THREADS`); the
    ``acc_epilogue`` key only when it is not ``identity`` (so an unfused spec's
    text is what it was before fused Stage 2 existed)."""
    out = {"dtype": dtype, "vector": vector, "threads": REDUCE_THREADS, "degree": degree}
    if acc_epilogue != "identity":
        out["acc_epilogue"] = acc_epilogue
    return out


def _flavor(flavor):
    fl = find_flavor(flavor) if isinstance(flavor, str) else flavor
    if fl is None:
        raise ValueError(f"flavor '{flavor}' is not one of llvm20, llvm22, llvm23, llvm24")
    return fl


def jobs(flavor) -> list:
    """Every job of ``flavor`` (a name or row), in grid order: the jobs of each
    arch of :data:`ARCHES` in turn (:func:`arch_jobs`)."""
    fl = _flavor(flavor)
    return [j for arch in ARCHES for j in arch_jobs(arch, fl)]


def arch_jobs(arch: str, fl) -> list:
    """The jobs of one arch of :data:`ARCHES` at flavor row ``fl``, in grid order."""
    out = []
    for dt, tm, tn, wm, wn, tk, pipe, lw, v, epi in _two_stage_axes():
        s = conv_spec(dt, tm, tn, tk, epi, 2, 0, wm, wn, pipe, lw, v)
        out.append(Job(CIG.FAMILY, s, KernelIdentity.of_conv(s, arch, fl.canonical)))
    for acc in ("identity",) + FUSED_EPILOGUES:
        for dt in DTYPES:
            for v in REDUCE_VECTORS:
                for d in REDUCE_DEGREES:
                    s = reduce_spec(dt, d, v, acc)
                    out.append(Job(RED.FAMILY, s, KernelIdentity.of_reduce(s, arch, fl.canonical)))
        if fl.clusters:
            for dt in DTYPES:
                for tm, tn in CLUSTER_TILES:
                    for S in CLUSTER_SIZES:
                        s = dict(conv_spec(dt, tm, tn, CLUSTER_TILE_K, "cshuffle", 2, S), acc_epilogue=acc)
                        out.append(Job(CIG.FAMILY, s, KernelIdentity.of_conv(s, arch, fl.canonical)))
    for acc in ACC_EPILOGUES:
        for dt in DTYPES:
            for tm, tn, _, _, v in plain_axes():
                s = plain_spec(dt, tm, tn, v, acc)
                out.append(Job(CIG.FAMILY, s, KernelIdentity.of_conv(s, arch, fl.canonical)))
    return out


def count_two_stage(dtype_count: int = 1) -> int:
    """Two-stage jobs of ``dtype_count`` dtypes, counted over the axes (no specs built)."""
    n = 0
    for tm in TILE_SIDES:
        for tn in TILE_SIDES:
            for wm, wn in wave_layouts(tm, tn):
                for tk in TILE_K:
                    for pipe, lw in PIPELINES:
                        for v in VECTORS:
                            if loads_per_lane(tm, tn, tk, wm, wn, pipe, lw, v) <= MAX_LOADS_PER_LANE:
                                n += len(EPILOGUES)
    return n * dtype_count


def count_jobs(flavor) -> int:
    """The number of jobs of ``flavor``, counted over the grid's axes (and :data:`ARCHES`)."""
    fl = _flavor(flavor)
    accs = 1 + len(FUSED_EPILOGUES)
    n = count_two_stage(len(DTYPES)) + accs * len(DTYPES) * len(REDUCE_VECTORS) * len(REDUCE_DEGREES)
    if fl.clusters:
        n += accs * len(DTYPES) * len(CLUSTER_TILES) * len(CLUSTER_SIZES)
    return len(ARCHES) * (n + accs * len(DTYPES) * len(plain_axes()))


def job_hashes(flavor) -> frozenset:
    return _hashes(_flavor(flavor).canonical)


@lru_cache(maxsize=None)
def _hashes(canonical: str) -> frozenset:
    return frozenset(j.identity.hash() for j in jobs(canonical))


def jobs_text(flavor) -> str:
    """One :meth:`Job.line` per job, LF, trailing newline (compared with the C++ engine)."""
    return "".join(j.line() + "\n" for j in jobs(flavor))


def _set(values) -> str:
    return ", ".join(str(v) for v in values)


def conv_miss_reason(spec: dict, flavor) -> str | None:
    """Why the conv_implicit_gemm binary ``spec`` (valid at gfx1250, ``flavor``) is
    not an AOT job, naming the first grid axis it leaves; None when it is one."""
    fl = _flavor(flavor)
    if spec["name_prefix"]:
        return f"name_prefix '{spec['name_prefix']}' is not in the grid (AOT jobs have none)"
    tm, tn, tk = spec["tile_m"], spec["tile_n"], spec["tile_k"]
    wm, wn, v = spec["waves_m"], spec["waves_n"], spec["vector_a"]
    S = spec["split_k_cluster"]
    if S:
        if not fl.clusters:
            return f"flavor {fl.canonical} has no cluster jobs"
        if (tm, tn) not in CLUSTER_TILES:
            return (f"tile {tm}x{tn} has no cluster job (cluster tiles "
                    f"{_set(f'{a}x{b}' for a, b in CLUSTER_TILES)})")
        if S not in CLUSTER_SIZES:
            return f"split_k_cluster {S} is not in the grid ({_set(CLUSTER_SIZES)})"
        want = conv_spec(spec["dtype"], tm, tn, CLUSTER_TILE_K, "cshuffle", 2, S)
        for f in ("tile_k", "waves_m", "waves_n", "epilogue", "vector_a", "vector_b"):
            if spec[f] != want[f]:
                return f"cluster jobs have {f} {want[f]}, not {spec[f]}"
        return None
    if spec["split_k"] <= 1:
        return plain_miss_reason(spec)
    if tm not in TILE_SIDES or tn not in TILE_SIDES:
        return f"tile {tm}x{tn} is not in the grid (tile_m, tile_n in {_set(TILE_SIDES)})"
    if tk not in TILE_K:
        return f"tile_k {tk} is not in the grid ({_set(TILE_K)})"
    if (wm, wn) not in wave_layouts(tm, tn):
        return (f"waves {wm}x{wn} on the {tm}x{tn} tile are not in the grid (layouts "
                f"{_set(f'{a}x{b}' for a, b in wave_layouts(tm, tn))})")
    lw = spec["num_load_waves"] if spec["pipeline"] == "wavelet" else 1
    if (spec["pipeline"], lw) not in PIPELINES:
        return f"pipeline wavelet{lw} is not in the grid (mem, wavelet1, wavelet2)"
    if spec["vector_a"] != spec["vector_b"] or v not in VECTORS:
        return (f"vectors {spec['vector_a']}/{spec['vector_b']} are not in the grid "
                f"(vector_a = vector_b in {_set(VECTORS)})")
    n = loads_per_lane(tm, tn, tk, wm, wn, spec["pipeline"], lw, v)
    if n > MAX_LOADS_PER_LANE:
        return (f"{n} global loads per load lane per K tile exceed the grid's budget of "
                f"{MAX_LOADS_PER_LANE}")
    return None


def plain_miss_reason(spec: dict) -> str | None:
    """Why the plain binary ``spec`` (split_k 1, no name_prefix) is not an AOT
    job, naming the first plain-grid axis it leaves; None when it is one."""
    tm, tn, v = spec["tile_m"], spec["tile_n"], spec["vector_a"]
    if tm not in TILE_SIDES or tn not in TILE_SIDES:
        return f"plain tile {tm}x{tn} is not in the grid (tile_m, tile_n in {_set(TILE_SIDES)})"
    want = plain_spec(spec["dtype"], tm, tn, v, spec["acc_epilogue"])
    for f in ("tile_k", "waves_m", "waves_n", "pipeline", "epilogue", "vector_b"):
        if spec[f] != want[f]:
            return f"plain jobs of tile {tm}x{tn} have {f} {want[f]}, not {spec[f]}"
    if v not in PLAIN_VECTORS:
        return f"plain vector {v} is not in the grid ({_set(PLAIN_VECTORS)})"
    n = candidate_loads(tm, tn, PLAIN_TILE_K, want["waves_m"], want["waves_n"], "mem", 1, v)
    budget = plain_budget(want["waves_m"], want["waves_n"])
    if n > budget:
        return f"{n} global loads per load lane per K tile exceed the plain jobs' budget of {budget}"
    return None


def reduce_miss_reason(spec: dict) -> str | None:
    """Why the reduce kernel ``spec`` is not an AOT job; None when it is one."""
    if spec["vector"] not in REDUCE_VECTORS:
        return f"reduce vector {spec['vector']} is not in the grid ({_set(REDUCE_VECTORS)})"
    if spec["threads"] != REDUCE_THREADS:
        return f"reduce threads {spec['threads']} is not in the grid ({REDUCE_THREADS})"
    if spec["degree"] not in REDUCE_DEGREES:
        return f"reduce degree {spec['degree']} is not in the grid ({_set(REDUCE_DEGREES)})"
    return None


def reduce_vector(K: int) -> int:
    """The reduce kernel's vector width for K output channels: the largest of
    :data:`REDUCE_VECTORS` that divides K (so every slab ``s*M*K`` starts on a
    vector boundary), else 1 (no AOT job)."""
    for v in REDUCE_VECTORS:
        if K % v == 0:
            return v
    return 1

"""Binary selection for one forward problem (docs/policy.md).
Twin: cpp_engine/src/policy/select.{h,cpp}.

In order: fold the width (:mod:`.fold`), resolve the degree on the folded
problem (:mod:`.split_k`), then pick

* the plain binary (the spec at ``split_k = 1``) when the degree is 1;
* a cluster binary when the spec asks for one (``split_k_cluster = S``), or,
  for ``split_k = -1``, when one is offered: flavor and arch have clusters,
  the spec's tile is one of :data:`aot.CLUSTER_TILES`, the problem has fewer
  than :data:`CLUSTER_MAX_TILES` output tiles (M tiles x N tiles x groups),
  a reduction of at least :data:`CLUSTER_MIN_REDUCTION` and K and kpg multiples
  of 4 (:func:`cluster_offer_reason`);
  among the AOT cluster binaries of that tile with S in
  :data:`aot.CLUSTER_SIZES` whose grid stays at or under the target, whose
  slices keep 2 K tiles on average and whose launch is admitted (trailing
  empty slices allowed), the one with the shortest slice ``ks`` (the least K
  work per workgroup), and among equal ``ks`` the smallest S (fewest empty
  slices, fewest workgroups);
* else the two-stage binary at the resolved degree, with the reduce kernel
  for its ``ks_count`` (unrolled when that degree is an AOT reduce job,
  else the run-time loop, degree 0) at the vector width
  :func:`aot.reduce_vector` of K.

Whether every chosen binary is an AOT job is answered with the job's hash,
or with the first grid axis the binary leaves (:func:`aot.conv_miss_reason`,
:func:`aot.reduce_miss_reason`).

The launch itself is admitted by :mod:`..kernels.conv_launch`; its reason, if
any, is part of the selection.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..kernels import conv_implicit_gemm as CIG
from ..kernels import conv_launch as LAUNCH
from ..kernels.conv_problem import ConvProblem
from ..spec.fields import SpecRejected
from ..targets.arch import has_wmma_16x16x32, processor_arch
from ..targets.flavors import find_flavor
from . import aot
from .fold import fold_width
from .identity import KernelIdentity
from .split_k import MIN_SLICE_KTILES, WG_PER_CU, Decision, resolve_conv_split_k

CLUSTER_MAX_TILES = 256       # offered only below this many output tiles
CLUSTER_MIN_REDUCTION = 1500  # ... over a reduction Kgemm of at least this
CLUSTER_K_MULTIPLE = 4        # ... and K and kpg multiples of 4 (the fold stores 4-channel quads)


def _ceil(a: int, b: int) -> int:
    return (a + b - 1) // b


@dataclass(frozen=True)
class Selection:
    fold: int
    problem: ConvProblem          # the folded problem (what the kernels run)
    decision: Decision            # the resolved degree and its rule
    binary: str                   # plain | two_stage | cluster | none
    cluster: str                  # why a cluster binary was or was not chosen
    spec: dict | None             # conv_implicit_gemm spec of the binary
    degree: int                   # the launch degree
    admission: str | None         # conv_launch's reason, None when admitted
    identity: KernelIdentity | None
    reduce_spec: dict | None
    reduce_identity: KernelIdentity | None
    aot: bool                     # every binary is an AOT job at this flavor
    aot_note: str                 # the job hashes (aot) or why no job serves the problem

    def launch_spec(self) -> dict:
        """The conv_launch spec of this selection (binary, folded problem, degree)."""
        p = self.problem
        return dict(self.spec, N=p.N, C=p.C, H=p.H, W=p.W, K=p.K, Y=p.Y, X=p.X, stride_h=p.stride_h,
                    stride_w=p.stride_w, pad_h=p.pad_h, pad_w=p.pad_w, dil_h=p.dil_h, dil_w=p.dil_w,
                    groups=p.groups, degree=self.degree)


def _launch(spec: dict, p: ConvProblem, degree: int) -> dict:
    return dict(spec, N=p.N, C=p.C, H=p.H, W=p.W, K=p.K, Y=p.Y, X=p.X, stride_h=p.stride_h,
                stride_w=p.stride_w, pad_h=p.pad_h, pad_w=p.pad_w, dil_h=p.dil_h, dil_w=p.dil_w,
                groups=p.groups, degree=degree)


def cluster_offer_reason(tm: int, tn: int, p: ConvProblem, ar, fl) -> str | None:
    """Why the cluster offer rule (the reference's) does not offer a cluster
    binary of tile ``tm x tn`` to the (folded) problem ``p``, or None when it
    does: flavor and arch have clusters, the tile is a cluster tile, fewer
    than :data:`CLUSTER_MAX_TILES` output tiles (M tiles x N tiles x groups),
    a reduction Kgemm of at least :data:`CLUSTER_MIN_REDUCTION`, and K and kpg
    multiples of :data:`CLUSTER_K_MULTIPLE` (4-channel output quads). The
    texts are the ``not offered: ...`` notes of ``select_binary``."""
    tiles = _ceil(p.M, tm) * _ceil(p.kpg, tn) * p.groups
    if not (fl.clusters and ar.clusters):
        return f"not offered: flavor {fl.canonical} / arch {ar.name} has no workgroup clusters"
    if (tm, tn) not in aot.CLUSTER_TILES:
        return f"not offered: tile {tm}x{tn} has no cluster binary"
    if tiles >= CLUSTER_MAX_TILES:
        return f"not offered: {tiles} output tiles (needs fewer than {CLUSTER_MAX_TILES})"
    if p.Kgemm < CLUSTER_MIN_REDUCTION:
        return f"not offered: reduction Kgemm {p.Kgemm} (needs at least {CLUSTER_MIN_REDUCTION})"
    if p.K % CLUSTER_K_MULTIPLE:
        return f"not offered: K {p.K} is not a multiple of {CLUSTER_K_MULTIPLE}"
    if p.kpg % CLUSTER_K_MULTIPLE:
        return f"not offered: kpg {p.kpg} is not a multiple of {CLUSTER_K_MULTIPLE}"
    return None


def _cluster(spec: dict, p: ConvProblem, ar, fl, cus: int) -> tuple:
    """(cluster spec or None, note)."""
    tm, tn = spec["tile_m"], spec["tile_n"]
    tiles = _ceil(p.M, tm) * _ceil(p.kpg, tn) * p.groups
    why = cluster_offer_reason(tm, tn, p, ar, fl)
    if why:
        return None, why
    target = WG_PER_CU * cus
    tk = aot.CLUSTER_TILE_K
    ktiles = _ceil(p.Kgemm, tk)
    best = None  # (ks, S, spec): the shortest slice, then the smallest S
    for s in aot.CLUSTER_SIZES:  # ascending
        if tiles * s > target or ktiles < MIN_SLICE_KTILES * s:
            continue
        cs = aot.conv_spec(spec["dtype"], tm, tn, tk, "cshuffle", 2, s)
        ks = _ceil(_ceil(p.Kgemm, s), tk) * tk
        if LAUNCH.validate(_launch(cs, p, s), ar, fl) is None and (best is None or ks < best[0]):
            best = (ks, s, cs)
    if best is None:
        return None, "offered, but no cluster size fits the target, the slices and admission"
    ks, s, cs = best
    return cs, (f"S {s}: {tiles} output tiles x {s} <= the target {target}, ks {ks} "
                f"({_ceil(p.Kgemm, ks)} of {s} slices carry data)")


def select_binary(spec: dict, problem: ConvProblem, arch, flavor, cus: int | None = None) -> Selection:
    """The binary, degree and reduce kernel for ``problem`` (see the module
    docstring). ``spec`` holds every conv_implicit_gemm field; ``split_k = -1``
    is auto."""
    ar = processor_arch(arch) if isinstance(arch, str) else arch
    fl = find_flavor(flavor) if isinstance(flavor, str) else flavor
    n_cus = ar.cus if cus is None else cus
    f, p = fold_width(problem)
    try:
        dec = resolve_conv_split_k("fwd", spec, p, ar, flavor=fl, cus=n_cus)
    except SpecRejected as e:  # an explicit cluster request this flavor/arch cannot build: no binary
        return Selection(f, p, Decision(1, "rejected", f"the cluster request is rejected: {e.reason}"), "none",
                         "-", None, 1, e.reason, None, None, None, False, "the binary is rejected")
    d = dec.degree
    note = "-"
    red = None
    if not has_wmma_16x16x32(ar):
        return Selection(f, p, dec, "none", note, None, 1,
                         CIG.validate(dict(spec, split_k=1, split_k_cluster=0), ar, fl), None, None, None, False,
                         f"arch {ar.name} has no AOT grid ({', '.join(aot.ARCHES)} only)")
    if spec["split_k"] != -1:
        bspec = dict(spec)
        kind = "cluster" if spec["split_k_cluster"] else "two_stage" if spec["split_k"] > 1 else "plain"
        degree = spec["split_k_cluster"] or spec["split_k"]
        if kind == "cluster":
            note = "given by the spec"
    elif d <= 1:
        kind, bspec, degree = "plain", dict(spec, split_k=1, split_k_cluster=0), 1
    elif spec["split_k_cluster"]:
        kind, bspec, degree = "cluster", dict(spec, split_k=d), d
        note = "given by the spec"
    else:
        cs = None
        if spec["split_k"] == -1:
            cs, note = _cluster(spec, p, ar, fl, n_cus)
        if cs is not None:
            kind, bspec, degree = "cluster", cs, cs["split_k_cluster"]
        else:
            kind, bspec, degree = "two_stage", dict(spec, split_k=d), d
    admission = LAUNCH.validate(_launch(bspec, p, degree), ar, fl)
    ident = KernelIdentity.of_conv(bspec, ar.name, fl.canonical) if CIG.validate(bspec, ar, fl) is None else None
    rident = None
    if kind == "two_stage" and admission is None:
        kc = _ceil(p.Kgemm, _ceil(_ceil(p.Kgemm, degree), bspec["tile_k"]) * bspec["tile_k"])
        red = aot.reduce_spec(bspec["dtype"], kc if kc in aot.REDUCE_DEGREES else 0, aot.reduce_vector(p.K),
                              bspec["acc_epilogue"])
        rident = KernelIdentity.of_reduce(red, ar.name, fl.canonical)
    hashes = aot.job_hashes(fl) if ar.name in aot.ARCHES else frozenset()
    in_aot = ident is not None and ident.hash() in hashes and (rident is None or rident.hash() in hashes)
    if in_aot:
        why = " ".join(i.hash() for i in (ident, rident) if i is not None)
    else:
        why = _aot_miss(ar, fl, bspec, ident, red)
    return Selection(f, p, dec, kind, note, bspec, degree, admission, ident, red, rident, in_aot, why)


def _aot_miss(ar, fl, bspec: dict, ident, red) -> str:
    """Why no AOT job serves this selection (the first binary and grid axis that miss)."""
    if ar.name not in aot.ARCHES:
        return f"arch {ar.name} has no AOT grid ({', '.join(aot.ARCHES)} only)"
    if ident is None:
        return "the binary is rejected"
    why = aot.conv_miss_reason(bspec, fl)
    if why is None and red is not None:
        why = aot.reduce_miss_reason(red)
    return why or "not in the grid"


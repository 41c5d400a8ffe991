"""The split-K degree policy of the forward convolution and its resolver
(docs/policy.md). Twin: cpp_engine/src/policy/split_k.{h,cpp}.

:func:`select_split_k_fwd` aims at :data:`WG_PER_CU` workgroups per CU. It
splits only an unsplit grid (M tiles x N tiles x groups) under half of that
target, over a reduction of at least :data:`MIN_REDUCTION`; the degree is the
largest power of two that keeps the grid at or under the target, at most
:data:`MAX_DEGREE`, and leaves each slice at least :data:`MIN_SLICE_KTILES` K
tiles; then it is held to the gridDim.z budget and to a workspace below 2^31
bytes; anything under 2 is 1. The result names the rule that decided it.

:func:`resolve_conv_split_k` turns a spec's ``split_k = -1`` (auto) into a
degree: the policy on arches that have the split form (gfx1250), 1 on other
arches, on pointwise problems and for any spec the split form rejects (or a
SpecRejected with ``raise_on_reject``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..kernels import conv_implicit_gemm as CIG
from ..kernels.conv_problem import ConvProblem
from ..spec.fields import SpecRejected
from ..targets.arch import ARCHES, has_wmma_16x16x32, processor_arch
from ..targets.flavors import find_flavor

WG_PER_CU = 8                 # target workgroups per CU
MIN_REDUCTION = 512           # split only a reduction Kgemm of at least this
MAX_DEGREE = 32
MIN_SLICE_KTILES = 2          # each slice keeps at least this many K tiles
GRID_Z_MAX = 65535            # HIP gridDim.z (conv_launch GRID_MAX)
WORKSPACE_LIMIT = 1 << 31     # fp32 workspace bytes must stay below this
# The flavor the resolver checks the split form at when none is given: the one
# that allows every feature (clusters), so only the spec and arch can reject.
DEFAULT_FLAVOR = "llvm23"
#: The arches the resolver gives the split form: the arch table's rows with the
#: 16x16x32 WMMA the kernels use (targets/arch.py ``has_wmma_16x16x32``), in
#: table order; the AOT grid's arches (policy/aot.py ``ARCHES``).
SPLIT_ARCHES = tuple(a.name for a in ARCHES if has_wmma_16x16x32(a))


def _ceil(a: int, b: int) -> int:
    return (a + b - 1) // b


@dataclass(frozen=True)
class Decision:
    """A resolved degree and the rule that decided it (``rule``: a stable id,
    ``detail``: the numbers behind it)."""

    degree: int
    rule: str
    detail: str

    def text(self) -> str:
        return f"degree {self.degree}\nrule {self.rule}: {self.detail}\n"


def select_split_k_fwd(M: int, kpg: int, groups: int, Kgemm: int, tile_m: int, tile_n: int, tile_k: int,
                       cus: int) -> Decision:
    """The split-K degree of a forward convolution on a device of ``cus`` CUs
    (all arguments >= 1)."""
    target = WG_PER_CU * cus
    tgt = f"the target {target} ({WG_PER_CU} per CU x {cus} CUs)"
    mt, nt = _ceil(M, tile_m), _ceil(kpg, tile_n)
    unsplit = mt * nt * groups
    if 2 * unsplit >= target:
        return Decision(1, "grid", f"unsplit grid {mt}x{nt}x{groups} = {unsplit} workgroups is not under half "
                                   f"of {tgt}")
    if Kgemm < MIN_REDUCTION:
        return Decision(1, "reduction", f"reduction Kgemm {Kgemm} is below {MIN_REDUCTION}")
    ktiles = _ceil(Kgemm, tile_k)
    p = 1
    while True:
        q = 2 * p
        if q > MAX_DEGREE:
            rule, detail = "cap", f"degree {p} is the largest allowed ({MAX_DEGREE})"
            break
        if unsplit * q > target:
            rule, detail = "target", (f"degree {q} would make the grid {unsplit * q} workgroups "
                                      f"(unsplit {unsplit}), over {tgt}")
            break
        if ktiles < MIN_SLICE_KTILES * q:
            rule, detail = "slice", (f"degree {q} would leave slices under {MIN_SLICE_KTILES} K tiles "
                                     f"(Kgemm {Kgemm} is {ktiles} K tiles of {tile_k})")
            break
        p = q
    while p > 1 and groups * p > GRID_Z_MAX:
        rule, detail = "grid_z", f"groups {groups} x degree {p} exceeds the gridDim.z budget {GRID_Z_MAX}"
        p //= 2
    K = kpg * groups
    while p > 1 and p * M * K * 4 >= WORKSPACE_LIMIT:
        rule, detail = "workspace", (f"degree {p} needs a workspace of {p * M * K * 4} bytes "
                                     f"(degree x M {M} x K {K} x 4), not below 2^31")
        p //= 2
    if p < 2:
        return Decision(1, rule, detail + "; a degree under 2 is 1")
    return Decision(p, rule, detail)


def _arch_row(arch):
    # any LLVM AMDGPU processor resolves (to degree 1 when it is not gfx1250); an unknown name raises
    a = processor_arch(arch) if isinstance(arch, str) else arch
    if a is None:
        raise SpecRejected(f"arch '{arch}' is not one of gfx1250, gfx942, gfx950, gfx1100, gfx1201")
    return a


def resolve_conv_split_k(direction: str, spec: dict, problem: ConvProblem, arch, raise_on_reject: bool = False,
                         *, flavor=None, cus: int | None = None, allow_unsplit: bool = True) -> Decision:
    """The degree ``spec["split_k"]`` stands for on ``problem``: the given value
    unless it is -1 (auto), else (in order) 1 on arches without the split form
    (``arch``: a row or any LLVM AMDGPU processor name, targets/arch.py
    ``processor_arch``; another name raises SpecRejected "arch '<name>' is not
    one of ..."),
    SpecRejected(reason) for an explicit cluster request (``split_k_cluster``
    > 0) whose split form the rules reject (e.g. a flavor without clusters:
    never built plain), 1 for a pointwise (1x1) problem, 1 for a spec whose
    split form (``split_k = 2``) the rules reject (raises SpecRejected(reason)
    instead with ``raise_on_reject``), the cluster size S of a cluster spec,
    else :func:`select_split_k_fwd` with the arch table's CU count (or
    ``cus``). With ``allow_unsplit=False`` every auto outcome of degree 1
    (arch, pointwise, rejected, grid, reduction, ...) raises
    SpecRejected("the split-K policy does not split (<rule>): <detail>")
    instead. ``spec`` holds every conv_implicit_gemm field; ``flavor`` (a name
    or row) defaults to :data:`DEFAULT_FLAVOR`."""
    d = _resolve(direction, spec, problem, arch, raise_on_reject, flavor, cus)
    if not allow_unsplit and spec["split_k"] == -1 and d.degree == 1:
        raise SpecRejected(f"the split-K policy does not split ({d.rule}): {d.detail}")
    return d


#: The reference design's rule for fused layers (kept verbatim by the seed policy):
#: the kernels split fused layers (Stage 2 / the cluster fold apply the epilogue,
#: docs/policy.md "Fused layers"), but the seed resolves them to 1 as the design we
#: follow does.
SEED_FUSED_REASON = "split-K needs the identity accumulator epilogue (it applies per slice), got '{}'"


def split_form_reason(spec: dict, ar, fl, seed_fused: bool = True) -> str | None:
    """Why the spec's split form (``split_k = 2``) may not be used, or None:
    conv_implicit_gemm's rules, with the seed's fused-layer rule
    (:data:`SEED_FUSED_REASON`, when ``seed_fused``) in the place the kernels'
    former split-K epilogue rule had (after split_k, before the cluster rules)."""
    if seed_fused and spec["acc_epilogue"] != "identity":
        early = CIG.validate(dict(spec, split_k=2, split_k_cluster=0, name_prefix=""), ar, fl)
        return early or SEED_FUSED_REASON.format(spec["acc_epilogue"])
    return CIG.validate(dict(spec, split_k=2), ar, fl)


def _resolve(direction, spec, problem, arch, raise_on_reject, flavor, cus) -> Decision:
    if direction != "fwd":
        raise SpecRejected(f"direction {direction!r} has no split-K policy (only fwd)")
    ar = _arch_row(arch)
    sk = spec["split_k"]
    if sk != -1:
        return Decision(sk, "given", f"split_k {sk} is given by the spec")
    if not has_wmma_16x16x32(ar):
        reason = f"arch {ar.name} has no split-K form (requires gfx1250)"
        if raise_on_reject:
            raise SpecRejected(reason)
        return Decision(1, "arch", reason)
    fl = find_flavor(flavor if flavor is not None else DEFAULT_FLAVOR) if not hasattr(flavor, "clusters") \
        else flavor
    if fl is None:
        raise SpecRejected(f"flavor '{flavor}' is not one of llvm20, llvm22, llvm23, llvm24")
    reason = split_form_reason(spec, ar, fl)
    if reason and spec["split_k_cluster"] > 0:
        raise SpecRejected(reason)  # an explicit cluster request is never built plain
    if problem.Y == 1 and problem.X == 1:
        return Decision(1, "pointwise", "a pointwise (1x1) problem is not split")
    if reason:
        if raise_on_reject:
            raise SpecRejected(reason)
        return Decision(1, "rejected", f"the split form is rejected: {reason}")
    s = spec["split_k_cluster"]
    if s:
        return Decision(s, "cluster", f"split_k_cluster {s} fixes the degree")
    n = ar.cus if cus is None else cus
    return select_split_k_fwd(problem.M, problem.kpg, problem.groups, problem.Kgemm, spec["tile_m"],
                              spec["tile_n"], spec["tile_k"], n)

"""The perf model: a gfx1250 roofline that predicts the time of a forward
convolution for every admitted candidate (tile x split-K degree x binary) and
selects the fastest (docs/perf_model.md; ties: less L2 traffic, fewer
workgroups, then candidate order).
Twin: cpp_engine/src/policy/perf_model.{h,cpp}.

Integer arithmetic only (cycles, bytes, picoseconds; every division rounds up
with :func:`_ceil`), so both engines print the same numbers. The constants are
the arch table's ``roofline`` column (targets/arch.py, with sources).

Candidates, in this order (the order breaks ties): per tile ``tile_m x
tile_n`` with both sides in :data:`aot.TILE_SIDES` (``tile_m`` outer) at the
default wave layout :func:`aot.waves`, the spec's ``tile_k``, pipeline,
epilogue, vectors, acc_epilogue and name_prefix:

1. ``plain`` (``split_k = 1``, degree 1);
2. ``two_stage`` at each degree d in :data:`DEGREES` (``split_k = d``, plus
   the Stage-2 reduce), admitted only when the launch has exactly d slices
   with data (``ceil(Kgemm / ks) == d``, so the degree IS the launched slice
   count) and each slice keeps at least ``MIN_SLICE_KTILES`` K tiles;
3. ``cluster`` at each S in :data:`aot.CLUSTER_SIZES` on the cluster tiles
   (the AOT cluster binary: tile_k 64, mem, cshuffle, 16-byte vectors), at
   flavors and arches with clusters; it launches exactly S slices.

Every candidate must pass conv_implicit_gemm's rules and conv_launch's
admission (LDS limit, grid limits, byte counts, vector widths, 4-wide
stores) and a register budget (at most :data:`MAX_LOADS_PER_LANE` global
loads per load lane per K tile, :func:`aot.loads_per_lane` at the narrower
vector: what keeps the kernels free of spills; a 128x64x32 tile at vector 1
spills); the split forms also need the spec's own split form
(``split_k = 2``) to be valid (no fused epilogue).

With ``rules=False`` (``--select model``) the seed's heuristics (grid target,
reduction >= 512, pointwise, the cluster offer) are not applied. With
``rules=True`` (the default selection of emit, layers and run) a candidate
must also be one the reference's rules admit (:func:`rules_admission`): a
two-stage candidate only where the split-K policy, evaluated at the
candidate's own tile, splits, and at a degree no larger than the policy's; a
cluster candidate only where the cluster offer rule holds
(:func:`select.cluster_offer_reason`: fewer than 256 output tiles, a
reduction of at least 1500, K and kpg multiples of 4), its S workgroups per
output tile stay within the policy's target and the policy splits at the
cluster tile; plain candidates always. Each admitted candidate carries the
rule that admitted it (``Candidate.rule``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..kernels import conv_implicit_gemm as CIG
from ..kernels import acc_epilogue
from ..kernels import conv_launch as LAUNCH
from ..kernels.conv_problem import ConvProblem
from ..targets.arch import find_arch, has_wmma_16x16x32
from ..targets.flavors import find_flavor
from . import aot
from .fold import fold_width
from .select import CLUSTER_K_MULTIPLE, CLUSTER_MAX_TILES, CLUSTER_MIN_REDUCTION, cluster_offer_reason, select_binary
from .split_k import MIN_SLICE_KTILES, WG_PER_CU, resolve_conv_split_k

DEGREES = (2, 4, 8, 16, 32)   # two-stage degrees tried (the reduce kernel's unrolled degrees)
ELEM_BYTES = 2                # bf16 / fp16
ACC_BYTES = 4                 # fp32 workspace element
WMMA_MN, WMMA_K = 16, 32      # v_wmma_f32_16x16x32_{bf16,f16}
PS_PER_US = 1_000_000         # cycles * PS_PER_US / MHz = picoseconds
# Global loads per load lane per K tile a candidate may issue (aot.loads_per_lane at
# the narrower vector): the largest a shipped kernel compiles spill-free (64x64x32 mem
# w2x2 at vector 1: 32, ResNet-50 conv1 in parity layers since issue 6); the smallest
# measured to spill is 40 (128x32x64 mem w1x1, docs/policy.md), and 128x64x32 at
# vector 1 (48) spills. (The AOT grid keeps to 16.)
MAX_LOADS_PER_LANE = 32
# A one-wave workgroup (waves 1x1) issues every load of the tile itself: 16x16x32 w1x1 at
# vector 1 (32 loads) spills 20-21 SGPRs under LLVM 22 (the issue-37 AOT build of the plain
# jobs, docs/aot.md "Plain jobs"); the largest one-wave candidate that built spill-free there
# is 30 (16x64 w1x1 vector 7). A measured compile fact, not a hardware one.
MAX_LOADS_ONE_WAVE = 30


def load_budget(waves_m: int, waves_n: int) -> int:
    """Global loads per load lane per K tile a candidate with ``waves_m`` x ``waves_n``
    waves may issue: :data:`MAX_LOADS_ONE_WAVE` for one wave, else :data:`MAX_LOADS_PER_LANE`."""
    return MAX_LOADS_ONE_WAVE if waves_m * waves_n == 1 else MAX_LOADS_PER_LANE


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Candidate:
    """One admitted candidate: ``index`` in candidate order, ``binary`` (plain,
    two_stage, cluster), the conv_implicit_gemm ``spec``, the launch
    ``degree`` (= launched slices) and the predicted ``terms`` (name -> int,
    in print order; ``total_ps`` is the prediction)."""

    index: int
    binary: str
    spec: dict
    degree: int
    terms: tuple
    rule: str = ""     # the rule that admitted it under rules=True ("" otherwise)

    @property
    def total_ps(self) -> int:
        return dict(self.terms)["total_ps"]

    def label(self) -> str:
        s = self.spec
        return (f"{self.binary} {s['tile_m']}x{s['tile_n']}x{s['tile_k']} w{s['waves_m']}x{s['waves_n']} "
                f"d{self.degree}")

    def line(self) -> str:
        return f"c{self.index} {self.label()} " + " ".join(f"{k}={v}" for k, v in self.terms)


@dataclass(frozen=True)
class ModelSelection:
    """:func:`select_by_model`'s answer. ``problem`` is the folded problem the
    kernels run; ``candidates`` the admitted ones in candidate order;
    ``best`` / ``runner_up`` the first two by :func:`_rank` (the lowest
    ``total_ps``; ties: less L2 traffic, fewer workgroups, the earlier
    candidate), None when there are none; ``seed`` the
    seed policy's selection (:func:`select.select_binary`) evaluated by the
    model, None when it selects nothing admitted (``seed_note`` says why)."""

    fold: int
    problem: ConvProblem
    cus: int
    tried: int
    candidates: tuple
    best: Candidate | None
    runner_up: Candidate | None
    seed: Candidate | None
    seed_note: str
    rules: bool = False   # candidates restricted to the reference's rules


def roofline(arch) -> dict:
    """The arch's roofline constants (name -> int); {} when it has none."""
    return dict(arch.roofline)


def predict(spec: dict, binary: str, degree: int, p: ConvProblem, arch, cus: int) -> tuple:
    """The predicted terms of one launch: ``((name, int), ...)``.

    ``spec`` is the conv_implicit_gemm spec, ``binary`` plain / two_stage /
    cluster, ``degree`` the launch degree (1 for plain; S for a cluster
    binary), ``p`` the (folded) problem, ``cus`` the CU count. The slicing is
    conv_launch's: ``ks = ceil(ceil(Kgemm/degree)/tile_k)*tile_k``, ``data =
    ceil(Kgemm/ks)`` slices with data, ``ks_count`` = S (cluster) or data.
    Formula: docs/perf_model.md."""
    r = roofline(arch)
    tm, tn, tk = spec["tile_m"], spec["tile_n"], spec["tile_k"]
    wm, wn = spec["waves_m"], spec["waves_n"]
    M, kpg, g, Kg, K = p.M, p.kpg, p.groups, LAUNCH.reduction(spec, p), p.K
    if binary == "plain":
        ks = _ceil(Kg, tk) * tk
        data = kc = 1
    else:
        ks = _ceil(_ceil(Kg, degree), tk) * tk
        data = _ceil(Kg, ks)
        kc = degree if binary == "cluster" else data
    mt, nt = _ceil(M, tm), _ceil(kpg, tn)
    wgs = mt * nt * g * kc
    waves = wm * wn
    all_waves = CIG.threads(spec) // aot.WAVE
    simds = r["simds_per_cu"]
    steps = tk // WMMA_K
    per_wave = (tm // (WMMA_MN * wm)) * (tn // (WMMA_MN * wn)) * steps
    wave_step = max(per_wave * r["wmma_cycles"], r["kstep_issue_cycles"] * steps)
    occupancy = max(1, min(arch.lds_bytes // CIG.lds_bytes(spec), simds * r["max_waves_per_simd"] // all_waves))
    wg_per_cu = _ceil(wgs, cus)
    conc = min(occupancy, wg_per_cu)
    rounds = _ceil(wg_per_cu, conc)
    per_simd = _ceil(conc * waves, simds)
    barrier = r["cluster_barrier_cycles"] if binary == "cluster" else 0
    compute_cycles = rounds * (per_simd * wave_step * (ks // tk) + barrier)
    wmma = mt * nt * g * (tm // WMMA_MN) * (tn // WMMA_MN) * _ceil(Kg, tk) * steps
    useful = g * _ceil(M, WMMA_MN) * _ceil(kpg, WMMA_MN) * _ceil(Kg, WMMA_K)
    d_bytes = M * K * ELEM_BYTES
    slab = M * K * ACC_BYTES
    if binary == "plain":
        writes, ws_reads = d_bytes, 0
    elif binary == "two_stage":
        writes, ws_reads = kc * slab, 0
    else:
        writes, ws_reads = kc * slab + d_bytes, kc * slab
    a_bytes = g * M * Kg * ELEM_BYTES * nt
    b_bytes = g * kpg * Kg * ELEM_BYTES * mt
    # the accumulator epilogue's reads (bias: fp32[K]) go to the kernel that applies
    # it: the plain kernel, the cluster fold (stage 1) or Stage 2
    epi_bytes = K * ACC_BYTES if acc_epilogue.has(spec["acc_epilogue"], "bias") else 0
    stage1_epi = 0 if binary == "two_stage" else epi_bytes
    l2_bytes = a_bytes + b_bytes + writes + ws_reads + stage1_epi
    hbm_bytes = p.x_elems() * ELEM_BYTES + p.w_elems() * ELEM_BYTES + writes + ws_reads + stage1_epi
    l2_cycles = _ceil(l2_bytes, r["l2_bytes_per_clk_per_cu"] * cus)
    compute_ps = _ceil(compute_cycles * PS_PER_US, r["clock_mhz"])
    l2_ps = _ceil(l2_cycles * PS_PER_US, r["clock_mhz"])
    hbm_ps = _ceil(hbm_bytes * PS_PER_US, r["hbm_bytes_per_us"])
    launch_ps = r["launch_ns"] * 1000
    body = max(compute_ps, l2_ps, hbm_ps)
    bound = "compute" if body == compute_ps else "l2" if body == l2_ps else "hbm"
    stage1_ps = launch_ps + body
    stage2_bytes = kc * slab + d_bytes + epi_bytes if binary == "two_stage" else 0
    stage2_ps = launch_ps + _ceil(stage2_bytes * PS_PER_US, r["hbm_bytes_per_us"]) if stage2_bytes else 0
    return (("ks", ks), ("ks_count", kc), ("data", data), ("wgs", wgs), ("occupancy", occupancy),
            ("rounds", rounds), ("wmma", wmma), ("useful", useful), ("compute_cycles", compute_cycles),
            ("l2_bytes", l2_bytes), ("hbm_bytes", hbm_bytes), ("compute_ps", compute_ps), ("l2_ps", l2_ps),
            ("hbm_ps", hbm_ps), ("bound", bound), ("stage1_ps", stage1_ps), ("stage2_ps", stage2_ps),
            ("total_ps", stage1_ps + stage2_ps))


def _launch(spec: dict, p: ConvProblem, degree: int) -> dict:
    return dict(spec, N=p.N, C=p.C, H=p.H, W=p.W, K=p.K, Y=p.Y, X=p.X, stride_h=p.stride_h,
                stride_w=p.stride_w, pad_h=p.pad_h, pad_w=p.pad_w, dil_h=p.dil_h, dil_w=p.dil_w,
                groups=p.groups, degree=degree)


#: Memos per (arch, flavor) row: ``{(id(ar), id(fl)): (ar, fl, {key: value})}`` (the
#: rows are held, so their ids stay theirs; ``fl`` None: the arch's own, for
#: :func:`_predicted`). The gate asks the same candidate again for other configs of
#: one problem (rules 0 and 1, other seeds, the other flavors); at most
#: :data:`_MEMO_MAX` values are kept per row.
_MEMO: dict = {}
_MEMO_MAX = 65536


def _memo(ar, fl) -> dict:
    """The memo dict of the (arch, flavor) row (see :data:`_MEMO`); emptied when full."""
    row = _MEMO.get((id(ar), id(fl)))
    if row is None or row[0] is not ar or row[1] is not fl:
        row = _MEMO[(id(ar), id(fl))] = (ar, fl, {})
    if len(row[2]) >= _MEMO_MAX:
        row[2].clear()
    return row[2]


def _problem_memo(ar, fl, p: ConvProblem) -> dict:
    """The memo of problem ``p`` in the (arch, flavor) row: its candidates' admissions
    (or, with ``fl`` None, predictions) by ``(binary, degree, spec items[, cus])``;
    a caller with many candidates of one problem fetches it once."""
    memo = _memo(ar, fl)
    d = memo.get(("problem", p))
    if d is None:
        d = memo[("problem", p)] = {}
    return d


def _admission(spec: dict, binary: str, degree: int, p: ConvProblem, ar, fl, per_p: dict | None = None) -> str | None:
    """Why a candidate is not admitted, or None (memoised: :func:`_admission_reason`;
    ``per_p``: :func:`_problem_memo` of ``p``, when the caller has it)."""
    if per_p is None:
        per_p = _problem_memo(ar, fl, p)
    try:
        key = (binary, degree, tuple(spec.items()))
        return per_p[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable spec value: not memoised
        return _admission_reason(spec, binary, degree, p, ar, fl)
    r = per_p[key] = _admission_reason(spec, binary, degree, p, ar, fl, _memo(ar, fl), per_p)
    return r


def _predicted(spec: dict, binary: str, degree: int, p: ConvProblem, ar, cus: int,
               per_p: dict | None = None) -> tuple:
    """:func:`predict`, memoised per arch (the prediction does not read the flavor;
    ``per_p``: :func:`_problem_memo` of ``p`` with no flavor, when the caller has it)."""
    if per_p is None:
        per_p = _problem_memo(ar, None, p)
    try:
        key = (binary, degree, cus, tuple(spec.items()))
        return per_p[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable spec value: not memoised
        return predict(spec, binary, degree, p, ar, cus)
    r = per_p[key] = predict(spec, binary, degree, p, ar, cus)
    return r


def _admission_reason(spec: dict, binary: str, degree: int, p: ConvProblem, ar, fl, memo=None,
                      per_p=None) -> str | None:
    """Why a candidate is not admitted, or None. ``memo`` (the dict of this arch
    and flavor) and ``per_p`` (its dict of problem ``p``) keep the parts that many
    candidates share: the binary's rules per spec (they do not read the problem),
    the problem's rules per problem."""
    launch = _launch(spec, p, degree)
    if memo is None or per_p is None:
        r = CIG.validate(spec, ar, fl) or LAUNCH.launch_reason(launch)
    else:
        k = ("rules", tuple(spec.items()))
        if k not in memo:
            memo[k] = CIG.validate(spec, ar, fl)
        if "problem" not in per_p:
            per_p["problem"] = (LAUNCH.problem_reason(launch), p)
        # conv_launch's admission minus the binary's rules, which the line runs first
        r = memo[k] or LAUNCH.launch_reason(launch, per_p["problem"])
    if r:
        return r
    tk = spec["tile_k"]
    v = min(spec["vector_a"], spec["vector_b"])   # a padded pixel: its slots, each in its pieces
    loads = aot.loads_per_lane(spec["tile_m"], spec["tile_n"], tk, spec["waves_m"], spec["waves_n"],
                               spec["pipeline"], spec["num_load_waves"], CIG.pixel_slot(v)) * len(CIG.pixel_pieces(v))
    budget = load_budget(spec["waves_m"], spec["waves_n"])
    if loads > budget:
        return f"{loads} global loads per load lane per K tile exceed the register budget {budget}"
    if binary == "plain":
        return None
    kr = LAUNCH.reduction(spec, p)
    ks = _ceil(_ceil(kr, degree), tk) * tk
    if binary == "two_stage" and _ceil(kr, ks) != degree:
        return f"degree {degree} launches {_ceil(kr, ks)} slices (ks {ks})"
    if _ceil(kr, tk) < MIN_SLICE_KTILES * degree:
        return f"degree {degree} leaves slices under {MIN_SLICE_KTILES} K tiles"
    return None


def rules_admission(binary: str, spec: dict, degree: int, p: ConvProblem, ar, fl, cus: int) -> tuple:
    """``(reason, None)`` when the reference's rules do not admit the
    candidate (``binary`` plain / two_stage / cluster, its conv_implicit_gemm
    ``spec``, launch ``degree``) on the (folded) problem ``p`` with ``cus``
    CUs, else ``(None, rule)``: the text naming the rule that admits it.
    Plain: always. Two-stage: the split-K policy (:func:`resolve_conv_split_k`
    at the candidate's tile, ``split_k = -1``, the identity epilogue: a fused
    layer is admitted by the unfused layer's rules) resolves to D >= 2 and
    ``degree <= D``. Cluster: :func:`select.cluster_offer_reason` holds, ``S *
    output tiles <= 8 * cus`` (the policy's target) and the policy splits at
    the cluster tile."""
    if binary == "plain":
        return None, "plain: the plain kernel is always admitted"
    tm, tn, tk = spec["tile_m"], spec["tile_n"], spec["tile_k"]
    tile = f"{tm}x{tn}x{tk}"
    # fused layers are admitted by the unfused rules (docs/policy.md "Fused layers")
    d = resolve_conv_split_k("fwd", dict(spec, split_k=-1, split_k_cluster=0, acc_epilogue="identity"), p, ar,
                             flavor=fl, cus=cus)
    if d.degree < 2:
        return f"the policy does not split at {tile} (rule {d.rule}: {d.detail})", None
    if binary == "two_stage":
        if degree > d.degree:
            return f"degree {degree} is over the policy's degree {d.degree} at {tile} (rule {d.rule})", None
        return None, f"policy: degree {degree} <= the policy's degree {d.degree} at {tile} (rule {d.rule})"
    why = cluster_offer_reason(tm, tn, p, ar, fl)
    if why:
        return f"cluster {why}", None
    tiles = _ceil(p.M, tm) * _ceil(p.kpg, tn) * p.groups
    target = WG_PER_CU * cus
    if tiles * degree > target:
        return f"cluster S {degree}: {tiles} output tiles x {degree} is over the target {target}", None
    return None, (f"cluster offer: {tiles} output tiles < {CLUSTER_MAX_TILES}, Kgemm {p.Kgemm} >= "
                  f"{CLUSTER_MIN_REDUCTION}, K {p.K} and kpg {p.kpg} multiples of {CLUSTER_K_MULTIPLE}, "
                  f"{tiles} x S {degree} <= the target {target}; the policy splits at {tile} "
                  f"(degree {d.degree}, rule {d.rule})")


def candidate_list(spec: dict, p: ConvProblem, ar, fl, rules_cus: int | None = None) -> list:
    """``[(binary, spec, degree, admission reason or None, rule), ...]`` in
    candidate order for the (folded) problem ``p`` (see the module
    docstring). With ``rules_cus`` (a CU count) the reference's rules
    (:func:`rules_admission`) also apply and ``rule`` names the one that
    admitted the candidate; else ``rule`` is ""."""
    out = []
    split_ok = CIG.validate(dict(spec, split_k=2, split_k_cluster=0), ar, fl) is None
    clusters = fl.clusters and ar.clusters
    per_p = _problem_memo(ar, fl, p)
    for tm in aot.TILE_SIDES:
        for tn in aot.TILE_SIDES:
            wm, wn = aot.waves(tm, tn)
            cs = dict(spec, tile_m=tm, tile_n=tn, waves_m=wm, waves_n=wn, split_k=1, split_k_cluster=0)
            out.append(("plain", cs, 1, _admission(cs, "plain", 1, p, ar, fl, per_p)))
            for d in DEGREES:
                s2 = dict(cs, split_k=d)
                why = _admission(s2, "two_stage", d, p, ar, fl, per_p) if split_ok else "the split form is rejected"
                out.append(("two_stage", s2, d, why))
            if clusters and (tm, tn) in aot.CLUSTER_TILES:
                for s in aot.CLUSTER_SIZES:
                    sc = dict(aot.conv_spec(spec["dtype"], tm, tn, aot.CLUSTER_TILE_K, "cshuffle", 2, s),
                              acc_epilogue=spec["acc_epilogue"])
                    why = _admission(sc, "cluster", s, p, ar, fl, per_p) if split_ok else "the split form is rejected"
                    out.append(("cluster", sc, s, why))
    if rules_cus is None:
        return [(b, s, d, why, "") for b, s, d, why in out]
    ruled = []
    for b, s, d, why in out:
        rule = ""
        if why is None:
            why, rule = rules_admission(b, s, d, p, ar, fl, rules_cus)
        ruled.append((b, s, d, why, rule or ""))
    return ruled


def _rank(c: Candidate) -> tuple:
    """The selection order: the lowest ``total_ps``; on a tie the least L2
    traffic (fewer re-reads: the larger tile of an HBM- or launch-bound
    layer), then the fewest workgroups, then the earlier candidate."""
    t = dict(c.terms)
    return c.total_ps, t["l2_bytes"], t["wgs"], c.index


def select_by_model(problem: ConvProblem, arch, flavor, spec: dict | None = None, cus: int | None = None,
                    rules: bool = False) -> ModelSelection:
    """Every admitted candidate of ``problem`` with its predicted time, the
    best (lowest ``total_ps``; ties: less L2 traffic, fewer workgroups, the
    earlier candidate), the runner-up and
    the seed policy's choice evaluated by the same model.

    ``problem``: the layer (unfolded; the width is folded here); ``arch`` /
    ``flavor``: names or rows; ``spec``: conv_implicit_gemm fields (default
    the family defaults; ``split_k`` / tile fields only steer the seed's
    choice; ``split_k`` defaults to -1, auto); ``cus``: the device's CU count (None or 0: the arch table's);
    ``rules``: only the candidates the reference's rules admit
    (:func:`rules_admission`). An arch without a roofline or without the
    16x16x32 WMMA has no candidates (``best`` None)."""
    ar = find_arch(arch) if isinstance(arch, str) else arch
    fl = find_flavor(flavor) if isinstance(flavor, str) else flavor
    base = {f.name: f.default for f in CIG.FIELDS}
    base["split_k"] = -1  # the seed's auto choice unless the spec says otherwise
    base.update(spec or {})
    n_cus = cus or ar.cus
    f, p = fold_width(problem)
    if not ar.roofline or not has_wmma_16x16x32(ar):
        return ModelSelection(f, p, n_cus, 0, (), None, None, None,
                              f"arch {ar.name} has no roofline (gfx1250 only)", rules)
    listed = candidate_list(base, p, ar, fl, n_cus if rules else None)
    pred = _problem_memo(ar, None, p)
    cands = tuple(Candidate(i, b, s, d, _predicted(s, b, d, p, ar, n_cus, pred), rule)
                  for i, (b, s, d, why, rule) in enumerate(listed) if why is None)
    ranked = sorted(cands, key=_rank)
    best = ranked[0] if ranked else None
    runner = ranked[1] if len(ranked) > 1 else None
    seed, note = None, "-"
    sel = select_binary(dict(base), problem, ar, fl, n_cus)
    if sel.binary == "none" or sel.admission is not None:
        note = f"the seed policy selects no admitted binary: {sel.admission or sel.decision.detail}"
    else:
        seed = Candidate(-1, sel.binary, sel.spec, sel.degree, predict(sel.spec, sel.binary, sel.degree,
                                                                          sel.problem, ar, n_cus))
    return ModelSelection(f, p, n_cus, len(listed), cands, best, runner, seed, note, rules)


def layer_predictions(problem: ConvProblem, arch="gfx1250", flavor="llvm23", spec: dict | None = None,
                      cus: int | None = None, rules: bool = False) -> list:
    """Per-candidate predictions of one layer as plain dicts (for reports such
    as ``parity perf``): ``[{"index", "binary", "tile_m", "tile_n", "tile_k",
    "waves_m", "waves_n", "degree", "selected", "runner_up", <every term>},
    ...]`` in candidate order; times in picoseconds, bytes in bytes."""
    ms = select_by_model(problem, arch, flavor, spec, cus, rules)
    out = []
    for c in ms.candidates:
        s = c.spec
        out.append({"index": c.index, "binary": c.binary, "tile_m": s["tile_m"], "tile_n": s["tile_n"],
                    "tile_k": s["tile_k"], "waves_m": s["waves_m"], "waves_n": s["waves_n"],
                    "degree": c.degree, "selected": ms.best is c, "runner_up": ms.runner_up is c,
                    **dict(c.terms)})
    return out

"""``parity emit``, ``parity layers`` and ``parity aot`` (docs/policy.md).

* ``parity emit [COMMAND | --catalog FILE] [--engine E] [--out DIR]`` — the
  emitter of :mod:`parity.catalog.emit` (either engine).
* ``parity layers [FILE]`` — for every layer of a catalog (default: the shipped
  ``parity/data/layers.txt``): resolve and emit with both engines and compare
  (the policy text, the launch plan, every kernel's bytes), verify each
  distinct kernel with the LLVM of the flavor, and run the numerics of a
  **scaled-down copy** of the layer (batch 1, at most 3x3 output pixels, at
  most 32 output channels per group, at most 2 groups, the channels per group
  cut to the smallest count the same binary admits at the same launch degree
  with a reduction of at least min(Kgemm, 512); a cluster binary launches
  ks_count = S, so its copy may have trailing empty slices) through the CPU emulator
  against the numpy reference of the original (unfolded) layout. One row per
  layer.
* ``parity aot [--flavor F] [--only X] [--emit DIR] [--check]`` — the AOT job grid: list
  every job with the C++ engine, or write ``DIR/<label>.ll`` and
  ``DIR/jobs.tsv``; ``--check`` also lowers each job with the Python engine and
  compares the bytes (and both engines' job lists).
"""
from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import replace

import numpy as np

from parity.sim import reference as ref
from parity.cli.common import add_compile_cache_option, add_options, counted, die, finish, integer, progress
from parity.catalog.emit import (DEFAULT_SELECT, aot_kernels, aot_text, SELECTIONS, EmitError, check_target, default_catalog, model_json, parse_plan,
                         plan_layer, rejected_text, select_layers, us_text)
from parity.base.escape import shown
from parity.base.input_files import MAX_LAYERS_CATALOG_BYTES
from parity.catalog.miopen import ProblemInputError, read_catalog
from parity.launch.reduce_launch import reduce_launch_reason
from parity.verify import lanes as L
from parity.verify.compile_worker import CompileWorkers
from python_engine.facts import REDUCE_DEGREES, ConvProblem, fold_width, reduce_spec
import python_engine

SCALE_M = 3          # output pixels per side of the scaled copy
SCALE_KPG = 32       # output channels per group
SCALE_GROUPS = 2      # groups of the copy of an even-grouped layer
SCALE_GROUPS_ODD = 3  # of an odd-grouped one (>= 3 groups)
SCALE_MIN_KGEMM = 512


# -- scaled-down copies -------------------------------------------------------------------

def _shrink(size: int, out: int, y: int, stride: int, pad: int, dil: int) -> int:
    """The smallest input size (<= size) giving min(out, SCALE_M) output positions."""
    want = min(out, SCALE_M)
    h = (want - 1) * stride + dil * (y - 1) + 1 - 2 * pad
    return min(size, max(h, 1))


def straddles(cpg: int, tile_k: int, Y: int, X: int) -> bool:
    """True when the K tiles of a (folded) problem straddle filter taps: the
    reduction runs over (y, x, c) with c fastest, so a tile of ``tile_k``
    reduction indices crosses into the next filter tap exactly when the
    channels per group are not a multiple of ``tile_k`` (and there is more
    than one tap)."""
    return Y * X > 1 and cpg % tile_k != 0


def _launch_ks_count(E, spec, lp) -> int:
    return parse_plan(E.lower("conv_launch", spec, lp.arch, lp.flavor).text)["ks_count"]


def scaled_problem(lp, E):
    """(scaled original problem, scaled folded launch spec, note) for the
    numerics of ``lp``: the same binary at the same launch degree, admitted by
    ``E``'s conv_launch, and, in this order of priority,

    1. the same launched slice count ``ks_count`` as the real plan (so the
       reduce kernel the policy paired with the real layer, unrolled for that
       count, is the one that runs);
    2. K tiles straddling filter taps exactly when the real folded layer's do
       (:func:`straddles`);
    3. a reduction of at least min(Kgemm, 512).

    Groups: 2 for an even group count, 3 for an odd one (>= 3), else 1. The
    channels per group are the fewest meeting all three; when no count keeps
    ``ks_count`` (never seen: the real channel count always does unless the
    fold changes), the note says the plan was re-resolved on the scaled
    problem."""
    p, f, cs = lp.layer.problem, lp.fold, lp.conv_spec
    H = _shrink(p.H, p.Ho, p.Y, p.stride_h, p.pad_h, p.dil_h)
    W = _shrink(p.W, p.Wo, p.X, p.stride_w, p.pad_w, p.dil_w)
    W = min(p.W, -(-W // f) * f)  # the fold must still apply
    G = SCALE_GROUPS if p.groups % SCALE_GROUPS == 0 else min(p.groups, SCALE_GROUPS_ODD)
    kpg = min(p.kpg, SCALE_KPG)
    v = math.lcm(cs["vector_a"], cs["vector_b"])
    u = v // math.gcd(v, f)
    degree = lp.launch_spec["degree"]
    need = p.Kgemm if cs["split_k"] == 1 else min(p.Kgemm, SCALE_MIN_KGEMM)
    rf = lp.folded
    real_kc = lp.plan["ks_count"]
    real_str = straddles(rf["C"] // rf["groups"], cs["tile_k"], rf["Y"], rf["X"])
    cands = list(range(u, p.cpg + 1, u)) or [p.cpg]
    best, best_score = None, None
    for cpg in cands + [p.cpg]:
        q = replace(p, N=1, H=H, W=W, groups=G, C=G * cpg, K=G * kpg)
        fq = fold_width(q)
        if fq[0] != f:
            continue
        fp = fq[1]
        spec = dict(cs, **{n: getattr(fp, n) for n in ("N", "C", "H", "W", "K", "Y", "X", "stride_h", "stride_w",
                                                       "pad_h", "pad_w", "dil_h", "dil_w", "groups")},
                    degree=degree)
        if E.validate("conv_launch", spec, lp.arch, lp.flavor) is not None:
            continue
        kc = _launch_ks_count(E, spec, lp)
        score = (kc == real_kc, straddles(fp.cpg, cs["tile_k"], fp.Y, fp.X) == real_str,
                 q.Kgemm >= min(need, p.Y * p.X * p.cpg))
        if all(score):
            return q, spec, ""
        if best_score is None or score > best_score:
            best, best_score = (q, spec, kc), score
    if best is None:
        raise RuntimeError(f"layer {lp.layer.name}: no scaled-down copy is admitted by the same binary")
    q, spec, kc = best
    notes = []
    if kc != real_kc:
        notes.append(f"plan re-resolved on the scaled problem: ks_count {kc} (real {real_kc})")
    if not best_score[1]:
        notes.append("K tiles straddle filter taps " + ("in the real layer only" if real_str else "in the copy only"))
    return q, spec, "; ".join(notes)


def problem_text(p) -> str:
    """``N1 3x3x80 K80 g1 Kgemm 720``: a problem as the rows print it."""
    return f"N{p.N} {p.H}x{p.W}x{p.C} K{p.K} g{p.groups} Kgemm {p.Kgemm}"


def fused_row(a, m: dict | None) -> dict | None:
    """For a fused layer (``acc_epilogue`` not identity): the selected form's predicted
    time against the fastest unsplit (plain) candidate of the same model run, and
    whether the selected binaries are AOT jobs; None for an unfused layer or
    without a model (``--select seed``)."""
    acc = a.conv_spec.get("acc_epilogue", "identity")
    if acc == "identity" or not m or not m["selected"]:
        return None
    plain = [ln.split() for ln in a.policy_text.splitlines()
             if ln[:1] == "c" and ln[1:2].isdigit() and ln.split()[1] == "plain"]
    best = min(plain, key=lambda w: int(next(t for t in w if t.startswith("total_ps=")).split("=")[1]),
               default=None)
    unsplit = int(next(t for t in best if t.startswith("total_ps=")).split("=")[1]) if best else None
    sel = m["selected"]["predicted_ps"]
    return {"acc_epilogue": acc, "selected": _label(m["selected"]), "selected_ps": sel,
            "unsplit": f"plain {best[2]} {best[3]} d1" if best else None, "unsplit_ps": unsplit,
            "gain": round(unsplit / sel, 3) if unsplit else None, "splits": m["selected"]["binary"] != "plain",
            "aot": a.policy["aot"]}


def run_numerics(lp, E, kernels_cache: dict) -> tuple:
    """(ok, detail) of the scaled-down copy in the emulator."""
    from parity.sim import Kernel  # numpy + emulator: off `parity check` start-up
    q, lspec, note = scaled_problem(lp, E)
    plan = parse_plan(E.lower("conv_launch", lspec, lp.arch, lp.flavor).text)
    dt = lp.conv_spec["dtype"]
    rng = np.random.default_rng(8)

    def rnd(shape):
        a = rng.standard_normal(shape)
        return ref.round_bf16(a) if dt == "bf16" else a.astype(np.float16).astype(np.float32)
    x = rnd((q.N, q.H, q.W, q.C))
    w = rnd((q.K, q.Y, q.X, q.cpg))
    kw = dict(groups=q.groups, stride=(q.stride_h, q.stride_w), padding=(q.pad_h, q.pad_w),
              dilation=(q.dil_h, q.dil_w))
    e = ref.conv_fwd(x, w, **kw)
    absum = ref.conv_abs_fwd(x, w, **kw)
    acc = lp.conv_spec.get("acc_epilogue", "identity")
    bias = rng.uniform(-1.0, 1.0, q.K).astype(np.float32) if ref.epilogue_has(acc, "bias") \
        else np.zeros(q.K, np.float32)
    scal = {"scale": 1.0, "clamp_lo": -3.0e38, "clamp_hi": 3.0e38, **lp.layer.scalars}
    e, _ = ref.epilogue_f64(acc, e, bias, scal)  # a fused layer: its epilogue once, after the sum
    tol = ref.conv_tolerance(dt, q.Kgemm, absum * abs(scal["scale"]), e)
    bufs = {"x": ref.cast_bits(x, dt), "w": ref.cast_bits(w, dt),
            "d": np.full(q.M * q.K, 0x7FC0 if dt == "bf16" else 0x7E00, np.uint16),
            "bias": bias,
            "ws": np.full(max(plan["workspace_bytes"] // 4, 1), np.nan, np.float32)}

    def args_of(lines):
        out = {}
        for name, val in lines:
            if isinstance(val, str) and val.startswith("buffer "):
                out[name] = bufs[val.split()[1]]
            elif val == "unused":
                out[name] = bufs["bias"] if name == "bias_ptr" else bufs["d"] if name == "d_ptr" else 0.0
            elif val == "caller":
                out[name] = scal[name]
            else:
                out[name] = val
        return out

    def kernel(text):
        k = kernels_cache.get(text)
        if k is None:
            k = kernels_cache[text] = Kernel(text, arch=lp.arch)
        return k
    stage1 = [k for k in lp.kernels if k[0] == "stage1"][0]
    kernel(stage1[5]).launch(tuple(plan["grid"]), plan["block"][0], args_of(plan["args"]))
    if plan["needs_stage2"]:
        red = [k for k in lp.kernels if k[0] == "reduce"][0]
        rs, rtext = red[2], red[5]
        if plan["ks_count"] != lp.plan["ks_count"]:  # re-resolved: the reduce kernel for the copy's slice count
            kc = plan["ks_count"]
            rs = reduce_spec(rs["dtype"], kc if kc in REDUCE_DEGREES else 0, acc_epilogue=acc)
            rtext = E.lower("conv_fwd_split_k_reduce", rs, lp.arch, lp.flavor).text
        why = reduce_launch_reason(rs, dict(plan["stage2_args"]))
        if why:
            raise RuntimeError(f"Stage 2 of the scaled copy refused: {why}")
        per = rs["threads"] * rs["vector"]
        kernel(rtext).launch((-(-q.M * q.K // per), 1, 1), rs["threads"], args_of(plan["stage2_args"]))
    bits = bufs["d"]
    got = (bits.astype(np.uint32) << np.uint32(16)).view(np.float32) if dt == "bf16" else bits.view(np.float16)
    got = got.astype(np.float64).reshape(e.shape)
    bad = ~(np.abs(got - e) <= tol)
    data = f" ({plan['data_slices']} with data)" if "data_slices" in plan else ""  # cluster: trailing empty slices
    rp = lp.layer.problem
    desc = (f"real {problem_text(rp)} ks_count {lp.plan['ks_count']}; scaled {problem_text(q)} ks_count "
            f"{plan['ks_count']}{data}" + (f"; {note}" if note else ""))
    if bad.any():
        return False, f"{int(bad.sum())} of {bad.size} outside the tolerance ({desc})"
    return True, desc


# -- verification -------------------------------------------------------------------------

def verify_kernels(items: dict, flavor: str, arch: str, jobs: int | None = None) -> dict:
    """hash -> (status, message) for {hash: (kernel, text)} with the LLVM of ``flavor``
    (``jobs`` compile processes, default the CPU count)."""
    st = L.statuses()[flavor]
    if not st.available:
        return {h: ("SKIP", f"lane {st.lane.name} missing: {st.problem}") for h in items}
    out = {}
    if st.lane.kind == L.OPT:
        for h, (_, text) in items.items():
            ok, err = L.run_opt_verify(text)
            out[h] = ("ok", "") if ok else ("FAIL", err.splitlines()[0] if err else "opt failed")
        return out
    row = next((dict(r) for r in python_engine.arch_table() if r["name"] == arch), None)
    cw = CompileWorkers(workers=jobs or os.cpu_count() or 1)
    keys = list(items)
    answers = cw.run([{"kind": "compile", "text": items[h][1], "kernel": items[h][0], "arch": arch,
                       "arch_row": row} for h in keys])
    for h, a in zip(keys, answers):
        desc = a.get("descriptors") or {}
        if not a.get("ok"):
            out[h] = ("FAIL", f"{a.get('stage')}: {a.get('error')}")
        elif a["report"].get("vgpr_spills") or a["report"].get("scratch_bytes"):
            out[h] = ("FAIL", f"spills: {a['report']}")
        elif desc.get("problems"):  # the compiled buffer descriptors against the arch table
            out[h] = ("FAIL", f"buffer descriptor: {desc['problems'][0]}")
        else:
            out[h] = ("ok", f"vgprs {a['report'].get('vgprs')}, {desc.get('checked', 0)} buffer descriptors checked")
    return out


# -- commands -----------------------------------------------------------------------------

def _engines():
    import cpp_engine  # cpp_engine: its import rebuilds the C++ library and can fail (parity/base/stale.py)
    return python_engine, cpp_engine


class _BothRejected(Exception):
    """Both engines rejected a layer with the same text (``error``: the Python engine's exception)."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _why(e) -> str:
    return str(e) if isinstance(e, EmitError) else e.reason


def _plan_both(py, cpp, layer, args) -> tuple:
    """Both engines' plans of ``layer``; _BothRejected when both reject it
    alike (the layer is bad input), the rejecting engine's exception when only
    one does or their texts differ (a parity failure: a RED row)."""
    outs = []
    for E in (py, cpp):
        try:
            outs.append(plan_layer(E, layer, args.arch, args.flavor, args.dtype, args.cus, select=args.select))
        except (EmitError, E.SpecRejected) as e:
            outs.append(e)
    a, b = outs
    if isinstance(a, Exception) and isinstance(b, Exception) and _why(a) == _why(b):
        raise _BothRejected(a)
    for x in outs:
        if isinstance(x, Exception):
            raise x
    return a, b


def _catalog_layers(py, args, path: str) -> list:
    """The selected layers of catalog ``path`` at ``args.flavor``; EmitError, OSError or
    ProblemInputError (bad input) when the target or the catalog is refused."""
    why = check_target(py, args.arch, args.flavor, args.cus)
    if why:
        raise EmitError(why)
    return select_layers(read_catalog(path, MAX_LAYERS_CATALOG_BYTES), args.only, shown(path))


def cmd_layers(args) -> int:
    """Every catalog given (default: the shipped one) at every flavor of ``--flavor F[,F..]``,
    one report each, in one process (CI's six runs share one start: docs/ci.md). Bad
    input in any of them: one error line before any report, exit 2. Exit 1 when any run
    is RED. ``--json`` takes one catalog at one flavor."""
    files = args.file or [default_catalog()]
    flavors = [f.strip() for f in args.flavor.split(",")] if args.flavor else [args.flavor]
    for what, given, same in (("--flavor: ", flavors, [_canonical(f) for f in flavors]),
                              ("catalog ", files, [os.path.realpath(f) for f in files])):
        i = next((i for i, x in enumerate(same) if x and x in same[:i]), None)
        if i is not None:
            first = given[same.index(same[i])]
            if first != given[i]:  # llvm23,llvm24: an alias folds into its canonical flavor
                alias, canon = (given[i], first) if _canonical(first) == first else (first, given[i])
                return die(f"{what}{shown(alias)} is an alias of {shown(_canonical(canon))}, and {shown(canon)} "
                           "is given too: the same report twice (name one of them)")
            return die(f"{what}{shown(given[i])} given twice (one report each: name it once)")
    runs = [argparse.Namespace(**{**vars(args), "file": f, "flavor": fl}) for f in files for fl in flavors]
    if len(runs) > 1 and args.json:
        return die(f"--json: takes one catalog at one flavor, got {len(files)} catalog(s) x {len(flavors)} "
                   "flavor(s); run them one at a time")
    if len(runs) > 1:
        for one in runs:
            try:
                _catalog_layers(python_engine, one, one.file)
            except (OSError, ProblemInputError, EmitError) as e:
                return die(str(e))
    status = 0
    for one in runs:
        status = max(status, _layers_run(one))
        if status == 2:
            break
    return status


def _canonical(flavor: str | None) -> str | None:
    """The canonical name of ``flavor`` (``llvm24`` -> ``llvm23``), or ``flavor`` itself
    when no flavor has that name (refused later, with the engine's reason)."""
    try:
        return python_engine.resolve_flavor(flavor) if flavor else flavor
    except python_engine.SpecRejected:
        return flavor


def _layers_run(args) -> int:
    """One ``parity layers`` report: catalog ``args.file`` at ``args.flavor``. Streams the
    layers (issue 39): a layer whose command (precision, problem, fusion) was planned before
    reuses that plan's row record, and what is kept is one :class:`_Row` per distinct
    command and one IR text per distinct kernel, never a layer's plans or either
    engine's IR (100,000 layers of a few distinct kernels: bench/layers_scale.py)."""
    py, cpp = _engines()
    path = args.file or default_catalog()
    try:
        layers = _catalog_layers(py, args, path)
    except (OSError, ProblemInputError, EmitError) as e:
        return die(str(e))
    t0 = time.perf_counter()
    recs: dict = {}   # command key -> _Row (one per distinct command)
    uniq: dict = {}   # kernel hash -> (kernel name, IR text) (one per distinct kernel)
    order = []        # per layer: (layer, _Row) or (layer, None, why) for a REJECTED row
    bar_cm = progress("layers", 2 * len(layers))
    bar = bar_cm.__enter__()
    try:
        for i, layer in enumerate(layers):
            key = _command_key(layer)
            if key not in recs:
                try:
                    a, b = _plan_both(py, cpp, layer, args)
                except _BothRejected as e:  # bad input: one line, exit 2, before any row
                    return die(rejected_text(e.error, layer, path, len(layers)))
                except (EmitError, py.SpecRejected, cpp.SpecRejected) as e:  # names the layer: never cached
                    order.append((layer, None, f"REJECTED: {shown(e if isinstance(e, EmitError) else e.reason)}"))
                    continue
                finally:
                    if bar:
                        bar(i + 1)
                recs[key] = _Row.of(a, b, args)
                for k in a.kernels:
                    uniq.setdefault(k[4]["hash"], (k[3], k[5]))
                del a, b
            elif bar:
                bar(i + 1)
            order.append((layer, recs[key]))
        first = next((x[1] for x in order if x[1] is not None), None)
        ver = verify_kernels(uniq, first.flavor, args.arch, args.jobs) \
            if first is not None and not args.no_verify else {}
        return _layers_rows(args, path, layers, order, ver, uniq, t0, py, bar)
    finally:
        bar_cm.__exit__(None, None, None)


def _command_key(layer) -> tuple:
    """What a layer's plans depend on besides the command-line options: everything but its name."""
    return (layer.dtype, layer.problem, layer.fusion)


class _Row:
    """What the rows of every layer with one command print, kept instead of its plans:
    small fields, the kernels' (hash, name) and the numerics result once it ran."""
    __slots__ = ("same", "flavor", "folded", "conv_tile", "m", "hashes", "deg", "launched", "binary", "kern",
                 "fz", "served", "aot_kernels", "aline", "jit_bad", "rule", "fold", "numerics")

    @classmethod
    def of(cls, a, b, args) -> "_Row":
        """The record of the Python engine's plan ``a`` (``b``: the C++ engine's, compared here)."""
        r = cls()
        r.same = (a.policy_text == b.policy_text and a.plan_text == b.plan_text
                  and [(k[3], k[5]) for k in a.kernels] == [(k[3], k[5]) for k in b.kernels])
        r.flavor, r.folded, r.binary = a.flavor, a.folded, a.binary
        r.conv_tile = (a.conv_spec["tile_m"], a.conv_spec["tile_n"])
        r.m = model_json(a.policy_text)
        r.hashes = [(k[4]["hash"], k[3]) for k in a.kernels]
        r.deg, r.launched = degree_columns(a)
        r.kern = a.kernels[0][3] + (" + reduce d" + str(a.kernels[1][2]["degree"]) if len(a.kernels) > 1 else "")
        r.fz = fused_row(a, r.m)
        r.served, r.jit_bad, r.aline = aot_row(a, getattr(args, "allow_jit", False))
        r.aot_kernels = aot_kernels(a)
        r.rule, r.fold, r.numerics = a.policy["rule"], a.fold, None
        return r


def _numerics(layer, rec: _Row, py, args, uniq: dict, cache: dict) -> tuple:
    """(ok, detail) of ``layer``'s scaled copy: run once per distinct command (the plan
    re-made by the Python engine, its kernels' IR taken from ``uniq``); a failure that
    raised is not kept (its text may name the layer)."""
    if rec.numerics is not None:
        return rec.numerics
    try:
        lp = plan_layer(py, layer, args.arch, args.flavor, args.dtype, args.cus, select=args.select, lower=False)
        lp.kernels = [(r, f, s, n, i, uniq[i["hash"]][1]) for r, f, s, n, i, _ in lp.kernels]
        rec.numerics = run_numerics(lp, py, cache)
        return rec.numerics
    except Exception as e:  # noqa: BLE001 - an emulator or plan failure is a failing row
        return False, f"{type(e).__name__}: {e}"


def _label(c: dict) -> str:
    """``plain 16x64x32 w1x2 d1``: a model candidate as the rows print it."""
    return f"{c['binary']} {c['tile']} w{c['waves']} d{c['degree']}"


def degree_columns(a) -> tuple:
    """``(policy, launch)`` of a layer's row: the degree the selection resolved
    (the seed policy's degree, or the perf model's selected degree) and the
    degree the plan launches (the cluster size S, or the two-stage ``ks_count``;
    1 for plain), one meaning per column (issue 37)."""
    return a.policy["degree"], str(a.plan["ks_count"] if a.binary != "plain" else 1)


def aot_row(a, allow_jit: bool) -> tuple:
    """``(served, failing, line)`` of a layer's AOT check: every kernel an AOT
    job, or the layer fails unless ``allow_jit`` (``parity layers --allow-jit``)."""
    ks = aot_kernels(a)
    served = all(ok for _, ok, _ in ks)
    return served, not served and not allow_jit, f"    aot: {aot_text(a)}" + (
        "" if served or allow_jit else " (error: outside the AOT grid; --allow-jit accepts it)")


def _layers_rows(args, path, layers, order, ver, uniq, t0, py, bar) -> int:
    """Print the header, one row per planned layer (catalog order), the REJECTED rows, the
    totals; the exit status (``--json``: the report, one row dict per layer)."""
    cache: dict = {}
    tot = {"model": 0, "seed": 0, "changed": 0, "aot": 0, "failing": 0, "planned": 0}
    print(f"parity layers: {shown(path)} ({counted(len(layers), 'layer')}, {args.arch} {args.flavor}); numerics run on a "
          f"SCALED-DOWN copy of each layer (batch 1, <= {SCALE_M}x{SCALE_M} output pixels, <= {SCALE_KPG} output "
          f"channels per group, {SCALE_GROUPS} groups if even, <= {SCALE_GROUPS_ODD} if odd, channels per group cut "
          f"to the fewest the same binary admits at the same degree with the real ks_count, K tiles straddling "
          f"filter taps as the real layer's, Kgemm >= min(Kgemm, {SCALE_MIN_KGEMM})), not the full layer; "
          f"each row's numerics line names the real and the scaled problem")
    hdr = f"{'layer':34s} {'M':>7s} {'Kgemm':>6s} {'unsplit':>12s} {'pol':>3s} {'lch':>3s} {'binary':9s} {'engines':9s} " \
          f"{'verify':7s} {'numerics':8s} kernel"
    print(hdr)
    out_rows = [] if args.json else None
    planned = [x for x in order if x[1] is not None]
    for j, (layer, rec) in enumerate(planned):
        if bar:
            bar(len(layers) + j + 1)
        _layer_row(args, layer, rec, ver, uniq, cache, py, tot, out_rows)
    for layer, _, why in (x for x in order if x[1] is None):
        print(f"{layer.name:34s} {why}")
        tot["failing"] += 1
        if out_rows is not None:
            out_rows.append({"layer": layer.name, "ok": False, "error": why})
    secs = time.perf_counter() - t0
    n_plans, n_aot, failures = len(planned), tot["aot"], tot["failing"]
    if tot["model"]:
        print(f"predicted total (perf model, docs/perf_model.md): model choice {us_text(tot['model'])}, seed "
              f"policy's choice {us_text(tot['seed'])} ({tot['changed']} of {counted(n_plans, 'layer')} "
              f"choose{'s' if n_plans == 1 else ''} differently)")
    fl = planned[0][1].flavor if planned else args.flavor
    print(f"AOT-served: {n_aot} of {counted(len(layers), 'layer')} at {fl} (--select {args.select})"
          + ("" if n_aot == len(layers) or getattr(args, "allow_jit", False) else
             f"; error: {len(layers) - n_aot} layer(s) outside the AOT grid (--allow-jit accepts them)"))
    print(f"{counted(len(layers), 'layer')}, {counted(len(uniq), 'distinct kernel')}, {secs:.1f} s; "
          f"RESULT: {'GREEN' if not failures else 'RED'} ({failures} failing)")
    return finish(args, "layers", not failures,
                  {"catalog": path, "arch": args.arch, "flavor": py.resolve_flavor(args.flavor),
                   "layers": out_rows, "failing": failures, "distinct_kernels": len(uniq), "aot_served": n_aot,
                   "predicted_ps": {"model": tot["model"], "seed": tot["seed"], "changed": tot["changed"]},
                   "seconds": round(secs, 3)})


def _layer_row(args, layer, rec: _Row, ver, uniq, cache, py, tot: dict, out_rows: list | None) -> None:
    """Print one planned layer's row and its detail lines; add to the totals ``tot`` and
    (``--json``) to ``out_rows``."""
    p = layer.problem
    fp = ConvProblem(**rec.folded)
    tm = rec.conv_tile[0] if args.tile is None else args.tile
    tn = rec.conv_tile[1] if args.tile is None else args.tile
    unsplit = f"{-(-fp.M // tm)}x{-(-fp.kpg // tn)}x{fp.groups}"
    m = rec.m
    if m and m["selected"]:
        tot["model"] += m["selected"]["predicted_ps"]
        if m["seed"]:
            tot["seed"] += m["seed"]["predicted_ps"]
            tot["changed"] += _label(m["seed"]) != _label(m["selected"])
    vs = [ver.get(h, ("-", "not verified")) for h, _ in rec.hashes]
    v_ok = all(s == "ok" for s, _ in vs)
    vtxt = "ok" if v_ok else ("SKIP" if all(s in ("SKIP", "-") for s, _ in vs) else "FAIL")
    if args.no_numerics:
        n_ok, ndet = True, "skipped"
        ntxt = "-"
    else:
        n_ok, ndet = _numerics(layer, rec, py, args, uniq, cache)
        ntxt = "ok" if n_ok else "FAIL"
    tot["aot"] += rec.served
    bad = not rec.same or vtxt == "FAIL" or not n_ok or (vtxt == "SKIP" and not args.no_verify) or rec.jit_bad
    tot["failing"] += bad
    print(f"{layer.name:34s} {p.M:7d} {p.Kgemm:6d} {unsplit:>12s} {rec.deg:>3s} {rec.launched:>3s} {rec.binary:9s} "
          f"{'IDENTICAL' if rec.same else 'DIFFER':9s} {vtxt:7s} {ntxt:8s} {rec.kern}")
    fz = rec.fz
    print(rec.aline)
    if out_rows is not None:
        out_rows.append({"layer": layer.name, "M": p.M, "Kgemm": p.Kgemm, "degree": int(rec.deg),
                         "launched_degree": int(rec.launched), "aot": rec.served,
                         "aot_kernels": [{"role": r, "aot": ok, "served_by": t} for r, ok, t in rec.aot_kernels],
                         "binary": rec.binary,
                         "engines": "IDENTICAL" if rec.same else "DIFFER", "verify": vtxt, "numerics": ntxt,
                         "numerics_detail": ndet, "kernels": [n for _, n in rec.hashes], "model": m,
                         **({"fused": fz} if fz else {}), "ok": not bad})
    if m and m["selected"]:
        sd = m["seed"]
        ru = m["runner_up"]
        print(f"    model: {_label(m['selected'])} {us_text(m['selected']['predicted_ps'])}; runner-up "
              + (f"{_label(ru)} {us_text(ru['predicted_ps'])}" if ru else "none")
              + f"; seed {_label(sd) + ' ' + us_text(sd['predicted_ps']) if sd else 'none'}")
    if fz:
        print(f"    fused {fz['acc_epilogue']}: {'splits' if fz['splits'] else 'does not split'}: "
              f"{fz['selected']} {us_text(fz['selected_ps'])} vs unsplit "
              + (f"{fz['unsplit']} {us_text(fz['unsplit_ps'])} ({fz['gain']}x)" if fz["unsplit"] else "none")
              + f"; aot {fz['aot']}")
    if args.verbose or bad:
        print(f"    rule {rec.rule}; fold {rec.fold}; numerics: {ndet}")
    elif not args.no_numerics:
        print(f"    numerics: {ndet}")
        for (s, msg), (_, name) in zip(vs, rec.hashes):
            if s != "ok" or args.verbose:
                print(f"    verify {name}: {s} {msg}")


def add_command(sub) -> None:
    """``parity layers`` on the ``parity`` subparsers (parity/app/main.py)."""
    la = sub.add_parser("layers", help="resolve, emit with both engines, compare, verify and run numerics "
                                       "(scaled down) for every layer of a catalog")
    la.add_argument("file", nargs="*", help="catalog file(s) (default: parity/data/layers.txt); "
                                            "several: one report each, in one process")
    la.add_argument("--arch", default="gfx1250", help="the target arch (default gfx1250)")
    la.add_argument("--dtype", choices=("bf16", "fp16"),
                    help="the precision of plain 'conv' (fp32) layers; convbfp16/convfp16 layers keep theirs")
    la.add_argument("--cus", type=integer("--cus"), default=0,
                    help="the device's CU count (default 0: the arch table's)")
    la.add_argument("--select", default=DEFAULT_SELECT, choices=SELECTIONS,
                    help="seed (default): the reference's measured split-K policy on the 64x64 tile "
                         "(docs/policy.md); model: the perf model's choice among every admitted candidate "
                         "(docs/perf_model.md); rules: the perf model among the candidates the reference's "
                         "rules admit")
    la.add_argument("--tile", type=integer("--tile", lo=1), default=None, help=argparse.SUPPRESS)
    la.add_argument("--no-verify", action="store_true", help="skip LLVM verification")
    la.add_argument("--no-numerics", action="store_true", help="skip the emulator")
    la.add_argument("--allow-jit", action="store_true",
                    help="accept a layer whose selection falls outside the AOT grid (compiled at run time); "
                         "without it such a layer fails")
    la.add_argument("-v", "--verbose", action="store_true",
                    help="every layer's rule, fold and numerics line, and every kernel's verify line")
    add_options(la, only="layers", flavor=True, flavor_default="llvm23", jobs=True, json=True,
                timeout=False, engines=False)
    add_compile_cache_option(la)
    for a in la._actions:
        if "--flavor" in a.option_strings:
            a.metavar = "F[,F..]"
            a.help = "flavor(s), comma-separated: one report each, " + a.help
    la.set_defaults(func=cmd_layers)

"""``parity run``: one MIOpen-style forward convolution layer
on a gfx1250 — random inputs, run, compare with the numpy reference
(parity/sim/reference.py) of the original (unfolded) layer, time repeated
launches with events (median), print the achieved TFLOP/s.

    parity run [MIOpenDriver] convbfp16|convfp16 -n N -c C -H H -W W -k K -y Y -x X [...]
                                [--split-k -1|auto|0|N] [--split-k-degrees LIST] [--cluster S] [--tile MxNxK]
                                [--waves MxN] [--epilogue default|cshuffle] [--select seed|model|rules]
                                [--flavor F] [--cus N] [-i N] [-V 0|1]
                                [--warmup N] [--seed N] [--cache-dir DIR] [--aot-manifest PATH] [--build-only]

The layer is one MIOpenDriver command, as words or as one quoted string,
read by the one MIOpen parser (:mod:`parity.catalog.miopen`, the same as
``emit``: ``-n -c -H -W -k -y -x`` required, pad 0, stride 1, dilation 1,
1 group by default; ``-i`` and ``-V`` are MIOpenDriver's iteration count and
verify switch). The kernel is resolved exactly as ``emit`` resolves it
(:func:`parity.catalog.emit.plan_layer`: width folding, the split-K degree,
the binary, vector widths, the reduce kernel; with ``--split-k auto`` the
selection of ``--select`` as in emit, by default the reference's policy);
``--split-k``, ``--cluster``, ``--tile`` and ``--waves`` override that
choice (the seed policy then resolves the rest on the given tile),
``--epilogue`` is kept by every candidate. ``--split-k`` as in the
reference's benchmark (docs/runtime.md): ``-1`` (the default, issue 37) launches the split-K
binary at the policy's resolved degree and skips the layer (exit 0) where
the policy does not split; ``0`` sweeps the degrees of
``--split-k-degrees`` (default 2,4,8,16) plus the resolved one, one timed
loop per degree; ``N`` pins the degree N. Each timed loop binds both
stages' arguments once.
Failures (a bad flag, no GPU, no hip-python, no linker, a rejected launch)
print one ``error:`` line and exit 2; no traceback.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys

from parity.catalog.miopen import ProblemInputError, decimal_int
from . import CodeObjectCache, ConvRun, Hip, RuntimeFailure, check_output, find_gfx1250, random_inputs
from parity.catalog.emit import DEFAULT_SELECT, SELECTIONS, EmitError, aot_text, check_target, plan_layer
from parity.catalog.miopen import parse_command_line
from parity.base.outputs import ensure_dir
from .codeobj import default_cache_dir
from parity.launch.plan import launch_plan
from parity.cli.common import Parser, add_version, integer, plain, progress
from parity.cli.help import epilog
from parity.base.escape import shown
from python_engine.spec.fields import SpecRejected
import python_engine as E

ARCH = "gfx1250"
SWEEP_DEGREES = (2, 4, 8, 16)   # --split-k 0 without --split-k-degrees
# run's own options: name -> number of values (everything else is the MIOpenDriver command)
RUN_OPTIONS = {"--split-k": 1, "--split-k-degrees": 1, "--select": 1, "--cluster": 1, "--tile": 1, "--waves": 1, "--epilogue": 1, "--flavor": 1,
               "--cus": 1, "-i": 1, "--iter": 1, "-V": 1, "--verify": 1, "--warmup": 1, "--seed": 1,
               "--cache-dir": 1, "--aot-manifest": 1, "--build-only": 0, "-h": 0, "--help": 0, "--version": 0}


class UsageError(ValueError):
    """A bad run option (the message names the flag)."""

def _parser() -> argparse.ArgumentParser:
    doc = plain(__doc__).split("\n\n")
    p = Parser(prog="parity run", usage=doc[1].strip().split("run ", 1)[1],
               description=doc[0] + "\n\n" + doc[2], allow_abbrev=False, epilog=epilog("run"),
               formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(p)
    p.usage = "parity run " + p.usage
    a = p.add_argument
    a("--split-k", metavar="-1|auto|0|N", default=None,
      help="-1 (default, as the reference's benchmark): the split-K binary at the policy's resolved degree "
           "(an AOT job), skip the layer where the policy does not split; auto: the selection of --select; "
           "0: sweep --split-k-degrees plus the policy's degree; "
           "N >= 1: pin degree N (1 = the plain kernel)")
    a("--split-k-degrees", metavar="LIST", default=None,
      help=f"comma-separated degrees >= 1 for --split-k 0 (default {','.join(map(str, SWEEP_DEGREES))})")
    a("--select", default=DEFAULT_SELECT, metavar="seed|model|rules",
      help="the selection of --split-k auto: seed (default), model or rules, as in emit")
    a("--cluster", metavar="S", default=None, help="cluster split-K with S slices (llvm23, gfx1250)")
    a("--tile", metavar="MxNxK", default=None, help="tile_m x tile_n x tile_k (default: the perf model's choice)")
    a("--waves", metavar="MxN", default=None, help="waves_m x waves_n (default 2x2)")
    a("--epilogue", default=None, choices=("default", "cshuffle"))
    a("--flavor", default="llvm23")
    a("--cus", type=integer("--cus"), default=0, help="the device's CU count for the policy (default 0: the arch table's)")
    a("-i", "--iter", type=integer("--iter"), default=20, help="timed launches (median reported)")
    a("-V", "--verify", type=integer("--verify"), default=1, help="1 = compare with the numpy reference")
    a("--warmup", type=integer("--warmup"), default=3)
    a("--seed", type=integer("--seed"), default=0)
    a("--cache-dir", default=None, help="code object cache (default $SPLITK_CODE_OBJECT_CACHE or ~/.cache)")
    a("--aot-manifest", default=None, metavar="PATH",
      help="load kernels from this AOT manifest (parity aot --build) instead of compiling them")
    a("--build-only", action="store_true", help="build the code objects and print the plan; no GPU needed")
    return p


def split_argv(argv) -> tuple:
    """``(run options, MIOpenDriver words)``: run's own options (:data:`RUN_OPTIONS`,
    also as ``--opt=value``) and everything else, in order."""
    opts, words = [], []
    argv = list(argv)
    i = 0
    while i < len(argv):
        tok = argv[i]
        key = tok.split("=", 1)[0] if tok.startswith("--") else tok
        n = RUN_OPTIONS.get(key)
        if n is None:
            words.append(tok)
            i += 1
            continue
        take = 1 if "=" in tok and tok.startswith("--") else 1 + n
        if i + take > len(argv):
            raise UsageError(f"{key} needs a value")
        opts += argv[i:i + take]
        i += take
    return opts, words


def _ints(flag: str, text: str, n: int, example: str) -> list:
    parts = text.split("x")
    try:
        vals = [decimal_int(flag, v) for v in parts]
    except ProblemInputError:
        vals = []
    if len(vals) != n or any(v < 1 for v in vals):
        raise UsageError(f"{flag} must be {n} positive integers joined by x (e.g. {example}), got {text!r}")
    return vals


def overrides(ns) -> dict:
    """The kernel-choice options as conv_implicit_gemm spec fields for :func:`plan_layer`
    (``split_k = -1``: the policy decides)."""
    spec: dict = {}
    if ns.cluster is not None:
        if ns.split_k is not None:
            raise UsageError("give --split-k or --cluster, not both (a cluster of S slices is degree S)")
        try:
            s = decimal_int("--cluster", ns.cluster)
        except ProblemInputError:
            s = 0
        if s < 2:
            raise UsageError(f"--cluster must be a slice count >= 2, got {ns.cluster!r}")
        spec.update(split_k=s, split_k_cluster=s)  # given: refused, never silently replaced
    elif split_mode(ns) in ("auto", "policy", "sweep"):
        spec.update(split_k=-1, split_k_cluster=0)
    else:
        spec.update(split_k=split_mode(ns), split_k_cluster=0)
    if ns.tile is not None:
        spec.update(zip(("tile_m", "tile_n", "tile_k"), _ints("--tile", ns.tile, 3, "64x64x32")))
    if ns.waves is not None:
        spec.update(zip(("waves_m", "waves_n"), _ints("--waves", ns.waves, 2, "2x2")))
    if ns.epilogue is not None:
        spec["epilogue"] = ns.epilogue
    return spec


def split_mode(ns):
    """``"auto"``, ``"policy"`` (-1), ``"sweep"`` (0) or the pinned degree N >= 1
    of ``--split-k`` (UsageError for anything else)."""
    if ns.split_k == "auto":
        return "auto"
    text = ns.split_k if ns.split_k is not None else "-1"  # the default (issue 37): the reference's -1
    try:
        d = -decimal_int("--split-k", text[1:]) if text.startswith("-") else decimal_int("--split-k", text)
    except ProblemInputError:
        d = -2
    if d < -1:
        raise UsageError(f"--split-k must be auto, -1 (the policy's degree), 0 (a sweep) or a degree >= 1 "
                         f"(1 = no split), got '{shown(ns.split_k)}'")
    return "policy" if d == -1 else "sweep" if d == 0 else d


def sweep_degrees(ns) -> list:
    """The degrees of ``--split-k-degrees`` (default :data:`SWEEP_DEGREES`), in order, without repeats."""
    if ns.split_k_degrees is None:
        return list(SWEEP_DEGREES)
    out = []
    for part in ns.split_k_degrees.split(","):
        try:
            d = decimal_int("--split-k-degrees", part.strip(" "))
        except ProblemInputError:
            d = 0
        if d < 1:
            raise UsageError(f"--split-k-degrees must be degrees >= 1 joined by commas (e.g. 2,4,8), "
                             f"got '{shown(ns.split_k_degrees)}'")
        if d not in out:
            out.append(d)
    return out


def parse_layer(words):
    """The layer of the MIOpenDriver words (or one quoted command) with the MIOpen parser."""
    if not words:
        raise ProblemInputError("no layer: give one MIOpenDriver command, e.g. convbfp16 -n 1 -c 64 -H 56 "
                                "-W 56 -k 64 -y 3 -x 3 -p 1 -q 1")
    line = words[0] if len(words) == 1 else " ".join(shlex.quote(w) for w in words)
    layer = parse_command_line(line)
    if layer.dtype == "fp32":
        raise ProblemInputError(f"command 'conv' is fp32: this runtime builds bf16 and fp16 kernels "
                                f"(use convbfp16 or convfp16)")
    return layer


def resolve(argv):
    """``(namespace, layer, LayerPlan)`` of a run command line: the layer with the MIOpen
    parser, the kernel as ``emit`` resolves it with run's overrides."""
    opts, words = split_argv(argv)
    ns = _parser().parse_args(opts)
    layer = parse_layer(words)
    spec = overrides(ns)
    why = check_target(E, ARCH, ns.flavor, ns.cus)
    if why:
        raise UsageError(why)
    if ns.select not in SELECTIONS:
        raise UsageError(f"--select must be one of {', '.join(SELECTIONS)}, got '{shown(ns.select)}'")
    if ns.split_k_degrees is not None and split_mode(ns) != "sweep":
        raise UsageError("--split-k-degrees needs --split-k 0 (the sweep)")
    given = spec.get("split_k", -1) != -1 or "tile_m" in spec or "waves_m" in spec or \
        split_mode(ns) in ("policy", "sweep")
    return ns, layer, plan_layer(E, layer, ARCH, ns.flavor, None, ns.cus, spec=spec, lower=False,
                                 select="seed" if given else ns.select)


def resolve_runs(argv):
    """``(namespace, layer, [(label, LayerPlan), ...], skip)``: the timed loops of
    a run command line. ``--split-k auto`` / N: one plan; ``-1``: the policy's
    plan, or none and ``skip`` (why) when the policy does not split; ``0``: one
    plan per degree of ``--split-k-degrees`` plus the resolved degree
    (ascending; the resolved degree only when the policy splits)."""
    ns, layer, lp = resolve(argv)
    mode = split_mode(ns)
    if mode not in ("policy", "sweep"):
        return ns, layer, [(f"degree {lp.launch_spec['degree']}", lp)], None
    resolved = int(lp.policy["degree"]) if lp.binary != "plain" else 1
    if mode == "policy":
        if lp.binary == "plain":
            return ns, layer, [], (f"the split-K policy does not split this layer (rule "
                                   f"{lp.policy['rule']})")
        return ns, layer, [(f"degree {lp.launch_spec['degree']} (resolved)", lp)], None
    degrees = sweep_degrees(ns)
    runs = []
    for d in sorted(set(degrees) | ({resolved} if resolved > 1 else set())):
        spec = dict(overrides(ns), split_k=d)
        why = "resolved" if d == resolved and d not in degrees else "resolved, listed" if d == resolved else ""
        plan = plan_layer(E, layer, ARCH, ns.flavor, None, ns.cus, spec=spec, lower=False, select="seed")
        runs.append((f"degree {d}" + (f" ({why})" if why else ""), plan))
    return ns, layer, runs, None


def main(argv=None, hip=None, out=None) -> int:
    """Exit status: 0 ran (and verified), 1 the result differs from the reference, 2 an error."""

    out = out or sys.stdout
    argv = sys.argv[1:] if argv is None else list(argv)

    def fail(msg):
        print(f"error: {msg}", file=sys.stderr)
        return 2
    try:
        ns, layer, runs, skip = resolve_runs(argv)
        ensure_dir(ns.cache_dir or default_cache_dir(), "--cache-dir" if ns.cache_dir else "the code object cache")
        cache = CodeObjectCache(ns.cache_dir, manifest=ns.aot_manifest)
        p = layer.problem
        print(f"layer: {layer.name}: {layer.command().split(' ', 2)[1]} N={p.N} C={p.C} H={p.H} W={p.W} K={p.K} "
              f"Y={p.Y} X={p.X} pad={p.pad_h},{p.pad_w} stride={p.stride_h},{p.stride_w} "
              f"dil={p.dil_h},{p.dil_w} groups={p.groups}", file=out)
        if skip:
            print(f"skip: {skip}", file=out)
            return 0
        sweep = split_mode(ns) == "sweep"
        if sweep:
            print(f"sweep: {len(runs)} degrees: {', '.join(label for label, _ in runs)}", file=out)
        h = None
        status, best = 0, None
        for label, lp in runs:
            if sweep:
                print(f"-- {label}", file=out)
            spec = lp.launch_spec
            rspec = next((k[2] for k in lp.kernels if k[0] == "reduce"), None)
            plan = _describe(lp, spec, ns, out)
            if ns.build_only:
                _build_only(spec, rspec, cache, ns, out)
                continue
            if h is None:
                h = Hip(hip) if hip is not None else Hip()
                find_gfx1250(h)
            # progress on a terminal only (stderr): build, run, verify, time
            bar_cm = progress("run", 4)
            bar = bar_cm.__enter__() or (lambda done, total=None: None)
            try:
                rc, ms = _run_on_gpu(ns, spec, rspec, cache, h, p, out, bar, check_output, random_inputs, ConvRun,
                                     lp.layer)
            finally:
                bar_cm.__exit__(None, None, None)
            status = max(status, rc)
            if best is None or ms < best[1]:
                best = (label, ms, plan.kernel)
        if sweep and best is not None:
            print(f"sweep: fastest {best[0]}: median {best[1]:.4f} ms ({best[2]})", file=out)
        return status
    except SpecRejected as exc:
        return fail(f"launch not admitted: {exc.reason}")
    except EmitError as exc:
        return fail(f"launch not admitted: {exc.reason}" if getattr(exc, "reason", None) else str(exc))
    except (RuntimeFailure, ProblemInputError, ValueError) as exc:
        return fail(str(exc))


def _describe(lp, spec, ns, out):
    """Print the policy and kernel lines of one plan; returns its launch plan."""
    plan = launch_plan(spec, ARCH, ns.flavor)
    f = lp.folded
    fold = "" if lp.fold == 1 else (f" (folded C={f['C']} W={f['W']} X={f['X']} stride_w={f['stride_w']} "
                                    f"pad_w={f['pad_w']})")
    print(f"policy: fold {lp.fold}{fold}, degree {lp.policy['degree']} ({lp.policy['rule']}), "
          f"binary {lp.binary}", file=out)
    print(f"kernel: {plan.kernel} ({plan.variant}, ks_count {plan.ks_count}, grid {plan.grid}, "
          f"cluster {plan.cluster or 'none'}, stage 2 "
          f"{'yes: ' + lp.kernels[1][3] if plan.needs_stage2 else 'no'})", file=out)
    print(f"served: {aot_text(lp)}", file=out)
    return plan


def _build_only(spec, rspec, cache, ns, out):
    """Build (or find in the cache / AOT manifest) one plan's code objects and print them."""
    with progress("run: build", 1) as bar:
        run = ConvRun(spec, ARCH, ns.flavor, cache=cache, reduce=rspec)
        if bar:
            bar(1)
    for co in (run.fwd_code, run.red_code):
        if co is not None:
            src = " (AOT manifest)" if cache.manifest is not None and co.path and \
                co.path.startswith(cache.manifest.dir + os.sep) else ""
            print(f"code object: {co.path}{src}", file=out)


def _run_on_gpu(ns, spec, rspec, cache, h, p, out, bar, check_output, random_inputs, ConvRun, layer=None) -> tuple:
    """Build, run, verify and time one layer on the device (``bar(done)``:
    progress); ``(status, median ms)``. One ConvRun per timed loop: both
    stages are bound once (ConvRun.setup) and relaunched as bound. A fused
    layer (``layer.acc_epilogue``) gets its scalars and a random fp32 bias."""
    import numpy as np  # off the CLI's start-up path
    scalars = dict(layer.scalars) if layer is not None else {}
    bias = None
    from parity.sim.reference import epilogue_has  # numpy: off the CLI's start-up path
    if epilogue_has(spec.get("acc_epilogue", "identity"), "bias"):
        bias = np.random.default_rng(ns.seed + 1).uniform(-1.0, 1.0, spec["K"]).astype(np.float32)
    with ConvRun(spec, ARCH, ns.flavor, hip=h, cache=cache, reduce=rspec, scalars=scalars) as run:
        bar(1)
        x, w, xb, wb = random_inputs(spec, ns.seed)
        run.upload(xb, wb, bias)
        run.run()
        bar(2)
        status = 0
        if ns.verify:
            # the reference of the original layer: a folded problem reads the same bytes
            orig = dict(spec, **{n: getattr(p, n) for n in ("N", "C", "H", "W", "K", "Y", "X", "stride_h",
                                                            "stride_w", "pad_h", "pad_w", "dil_h", "dil_w",
                                                            "groups")})
            ok, ratio, nbad = check_output(orig, x.reshape(p.N, p.H, p.W, p.C),
                                           w.reshape(p.K, p.Y, p.X, p.cpg), run.download(), bias, scalars)
            print(f"verify: {'OK' if ok else 'FAILED'} (max error / tolerance {ratio:.3g}"
                  + ("" if ok else f", {nbad} elements out of tolerance") + ")", file=out)
            status = 0 if ok else 1
        bar(3)
        t = run.time(reps=max(1, ns.iter), warmup=max(0, ns.warmup))
        bar(4)
        print(f"time: median {t.median_ms:.4f} ms over {len(t.times_ms)} launches", file=out)
        print(f"achieved: {t.tflops:.2f} TFLOP/s ({t.flops} flop)", file=out)
        return status, t.median_ms

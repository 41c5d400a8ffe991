"""``python -m python_engine run``: one MIOpen-style forward convolution layer
on a gfx1250 — random inputs, run, compare with the numpy reference
(parity/reference.py), time repeated launches with events (median), print the
achieved TFLOP/s.

The layer flags are MIOpenDriver's ``conv`` flags (``-n -c -H -W -k -y -x -p
-q -u -v -l -j -g``; the command word ``convbfp16`` / ``convfp16`` picks the
data type); the kernel choice is ours (``--split-k``, ``--cluster``, tile
flags). Failures (no GPU, no hip-python, no linker, a rejected launch) print
one ``error:`` line and exit 2; no traceback.
"""
from __future__ import annotations

import argparse
import sys

DTYPES = {"convbfp16": "bf16", "convfp16": "fp16"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m python_engine run", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", nargs="?", default="convbfp16",
                   help="MIOpenDriver command word: convbfp16 (default) or convfp16")
    a = p.add_argument
    a("-n", "--batchsize", type=int, default=1, help="N")
    a("-c", "--in_channels", type=int, default=64, help="C")
    a("-H", "--in_h", type=int, default=56, help="H")
    a("-W", "--in_w", type=int, default=56, help="W")
    a("-k", "--out_channels", type=int, default=64, help="K")
    a("-y", "--fil_h", type=int, default=3, help="Y")
    a("-x", "--fil_w", type=int, default=3, help="X")
    a("-p", "--pad_h", type=int, default=1)
    a("-q", "--pad_w", type=int, default=1)
    a("-u", "--conv_stride_h", type=int, default=1)
    a("-v", "--conv_stride_w", type=int, default=1)
    a("-l", "--dilation_h", type=int, default=1)
    a("-j", "--dilation_w", type=int, default=1)
    a("-g", "--group_count", type=int, default=1)
    a("-F", "--forw", type=int, default=1, help="1 = forward (the only direction built)")
    a("-i", "--iter", type=int, default=20, help="timed launches (median reported)")
    a("-V", "--verify", type=int, default=1, help="1 = compare with the numpy reference")
    a("--split-k", default="1", help="two-stage split-K degree (1 = plain; auto = the split-K policy's choice)")
    a("--cluster", type=int, default=0, help="cluster split-K with S slices (llvm23, gfx1250)")
    a("--tile", default="64x64x32", help="tile_m x tile_n x tile_k")
    a("--waves", default="2x2", help="waves_m x waves_n")
    a("--epilogue", default="default", choices=("default", "cshuffle"))
    a("--flavor", default="llvm23")
    a("--warmup", type=int, default=3)
    a("--seed", type=int, default=0)
    a("--cache-dir", default=None, help="code object cache (default $SPLITK_CODE_OBJECT_CACHE or ~/.cache)")
    a("--build-only", action="store_true", help="build the code objects and print the plan; no GPU needed")
    return p


def spec_from_args(ns) -> dict:
    if ns.command not in DTYPES:
        raise ValueError(f"command {ns.command!r}: this runtime builds bf16 and fp16 kernels "
                         f"(use convbfp16 or convfp16)")
    if ns.forw != 1:
        raise ValueError(f"-F {ns.forw}: only the forward convolution (-F 1) is built")
    tm, tn, tk = (int(v) for v in ns.tile.split("x"))
    wm, wn = (int(v) for v in ns.waves.split("x"))
    spec = dict(dtype=DTYPES[ns.command], tile_m=tm, tile_n=tn, tile_k=tk, waves_m=wm, waves_n=wn,
                epilogue=ns.epilogue,
                N=ns.batchsize, C=ns.in_channels, H=ns.in_h, W=ns.in_w, K=ns.out_channels, Y=ns.fil_h,
                X=ns.fil_w, pad_h=ns.pad_h, pad_w=ns.pad_w, stride_h=ns.conv_stride_h,
                stride_w=ns.conv_stride_w, dil_h=ns.dilation_h, dil_w=ns.dilation_w, groups=ns.group_count)
    if ns.cluster:
        spec.update(split_k=ns.cluster, split_k_cluster=ns.cluster, degree=ns.cluster)
    elif ns.split_k == "auto":
        spec.update(split_k=-1)
    else:
        try:
            d = int(ns.split_k)
        except ValueError:
            raise ValueError(f"--split-k must be a degree >= 1 or auto, got {ns.split_k!r}") from None
        if d > 1:
            spec.update(split_k=d, degree=d)
    return spec


def main(argv=None, hip=None, out=None) -> int:
    """Exit status: 0 ran (and verified), 1 the result differs from the reference, 2 an error."""
    from ..kernels.spec import SpecRejected
    from . import CodeObjectCache, ConvRun, Hip, RuntimeFailure, check_output, find_gfx1250, random_inputs
    from ..kernels import conv_launch as CL
    from ..kernels.spec import normalize
    from .pipeline import resolve_auto
    from .plan import launch_plan

    out = out or sys.stdout
    ns = _parser().parse_args(argv)

    def fail(msg):
        print(f"error: {msg}", file=sys.stderr)
        return 2
    try:
        spec = resolve_auto(normalize(CL.FAMILY, CL.FIELDS, spec_from_args(ns)), "gfx1250", ns.flavor)
        plan = launch_plan(spec, "gfx1250", ns.flavor)
        cache = CodeObjectCache(ns.cache_dir)
        print(f"layer: {ns.command} N={spec['N']} C={spec['C']} H={spec['H']} W={spec['W']} K={spec['K']} "
              f"Y={spec['Y']} X={spec['X']} pad={spec['pad_h']},{spec['pad_w']} "
              f"stride={spec['stride_h']},{spec['stride_w']} dil={spec['dil_h']},{spec['dil_w']} "
              f"groups={spec['groups']}", file=out)
        print(f"kernel: {plan.kernel} ({plan.variant}, ks_count {plan.ks_count}, grid {plan.grid}, "
              f"cluster {plan.cluster or 'none'}, stage 2 {'yes' if plan.needs_stage2 else 'no'})", file=out)
        if ns.build_only:
            run = ConvRun(spec, "gfx1250", ns.flavor, cache=cache)
            for co in (run.fwd_code, run.red_code):
                if co is not None:
                    print(f"code object: {co.path}", file=out)
            return 0
        h = Hip(hip) if hip is not None else Hip()
        find_gfx1250(h)
        with ConvRun(spec, "gfx1250", ns.flavor, hip=h, cache=cache) as run:
            x, w, xb, wb = random_inputs(spec, ns.seed)
            run.upload(xb, wb)
            run.run()
            status = 0
            if ns.verify:
                ok, ratio, nbad = check_output(spec, x, w, run.download())
                print(f"verify: {'OK' if ok else 'FAILED'} (max error / tolerance {ratio:.3g}"
                      + ("" if ok else f", {nbad} elements out of tolerance") + ")", file=out)
                status = 0 if ok else 1
            t = run.time(reps=max(1, ns.iter), warmup=max(0, ns.warmup))
            print(f"time: median {t.median_ms:.4f} ms over {len(t.times_ms)} launches", file=out)
            print(f"achieved: {t.tflops:.2f} TFLOP/s ({t.flops} flop)", file=out)
            return status
    except SpecRejected as exc:
        return fail(f"launch not admitted: {exc.reason}")
    except (RuntimeFailure, ValueError) as exc:
        return fail(str(exc))

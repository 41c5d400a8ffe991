"""The two single-axis extensions of the 898-job AOT grid that reach the
reference's 910 two-stage jobs per dtype, compiled (docs/policy.md "AOT job
grid").

    python bench/aot_910.py [--flavor F] [--dtype D] [--jobs N]

The grid before issue 27 (vectors 8, 4, 2) had 898 two-stage jobs per dtype.
Exactly two one-axis changes give 910 (12 more jobs, 6 layouts x 2
epilogues): (a) vector 1 (``vector_a = vector_b = 1``) inside the load budget
-- the one the grid takes now (python_engine/policy/aot.py ``VECTORS``) --,
(b) up to 32 accumulator tiles per wave (``MAX_WAVE_FRAGMENTS`` 32 instead of
16). This script lists both sets, compiles every job with the project's LLVM
(llvmlite, parity/aot/worker.py: compile, link, read the metadata) and prints
VGPRs, spills, scratch and LDS per job, so the choice is made on compile
evidence. Needs the LLVM 22 linker (scripts/bootstrap.sh).
"""
from __future__ import annotations

import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import python_engine as E  # noqa: E402
from python_engine.policy import aot as A  # noqa: E402
from parity.cli.common import Parser, at_least_one, flavor_list  # noqa: E402  (debt: the grid's axes are not in the engine API)
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402


def extra_jobs(dtype: str) -> list:
    """``(set, spec)`` of the 12 + 12 jobs the two extensions add (grid order)."""
    out = []
    for tm in A.TILE_SIDES:
        for tn in A.TILE_SIDES:
            for wm in A.WAVE_COUNTS:
                for wn in A.WAVE_COUNTS:
                    if tm % (16 * wm) or tn % (16 * wn) or wm * wn > A.MAX_COMPUTE_WAVES:
                        continue
                    frags = (tm // (16 * wm)) * (tn // (16 * wn))
                    for tk in A.TILE_K:
                        for pipe, lw in A.PIPELINES:
                            for v in dict.fromkeys(A.VECTORS + (1,)):
                                if A.loads_per_lane(tm, tn, tk, wm, wn, pipe, lw, v) > A.MAX_LOADS_PER_LANE:
                                    continue
                                if v == 1 and frags <= A.MAX_WAVE_FRAGMENTS:
                                    kind = "vector1"
                                elif v != 1 and A.MAX_WAVE_FRAGMENTS < frags <= 2 * A.MAX_WAVE_FRAGMENTS:
                                    kind = "fragments32"
                                else:
                                    continue
                                for epi in A.EPILOGUES:
                                    out.append((kind, A.conv_spec(dtype, tm, tn, tk, epi, 2, 0, wm, wn, pipe, lw,
                                                                  v)))
    return out


def _compile(args):
    kind, spec, flavor, out_dir = args
    from parity.aot.worker import build_one
    low = E.lower("conv_implicit_gemm", spec, "gfx1250", flavor)
    r = build_one({"kernel": low.kernel, "arch": "gfx1250", "text": low.text,
                   "out": os.path.join(out_dir, low.kernel + ".co")})
    return kind, low.kernel, r


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flavor", type=flavor_list("--flavor", single=True), default="llvm23",
                    help="the LLVM flavor to compile with (default llvm23)")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"), help="the jobs' dtype (default bf16)")
    ap.add_argument("--jobs", type=at_least_one("--jobs"), default=2, help="compile processes (default 2)")
    a = ap.parse_args(argv)
    jobs = extra_jobs(a.dtype)
    print(f"grid today: {A.count_two_stage()} two-stage jobs per dtype (vectors {A.VECTORS}); vector1: "
          f"{sum(k == 'vector1' for k, _ in jobs)}, +fragments32: {sum(k == 'fragments32' for k, _ in jobs)}")
    with tempfile.TemporaryDirectory(prefix="aot910-") as wd, ProcessPoolExecutor(max(1, a.jobs)) as pool:
        for kind, kernel, r in pool.map(_compile, [(k, s, a.flavor, wd) for k, s in jobs]):
            if not r["ok"]:
                print(f"{kind:12s} {kernel}: FAILED {r['error']}")
                continue
            res = r["resources"]
            print(f"{kind:12s} {kernel}: vgprs {res['vgprs']} vgpr_spills {res['vgpr_spills']} sgpr_spills "
                  f"{res['sgpr_spills']} scratch {res['scratch_bytes']} lds {res['lds_bytes']} "
                  f"compile {r['compile']:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

"""What the numerics oracle's coverage-ordered cases (parity/mutate/prioritise.py) save:
the first N every-site mutants of one conv config judged in plan order and ordered, each
mutant both ways in turn (so machine load falls on both alike), the verdicts compared.

    python bench/mutate_order.py [--only CONFIG] [--kinds K,..] [-n N]

Prints the two CPU-second totals, their ratio, and the number of verdicts whose status
differs (it must be 0: ordering changes which failure is reported first, not whether
one is). The config's profile (one honest run of its plan) is made before timing and
printed on its own: a run pays it once per config and worker.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402
from parity.cli.common import Parser, at_least_one  # noqa: E402
from parity.mutate import operators as OPS  # noqa: E402
from parity.mutate import prioritise as PRI  # noqa: E402
from parity.mutate import run as R  # noqa: E402
from parity.sim import numerics as N  # noqa: E402


def main(argv=None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="plain_mem_default_64x64x32_w2x2_bf16",
                    help="a conv_implicit_gemm config name (default plain_mem_default_64x64x32_w2x2_bf16)")
    ap.add_argument("--kinds", default="const_inc,cmp_boundary,kloop_cmp",
                    help="comma-separated mutation kinds (default const_inc,cmp_boundary,kloop_cmp)")
    ap.add_argument("-n", type=at_least_one("-n"), default=80,
                    help="mutants: the first N of the seeded every-site plan (default 80)")
    a = ap.parse_args(argv)
    configs = [c for c in N.accepted_configs(["conv_implicit_gemm"]) if c[1] == a.only]
    if not configs:
        ap.error(f"--only: no accepted conv_implicit_gemm config named '{a.only}'")
    bad = [k for k in a.kinds.split(",") if k not in OPS.KINDS]
    if bad:
        ap.error(f"--kinds: unknown mutation kind {', '.join(bad)} (kinds: {', '.join(OPS.KINDS)})")
    sites = R.plan(configs, 0, per_kind=None, kinds=tuple(a.kinds.split(",")))[:a.n]
    t0 = time.process_time()
    PRI.profile(dataclasses.replace(sites[0], ordered=True).job())
    print(f"profile of {a.only}: {time.process_time() - t0:.1f} CPU-s (once per config and worker)")
    spent, differ = {False: 0.0, True: 0.0}, 0
    for s in sites:
        got = []
        for ordered in (False, True):
            t = time.process_time()
            got.append(R.judge(dataclasses.replace(s, ordered=ordered).job()).status)
            spent[ordered] += time.process_time() - t
        differ += got[0] != got[1]
    print(f"{len(sites)} mutants: plan order {spent[False]:.1f} CPU-s, ordered {spent[True]:.1f} CPU-s, "
          f"ratio {spent[False] / max(spent[True], 1e-9):.2f}x; verdicts that differ: {differ}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

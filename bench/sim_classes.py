"""The cost of the numerics problem classes of issue 34 (bench/sim.py prints it):
per class, the wall seconds and wave-instructions of its cases over a sample of
configs (one per kernel form), run as ``parity numerics`` runs them (both wave
orders, no coverage), and its share of the sample's total.

Classes: ``K-deep (item 5)`` the ``deep_*`` problems (bit-exact data, so they are
item 3's too); ``tap loop's first trip (item 5)`` ``cover_taps_first`` and
``cover_taps_xwrap`` (per K-loop iteration class coverage); ``bit-exact epilogue problems (item 3)`` ``wide_groups``,
``odd_kpg``, ``cover_narrow`` (they ran with Gaussian data before); ``reduce
exact (item 3)`` the reduce's ``exact_*`` case; ``the rest``.

    python bench/sim_classes.py [CONFIG ...]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from parity.cli.common import Parser  # noqa: E402
from parity.sim import cover  # noqa: E402
from parity.sim import numerics as N  # noqa: E402

SAMPLE = ("conv_implicit_gemm/plain_mem_default_64x64x32_w2x2_bf16", "conv_implicit_gemm/fused_bias_mem_default_64x64_bf16",
          "conv_implicit_gemm/plain_mem_cshuffle_va5_vb5_bf16", "conv_implicit_gemm/spk2_mem_default_64x64_bf16",
          "conv_implicit_gemm/spk32_mem_default_64x64_bf16", "conv_implicit_gemm/skc4_mem_default_64x64_bf16",
          "conv_fwd_split_k_reduce/bf16_v4_t256_d0")


#: the problems that close the tap loop's first-trip iteration class (docs/sim.md, "Coverage")
FIRST_TRIP = ("cover_taps_first", "cover_taps_xwrap")


def case_class(family: str, name: str) -> str:
    if name.startswith("deep_"):
        return "K-deep (item 5; bit-exact data)"
    if name.startswith(FIRST_TRIP):
        return "tap loop's first trip (item 5)"
    if name.startswith("exact_"):
        return "reduce exact (item 3)"
    if family == "conv_implicit_gemm" and cover.data_mode(name.rsplit("_ks", 1)[0]) == "exact":
        return "bit-exact epilogue problems (item 3)"
    return "the rest"


def class_times(refs=SAMPLE) -> dict:
    """class -> [seconds, wave-instructions, cases] over the cases of ``refs``."""
    low = N._Lowerer()
    out: dict = {}
    for r in refs:
        fam, name, spec, arch = N.find_config(r)
        spec = N._with_defaults(fam, spec)
        cases = N.PLANS[fam].cases(spec, arch, low)
        for c in cases:
            if not isinstance(c, N.Case):
                continue
            t0 = time.perf_counter()
            probs, n = N.run_case(c, low, c.orders)
            acc = out.setdefault(case_class(fam, c.name), [0.0, 0, 0])
            acc[0] += time.perf_counter() - t0
            acc[1] += n
            acc[2] += 1
            if probs:
                print(f"  {r} {c.name}: {probs[0]}")
    return out


def report(refs=SAMPLE) -> list:
    res = class_times(refs)
    tot_s = sum(v[0] for v in res.values())
    tot_n = sum(v[1] for v in res.values())
    lines = [f"numerics problem classes of issue 34 over {len(refs)} sample configs (one per form), both orders:"]
    for k, (s, n, c) in sorted(res.items()):
        lines.append(f"  {k:<40} {c:4d} cases {s:7.1f} s ({s / tot_s:5.1%}), {n:>11,} wave-instructions "
                     f"({n / tot_n:5.1%})")
    return lines


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("configs", nargs="*", metavar="FAMILY/CONFIG",
                    help="configs to measure (default: the sample, one per kernel form)")
    args = ap.parse_args(argv)
    for ln in report(tuple(args.configs) or SAMPLE):
        print(ln)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The catalog's predicted total time before and after issue 16, by the perf model.

    python bench/catalog_model.py [--catalog PATH] [--before-kstep N]

The perf model (python_engine/policy/perf_model.py, docs/perf_model.md) scores
every layer of the catalog on the gfx1250 roofline of the arch table. Its
``kstep_issue_cycles`` is the issue time of one 32-deep K step of the main loop
(one instruction per clock per wave), measured by ``parity perf`` on the
64x64x32 main loop: 118 instructions for the seed's kernels (``parity perf
--base 79f6ea3``), the arch table's value for today's. Printed per flavor:

* before: the seed policy's choices (tile 64x64, the seed's degree, the seed's
  load widths: no padded-pixel path) scored with the seed kernels' issue time
  (``--before-kstep``, default 118);
* seed policy, today's kernels: the same choices with the arch table's value;
* model: the model's own choices over every admitted candidate (``--select
  model``, the default before issue 27);
* rules: the model's choices among the candidates the reference's split-K
  rules admit (``--select rules``, what emit / plan / layers / run launch
  by default since issue 27).

Predicted figures from a static model, not measurements on a GPU.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.cli.common import Parser, at_least_one  # noqa: E402
from parity.catalog.emit import default_catalog  # noqa: E402
from python_engine.kernels.conv_implicit_gemm import load_vector  # noqa: E402
from parity.catalog.miopen import ProblemInputError, parse_catalog  # noqa: E402
from parity.base.outputs import run_quietly_on_broken_pipe  # noqa: E402
from python_engine.policy.perf_model import select_by_model  # noqa: E402
from python_engine.policy.fold import fold_width  # noqa: E402
from python_engine.targets.arch import find_arch  # noqa: E402


def with_kstep(arch, kstep: int):
    """``arch`` with its roofline's kstep_issue_cycles replaced."""
    roof = tuple((n, kstep if n == "kstep_issue_cycles" else v) for n, v in arch.roofline)
    return dataclasses.replace(arch, roofline=roof)


def seed_vector(cpg: int) -> int:
    """The load width before issue 16: the widest of 8, 4, 2, 1 dividing cpg (no
    padded-pixel path; the 3-channel stems loaded element by element)."""
    return next(x for x in (8, 4, 2, 1) if cpg % x == 0)


def totals(layers, arch, flavor, vector=load_vector, rules=False) -> tuple[int, int, int]:
    """(seed choices' total, model choices' total, layers whose choice differs), ps;
    ``rules``: the model within the reference's rules."""
    seed = model = changed = 0
    for layer in layers:
        cpg = fold_width(layer.problem)[1].cpg
        v = vector(cpg)
        spec = {"dtype": layer.dtype if layer.dtype != "fp32" else "bf16", "vector_a": v, "vector_b": v}
        ms = select_by_model(layer.problem, arch, flavor, spec, rules=rules)
        seed += ms.seed.total_ps
        model += ms.best.total_ps
        changed += ms.best.label() != ms.seed.label()
    return seed, model, changed


def _choice(layer, arch, flavor, rules: bool) -> str:
    """The selected candidate's label (emit's load widths)."""
    v = load_vector(fold_width(layer.problem)[1].cpg)
    spec = {"dtype": layer.dtype if layer.dtype != "fp32" else "bf16", "vector_a": v, "vector_b": v}
    return select_by_model(layer.problem, arch, flavor, spec, rules=rules).best.label()


def main(argv=None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catalog", default=None, help="layer catalog (default: the shipped one)")
    ap.add_argument("--before-kstep", type=at_least_one("--before-kstep"), default=118,
                    help="kstep_issue_cycles of the seed kernels (default 118, parity perf --base 79f6ea3)")
    a = ap.parse_args(argv)
    path = a.catalog or default_catalog()
    try:
        with open(path, encoding="utf-8") as f:
            layers = parse_catalog(f.read(), path)
    except (OSError, UnicodeDecodeError, ProblemInputError) as exc:
        print(f"error: --catalog {path}: {exc}", file=sys.stderr)
        return 2
    if not layers:
        print(f"error: --catalog {path}: no layers (only comments and blank lines)", file=sys.stderr)
        return 2
    today = find_arch("gfx1250")
    now = dict(today.roofline)["kstep_issue_cycles"]
    before = with_kstep(today, a.before_kstep)
    print(f"catalog {path}: {len(layers)} layers, gfx1250, perf model; kstep_issue_cycles "
          f"{a.before_kstep} (seed kernels) -> {now} (today's)")
    print(f"{'flavor':<8} {'before: seed policy, seed kernels':>34} {'seed policy, today':>20} "
          f"{'model choice':>20} {'rules choice':>20} {'rules/before':>13} {'model/rules differ':>19}")
    for fl in ("llvm20", "llvm22", "llvm23"):
        b_seed, _, _ = totals(layers, before, fl, seed_vector)
        seed, model, _ = totals(layers, today, fl)
        _, ruled, _ = totals(layers, today, fl, rules=True)
        differ = sum(_choice(layer, today, fl, False) != _choice(layer, today, fl, True) for layer in layers)
        print(f"{fl:<8} {b_seed / 1e6:>31.3f} us {seed / 1e6:>17.3f} us {model / 1e6:>17.3f} us "
              f"{ruled / 1e6:>17.3f} us {ruled / b_seed:>12.2f}x {differ:>12} of {len(layers)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_quietly_on_broken_pipe(main))

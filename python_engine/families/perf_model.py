"""Family ``perf_model``: the perf model's candidates, predictions and choice
as text (docs/perf_model.md). Twin: cpp_engine/src/families/perf_model.{h,cpp}.

The spec is split_k_policy's (the 15 conv_implicit_gemm fields with
``split_k = -1``, the problem, ``cus``), with the same rules and texts, plus
``rules`` (0: every admitted candidate, ``--select model``; 1: only the
candidates the reference's rules admit, the default of emit / layers / run,
policy/perf_model.py ``rules_admission``; any other value is rejected).
``build`` returns: the problem and fold, the roofline constants, one line per
admitted candidate with its predicted terms (the selected one and the
runner-up marked), the selection, the seed policy's choice evaluated by the
model, then the selected binary in split_k_policy's words (``binary``,
``launch_degree``, ``admission``, ``kernel``, ``identity``, ``spec``,
``reduce``..., ``aot``) so an emitter reads either text the same way; with
``rules = 1`` an ``admitted_by <rule>`` line follows the ``rule`` line.
Not LLVM IR.
"""
from __future__ import annotations

from ..kernels import conv_launch as LAUNCH
from ..policy.perf_model import select_by_model
from ..policy.select import select_binary
from ..spec.fields import Field
from . import split_k_policy as SKP

FAMILY = "perf_model"
#: Any LLVM AMDGPU processor is a target (api.py; targets/arch.py ``processor_arch``): the
#: split-K resolver gives one outside the arch table degree 1, rule ``arch`` (issue 37, item 4).
ANY_PROCESSOR = True
FIELDS = SKP.FIELDS + (Field("rules", "int", 0),)


def validate(spec: dict, arch, flavor) -> str | None:
    r = SKP.validate(spec, arch, flavor)
    if r:
        return r
    if spec["rules"] not in (0, 1):
        return f"rules must be 0 (every admitted candidate) or 1 (the reference's rules), got {spec['rules']}"
    return None


def _conv(spec: dict) -> dict:
    return {n: spec[n] for n in SKP.CONV_FIELDS}


def decide(spec: dict, arch, flavor):
    return select_by_model(LAUNCH.problem_of(spec), arch, flavor, _conv(spec), spec["cus"] or None,
                           spec["rules"] == 1)


def _name(ms) -> str:
    b = ms.best
    if b is None:
        return "perf_model_none"
    return f"perf_model_{b.binary}_{b.spec['tile_m']}x{b.spec['tile_n']}_d{b.degree}"


def kernel_name(spec: dict, arch, flavor) -> str:
    return _name(decide(spec, arch, flavor))


def text(spec: dict, arch, flavor, ms=None) -> str:
    """The family's text; ``ms``: ``decide(spec, arch, flavor)`` when the caller has it."""
    ms = decide(spec, arch, flavor) if ms is None else ms
    p = ms.problem
    lines = [f"perf_model {arch.name} {flavor.canonical}",
             f"problem {SKP.problem_text(LAUNCH.problem_of(spec))}",
             f"fold {ms.fold}"]
    if ms.fold > 1:
        lines.append(f"folded {SKP.problem_text(p)}")
    lines += [f"gemm M={p.M} kpg={p.kpg} groups={p.groups} Kgemm={p.Kgemm}",
              f"cus {ms.cus}",
              "roofline " + (" ".join(f"{k}={v}" for k, v in arch.roofline) or "none"),
              f"candidates {len(ms.candidates)} of {ms.tried} admitted"]
    for c in ms.candidates:
        mark = " selected" if c is ms.best else " runner_up" if c is ms.runner_up else ""
        lines.append(c.line() + mark)
    b, r = ms.best, ms.runner_up
    lines.append(f"selected c{b.index} {b.label()} total_ps={b.total_ps}" if b else "selected none")
    lines.append(f"runner_up c{r.index} {r.label()} total_ps={r.total_ps}" if r else "runner_up none")
    if ms.seed is not None:
        lines.append(f"seed {ms.seed.label()} total_ps={ms.seed.total_ps}")
    else:
        lines.append(f"seed none: {ms.seed_note}")
    if b is None:
        lines += ["degree 1", "rule model: no candidate is admitted", "binary none", "cluster -",
                  "launch_degree 1", f"admission {ms.seed_note if ms.tried == 0 else 'no candidate is admitted'}",
                  "kernel none", "reduce none", "aot no: no candidate is admitted"]
        return "\n".join(lines) + "\n"
    sel = select_binary(dict(b.spec), LAUNCH.problem_of(spec), arch, flavor, ms.cus)
    runner = f"runner-up c{r.index} {r.total_ps} ps" if r else "no runner-up"
    lines += [f"degree {b.degree}",
              f"rule model: c{b.index} of {len(ms.candidates)} admitted candidates, predicted {b.total_ps} ps "
              f"({runner})"]
    if ms.rules:
        lines.append(f"admitted_by {b.rule}")
    lines += [f"binary {sel.binary}",
              f"cluster {'model: S ' + str(b.degree) if b.binary == 'cluster' else '-'}",
              f"launch_degree {sel.degree}",
              f"admission {'ok' if sel.admission is None else sel.admission}",
              f"kernel {sel.identity.kernel_name()}",
              f"identity {sel.identity.hash()} {sel.identity.label()}",
              f"spec {SKP.spec_text(sel.spec)}"]
    return "\n".join(lines + SKP.reduce_and_aot_lines(sel)) + "\n"


def build(spec: dict, arch, flavor):
    ms = decide(spec, arch, flavor)  # once: the name and the text read the same selection
    return _name(ms), text(spec, arch, flavor, ms)

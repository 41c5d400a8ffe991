"""Family ``split_k_policy``: both engines' split-K decisions as text
(docs/policy.md). Twin: cpp_engine/src/families/split_k_policy.{h,cpp}.

The spec is flat: the 15 conv_implicit_gemm fields (``split_k`` defaults to
-1, auto), the problem (conv_launch's problem fields, same defaults), then
``cus`` (0: the arch table's CU count; else the device's real count).
``validate`` checks the problem (conv_launch's problem rules, same texts) and
``cus``; ``build`` returns the decision text: width folding, the resolved
degree and the rule that decided it, the selected binary (kind, kernel,
identity hash and label, spec), the launch degree and its admission, the
reduce kernel, and whether every binary is an AOT job. Not LLVM IR.
"""
from __future__ import annotations

from ..kernels import conv_implicit_gemm as CIG
from ..kernels import conv_launch as LAUNCH
from ..kernels.conv_problem import ConvProblem
from ..spec.fields import Field
from ..policy.select import select_binary

FAMILY = "split_k_policy"
#: Any LLVM AMDGPU processor is a target (api.py; targets/arch.py ``processor_arch``): the
#: split-K resolver gives one outside the arch table degree 1, rule ``arch`` (issue 37, item 4).
ANY_PROCESSOR = True
FIELDS = tuple(Field(f.name, f.kind, -1 if f.name == "split_k" else f.default) for f in CIG.FIELDS) + \
    tuple(Field(n, "int", d) for n, _, d in LAUNCH.PROBLEM_FIELDS) + (Field("cus", "int", 0),)
CONV_FIELDS = tuple(f.name for f in CIG.FIELDS)
PROBLEM_NAMES = tuple(n for n, _, _ in LAUNCH.PROBLEM_FIELDS)
MAX_CUS = 65536
MAX_DEGREE_FIELD = LAUNCH.I32_MAX  # split_k / split_k_cluster upper bound (an i32 kernel argument)


def validate(spec: dict, arch, flavor) -> str | None:
    r = LAUNCH.problem_reason(spec)
    if r:
        return r
    c = spec["cus"]
    if c < 0 or c > MAX_CUS:
        return f"cus must be 0 (the arch table's count) or 1..{MAX_CUS}, got {c}"
    # The degree fields are bounded before any arithmetic uses them (issue 14).
    sk = spec["split_k"]
    if not -1 <= sk <= MAX_DEGREE_FIELD:
        return f"split_k must be in -1..{MAX_DEGREE_FIELD} (-1: auto), got {sk}"
    skc = spec["split_k_cluster"]
    if not 0 <= skc <= MAX_DEGREE_FIELD:
        return f"split_k_cluster must be 0..{MAX_DEGREE_FIELD}, got {skc}"
    return None


def problem_text(p: ConvProblem) -> str:
    return " ".join(f"{n}={getattr(p, n)}" for n in PROBLEM_NAMES)


def spec_text(s: dict) -> str:
    return ";".join(f"{k}={'' if v is None else v}" for k, v in s.items())


def decide(spec: dict, arch, flavor):
    conv = {n: spec[n] for n in CONV_FIELDS}
    return select_binary(conv, LAUNCH.problem_of(spec), arch, flavor, spec["cus"] or None)


def kernel_name(spec: dict, arch, flavor) -> str:
    sel = decide(spec, arch, flavor)
    return f"split_k_policy_d{sel.decision.degree}_{sel.binary}"


def text(spec: dict, arch, flavor) -> str:
    sel = decide(spec, arch, flavor)
    p = sel.problem
    cus = spec["cus"] or arch.cus
    lines = [
        f"split_k_policy {arch.name} {flavor.canonical}",
        f"problem {problem_text(LAUNCH.problem_of(spec))}",
        f"fold {sel.fold}",
    ]
    if sel.fold > 1:
        lines.append(f"folded {problem_text(p)}")
    lines += [
        f"gemm M={p.M} kpg={p.kpg} groups={p.groups} Kgemm={p.Kgemm}",
        f"cus {cus}",
        f"degree {sel.decision.degree}",
        f"rule {sel.decision.rule}: {sel.decision.detail}",
        f"binary {sel.binary}",
        f"cluster {sel.cluster}",
        f"launch_degree {sel.degree}",
        f"admission {'ok' if sel.admission is None else sel.admission}",
    ]
    if sel.identity is not None:
        lines += [f"kernel {sel.identity.kernel_name()}",
                  f"identity {sel.identity.hash()} {sel.identity.label()}",
                  f"spec {spec_text(sel.spec)}"]
    else:
        lines.append("kernel none")
    return "\n".join(lines + reduce_and_aot_lines(sel)) + "\n"


def reduce_and_aot_lines(sel) -> list:
    """The ``reduce`` / ``reduce_identity`` / ``reduce_spec`` (or ``reduce none``)
    and ``aot`` lines of a Selection: the tail of this family's text and of
    ``perf_model``'s (families/perf_model.py)."""
    if sel.reduce_identity is None:
        lines = ["reduce none"]
    else:
        lines = [f"reduce {sel.reduce_identity.kernel_name()}",
                 f"reduce_identity {sel.reduce_identity.hash()} {sel.reduce_identity.label()}",
                 f"reduce_spec {spec_text(sel.reduce_spec)}"]
    return lines + [f"aot {'yes' if sel.aot else 'no'}: {sel.aot_note}"]


def build(spec: dict, arch, flavor):
    return kernel_name(spec, arch, flavor), text(spec, arch, flavor)

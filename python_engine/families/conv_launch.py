"""Family ``conv_launch``: the admission and launch plan of a conv_implicit_gemm
binary for one problem at one split-K degree (docs/conv_launch.md). Twin:
cpp_engine/src/families/conv_launch.cpp.

The spec is one flat record, fields in this fixed order: every
``ImplicitGemmConvSpec`` field (the binary, conv_implicit_gemm's ``FIELDS``),
then the problem (``N C H W K Y X stride_h stride_w pad_h pad_w dil_h dil_w
groups``), then ``degree`` (the split-K degree this launch asks for).

This module is the resolver: ``split_k = -1`` (auto) is resolved through the
split-K policy (:func:`resolve`), then the resolved spec goes to
kernels/conv_launch.py, which holds the admission rules and the plan text.
"""
from __future__ import annotations

from ..kernels import conv_implicit_gemm as CIG
from ..kernels import conv_launch as K
from ..kernels.conv_launch import PROBLEM_FIELDS, SPEC_FIELDS, problem_of, problem_reason
from ..policy.split_k import resolve_conv_split_k
from ..spec.fields import Field, SpecRejected

FAMILY = "conv_launch"
#: Any LLVM AMDGPU processor is a target (api.py; targets/arch.py ``processor_arch``): the
#: split-K resolver gives one outside the arch table degree 1, rule ``arch`` (issue 37, item 4).
ANY_PROCESSOR = True
FIELDS = CIG.FIELDS + tuple(Field(n, "int", d) for n, _, d in PROBLEM_FIELDS) + (Field("degree", "int", 1),)


def resolve(spec: dict, arch, flavor) -> tuple:
    """``(spec, None)`` with ``split_k = -1`` (auto) resolved for this problem
    (docs/policy.md): the problem rules first, then ``degree`` must be left at
    1, then the resolver's degree d becomes ``split_k = d`` and ``degree = d``
    (1: the plain binary). ``(None, reason)`` when that fails; a spec without
    -1 is returned unchanged."""
    if spec["split_k"] != -1:
        return spec, None
    r = problem_reason(spec)
    if r:
        return None, r
    if spec["degree"] != 1:
        return None, (f"degree must be left at 1 when split_k = -1 (the policy picks it), "
                      f"got {spec['degree']}")
    try:
        d = resolve_conv_split_k("fwd", {n: spec[n] for n in SPEC_FIELDS}, problem_of(spec), arch,
                                 flavor=flavor).degree
    except SpecRejected as e:  # an explicit cluster request the flavor/arch cannot build
        return None, e.reason
    return dict(spec, split_k=d, degree=d), None


def validate(spec: dict, arch, flavor) -> str | None:
    """The admission reason, or None: ``split_k = -1`` resolved
    (:func:`resolve`), then the rules of kernels/conv_launch.py ``validate``."""
    spec, r = resolve(spec, arch, flavor)
    return r or K.validate(spec, arch, flavor)


def kernel_name(spec: dict, arch, flavor) -> str:
    """The name of the forward kernel this plan launches."""
    return K.kernel_name(resolve(spec, arch, flavor)[0], arch, flavor)


def build(spec: dict, arch, flavor):
    """(forward kernel name, launch plan text) of an admitted spec."""
    spec = resolve(spec, arch, flavor)[0]
    return K.kernel_name(spec, arch, flavor), K.plan_text(spec, arch, flavor)

"""The engine API (docs/engine_api.md) of the Python engine."""
from __future__ import annotations

from dataclasses import dataclass

from .families.registry import BY_NAME as _BY_FAMILY
from .families.registry import FAMILIES
from .kernels.conv_implicit_gemm import load_vector as _load_vector
from .ir import origin as _origin
from .ir.printer import line_origins, print_module
from .policy import aot
from .spec.fields import SpecRejected, normalize, unknown_family_reason
from .ir import intrinsics
from .targets.arch import ARCHES
from .targets.flavors import FLAVORS, find_flavor, unknown_flavor_reason
from .targets.target import resolve_target

ENGINE = "python"


@dataclass(frozen=True)
class Lowered:
    """Result of :func:`lower`: the kernel (symbol) name and the IR module text."""

    kernel: str
    text: str


def _family(name):
    mod = _BY_FAMILY.get(str.__str__(name)) if isinstance(name, str) else None
    if mod is None:
        raise SpecRejected(unknown_family_reason(name, FAMILIES))
    return mod


def _prepare(family, spec, arch, flavor):
    mod = _family(family)
    # the registry's own name, never the caller's object: a str subclass with
    # its own __str__/__format__ must not reach a reason (issue 24, finding 1)
    s = normalize(mod.FAMILY, mod.FIELDS, spec)
    # the families built on the split-K resolver take any LLVM AMDGPU processor (ANY_PROCESSOR)
    ar, fl = resolve_target(arch, flavor, getattr(mod, "ANY_PROCESSOR", False))
    return mod, s, ar, fl


def spec_fields(family: str) -> tuple:
    """``(name, default)`` of every spec field of ``family`` in spec order."""
    return tuple((f.name, f.default) for f in _family(family).FIELDS)


def validate(family: str, spec: dict, arch: str, flavor: str) -> str | None:
    """The first failing rule's reason for (spec, arch, flavor), or None."""
    try:
        mod, s, ar, fl = _prepare(family, spec, arch, flavor)
    except SpecRejected as e:
        return e.reason
    return mod.validate(s, ar, fl)


def _checked(family, spec, arch, flavor):
    mod, s, ar, fl = _prepare(family, spec, arch, flavor)
    reason = mod.validate(s, ar, fl)
    if reason:
        raise SpecRejected(reason)
    return mod, s, ar, fl


def kernel_name(family: str, spec: dict, arch: str, flavor: str) -> str:
    """The kernel symbol name; raises SpecRejected like :func:`lower`."""
    mod, s, ar, fl = _checked(family, spec, arch, flavor)
    return mod.kernel_name(s, ar, fl)


def lower(family: str, spec: dict, arch: str, flavor: str) -> Lowered:
    """Emit the LLVM IR module of ``family``/``spec`` for ``arch`` at ``flavor``.

    Raises SpecRejected(reason) for a spec, arch or flavor that is not accepted."""
    mod, s, ar, fl = _checked(family, spec, arch, flavor)
    name, m = mod.build(s, ar, fl)
    # conv_abi and conv_launch build text that is not an LLVM module (a str).
    return Lowered(name, m if isinstance(m, str) else print_module(m))


def lower_origins(family: str, spec: dict, arch: str, flavor: str) -> tuple:
    """:func:`lower` with origin recording on (the divergence locator,
    docs/gate.md): ``(Lowered, origins)`` where ``Lowered`` holds the same bytes
    as :func:`lower` and ``origins`` is a tuple of str, one per line of its text
    (``text.split("\\n")`` without the empty piece after the final newline):
    ``"python_engine/<path>.py:<line>"`` of the builder call that made that
    line's block label or instruction, ``""`` for a line no builder call made;
    ``()`` for a text family. Raises like :func:`lower`."""
    mod, s, ar, fl = _checked(family, spec, arch, flavor)
    _origin.set_recording(True)
    try:
        name, m = mod.build(s, ar, fl)
    finally:
        _origin.set_recording(False)
    if isinstance(m, str):
        return Lowered(name, m), ()
    text = print_module(m)
    return Lowered(name, text), line_origins(m, text)


def aot_jobs_text(flavor: str) -> tuple:
    """``(count_jobs, jobs text)`` of the AOT job grid at ``flavor`` (docs/policy.md)."""
    fl = find_flavor(flavor)
    if fl is None:
        raise SpecRejected(unknown_flavor_reason(flavor))
    return aot.count_jobs(fl), aot.jobs_text(fl)


def load_vector(cpg: int) -> int:
    """The A/B load width in elements (``vector_a`` / ``vector_b``) for a layer
    with ``cpg`` channels per group, as the launch side picks it: ``cpg`` itself
    for 3, 5, 6, 7 (one zero-padded pixel per load), else the widest of 8, 4, 2,
    1 dividing ``cpg`` (kernels/conv_implicit_gemm/lds.py). Raises SpecRejected
    for a ``cpg`` that is not an integer in 1 .. 2**63-1 (not a bool)."""
    if isinstance(cpg, bool) or not isinstance(cpg, int):
        raise SpecRejected(CPG_REASON)
    cpg = int.__int__(cpg)  # an int subclass is read as its value (its own methods are never called)
    if not 1 <= cpg < (1 << 63):
        raise SpecRejected(CPG_REASON)
    return _load_vector(cpg)


#: The one reason :func:`load_vector` gives (the same text in cpp_engine's binding).
CPG_REASON = "cpg must be an integer in 1 .. 2**63-1 (channels per group)"


def resolve_flavor(name: str) -> str:
    """Canonical flavor of ``name`` (``llvm24`` -> ``llvm23``); SpecRejected if unknown."""
    fl = find_flavor(name)
    if fl is None:
        raise SpecRejected(unknown_flavor_reason(name))
    return fl.canonical


def flavor_table() -> tuple:
    """Every flavor row (aliases included) as a dict, in table order."""
    return tuple(f.as_dict() for f in FLAVORS)


def intrinsic_table(flavor: str) -> tuple:
    """``(key, declaration)`` of every intrinsic row for ``flavor``, in table order."""
    return intrinsics.table(resolve_flavor(flavor))


def arch_table() -> tuple:
    """Every arch row as a dict, in table order."""
    return tuple(a.as_dict() for a in ARCHES)

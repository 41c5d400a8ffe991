"""The resolved target of a lowering request: flavor row then arch row.
Twin: cpp_engine/src/targets/target.cpp (``resolve_target``)."""
from __future__ import annotations

from ..spec.fields import SpecRejected
from .arch import find_arch, processor_arch, unknown_arch_reason
from .flavors import find_flavor, unknown_flavor_reason


def resolve_target(arch, flavor, any_processor: bool = False) -> tuple:
    """``(Arch, Flavor)`` rows of ``arch`` and ``flavor`` (aliases included).
    With ``any_processor`` (the families built on the split-K resolver), an
    LLVM AMDGPU processor outside the arch table gets its processor-only row
    (targets/arch.py ``processor_arch``).

    The flavor is checked first, then the arch (the order of both engines'
    API); raises SpecRejected with targets/flavors.py ``unknown_flavor_reason``
    or targets/arch.py ``unknown_arch_reason``."""
    fl = find_flavor(flavor)
    if fl is None:
        raise SpecRejected(unknown_flavor_reason(flavor))
    ar = processor_arch(arch) if any_processor else find_arch(arch)
    if ar is None:
        raise SpecRejected(unknown_arch_reason(arch))
    return ar, fl

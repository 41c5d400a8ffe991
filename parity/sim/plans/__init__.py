"""The numerics plans, one module per family: ``parity/sim/plans/<family>.py``.

A plan is found by its module's name, which is the family's name, the way
parity/config.py finds ``parity/configs/<family>.py`` (every module of this
package in name order; a name starting with ``_`` is not a plan). It defines::

    TOLERANCE = "one line: what the check compares and how close"
    def cases(spec: dict, arch: str, lowerer) -> list: ...

``cases`` turns one accepted config's spec (every field, defaults filled in)
into the :class:`parity.sim.cases.Case` records to run (and
:class:`parity.sim.cases.Skipped` problems); ``lowerer`` is
parity.sim.numerics ``_Lowerer`` (its ``launch_plan`` and ``kernel``). A
family of parity/configs has exactly one of: a plan module here, or
``NUMERICS_OPT_OUT = "reason"`` in its configs module (:func:`check_families`;
tests/test_family_registry.py checks every family). Plans are code of the
imported ``parity`` package, like the engines they run: a non-editable install
runs its own plans, not a checkout's.

Owns: the plans and their discovery. Imports: parity.sim's modules below the
runner (cases, checks, cover, reference, ...), parity.launch, parity.config
(its error type); never parity.sim.numerics (which imports this package).
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from typing import Callable, NamedTuple

from parity.config import ConfigError

CONTRACT = "TOLERANCE (a one-line text) and cases(spec, arch, lowerer) (docs/contributing.md)"


class PlanError(ConfigError):
    """A family's numerics plan is missing or malformed; the message is one line
    naming the module and the rule."""


class Plan(NamedTuple):
    """One family's plan: ``cases(spec, arch, lowerer) -> list``, its tolerance
    text, and the module's file."""

    cases: Callable
    tolerance: str
    source: str


def _load(name: str) -> Plan:
    """The plan of module ``name`` of this package; PlanError naming the rule."""
    where = f"parity/sim/plans/{name}.py"
    try:
        mod = importlib.import_module(f"{__name__}.{name}")
    except Exception as exc:  # noqa: BLE001 - a plan that cannot be imported: one line
        raise PlanError(f"numerics plan {where} cannot be loaded: {type(exc).__name__}: {exc}") from None
    cases, tol = getattr(mod, "cases", None), getattr(mod, "TOLERANCE", None)
    if not callable(cases):
        raise PlanError(f"numerics plan {where}: no function cases(spec, arch, lowerer); a plan defines {CONTRACT}")
    if not isinstance(tol, str) or not tol.strip() or "\n" in tol:
        raise PlanError(f"numerics plan {where}: TOLERANCE must be a non-empty one-line text; "
                        f"a plan defines {CONTRACT}")
    return Plan(cases, tol, getattr(mod, "__file__", where))


class _Plans(Mapping):
    """``family -> Plan`` of every plan module, loaded on first use (the plans
    import numpy and the emulator's checks; ``parity check`` never needs them)."""

    def __init__(self):
        self._plans = None

    def _all(self) -> dict:
        if self._plans is None:
            names = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
            self._plans = {n: _load(n) for n in names}
        return self._plans

    def __getitem__(self, family: str) -> Plan:
        return self._all()[family]

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


#: ``family -> Plan`` (``PLANS[f][0]`` the cases function, ``PLANS[f][1]`` the tolerance).
PLANS = _Plans()


def check_families(families) -> None:
    """PlanError for the first of ``families`` (parity.config.Family) that has
    neither a plan module nor ``NUMERICS_OPT_OUT``, or both."""
    for fam in families:
        has = fam.name in PLANS
        if not has and not fam.numerics_opt_out:
            raise PlanError(f"family {fam.name} has no numerics plan: write parity/sim/plans/{fam.name}.py "
                            f"({CONTRACT}) or set NUMERICS_OPT_OUT = \"reason\" in {fam.source or 'its configs'}")
        if has and fam.numerics_opt_out:
            raise PlanError(f"family {fam.name} has both a numerics plan (parity/sim/plans/{fam.name}.py) and "
                            f"NUMERICS_OPT_OUT in {fam.source or 'its configs'}: keep one")


def stray_plans(family_names) -> list:
    """The plan modules named after no family of ``family_names``."""
    return sorted(set(PLANS) - set(family_names))

"""Config API of the gate: named configs per kernel family.

A family module in ``parity/configs/<family>.py`` defines::

    FAMILY = "conv_implicit_gemm"
    CONFIGS = [
        Config("spk4_mem_64x64_bf16", arch="gfx1250", spec={...}),
        Config("cluster4_64x64", arch="gfx1250", spec={...},
               expect=ok(),
               per_flavor=reject_before_llvm23("amdgpu-cluster-dims requires flavor llvm23")),
        Config("bad_tile", arch="gfx1250", spec={...}, expect=reject("tile_k must ...")),
    ]

Names are stable identifiers (never list positions). A config applies to the
flavors in ``flavors`` (default: every canonical flavor). ``expect`` is the
expectation at every flavor unless ``per_flavor`` overrides it for a flavor.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import os
import sys
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Iterable, Mapping
from parity.base.input_files import MAX_CONFIG_BYTES, InputFileError, check_regular
from parity.base.project import checkout_configs_dir
from parity.base.suggest import did_you_mean
from parity.base.engine_import import engine_failure

#: The flavors every run checks. llvm24 is an alias of llvm23 (resolved by the
#: engine's flavor table) and is never run separately.
CANONICAL_FLAVORS: tuple[str, ...] = ("llvm20", "llvm22", "llvm23")

#: The two engines a gate run compares when ``--engines`` is not given (names of
#: parity.gate.runner.ENGINE_MODULES). Here, below the option vocabulary
#: (parity/cli/common.py) and the gate (parity/gate/runner.py) that both use it.
DEFAULT_ENGINES: tuple[str, str] = ("python", "cpp")
#: Seconds one engine job may take in a gate worker before the job counts as a
#: hung CRASH (``--timeout``; parity/gate/pool.py). Here for the same reason.
DEFAULT_TIMEOUT = 30.0

_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
#: an SSA hint, optionally ``@first`` / ``@middle`` / ``@last`` (one K-loop iteration class, docs/sim.md)
_HINT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*(@(first|middle|last))?$")


class ConfigError(Exception):
    """A family module or a config is malformed (raised at load time)."""

@dataclass(frozen=True)
class Expect:
    """What a config must do at a flavor: ``ok`` or ``reject`` with an exact reason."""

    kind: str  # "ok" | "reject"
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.kind == "ok":
            if self.reason is not None:
                raise ConfigError("Expect('ok') takes no reason")
        elif self.kind == "reject":
            if not isinstance(self.reason, str) or not self.reason:
                raise ConfigError("Expect('reject') needs the exact reason (non-empty str)")
        else:
            raise ConfigError(f"unknown expectation kind {self.kind!r} (ok or reject)")

    def __str__(self) -> str:
        return "ok" if self.kind == "ok" else f"reject({self.reason!r})"

    def to_json(self) -> dict:
        return {"kind": self.kind} if self.kind == "ok" else {"kind": "reject", "reason": self.reason}


def ok() -> Expect:
    """The config must lower at this flavor."""
    return Expect("ok")


def reject(reason: str) -> Expect:
    """The config must be rejected with exactly ``reason``."""
    return Expect("reject", reason)


OK = ok()


def reject_at(flavors: Iterable[str], reason: str) -> dict[str, Expect]:
    """``per_flavor`` helper: reject with ``reason`` at each of ``flavors``."""
    return {f: reject(reason) for f in flavors}


def reject_before_llvm23(reason: str) -> dict[str, Expect]:
    """``per_flavor`` helper for features that need flavor llvm23 (clusters, ...)."""
    return reject_at(("llvm20", "llvm22"), reason)


@dataclass(frozen=True)
class Config:
    name: str
    arch: str
    spec: Mapping[str, object] = field(default_factory=dict)
    expect: Expect = OK
    per_flavor: Mapping[str, Expect] = field(default_factory=dict)
    flavors: tuple[str, ...] = CANONICAL_FLAVORS
    note: str = ""
    #: Non-empty = this config may spill registers / use scratch in `parity verify`;
    #: the text is the reason (docs/verify.md). Empty (default) = a spill fails.
    allow_spill: str = ""
    #: SSA hint (the name before its counter, e.g. ``any_tile``) -> why its branch or
    #: select cannot go both ways on any admitted problem; ``parity numerics
    #: --coverage`` accepts those sites below 100 % (docs/sim.md, "Coverage").
    uncovered: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ConfigError(f"config name {self.name!r} is not a stable identifier "
                              "([A-Za-z0-9_][A-Za-z0-9_.+-]*)")
        if not isinstance(self.arch, str) or not self.arch:
            raise ConfigError(f"config {self.name}: arch must be a non-empty str")
        if not isinstance(self.spec, Mapping):
            raise ConfigError(f"config {self.name}: spec must be a dict of fields")
        for k in self.spec:
            if not isinstance(k, str):
                raise ConfigError(f"config {self.name}: spec field names must be str, got {k!r}")
        if not isinstance(self.allow_spill, str):
            raise ConfigError(f"config {self.name}: allow_spill must be a str (the reason), "
                              f"got {self.allow_spill!r}")
        if not isinstance(self.uncovered, Mapping) or not all(
                isinstance(k, str) and _HINT_RE.match(k) and isinstance(v, str) and v
                for k, v in self.uncovered.items()):
            raise ConfigError(f"config {self.name}: uncovered must map SSA hints (identifiers, optionally @first/@middle/@last) to "
                              f"non-empty reasons, got {self.uncovered!r}")
        if not isinstance(self.expect, Expect):
            raise ConfigError(f"config {self.name}: expect must be ok() or reject(reason)")
        flavors = (self.flavors,) if isinstance(self.flavors, str) else tuple(self.flavors)
        if not flavors:
            raise ConfigError(f"config {self.name}: applies to no flavor")
        for f in flavors:
            if f not in CANONICAL_FLAVORS:
                raise ConfigError(f"config {self.name}: flavor {f!r} is not canonical "
                                  f"({', '.join(CANONICAL_FLAVORS)})")
        if len(set(flavors)) != len(flavors):
            raise ConfigError(f"config {self.name}: duplicate flavor in {flavors}")
        for f, e in dict(self.per_flavor).items():
            if f not in flavors:
                raise ConfigError(f"config {self.name}: per_flavor names flavor {f!r} "
                                  "the config does not apply to")
            if not isinstance(e, Expect):
                raise ConfigError(f"config {self.name}: per_flavor[{f!r}] must be ok() or reject(reason)")
        object.__setattr__(self, "flavors", tuple(f for f in CANONICAL_FLAVORS if f in flavors))
        object.__setattr__(self, "spec", MappingProxyType(dict(self.spec)))
        object.__setattr__(self, "per_flavor", MappingProxyType(dict(self.per_flavor)))
        object.__setattr__(self, "uncovered", MappingProxyType(dict(self.uncovered)))

    def expectation(self, flavor: str) -> Expect:
        return self.per_flavor.get(flavor, self.expect)

    def applies(self, flavor: str) -> bool:
        return flavor in self.flavors


@dataclass(frozen=True)
class Family:
    name: str
    configs: tuple[Config, ...]
    source: str = ""
    #: What ``lower`` returns: ``"llvm_ir"`` (a module; `parity verify` checks it
    #: with LLVM) or ``"text"`` (conv_abi, conv_launch: compared and blessed like
    #: any family, never given to LLVM). A family module sets it as ``OUTPUT``.
    output: str = "llvm_ir"
    #: Why the numerics oracle has no plan for this family (``NUMERICS_OPT_OUT``
    #: in its module, e.g. a text family with no IR to run), or None: then the
    #: family must have a plan in parity/sim/numerics.py ``PLANS``
    #: (tests/test_family_registry.py checks that every family has one of the two).
    numerics_opt_out: str | None = None
    #: True when ``configs`` is a user's selection of the family's configs (``--only
    #: FAMILY/NAME``, parity/cli/common.py ``select_configs``), not the whole family: the
    #: gate's whole-family rule "at each flavor some config is IDENTICAL" then does not
    #: fail a flavor where every selected config must be rejected (docs/gate.md).
    selection: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise ConfigError(f"{self.source or 'family'}: FAMILY {self.name!r} is not a valid name")
        configs = tuple(self.configs)
        seen: dict[str, int] = {}
        for i, c in enumerate(configs):
            if not isinstance(c, Config):
                raise ConfigError(f"{self.source or self.name}: CONFIGS[{i}] is not a Config")
            if c.name in seen:
                raise ConfigError(f"{self.source or self.name}: duplicate config name "
                                  f"{c.name!r} in family {self.name} (entries {seen[c.name]} and {i})")
            seen[c.name] = i
        object.__setattr__(self, "configs", configs)

    def get(self, name: str) -> Config:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(f"no config {name!r} in family {self.name}")


def family_from_module(mod) -> Family:
    src = getattr(mod, "__file__", None) or mod.__name__
    if not hasattr(mod, "FAMILY"):
        raise ConfigError(f"{src}: does not define FAMILY")
    if not hasattr(mod, "CONFIGS"):
        raise ConfigError(f"{src}: does not define CONFIGS")
    configs = mod.CONFIGS
    if isinstance(configs, (str, bytes, Mapping)) or not isinstance(configs, Iterable):
        raise ConfigError(f"{src}: CONFIGS must be a list of Config")
    output = getattr(mod, "OUTPUT", "llvm_ir")
    if output not in ("llvm_ir", "text"):
        raise ConfigError(f"{src}: OUTPUT must be 'llvm_ir' or 'text', got {output!r}")
    opt_out = getattr(mod, "NUMERICS_OPT_OUT", None)
    if opt_out is not None and (not isinstance(opt_out, str) or not opt_out.strip()):
        raise ConfigError(f"{src}: NUMERICS_OPT_OUT must be a non-empty reason text")
    return Family(mod.FAMILY, tuple(configs), source=src, output=output, numerics_opt_out=opt_out)


DEFAULT_PACKAGE = "parity.configs"


def _check_config_file(path) -> None:
    """ConfigError unless the configs module ``path`` is a regular file within
    parity/base/input_files.py's MAX_CONFIG_BYTES (checked before Python opens it)."""
    try:
        check_regular(path, "configs module", MAX_CONFIG_BYTES)
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None


def _located(exc: ConfigError, path: str) -> ConfigError:
    """``exc``, raised while the configs module ``path`` ran, with ``path:LINE`` in front (the
    line of that module that built the malformed Config or Expect), so the one error line
    says where to look: ``config name 'bad name' is not a stable identifier`` alone does not."""
    line, tb = None, exc.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(path):
            line = tb.tb_lineno
        tb = tb.tb_next
    return ConfigError(f"{path}:{line}: {exc}" if line is not None else f"{path}: {exc}")


def _family_modules(package: str) -> list:
    """The family modules of ``package`` in name order. For the default package
    inside a checkout whose ``parity`` is not the imported one (a non-editable
    install), the checkout's ``parity/configs/*.py`` files
    (:func:`parity.base.project.checkout_configs_dir`)."""
    d = checkout_configs_dir() if package == DEFAULT_PACKAGE else None
    if d is None:
        name = package
        try:
            pkg = importlib.import_module(package)
            mods = []
            for info in sorted(pkgutil.iter_modules(getattr(pkg, "__path__", [])), key=lambda i: i.name):
                if not info.name.startswith("_"):
                    name = f"{package}.{info.name}"
                    # a FIFO or device named <family>.py would hang the import: its type first
                    path = os.path.join(getattr(info.module_finder, "path", ""), info.name + ".py")
                    if os.path.lexists(path):
                        _check_config_file(path)
                    try:
                        mods.append(importlib.import_module(name))
                    except ConfigError as exc:  # a Config(...) the module builds is malformed
                        raise _located(exc, path) from None
            return mods
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - a configs module that cannot be imported: one line
            raise ConfigError(engine_failure(exc)  # an engine the configs import (a conflict marker)
                              or f"configs module {name!r} cannot be loaded: {type(exc).__name__}: {exc}") from None
    mods = []
    for path in sorted(d.glob("*.py")):
        if path.name.startswith("_"):
            continue
        _check_config_file(path)
        name = f"parity._checkout_configs.{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except ConfigError as exc:
            raise _located(exc, str(path)) from None
        except Exception as exc:
            raise ConfigError(engine_failure(exc) or f"{path}: cannot be loaded: {type(exc).__name__}: {exc}") from None
        mods.append(mod)
    return mods


def load_families(package: str = DEFAULT_PACKAGE, only: Iterable[str] | None = None) -> list[Family]:
    """Import every module of ``package`` (other than __init__) as a family.

    Returns families sorted by name. ``only`` restricts to the named families;
    an unknown name there is an error.
    """
    families: dict[str, Family] = {}
    for mod in _family_modules(package):
        fam = family_from_module(mod)
        if fam.name in families:
            raise ConfigError(f"family {fam.name!r} defined twice ({families[fam.name].source} "
                              f"and {fam.source})")
        families[fam.name] = fam
    if only is not None:
        only = list(only)
        unknown = [n for n in only if n not in families]
        if unknown:
            hint = did_you_mean(unknown[0], families) if len(unknown) == 1 else ""
            raise ConfigError(f"unknown famil{'y' if len(unknown) == 1 else 'ies'}: "
                              f"{', '.join(unknown)}{hint} (known: {', '.join(sorted(families)) or 'none'})")
        return [families[n] for n in sorted(set(only))]
    return [families[n] for n in sorted(families)]

"""Stub engines and config packages for the gate tests (tests/test_gate_*.py).

A stub engine implements docs/engine_api.md just enough for the gate. The
"bad" variant misbehaves when the spec asks it to (keys starting with ``b_``),
so one run over one config package can produce every verdict on purpose.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

ENGINE_TEMPLATE = '''
import os, sys, time, ctypes
from collections import namedtuple

ENGINE = {engine!r}
BAD = {bad!r}
FAMILIES = ("fam_a", "fam_b", "fam_empty", "fam_x", "fam_none")
Lowered = namedtuple("Lowered", "kernel text")
_FLAVORS = {{"llvm20": "llvm20", "llvm22": "llvm22", "llvm23": "llvm23", "llvm24": "llvm23"}}


class SpecRejected(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def resolve_flavor(name):
    try:
        return _FLAVORS[name]
    except KeyError:
        raise SpecRejected(f"unknown flavor {{name!r}}") from None


def flavor_table():
    return tuple({{"flavor": k, "canonical": v}} for k, v in _FLAVORS.items())


def spec_fields(family):
    return (("kernel", "k"),)


def validate(family, spec, arch, flavor):
    try:
        lower(family, spec, arch, flavor)
    except SpecRejected as e:
        return e.reason
    return None


def kernel_name(family, spec, arch, flavor):
    return lower(family, spec, arch, flavor).kernel


def lower(family, spec, arch, flavor):
    flavor = resolve_flavor(flavor)
    if family not in FAMILIES:
        raise SpecRejected(f"unknown family {{family!r}}")
    if arch != "gfx1250":
        raise SpecRejected(f"unknown arch {{arch!r}}")
    if BAD:
        if spec.get("b_segv"):
            ctypes.string_at(0)
        if spec.get("b_abort"):
            os.abort()
        if spec.get("b_exit"):
            os._exit(7)
        if spec.get("b_hang"):
            time.sleep(3600)
        if spec.get("b_raise"):
            raise KeyError("internal bug")
        if spec.get("b_sysexit"):
            sys.exit(3)
        if spec.get("b_reject"):
            raise SpecRejected("bad engine says no")
        if spec.get("b_reason") and spec.get("reject"):
            raise SpecRejected(spec["reject"] + " (worded differently)")
        if spec.get("b_garbage"):
            return 42
    needs = spec.get("needs_llvm23")
    if needs and flavor != "llvm23":
        raise SpecRejected(needs)
    if spec.get("reject") and not (BAD and spec.get("b_accept")):
        raise SpecRejected(spec["reject"])
    kernel = f"{{family}}_{{spec.get('kernel', 'k')}}"
    if BAD and spec.get("b_kernel"):
        kernel += "_x"
    body = spec.get("body", "ret void")
    if BAD and spec.get("b_text"):
        body = "ret void ; different"
    text = (f"; ModuleID = '{{family}}'\\n"
            f"target triple = \\"amdgcn-amd-amdhsa\\"\\n"
            f"; flavor {{flavor}} arch {{arch}}\\n"
            f"\\n"
            f"define amdgpu_kernel void @{{kernel}}() {{{{\\n"
            f"  {{body}}\\n"
            f"}}}}\\n")
    return Lowered(kernel, text)
'''


def write_engines(directory: Path, prefix: str) -> tuple[str, str]:
    """Write ``<prefix>_good`` and ``<prefix>_bad`` engine modules; return their names."""
    directory = Path(directory)
    good, bad = f"{prefix}_good", f"{prefix}_bad"
    (directory / f"{good}.py").write_text(ENGINE_TEMPLATE.format(engine=good, bad=False))
    (directory / f"{bad}.py").write_text(ENGINE_TEMPLATE.format(engine=bad, bad=True))
    return good, bad


def write_configs(directory: Path, package: str, families: dict[str, str]) -> str:
    """Write a configs package ``package`` with one module per family source."""
    pkg = Path(directory) / package
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    for mod, src in families.items():
        (pkg / f"{mod}.py").write_text(textwrap.dedent(src))
    return package


# A family that is fully green with the good/bad pair (the bad engine only
# misbehaves on b_* keys, which these configs do not use).
GREEN_FAMILY = '''
from parity.config import Config, ok, reject, reject_before_llvm23
FAMILY = "fam_a"
CONFIGS = [
    Config("plain", arch="gfx1250", spec={"kernel": "plain"}),
    Config("other", arch="gfx1250", spec={"kernel": "other", "body": "unreachable"}),
    Config("must_reject", arch="gfx1250", spec={"reject": "tile_k must be a multiple of 32"},
           expect=reject("tile_k must be a multiple of 32")),
    Config("cluster", arch="gfx1250",
           spec={"kernel": "cluster", "needs_llvm23": "amdgpu-cluster-dims requires flavor llvm23"},
           per_flavor=reject_before_llvm23("amdgpu-cluster-dims requires flavor llvm23")),
    Config("only23", arch="gfx1250", spec={"kernel": "only23"}, flavors=("llvm23",)),
]
'''


ALL_VERDICTS_FAMILY = '''
from parity.config import Config, ok, reject, reject_before_llvm23
FAMILY = "fam_x"
R = "tile_k must be a multiple of 32"
CONFIGS = [
    Config("ident", arch="gfx1250", spec={"kernel": "ident"}),
    Config("both_rej", arch="gfx1250", spec={"reject": R}, expect=reject(R)),
    Config("cluster", arch="gfx1250",
           spec={"kernel": "cluster", "needs_llvm23": "amdgpu-cluster-dims requires flavor llvm23"},
           per_flavor=reject_before_llvm23("amdgpu-cluster-dims requires flavor llvm23")),
    Config("text_differs", arch="gfx1250", spec={"kernel": "t", "b_text": 1}),
    Config("kernel_differs", arch="gfx1250", spec={"kernel": "k", "b_kernel": 1}),
    Config("reason_differs", arch="gfx1250", spec={"reject": R, "b_reason": 1}, expect=reject(R)),
    Config("one_rejects", arch="gfx1250", spec={"kernel": "o", "b_reject": 1}),
    Config("one_accepts", arch="gfx1250", spec={"reject": R, "b_accept": 1}, expect=reject(R)),
    Config("raises", arch="gfx1250", spec={"b_raise": 1}, flavors=("llvm20",)),
    Config("sys_exit", arch="gfx1250", spec={"b_sysexit": 1}, flavors=("llvm20",)),
    Config("garbage", arch="gfx1250", spec={"b_garbage": 1}, flavors=("llvm20",)),
    Config("segfault", arch="gfx1250", spec={"b_segv": 1}, flavors=("llvm23",)),
    Config("aborts", arch="gfx1250", spec={"b_abort": 1}, flavors=("llvm23",)),
    Config("exits", arch="gfx1250", spec={"b_exit": 1}, flavors=("llvm23",)),
    Config("hangs", arch="gfx1250", spec={"b_hang": 1}, flavors=("llvm23",)),
    Config("must_reject_accepted", arch="gfx1250", spec={"kernel": "m"}, expect=reject("nope")),
    Config("must_pass_rejected", arch="gfx1250", spec={"reject": R}),
    Config("wrong_reason", arch="gfx1250", spec={"reject": R}, expect=reject("another reason")),
    Config("zz_after_crashes", arch="gfx1250", spec={"kernel": "zz"}),
]
'''

EMPTY_FAMILY = '''
FAMILY = "fam_empty"
CONFIGS = []
'''

NOTHING_COMPARED_FAMILY = '''
from parity.config import Config, reject
FAMILY = "fam_none"
CONFIGS = [Config("only_rejects", arch="gfx1250", spec={"reject": "no"}, expect=reject("no"))]
'''


def importable_world(directory: Path, tag: str, families: dict[str, str]):
    """Generator for a module-scoped fixture: the stub engines and a config package of
    ``families`` written under ``directory`` with unique names from ``tag``, importable while
    the fixture lives. Yields ``(good, bad, config_package)``."""
    import sys
    import uuid
    u = uuid.uuid4().hex[:8]
    good, bad = write_engines(directory, f"{tag}{u}")
    cfg = write_configs(directory, f"{tag}cfg{u}", families)
    sys.path.insert(0, str(directory))
    try:
        yield good, bad, cfg
    finally:
        sys.path.remove(str(directory))

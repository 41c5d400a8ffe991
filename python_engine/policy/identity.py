"""``KernelIdentity``: the fields that name a binary, its stable hash and its
label (docs/policy.md). Twin: cpp_engine/src/policy/identity.{h,cpp}.

Each field declares once, on itself, how it enters the hashed text:
``always`` (no default; always hashed) or ``omit_at_default`` (left out of
the hashed text while it holds its default). A field added later therefore
takes a default and the ``omit_at_default`` rule, and every existing hash
stays the same. ``tests/test_policy.py`` walks every field.

``two_stage`` means "takes the split-K workspace ABI" (``split_k > 1``; the
degree is a run-time argument, so one binary serves every degree);
``needs_stage2 = two_stage and not split_k_cluster`` is the only predicate
for launching Stage 2. Labels are the kernel name (``_spk``, ``_skc<S>``)
followed by ``.<arch>.<flavor>``.
"""
from __future__ import annotations

import hashlib
from dataclasses import MISSING, dataclass, field, fields, replace

from ..kernels import conv_fwd_split_k_reduce as RED
from ..kernels import conv_implicit_gemm as CIG

ALWAYS = "always"
OMIT_AT_DEFAULT = "omit_at_default"
HASH_HEX = 16  # hex digits of sha256 kept in the hash


def _always():
    return field(metadata={"ident": ALWAYS})


def _opt(default):
    return field(default=default, metadata={"ident": OMIT_AT_DEFAULT})


@dataclass(frozen=True)
class KernelIdentity:
    family: str = _always()      # conv_implicit_gemm | conv_fwd_split_k_reduce
    arch: str = _always()
    flavor: str = _always()      # canonical flavor
    dtype: str = _always()
    # conv_implicit_gemm
    tile_m: int = _opt(64)
    tile_n: int = _opt(64)
    tile_k: int = _opt(32)
    waves_m: int = _opt(2)
    waves_n: int = _opt(2)
    pipeline: str = _opt("mem")
    num_load_waves: int = _opt(1)   # normalized to 1 for mem (same bytes)
    epilogue: str = _opt("default")
    vector_a: int = _opt(8)
    vector_b: int = _opt(8)
    acc_epilogue: str = _opt("identity")
    two_stage: bool = _opt(False)
    split_k_cluster: int = _opt(0)
    name_prefix: str = _opt("")
    # conv_fwd_split_k_reduce
    vector: int = _opt(8)
    threads: int = _opt(256)
    degree: int = _opt(0)

    # -- construction ---------------------------------------------------------------
    @classmethod
    def of_conv(cls, spec: dict, arch: str, flavor: str) -> "KernelIdentity":
        """The identity of a (valid) conv_implicit_gemm spec; ``split_k > 1`` is
        ``two_stage`` whatever the degree."""
        s = spec
        return cls("conv_implicit_gemm", arch, flavor, s["dtype"], tile_m=s["tile_m"], tile_n=s["tile_n"],
                   tile_k=s["tile_k"], waves_m=s["waves_m"], waves_n=s["waves_n"], pipeline=s["pipeline"],
                   num_load_waves=s["num_load_waves"] if s["pipeline"] == "wavelet" else 1,
                   epilogue=s["epilogue"], vector_a=s["vector_a"], vector_b=s["vector_b"],
                   acc_epilogue=CIG.stage1_acc(s), two_stage=s["split_k"] > 1,
                   split_k_cluster=s["split_k_cluster"], name_prefix=s["name_prefix"])

    @classmethod
    def of_reduce(cls, spec: dict, arch: str, flavor: str) -> "KernelIdentity":
        return cls("conv_fwd_split_k_reduce", arch, flavor, spec["dtype"], vector=spec["vector"],
                   threads=spec["threads"], degree=spec["degree"],
                   acc_epilogue=spec.get("acc_epilogue", "identity"))

    @classmethod
    def of(cls, family: str, spec: dict, arch: str, flavor: str) -> "KernelIdentity":
        return cls.of_conv(spec, arch, flavor) if family == "conv_implicit_gemm" else \
            cls.of_reduce(spec, arch, flavor)

    # -- what it names --------------------------------------------------------------
    @property
    def needs_stage2(self) -> bool:
        """The one predicate for launching Stage 2."""
        return self.two_stage and not self.split_k_cluster

    def spec(self) -> dict:
        """The family spec that builds this binary (two-stage as ``split_k = 2``:
        every degree > 1 builds the same bytes)."""
        if self.family == "conv_implicit_gemm":
            out = {f.name: getattr(self, f.name) for f in CIG.FIELDS if f.name != "split_k"}
            out["split_k"] = 2 if self.two_stage else 1
            return {f.name: out[f.name] for f in CIG.FIELDS}
        return {f.name: getattr(self, f.name) for f in RED.FIELDS}

    def kernel_name(self) -> str:
        if self.family == "conv_implicit_gemm":
            return CIG.kernel_name(self.spec(), None, None)
        return RED.kernel_name(self.spec(), None, None)

    def hashed_text(self) -> str:
        """``name=value`` lines, field order; ``omit_at_default`` fields at their
        default are left out. Booleans ``true``/``false``, integers decimal."""
        lines = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.metadata["ident"] == OMIT_AT_DEFAULT and v == f.default and type(v) is type(f.default):
                continue
            lines.append(f"{f.name}={_show(v)}")
        return "\n".join(lines) + "\n"

    def hash(self) -> str:
        return hashlib.sha256(self.hashed_text().encode("utf-8")).hexdigest()[:HASH_HEX]

    def label(self) -> str:
        return f"{self.kernel_name()}.{self.arch}.{self.flavor}"

    def replace(self, **kw) -> "KernelIdentity":
        return replace(self, **kw)


def _show(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def identity_fields() -> tuple:
    """``(name, rule, default)`` of every field; default is MISSING for ``always``."""
    return tuple((f.name, f.metadata["ident"], f.default) for f in fields(KernelIdentity))


__all__ = ["KernelIdentity", "identity_fields", "ALWAYS", "OMIT_AT_DEFAULT", "MISSING"]

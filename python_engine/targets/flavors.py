"""The flavor table (DESIGN §3): one row per LLVM toolchain generation.
Twin: cpp_engine/src/targets/flavors.{h,cpp}.

Facts and their sources:
- datalayout strings: LLVM ``AMDGPUTargetMachine.cpp`` (computeDataLayout).
  LLVM 20 gives buffer resources ``p8:128:128``; LLVM 21 added the 48-bit index
  width (``p8:128:128:128:48``); the LLVM 22.1 amdgcn string adds ``m:e``
  (ELF mangling). The llvm23 string is the one llvmlite 0.50 (LLVM 22.1)
  reports for ``amdgcn-amd-amdhsa``.
- pointer capture attribute: LLVM 21 replaced ``nocapture`` with
  ``captures(none)`` (LLVM LangRef, "captures" parameter attribute).
- buffer resource intrinsic: LLVM 20 ``llvm.amdgcn.make.buffer.rsrc.p1``
  with an i32 num_records; LLVM 22 overloads the result (``.p8.p1``) and takes
  an i64 num_records (``IntrinsicsAMDGPU.td``).
- workgroup clusters: gfx1250 ``amdgpu-cluster-dims`` and the cluster id
  intrinsics are written for LLVM 22.1 and later; we only emit them at llvm23.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..spec.fields import unknown_name_reason

_DL_TAIL = ("-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128"
            "-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9")
_DL_HEAD = "-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32"

DL_LLVM20 = "e" + _DL_HEAD + "-p8:128:128" + _DL_TAIL
DL_LLVM22 = "e" + _DL_HEAD + "-p8:128:128:128:48" + _DL_TAIL
DL_LLVM23 = "e-m:e" + _DL_HEAD + "-p8:128:128:128:48" + _DL_TAIL

TRIPLE = "amdgcn-amd-amdhsa"


@dataclass(frozen=True)
class Flavor:
    """One flavor row. ``canonical`` names the row an alias resolves to;
    ``rsrc_num_records_bits`` is the width of make.buffer.rsrc's num_records."""

    name: str
    canonical: str
    datalayout: str
    capture_attr: str
    rsrc_num_records_bits: int
    clusters: bool

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "canonical": self.canonical,
            "datalayout": self.datalayout,
            "capture_attr": self.capture_attr,
            "rsrc_num_records_bits": self.rsrc_num_records_bits,
            "clusters": self.clusters,
        }


FLAVORS = (
    Flavor("llvm20", "llvm20", DL_LLVM20, "nocapture", 32, False),
    Flavor("llvm22", "llvm22", DL_LLVM22, "captures(none)", 64, False),
    Flavor("llvm23", "llvm23", DL_LLVM23, "captures(none)", 64, True),
    Flavor("llvm24", "llvm23", DL_LLVM23, "captures(none)", 64, True),
)

CANONICAL_FLAVORS = ("llvm20", "llvm22", "llvm23")
_BY_NAME = {f.name: f for f in FLAVORS}


def find_flavor(name) -> Flavor | None:
    """The row named ``name`` (aliases included), or None."""
    return _BY_NAME.get(str.__str__(name)) if isinstance(name, str) else None


def unknown_flavor_reason(name) -> str:
    """Rejection reason for a flavor name that is not in the table
    (spec/fields.py ``unknown_name_reason``: None reads as the text None, a
    non-str or non-printable value is not echoed; same texts in the C++ engine)."""
    return unknown_name_reason("flavor", name, "llvm20, llvm22, llvm23, llvm24", "flavor must be a string or None")

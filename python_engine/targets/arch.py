"""The arch table: the GPU targets the engines know.

Only gfx1250 has the kernels of this project; the others are known so that a
request for them is rejected with a reason rather than an unknown-arch error.

Sources:
- wave size, LDS bytes per workgroup: LLVM ``AMDGPU.td`` / ``GCNSubtarget``
  (FeatureWavefrontSize32/64, FeatureAddressableLocalMemorySize*), and
  LLVM ``AMDGPUUsage.rst`` processor table.
  gfx1250: wave32, 327680 bytes (320 KiB) of LDS per workgroup.
  gfx950: wave64, 163840 bytes. gfx942: wave64, 65536 bytes.
  gfx1100, gfx1201: wave32 (default), 65536 bytes.
- matrix units: gfx1250 WMMA ``v_wmma_f32_16x16x32_{bf16,f16}``
  (LLVM ``IntrinsicsAMDGPU.td``, gfx1250 WMMA); gfx11/gfx12 have only
  16x16x16 WMMA; gfx942/gfx950 have MFMA, no WMMA.
- workgroup clusters: gfx1250 only (LLVM FeatureClusters).
- CUs per device (``cus``, used by the split-K degree policy; the runtime may
  pass the device's real count instead): gfx942 304 (AMD Instinct MI300X data
  sheet), gfx950 256 (AMD Instinct MI355X data sheet), gfx1100 96 (AMD Radeon
  RX 7900 XTX specifications), gfx1201 64 (AMD Radeon RX 9070 XT
  specifications). gfx1250: ASSUMPTION 256 (no public device specification;
  docs/targets.md, docs/policy.md).
- raw buffer resource word 3 (``rsrc_flags``, the flags argument of
  ``make.buffer.rsrc``): gfx9-class (gfx942, gfx950) 0x00020000 and
  gfx11/gfx12-class (gfx1100, gfx1201) 0x31004000, the values AMD's
  Composable Kernel uses (``CK_BUFFER_RESOURCE_3RD_DWORD``); in the GFX11/GFX12
  descriptor layout 0x31004000 is FORMAT 32-bit, RESOURCE_LEVEL 1 and
  OOB_SELECT 3 (raw: a dword whose byte offset is at or past num_records reads
  0 and is not written), the behaviour the conv kernel's range checks rely on.
  gfx1250: ASSUMPTION 0x31004000 (GFX12 descriptor layout; to be confirmed on
  hardware, docs/targets.md).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Arch:
    """One arch row. ``wmma`` lists ``(M, N, K, input dtype)`` WMMA shapes with
    fp32 accumulation; ``matrix`` is ``wmma`` or ``mfma``."""

    name: str
    wave_size: int
    lds_bytes: int
    matrix: str
    wmma: tuple
    clusters: bool
    cus: int  # compute units per device (see the sources above; gfx1250 is an assumption)
    rsrc_flags: int  # raw buffer resource word 3 (see the sources above; gfx1250 is an assumption)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "wave_size": self.wave_size,
            "lds_bytes": self.lds_bytes,
            "matrix": self.matrix,
            "wmma": [list(s) for s in self.wmma],
            "clusters": self.clusters,
            "cus": self.cus,
            "rsrc_flags": self.rsrc_flags,
        }


ARCHES = (
    Arch("gfx1250", 32, 327680, "wmma", ((16, 16, 32, "bf16"), (16, 16, 32, "fp16")), True, 256, 0x31004000),
    Arch("gfx942", 64, 65536, "mfma", (), False, 304, 0x00020000),
    Arch("gfx950", 64, 163840, "mfma", (), False, 256, 0x00020000),
    Arch("gfx1100", 32, 65536, "wmma", ((16, 16, 16, "bf16"), (16, 16, 16, "fp16")), False, 96, 0x31004000),
    Arch("gfx1201", 32, 65536, "wmma", ((16, 16, 16, "bf16"), (16, 16, 16, "fp16")), False, 64, 0x31004000),
)

_BY_NAME = {a.name: a for a in ARCHES}


def find_arch(name) -> Arch | None:
    """The row named ``name``, or None."""
    return _BY_NAME.get(str.__str__(name)) if isinstance(name, str) else None


def unknown_arch_reason(name) -> str:
    """Rejection reason for an arch name that is not in the table: ``None``
    reads as the text None; another non-str value, or a string that is not
    printable text (kernels/spec.py ``printable``), gets a reason that does not
    echo it (same texts in the C++ engine and its binding)."""
    from ..kernels.spec import printable, text_reason
    if name is None:
        name = "None"
    if not isinstance(name, str):
        return "arch must be a string or None"
    name = str.__str__(name)
    if not printable(name):
        return text_reason("arch")
    return f"arch '{name}' is not one of gfx1250, gfx942, gfx950, gfx1100, gfx1201"


def has_wmma_16x16x32(arch: Arch) -> bool:
    """True when the arch has the gfx1250 16x16x32 WMMA."""
    return any(s[:3] == (16, 16, 32) for s in arch.wmma)

"""The arch table: the GPU targets the engines know.
Twin: cpp_engine/src/targets/arch.{h,cpp}.

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
- raw buffer resource (V#, the operands of ``make.buffer.rsrc``), one layout
  per arch (``rsrc_layout``; field layouts in ``RSRC_LAYOUTS`` below and in
  docs/targets.md):

  * ``gfx9`` (gfx942, gfx950): base 47:0, stride 61:48, num_records 95:64,
    word 3 = the ``flags`` operand verbatim. 0x00020000 is AMD Composable
    Kernel's ``CK_BUFFER_RESOURCE_3RD_DWORD`` for gfx9 (DATA_FORMAT 32); gfx9 has
    no OOB_SELECT: a raw (stride 0) access is checked against num_records bytes.
  * ``gfx11`` (gfx1100, gfx1201): the same base/stride/num_records words, word 3
    = ``flags`` verbatim. 0x31004000 is CK's gfx11/gfx12 value: FORMAT 32-bit,
    RESOURCE_LEVEL 1, OOB_SELECT (bits 29:28) 3 = the raw check (a dword at or
    past num_records bytes reads 0 and is not written). LLVM 22.1
    (``llc-22 -mcpu=gfx1201``/``gfx1100``) moves 0x31004000 into the
    descriptor's last SGPR unchanged.
  * ``gfx1250``: LLVM 22.1 lowers ``make.buffer.rsrc`` for gfx1250
    (FeatureGFX1250's ``Feature45BitNumRecordsBufferResource``,
    SIISelLowering ``lowerPointerAsRsrcIntrin``) into the 128-bit layout base
    56:0, num_records 101:57 (45 bits), stride 121:108 and ``flags`` bits 3:0
    at bits 127:124; the other bits of ``flags`` are dropped (checked: the
    compiled kernels' SGPR quads, ``parity verify``). Of those four bits, bit 0
    is SWIZZLE_ENABLE, bit 1 OOB_SELECT (1 = check the offset only, the raw
    range check) and bits 3:2 the resource TYPE (0 = buffer) -- read from the
    Triton AMD backend (``BufferOpsEmitter.cpp``, its gfx1250 comment) and
    rocMLIR (``flagsKeepBoundsCheck``, gfx1250 case); **ASSUMPTION** until
    checked against a gfx1250 ISA document or hardware. ``rsrc_flags`` 0x2
    therefore asks for OOB_SELECT 1 and compiles to word 3 0x20000000.

  ``rsrc_word3`` is the word 3 LLVM 22.1 builds for a stride-0 resource whose
  num_records fits 32 bits (what ``parity verify`` expects in every compiled
  buffer instruction's descriptor).

- roofline (``roofline``, the constants of the perf model,
  python_engine/policy/perf_model.py; integers; gfx1250 only, the other rows
  have none; docs/perf_model.md gives the reasoning):

  * ``clock_mhz`` 2400: ASSUMPTION -- no public gfx1250 device; the engine
    clock of the AMD Instinct MI355X (CDNA 4, 2.4 GHz peak, AMD at Hot Chips
    2025), the nearest public AMD data-centre part.
  * ``simds_per_cu`` 2: gfx1250 runs only in CU mode (LLVM
    ``[AMDGPU] Don't allow wgp mode on gfx1250``, PR 153680) and LLVM's
    ``getEUsPerCU`` counts 2 SIMDs per CU in CU mode on gfx10+.
  * ``wmma_cycles`` 8: cycles one SIMD's matrix unit is busy per
    ``v_wmma_f32_16x16x32_{bf16,f16}`` (16384 FLOP): LLVM 22.1's gfx1250
    scheduling model (``llvm-mca-22 -mcpu=gfx1250``: latency 8, reciprocal
    throughput 8 on HWXDL). 2 SIMDs x 16384 / 8 = 4096 bf16 FLOP per clock
    per CU, the per-CU bf16 rate of MI355X (8192 FP8 FLOP/clk/CU, AMD at
    ISSCC 2026, half at 16 bits).
  * ``max_waves_per_simd`` 4: ASSUMPTION -- the occupancy cap of the conv
    kernels: up to 370 VGPRs per lane (docs/policy.md, the AOT grid's
    heaviest jobs) in a wave32 VGPR file of 1536 per lane (RDNA 3/4) leaves 4.
  * ``hbm_bytes_per_us`` 8000000 (8 TB/s): ASSUMPTION -- MI355X HBM3E (AMD
    data sheet, 8 TB/s).
  * ``l2_bytes_per_clk_per_cu`` 64: ASSUMPTION -- one 64-byte line per clock
    per CU (CDNA 3 white paper: 128 B/clk per L2 channel, 16 channels per XCD
    of 38 CUs, about 54 B/clk per CU; rounded to a line).
  * ``launch_ns`` 2000: ASSUMPTION -- per kernel launch in a stream (HIP
    back-to-back dispatch of small kernels is 1..5 us; the model only
    compares one launch against two).
  * ``cluster_barrier_cycles`` 500: ASSUMPTION -- ``s_cluster_barrier`` plus
    the release/acquire fences of the cluster fold (no public figure).
  * ``kstep_issue_cycles`` 93: MEASURED, one instruction issued per clock per
    wave (ASSUMPTION) times the instructions of the compiled 64x64x32 main
    loop per 32-deep K step: ``parity perf`` (LLVM 22.1, gfx1250, llvm23)
    counts 93 after issue 16's kernel changes (loop-carried im2col, pipelined
    loop, swizzled LDS; 118 before them, 75 at the 16x16 tile): a wave's
    issue time per K step when its WMMAs do not cover it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..spec.fields import unknown_name_reason


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
    rsrc_flags: int  # make.buffer.rsrc's flags operand (see the sources above)
    rsrc_layout: str  # buffer resource layout: gfx9, gfx11 or gfx1250 (RSRC_LAYOUTS)
    rsrc_word3: int  # descriptor word 3 LLVM 22.1 compiles for stride 0, num_records < 2**32
    roofline: tuple = ()  # ((name, int), ...) in ROOFLINE_FIELDS order; () when the arch has none

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
            "rsrc_layout": self.rsrc_layout,
            "rsrc_word3": self.rsrc_word3,
            "rsrc_fields": [[f, lo, w] for f, (lo, w) in RSRC_LAYOUTS[self.rsrc_layout].items()],
            "roofline": [[n, v] for n, v in self.roofline],
        }

    def roof(self, name: str) -> int:
        """The roofline constant ``name`` (KeyError when the arch has none)."""
        return dict(self.roofline)[name]


#: The roofline constants, in table order (units in the names; sources above).
ROOFLINE_FIELDS = ("clock_mhz", "simds_per_cu", "wmma_cycles", "max_waves_per_simd", "hbm_bytes_per_us",
                   "l2_bytes_per_clk_per_cu", "launch_ns", "cluster_barrier_cycles", "kstep_issue_cycles")
GFX1250_ROOFLINE = tuple(zip(ROOFLINE_FIELDS, (2400, 2, 8, 4, 8000000, 64, 2000, 500, 93)))


ARCHES = (
    Arch("gfx1250", 32, 327680, "wmma", ((16, 16, 32, "bf16"), (16, 16, 32, "fp16")), True, 256, 0x2, "gfx1250", 0x20000000,
         GFX1250_ROOFLINE),
    Arch("gfx942", 64, 65536, "mfma", (), False, 304, 0x00020000, "gfx9", 0x00020000),
    Arch("gfx950", 64, 163840, "mfma", (), False, 256, 0x00020000, "gfx9", 0x00020000),
    Arch("gfx1100", 32, 65536, "wmma", ((16, 16, 16, "bf16"), (16, 16, 16, "fp16")), False, 96, 0x31004000, "gfx11", 0x31004000),
    Arch("gfx1201", 32, 65536, "wmma", ((16, 16, 16, "bf16"), (16, 16, 16, "fp16")), False, 64, 0x31004000, "gfx11", 0x31004000),
)

#: Buffer resource (V#) layouts: field -> (low bit, width) over the 128-bit
#: descriptor (word 0 = bits 31:0). ``flags`` is where LLVM 22.1 puts the
#: bits of make.buffer.rsrc's flags operand (gfx1250: its bits 3:0 only).
RSRC_LAYOUTS = {
    "gfx9": {"base": (0, 48), "stride": (48, 14), "num_records": (64, 32), "flags": (96, 32)},
    "gfx11": {"base": (0, 48), "stride": (48, 14), "num_records": (64, 32), "flags": (96, 32)},
    "gfx1250": {"base": (0, 57), "num_records": (57, 45), "stride": (108, 14), "flags": (124, 4)},
}

_BY_NAME = {a.name: a for a in ARCHES}

#: LLVM's AMDGPU processor names: every ``ProcessorModel`` of LLVM 22.1's
#: ``llvm/lib/Target/AMDGPU/GCNProcessors.td`` (the "Processors" table of
#: ``llvm/docs/AMDGPUUsage.rst``, alternative names such as ``tahiti``
#: included), in the order ``llc-22 -mtriple=amdgcn -mcpu=help`` prints them
#: (tests/test_policy.py compares the list with that output). Twin:
#: cpp_engine/src/targets/arch.cpp ``llvm_processors``.
LLVM_PROCESSORS = (
    "bonaire", "carrizo", "fiji", "generic", "generic-hsa", "gfx10-1-generic", "gfx10-3-generic", "gfx1010",
    "gfx1011", "gfx1012", "gfx1013", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035",
    "gfx1036", "gfx11-generic", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152",
    "gfx1153", "gfx12-generic", "gfx1200", "gfx1201", "gfx1250", "gfx1251", "gfx600", "gfx601", "gfx602",
    "gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705", "gfx801", "gfx802", "gfx803", "gfx805",
    "gfx810", "gfx9-4-generic", "gfx9-generic", "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909",
    "gfx90a", "gfx90c", "gfx942", "gfx950", "hainan", "hawaii", "iceland", "kabini", "kaveri", "mullins",
    "oland", "pitcairn", "polaris10", "polaris11", "stoney", "tahiti", "tonga", "tongapro", "verde",
)

# A processor outside the table: only its name is known (issue 37, item 4).
_PROCESSOR_ROWS = {n: Arch(n, 0, 0, "none", (), False, 0, 0, "none", 0) for n in LLVM_PROCESSORS
                   if n not in _BY_NAME}


def find_arch(name) -> Arch | None:
    """The row named ``name``, or None."""
    return _BY_NAME.get(str.__str__(name)) if isinstance(name, str) else None


def processor_arch(name) -> Arch | None:
    """The arch-table row named ``name``; else, for a name in
    :data:`LLVM_PROCESSORS`, a row that knows only the name (wave size, LDS
    bytes, CUs 0, no matrix unit, no clusters, rsrc layout ``none``: the
    facts are unknown, :func:`in_table` is False); else None. Only the split-K
    resolver and the families built on it take such a row (the resolver gives
    it degree 1, rule ``arch``, as the reference does for every target that
    is not gfx1250); the kernels reject it (:func:`outside_table_reason`)."""
    a = find_arch(name)
    if a is None and isinstance(name, str):
        a = _PROCESSOR_ROWS.get(str.__str__(name))
    return a


def in_table(arch: Arch) -> bool:
    """True when ``arch`` is a row of the arch table (not a processor-only row of
    :func:`processor_arch`)."""
    return _BY_NAME.get(arch.name) is arch


def outside_table_reason(arch: Arch, what: str) -> str:
    """The rejection reason of a processor-only row for ``what`` (a kernel family)."""
    return f"arch {arch.name} is an LLVM AMDGPU processor outside the arch table ({what} requires gfx1250)"


def unknown_arch_reason(name) -> str:
    """Rejection reason for an arch name that is not in the table
    (spec/fields.py ``unknown_name_reason``: None reads as the text None, a
    non-str or non-printable value is not echoed; same texts in the C++ engine)."""
    return unknown_name_reason("arch", name, "gfx1250, gfx942, gfx950, gfx1100, gfx1201", "arch must be a string or None")


def has_wmma_16x16x32(arch: Arch) -> bool:
    """True when the arch has the gfx1250 16x16x32 WMMA."""
    return any(s[:3] == (16, 16, 32) for s in arch.wmma)

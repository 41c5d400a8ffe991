"""ISA resource report of one compiled kernel, read from LLVM's AMDGPU assembly.

Sources, in order of authority:

* the ``.amdgpu_metadata`` YAML block (the code object's metadata, the same
  document LLVM writes into the object's ``NT_AMDGPU_METADATA`` note), read
  with PyYAML's libyaml loader (``CSafeLoader``):
  ``.vgpr_count``, ``.sgpr_count``, ``.vgpr_spill_count``,
  ``.sgpr_spill_count``, ``.private_segment_fixed_size`` (scratch),
  ``.group_segment_fixed_size`` (LDS), ``.cluster_dims``;
* the verbose-assembly "Kernel info" comments of AMDGPUAsmPrinter
  (``; Occupancy: N`` -- waves per SIMD as LLVM itself computes them);
* the instruction lines of the kernel body (instruction count, ``v_wmma``).

Occupancy is LLVM's own number when the assembly carries it. Otherwise (and
always, as a cross-check) it is computed with the gfx1250 rules of LLVM 22.1
(``llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp``: getVGPRAllocGranule,
getTotalNumVGPRs, getMaxWavesPerEU, getNumWavesPerEUWithNumVGPRs; and
``AMDGPUSubtarget.cpp``: getOccupancyWithWorkGroupSizes), which for a wave32
gfx10.3+ target such as gfx1250 are:

* VGPR-limited waves per SIMD = min(16, 1024 // roundup(vgprs, 16))
  (16 waves max, 1024 VGPRs per SIMD lane, allocation granule 16);
* workgroup-limited waves per SIMD = ceil(wgs * N / 4), where N is the waves
  of a workgroup (ceil(wg_size / 32)) and wgs the workgroups resident on the
  4 SIMDs of a WGP: min(64 // N, 16 barriers) when N > 1 (64 when N == 1;
  getMaxWorkGroupsPerCU), and at most lds_total // lds (320 KiB of LDS);
* SGPRs do not limit occupancy on gfx10+.

These were checked against LLVM 22.1's ``; Occupancy:`` output for VGPR
counts 5..260, workgroup sizes 32..1024 and LDS sizes 0..200 KB
(tests/test_verify_isa.py checks it on every shipped config).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import yaml

# --- gfx1250 occupancy rules (see module docstring) ---------------------------
GFX1250_MAX_WAVES_PER_SIMD = 16
GFX1250_VGPRS_PER_SIMD = 1024       # wave32
GFX1250_VGPR_GRANULE = 16           # wave32, gfx10.3+
GFX1250_SIMDS_PER_WGP = 4
GFX1250_WAVE = 32
GFX1250_LDS_BYTES = 327680
GFX1250_MAX_BARRIERS = 16           # workgroups with barriers per WGP


def occupancy_gfx1250(vgprs: int, lds_bytes: int, wg_size: int | None) -> int:
    """Waves per SIMD for a gfx1250 kernel (LLVM 22.1 rules, see module doc)."""
    w = GFX1250_MAX_WAVES_PER_SIMD
    if vgprs >= GFX1250_VGPR_GRANULE:
        rounded = -(-vgprs // GFX1250_VGPR_GRANULE) * GFX1250_VGPR_GRANULE
        w = min(w, max(1, GFX1250_VGPRS_PER_SIMD // rounded))
    if wg_size:
        n = -(-wg_size // GFX1250_WAVE)
        max_waves = GFX1250_MAX_WAVES_PER_SIMD * GFX1250_SIMDS_PER_WGP
        wgs = max_waves if n == 1 else min(max_waves // n, GFX1250_MAX_BARRIERS)
        if lds_bytes > 0:
            wgs = min(wgs, GFX1250_LDS_BYTES // lds_bytes)
        w = min(w, math.ceil(wgs * n / GFX1250_SIMDS_PER_WGP))
    return w


# --- the metadata YAML (PyYAML) ---------------------------------------------------

def metadata_block(asm: str) -> str | None:
    """The YAML document between ``.amdgpu_metadata`` and ``.end_amdgpu_metadata``."""
    m = re.search(r"^\s*\.amdgpu_metadata\s*\n(.*?)^\s*\.end_amdgpu_metadata", asm, re.S | re.M)
    return m.group(1) if m else None


def c_safe_loader():
    """PyYAML's ``CSafeLoader`` (the safe loader on libyaml's C parser, ~10x the pure-Python
    one on these blocks). Raises RuntimeError saying how to get it when PyYAML was built
    without libyaml (PyPI's wheels for x86-64/aarch64 Linux include it)."""
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:
        raise RuntimeError("PyYAML has no libyaml (yaml.CSafeLoader missing): reinstall it from a wheel "
                           "(pip install --force-reinstall PyYAML) or with libyaml-dev present")
    return loader


@lru_cache(maxsize=4)
def _metadata_doc(block: str):
    """The block read once for the ISA report and the descriptor check (callers only read it)."""
    return yaml.load(block, Loader=c_safe_loader())


def kernel_metadata(asm: str, kernel: str) -> dict | None:
    """The ``amdhsa.kernels`` entry of ``kernel`` as PyYAML reads it (``.args``
    is the list of argument maps; shared between calls on the same assembly:
    read it, do not change it), or None when the assembly has no metadata
    block or no entry for the kernel. Raises ``yaml.YAMLError`` when the block
    is not YAML."""
    block = metadata_block(asm)
    if block is None:
        return None
    doc = _metadata_doc(block)
    kernels = doc.get("amdhsa.kernels") if isinstance(doc, dict) else None
    for k in kernels if isinstance(kernels, list) else []:
        if isinstance(k, dict) and k.get(".name") == kernel:
            return k
    return None


# --- the assembly text ---------------------------------------------------------

def kernel_info_comments(asm: str) -> dict[str, int]:
    """``; Key: N`` lines of AMDGPUAsmPrinter's verbose "Kernel info" block."""
    out: dict[str, int] = {}
    for m in re.finditer(r"^;\s*(\w+):\s*(\d+)\b", asm, re.M):
        out.setdefault(m.group(1), int(m.group(2)))
    return out


def kernel_body(asm: str, kernel: str) -> list[str]:
    """Instruction lines of ``kernel`` (comments, labels and directives dropped)."""
    lines = asm.splitlines()
    out: list[str] = []
    inside = False
    for raw in lines:
        s = raw.split(";", 1)[0].split("//", 1)[0].strip()
        if not inside:
            if s == f"{kernel}:":
                inside = True
            continue
        if s.startswith(".Lfunc_end") or s.startswith(".section") or s.startswith(".size"):
            break
        if not s or s.startswith(".") or s.endswith(":"):
            continue
        out.append(s)
    return out


@dataclass
class ISAReport:
    kernel: str
    arch: str
    vgprs: int | None = None
    sgprs: int | None = None
    vgpr_spills: int | None = None
    sgpr_spills: int | None = None
    scratch_bytes: int | None = None
    lds_bytes: int | None = None
    occupancy: int | None = None
    occupancy_source: str = ""        # "llvm" (asm comment) | "computed" | ""
    occupancy_computed: int | None = None
    instructions: int = 0
    wmma: int = 0
    cluster_dims: list[int] | None = None
    wg_size: int | None = None
    object_bytes: int | None = None
    dynamic_stack: bool | None = None
    problems: list[str] = field(default_factory=list)  # what could not be read

    def to_json(self) -> dict:
        return asdict(self)


def build_report(asm: str, kernel: str, arch: str, object_bytes: int | None = None) -> ISAReport:
    r = ISAReport(kernel=kernel, arch=arch, object_bytes=object_bytes)
    try:
        md = kernel_metadata(asm, kernel)
    except yaml.YAMLError as e:
        r.problems.append(f"the .amdgpu_metadata block is not valid YAML: {e}")
        md = {}
    if md is None:
        r.problems.append(f"no code-object metadata for kernel {kernel!r} in the assembly")
        md = {}

    def get(key):
        v = md.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    r.vgprs = get(".vgpr_count")
    r.sgprs = get(".sgpr_count")
    r.vgpr_spills = get(".vgpr_spill_count")
    r.sgpr_spills = get(".sgpr_spill_count")
    r.scratch_bytes = get(".private_segment_fixed_size")
    r.lds_bytes = get(".group_segment_fixed_size")
    r.wg_size = get(".max_flat_workgroup_size")
    ds = md.get(".uses_dynamic_stack")
    r.dynamic_stack = ds if isinstance(ds, bool) else None
    cd = md.get(".cluster_dims")
    r.cluster_dims = list(cd) if isinstance(cd, list) else None
    if md:
        for name, v in (("vgpr_count", r.vgprs), ("sgpr_count", r.sgprs),
                        ("vgpr_spill_count", r.vgpr_spills), ("sgpr_spill_count", r.sgpr_spills),
                        ("private_segment_fixed_size", r.scratch_bytes),
                        ("group_segment_fixed_size", r.lds_bytes)):
            if v is None:
                r.problems.append(f"metadata has no .{name}")
    info = kernel_info_comments(asm)
    if arch == "gfx1250" and r.vgprs is not None:
        r.occupancy_computed = occupancy_gfx1250(r.vgprs, r.lds_bytes or 0, r.wg_size)
    if "Occupancy" in info:
        r.occupancy, r.occupancy_source = info["Occupancy"], "llvm"
    elif r.occupancy_computed is not None:
        r.occupancy, r.occupancy_source = r.occupancy_computed, "computed"
    body = kernel_body(asm, kernel)
    r.instructions = len(body)
    r.wmma = sum(1 for s in body if s.split(None, 1)[0].startswith("v_wmma"))
    return r

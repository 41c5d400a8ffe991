"""Every fact the alignment and bounds proof assumes, declared once, with its source.

The proof (parity/proof/interpret.py) takes a kernel's arguments as symbolic
values; what it may assume about them is only what is listed here. Each row
names its source (an admission rule in the engines, the ABI, an ISA or LLVM
document) and says whether a gfx1250 run has confirmed it (``assumption``:
none has). ``parity verify`` prints the table's size; docs/proof.md prints the
table.

Pointer arguments: the launch plans (``conv_launch``'s ``buffer <tensor>``
arguments, parity/runtime) pass the base of a whole ``hipMalloc`` allocation,
which HIP aligns to at least 256 bytes; the proof assumes only 16, the widest
access any kernel makes, so a plan that passes an offset view aligned to 16
stays covered.
"""

from __future__ import annotations

from dataclasses import dataclass

from parity.sim.rsrc import BUFFER_UNALIGNED, buffer_align_needed


@dataclass(frozen=True)
class Assumption:
    """One assumed fact: ``key`` (stable id), the fact, its source and its
    ``kind``: ``rule`` (an admission rule both engines enforce), ``doc`` (a
    published ABI/LLVM/HIP fact) or ``assumption`` (not confirmed by a gfx1250
    run or a gfx1250 document)."""

    key: str
    fact: str
    source: str
    kind: str = "assumption"


#: Byte alignment the proof assumes for every pointer kernel argument.
PTR_ARG_ALIGN = 16

#: {family: {argument: (low bits known zero)}}: the argument is a multiple of
#: 2**bits for every admitted launch. Only admission rules the engines enforce
#: go here (both engines reject a spec that breaks them).
ARG_MULTIPLES = {
    # conv_launch admission (python_engine/kernels/conv_launch.py validate,
    # twin cpp_engine/src/kernels/conv_launch.cpp): "the cshuffle epilogue /
    # cluster fold stores 4 output channels per vector: kpg and K must be
    # multiples of 4". Applied only to configs with that epilogue or a cluster.
    "conv_implicit_gemm": {"K": 2, "kpg": 2},
}

#: {family: {argument: low bits known zero}} of the byte-count arguments: the
#: launch plans pass a tensor's elements times its element size
#: (conv_launch ``_byte_counts``: x, w, d are bf16/fp16, 2 bytes; ws and bias
#: fp32, 4 bytes; the reduce's ws_bytes and d_bytes likewise).
BYTE_COUNT_MULTIPLES = {
    "conv_implicit_gemm": {"x_bytes": 1, "w_bytes": 1, "d_bytes": 1, "ws_bytes": 2, "bias_bytes": 2},
    "conv_fwd_split_k_reduce": {"ws_bytes": 2, "d_bytes": 1},
}

TABLE: tuple[Assumption, ...] = (
    Assumption("ptr_arg_align",
               f"every pointer kernel argument is {PTR_ARG_ALIGN}-byte aligned",
               "launch plans pass whole hipMalloc allocations (HIP: 256-byte aligned base; "
               "docs/conv_launch.md 'buffer <tensor>'); LLVM AMDGPUUsage kernarg layout", "doc"),
    Assumption("lds_global_align",
               "an LDS global declared `align A` starts at an LDS address that is a multiple of A",
               "LLVM LangRef (global variable alignment); AMDGPU LDS lowering "
               "(AMDGPULowerModuleLDS keeps declared alignment)", "doc"),
    Assumption("workitem_id_range",
               "llvm.amdgcn.workitem.id.x lies in [0, N) for amdgpu-flat-work-group-size=\"N,N\"",
               "LLVM AMDGPUUsage (amdgpu-flat-work-group-size); the launch plans use block = N", "doc"),
    Assumption("cluster_k_multiple_4",
               "conv_implicit_gemm with the cshuffle epilogue or a cluster: K and kpg are multiples of 4",
               "conv_launch admission rule (python_engine/kernels/conv_launch.py validate, "
               "cpp_engine/src/kernels/conv_launch.cpp)", "rule"),
    Assumption("byte_counts",
               "x_bytes, w_bytes, d_bytes are multiples of 2, ws_bytes and bias_bytes of 4 "
               "(element counts times the element size)",
               "the launch plans: conv_launch _byte_counts (python_engine/kernels/conv_launch.py, "
               "twin cpp_engine/src/kernels/conv_launch.cpp); parity/launch/reduce_launch.py", "rule"),
    Assumption("slab_layout",
               "split-K slab s of the fp32 workspace ws_ptr starts at byte 4*s*M*K (M*K any value: "
               "the proof takes M, K, ks_count as unknown integers and derives the slab offsets from the IR)",
               "DESIGN section 4 ([ks_count][M][K] workspace); docs/families.md", "rule"),
    Assumption("buffer_unaligned",
               "raw buffer loads/stores of up to {} bytes are accepted at {}-byte alignment on {}".format(
                   BUFFER_UNALIGNED["gfx1250"][0], BUFFER_UNALIGNED["gfx1250"][1], "gfx1250"),
               "parity/sim/rsrc.py BUFFER_UNALIGNED: LLVM unaligned-access-mode for amdhsa (PR 110672), "
               "SH_MEM_CONFIG.alignment_mode = UNALIGNED (amdgpu driver); gfx1250: not confirmed by a run", "assumption"),
)


def arg_multiples(family: str, spec: dict) -> dict[str, int]:
    """{argument name: low zero bits} the admission rules guarantee for ``spec``."""
    out = dict(BYTE_COUNT_MULTIPLES.get(family, {}))
    if family != "conv_implicit_gemm" or spec.get("epilogue") == "cshuffle" or spec.get("split_k_cluster"):
        out.update(ARG_MULTIPLES.get(family, {}))
    return out


def buffer_align(arch: str, nbytes: int) -> int:
    """Byte alignment ``arch`` needs for a raw buffer access of ``nbytes`` (the
    emulator's table, parity/sim/rsrc.py, so both oracles check one fact)."""
    return buffer_align_needed(arch, nbytes)


def table_lines() -> list[str]:
    """The table as text lines (docs/proof.md, ``parity verify``)."""
    return [f"{a.key}: {a.fact} [{a.source}] ({a.kind.upper() if a.kind == 'assumption' else a.kind})" for a in TABLE]

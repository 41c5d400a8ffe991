"""Buffer resources (V#) as each arch's hardware decodes them (the emulator's
model of ``llvm.amdgcn.make.buffer.rsrc`` and of out-of-range buffer accesses).

The emulator runs the IR, but the hardware runs the descriptor LLVM builds
from it, and which bits of the ``flags`` operand reach that descriptor depends
on the arch. This table is the oracle's own (it does not read the engines'
arch table); ``parity verify`` checks the same facts on the compiled SGPR
quads (parity/verify/descriptor.py).

=========  =================  ==============================================
layout     arches             range check of a raw (stride 0) access
=========  =================  ==============================================
gfx9       gfx942, gfx950     always (no OOB_SELECT field) unless
                              ADD_TID_ENABLE (word 3 bit 23) is set;
                              num_records is 32 bits
gfx11      gfx1100, gfx1201   word 3 = ``flags``; only OOB_SELECT (bits
                              29:28) = 3 is the raw per-offset check;
                              ADD_TID_ENABLE (bit 23) must be 0;
                              num_records is 32 bits
gfx1250    gfx1250            only ``flags`` bits 3:0 reach the descriptor
                              (bits 127:124): bit 0 SWIZZLE_ENABLE must be
                              0, bits 3:2 TYPE must be 0 (buffer), bit 1
                              OOB_SELECT must be 1 (check the offset only);
                              num_records is 45 bits (bits 101:57)
=========  =================  ==============================================

Rows of docs/hardware_facts.md: RSRC-gfx1250-flags, RSRC-gfx1250-OOB-SELECT,
BUFFER-OOB, BUFFER-UNALIGNED-gfx1250.

Out of range (all three, as modelled; hardware_facts.md: BUFFER-OOB): a load whose byte offset
(voffset + soffset) lies at or past ``num_records`` returns 0, such a store
is dropped; an access inside ``num_records`` is a real memory access (the
emulator checks it against the numpy buffer). A vector access with some
elements in range and some out is reported (its result depends on the
generation's range-check granularity; our kernels' admission rules exclude
it).

Sources:
- gfx9: AMD "CDNA3 Instruction Set Architecture" reference guide, buffer
  range checking (raw buffers: out of range when the offset is at or past
  num_records; loads return 0, stores are dropped); AMD Composable Kernel
  ``CK_BUFFER_RESOURCE_3RD_DWORD`` 0x00020000; rocMLIR
  ``flagsKeepBoundsCheck`` (gfx9/CDNA: no OOB_SELECT, only ADD_TID_ENABLE
  turns the check wave-relative).
- gfx11: AMD "RDNA3" and "RDNA4 Instruction Set Architecture" reference
  guides, buffer resource OOB_SELECT (3 = raw: check the offset against
  num_records); CK's 0x31004000 (OOB_SELECT 3); rocMLIR
  ``flagsKeepBoundsCheck`` (RDNA: only OOB_SELECT 3 bounds a zero-stride
  access).
- gfx1250: LLVM 22.1's lowering (``llc-22 -mcpu=gfx1250``: the descriptor's
  last SGPR is ``flags << 28``; base 56:0, num_records 101:57, stride
  121:108; LLVM ``Feature45BitNumRecordsBufferResource``); the meaning of the
  four bits from the Triton AMD backend (``BufferOpsEmitter.cpp``, gfx1250
  comment: bit 1 OOB_SELECT, 1 = check the offset only) and rocMLIR
  ``flagsKeepBoundsCheck`` (gfx1250: bit 0 swizzle enable, bits 3:2 type).
  ASSUMPTION: no public gfx1250 ISA document; to be confirmed on hardware.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import hw_facts

#: arch -> descriptor layout (docs/targets.md)
ARCH_LAYOUT = {"gfx942": "gfx9", "gfx950": "gfx9", "gfx1100": "gfx11", "gfx1201": "gfx11",
               "gfx1250": "gfx1250"}

#: layout -> width of num_records in bits
NUM_RECORDS_BITS = {"gfx9": 32, "gfx11": 32, "gfx1250": 45}

ADD_TID_ENABLE = 1 << 23

#: layout -> (widest raw buffer access in bytes, byte alignment the hardware
#: needs for it): the alignment a raw buffer load/store of up to that many
#: bytes must have at its byte address (descriptor base + voffset + soffset).
#: Read by the emulator's buffer loads and stores (parity/sim/ops_memory.py)
#: and by the alignment proof (parity/proof/assumptions.py), so both check
#: the same fact. Every layout runs with unaligned access enabled under
#: amdhsa: LLVM turns on the ``unaligned-access-mode`` subtarget feature for
#: amdhsa targets (llvm/llvm-project PR 110672; AMDGPU.td
#: ``FeatureUnalignedBufferAccess`` is in the gfx9+ feature sets) and the
#: amdgpu kernel driver programs ``SH_MEM_CONFIG.alignment_mode = UNALIGNED``
#: (``DEFAULT_SH_MEM_CONFIG`` in ``gfx_v9_0.c`` / ``gfx_v10_0.c``), so a
#: buffer access of up to 16 bytes is accepted at any byte address; the
#: small-channel path of conv_implicit_gemm relies on it (4- and 8-byte pieces
#: at 2-byte-aligned offsets, docs/conv_implicit_gemm.md).
#: ASSUMPTION for gfx1250: no gfx1250 run has confirmed it.
BUFFER_UNALIGNED = {"gfx9": (16, 1), "gfx11": (16, 1), "gfx1250": (16, 1)}  # hardware_facts.md: BUFFER-UNALIGNED-gfx1250


def _configure() -> None:
    """Readings of hardware_facts.md rows BUFFER-UNALIGNED-gfx1250 (``natural``:
    an access needs its own width's alignment) and RSRC-gfx1250-OOB-SELECT."""
    global _OOB_SELECT_REQUIRED
    BUFFER_UNALIGNED["gfx1250"] = (16, 16) if hw_facts.value("BUFFER-UNALIGNED-gfx1250") == "natural" else (16, 1)
    _OOB_SELECT_REQUIRED = hw_facts.value("RSRC-gfx1250-OOB-SELECT") == "offset1"


_OOB_SELECT_REQUIRED = True
hw_facts.on_change(_configure)


def buffer_align_needed(arch: str, nbytes: int) -> int:
    """Byte alignment ``arch``'s hardware needs for a raw buffer access of
    ``nbytes`` bytes (BUFFER_UNALIGNED; an access wider than the table's widest,
    or an arch it does not know, needs natural alignment ``nbytes``; no access
    needs more than its own width)."""
    layout = ARCH_LAYOUT.get(arch)
    widest, need = BUFFER_UNALIGNED.get(layout, (0, 0))
    return min(need, nbytes) if nbytes <= widest else nbytes


class RsrcRefused(ValueError):
    """A descriptor the emulator will not model (the message says which field)."""


@dataclass(frozen=True)
class RawRange:
    """A decoded raw buffer resource: accesses at or past ``nrec`` bytes read 0
    / are dropped; ``desc`` says which descriptor field selected that."""

    nrec: int
    desc: str


def decode(arch: str, flags: int, stride: int, nrec: int) -> RawRange:
    """Decode make.buffer.rsrc's operands as ``arch``'s hardware sees them.

    ``flags`` i32 (taken as unsigned), ``stride`` i16 bytes, ``nrec`` the
    num_records operand in bytes. Returns the raw range it enforces; raises
    ``RsrcRefused`` naming the field and the rule for a descriptor that does
    not select the raw per-offset range check on that arch (or an unknown
    arch, a non-zero stride, a num_records wider than the arch's field)."""
    layout = ARCH_LAYOUT.get(arch)
    if layout is None:
        raise RsrcRefused(f"arch {arch!r} has no buffer resource layout in the emulator "
                          f"(known: {', '.join(ARCH_LAYOUT)})")
    flags &= 0xFFFFFFFF
    if stride != 0:
        raise RsrcRefused(f"{arch}: make.buffer.rsrc stride {stride} is not 0 (only raw buffers are modelled)")
    width = NUM_RECORDS_BITS[layout]
    if not 0 <= nrec < (1 << width):
        raise RsrcRefused(f"{arch}: num_records {nrec} does not fit the {width}-bit num_records field")
    if layout == "gfx9":
        if flags & ADD_TID_ENABLE:
            raise RsrcRefused(f"{arch}: flags 0x{flags:08X} set ADD_TID_ENABLE (word 3 bit 23): "
                              "the range check would be wave-relative")
        return RawRange(nrec, f"{arch} (gfx9 V#, word 3 0x{flags:08X}): raw range check")
    if layout == "gfx11":
        oob = (flags >> 28) & 3
        if oob != 3 or flags & ADD_TID_ENABLE:
            raise RsrcRefused(f"{arch}: make.buffer.rsrc flags 0x{flags:08X} do not select the raw range "
                              f"check (gfx11/gfx12 V# word 3: OOB_SELECT = 3 in bits 29:28 and ADD_TID_ENABLE "
                              f"= 0 in bit 23; OOB_SELECT is {oob})")
        return RawRange(nrec, f"{arch} (gfx11/gfx12 V#, OOB_SELECT 3)")
    # gfx1250: only bits 3:0 reach the descriptor (bits 127:124)
    low = flags & 0xF
    swz, oob, typ = low & 1, (low >> 1) & 1, (low >> 2) & 3  # hardware_facts.md: RSRC-gfx1250-flags
    if swz or typ or (not oob and _OOB_SELECT_REQUIRED):  # hardware_facts.md: RSRC-gfx1250-OOB-SELECT
        raise RsrcRefused(f"{arch}: make.buffer.rsrc flags 0x{flags:08X} reach the gfx1250 V# as bits "
                          f"127:124 = 0x{low:X} (LLVM keeps flags bits 3:0 only): the raw range check needs "
                          f"OOB_SELECT (bit 1) = 1, SWIZZLE_ENABLE (bit 0) = 0 and TYPE (bits 3:2) = 0; "
                          f"got OOB_SELECT {oob}, SWIZZLE_ENABLE {swz}, TYPE {typ}")
    return RawRange(nrec, f"{arch} (gfx1250 V#, OOB_SELECT 1)")

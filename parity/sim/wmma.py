"""``llvm.amdgcn.wmma.f32.16x16x32.{bf16,f16}`` on gfx1250, wave32.

D (16x16 f32) = A (16x32) x B (32x16) + C, one wave. Register layout of the
fragments (wave32, 16-bit A/B; ``h = lane // 16``):

* A ``<16 x bf16|half>``: lane ``l`` holds row ``m = l % 16``; elements 0..7
  are ``k = 8*h + 0..7``, elements 8..15 are ``k = 16 + 8*h + 0..7``.
* B ``<16 x bf16|half>``: lane ``l`` holds column ``n = l % 16``, the same k split.
* C and D ``<8 x float>``: lane ``l`` element ``e`` is row ``m = 8*h + e``,
  column ``n = l % 16``.

The layouts are hardware_facts.md rows WMMA-AB-layout and WMMA-CD-layout
(docs/hardware_facts.md lists the sources: Triton's WMMA v3 linear layouts and
CK's gfx125 WMMA traits agree with the maps below; IREE reads A/B as 16
contiguous k per lane, a K permutation shared by A and B; ``parity numerics
--assume WMMA-AB-layout=contiguous16`` runs under that reading).

Earlier sources: docs/conv_implicit_gemm.md, "Fragment layouts" (the gfx1250 ISA
WMMA operand layout for 16-bit inputs, wave32, as the kernel design states
it), cross-checked against a public GPU-verified gfx1250 kernel (a flydsl
``rocdl.wmma_f32_16x16x32_bf16`` dV = P^T.dO test whose ``frag`` helper loads
row ``lane%16`` as 8 elements at k = ``8*(lane//16)`` and 8 more at ``+16``,
and reads accumulator element ``e`` as row ``8*(lane//16) + e``, column
``lane%16``). Not yet checked on hardware by this project (no gfx1250 in CI).
The RDNA3 16x16x16 layout (lanes 16..31 replicating
lanes 0..15) is a different instruction and does not apply.

Numerics model: products of 16-bit inputs are exact in float64, summed with C
in float64 and rounded once to float32 (RNE). Hardware accumulates in at
least fp32 with an implementation-defined order, so the conv tolerance
(:func:`parity.sim.reference.conv_tolerance`) allows for fp32 accumulation error
over the whole reduction.
"""
from __future__ import annotations

import numpy as np

from . import hw_facts
from .fp import bf16_bits_to_f32

_L = np.arange(32)
_H = _L // 16
_E16 = np.arange(16)
#: row (A) / column (B) of lane l
MN_OF = _L % 16  # hardware_facts.md: WMMA-AB-layout (all sources agree on lane % 16)


def ab_k_of(reading: str) -> np.ndarray:
    """k index of A/B element e of lane l, (32, 16), under a reading of
    hardware_facts.md row WMMA-AB-layout: ``blocks8`` (Triton's WMMA v3
    layout, CK's gfx125 traits: k = 16*(e//8) + 8*(l//16) + e%8) or
    ``contiguous16`` (IREE's logical layout: k = 16*(l//16) + e)."""
    if reading == "contiguous16":
        return 16 * _H[:, None] + _E16[None, :]
    return 8 * _H[:, None] + np.where(_E16 < 8, _E16, _E16 + 8)[None, :]


def cd_row_of(reading: str) -> np.ndarray:
    """Row of C/D element e of lane l, (32, 8), under a reading of row
    WMMA-CD-layout: ``rows8`` (row 8*(l//16) + e: Triton, CK, IREE) or
    ``interleaved`` (row 2*e + l//16: the gfx11 WMMA layout)."""
    if reading == "interleaved":
        return 2 * np.arange(8)[None, :] + _H[:, None]
    return 8 * _H[:, None] + np.arange(8)[None, :]


#: k index of A/B element e of lane l: (32, 16)
K_OF = ab_k_of("blocks8")  # hardware_facts.md: WMMA-AB-layout (set by _configure)
#: row of C/D element e of lane l: (32, 8)
CD_ROW = cd_row_of("rows8")  # hardware_facts.md: WMMA-CD-layout (set by _configure)
CD_COL = np.broadcast_to((_L % 16)[:, None], (32, 8))  # hardware_facts.md: WMMA-CD-layout


def _gather_of(flat_dst: np.ndarray, size: int) -> np.ndarray:
    """For a layout writing fragment element ``i`` (lane-major) to matrix
    element ``flat_dst[i]`` (row-major), the fragment element each matrix
    element comes from: the layouts are one-to-one, so unpacking is one 1-D
    gather instead of a 2-D fancy-index scatter (ten times dearer in numpy)."""
    assert sorted(flat_dst.tolist()) == list(range(size)), "fragment layout is not a permutation"
    src = np.empty(size, np.int64)
    src[flat_dst] = np.arange(size)
    return src


def _configure() -> None:
    """Derive the fragment maps from the readings of hardware_facts.md rows
    WMMA-AB-layout and WMMA-CD-layout (parity/sim/hw_facts.py; ``--assume``)."""
    global K_OF, CD_ROW, _A_FLAT, _B_FLAT, _CD_FLAT, _A_SRC, _B_SRC, _CD_SRC
    K_OF = ab_k_of(hw_facts.value("WMMA-AB-layout"))
    CD_ROW = cd_row_of(hw_facts.value("WMMA-CD-layout"))
    _A_FLAT = (MN_OF[:, None] * 32 + K_OF).ravel()     # fragment (32, 16) -> A (16, 32)
    _B_FLAT = (K_OF * 16 + MN_OF[:, None]).ravel()     # fragment (32, 16) -> B (32, 16)
    _CD_FLAT = (CD_ROW * 16 + CD_COL).ravel()          # fragment (32, 8) -> C/D (16, 16)
    _A_SRC = _gather_of(_A_FLAT, 512)
    _B_SRC = _gather_of(_B_FLAT, 512)
    _CD_SRC = _gather_of(_CD_FLAT, 256)


hw_facts.on_change(_configure)


def _to64(x, kind: str) -> np.ndarray:
    if kind == "bf16":
        return bf16_bits_to_f32(x).astype(np.float64)
    return np.asarray(x).astype(np.float64)


def unpack_a(a, kind: str) -> np.ndarray:
    """The 16x32 A matrix (float64) of a wave's A fragments (32, 16)."""
    return _to64(a, kind).reshape(-1)[_A_SRC].reshape(16, 32)


def unpack_b(b, kind: str) -> np.ndarray:
    """The 32x16 B matrix (float64) of a wave's B fragments (32, 16)."""
    return _to64(b, kind).reshape(-1)[_B_SRC].reshape(32, 16)


def pack_a(A: np.ndarray) -> np.ndarray:
    """A fragments (32, 16) of a 16x32 matrix (any dtype)."""
    return A[MN_OF[:, None], K_OF]


def pack_b(B: np.ndarray) -> np.ndarray:
    """B fragments (32, 16) of a 32x16 matrix."""
    return B[K_OF, MN_OF[:, None]]


def pack_cd(C: np.ndarray) -> np.ndarray:
    """C/D fragments (32, 8) of a 16x16 matrix."""
    return np.ascontiguousarray(C).reshape(-1)[_CD_FLAT].reshape(32, 8)


def unpack_cd(c) -> np.ndarray:
    """The 16x16 matrix of C/D fragments (32, 8)."""
    return np.ascontiguousarray(c).reshape(-1)[_CD_SRC].reshape(16, 16)


def wmma_f32_16x16x32(a, b, c, kind: str, neg_a: bool = False, neg_b: bool = False) -> np.ndarray:
    """D fragments (32, 8) float32 of one wave's WMMA. ``kind`` is ``bf16``
    (a, b are uint16 bit patterns) or ``f16`` (float16 values).
    hardware_facts.md: WMMA-accumulation (exact products, one rounding: assumption)."""
    A = unpack_a(a, kind)
    B = unpack_b(b, kind)
    if neg_a:
        A = -A
    if neg_b:
        B = -B
    C = unpack_cd(np.asarray(c, dtype=np.float32)).astype(np.float64)
    D = (A @ B + C).astype(np.float32)
    return pack_cd(D)

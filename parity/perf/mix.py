"""Instruction mix of AMDGPU (gfx12-style) assembly lines, and memory widths.

Classes (one per instruction, by mnemonic):

* ``wmma``: ``v_wmma_*``, ``v_swmmac_*`` (the matrix pipe);
* ``valu``: every other ``v_*`` except ``v_nop``;
* ``salu``: ``s_*`` except the classes below (scalar ALU and scalar moves);
* ``lds``: ``ds_*`` (LDS loads, stores, atomics);
* ``global``: ``buffer_*``, ``global_*``, ``flat_*``, ``scratch_*``,
  ``tensor_*``, ``cluster_load_*`` (vector memory);
* ``wait``: waits and barriers (``s_wait*``, ``s_barrier*``);
* ``other``: scalar memory (``s_load_*``, ``s_buffer_load_*``,
  ``s_prefetch*``), branches (``s_branch``, ``s_cbranch_*``), and issue hints
  and padding (``s_delay_alu``, ``s_clause``, ``s_nop``, ``v_nop``,
  ``s_set_vgpr_msb``, ``s_setprio``).

"Non-WMMA instructions per WMMA" counts every instruction line that is not a
WMMA, hints and padding included (each occupies a slot in the instruction
stream).

Widths: the bytes one lane moves, read from the mnemonic's last size token
(``b8/u8/i8`` 1, ``b16/u16/i16/d16`` 2, ``b32`` 4, ``b64`` 8, ``b96`` 12,
``b128`` 16; ``_2addr_`` forms move two elements). A wave moves 32 times that
(wave32, every lane active).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field

CLASSES = ("wmma", "valu", "salu", "lds", "global", "wait", "other")
WAVE = 32  # lanes of a gfx1250 wave (wave32; AMD RDNA4 ISA, "Wave32")

_SIZE = re.compile(r"_(?:b|u|i|d)(8|16|32|64|96|128)(?:_|$)")
_SIZE_WORD = {"byte": 1, "ubyte": 1, "sbyte": 1, "short": 2, "ushort": 2, "sshort": 2,
              "dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16}
_OTHER_S = ("s_load_", "s_buffer_load_", "s_prefetch", "s_branch", "s_cbranch", "s_delay_alu",
            "s_clause", "s_nop", "s_set_vgpr_msb", "s_setprio", "s_endpgm", "s_sleep")
_GLOBAL = ("buffer_", "global_", "flat_", "scratch_", "tensor_", "cluster_load_")


def mnemonic(line: str) -> str:
    """The mnemonic of an instruction line (its first token)."""
    return line.split(None, 1)[0] if line.strip() else ""


def classify(mn: str) -> str:
    """The class (one of :data:`CLASSES`) of mnemonic ``mn``."""
    if mn.startswith(("v_wmma", "v_swmmac")):
        return "wmma"
    if mn == "v_nop":
        return "other"
    if mn.startswith("v_"):
        return "valu"
    if mn.startswith("ds_"):
        return "lds"
    if mn.startswith(_GLOBAL):
        return "global"
    if mn.startswith(("s_wait", "s_barrier")):
        return "wait"
    if mn.startswith(_OTHER_S):
        return "other"
    if mn.startswith("s_"):
        return "salu"
    return "other"


def width(mn: str) -> int:
    """Bytes per lane moved by memory mnemonic ``mn`` (0 for a non-memory mnemonic or one naming no size)."""
    if classify(mn) not in ("global", "lds"):
        return 0
    m = None
    for m in _SIZE.finditer(mn):
        pass
    if m is not None:
        n = int(m.group(1)) // 8
    else:
        tail = mn.rsplit("_", 1)[-1]
        n = _SIZE_WORD.get(tail, 0)
        if not n and "_dword" in mn:
            n = _SIZE_WORD.get(mn[mn.index("_dword") + 1:].split("_")[0], 0)
    return 2 * n if "_2addr" in mn else n


def is_load(mn: str) -> bool:
    return "_load" in mn or mn.startswith("ds_read")


def is_store(mn: str) -> bool:
    return "_store" in mn or mn.startswith("ds_write")


@dataclass
class Mix:
    """Counts of one instruction list. Bytes are per lane (multiply by :data:`WAVE` for a wave)."""
    total: int = 0
    counts: dict = field(default_factory=lambda: {c: 0 for c in CLASSES})
    global_load_bytes: int = 0
    global_store_bytes: int = 0
    lds_load_bytes: int = 0
    lds_store_bytes: int = 0
    mnemonics: dict = field(default_factory=dict)

    @property
    def wmma(self) -> int:
        return self.counts["wmma"]

    @property
    def non_wmma(self) -> int:
        return self.total - self.counts["wmma"]

    def per_wmma(self, n: int) -> float | None:
        """``n`` per WMMA (None without WMMA)."""
        return n / self.wmma if self.wmma else None

    def to_json(self) -> dict:
        d = asdict(self)
        w = self.wmma
        d["non_wmma"] = self.non_wmma
        d["non_wmma_per_wmma"] = round(self.non_wmma / w, 3) if w else None
        d["global_bytes_per_wmma"] = round(WAVE * (self.global_load_bytes + self.global_store_bytes) / w, 1) if w else None
        d["lds_bytes_per_wmma"] = round(WAVE * (self.lds_load_bytes + self.lds_store_bytes) / w, 1) if w else None
        return d


def mix(lines: list[str]) -> Mix:
    """The :class:`Mix` of instruction lines (labels, comments and directives already dropped)."""
    out = Mix()
    names: Counter = Counter()
    for line in lines:
        mn = mnemonic(line)
        if not mn:
            continue
        out.total += 1
        c = classify(mn)
        out.counts[c] += 1
        names[mn] += 1
        if c in ("global", "lds"):
            w = width(mn)
            if c == "global":
                if is_load(mn):
                    out.global_load_bytes += w
                elif is_store(mn):
                    out.global_store_bytes += w
            else:
                if is_load(mn):
                    out.lds_load_bytes += w
                elif is_store(mn):
                    out.lds_store_bytes += w
    out.mnemonics = dict(sorted(names.items()))
    return out


def store_widths(lines: list[str]) -> dict[int, int]:
    """{bytes per lane: count} of the global/buffer stores among ``lines`` (D and workspace slab stores)."""
    out: Counter = Counter()
    for line in lines:
        mn = mnemonic(line)
        if mn and classify(mn) == "global" and is_store(mn):
            out[width(mn)] += 1
    return dict(sorted(out.items()))

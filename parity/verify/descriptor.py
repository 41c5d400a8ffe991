"""The compiled buffer descriptors checked against the arch table.

The emulator runs the IR; the hardware runs the V# (buffer resource) that
LLVM builds from ``llvm.amdgcn.make.buffer.rsrc``. This module reads, from a
kernel's AMDGPU assembly, the 128 descriptor bits every ``buffer_load_*`` /
``buffer_store_*`` receives in its SGPR quad and compares them with what the
arch table (``rsrc_fields``, ``rsrc_flags``, ``rsrc_word3``) says they must
be.

How the bits are found: a forward data-flow over the kernel's basic blocks
that constant-folds the scalar instructions building the quad, bit by bit.
Each SGPR bit is a constant 0/1, the OR of some kernel-argument bits
(``s_load_*`` from the kernarg segment pointer), or unknown; blocks meet by
equality. Modelled: ``s_load_b32..b512`` (kernarg segment), ``s_mov_b32/b64``,
``s_brev_b32``, ``s_or/and/xor_b32/b64``, ``s_and_not1_b32/b64``,
``s_lshl/lshr_b32/b64`` by a constant; any other write of an SGPR makes it
unknown. Kernel arguments are placed by the code object metadata
(``.args``: ``.name``, ``.offset``, ``.size``).

What is compared, per buffer instruction (its quad decoded with the arch's
``rsrc_fields``):

* ``base`` is the pointer argument of one of the module's
  ``make.buffer.rsrc`` calls (bit for bit);
* ``num_records`` holds that call's num_records argument bit for bit (when
  it is a kernel argument, directly or through zext/trunc), or its constant;
  a num_records computed in the kernel is not traced;
* ``stride`` and ``flags`` are constants equal to the call's stride and
  the flags bits the layout keeps (gfx1250: bits 3:0); every bit outside the
  fields is 0;
* word 3, with num_records taken below 2^32, equals the arch table's
  ``rsrc_word3``, and the call's flags equal the table's ``rsrc_flags``.

LLVM's lowering ORs the whole 64-bit pointer and num_records into the quad
without masking (gfx1250: ``s_or_b64`` of the pointer with
``num_records << 57``); bits of the pointer above the base field and of
num_records above its field are therefore taken as 0 (the contract of
make.buffer.rsrc: the values fit their fields).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from parity.verify.isa_report import kernel_metadata

KARG = "karg"  # register tag: the kernarg segment pointer
_BRANCH = re.compile(r"^s_(branch|cbranch_\w+)$")
_ENDS = ("s_endpgm", "s_setpc_b64", "s_trap")
_SREG = re.compile(r"^s(\d+)$")
_SRANGE = re.compile(r"^s\[(\d+):(\d+)\]$")
_BUF = re.compile(r"^buffer_(load|store)_\w+$")
_RSRC_CALL = re.compile(
    r"(%[\w.]+) = (?:tail )?call ptr addrspace\(8\) @llvm\.amdgcn\.make\.buffer\.rsrc\.[\w.]+\("
    r"ptr addrspace\(1\) (?:[a-z()]+ )*%([\w.]+), i16 (-?\d+), i(?:16|32|64) (%[\w.]+|-?\d+), i32 (-?\d+)\)")
_CAST = re.compile(r"(%[\w.]+) = (?:zext|trunc|sext)(?: nneg)? i\d+ %([\w.]+) to i\d+")
_BUF_CALL = re.compile(r"@llvm\.amdgcn\.raw\.ptr\.buffer\.(load|store)")


# --- bit terms ------------------------------------------------------------------
# A bit is 0, 1, None (unknown) or a frozenset of kernarg bit positions OR'ed
# together (byte offset * 8 + bit).

def _or(a, b):
    if a == 1 or b == 1:
        return 1
    if a == 0:
        return b
    if b == 0:
        return a
    if a is None or b is None:
        return None
    return a | b


def _and(a, b):
    if a == 0 or b == 0:
        return 0
    if a == 1:
        return b
    if b == 1:
        return a
    return None


def _xor(a, b):
    if a == 0:
        return b
    if b == 0:
        return a
    if a == 1 and b == 1:
        return 0
    return None


def _not(a):
    return 1 - a if a in (0, 1) else None


def _const_bits(v: int, n: int) -> list:
    return [(v >> i) & 1 for i in range(n)]


def _int_of(bits) -> int | None:
    if any(b not in (0, 1) for b in bits):
        return None
    return sum(b << i for i, b in enumerate(bits))


def _imm(tok: str) -> int | None:
    try:
        return int(tok, 0)
    except ValueError:
        return None


# --- the scalar data-flow ---------------------------------------------------------------

def _regs(tok: str) -> list[int] | None:
    m = _SREG.match(tok)
    if m:
        return [int(m.group(1))]
    m = _SRANGE.match(tok)
    if m:
        return list(range(int(m.group(1)), int(m.group(2)) + 1))
    return None


def _split(line: str) -> tuple[str, list[str]]:
    parts = line.split(None, 1)
    ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
    return parts[0], ops


def _kernarg_reg(asm: str) -> int:
    """First SGPR of the kernarg segment pointer: after the private segment
    buffer (4), dispatch ptr (2) and queue ptr (2) when enabled (the user SGPR
    order of AMDGPUUsage.rst, "Initial Kernel Execution State")."""
    def flag(name):
        m = re.search(rf"\.amdhsa_user_sgpr_{name}\s+(\d+)", asm)
        return int(m.group(1)) if m else 0
    return 4 * flag("private_segment_buffer") + 2 * flag("dispatch_ptr") + 2 * flag("queue_ptr")


class _State(dict):
    """SGPR index -> list of 32 bit terms (absent: unknown), or the KARG tag."""

    def bits(self, r: int) -> list:
        v = self.get(r)
        return v if isinstance(v, list) else [None] * 32

    def val(self, tok: str, n: int) -> list | None:
        """The ``n`` 32-bit words of a source operand as bit terms (None: unknown)."""
        regs = _regs(tok)
        if regs is not None:
            if len(regs) < n:
                return None
            return [b for r in regs[:n] for b in self.bits(r)]
        if tok == "null":
            return [0] * (32 * n)
        v = _imm(tok)
        if v is None:
            return None
        if n == 2 and v < 2 ** 32:  # 32-bit literals and inline constants sign-extend
            v = v | (0xFFFFFFFF << 32) if v & (1 << 31) or v < 0 else v
        return _const_bits(v & ((1 << (32 * n)) - 1), 32 * n)

    def put(self, regs: list[int], bits: list | None):
        for j, r in enumerate(regs):
            if bits is None:
                self.pop(r, None)
            else:
                self[r] = bits[32 * j: 32 * j + 32]


def _step(st: _State, mn: str, ops: list[str]) -> None:
    """Apply one instruction to ``st`` (in place)."""
    if not ops:
        return
    dst = _regs(ops[0])
    if mn.startswith("s_load_") or mn.startswith("s_buffer_load_"):
        if dst is None:
            return
        base = _regs(ops[1]) if len(ops) > 1 else None
        off = _imm(ops[2]) if len(ops) > 2 else None
        if mn.startswith("s_load_") and base and st.get(base[0]) == KARG and off is not None:
            for j, r in enumerate(dst):
                st[r] = [frozenset({(off + 4 * j) * 8 + i}) for i in range(32)]
        else:
            st.put(dst, None)
        return
    if mn.startswith("v_"):
        # VALU writing SGPRs: the destination, and a carry-out / compare mask in
        # the second operand of *_co_* / div_scale / mad_*64 forms
        for k, tok in enumerate(ops[:2]):
            regs = _regs(tok)
            if regs is not None and (k == 0 or re.search(r"_co_|div_scale|mad_[ui]64|_ci_", mn)):
                st.put(regs, None)
        return
    if not mn.startswith("s_") or dst is None:
        return
    n = 2 if mn.endswith("_b64") else 1
    if mn.startswith(("s_cmp", "s_bitcmp", "s_cbranch", "s_branch", "s_wait", "s_nop", "s_barrier")):
        return
    out = None
    if mn in ("s_mov_b32", "s_mov_b64"):
        out = st.val(ops[1], n)
    elif mn == "s_brev_b32":
        v = st.val(ops[1], 1)
        out = v[::-1] if v is not None else None
    elif mn in ("s_or_b32", "s_or_b64", "s_and_b32", "s_and_b64", "s_xor_b32", "s_xor_b64",
                "s_and_not1_b32", "s_and_not1_b64"):
        a, b = st.val(ops[1], n), st.val(ops[2], n)
        if a is not None and b is not None:
            if mn.startswith("s_and_not1"):
                b = [_not(x) for x in b]
            f = _or if mn.startswith("s_or") else _xor if mn.startswith("s_xor") else _and
            out = [f(x, y) for x, y in zip(a, b)]
        elif mn.startswith("s_and") and (a is not None or b is not None):
            k = a if a is not None else b
            out = [0 if x == 0 else None for x in k]
    elif mn in ("s_lshl_b32", "s_lshl_b64", "s_lshr_b32", "s_lshr_b64"):
        a, sh = st.val(ops[1], n), _imm(ops[2])
        if a is not None and sh is not None:
            sh &= 32 * n - 1
            w = 32 * n
            out = ([0] * sh + a[:w - sh]) if "lshl" in mn else (a[sh:] + [0] * sh)
    st.put(dst, out)


def _blocks(body: list[str]) -> tuple[list[list[str]], list[list[int]]]:
    """Basic blocks of the kernel's lines (labels kept in ``body``) and successors."""
    blocks: list[list[str]] = [[]]
    labels: dict[str, int] = {}
    for s in body:
        if s.endswith(":"):
            if blocks[-1]:
                blocks.append([])
            labels[s[:-1]] = len(blocks) - 1
            continue
        blocks[-1].append(s)
        mn = s.split(None, 1)[0]
        if _BRANCH.match(mn) or mn in _ENDS:
            blocks.append([])
    succ: list[list[int]] = []
    for i, b in enumerate(blocks):
        nxt = [i + 1] if i + 1 < len(blocks) else []
        if not b:
            succ.append(nxt)
            continue
        mn, ops = _split(b[-1])
        if mn == "s_branch":
            succ.append([labels[ops[0]]] if ops and ops[0] in labels else [])
        elif mn.startswith("s_cbranch"):
            succ.append(([labels[ops[0]]] if ops and ops[0] in labels else []) + nxt)
        elif mn in _ENDS:
            succ.append([])
        else:
            succ.append(nxt)
    return blocks, succ


def _body_with_labels(asm: str, kernel: str) -> list[str]:
    out: list[str] = []
    inside = False
    for raw in asm.splitlines():
        s = raw.split(";", 1)[0].split("//", 1)[0].strip()
        if not inside:
            inside = s == f"{kernel}:"
            continue
        if s.startswith(".Lfunc_end") or s.startswith(".section") or s.startswith(".size"):
            break
        if not s or (s.startswith(".") and not s.endswith(":")):
            continue
        out.append(s)
    return out


def _meet(a: _State, b: _State) -> _State:
    out = _State()
    for r, v in a.items():
        w = b.get(r)
        if v == w:
            out[r] = v
        elif isinstance(v, list) and isinstance(w, list):
            out[r] = [x if x == y else None for x, y in zip(v, w)]
    return out


def buffer_quads(asm: str, kernel: str) -> list[tuple[str, str, list]]:
    """Every buffer instruction of ``kernel``: (instruction text, quad operand,
    128 bit terms of its SGPR quad, word 0 bit 0 first)."""
    body = _body_with_labels(asm, kernel)
    blocks, succ = _blocks(body)
    entry = _State()
    k = _kernarg_reg(asm)
    entry[k] = KARG
    entry[k + 1] = KARG
    ins: list[_State | None] = [None] * len(blocks)
    ins[0] = entry
    work = [0]
    while work:
        i = work.pop()
        st = _State(ins[i])
        for line in blocks[i]:
            mn, ops = _split(line)
            _step(st, mn, ops)
        for j in succ[i]:
            new = st if ins[j] is None else _meet(ins[j], st)
            if ins[j] is None or new != ins[j]:
                ins[j] = new
                work.append(j)
    out = []
    for i, b in enumerate(blocks):
        if ins[i] is None:
            continue
        st = _State(ins[i])
        for line in b:
            mn, ops = _split(line)
            if _BUF.match(mn):
                quad = next((o for o in ops if (r := _regs(o)) is not None and len(r) == 4), None)
                if quad is not None:
                    out.append((line, quad, [x for r in _regs(quad) for x in st.bits(r)]))
            _step(st, mn, ops)
    return out


# --- the IR side ----------------------------------------------------------------------

@dataclass(frozen=True)
class RsrcCall:
    value: str          # %name of the resource
    base: str           # pointer argument name
    stride: int
    num_records: str | int | None  # argument name, constant, or None (computed)
    flags: int


def rsrc_calls(text: str) -> list[RsrcCall]:
    """The module's make.buffer.rsrc calls, num_records traced through zext/trunc
    to a kernel argument when it is one."""
    params = set(re.findall(r"%([\w.]+)(?=[,)])", (re.search(r"^define [^\n]*", text, re.M) or [""])[0]))
    casts = {m.group(1): m.group(2) for m in _CAST.finditer(text)}
    out = []
    for m in _RSRC_CALL.finditer(text):
        nr_tok = m.group(4)
        nr: str | int | None
        if nr_tok.startswith("%"):
            name = nr_tok[1:]
            while "%" + name in casts and name not in params:
                name = casts["%" + name]
            nr = name if name in params else None
        else:
            nr = int(nr_tok)
        out.append(RsrcCall(m.group(1), m.group(2), int(m.group(3)), nr, int(m.group(5)) & 0xFFFFFFFF))
    return out


# --- the comparison ---------------------------------------------------------------------

@dataclass
class DescriptorCheck:
    checked: int
    problems: list[str]

    def to_json(self) -> dict:
        return {"checked": self.checked, "problems": list(self.problems)}


def _field(bits: list, lo: int, w: int) -> list:
    return bits[lo: lo + w]


def _hex(bits: list) -> str:
    v = _int_of(bits)
    if v is not None:
        return f"0x{v:0{max(1, (len(bits) + 3) // 4)}X}"
    return "".join("1" if b == 1 else "0" if b == 0 else "x" if b is None else "a"
                   for b in reversed(bits)) + " (MSB first; a = kernel argument bit, x = unknown)"


@dataclass
class _Layout:
    """What judging one descriptor needs: the arch table row, the descriptor's
    field layout ``{field: (low bit, width)}``, the module's make.buffer.rsrc calls,
    the code object's kernel arguments ``{name: (byte offset, bytes)}`` and, per
    kernarg bit, ``(argument name, bit within it)``."""
    arch_row: dict
    fields: dict
    calls: list
    args: dict
    by_bit: dict
    covered: set

    def field(self, name: str) -> tuple:
        return self.fields[name]


def check_descriptors(asm: str, text: str, kernel: str, arch_row: dict) -> DescriptorCheck:
    """Compare every compiled buffer instruction's descriptor with ``arch_row``
    (the engine's arch table row: ``rsrc_fields``, ``rsrc_flags``,
    ``rsrc_word3``). Problems are one line each, naming the instruction, the
    field, what was compiled and what the table expects."""
    arch = arch_row.get("name", "?")
    fields = {f: (lo, w) for f, lo, w in arch_row.get("rsrc_fields") or []}
    problems: list[str] = []
    if set(fields) != {"base", "num_records", "stride", "flags"}:
        return DescriptorCheck(0, [f"arch {arch}: the arch table has no buffer resource layout (rsrc_fields)"])
    calls = rsrc_calls(text)
    quads = buffer_quads(asm, kernel)
    if _BUF_CALL.search(text) and not quads:
        problems.append("the module calls raw.ptr.buffer.load/store but the assembly has no buffer instruction "
                        "with an SGPR quad")
    for c in calls:
        if c.flags != arch_row.get("rsrc_flags") & 0xFFFFFFFF:
            problems.append(f"{c.value}: make.buffer.rsrc flags 0x{c.flags:08X} differ from the arch table's "
                            f"rsrc_flags 0x{arch_row.get('rsrc_flags'):08X} for {arch}")
    meta = kernel_metadata(asm, kernel) or {}
    args = {a.get(".name"): (int(a.get(".offset", 0)), int(a.get(".size", 0)))
            for a in meta.get(".args") or [] if a.get(".name")}
    by_bit = {}
    for name, (off, size) in args.items():
        for i in range(size * 8):
            by_bit[off * 8 + i] = (name, i)
    covered = set()
    for lo, w in fields.values():
        covered.update(range(lo, lo + w))
    lay = _Layout(arch_row, fields, calls, args, by_bit, covered)
    judged: dict = {}
    for line, quad, bits in quads:
        key = tuple(bits)
        if key not in judged:  # the same bits are judged once per distinct quad
            judged[key] = _judge_quad(bits, lay)
        problems.extend(f"`{line}` (descriptor {quad}): {b}" for b in judged[key])
    return DescriptorCheck(len(quads), problems)


def _judge_quad(bits, lay: _Layout) -> list[str]:
    """The problems of one descriptor's 128 bit terms: find the make.buffer.rsrc
    call whose pointer argument fills the base field, then judge each field."""
    blo, bw = lay.field("base")
    base = _field(bits, blo, bw)
    names = {lay.by_bit.get(next(iter(b)), ("?", -1))[0] if isinstance(b, frozenset) and len(b) == 1 else None
             for b in base[:32]}
    cands = [c for c in lay.calls if names == {c.base}]
    if not cands:
        return [f"base field (bits {blo + bw - 1}:{blo}) is not a pointer argument of any "
                f"make.buffer.rsrc call: {_hex(base[:32])}"]
    c = cands[0]
    norm = [_drop_beyond(b, c, lay, lay.field("num_records")[1]) for b in bits]
    bad = []
    want_base = [frozenset({lay.args[c.base][0] * 8 + i}) if i < 64 else 0 for i in range(bw)]
    if _field(norm, blo, bw) != want_base:
        bad.append(f"base (bits {blo + bw - 1}:{blo}) is not argument %{c.base}: {_hex(_field(norm, blo, bw))}")
    bad += _judge_num_records(norm, c, lay)
    bad += _judge_stride_flags(norm, c, lay)
    w3 = [_drop_beyond(b, c, lay, 32) for b in bits[96:128]]
    v3 = _int_of(w3)
    row = lay.arch_row
    if c.flags == row.get("rsrc_flags") and c.stride == 0 and v3 != row.get("rsrc_word3"):
        bad.append(f"word 3 is {_hex(w3)}, the arch table's rsrc_word3 for {row.get('name', '?')} is "
                   f"0x{row.get('rsrc_word3'):08X}")
    return bad


def _drop_beyond(b, c, lay: _Layout, nr_limit: int):
    """Bit term ``b`` without argument bits beyond their field: bits >= the base
    width of call ``c``'s pointer, bits >= ``nr_limit`` of its num_records argument."""
    if not isinstance(b, frozenset):
        return b
    bw = lay.field("base")[1]
    keep = frozenset(p for p in b if not (
        (lay.by_bit.get(p, ("", 0))[0] == c.base and lay.by_bit[p][1] >= bw)
        or (isinstance(c.num_records, str) and lay.by_bit.get(p, ("", 0))[0] == c.num_records
            and lay.by_bit[p][1] >= nr_limit)))
    return keep if keep else 0


def _judge_num_records(norm, c, lay: _Layout) -> list[str]:
    """The num_records field: call ``c``'s argument (its kernarg bits) or constant."""
    nlo, nw = lay.field("num_records")
    got_nr = _field(norm, nlo, nw)
    if isinstance(c.num_records, str):
        off, size = lay.args.get(c.num_records, (None, 0))
        if off is None:
            return [f"num_records argument %{c.num_records} is not in the code object metadata"]
        want = [frozenset({off * 8 + i}) if i < size * 8 else 0 for i in range(nw)]
        if got_nr != want:
            return [f"num_records (bits {nlo + nw - 1}:{nlo}) is not argument %{c.num_records}: {_hex(got_nr)}"]
    elif isinstance(c.num_records, int) and got_nr != _const_bits(c.num_records, nw):
        return [f"num_records (bits {nlo + nw - 1}:{nlo}) is {_hex(got_nr)}, the call's constant is "
                f"{c.num_records}"]
    return []


def _judge_stride_flags(norm, c, lay: _Layout) -> list[str]:
    """The stride and flags fields against call ``c``, and every bit outside the fields 0."""
    bad = []
    slo, sw = lay.field("stride")
    flo, fw = lay.field("flags")
    got_s = _field(norm, slo, sw)
    if got_s != _const_bits(c.stride, sw):
        bad.append(f"stride (bits {slo + sw - 1}:{slo}) is {_hex(got_s)}, expected {c.stride}")
    got_f = _field(norm, flo, fw)
    want_f = c.flags & ((1 << fw) - 1)
    if got_f != _const_bits(want_f, fw):
        bad.append(f"flags (bits {flo + fw - 1}:{flo}) are {_hex(got_f)}, the layout keeps flags bits "
                   f"{fw - 1}:0 of 0x{c.flags:08X} = 0x{want_f:X}")
    rest = [i for i in range(128) if i not in lay.covered and norm[i] != 0]
    if rest:
        bad.append(f"bits outside the fields are not 0: {', '.join(map(str, rest[:8]))}")
    return bad

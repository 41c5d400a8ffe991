"""Parser of the LLVM IR subset the engines print (docs/ir_text.md, DESIGN §2).

The printers' format is fixed: one kernel ``define`` per module, LDS globals
``@g = internal addrspace(3) global [N x T] poison, align A``, intrinsic
``declare`` lines, blocks of two-space-indented instructions, ``attributes #0``.
This parser reads exactly that (plus decimal float constants, for hand-written
test kernels) into plain records; :mod:`parity.sim.kernel` decodes the records
into closures once. Anything outside the subset is a :class:`ParseError`
naming the line -- a kernel the emulator cannot read is a failure, never a skip.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np

from .fp import f64_to_bf16_bits


class ParseError(Exception):
    """The text is outside the subset the emulator understands."""


# -- types ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Ty:
    """A type: ``kind`` in int, float, bf16, ptr, vec, arr, void.

    ``dtype`` is the numpy dtype of one lane's scalar (bf16 values are kept as
    their uint16 bit patterns; iN as uintN, i1 as bool); ``size`` the store
    size in bytes; ``n`` the vector/array count; ``elem`` the element type."""

    text: str
    kind: str
    bits: int = 0
    n: int = 0
    elem: "Ty | None" = None
    addrspace: int = 0

    @property
    def scalar(self) -> "Ty":
        return self.elem if self.kind == "vec" else self

    @property
    def dtype(self):
        s = self.scalar
        if s.kind == "int":
            return {1: np.bool_, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[s.bits]
        if s.kind == "bf16":
            return np.uint16
        if s.kind == "float":
            return {16: np.float16, 32: np.float32, 64: np.float64}[s.bits]
        raise ParseError(f"type {self.text} has no lane dtype")

    @property
    def size(self) -> int:
        if self.kind in ("vec", "arr"):
            return self.n * self.elem.size
        if self.kind == "ptr":
            return {3: 4, 5: 4, 8: 16}.get(self.addrspace, 8)
        return max(1, self.bits // 8)

    @property
    def is_vec(self) -> bool:
        return self.kind == "vec"


_SCALARS = {
    "i1": Ty("i1", "int", 1), "i8": Ty("i8", "int", 8), "i16": Ty("i16", "int", 16),
    "i32": Ty("i32", "int", 32), "i64": Ty("i64", "int", 64),
    "half": Ty("half", "float", 16), "bfloat": Ty("bfloat", "bf16", 16),
    "float": Ty("float", "float", 32), "double": Ty("double", "float", 64),
    "void": Ty("void", "void"),
}


def vec(n: int, elem: Ty) -> Ty:
    return Ty(f"<{n} x {elem.text}>", "vec", elem.bits, n, elem)


# -- records -------------------------------------------------------------------------

@dataclass
class Operand:
    """``kind``: reg (``%x``), glob (``@x``), const (``value`` is a numpy array
    of one lane's value: shape () or (n,)), poison."""

    kind: str
    ty: Ty
    name: str = ""
    value: object = None


@dataclass
class Ins:
    """One instruction: ``op`` (``add``, ``load``, ``call``, ``br``, ...),
    ``dst`` register name or None, ``ty`` result type, operands and extras."""

    op: str
    dst: str | None
    ty: Ty | None
    ops: list
    text: str
    block: str
    line: int
    extra: dict = field(default_factory=dict)


@dataclass
class Block:
    name: str
    ins: list = field(default_factory=list)


@dataclass
class Param:
    name: str
    ty: Ty
    attrs: tuple


@dataclass
class LdsGlobal:
    name: str
    ty: Ty
    align: int


@dataclass
class Module:
    kernel: str
    params: list
    lds: list
    blocks: list
    attrs: dict
    declares: dict  # intrinsic name -> declaration line
    attr_words: tuple = ()   # the kernel's attribute-group items without a value (``nounwind``, ``memory(...)``)
    md: dict = field(default_factory=dict)   # metadata node id (``!3``) -> its text after ``= ``

    @property
    def flat_work_group_size(self) -> int | None:
        v = self.attrs.get("amdgpu-flat-work-group-size")
        if not v:
            return None
        lo, hi = (int(x) for x in v.split(","))
        return hi if lo == hi else None

    @property
    def cluster_dims(self) -> tuple | None:
        v = self.attrs.get("amdgpu-cluster-dims")
        return tuple(int(x) for x in v.split(",")) if v else None


# -- cursor ----------------------------------------------------------------------------

_IDENT = re.compile(r"[%@]([-A-Za-z$._0-9]+)")
_INT = re.compile(r"-?\d+")
_HEX = re.compile(r"0x([0-9A-Fa-f]{16})")
_HEXH = re.compile(r"0x([HR])([0-9A-Fa-f]{4})")
_DEC = re.compile(r"[-+]?(\d+\.\d*|\d*\.\d+|\d+)([eE][-+]?\d+)?|[-+]?inf|nan")


class Cursor:
    def __init__(self, s: str, where: str):
        self.s = s
        self.i = 0
        self.where = where

    def fail(self, what: str):
        raise ParseError(f"{self.where}: {what} at column {self.i + 1}: {self.s}")

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def peek(self, lit: str) -> bool:
        self.ws()
        return self.s.startswith(lit, self.i)

    def eat(self, lit: str) -> bool:
        if self.peek(lit):
            self.i += len(lit)
            return True
        return False

    def expect(self, lit: str):
        if not self.eat(lit):
            self.fail(f"expected {lit!r}")

    def word(self) -> str:
        self.ws()
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*").match(self.s, self.i)
        if not m:
            self.fail("expected a word")
        self.i = m.end()
        return m.group(0)

    def regex(self, rx):
        self.ws()
        m = rx.match(self.s, self.i)
        if not m:
            return None
        self.i = m.end()
        return m

    def int(self) -> int:
        m = self.regex(_INT)
        if not m:
            self.fail("expected an integer")
        return int(m.group(0))

    def done(self) -> bool:
        self.ws()
        return self.i >= len(self.s)

    # types
    def type(self) -> Ty:
        self.ws()
        if self.eat("<"):
            n = self.int()
            self.expect("x")
            e = self.type()
            self.expect(">")
            return vec(n, e)
        if self.eat("["):
            n = self.int()
            self.expect("x")
            e = self.type()
            self.expect("]")
            return Ty(f"[{n} x {e.text}]", "arr", 0, n, e)
        m = self.regex(re.compile(r"ptr( addrspace\((\d+)\))?"))
        if m:
            a = int(m.group(2) or 0)
            return Ty(m.group(0), "ptr", 0, 0, None, a)
        m = self.regex(re.compile(r"i\d+|half|bfloat|float|double|void"))
        if not m or m.group(0) not in _SCALARS:
            self.fail("expected a type")
        return _SCALARS[m.group(0)]

    # values
    def value(self, ty: Ty) -> Operand:
        self.ws()
        m = self.regex(_IDENT)
        if m:
            return Operand("reg" if m.group(0)[0] == "%" else "glob", ty, m.group(1))
        if self.eat("poison") or self.eat("undef"):
            return Operand("poison", ty)
        if ty.kind == "ptr" and self.peek("getelementptr"):
            return _const_gep(self, ty)
        if self.eat("zeroinitializer"):
            if ty.kind != "vec":
                self.fail("zeroinitializer of a non-vector")
            return Operand("const", ty, value=np.zeros(ty.n, ty.dtype))
        if ty.kind == "vec":
            self.expect("<")
            vals = []
            for k in range(ty.n):
                if k:
                    self.expect(",")
                et = self.type()
                if et != ty.elem:
                    self.fail(f"vector constant element {et.text} in {ty.text}")
                op = self.value(et)
                if op.kind != "const":
                    self.fail("non-constant vector element")
                vals.append(op.value)
            self.expect(">")
            return Operand("const", ty, value=np.array(vals, dtype=ty.dtype))
        return Operand("const", ty, value=self.scalar_const(ty))

    def scalar_const(self, ty: Ty):
        if ty.kind == "int":
            if self.eat("true"):
                v = 1
            elif self.eat("false"):
                v = 0
            else:
                v = self.int()
            if ty.bits == 1:
                return np.bool_(v & 1)
            return np.array(v & ((1 << ty.bits) - 1), dtype=ty.dtype)[()]
        if ty.kind in ("float", "bf16"):
            m = self.regex(_HEXH)
            if m:
                if (m.group(1) == "H") != (ty.text == "half"):
                    self.fail(f"0x{m.group(1)} constant for {ty.text}")
                bits = np.uint16(int(m.group(2), 16))
                return bits if ty.kind == "bf16" else bits.view(np.float16)
            m = self.regex(_HEX)
            if m:
                d = struct.unpack(">d", bytes.fromhex(m.group(1)))[0]
            else:
                m = self.regex(_DEC)
                if not m:
                    self.fail(f"expected a {ty.text} constant")
                d = float(m.group(0))
            if ty.kind == "bf16":
                return f64_to_bf16_bits(d)
            # LLVM requires hex float constants of float/half to be exact; casting is exact then.
            return np.array(d, dtype=ty.dtype)[()]
        self.fail(f"constant of type {ty.text}")


# -- module --------------------------------------------------------------------------

_GLOBAL_RX = re.compile(r"@([-A-Za-z$._0-9]+) = internal addrspace\(3\) global (.*) poison, align (\d+)$")
_DEFINE_RX = re.compile(r"define amdgpu_kernel void @([-A-Za-z$._0-9]+)\((.*)\)( #\d+)? \{$")
_ATTR_RX = re.compile(r'"([^"]+)"="([^"]*)"')
_FLAGS = {"nuw", "nsw", "exact", "disjoint", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc", "fast",
          "nneg", "samesign", "inbounds", "nusw"}
#: ``, !kind !N`` attachments at the end of an instruction (parity/sim/promises.py checks each kind)
_MD_TAIL = re.compile(r"(?:, ![A-Za-z_.][-A-Za-z0-9_.]* !\d+)+$")
_MD_ITEM = re.compile(r"!([A-Za-z_.][-A-Za-z0-9_.]*) (!\d+)")
_MDNODE_RX = re.compile(r"(!\d+) = (.*)$")
_GROUP_RX = re.compile(r"attributes (#\d+) = \{ ?(.*?) ?\}$")
_GROUP_ITEM = re.compile(r'"([^"]+)"(?:="([^"]*)")?|([a-z_]+(?:\([^)]*\))?)')
INT_BINOPS = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor"}
FLOAT_BINOPS = {"fadd", "fsub", "fmul", "fdiv", "frem"}
CASTS = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptosi", "fptoui", "sitofp", "uitofp",
         "bitcast", "ptrtoint", "inttoptr", "addrspacecast"}


# ``!N = !{!"amdgpu-synchronize-as", !"local"}``: a fence annotated with it orders LDS only.
_MMRA_RX = re.compile(r'(!\d+) = !\{!"amdgpu-synchronize-as", !"(local)"\}$')


def _check_mmras(blocks: list, mmras: dict) -> None:
    """Every ``!mmra`` of a fence names an ``amdgpu-synchronize-as`` "local" node.
    Such a fence orders LDS only (the main loop's barriers, which write no global
    memory); the visibility model (parity/sim/shadow.py) keeps one release/acquire
    record per wave for all memories, so it treats the fence as a full one."""
    for blk in blocks:
        for ins in blk.ins:
            if ins.op == "fence" and ins.extra.get("mmra") and ins.extra["mmra"] not in mmras:
                raise ParseError(f"block {blk.name}: fence annotation {ins.extra['mmra']} is not an "
                                 f"amdgpu-synchronize-as \"local\" node")


def parse(text: str) -> Module:
    """Parse one module of the engines' subset."""
    lines = text.split("\n")
    lds, declares, attrs, mmras, md, groups = [], {}, {}, {}, {}, {}
    group = None
    kernel = params = None
    blocks: list = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        ln = i + 1
        i += 1
        m = _MMRA_RX.match(raw)
        if m:
            mmras[m.group(1)] = m.group(2)
        m = _MDNODE_RX.match(raw)
        if m:
            md[m.group(1)] = m.group(2)
            continue
        if not raw or raw.startswith(("target ", "!", ";", "source_filename")):
            continue
        if raw.startswith("@"):
            m = _GLOBAL_RX.match(raw)
            if not m:
                raise ParseError(f"line {ln}: unsupported global: {raw}")
            c = Cursor(m.group(2), f"line {ln}")
            t = c.type()
            lds.append(LdsGlobal(m.group(1), t, int(m.group(3))))
            continue
        if raw.startswith("declare "):
            m = re.search(r"@([-A-Za-z$._0-9]+)\(", raw)
            declares[m.group(1)] = raw
            continue
        if raw.startswith("attributes "):
            attrs.update(dict(_ATTR_RX.findall(raw)))
            m = _GROUP_RX.match(raw)
            if not m:
                raise ParseError(f"line {ln}: unsupported attribute group: {raw}")
            groups[m.group(1)] = _group_items(m.group(2), ln)
            continue
        if raw.startswith("define "):
            if kernel is not None:
                raise ParseError(f"line {ln}: a second define")
            m = _DEFINE_RX.match(raw)
            if not m:
                raise ParseError(f"line {ln}: unsupported define: {raw}")
            kernel = m.group(1)
            params = _params(m.group(2), ln)
            group = (m.group(3) or "").strip() or None
            cur = None
            while i < len(lines):
                raw = lines[i]
                ln = i + 1
                i += 1
                if raw == "}":
                    break
                if not raw:
                    continue
                if not raw.startswith(" "):
                    if not raw.endswith(":"):
                        raise ParseError(f"line {ln}: expected a block label: {raw}")
                    cur = Block(raw[:-1])
                    blocks.append(cur)
                    continue
                if cur is None:
                    raise ParseError(f"line {ln}: instruction before the first block label")
                cur.ins.append(_parse_cached(raw.strip(), cur.name, ln))
            else:
                raise ParseError("unterminated define")
            continue
        raise ParseError(f"line {ln}: unsupported line: {raw}")
    if kernel is None:
        raise ParseError("no kernel define in the module")
    _check_mmras(blocks, mmras)
    attrs, words = _kernel_group(group, groups, attrs)
    _expand_const_geps(blocks)
    return Module(kernel, params, lds, blocks, attrs, declares, words, md)


def _kernel_group(group, groups: dict, merged: dict) -> tuple:
    """(attributes, bare items) of the group the kernel's define names (else every group's pairs)."""
    if group is None:
        return merged, ()
    if group not in groups:
        raise ParseError(f"the kernel names attribute group {group}, which the module does not define")
    return groups[group]


def _group_items(s: str, ln: int) -> tuple:
    """``({"key": "value"}, (bare items,))`` of one ``attributes #N = { ... }`` body;
    a string attribute without a value maps to ""."""
    pairs, words, i = {}, [], 0
    while i < len(s):
        if s[i] == " ":
            i += 1
            continue
        m = _GROUP_ITEM.match(s, i)
        if not m:
            raise ParseError(f"line {ln}: unsupported attribute at column {i + 1}: {s}")
        if m.group(1) is not None:
            pairs[m.group(1)] = m.group(2) or ""
        else:
            words.append(m.group(3))
        i = m.end()
    return pairs, tuple(words)


def _params(s: str, ln: int) -> list:
    out = []
    c = Cursor(s, f"line {ln} (parameters)")
    while not c.done():
        t = c.type()
        attrs = []
        while not c.peek("%"):
            m = c.regex(re.compile(r"[a-z_]+(\([a-z_0-9, ]*\))?"))
            if not m:
                c.fail("expected a parameter attribute or name")
            a = m.group(0)
            if a == "align":   # ``align N``: one attribute with its value
                a = f"align {c.int()}"
            attrs.append(a)
        m = c.regex(_IDENT)
        out.append(Param(m.group(1), t, tuple(attrs)))
        if not c.eat(","):
            break
    if not c.done():
        c.fail("trailing text in the parameter list")
    return out


#: (text, block, line) -> Ins: a mutant differs from its honest kernel in a line or two (parity
#: mutate); handed out copied with its own ``ops`` and ``extra`` (_expand_const_geps rewrites ops)
_INS_CACHE: dict = {}


def _parse_cached(s: str, block: str, ln: int) -> Ins:
    ins = _INS_CACHE.get((s, block, ln))
    if ins is None:
        if len(_INS_CACHE) >= 100_000:
            _INS_CACHE.clear()
        ins = _INS_CACHE[(s, block, ln)] = parse_instruction(s, block, ln)
    return Ins(ins.op, ins.dst, ins.ty, list(ins.ops), ins.text, ins.block, ins.line, dict(ins.extra))


def parse_instruction(s: str, block: str, ln: int) -> Ins:
    """One instruction line (without indentation). Flags after the opcode
    (``nuw``, ``nnan``, ``samesign``, ``inbounds``, ...) are ``extra["flags"]``,
    trailing ``, !kind !N`` attachments ``extra["md"]`` ({kind: node id}); the
    checks of both are parity/sim/promises.py. Raises ParseError naming the line
    for an instruction outside the subset (:data:`_OPERANDS`, :data:`EXTRA_OPS`)."""
    full = s
    md = {}
    t_md = _MD_TAIL.search(s)
    if t_md:
        md = dict(_MD_ITEM.findall(t_md.group(0)))
        s = s[:t_md.start()]
    c = Cursor(s, f"line {ln}")
    dst = None
    m = re.match(r"%([-A-Za-z$._0-9]+) = ", s)
    if m:
        dst = m.group(1)
        c.i = m.end()
    op = c.word()
    flags = _opcode_flags(c)

    def mk(ty, ops, **extra):
        if not c.done():
            c.fail("unexpected trailing text")
        extra.setdefault("flags", flags)
        extra["md"] = md
        return Ins(op, dst, ty, ops, full, block, ln, extra)

    if op in INT_BINOPS or op in FLOAT_BINOPS:
        return mk(*_binop(c))
    if op in CASTS:
        return mk(*_cast(c))
    if op in _OPERANDS:
        ty, ops, extra = _OPERANDS[op](c, flags, md)
        return mk(ty, ops, **extra)
    if op in EXTRA_OPS:
        return _parse_extra(op, c, mk)
    raise ParseError(f"line {ln}: unsupported instruction {op!r}: {s}")


def _opcode_flags(c: Cursor) -> tuple:
    """The flags right after the opcode (``nuw``, ``nsw``, fast-math flags, ``inbounds``, ...)."""
    flags = []
    while True:
        c.ws()
        save = c.i
        w = c.regex(re.compile(r"[a-z]+\b"))
        if w and w.group(0) in _FLAGS:
            flags.append(w.group(0))
            continue
        c.i = save
        return tuple(flags)


def _typed_pair(c: Cursor) -> tuple:
    """``T a, b``: the type and both operands."""
    t = c.type()
    a = c.value(t)
    c.expect(",")
    return t, a, c.value(t)


def _binop(c: Cursor) -> tuple:
    t, a, b = _typed_pair(c)
    return t, [a, b]


def _cast(c: Cursor) -> tuple:
    """``T v to T2``."""
    t = c.type()
    v = c.value(t)
    c.expect("to")
    return c.type(), [v]


def _fneg(c: Cursor, flags, md) -> tuple:
    t = c.type()
    return t, [c.value(t)], {}


def _cmp(c: Cursor, flags, md) -> tuple:
    """``icmp/fcmp PRED T a, b``: i1 (or <N x i1>) with ``pred``."""
    pred = c.word()
    t, a, b = _typed_pair(c)
    rt = vec(t.n, _SCALARS["i1"]) if t.is_vec else _SCALARS["i1"]
    return rt, [a, b], {"pred": pred}


def _select(c: Cursor, flags, md) -> tuple:
    ct = c.type()
    cv = c.value(ct)
    c.expect(",")
    t = c.type()
    a = c.value(t)
    c.expect(",")
    t2 = c.type()
    return t, [cv, a, c.value(t2)], {}


def _gep(c: Cursor, flags, md) -> tuple:
    """``getelementptr [flags] T, ptr p, iN i, ...``: ``elem`` T, ``inbounds``."""
    et = c.type()
    c.expect(",")
    pt = c.type()
    base = c.value(pt)
    idx = []
    while c.eat(","):
        it = c.type()
        idx.append(c.value(it))
    return pt, [base] + idx, {"elem": et, "inbounds": "inbounds" in flags}


def _load(c: Cursor, flags, md) -> tuple:
    t = c.type()
    c.expect(",")
    pt = c.type()
    p = c.value(pt)
    c.expect(",")
    c.expect("align")
    return t, [p], {"align": c.int()}


def _store(c: Cursor, flags, md) -> tuple:
    t = c.type()
    v = c.value(t)
    c.expect(",")
    pt = c.type()
    p = c.value(pt)
    c.expect(",")
    c.expect("align")
    return None, [v, p], {"align": c.int()}


def _extractelement(c: Cursor, flags, md) -> tuple:
    t = c.type()
    v = c.value(t)
    c.expect(",")
    it = c.type()
    return t.elem, [v, c.value(it)], {}


def _insertelement(c: Cursor, flags, md) -> tuple:
    t = c.type()
    v = c.value(t)
    c.expect(",")
    et = c.type()
    e = c.value(et)
    c.expect(",")
    it = c.type()
    return t, [v, e, c.value(it)], {}


def _shufflevector(c: Cursor, flags, md) -> tuple:
    """``shufflevector T a, T b, <N x i32> mask``: the mask must be a constant."""
    t = c.type()
    a = c.value(t)
    c.expect(",")
    t2 = c.type()
    b = c.value(t2)
    c.expect(",")
    mt = c.type()
    mv = c.value(mt)
    if mv.kind != "const":
        c.fail("shufflevector mask must be a constant")
    return vec(mt.n, t.elem), [a, b], {"mask": [int(x) for x in mv.value]}


def _phi(c: Cursor, flags, md) -> tuple:
    """``phi T [v, %bb], ...``: the values as operands, ``preds`` the blocks."""
    t = c.type()
    edges = []
    while True:
        c.expect("[")
        v = c.value(t)
        c.expect(",")
        m2 = c.regex(_IDENT)
        if not m2:
            c.fail("expected an incoming block")
        c.expect("]")
        edges.append((v, m2.group(1)))
        if not c.eat(","):
            return t, [v for v, _ in edges], {"preds": [b for _, b in edges]}


def _call(c: Cursor, flags, md) -> tuple:
    """``call [flags] T @f(args)``: ``callee``; the fast-math flags after the generic ones."""
    flags = tuple(flags) + _call_flags(c)   # generic flags read above, plus any after them
    rt = c.type()
    m2 = c.regex(_IDENT)
    if not m2 or m2.group(0)[0] != "@":
        c.fail("expected a callee")
    c.expect("(")
    args = []
    if not c.eat(")"):
        while True:
            at = c.type()
            args.append(c.value(at))
            if c.eat(")"):
                break
            c.expect(",")
    return rt if rt.kind != "void" else None, args, {"callee": m2.group(1), "flags": flags}


def _fence(c: Cursor, flags, md) -> tuple:
    """``fence [syncscope("S")] ORDERING``; a memory model relaxation annotation
    (``, !mmra !N``) is resolved by parse()."""
    scope = "system"
    if c.eat("syncscope("):
        m2 = c.regex(re.compile(r'"([^"]*)"'))
        scope = m2.group(1)
        c.expect(")")
    ordering = c.word()
    return None, [], {"scope": scope, "ordering": ordering, "mmra": md.get("mmra")}


def _br(c: Cursor, flags, md) -> tuple:
    """``br label %t`` or ``br i1 %c, label %t1, label %t2``: ``targets``."""
    if c.eat("label"):
        m2 = c.regex(_IDENT)
        return None, [], {"targets": [m2.group(1)]}
    ct = c.type()
    cv = c.value(ct)
    c.expect(",")
    c.expect("label")
    t1 = c.regex(_IDENT).group(1)
    c.expect(",")
    c.expect("label")
    t2 = c.regex(_IDENT).group(1)
    return None, [cv], {"targets": [t1, t2]}


def _ret(c: Cursor, flags, md) -> tuple:
    c.expect("void")
    return None, [], {}


#: operand parsers of the engines' subset: opcode -> fn(cursor, flags, md) -> (type, operands, extra)
_OPERANDS = {"fneg": _fneg, "icmp": _cmp, "fcmp": _cmp, "select": _select, "getelementptr": _gep,
             "load": _load, "store": _store, "extractelement": _extractelement,
             "insertelement": _insertelement, "shufflevector": _shufflevector, "phi": _phi, "call": _call,
             "fence": _fence, "br": _br, "ret": _ret}


#: instructions outside the engines' subset that LLVM's optimizer emits (the opt lane,
#: parity/sim/optimised.py); decoded by parity/sim/ops_generic.py
EXTRA_OPS = {"freeze"}


def _parse_extra(op: str, c: Cursor, mk) -> Ins:
    """``freeze T v``."""
    t = c.type()
    return mk(t, [c.value(t)])


def _call_flags(c: Cursor) -> tuple:
    """Fast-math flags between ``call`` and the return type (``call reassoc float
    @llvm.vector.reduce.fadd...``, as the loop vectorizer writes them)."""
    flags = []
    while True:
        c.ws()
        save = c.i
        w = c.regex(re.compile(r"[a-z]+\b"))
        if w and w.group(0) in _FLAGS - {"nuw", "nsw", "exact", "disjoint"}:
            flags.append(w.group(0))
            continue
        c.i = save
        return tuple(flags)


def _const_gep(c: Cursor, ty: Ty) -> Operand:
    """A constant-expression ``getelementptr [inbounds] [nuw] (T, ptr @g, iN C, ...)``
    operand (LLVM's optimizer folds constant LDS offsets into them): an Operand of kind
    ``cgep``, ``name`` the global, ``value`` ``(T, [index operands])``. Expanded into an
    instruction of its own by :func:`_expand_const_geps`."""
    c.expect("getelementptr")
    while c.eat("inbounds") or c.eat("nuw") or c.eat("nusw"):
        pass
    c.expect("(")
    et = c.type()
    c.expect(",")
    pt = c.type()
    base = c.value(pt)
    if base.kind != "glob":
        c.fail("a constant getelementptr must be based on a global")
    idx = []
    while c.eat(","):
        it = c.type()
        v = c.value(it)
        if v.kind != "const" or it.kind != "int":
            c.fail("a constant getelementptr needs constant integer indices")
        idx.append(v)
    c.expect(")")
    return Operand("cgep", ty, base.name, (et, pt, idx))


def _expand_const_geps(blocks: list) -> None:
    """Every ``cgep`` operand becomes the register of a ``getelementptr`` instruction
    inserted just before its user (same text and line, so errors name the user's line);
    in a phi (whose operand belongs to a predecessor's edge) it is a ParseError."""
    for blk in blocks:
        out = []
        for ins in blk.ins:
            for k, o in enumerate(ins.ops):
                if o.kind != "cgep":
                    continue
                if ins.op == "phi":
                    raise ParseError(f"line {ins.line}: a constant getelementptr as a phi operand: {ins.text}")
                et, pt, idx = o.value
                reg = f"cgep.{ins.line}.{k}"
                out.append(Ins("getelementptr", reg, pt, [Operand("glob", pt, o.name)] + idx, ins.text,
                               ins.block, ins.line, {"elem": et, "inbounds": True, "flags": ("inbounds",)}))
                ins.ops[k] = Operand("reg", o.ty, reg)
            out.append(ins)
        blk.ins = out

"""The abstract interpreter of the alignment/bounds proof (docs/proof.md).

It reads the engines' IR text (the subset of docs/ir_text.md) line by line
and keeps only what reaches an address: integer and pointer values, buffer
resources, and the memory accesses (``load``/``store`` on global and LDS
pointers, ``llvm.amdgcn.raw[.ptr].buffer.load/store*``). It does not reuse
the emulator's parser (parity/sim/ir.py): that one builds numpy constants and
typed records for every instruction and costs about 17 s for every accepted
config, more than the whole budget of the proof; this reader matches each
line with one regular expression and drops float arithmetic. Both read the
same printer output; a line this reader cannot read is an error naming the
line (a kernel the proof cannot read fails, never passes).

Values are those of parity/proof/domain.py. Blocks are visited in text order
until no value changes (a fixpoint; a phi whose interval keeps growing is
widened after a few rounds, so loops terminate). The result is the list of
:class:`Access` records with the alignment and offset interval proved for
each.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from parity.proof import domain as D

_TYPE = r"<\d+ x [a-z0-9]+>|\[\d+ x [^\]]+\]|ptr(?: addrspace\(\d+\))?|i\d+|half|bfloat|float|double|void"
_VAL = r"<[^<>]*>|[^,\s]+"
_LINE = re.compile(r"  (?:%([-\w.$]+) = )?([a-z]+) ?(.*)$")
_BIN = re.compile(rf"((?:(?:nuw|nsw|exact|disjoint) )*)({_TYPE}) ({_VAL}), ({_VAL})$")
_SEL = re.compile(rf"(<\d+ x i1>|i1) (\S+), ({_TYPE}) ({_VAL}), ({_TYPE}) ({_VAL})$")
_ICMP = re.compile(rf"(eq|ne|[us](?:lt|le|gt|ge)) (i\d+) ({_VAL}), ({_VAL})$")
_CAST = re.compile(rf"({_TYPE}) ({_VAL}) to ({_TYPE})$")
_GEP = re.compile(rf"(?:(?:inbounds|nuw|nusw) )*({_TYPE}), ptr(?: addrspace\((\d+)\))? ([^,\s]+)((?:, i\d+ [^,\s]+)*)$")
_IDX = re.compile(r", (i\d+) ([^,\s]+)")
_LOAD = re.compile(rf"(?:volatile )?({_TYPE}), ptr(?: addrspace\((\d+)\))? ([^,\s]+), align (\d+)$")
_STORE = re.compile(rf"(?:volatile )?({_TYPE}) ({_VAL}), ptr(?: addrspace\((\d+)\))? ([^,\s]+), align (\d+)$")
_PHI = re.compile(rf"({_TYPE}) (.*)$")
_EDGE = re.compile(rf"\[ ({_VAL}), %([-\w.$]+) \]")
_CALL = re.compile(rf"({_TYPE}) @([-\w.$]+)\((.*)\)$")
_ARG = re.compile(rf"({_TYPE})(?: .*)? ({_VAL})$")  # type, any attributes, value
_EXTRACT = re.compile(rf"({_TYPE}) ({_VAL}), i\d+ \S+$")
_INSERT = re.compile(rf"({_TYPE}) ({_VAL}), ({_TYPE}) ({_VAL}), i\d+ \S+$")
_SHUF = re.compile(rf"({_TYPE}) ({_VAL}), ({_TYPE}) ({_VAL}), ")
_VINT = re.compile(r"i\d+ (-?\d+|true|false)")
_GLOBAL = re.compile(r"@([-\w.$]+) = internal addrspace\(3\) global \[(\d+) x ([a-z0-9]+)\] poison, align (\d+)$")
_DEFINE = re.compile(r"define amdgpu_kernel void @([-\w.$]+)\((.*)\)(?: #(\d+))? \{$")
_ATTRS = re.compile(r"^attributes #(\d+) = ")
_PARAM = re.compile(rf"({_TYPE})(?: .*)? %([-\w.$]+)$")  # type, any attributes, name
_USES = re.compile(r"%([-\w.$]+)")
_WGS = re.compile(r'"amdgpu-flat-work-group-size"="(\d+),(\d+)"')

_SIZES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "bfloat": 2, "float": 4, "double": 8}
INT_BIN = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor"}
_SKIP = {"br", "ret", "fence", "fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fcmp", "fptrunc", "fpext",
         "fptosi", "fptoui", "sitofp", "uitofp", "icmp", "bitcast", "ptrtoint", "inttoptr", "addrspacecast"}
_TYPED = {"phi", "extractelement", "insertelement", "shufflevector"}
_FLOATY = re.compile(r"(?:<\d+ x )?(?:half|bfloat|float|double)\b")


def _not_address(rest: str) -> bool:
    """The instruction's first type (its result type for phi / vector ops) is a float kind."""
    return _FLOATY.match(rest) is not None


_BUF_LOAD = re.compile(r"llvm\.amdgcn\.raw\.(?:ptr\.)?buffer\.load\.")
_BUF_STORE = re.compile(r"llvm\.amdgcn\.raw\.(?:ptr\.)?buffer\.store\.")


class ProofParseError(ValueError):
    """A line the proof cannot read (the message names the line)."""


def type_size(t: str) -> int:
    """Store size in bytes of a type text (scalar, vector, array, pointer)."""
    s = _SIZES.get(t)
    if s is not None:
        return s
    if t[0] in "<[":
        n, _, e = t[1:-1].partition(" x ")
        return int(n) * type_size(e)
    if t.startswith("ptr"):
        a = re.search(r"\((\d+)\)", t)
        return {3: 4, 5: 4, 8: 16}.get(int(a.group(1)) if a else 0, 8)
    raise ProofParseError(f"unknown type {t!r}")


def int_width(t: str) -> int | None:
    """Bit width of an integer (or integer-vector element) type, else None."""
    if t[0] == "<":
        t = t[1:-1].partition(" x ")[2]
    if t[0] == "i" and t[1:].isdigit():
        return int(t[1:])
    return None


@dataclass
class Access:
    """One memory access of the kernel, with what the proof established.

    ``kind``: ``load``/``store`` (global or LDS, ``space`` 1 or 3) or
    ``buffer load``/``buffer store``; ``nbytes`` its width; ``declared`` the
    IR's ``align N`` (None for a buffer access, which carries none);
    ``proved`` the byte alignment that holds for every admissible problem;
    ``lo``/``hi`` the proved byte-offset interval from the base;
    ``limit`` the base's size in bytes when static (an LDS global), else None."""

    line: int
    text: str
    kind: str
    space: int
    base: str | None
    nbytes: int
    declared: int | None
    proved: int
    lo: int | None
    hi: int | None
    limit: int | None

    @property
    def in_bounds(self) -> bool:
        return (self.limit is not None and self.lo is not None and self.hi is not None
                and self.lo >= 0 and self.hi + self.nbytes <= self.limit)


@dataclass
class Module:
    kernel: str
    params: list            # [(type text, name)]
    lds: dict               # name -> (bytes, align)
    wgs: int | None         # flat work-group size when fixed
    blocks: list            # [(label, [ins])]; ins = (line, text, op, dst, payload)


def read(text: str) -> Module:
    """The kernel of one module as the proof sees it (raises ProofParseError)."""
    lines = text.split("\n")
    lds: dict = {}
    kernel = None
    params: list = []
    blocks: list = []
    group_wgs: dict = {}   # attribute group -> fixed flat work-group size
    group = None
    cur = None
    for i, raw in enumerate(lines, 1):
        if not raw or raw.startswith(("target ", "!", ";", "source_filename", "declare ")):
            continue
        if raw[0] == "@":
            m = _GLOBAL.match(raw)
            if not m:
                raise ProofParseError(f"line {i}: unsupported global: {raw}")
            lds[m.group(1)] = (int(m.group(2)) * type_size(m.group(3)), int(m.group(4)))
            continue
        if raw.startswith("attributes "):
            # the work-group size of the kernel's own attribute group only (not of any group)
            g, m = _ATTRS.match(raw), _WGS.search(raw)
            if g and m and m.group(1) == m.group(2):
                group_wgs[g.group(1)] = int(m.group(1))
            continue
        if raw.startswith("define "):
            m = _DEFINE.match(raw)
            if not m:
                raise ProofParseError(f"line {i}: unsupported define: {raw}")
            if kernel is not None:   # the engines emit one kernel a module; blocks would merge
                raise ProofParseError(f"line {i}: a second kernel define (@{m.group(1)} after @{kernel})")
            kernel, group = m.group(1), m.group(3)
            params = [_param(p, i) for p in _split_top(m.group(2))]
            continue
        if raw == "}":
            cur = None
            continue
        if raw[0] != " ":
            if not raw.endswith(":"):
                raise ProofParseError(f"line {i}: unsupported line: {raw}")
            cur = []
            blocks.append((raw[:-1], cur))
            continue
        if cur is None:
            raise ProofParseError(f"line {i}: instruction outside a function: {raw}")
        ins = decode_instruction(raw, i)
        if ins is not None:
            cur.append(ins)
    if kernel is None:
        raise ProofParseError("no kernel define in the module")
    return Module(kernel, params, lds, group_wgs.get(group) if group is not None else None, blocks)


def _split_top(text: str) -> list:
    """``text`` split at the commas outside any (), [], {} or <>: a parameter list whose
    attributes carry their own commas and digits (``dereferenceable(N)``, ``align 16``,
    ``captures(address, provenance)``) splits into one piece per parameter."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:k].strip())
            start = k + 1
    tail = text[start:].strip()
    return out + [tail] if tail else out


def _param(piece: str, ln: int) -> tuple:
    """``(type, name)`` of one kernel parameter; a parameter the proof cannot read is a parse
    error (fail closed), never a parameter silently left out of the base-pointer table."""
    m = _PARAM.match(piece)
    if not m:
        raise ProofParseError(f"line {ln}: unsupported kernel parameter: {piece}")
    return m.group(1), m.group(2)


def decode_instruction(raw: str, ln: int):
    """One IR instruction line ``raw`` (1-based line ``ln``) as the proof reads it:
    ``(ln, text, op, dst, operands)``, or None for a line without a result the proof
    skips. An integer binary op's operands are ``(flags, width in bits, a, b)``.

    Raises ProofParseError naming the line when the proof cannot read the
    instruction (fail closed: the caller must not treat it as harmless)."""
    m = _LINE.match(raw)
    if not m:
        raise ProofParseError(f"line {ln}: unreadable instruction: {raw.strip()}")
    dst, op, rest = m.groups()
    text = raw.strip()

    def bad():
        raise ProofParseError(f"line {ln}: the proof cannot read this {op}: {text}")

    if op in INT_BIN:
        b = _BIN.match(rest) or bad()
        return (ln, text, op, dst, (b.group(1).split(), int_width(b.group(2)), b.group(3), b.group(4)))
    if op == "icmp" and dst:
        g = _ICMP.match(rest)   # a scalar integer compare; vector and pointer compares are not tracked
        if g:
            return (ln, text, op, dst, (g.group(1), int_width(g.group(2)), g.group(3), g.group(4)))
    if op in _SKIP:
        return (ln, text, "unknown", dst, None) if dst else None
    if op == "getelementptr":
        g = _GEP.match(rest) or bad()
        idx = [(int(w[1:]), v) for w, v in _IDX.findall(g.group(4))]
        return (ln, text, op, dst, (g.group(1), g.group(3), idx))
    if op == "load":
        g = _LOAD.match(rest) or bad()
        return (ln, text, op, dst, (g.group(1), int(g.group(2) or 0), g.group(3), int(g.group(4))))
    if op == "store":
        g = _STORE.match(rest) or bad()
        return (ln, text, op, dst, (g.group(1), int(g.group(3) or 0), g.group(4), int(g.group(5))))
    if dst and op in _TYPED and _not_address(rest):
        return (ln, text, "unknown", dst, None)
    if op == "select":
        g = _SEL.match(rest) or bad()
        return (ln, text, op, dst, (g.group(3), g.group(4), g.group(6), g.group(2) if g.group(1) == "i1" else None))
    if op in ("zext", "sext", "trunc"):
        g = _CAST.match(rest) or bad()
        return (ln, text, op, dst, (int_width(g.group(1)), g.group(2), int_width(g.group(3))))
    if op == "phi":
        g = _PHI.match(rest) or bad()
        return (ln, text, op, dst, (g.group(1), _EDGE.findall(g.group(2))))
    if op == "call":
        g = _CALL.match(rest) or bad()
        args = [_ARG.match(a) or bad() for a in _split_top(g.group(3))]
        return (ln, text, op, dst, (g.group(1), g.group(2), [a.groups() for a in args]))
    if op == "extractelement":
        g = _EXTRACT.match(rest) or bad()
        return (ln, text, op, dst, (g.group(1), g.group(2)))
    if op == "insertelement":
        g = _INSERT.match(rest) or bad()
        return (ln, text, op, dst, (g.group(1), g.group(2), g.group(4)))
    if op == "shufflevector":
        g = _SHUF.match(rest) or bad()
        return (ln, text, op, dst, (g.group(1), g.group(2), g.group(4)))
    bad()


# -- evaluation ------------------------------------------------------------------------

_BOTTOM = object()


class Interp:
    """Runs :func:`read`'s module to a fixpoint and collects the accesses.

    ``arg_bits`` {argument name: low bits known zero} (the admission rules of
    parity/proof/assumptions.py); ``ptr_align`` the byte alignment of every
    pointer argument; ``tid`` (first, last) narrows ``llvm.amdgcn.workitem.id.x``
    from 0 .. wgs - 1 to those work-items (a constant when first == last)."""

    WIDEN_AFTER = 3

    def __init__(self, mod: Module, arg_bits: dict, ptr_align: int, tid: tuple | None = None):
        self.mod = mod
        self.tid = tid   # (first, last) work-item id when narrowed (parity/mutate/guard.py), else 0 .. wgs - 1
        self.env: dict = {}
        self.changes: dict = {}
        self.accesses: dict = {}
        self.unjustified: dict = {}   # line -> a flag the proof would have needed (not trusted)
        for t, n in mod.params:
            w = int_width(t)
            if w is not None:
                k = min(arg_bits.get(n, 0), w)
                self.env[n] = (w, k, 0, 0, D.MASK[w])
            elif t.startswith("ptr"):
                sp = re.search(r"\((\d+)\)", t)
                self.env[n] = D.Ptr("%" + n, ptr_align, int(sp.group(1)) if sp else 0, D.const(64, 0))
            else:
                self.env[n] = None

    def val(self, tok: str, w: int | None):
        """Abstract value of an operand token (``%x``, constant, vector constant)."""
        c = tok[0]
        if c == "%":
            return self.env.get(tok[1:], _BOTTOM)
        if c == "@":
            g = self.mod.lds.get(tok[1:])
            return D.Ptr(tok, g[1], 3, D.const(64, 0)) if g else None
        if w is None:
            return None
        if c == "-" or c.isdigit():
            return D.const(w, int(tok))
        if tok == "true":
            return D.const(w, 1)
        if tok == "false" or tok == "zeroinitializer":
            return D.const(w, 0)
        if c == "<":
            out = None
            for v in _VINT.findall(tok):
                x = D.const(w, 1 if v == "true" else 0 if v == "false" else int(v))
                out = x if out is None else D.join(out, x)
            return out
        return None  # poison, undef, float constants

    def run(self, max_evals: int = 2_000_000) -> None:
        """Worklist to a fixpoint: every instruction once in text order, then
        the users of each value that changed (SSA def-use), until none changes."""
        flat = []
        for _, ins in self.mod.blocks:
            for x in ins:
                if x[2] == "unknown":  # float arithmetic, compares, casts: no address flows through
                    self.env[x[3]] = None
                else:
                    flat.append(x)
        users: dict = {}
        for i, x in enumerate(flat):
            for u in _USES.findall(x[1].partition(" = ")[2] if x[3] else x[1]):
                users.setdefault(u, []).append(i)
        queued = [True] * len(flat)
        work = deque(range(len(flat)))
        ev = self._eval
        n = 0
        while work:
            i = work.popleft()
            queued[i] = False
            x = flat[i]
            n += 1
            if n > max_evals:
                raise ProofParseError(f"no fixpoint after {max_evals} evaluations")
            r = ev(x)
            if r is _BOTTOM or x[3] is None:
                continue
            if self._set(x[3], r):
                for j in users.get(x[3], ()):
                    if not queued[j]:
                        queued[j] = True
                        work.append(j)
        for x in flat:  # an access whose address never got a value: known nothing about it
            if x[0] not in self.accesses and (x[2] in ("load", "store") or (
                    x[2] == "call" and (_BUF_LOAD.match(x[4][1]) or _BUF_STORE.match(x[4][1])))):
                if x[2] == "call":
                    load = _BUF_LOAD.match(x[4][1])
                    t = x[4][0] if load else x[4][2][0][0]
                    self._access(x, "buffer load" if load else "buffer store", 8, None, type_size(t), None)
                else:
                    t, space, _, align = x[4]
                    self._access(x, x[2], space, None, type_size(t), align)

    def _set(self, dst, v) -> bool:
        old = self.env.get(dst, _BOTTOM)
        if old is _BOTTOM or old != v:
            if old is not _BOTTOM and v is not None and old is not None:
                v = D.join_any(old, v)
                if old == v:
                    return False
            self.env[dst] = v
            return True
        return False

    def _eval(self, x):
        """The abstract value of instruction ``x`` = ``(line, text, op, dst, parts)``:
        None for a value the domain does not track, _BOTTOM for no value yet (or a
        store); raises ProofParseError for an op the interpreter does not know."""
        ln, text, op, dst, p = x
        if op == "unknown":
            return None
        if op in INT_BIN:
            return self._eval_int(x)
        fn = self._EVAL.get(op)
        if fn is None:
            raise ProofParseError(f"line {ln}: unhandled {op}")
        return fn(self, x)

    def _eval_int(self, x):
        """An integer binary op: both operands' values, then the flag judgment."""
        _, _, op, _, (flags, w, a, b) = x
        if w is None:
            return None
        A = self.val(a, w)
        B = self.val(b, w)
        if A is _BOTTOM or B is _BOTTOM:
            return _BOTTOM
        if A is None or B is None:
            return D.top(w)
        return self._untrusted(x, op, flags, A, B)

    def _eval_gep(self, x):
        """getelementptr: the base pointer's object and alignment, offset by each
        index times its element size (indices sign-extended to 64 bits)."""
        ln, _, _, _, (et, base, idx) = x
        P = self.val(base, None)
        if P is _BOTTOM:
            return _BOTTOM
        if not isinstance(P, D.Ptr):
            return None
        off = P.off
        t = et
        for k, (w, tok) in enumerate(idx):
            if k:
                if t[0] not in "<[":
                    raise ProofParseError(f"line {ln}: getelementptr index into {t}")
                t = t[1:-1].partition(" x ")[2]
            v = self.val(tok, w)
            if v is _BOTTOM:
                return _BOTTOM
            v = D.top(64) if v is None else D.sext(v, 64)
            off = D.add(off, D.mul(v, D.const(64, type_size(t))))
        return D.Ptr(P.base, P.align, P.space, off)

    def _eval_mem(self, x):
        """load / store: the access judged; a loaded integer is unknown (top)."""
        _, _, op, _, (t, space, ptok, align) = x
        P = self.val(ptok, None)
        if P is _BOTTOM:
            return _BOTTOM
        self._access(x, op, space, P, type_size(t), align)
        if op == "load":
            w = int_width(t)
            return D.top(w) if w else None
        return _BOTTOM

    def _eval_select(self, x):
        """select: the arm a constant i1 condition chooses, else the join of both arms
        (a vector condition is not tracked). LangRef 'select': the unchosen arm's value,
        poison or not, does not reach the result."""
        t, a, b, cond = x[4]
        w = int_width(t)
        C = self.val(cond, 1) if cond is not None else None
        if C is _BOTTOM:
            return _BOTTOM
        if isinstance(C, tuple) and D.is_const(C):
            V = self.val(a if C[2] else b, w)
            return V
        A, B = self.val(a, w), self.val(b, w)
        if A is _BOTTOM or B is _BOTTOM:
            return _BOTTOM
        return D.join_any(A, B)

    def _eval_icmp(self, x):
        """icmp of two scalar integers: an i1 constant where the operands decide it
        (:func:`parity.proof.domain.icmp`), else unknown."""
        pred, w, a, b = x[4]
        A, B = self.val(a, w), self.val(b, w)
        if A is _BOTTOM or B is _BOTTOM:
            return _BOTTOM
        if not isinstance(A, tuple) or not isinstance(B, tuple):
            return D.top(1)
        return D.icmp(pred, A, B)

    def _eval_cast(self, x):
        """zext / sext / trunc of an integer value."""
        op, (w, a, W) = x[2], x[4]
        if w is None or W is None:
            return None
        A = self.val(a, w)
        if A is _BOTTOM or A is None:
            return A if A is _BOTTOM else D.top(W)
        return (D.zext if op == "zext" else D.sext if op == "sext" else D.trunc)(A, W)

    def _eval_phi(self, x):
        """phi: the join of the incoming values seen so far, widened after
        WIDEN_AFTER changes so loops reach a fixed point."""
        dst, (t, edges) = x[3], x[4]
        w = int_width(t)
        out = _BOTTOM
        for tok, _ in edges:
            v = self.val(tok, w)
            if v is _BOTTOM:
                continue
            out = v if out is _BOTTOM else D.join_any(out, v)
        if out is _BOTTOM or not isinstance(out, tuple):
            return out
        n = self.changes.get(dst, 0)
        old = self.env.get(dst, _BOTTOM)
        if old is not _BOTTOM and old is not None and old != D.join(old, out):
            self.changes[dst] = n + 1
            if n + 1 >= self.WIDEN_AFTER:
                out = D.widen(old, D.join(old, out))
        return out

    def _eval_extract(self, x):
        """extractelement: the vector's (element-joined) value."""
        t, v = x[4]
        return self.val(v, int_width(t))

    def _eval_vector(self, x):
        """insertelement / shufflevector: the join of both vector operands (one when
        the shuffle's second operand is poison)."""
        op, (t, a, b) = x[2], x[4]
        w = int_width(t)
        A, B = self.val(a, w), self.val(b, w)
        if A is _BOTTOM or B is _BOTTOM:
            return _BOTTOM
        if op == "shufflevector" and b == "poison":
            return A
        return D.join_any(A, B)

    _EVAL = {"getelementptr": _eval_gep, "load": _eval_mem, "store": _eval_mem, "select": _eval_select,
             "icmp": _eval_icmp,
             "zext": _eval_cast, "sext": _eval_cast, "trunc": _eval_cast, "phi": _eval_phi,
             "call": lambda self, x: self._call(x), "extractelement": _eval_extract,
             "insertelement": _eval_vector, "shufflevector": _eval_vector}

    def _call(self, x):
        ln, text, op, dst, (rt, callee, args) = x
        w = int_width(rt)
        if callee == "llvm.amdgcn.workitem.id.x":
            if self.tid is not None:
                lo, hi = self.tid
                return D.const(32, lo) if lo == hi else (32, 0, 0, lo, hi)
            n = self.mod.wgs
            return (32, 0, 0, 0, n - 1) if n else D.top(32)
        if callee.startswith("llvm.amdgcn.readfirstlane"):
            return self.val(args[0][1], w)
        if callee.startswith("llvm.amdgcn.make.buffer.rsrc"):
            P = self.val(args[0][1], None)
            if P is _BOTTOM:
                return _BOTTOM
            return D.Rsrc(P if isinstance(P, D.Ptr) else None)
        load = _BUF_LOAD.match(callee)
        if load or _BUF_STORE.match(callee):
            k = 0 if load else 1
            R = self.val(args[k][1], None)
            vo = self.val(args[k + 1][1], 32)
            so = self.val(args[k + 2][1], 32)
            if _BOTTOM in (R, vo, so):
                return _BOTTOM
            t = rt if load else args[0][0]
            if isinstance(R, D.Rsrc) and R.ptr is not None and vo is not None and so is not None:
                P = R.ptr
                off = D.add(P.off, D.add(D.zext(vo, 64), D.zext(so, 64)))
                P = D.Ptr(P.base, P.align, P.space, off)
            else:
                P = None
            self._access(x, "buffer load" if load else "buffer store", 8, P, type_size(t), None)
            return D.top(w) if (load and w) else (None if load else _BOTTOM)
        return D.top(w) if w else None

    def _untrusted(self, x, op, flags, A, B):
        """``op`` derived from the operands alone (issue 34 item 7): ``nuw`` and
        ``disjoint`` are not trusted. ``or disjoint`` is an add where the known
        bits prove the operands disjoint; a flag whose trusted result would differ
        from the derived one is recorded in ``self.unjustified`` (line -> message)."""
        res = _BINOPS[op](A, B, False, False)
        need = None
        if "disjoint" in flags and op == "or":
            if D.disjoint(A, B):
                return D.add(A, B)
            need = "disjoint"
        elif "nuw" in flags and op in ("add", "sub", "mul", "shl"):
            need = "nuw"
        if need is not None:
            trusted = _BINOPS[op](A, B, need == "nuw", need == "disjoint")
            if trusted != res:
                self.unjustified[x[0]] = (x[1], need, op, A, B)
            else:
                self.unjustified.pop(x[0], None)
        return res

    def _access(self, x, kind, space, P, nbytes, declared):
        ln, text = x[0], x[1]
        if isinstance(P, D.Ptr) and P.base is not None:
            proved = min(P.align, 1 << min(D.align_bits(P.off), 62))
            lo, hi = P.off[3], P.off[4]
            if hi > D.MASK[64] >> 1:
                lo = hi = None
            limit = self.mod.lds[P.base[1:]][0] if P.base.startswith("@") else None
            base = P.base
        else:
            proved, lo, hi, limit, base = 1, None, None, None, None
        self.accesses[ln] = Access(ln, text, kind, space, base, nbytes, declared, proved, lo, hi, limit)


def _interval(v) -> str:
    return f"[{v[3]}, {v[4]}]"


def _b(f):
    return lambda a, b, nuw, disj: f(a, b)


_BINOPS = {
    "add": lambda a, b, nuw, disj: D.add(a, b, nuw),
    "sub": lambda a, b, nuw, disj: D.sub(a, b, nuw),
    "mul": lambda a, b, nuw, disj: D.mul(a, b, nuw),
    "shl": lambda a, b, nuw, disj: D.shl(a, b, nuw),
    "lshr": _b(D.lshr), "ashr": _b(D.ashr), "and": _b(D.band), "xor": _b(D.bxor),
    "or": lambda a, b, nuw, disj: D.bor(a, b, disj),
    "udiv": _b(D.udiv), "urem": _b(D.urem),
    "sdiv": lambda a, b, nuw, disj: D.udiv(a, b) if D.nonneg(a) and D.nonneg(b) else D.top(a[0]),
    "srem": lambda a, b, nuw, disj: D.urem(a, b) if D.nonneg(a) and D.nonneg(b) else D.top(a[0]),
}


def eval_binop(op: str, a: tuple, b: tuple) -> tuple:
    """The abstract value (parity/proof/domain.py) of integer binary op ``op`` (a key of
    INT_BIN) on abstract operands ``a`` and ``b``, no flag trusted (nuw and disjoint are
    not assumed: a caller judging a flag compares the result against the flag's rule)."""
    return _BINOPS[op](a, b, False, False)


def analyse(text: str, arg_bits: dict, ptr_align: int) -> tuple[Module, list[Access], list[str]]:
    """Read ``text`` and run the interpreter; the accesses in text order and the
    flags the proof would have needed but did not trust (one message each)."""
    mod = read(text)
    it = Interp(mod, arg_bits, ptr_align)
    it.run()
    flags = [f"line {k}: `{t.strip()}`: {f} is not proved from the operands ({_interval(a)} {op} {_interval(b)}); "
             f"the proof does not use it" for k, (t, f, op, a, b) in sorted(it.unjustified.items())]
    return mod, [it.accesses[k] for k in sorted(it.accesses)], flags

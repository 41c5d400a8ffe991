"""IRBuilder: appends instructions to the current block of a function.
Twin: cpp_engine/src/ir/builder.{h,cpp}.

Each method formats its instruction at call time, taking the next name from the
function counter, so the order of builder calls decides the printed bytes.
Operand type mismatches raise ValueError (an engine bug, not a rejection).

While origin recording is on (ir/origin.py), each instruction and block keeps
the file and line of the builder call that made it (the first caller frame
outside this module); off (the default), nothing is recorded.
"""
from __future__ import annotations

from . import origin
from . import types as T
from .function import _GOOD_HINTS, Block, Function, Instr, Module, Phi
from .values import Value
from .intrinsics import intrinsic

INT_BINOPS = ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor")
FLOAT_BINOPS = ("fadd", "fsub", "fmul", "fdiv")
_BINOPS = frozenset(INT_BINOPS + FLOAT_BINOPS)
CASTS = ("trunc", "zext", "sext", "fptrunc", "fpext", "fptosi", "fptoui", "sitofp", "uitofp",
         "bitcast", "ptrtoint", "inttoptr", "addrspacecast")
ICMP_PREDS = ("eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle")
FCMP_PREDS = ("oeq", "one", "ogt", "oge", "olt", "ole", "ord", "uno", "ueq", "une", "ugt", "uge", "ult", "ule")


def _same(a: Value, b: Value, what: str) -> None:
    if a.type is not b.type:
        raise ValueError(f"{what}: operand types differ ({a.typed} vs {b.typed})")


class IRBuilder:
    """Builds one function of ``module``. Call :meth:`position` before emitting."""

    def __init__(self, module: Module, function: Function):
        self.module = module
        self.fn = function
        self.block: Block | None = None
        self._origins = origin.recording()

    # -- structure -----------------------------------------------------------------
    def position(self, block: Block) -> None:
        """Append subsequent instructions to ``block``."""
        self.block = block

    def new_block(self, hint: str) -> Block:
        """Create a block named ``hint`` + counter (does not move the insertion point)."""
        b = self.fn.block(hint)
        if self._origins:
            b.origin = origin.caller(__file__)
        return b

    def _append(self, ins: Instr) -> None:
        if self.block is None:
            raise ValueError("IRBuilder has no insertion block")
        if self.block.terminated:
            raise ValueError(f"block {self.block.name} is already terminated")
        if self._origins:
            ins.origin = origin.caller(__file__)
        self.block.instrs.append(ins)

    def _def(self, t: T.Type, hint: str, rhs: str) -> Value:
        fn = self.fn
        if hint in _GOOD_HINTS:  # Function.fresh's common case, inline (the hottest path of the engine)
            n = fn.counter
            fn.counter = n + 1
            ref = f"%{hint}{n}"
        else:
            ref = "%" + fn.fresh(hint)
        ins = Instr(f"{ref} = {rhs}")
        blk = self.block
        if blk is None or blk.terminated or self._origins:
            self._append(ins)  # its errors, or the origin recorded
        else:
            blk.instrs.append(ins)  # _append's common case, inline
        return Value(t, ref)

    # -- arithmetic ----------------------------------------------------------------
    def binop(self, op: str, a: Value, b: Value, hint: str, flags: tuple = ()) -> Value:
        """Integer or float binary operator ``op`` (``add``, ``fmul``, ...) with
        optional flags (``nuw``, ``nsw``, ``exact``, fast-math flags) in given order."""
        if op not in _BINOPS:
            raise ValueError(f"unknown binary operator {op}")
        if a.type is not b.type:
            _same(a, b, op)
        fl = "".join(f" {f}" for f in flags) if flags else ""
        return self._def(a.type, hint, f"{op}{fl} {a.type.text} {a.ref}, {b.ref}")

    def add(self, a, b, hint="add", flags=()):
        return self.binop("add", a, b, hint, flags)

    def sub(self, a, b, hint="sub", flags=()):
        return self.binop("sub", a, b, hint, flags)

    def mul(self, a, b, hint="mul", flags=()):
        return self.binop("mul", a, b, hint, flags)

    def fadd(self, a, b, hint="fadd"):
        return self.binop("fadd", a, b, hint)

    def fmul(self, a, b, hint="fmul"):
        return self.binop("fmul", a, b, hint)

    def fneg(self, a: Value, hint="fneg") -> Value:
        """Float negation ``fneg``."""
        return self._def(a.type, hint, f"fneg {a.typed}")

    def icmp(self, pred: str, a: Value, b: Value, hint="cmp") -> Value:
        """Integer compare; result i1 (or vector of i1)."""
        if pred not in ICMP_PREDS:
            raise ValueError(f"unknown icmp predicate {pred}")
        _same(a, b, "icmp")
        rt = T.vec(a.type.count, T.I1) if a.type.kind == "vector" else T.I1
        return self._def(rt, hint, f"icmp {pred} {a.typed}, {b.ref}")

    def fcmp(self, pred: str, a: Value, b: Value, hint="fcmp") -> Value:
        """Float compare; result i1 (or vector of i1)."""
        if pred not in FCMP_PREDS:
            raise ValueError(f"unknown fcmp predicate {pred}")
        _same(a, b, "fcmp")
        rt = T.vec(a.type.count, T.I1) if a.type.kind == "vector" else T.I1
        return self._def(rt, hint, f"fcmp {pred} {a.typed}, {b.ref}")

    def select(self, c: Value, a: Value, b: Value, hint="sel") -> Value:
        """``select c, a, b``."""
        _same(a, b, "select")
        return self._def(a.type, hint, f"select {c.typed}, {a.typed}, {b.typed}")

    def cast(self, op: str, v: Value, to: T.Type, hint="cast") -> Value:
        """Cast instruction ``op`` (``zext``, ``fptrunc``, ...) of ``v`` to ``to``."""
        if op not in CASTS:
            raise ValueError(f"unknown cast {op}")
        return self._def(to, hint, f"{op} {v.typed} to {to.text}")

    # -- memory --------------------------------------------------------------------
    def gep(self, elem: T.Type, base: Value, indices: list, hint="gep", inbounds=True) -> Value:
        """``getelementptr [inbounds] elem, base, indices...``; result has base's type."""
        ib = " inbounds" if inbounds else ""
        idx = "".join(f", {i.typed}" for i in indices)
        return self._def(base.type, hint, f"getelementptr{ib} {elem.text}, {base.typed}{idx}")

    def load(self, t: T.Type, p: Value, align: int, hint="ld") -> Value:
        """``load t, p, align N`` (align in bytes)."""
        if p.type.kind != "ptr":
            raise ValueError(f"load from non-pointer {p.typed}")
        return self._def(t, hint, f"load {t.text}, {p.typed}, align {align}")

    def store(self, v: Value, p: Value, align: int) -> None:
        """``store v, p, align N`` (align in bytes)."""
        if p.type.kind != "ptr":
            raise ValueError(f"store to non-pointer {p.typed}")
        self._append(Instr(f"store {v.typed}, {p.typed}, align {align}"))

    def fence(self, scope: str, ordering: str, mmra: str | None = None) -> None:
        """``fence syncscope("scope") ordering`` (scope ``workgroup``, ``agent``, ...);
        ``mmra``: a metadata id (``!1``) attached as ``, !mmra !1``."""
        tail = f", !mmra {mmra}" if mmra else ""
        self._append(Instr(f'fence syncscope("{scope}") {ordering}{tail}'))

    # -- vectors -------------------------------------------------------------------
    def extractelement(self, v: Value, idx: Value, hint="elt") -> Value:
        return self._def(v.type.elem, hint, f"extractelement {v.typed}, {idx.typed}")

    def insertelement(self, v: Value, e: Value, idx: Value, hint="ins") -> Value:
        if e.type is not v.type.elem:
            raise ValueError(f"insertelement: {e.typed} into {v.type.text}")
        return self._def(v.type, hint, f"insertelement {v.typed}, {e.typed}, {idx.typed}")

    def shufflevector(self, a: Value, b: Value, mask: list, hint="shuf") -> Value:
        """``shufflevector a, b, <n x i32> <mask>``; mask entries are lane indices."""
        _same(a, b, "shufflevector")
        mt = T.vec(len(mask), T.I32)
        m = ", ".join(f"i32 {int(i)}" for i in mask)
        rt = T.vec(len(mask), a.type.elem)
        return self._def(rt, hint, f"shufflevector {a.typed}, {b.typed}, {mt.text} <{m}>")

    # -- control flow --------------------------------------------------------------
    def phi(self, t: T.Type, hint="phi") -> Phi:
        """A phi of type ``t`` at the current position; add edges with add_incoming."""
        ins = Phi(Value(t, "%" + self.fn.fresh(hint)))
        self._append(ins)
        return ins

    def br(self, target: Block) -> None:
        self._append(Instr(f"br label %{target.name}"))
        self.block.terminated = True

    def cond_br(self, c: Value, t: Block, f: Block) -> None:
        self._append(Instr(f"br {c.typed}, label %{t.name}, label %{f.name}"))
        self.block.terminated = True

    def ret_void(self) -> None:
        self._append(Instr("ret void"))
        self.block.terminated = True

    # -- intrinsics ----------------------------------------------------------------
    def call(self, key: str, args: list, hint="call") -> Value | None:
        """Call intrinsic ``key`` of the module's flavor; returns its result, or
        None for a void intrinsic. Argument types are checked against the table."""
        it = intrinsic(key, self.module.flavor.canonical)
        if len(args) != len(it.params) or any(a.type is not p for a, p in zip(args, it.params)):
            got = ", ".join(a.type.text for a in args)
            want = ", ".join(p.text for p in it.params)
            raise ValueError(f"call {it.name}: arguments ({got}) do not match ({want})")
        self.module.used_intrinsics.add(key)
        a = ", ".join(x.typed for x in args)
        if it.ret is T.VOID:
            self._append(Instr(f"call void @{it.name}({a})"))
            return None
        return self._def(it.ret, hint, f"call {it.ret.text} @{it.name}({a})")

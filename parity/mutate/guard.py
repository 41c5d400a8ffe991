"""Guarded effects: a mutated value whose every effect lies behind a wave-uniform guard on the
work-item id, proved equal only for the work-items that pass the guard (docs/sim.md,
"Mutation lane", *proved* reasons; the rule of :func:`parity.mutate.proved.abstract_reason`
tried last).

The wavelet pipelines compute their loader waves' slots in the entry block for every wave,
``%ltid = sub i32 %tid, 128``, and use them only behind ``br i1 %is_loader`` (``%is_loader
= icmp uge i32 %wave, 4``, ``%wave`` the ``readfirstlane`` of ``%tid >> 5``). The proof's
interpreter is flow-insensitive: for the waves that fail the guard ``%ltid`` wraps, so the
loader's row ``%ltid / 32`` looks like 0 .. 2^27 - 1 and a swizzle mutant such as ``and
%swq, 3`` -> ``2`` (equal wherever ``%swq`` is 0, that is for ltid in 0 .. 127) is not
proved. This rule narrows the work-item id to the waves that pass the guard and re-runs the
interpreter:

1. the guard ``%g`` is an i1 defined in the entry block whose operands reach the work-item id
   only through ``llvm.amdgcn.readfirstlane`` (its other leaves: literals, kernel arguments,
   work-group ids), so it has one value per wave. The waves are full (the fixed flat
   work-group size a multiple of 32, wave32: AMDGPUUsage, "amdgpu-flat-work-group-size"),
   so the first active lane at the entry block is lane 0 and a wave's guard is its value at
   ``tid = 32 * wave``, which the interpreter evaluates with that constant seeded. A wave
   where ``%g`` is not the constant false passes;
2. every effect of the mutated value's forward slice (a store, a call, a load, an atomic, a
   division, a branch or a return using a value of the slice) lies in a block that only
   work-items whose ``%g`` is true enter: a block dominated by the true successor ``T`` of a
   ``br i1 %g, label %T, label %F`` (T != F) whose only predecessor is that branch's block.
   A work-item whose guard is false never executes an effect of the mutant, whatever its
   mutated value (poison included: a branch on it is an effect and is guarded);
3. the mutated instruction itself cannot trap (no call, load, atomic; a division only by a
   non-zero literal in both kernels);
4. with the work-item id narrowed to the hull of the passing waves, the caller's rules show
   the mutated instruction gives the honest value (the induction of parity/mutate/proved.py,
   over the passing work-items' executions).
"""
from __future__ import annotations

import re
from functools import lru_cache

# the emulator's wave size: gfx1250 runs wave32 only (docs/hardware_facts.md, WAVE32)
from parity.sim.memory import WAVE

_DEF = re.compile(r"^  %([\w.$-]+) = (?:(?:tail|notail|musttail) )?(\w+)")
_NAME = re.compile(r"%([\w.$-]+)")
#: every successor of a terminator: the engines' IR names a block only as ``label %X``
_LABEL = re.compile(r"\blabel %([\w.$-]+)")
_COND = re.compile(r"^  br i1 %([\w.$-]+), label %([\w.$-]+), label %([\w.$-]+)\b")
_CALLEE = re.compile(r"@([\w.$-]+)\(")
#: ops whose use of a slice value is an effect (may touch memory, trap, or has effects)
_EFFECT_OPS = {"call", "load", "atomicrmw", "cmpxchg", "udiv", "sdiv", "urem", "srem", "fence"}
#: calls whose result is the same for every lane of a wave (leaves of a uniform guard)
_UNIFORM_CALLS = ("llvm.amdgcn.workgroup.id.",)
_LANE0 = "llvm.amdgcn.readfirstlane"


class Body:
    """The kernel's body as this rule reads it: ``defs`` name -> (line, op, text); ``uses``
    name -> [(line, dst or '', op)]; ``block`` line -> label; ``succ`` label -> successors;
    ``branches`` [(block, cond name, T, F)]; ``entry`` the first block's label. ``ok`` is
    False when a terminator other than ``br`` / ``ret`` / ``unreachable`` appears."""

    def __init__(self, text: str):
        self.defs, self.uses, self.block, self.succ = {}, {}, {}, {}
        self.branches, self.entry, self.ok = [], None, True
        cur, inside = None, False
        for i, s in enumerate(text.split("\n"), 1):
            if s.startswith("define "):
                if self.entry is not None or inside:   # one kernel a module (the engines' form)
                    self.ok = False
                inside = True
                continue
            if not inside:
                continue
            if s == "}":
                inside = False
                continue
            head = s.split(";")[0].rstrip()
            if head.endswith(":") and not s.startswith(" "):
                cur = head[:-1]
                self.entry = self.entry or cur
                self.succ.setdefault(cur, [])
                continue
            if not s.startswith("  ") or not s.strip():
                continue
            self.block[i] = cur
            m = _DEF.match(s)
            dst, op, rest = (m.group(1), m.group(2), s.split(" = ", 1)[1]) if m else ("", s.split()[0], s.strip())
            if dst:
                self.defs[dst] = (i, op, s)
            for n in set(_NAME.findall(rest)):
                self.uses.setdefault(n, []).append((i, dst, op))
            if op == "br":
                # every `label %X` on the line is an edge, whatever follows it (a comment,
                # metadata) and whatever the condition (a constant one keeps both edges)
                self.succ[cur] = _LABEL.findall(s.split(";")[0])
                c = _COND.match(s)
                if c:
                    self.branches.append((cur, c.group(1), c.group(2), c.group(3)))
            elif op in ("switch", "indirectbr", "callbr", "invoke", "resume") or "label %" in s:
                self.ok = False   # another terminator, or a block named outside a `br`

    def reach(self, avoid: str | None = None) -> set:
        """Blocks reachable from the entry without entering ``avoid``."""
        seen, todo = set(), [self.entry]
        while todo:
            b = todo.pop()
            if b != avoid and b not in seen:
                seen.add(b)
                todo += self.succ.get(b, [])
        return seen


@lru_cache(maxsize=8)
def body_of(text: str) -> Body:
    """:class:`Body` of ``text``, kept for the next mutant of the same kernel (read-only)."""
    return Body(text)


def guarded_blocks(body: Body, g: str) -> set:
    """Blocks only work-items whose ``%g`` is true enter (rule 2 of the module docstring)."""
    out: set = set()
    everywhere = body.reach()
    for blk, c, t, f in body.branches:
        if c != g or t == f or [b for b, s in body.succ.items() if t in s] != [blk]:
            continue
        out |= everywhere - body.reach(avoid=t)
    return out


def effect_blocks(body: Body, name: str) -> set | None:
    """The blocks of every effect of ``%name``'s forward slice; None when the slice is too
    large to follow (over 20,000 uses)."""
    slice_, todo, blocks, n = {name}, [name], set(), 0
    while todo:
        for ln, dst, op in body.uses.get(todo.pop(), ()):
            n += 1
            if n > 20_000:
                return None
            if not dst or op in _EFFECT_OPS:
                blocks.add(body.block[ln])
            if dst and dst not in slice_:
                slice_.add(dst)
                todo.append(dst)
    return blocks


def wave_uniform(body: Body, g: str) -> bool:
    """``%g`` is defined in the entry block from literals, kernel arguments, work-group ids
    and ``readfirstlane`` results only, and reads the work-item id (through a
    ``readfirstlane``): one value per wave that depends on the wave (rule 1)."""
    seen, todo, reads_tid = set(), [g], False
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        d = body.defs.get(n)
        if d is None:
            continue   # a kernel argument
        ln, op, text = d
        if body.block.get(ln) != body.entry or op in ("phi", "load", "atomicrmw", "cmpxchg"):
            return False
        if op == "call":
            callee = _CALLEE.search(text)
            callee = callee.group(1) if callee else ""
            if callee.startswith(_LANE0):
                reads_tid = reads_tid or _reads_tid(body, n)
                continue
            if callee.startswith(_UNIFORM_CALLS):
                continue
            return False
        todo += _NAME.findall(text.split(" = ", 1)[1])
    return reads_tid


def _reads_tid(body: Body, name: str) -> bool:
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        d = body.defs.get(n)
        if d is None or n in seen:
            continue
        seen.add(n)
        if "@llvm.amdgcn.workitem.id.x(" in d[2]:
            return True
        todo += _NAME.findall(d[2].split(" = ", 1)[1])
    return False


def passing_tids(run_at, g: str, wgs: int) -> tuple | None:
    """(first, last) work-item id of the waves whose ``%g`` is not the constant false, with
    ``run_at(tid)`` the interpreter run with the work-item id the constant ``tid``; None when
    every wave may pass (nothing narrowed) or none does."""
    passing = []
    for w in range(wgs // WAVE):
        it = run_at(w * WAVE)
        v = it.env.get(g) if it is not None else None
        if not (isinstance(v, tuple) and v[3] == v[4] == 0):
            passing.append(w)
    if not passing or len(passing) == wgs // WAVE:
        return None
    return passing[0] * WAVE, passing[-1] * WAVE + WAVE - 1


def guards(text: str, name: str) -> list:
    """The guards ``%g`` under which every effect of ``%name`` lies (rules 1 and 2), in the
    order of their branches; [] when the rule does not apply. Rule 3 (the mutated
    instruction cannot trap) is the caller's (parity/mutate/proved.py ``_guarded``)."""
    body = body_of(text)
    if not body.ok or body.entry is None:
        return []
    eff = effect_blocks(body, name)
    if not eff:
        return []
    out = []
    for g in dict.fromkeys(c for _, c, _, _ in body.branches):
        if eff <= guarded_blocks(body, g) and wave_uniform(body, g):
            out.append(g)
    return out

"""The loops of a kernel, for coverage per K-loop iteration class (docs/sim.md, "Coverage").

:func:`natural_loops` finds the loops from the control-flow graph, not from text
order: an edge ``b -> h`` is a back edge when ``h`` dominates ``b`` (every path
from the entry to ``b`` passes ``h``), and the loop's body is ``h`` and every
block that reaches ``b`` without passing ``h`` (the natural loop; Aho, Lam,
Sethi, Ullman, *Compilers*, 2nd ed., 9.6.6). The printers place blocks out of
loop order (the K walk's pre-header ``kwalk`` after ``kloop``, the epilogue
after the ``exit`` block it branches back to), so "a branch to an earlier
block" is not a back edge.

:func:`carried_only` names the values of a loop's body that are *dead in its
last trip*: their every use, followed through pure instructions, ends at a phi
of the loop's header (the next trip's input), never at a store, a branch, a call
with an effect or a use outside the loop. In the last trip the header is not
entered again, so such a value is computed and dropped: what a select among them
chose in the last trip cannot reach memory (the look-ahead loads of the
pipelined K loop for tiles t+2 and t+3, the wrap selects that step to the next
tile pair's tap).
"""
from __future__ import annotations

#: instructions without an effect beyond their result (a value through them stays a value)
PURE_OPS = frozenset((
    "add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor",
    "fadd", "fsub", "fmul", "fdiv", "fneg", "icmp", "fcmp", "select", "zext", "sext", "trunc",
    "fptrunc", "fpext", "bitcast", "uitofp", "sitofp", "fptoui", "fptosi", "extractelement",
    "insertelement", "shufflevector", "getelementptr", "freeze"))
#: calls without an effect: a raw buffer load out of range reads 0 (AMDGPUUsage, buffer
#: instructions' range checking; docs/hardware_facts.md), so it cannot fault either
PURE_CALLS = ("llvm.amdgcn.raw.ptr.buffer.load",)


def _succ(b) -> tuple:
    t = b.ins[-1] if b.ins else None
    return tuple(t.extra.get("targets", ())) if t is not None and t.op == "br" else ()


def dominator_sets(preds: list) -> list:
    """``dom[i]``: the set of block indices dominating block ``i`` of a CFG given by its
    predecessor lists (block 0 the entry; iterative data flow, kernels have tens of
    blocks). Shared with parity/perf/loop.py's loop finder."""
    n = len(preds)
    dom = [set(range(n)) for _ in range(n)]
    if n:
        dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for i in range(1, n):
            ps = [dom[p] for p in preds[i]]
            new = (set.intersection(*ps) if ps else set()) | {i}
            if new != dom[i]:
                dom[i], changed = new, True
    return dom


def _dominators(blocks, index: dict) -> tuple:
    """``(dom, preds)``: dominator sets (:func:`dominator_sets`) and predecessor lists of the blocks."""
    n = len(blocks)
    preds = [[] for _ in range(n)]
    for i, b in enumerate(blocks):
        for t in _succ(b):
            if t in index:
                preds[index[t]].append(i)
    return dominator_sets(preds), preds


def natural_loops(blocks) -> dict:
    """``{("in", i): loop}`` for every block of a loop's body (the innermost loop that
    holds it: the one with the smallest body), ``{("head", h): loop}``, ``{("exit", j):
    (loops...)}`` for every block a body block branches to outside the body; loops
    numbered in the order of their headers."""
    index = {b.name: i for i, b in enumerate(blocks)}
    dom, preds = _dominators(blocks, index)
    bodies = {}
    for bi, b in enumerate(blocks):
        for t in _succ(b):
            h = index.get(t)
            if h is None or h not in dom[bi]:
                continue
            body, stack = {h, bi}, ([bi] if bi != h else [])
            while stack:
                for p in preds[stack.pop()]:
                    if p not in body:
                        body.add(p)
                        stack.append(p)
            bodies.setdefault(h, set()).update(body)
    out, exits = {}, {}
    for lp, h in enumerate(sorted(bodies)):
        out[("head", h)] = lp
        for j in bodies[h]:
            for u in _succ(blocks[j]):
                k = index.get(u)
                if k is not None and k not in bodies[h]:
                    exits.setdefault(k, set()).add(lp)
    for lp, h in sorted(enumerate(sorted(bodies)), key=lambda x: -len(bodies[x[1]])):
        for j in bodies[h]:
            out[("in", j)] = lp  # the smaller (inner) bodies are written last
    for k, lps in exits.items():
        out[("exit", k)] = tuple(sorted(lps))
    return out


def is_back_edge(loops: dict, block: int, targets) -> bool:
    """Whether a branch of block ``block`` to ``targets`` (block indices) goes back to the
    header of the loop that holds ``block`` (:func:`natural_loops`)."""
    lp = loops.get(("in", block))
    return lp is not None and any(loops.get(("head", t)) == lp for t in targets)


def carried_only(blocks, loops: dict) -> set:
    """The SSA names (without ``%``) defined in a loop's body whose value is dead in the
    loop's last trip (module docstring): every use, followed through :data:`PURE_OPS`
    and :data:`PURE_CALLS` inside the body, is a phi of that loop's header."""
    users = {}
    where = {}
    for bi, b in enumerate(blocks):
        for ins in b.ins:
            if ins.dst:
                where[ins.dst] = (bi, ins)
            for o in ins.ops:
                if getattr(o, "kind", None) == "reg":
                    users.setdefault(o.name, []).append((bi, ins))
    heads = {lp: h for (what, h), lp in loops.items() if what == "head"}
    memo = {}

    def dead(name: str, lp: int, seen: set) -> bool:
        if name in memo:
            return memo[name]
        if name in seen:
            return True  # a cycle inside the body adds no other use
        seen.add(name)
        ok = True
        for bi, u in users.get(name, ()):
            if u.op == "phi" and bi == heads[lp]:
                continue
            inside = loops.get(("in", bi)) == lp
            pure = u.op in PURE_OPS or (u.op == "call" and str(u.extra.get("callee", "")).startswith(PURE_CALLS))
            if not (inside and pure and u.dst and dead(u.dst, lp, seen)):
                ok = False
                break
        memo[name] = ok
        return ok

    out = set()
    for name, (bi, ins) in where.items():
        lp = loops.get(("in", bi))
        if lp is not None and ins.op != "phi" and dead(name, lp, set()):
            out.add(name)
    return out

"""The K main loop of a compiled kernel, found in LLVM's AMDGPU assembly.

A kernel's text (between its ``<kernel>:`` label and ``.Lfunc_end``) is cut
into basic blocks: a block starts at a ``.LBB<f>_<n>:`` label or at a
``; %bb.<n>:`` comment (a fall-through block that no branch names, which
verbose assembly prints as a comment). Each block keeps its instruction lines
(comments, directives and labels dropped), its comment lines, and where a
``; wave barrier`` comment stands among them (``marks``: a workgroup barrier of
a one-wave workgroup, which LLVM lowers to that comment and no instruction).

How a loop is identified, in this order:

1. LLVM's own loop information. With verbose assembly (the target machine's
   ``set_asm_verbosity(True)``, as parity/verify/compile_worker.py compiles),
   the AsmPrinter prints MachineLoopInfo beside every block label: a loop
   header carries ``=>This Loop Header: Depth=D`` or ``=>This Inner Loop
   Header: Depth=D``; every other block of the loop carries ``in Loop:
   Header=BB<f>_<n> Depth=D``, and a block of a nested loop also names each
   enclosing loop as ``Parent Loop BB<f>_<n> Depth=D``. A loop is its header
   and every block that names the header.
2. Without those comments (terse assembly): the natural loops of the CFG
   (successors: branch targets, plus the next block unless the block ends in
   ``s_branch`` / ``s_setpc`` / ``s_endpgm``). A branch to a block that
   dominates it is a backedge; its loop is the header and every block that
   reaches the branch without passing the header. A backward jump in the
   layout alone is not a loop: LLVM lays out forward control flow (the
   epilogue's alignment branch) with backward jumps too.

Either way a loop must hold a backedge: a branch inside the loop to its
header's label, or a loop block laid out just before the header that falls
through into it (LLVM places a rotated loop's latch there); a loop found
from the comments without one is reported as a problem, not dropped.

The *main loop* is the loop whose blocks hold the most WMMA instructions
(``v_wmma*`` / ``v_swmmac*``); among equals (no loop holds a WMMA in the
Stage-2 reduce kernel), the one whose global/buffer loads move the most
bytes per lane, then one whose header is named in PREFERRED_LOOPS (the
uniform-tap loop beside conv_implicit_gemm's K walk), then the deepest (an outer loop holds its inner loop's
blocks, and the inner one is the hot one), then the longest. Its body is the instruction lines of its blocks in layout
order: a static count over every block of the loop, so both sides of a
branch inside the loop count once each. A latch that ends in a conditional
branch to the header followed by an unconditional ``s_branch`` out of the
loop loses that last ``s_branch`` (it runs once, when the loop exits).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from parity.sim.loops import dominator_sets

from .mix import width

_LABEL = re.compile(r"^(\.LBB\d+_\d+):")
_BB_COMMENT = re.compile(r"^\s*;\s*%bb\.\d+:")
_HEADER = re.compile(r"=>\s*This (?:Inner )?Loop Header: Depth=(\d+)")
_IN_LOOP = re.compile(r"in Loop: Header=(BB\d+_\d+) Depth=(\d+)")
_PARENT = re.compile(r"Parent Loop (BB\d+_\d+) Depth=(\d+)")
_BRANCH = re.compile(r"^s_(?:c?branch\w*)\s+(\.LBB\d+_\d+)")
#: the comment LLVM prints for a workgroup barrier of a one-wave workgroup (no instruction)
WAVE_BARRIER = "wave barrier"


class LoopError(ValueError):
    """The assembly has no such kernel, or the kernel no loop."""


@dataclass
class Block:
    """One basic block: ``label`` (``.LBB0_2``, or ``%bb.N`` for a fall-through block)."""
    label: str
    instructions: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    marks: list[int] = field(default_factory=list)   # a "; wave barrier" before instructions[i]

    def branch_targets(self) -> list[str]:
        out = []
        for s in self.instructions:
            m = _BRANCH.match(s)
            if m:
                out.append(m.group(1))
        return out


@dataclass
class Loop:
    """A loop: its header label, depth (1 outermost) and blocks (indices into the kernel's blocks)."""
    header: str
    depth: int
    blocks: list[int]
    source: str                 # "llvm-loop-info" | "backedge"
    has_backedge: bool = True


@dataclass
class MainLoop:
    """The main loop of a kernel: the loop, its body and the instructions outside it."""
    loop: Loop
    body: list[str]             # instruction lines of the loop, layout order
    before: list[str]           # kernel instructions laid out before the loop's first block
    after: list[str]            # kernel instructions laid out after the loop's last block
    loops: int                  # loops found in the kernel
    problems: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)   # kernel instructions in no loop at all
    marks: list[int] = field(default_factory=list)     # body indices a "; wave barrier" stands before


def _strip(line: str) -> str:
    return line.split(";", 1)[0].split("//", 1)[0].strip()


def kernel_blocks(asm: str, kernel: str) -> list[Block]:
    """The basic blocks of ``kernel`` in layout order; LoopError when the kernel is not in ``asm``."""
    blocks: list[Block] = []
    inside = False
    cur: Block | None = None
    for raw in asm.splitlines():
        s = _strip(raw)
        if not inside:
            if s == f"{kernel}:":
                inside = True
                cur = Block("entry")
                blocks.append(cur)
            continue
        if s.startswith(".Lfunc_end") or s.startswith(".size") or s.startswith(".section"):
            break
        m = _LABEL.match(s)
        if m:
            cur = Block(m.group(1))
            blocks.append(cur)
            if ";" in raw:
                cur.comments.append(raw.split(";", 1)[1].strip())
            continue
        if _BB_COMMENT.match(raw):
            cur = Block(raw.split(";", 1)[1].strip().rstrip(":"))
            blocks.append(cur)
            continue
        if not s:
            if raw.strip().startswith(";") and cur is not None:
                cur.comments.append(raw.strip()[1:].strip())
                if cur.comments[-1] == WAVE_BARRIER:
                    cur.marks.append(len(cur.instructions))
            continue
        if s.startswith(".") or s.endswith(":"):
            continue
        cur.instructions.append(s)
    if not inside:
        raise LoopError(f"kernel {kernel!r} is not in the assembly")
    return [b for b in blocks if b.instructions or b.label != "entry" or b is blocks[0]]


def _short(label: str) -> str:
    return label[2:] if label.startswith(".L") else label   # .LBB0_2 -> BB0_2


def _ends_in_jump(b: Block) -> bool:
    return bool(b.instructions) and b.instructions[-1].startswith(("s_branch ", "s_setpc", "s_endpgm"))


def find_loops(blocks: list[Block]) -> list[Loop]:
    """Every loop of the kernel (see the module docstring for the two methods)."""
    headers: dict[str, int] = {}
    members: dict[str, list[int]] = {}
    for i, b in enumerate(blocks):
        text = " ".join(b.comments)
        m = _HEADER.search(text)
        if m and b.label.startswith(".LBB"):
            headers[_short(b.label)] = int(m.group(1))
            members.setdefault(_short(b.label), []).append(i)
        for rx in (_IN_LOOP, _PARENT):
            for mm in rx.finditer(text):
                members.setdefault(mm.group(1), [])
                if i not in members[mm.group(1)]:
                    members[mm.group(1)].append(i)
    loops: list[Loop] = []
    if headers:
        for h, depth in headers.items():
            idx = sorted(members.get(h, []))
            head = next(i for i in idx if _short(blocks[i].label) == h)
            back = any(f".L{h}" in blocks[i].branch_targets() for i in idx) or (
                head - 1 in idx and not _ends_in_jump(blocks[head - 1]))   # falls through into the header
            loops.append(Loop(f".L{h}", depth, idx, "llvm-loop-info", back))
        return loops
    # Without the comments: natural loops of the CFG. A backedge is a branch to a
    # block that dominates its source (a backward jump in the layout alone is not
    # one: LLVM also lays out forward control flow with backward jumps).
    succ = _successors(blocks)
    dom = _dominators(succ)
    for j, targets in enumerate(succ):
        for i in targets:
            if i in dom[j]:
                loops.append(Loop(blocks[i].label, 1, _natural_loop(succ, i, j), "backedge", True))
    return loops


def _successors(blocks: list[Block]) -> list[list[int]]:
    """Successor block indices: branch targets, plus the next block unless the block
    ends in an unconditional jump or the end of the program."""
    labels = {b.label: i for i, b in enumerate(blocks)}
    out = []
    for j, b in enumerate(blocks):
        s = [labels[t] for t in b.branch_targets() if t in labels]
        if j + 1 < len(blocks) and not _ends_in_jump(b):
            s.append(j + 1)
        out.append(sorted(set(s)))
    return out


def _dominators(succ: list[list[int]]) -> list[set[int]]:
    """Dominator sets from block 0 of the CFG given by successor lists."""
    preds: list[list[int]] = [[] for _ in range(len(succ))]
    for j, ss in enumerate(succ):
        for i in ss:
            preds[i].append(j)
    return dominator_sets(preds)


def _natural_loop(succ: list[list[int]], head: int, tail: int) -> list[int]:
    """The blocks of the natural loop of backedge tail -> head: head, and every block
    that reaches tail without passing through head."""
    preds: dict[int, list[int]] = {}
    for j, ss in enumerate(succ):
        for i in ss:
            preds.setdefault(i, []).append(j)
    body, work = {head, tail}, [tail]
    while work:
        x = work.pop()
        if x == head:
            continue
        for p in preds.get(x, []):
            if p not in body:
                body.add(p)
                work.append(p)
    return sorted(body)


def _count(lines: list[str], pred) -> int:
    return sum(1 for s in lines if pred(s.split(None, 1)[0]))


def is_wmma(mnemonic: str) -> bool:
    return mnemonic.startswith(("v_wmma", "v_swmmac"))


def _is_global_load(mnemonic: str) -> bool:
    return mnemonic.startswith(("buffer_load", "global_load", "flat_load"))


#: IR block names (LLVM's verbose assembly prints them beside the block label) of a
#: loop that is the main loop among loops of equal WMMA and load counts: the uniform-tap
#: K loop of conv_implicit_gemm (docs/conv_implicit_gemm.md, "Uniform-tap loop"), the one
#: a layer whose cpg is a multiple of 2*tile_k runs (every ResNet-50 layer but the stem);
#: the K walk beside it is the fallback for other channel counts (bench/mainloop.py
#: measures it too).
PREFERRED_LOOPS = ("%tap_loop",)


def _preferred(blocks: list[Block], lp: Loop) -> bool:
    return _header_named(blocks, lp, PREFERRED_LOOPS)


def _header_named(blocks: list[Block], lp: Loop, names: tuple) -> bool:
    """Whether LLVM's comment on ``lp``'s header names an IR block starting with one of
    ``names`` (``%tap_loop`` matches ``%tap_loop244``)."""
    head = next((b for b in blocks if b.label == lp.header), None)
    return head is not None and any(c.startswith(names) for c in head.comments)


def main_loop(asm: str, kernel: str, named: str | None = None) -> MainLoop:
    """The main loop of ``kernel`` in ``asm`` (module docstring); LoopError when it has no
    loop. ``named`` (an IR block name such as ``%taptile_loop``): the loop whose header
    LLVM annotates with that name instead (LoopError when none is)."""
    blocks = kernel_blocks(asm, kernel)
    loops = find_loops(blocks)
    if named is not None:
        loops = [lp for lp in loops if _header_named(blocks, lp, (named,))]
    if not loops:
        raise LoopError(f"kernel {kernel!r} has no loop" + (f" named {named}" if named else ""))

    def body(lp: Loop) -> list[str]:
        out = [s for i in lp.blocks for s in blocks[i].instructions]
        # a latch that ends "s_cbranch_* <header>; s_branch <exit>": the s_branch runs once, on exit
        if len(out) >= 2 and out[-1].startswith("s_branch ") and out[-2].startswith("s_cbranch") \
                and out[-2].split()[-1] == lp.header and out[-1].split()[-1] != lp.header:
            out.pop()
        return out

    def key(lp: Loop):
        b = body(lp)
        loads = sum(width(s.split(None, 1)[0]) for s in b if _is_global_load(s.split(None, 1)[0]))
        return (_count(b, is_wmma), loads, _preferred(blocks, lp), lp.depth, len(b))
    best = max(loops, key=key)
    first, last = min(best.blocks), max(best.blocks)
    problems = []
    if not best.has_backedge:
        problems.append(f"loop {best.header}: no branch back to the header inside the loop")
    inside = set(best.blocks)
    if set(range(first, last + 1)) - inside:
        problems.append(f"loop {best.header}: blocks of other code are laid out between its blocks")
    before = [s for i in range(first) for s in blocks[i].instructions]
    after = [s for i in range(last + 1, len(blocks)) for s in blocks[i].instructions]
    in_any = {i for lp in loops for i in lp.blocks}
    outside = [s for i, b in enumerate(blocks) if i not in in_any for s in b.instructions]
    marks, n = [], 0
    for i in best.blocks:
        marks += [n + j for j in blocks[i].marks]
        n += len(blocks[i].instructions)
    return MainLoop(best, body(best), before, after, len(loops), problems, outside, marks)

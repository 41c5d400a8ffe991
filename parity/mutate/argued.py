"""The arguments of docs/sim.md ("Mutation lane"): survivors shown equivalent by a reasoning a
reader can check, each confirmed by a differential run (``parity mutate --differential N``:
honest and mutant D bit for bit over N random admitted problems).

:data:`ARGUED` is (name, predicate(job)); ``job`` is a parity/mutate/run.py ``Job`` (the
config's family, spec, honest text and the mutant). A survivor one of them matches is
counted equivalent with the argument as its reason. What is proved from the IR alone
(dead values, the proof's abstract values) is in parity/mutate/proved.py.
"""
from __future__ import annotations

import math
import re

from parity.mutate import operators as OPS
from parity.mutate import proved as PROVED
from parity.sim import cover

def _hint_of(line: str) -> str:
    m = re.match(r"^  %([A-Za-z_][\w.]*?)\d+ = ", line)
    return m.group(1) if m else ""


def _line(text: str, n: int) -> str:
    lines = text.split("\n")
    return lines[n - 1] if 0 < n <= len(lines) else ""


def _changed_line(job) -> str:
    """The mutated instruction (after an inserted ``%mut_*`` line, the one it feeds)."""
    ln = _line(job.mutant.text, job.mutant.line)
    return _line(job.mutant.text, job.mutant.line + 1) if ln.startswith("  %mut_") else ln


def _surplus_tail(job) -> bool:
    """Reduce tail loop: the back-edge bound (``again``: i + 1 < vector) loosened (or, at
    vector 1, changed at all: the loop runs once either way): the extra iteration's
    element is clamped (``jc = select inside, j, last``) to a neighbour's or the last
    element, whose value it recomputes identically and re-stores unchanged; at vector
    1 the step ``inext = i + 1`` changed likewise ends the one-trip loop. Only the tail
    loop's back edge (``again = icmp ult i64 %inext, vector``): a degree-0 kernel's slab
    loop ``again = icmp slt i32 %snext, %ks_count`` one long reads a slab past the
    workspace (killed: ``OutOfBounds`` on ws_ptr)."""
    if job.family != "conv_fwd_split_k_reduce" or "= select i1 %inside" not in job.original:
        return False
    ln, k = _changed_line(job), job.mutant.kind
    loose = k in ("loop_bound", "cmp_boundary", "const_inc") or (k == "const_dec" and job.spec["vector"] == 1)
    return (_hint_of(ln) == "again" and loose and _tail_edge(job)) or (
        _hint_of(ln) == "inext" and job.spec["vector"] == 1 and k == "const_inc")


def _wave_path_boundary(job) -> bool:
    """Reduce wave paths at their boundary: ``live`` (wfirst < mk) or ``full``
    (wend <= mk) strict/non-strict: a wave starting at mk takes the tail path, whose
    every element is clamped to the last one (recomputed identically, re-stored
    unchanged); a wave ending at mk takes the tail path instead of the vector path,
    which sums the same slabs in the same order (so does a wave end ``wend`` one
    long: a wave that fits exactly takes the tail path)."""
    ln = _line(job.mutant.text, job.mutant.line)
    return job.family == "conv_fwd_split_k_reduce" and (
        (job.mutant.kind == "cmp_boundary" and _hint_of(ln) in ("live", "full"))
        or (job.mutant.kind == "const_inc" and _hint_of(ln) == "wend"))


def _alignment_holds(job) -> bool:
    """Reduce access through ``gep T, %ws_ptr|%d_ptr, i64 %off`` with ``off = elem +
    s*mk`` (slab s, ``elem = thread * v``): its byte offset ``size(T) * (v*thread +
    s*M*K)`` is a multiple of ``size(T) * gcd(v, s)`` for every M, K (``gcd(v, 0) = v``),
    so a doubled ``align`` at most that (and 16, the buffer bases' alignment, an ABI
    assumption) still holds: an even slab and slab 0 of a vector of two or more."""
    if job.family != "conv_fwd_split_k_reduce" or job.mutant.kind != "align_double":
        return False
    ln = _line(job.mutant.text, job.mutant.line)
    m = re.search(r"(?:load|store) (?:<(\d+) x )?(float|bfloat|half)>?.* (%[\w.]+), align (\d+)$", ln)
    if not m:
        return False
    defs = {d.group(1): d.group(2) for d in re.finditer(r"^  (%[\w.]+) = (.*)$", job.original, re.M)}
    gep = re.match(r"getelementptr inbounds (float|bfloat|half), ptr addrspace\(1\) %(ws_ptr|d_ptr), i64 (%[\w.]+)$",
                   defs.get(m.group(3), ""))
    if not gep:
        return False
    var, s = gep.group(3), 0
    while not re.match(r"^%elem\d+$", var):
        step = re.match(r"^add nuw nsw i64 (%[\w.]+), %mk\d+$", defs.get(var, ""))
        if not step:
            return False
        var, s = step.group(1), s + 1
    mv = re.search(r"mul nuw nsw i64 %thread\d+, (\d+)$", defs.get(var, ""))
    if not mv:
        return False
    v = int(mv.group(1))
    size = {"float": 4, "bfloat": 2, "half": 2}[m.group(2)]
    return int(m.group(4)) <= min(16, size * math.gcd(v, s))


def _extra_k_tile(job) -> bool:
    """Conv K walk: the back-edge bound ``t_next < ntiles`` loosened: the extra K tile
    lies past the slice end, where every A and B load is masked (``k < k_end`` fails:
    the out-of-range buffer offset reads zero), so WMMA adds exact zeros to the
    accumulator. Not the back edges of the uniform-tap and tap-tile loops (blocks
    ``tap_loop``, ``taptile_loop``): their loads have no K mask, so an extra trip reads
    the next slice's or filter row's data (killed by ``cover_taps``, ``cover_tt_*``)."""
    ln = _changed_line(job)
    return job.family == "conv_implicit_gemm" and job.mutant.kind in ("loop_bound", "cmp_boundary") and \
        _hint_of(ln) == "again" and re.search(r"%ntiles\d+$|%mut_bound\d+$", ln) is not None and \
        not PROVED.block_labels(job.mutant.text).get(job.mutant.line, "").startswith(("tap_loop", "taptile_loop"))


def _one_wave_sync(job) -> bool:
    """A workgroup of one wave (``amdgpu-flat-work-group-size`` 32): a deleted
    ``s.barrier`` or workgroup-scope fence orders nothing (a wave's own accesses are
    in program order)."""
    gone = job.mutant.what
    return job.mutant.kind == "drop_sync" and '"amdgpu-flat-work-group-size"="32,32"' in job.original and (
        "@llvm.amdgcn.s.barrier()" in gone or 'syncscope("workgroup")' in gone)


def _conv_boundary(job, *hints: str) -> bool:
    """A conv ``cmp_boundary`` mutant of a compare whose SSA hint is one of ``hints``."""
    return job.family == "conv_implicit_gemm" and job.mutant.kind == "cmp_boundary" and \
        _hint_of(_line(job.mutant.text, job.mutant.line)) in hints


def _d_row_past_end(job) -> bool:
    """Plain conv (split 1): the epilogue's row mask ``m < M`` made ``m <= M`` stores
    row M of D, which starts at byte ``M * K * size`` = D's ``num_records``: the raw
    buffer store is dropped (an access at or past num_records, parity/sim/rsrc.py)."""
    return _conv_boundary(job, "e_mok", "cs_mok") and job.spec["split_k"] == 1


def _unstored_accumulator(job) -> bool:
    """Conv A row mask ``a_mok`` / B column mask ``b_nok`` one long: the extra A row M
    (B column kpg) feeds only accumulator row M (column kpg), which no epilogue mask
    lets through to a store (rows and columns of a GEMM are independent)."""
    return _conv_boundary(job, "a_mok", "b_nok")


def _zero_k_limit(job) -> bool:
    """Conv ``a_kin`` / ``b_kin`` (``koff < k_end``) one long (``ule``, or the literal koff
    made koff - 1: ``koff - 1 < k_end`` is ``koff <= k_end``): at ``koff == k_end`` the
    select it feeds picks ``k_end - koff`` = 0 instead of its other arm, 0."""
    ln = _changed_line(job)
    dec = job.family == "conv_implicit_gemm" and job.mutant.kind == "const_dec" and \
        _hint_of(ln) in ("a_kin", "b_kin") and re.search(r"= icmp ult i32 \d+, %[\w.]+$", ln) is not None
    return dec or _conv_boundary(job, "a_kin", "b_kin")


def _swapped_k_limit(job) -> bool:
    """Conv ``klim = sub k_end, koff`` (``a_klim`` / ``b_klim``) with its operands swapped,
    whose one use is ``select (koff ult k_end), klim, 0``: chosen only when koff < k_end,
    where ``koff - k_end`` wraps to at least 2^32 - 2^31 (k_end < 2^31: conv_launch's
    byte limit; the padded-pixel end ``k_padded`` = Y*X*slot < 2^31 too, as w_bytes =
    2*K*Y*X*cpg < 2^31 with cpg = vector_a > slot/2), above every K tile start, so the slot's K mask passes everywhere: its
    loads past k_end read data (or the buffer's out-of-range zero) whose partner on the
    other side is masked to zero by its own K limit (*masked partner*)."""
    if job.family != "conv_implicit_gemm" or job.mutant.kind != "swap_operands":
        return False
    ln = _changed_line(job)
    m = re.search(r"^  %([\w.]+) = sub i32 (%?[\w.]+), %(Kgemm|k_end\d+|k_padded\d+)$", ln)
    if not m or _hint_of(ln) not in ("a_klim", "b_klim"):
        return False
    return _guarded_limit(job.original.split("\n"), m.group(1), m.group(2), "%" + m.group(3))


def _uses(lines: list, name: str) -> list:
    """The lines of ``lines`` that use ``%name`` (its definition left out)."""
    ref = re.compile(rf"%{re.escape(name)}\b")
    return [x for x in lines if ref.search(x) and not x.startswith(f"  %{name} = ")]


def _guarded_limit(lines: list, name: str, koff: str, kend: str) -> bool:
    """``%name``'s one use is ``select (koff ult kend), %name, 0`` (a K limit chosen only
    while the slot's K offset is inside the slice)."""
    uses = _uses(lines, name)
    sel = len(uses) == 1 and re.search(rf"= select i1 %([\w.]+), i32 %{re.escape(name)}, i32 0$", uses[0])
    kin = sel and _def_of(lines, sel.group(1))
    return bool(kin) and kin.endswith(f"= icmp ult i32 {koff}, {kend}")


def _masked_partner(job) -> bool:
    """Conv ``a_rok`` or ``b_rok`` (a K vector inside the slice) one long, the other
    unchanged: the A (B) vector at ``k_end`` is loaded, but its B (A) partner at the
    same k is still masked to zero, so WMMA adds products ``x * 0`` = +-0 (inputs are
    finite: the numerics contract), which leave the fp32 accumulator's value."""
    return _conv_boundary(job, "a_rok", "b_rok")


def _nonempty_reduction(job) -> bool:
    """Conv ``k_live`` (plain ``Kgemm > 0``, two-stage ``k_end > k_begin``) or
    ``any_tile`` (``ntiles > 0``) made non-strict: every admitted problem has Kgemm =
    Y*X*cpg >= 1, and a plain or two-stage plan gives every slice data (ntiles >= 1;
    the declared reason of ``any_tile`` / ``k_span_nz``), so the operands are never
    equal (cluster binaries, with empty trailing slices, excluded). Also a plain kernel's
    ``k_span_nz = select k_live, k_span, 0`` with the 0 arm made +-1: k_live (Kgemm > 0,
    or k_padded = Y*X*slot > 0 for a padded-pixel width) always holds, so that arm is
    never chosen."""
    ln = _line(job.mutant.text, job.mutant.line)
    if job.family == "conv_implicit_gemm" and job.spec["split_k"] == 1 and \
            job.mutant.kind in ("const_inc", "const_dec") and _hint_of(ln) == "k_span_nz":
        return re.search(r"= select i1 %k_live\d+, i32 %k_span\d+, i32 -?1$", ln) is not None
    return _conv_boundary(job, "k_live", "any_tile") and not job.spec["split_k_cluster"] and \
        re.search(r"icmp uge i32 %[\w.]+, (?:0|%k_begin\d+)$", ln) is not None


def _pixel_carry(job) -> bool:
    """Padded-pixel widths (vector_a 3, 5, 6, 7): the K walk's channel carry ``k_cyc``
    (``k_cn >= slot``) strict or not: a K step is a whole number of pixel slots, so
    ``k_cn`` stays below the slot and the carry never fires either way (the declared
    reason of ``k_cw`` / ``k_xs`` at these configs)."""
    return _conv_boundary(job, "k_cyc") and job.spec["vector_a"] in cover.C.PIXEL_VECTORS


def _relu_at_zero(job) -> bool:
    """The relu epilogue's ``neg`` (``x < 0``, then ``select neg, 0, x``) made ``x <= 0``:
    at x = +-0 it selects +0 instead of x, the same value (numerics compares values)."""
    ln = _line(job.mutant.text, job.mutant.line)
    return job.family == "conv_implicit_gemm" and job.mutant.kind == "cmp_boundary" and \
        _hint_of(ln) == "neg" and " fcmp ole " in ln


def _row_sentinel(job) -> bool:
    """Conv ``a_hb = select a_mok, hbase, 2^30``: a masked-off A row's input-row base is
    a sentinel far past every admitted H (the launch plan's 32-bit byte offsets bound
    H * W * C far below 2^30), so ``hi = sentinel + y*dil >= H`` masks its loads;
    2^30 +- 1 does too."""
    ln = _line(job.mutant.text, job.mutant.line)
    return job.family == "conv_implicit_gemm" and job.mutant.kind in ("const_inc", "const_dec") and \
        _hint_of(ln) == "a_hb" and re.search(r", i32 107374182[345]$", ln) is not None


def _general_path(job) -> bool:
    """A fast-path test made to fail always: the uniform-tap test ``tp_uni = (cpg urem
    2*tile_k) == 0`` (or its negation ``tp_gen = ... != 0``, the two-deep kernels' general
    path test), the tap-tile test ``tt_uni`` / ``tt_gen`` (``cpg urem tile_k``), the 16-byte D test ``d_wide = ((K | kpg) & 7) == 0`` or the 16-byte slab
    test ``ws_wide = ((K | kpg) & 3) == 0`` (two-stage Stage 1) with its 0 made a
    value the left side never takes (the proof's abstract values, with cpg a
    multiple of lcm(vector_a, vector_b)): the kernel then always takes the general path
    (the K walk; the narrow D or slab stores), which computes the same D for every problem
    (the fast path exists for speed: the same WMMA sequence on the same K order; the same
    bf16 or fp32 values stored element by element)."""
    ln = _changed_line(job)
    m = re.search(r"= icmp (eq|ne) i32 %[\w.]+, -?\d+$", ln)
    if job.family != "conv_implicit_gemm" or job.mutant.kind not in ("const_inc", "const_dec") or not m:
        return False
    fast = {"tp_uni": "eq", "d_wide": "eq", "ws_wide": "eq", "tp_gen": "ne", "tt_uni": "eq",
            "tt_gen": "ne"}.get(_hint_of(ln))   # fast-path sense
    return fast == m.group(1) and PROVED.compare_constant(job) is (fast == "ne")


def _span_rounding(job) -> bool:
    """Conv ``ntiles = (span + tile_k - 1) / tile_k`` with the span one short (plain
    ``k_span = Kgemm - 0`` made ``Kgemm - 1``, or ``k_span_up``'s ``tile_k - 1`` made
    ``tile_k - 2``): the quotient changes only when span = 1 mod tile_k; the span is a
    multiple of lcm(vector_a, vector_b) >= 2 (Kgemm = Y*X*cpg, conv_launch's admission),
    or for a padded-pixel width of the slot (k_padded = Y*X*slot, slot 4 or 8), so it
    never is."""
    ln, k = _changed_line(job), job.mutant.kind
    va, vb, tk = job.spec.get("vector_a") or 1, job.spec.get("vector_b") or 1, job.spec.get("tile_k") or 0
    step = cover.C.pixel_slot(va) if va in cover.C.PIXEL_VECTORS else va * vb // math.gcd(va, vb)
    if job.family != "conv_implicit_gemm" or step < 2:
        return False
    return (k == "const_inc" and _hint_of(ln) == "k_span" and
            re.search(r"= sub i32 %(?:Kgemm|k_padded\d+), 1$", ln) is not None) \
        or (k == "const_dec" and _hint_of(ln) == "k_span_up" and ln.endswith(f", {tk - 2}"))


def _span_one_long(job) -> bool:
    """Plain conv tile count made larger: ``k_span = Kgemm - 0`` (padded pixel: ``k_padded
    - 0``) made ``+ 1``, ``k_span_up``'s ``tile_k - 1`` made ``tile_k``, or ``ntiles``'s
    divisor ``tile_k`` made ``tile_k - 1``. Each count is at least the honest
    ceil(span / tile_k), and the first tiles are the honest ones; every extra tile starts
    at or past the span, where every A and B load is masked (the *extra K tile*
    argument): WMMA adds products 0 * 0 = +0 to an accumulator that started at +0 and so
    is never -0 (round to nearest even: x + -x and +0 + -0 are +0), which leaves its bits.
    Not in a kernel with the uniform-tap loop: the extra tile can make the tile count even
    and send the slice there, whose loads have no K mask (killed by ``cover_taps_x3`` on
    plain 64x64x32)."""
    ln, k = _line(job.mutant.text, job.mutant.line), job.mutant.kind
    tk = job.spec.get("tile_k") or 0
    if job.family != "conv_implicit_gemm" or job.spec["split_k"] != 1 or \
            re.search(r"\ntap_loop\d+:\n", job.original) is not None:
        return False
    h = _hint_of(ln)
    return (k == "const_dec" and h == "k_span" and re.search(r"= sub i32 %(?:Kgemm|k_padded\d+), -1$", ln) is not None) \
        or (k == "const_inc" and h == "k_span_up" and re.search(rf"= add i32 %k_span_nz\d+, {tk}$", ln) is not None) \
        or (k == "const_dec" and h == "ntiles" and re.search(rf"= udiv i32 %k_span_up\d+, {tk - 1}$", ln) is not None)


def _one_trip_swap(job) -> bool:
    """Reduce at vector 1: ``again = inext < 1`` swapped to ``1 < inext``: inext is 1
    (one element per thread), both false: the tail loop runs once either way. Not the
    degree-0 slab loop's ``again = snext < ks_count`` (swapped, it stops after one slab)."""
    return job.family == "conv_fwd_split_k_reduce" and job.spec["vector"] == 1 and \
        job.mutant.kind == "swap_operands" and _tail_edge(job)


def _tail_edge(job) -> bool:
    """Whether ``job``'s honest line is the reduce tail loop's back edge ``again = icmp
    ult i64 %inext, vector`` (a degree-0 kernel also has the slab loop's ``again``)."""
    return re.match(r"^  %again\d+ = icmp \w+ i64 %inext\d+, ", _line(job.original, job.mutant.line)) is not None


def _finite_nnan(job) -> bool:
    """``promise_lie`` ``nnan`` on a conv kernel's fadd of accumulators or slabs (the cluster
    fold): the conv numerics contract gives finite inputs (parity/sim/reference.py) and
    the sums stay far below fp32's largest value, so no operand or result is NaN: the flag
    is a true promise (the emulator checks it on every case: it held). Not the Stage-2
    reduce: its workspace is data the kernel does not make, and its plans put NaN and
    infinities in slab 0 (IEEE propagation), where ``nnan`` is a lie (the argument
    cross-check found three such kills)."""
    return job.family == "conv_implicit_gemm" and job.mutant.kind == "promise_lie" and \
        job.mutant.what.startswith("fmf_nnan:")


def _cast_domain_nnan(job) -> bool:
    """``promise_lie`` ``nnan`` on ir_core casts' one fadd, ``d = fadd (fpext (fptrunc x to
    half)), (fpext (fptrunc x to bfloat))``, whose result reaches ``fptosi`` (of its absolute
    value): LangRef makes fptosi of a NaN, an infinity or a value outside i32 poison, so the
    kernel is defined only for inputs where d is finite (|x| < 65520: half's rounding
    stays finite), and there neither rounded operand nor their sum is NaN: the promise
    holds on every input the honest kernel is defined for. (Its plan's case is such an
    input; a NaN input would make the honest kernel's own result poison.)"""
    if job.family != "ir_core" or job.spec.get("kernel") != "casts" or job.mutant.kind != "promise_lie":
        return False
    return job.mutant.what == "fmf_nnan: `nnan` on fadd" and \
        re.search(r"= fadd nnan float %\w+, %\w+$", _changed_line(job)) is not None and \
        re.search(r"= fptosi float %\w+ to i32$", job.original, re.M) is not None


def _one_wave_index(job) -> bool:
    """A workgroup of one wave (``amdgpu-flat-work-group-size`` 32, checked against the
    plan's block by the promise oracle): ``wave = readfirstlane(tid >> 5)`` is 0, so
    ``wave_m = udiv %wave, C`` / ``wave_n = urem %wave, C`` with C changed to another
    divisor C' >= 1 is still 0 (a divisor 0 is poison: the emulator kills it)."""
    ln = _changed_line(job)
    d = re.search(r"= (?:udiv|urem) i32 %wave\d+, (-?\d+)$", ln)
    one = job.family == "conv_implicit_gemm" and job.mutant.kind in ("const_inc", "const_dec") and \
        '"amdgpu-flat-work-group-size"="32,32"' in job.original
    return one and ((d is not None and int(d.group(1)) >= 1) or _lane0_shift(job, ln))


def _lane0_shift(job, ln: str) -> bool:
    """``wave_v = lshr tid, 5`` with the shift changed to s >= 0, read only through
    ``readfirstlane`` in the entry block: at kernel entry every lane is active, so the
    first active lane is lane 0, whose workitem id in a one-wave workgroup is 0
    (AMDGPUUsage: work-item ids of a wave are consecutive), and 0 >> s = 0."""
    m = re.search(r"^  %(wave_v\d+) = lshr i32 %tid\d+, (\d+)$", ln)
    if not m:
        return False
    uses = _uses(job.original.split("\n"), m.group(1))
    return len(uses) == 1 and "@llvm.amdgcn.readfirstlane.i32(i32 %" + m.group(1) + ")" in uses[0]


def _channel_quotient(job) -> bool:
    """``udiv i32 C, %cpg`` (``k_sa``: the K step's whole pixels, C = tile_k or the slot)
    made ``udiv i32 C + 1, %cpg``: the quotient changes only when cpg divides C + 1;
    every admitted cpg is a multiple of vector_a and of vector_b (conv_launch refuses
    the rest: python_engine/kernels/conv_launch.py), so when lcm(vector_a, vector_b)
    does not divide C + 1 no admitted cpg does."""
    ln = _changed_line(job)
    d = re.search(r"= udiv i32 (\d+), %cpg$", ln)
    if job.family != "conv_implicit_gemm" or job.mutant.kind != "const_inc" or d is None:
        return False
    va, vb = job.spec["vector_a"], job.spec["vector_b"]
    return int(d.group(1)) % (va * vb // math.gcd(va, vb)) != 0


def _block_at(text: str, i: int) -> str:
    """The hint of the block holding line index ``i``."""
    lines = text.split("\n")
    return next((mm.group(1) for ln in reversed(lines[:i + 1]) if (mm := OPS._LABEL.match(ln))), "")


def _pixel_carry_value(job) -> bool:
    """Padded-pixel widths: the K walk's channel offset ``k_c`` starts at ``a_ck`` = 0 and
    steps by ``k_sb = tile_k urem slot`` = 0 (K offsets are whole slots), so the honest
    ``k_cn = k_c + k_sb`` is 0 and the carry ``k_cyc = k_cn >= slot`` never fires
    (*pixel carry*). Then ``k_cw = select k_cyc, slot, 0`` with the true arm changed
    selects 0 as before; ``k_c = sub k_cn, k_cw`` swapped is 0 - 0; and the prologue's
    false arm 0 made -1 starts ``k_c`` at 1, which the loop carries unchanged (``k_cn``
    = 1 < slot, the carry still never fires). ``k_c`` feeds only ``k_cn``, so the
    addresses are the honest ones. (The loop's false arm made -1 adds 1 a trip and is
    not covered: after ``slot`` trips the carry fires.)"""
    if job.family != "conv_implicit_gemm" or job.spec["vector_a"] not in cover.C.PIXEL_VECTORS:
        return False
    k, ln = job.mutant.kind, _changed_line(job)
    h = _hint_of(ln)
    if h == "k_c" and k == "swap_operands":
        return re.search(r"= sub i32 %k_cw\d+, %k_cn\d+$", ln) is not None
    if h != "k_cw" or k not in ("const_inc", "const_dec"):
        return False
    arms = re.search(r"= select i1 %k_cyc\d+, i32 (-?\d+), i32 (-?\d+)$", ln)
    slot = cover.C.pixel_slot(job.spec["vector_a"])
    if arms is None:
        return False
    if int(arms.group(2)) == 0:
        return True  # the true arm changed: never selected
    return arms.group(1) == str(slot) and arms.group(2) == "-1" and \
        _block_at(job.mutant.text, job.mutant.line - 1) == "prologue"


def _pad_lane_partner(job) -> bool:
    """A WMMA fragment ``shufflevector`` of two 8-element LDS chunks (K chunks starting
    at multiples of 8) with one mask index changed (``const_inc`` / ``const_dec``) at
    fragment position p: on padded-pixel widths with vector_a = vector_b = v, position p
    holds K offset p mod slot within a pixel slot, a padding channel when p mod slot >=
    v, which the padded-pixel loads zero in A and in B (``zext`` of the last channel
    pair, ``insertelement`` into zero). The partner fragment's element p is then +0, so
    WMMA adds x * 0 = +-0 whatever the mutant reads (inputs finite: *masked partner*).
    The new index must still name an element of the two 8-element operands (0..15): 15
    made 16 is not a mask LLVM parses (the cross-check found four such llvm kills)."""
    va, vb = job.spec.get("vector_a"), job.spec.get("vector_b")
    if job.family != "conv_implicit_gemm" or job.mutant.kind not in ("const_inc", "const_dec") or \
            va != vb or va not in cover.C.PIXEL_VECTORS:
        return False
    i = job.mutant.line - 1
    pat = r"^  %frag\d+ = shufflevector <8 x \w+> %f_lo\d+, <8 x \w+> %f_hi\d+, <16 x i32> <(.*)>$"
    a = re.match(pat, job.original.split("\n")[i])
    b = re.match(pat, job.mutant.text.split("\n")[i])
    if not a or not b:
        return False
    ia, ib = a.group(1).split(", "), b.group(1).split(", ")
    diff = [p for p, (x, y) in enumerate(zip(ia, ib)) if x != y]
    slot = cover.C.pixel_slot(va)
    return len(ia) == len(ib) == 16 and len(diff) == 1 and diff[0] % slot >= va and \
        re.fullmatch(r"i32 (\d+)", ib[diff[0]]) is not None and int(ib[diff[0]][4:]) < 16


def _channel_zero_carry(job) -> bool:
    """The K walk's first channel carry of a K state that starts at channel 0 (``a_ck =
    urem i32 0, %cpg``: the plain row-slot kernels' state 0, docs/conv_implicit_gemm.md)
    strict or not: ``k_cn = a_ck + k_sb`` is ``tile_k urem cpg`` < cpg, so ``k_cyc``
    (``k_cn >= cpg``) is false either way (the declared reason of that kwalk advance)."""
    if not _conv_boundary(job, "k_cyc"):
        return False
    lines = job.original.split("\n")
    cmp = re.search(r"= icmp \w+ i32 %(k_cn\d+), %cpg$", lines[job.mutant.line - 1])
    cn = cmp and next((ln for ln in lines if ln.startswith(f"  %{cmp.group(1)} = ")), "")
    ck = cn and re.search(r"= add i32 %(a_ck\d+), %k_sb\d+$", cn)
    return bool(ck) and f"  %{ck.group(1)} = urem i32 0, %cpg" in lines


def _channel_zero_x_carry(job) -> bool:
    """The first x carry of the K state that starts at tap 0, channel 0 (``a_xdk = (udiv 0,
    %cpg) urem X * dil_w`` = 0), strict or not: its channel carry never fires (*channel-0
    carry*), so ``k_xdn = 0 + k_axd = (k_sa urem X) * dil_w`` < X * dil_w = ``k_xlim``: the
    operands are never equal and ``k_cyx`` is false either way."""
    if not _conv_boundary(job, "k_cyx"):
        return False
    lines = job.original.split("\n")
    cmp = re.search(r"= icmp \w+ i32 %(k_xdn\d+), %k_xlim\d+$", lines[job.mutant.line - 1])
    xdn = cmp and re.search(r"= add i32 %(a_xdk\d+), %k_xs\d+$", _def_of(lines, cmp.group(1)))
    xdk = xdn and re.search(r"= mul i32 %(a_xk\d+), %dil_w$", _def_of(lines, xdn.group(1)))
    xk = xdk and re.search(r"= urem i32 %(a_qk\d+), %X$", _def_of(lines, xdk.group(1)))
    return bool(xk) and _def_of(lines, xk.group(1)).endswith("= udiv i32 0, %cpg")


def _first_step_channel_offset(job) -> bool:
    """The K walk's first step (block ``kwalk``) channel wrap ``k_cw = select %k_cyc, %cpg,
    0`` with the 0 made -1: that state's ``k_c`` is one high from then on (the K loop's own
    wraps subtract cpg or 0, so the offset neither grows nor vanishes), and ``k_c`` feeds
    only the carry tests ``k_c + k_sb >= cpg``, whose terms are multiples of v =
    lcm(vector_a, vector_b) >= 2 (K offsets of 8-element chunks, tile_k, cpg: conv_launch's
    admission), where x + 1 >= cpg exactly when x >= cpg: no carry changes. (The K loop's
    own wrap made -1 adds one a trip: killed by ``cover_kwalk_drift``.)"""
    ln = _changed_line(job)
    va, vb = job.spec.get("vector_a") or 1, job.spec.get("vector_b") or 1
    if job.family != "conv_implicit_gemm" or job.mutant.kind != "const_dec" or _hint_of(ln) != "k_cw" or \
            va in cover.C.PIXEL_VECTORS or va * vb // math.gcd(va, vb) < 2:
        return False
    return re.search(r"= select i1 %k_cyc\d+, i32 %cpg, i32 -1$", ln) is not None and \
        _block_at(job.original, job.mutant.line - 1).startswith("kwalk")


def _tap_branch_disjoint(job) -> bool:
    """``promise_lie`` ``disjoint`` on the uniform-tap branch's ``tp_r = or %tp_r,
    %tp_odd``: the left side ``cpg urem 2*tile_k | k_begin urem 2*tile_k`` is even (cpg
    a multiple of vector_a and vector_b, conv_launch's admission; k_begin a multiple of
    tile_k, its slicing rule) and ``tp_odd = ntiles & 1`` is 0 or 1, so no bit is set on
    both sides: the flag is a true promise."""
    va, vb = job.spec.get("vector_a"), job.spec.get("vector_b")
    return job.family == "conv_implicit_gemm" and job.mutant.kind == "promise_lie" and \
        job.mutant.what.startswith("disjoint_or:") and (va * vb // math.gcd(va, vb)) % 2 == 0 and \
        re.search(r"= or disjoint i32 %tp_r\d+, %tp_odd\d+$", _changed_line(job)) is not None


def _def_of(lines: list, name: str) -> str:
    """The line of ``lines`` that defines ``%name`` (empty when none does)."""
    return next((ln for ln in lines if ln.startswith(f"  %{name} = ")), "")


def _nuw_sub(job):
    """The operands of a conv ``promise_lie`` ``nuw`` on a ``sub`` (a match of
    ``%r = sub nuw i32 a, b``), else None."""
    if job.family != "conv_implicit_gemm" or job.mutant.kind != "promise_lie" or \
            not job.mutant.what.startswith("nuw_sub:"):
        return None
    return re.search(r"^  %([\w.]+) = sub nuw i32 (%?[\w.]+), (%?[\w.]+)$", _changed_line(job))


def _carry_wrap_sub(job) -> bool:
    """``promise_lie`` ``nuw`` on a K-walk wrap ``sub %x, %w`` with ``w = select (x uge L),
    L, 0`` (``k_c`` / ``k_xd``: the channel and x carries): L is subtracted only when x >= L,
    else 0, so the sub never wraps: the flag is a true promise."""
    m = _nuw_sub(job)
    lines = job.original.split("\n")
    w = m and re.search(r"= select i1 %([\w.]+), i32 (%[\w.]+), i32 0$", _def_of(lines, m.group(3)[1:]))
    c = w and re.search(r"= icmp uge i32 (%[\w.]+), (%[\w.]+)$", _def_of(lines, w.group(1)))
    return bool(c) and c.group(1) == m.group(2) and c.group(2) == w.group(2)


def _guarded_k_limit(job) -> bool:
    """``promise_lie`` ``nuw`` on a K limit ``klim = sub k_end, koff`` whose one use is
    ``select (koff ult k_end), klim, 0``: the sub wraps only where the select takes 0, and
    the poison of a select's unchosen arm does not reach its result (LangRef ``select``)."""
    m = _nuw_sub(job)
    if not m:
        return False
    return _guarded_limit(job.original.split("\n"), m.group(1), m.group(3), m.group(2))


def _k_limit_past_end(job) -> bool:
    """Conv ``klim = select (koff ult k_end), k_end - koff, 0`` (``a_klim`` / ``b_klim``)
    with the false arm 0 made +-1: taken only when the slot's K offset is at or past
    ``k_end``, where every element the slot then loads lies at a K index >= k_end, whose
    partner on the other side is masked to zero by its own K limit (*masked partner*)."""
    ln = _changed_line(job)
    return job.family == "conv_implicit_gemm" and job.mutant.kind in ("const_inc", "const_dec") and \
        _hint_of(ln) in ("a_klim", "b_klim") and \
        re.search(r"= select i1 %[ab]_kin\d+, i32 %[ab]_klim\d+, i32 -?1$", ln) is not None


def _k_limit_offset(job) -> bool:
    """A row-slot K limit ``klim = sub i32 k_end, C`` (``a_klim`` / ``b_klim``; C the slot's
    literal K offset, k_end ``%Kgemm`` or the slice's ``%k_end``) with C made C +- 1, on a
    power-of-two vector width v >= 2 that divides C. Its uses compare a K tile start k (a
    multiple of tile_k, so of v) with it: ``k ult klim``. k_end is a multiple of v (cpg and
    slice ends are: conv_launch's admission, the slicing rule), so C + 1 changes the compare
    only at k = k_end - C - 1, which is -1 mod v: never (*chunk granularity*); C - 1 admits
    the slot's chunk at k = k_end - C, whose K indices all lie at or past k_end, where the
    partner on the other side is zero by its own K limit (*masked partner*: x * 0 adds +-0
    for finite x)."""
    if job.family != "conv_implicit_gemm" or job.mutant.kind not in ("const_inc", "const_dec"):
        return False
    ln, honest = _changed_line(job), _line(job.original, job.mutant.line)
    hint = _hint_of(honest)
    if hint not in ("a_klim", "b_klim"):
        return False
    pat = r"= sub i32 %(Kgemm|k_end\d+), (-?\d+)$"
    m, h = re.search(pat, ln), re.search(pat, honest)
    v = job.spec.get("vector_a" if hint == "a_klim" else "vector_b") or 0
    tk = job.spec.get("tile_k") or 0
    return bool(m and h) and m.group(1) == h.group(1) and abs(int(m.group(2)) - int(h.group(2))) == 1 and \
        v >= 2 and v & (v - 1) == 0 and int(h.group(2)) % v == 0 and tk % v == 0


def _nonempty_slice(job) -> bool:
    """Two-stage conv: a launched slice is never empty. The plan launches ks_count = the
    slices with data (python_engine/kernels/conv_launch.py, slicing rule), so k_begin =
    slice*ks < Kgemm and k_end > k_begin: ``k_span_nz = select k_live, k_span, 0`` never
    takes its 0 arm (made +-1), and ``nuw`` on ``k_span = sub k_end, k_begin`` holds
    (cluster binaries, whose trailing slices are empty, excluded; plain: k_begin = 0, the
    proof's abstract values)."""
    if job.family != "conv_implicit_gemm" or job.spec["split_k_cluster"] or job.spec["split_k"] < 2:
        return False
    ln, k = _changed_line(job), job.mutant.kind
    if k in ("const_inc", "const_dec"):
        return _hint_of(ln) == "k_span_nz" and \
            re.search(r"= select i1 %k_live\d+, i32 %k_span\d+, i32 -?1$", ln) is not None
    return k == "promise_lie" and _hint_of(ln) == "k_span" and \
        re.search(r"= sub nuw i32 %k_end\d+, %k_begin\d+$", ln) is not None


def _tap_pair_start(job) -> bool:
    """The uniform-tap test's slice-start term ``tp_kr = k_begin urem 2*tile_k`` with the
    modulus made 2*tile_k +- 1, in a kernel that also tests ``tp_odd = ntiles & 1``
    (the prologue runs only for a slice with data: ``any_tile``). k_begin = slice*ks, ks a
    multiple of tile_k (the plan's slicing rule), so the true term is 0 or tile_k. Where it
    is tile_k and cpg is a multiple of 2*tile_k (else ``tp_cr`` sends the slice to the K
    walk either way), Kgemm = Y*X*cpg is a multiple of 2*tile_k, so the slice's span (ks,
    or Kgemm - k_begin for the last) is an odd multiple of tile_k: ``tp_odd`` sends it to
    the K walk whatever the term. Where the true term is 0 and the mutant's is not, the
    slice takes the K walk instead of the tap loop: the *general path*, the same D."""
    ln, tk = _changed_line(job), job.spec.get("tile_k") or 0
    m = re.search(r"= urem i32 %k_begin\d+, (\d+)$", ln)
    return job.family == "conv_implicit_gemm" and job.mutant.kind in ("const_inc", "const_dec") and \
        _hint_of(ln) == "tp_kr" and m is not None and int(m.group(1)) in (2 * tk - 1, 2 * tk + 1) and \
        re.search(r"%tp_odd\d+ = and i32 %ntiles\d+, 1\n", job.original) is not None


def _tile_slice_start(job) -> bool:
    """The tap-tile test's slice term ``tt_kr = ks urem tile_k`` (split-K kernels with the
    tap-tile loop). ks is a multiple of tile_k (the plan's slicing rule, ks =
    ceil(ceil(Kgemm / S) / tile_k) * tile_k), so the true term is 0. A mutant modulus
    (tile_k +- 1), swapped operands (``tile_k urem ks``: tile_k, or 0 where ks = tile_k)
    or a ``disjoint`` on ``tt_r = or tt_cr, tt_kr`` either keeps 0 (the same branch) or
    sends the launch to the K walk (the *general path*, the same D); and the test
    ``tt_gen = tt_r != 0`` / ``tt_uni = tt_r == 0`` with its 0 made +-1 is never met by
    ``tt_r``, a multiple of 8 (cpg a multiple of vector_a = 8, ks of tile_k): the K walk
    always. The term stays for launches outside the plan, where it keeps the loop's
    whole-tile slices true."""
    if job.family != "conv_implicit_gemm" or job.spec["split_k"] < 2:
        return False
    ln, k, tk = _changed_line(job), job.mutant.kind, job.spec.get("tile_k") or 0
    if k in ("const_inc", "const_dec", "swap_operands") and _hint_of(ln) == "tt_kr":
        m = re.search(r"= urem i32 (%ks|\d+), (%ks|\d+)$", ln)
        return m is not None and (k == "swap_operands" or int(m.group(2)) in (tk - 1, tk + 1))
    if k == "promise_lie" and job.mutant.what.startswith("disjoint_or:"):
        return re.search(r"= or disjoint i32 %tt_cr\d+, %tt_kr\d+$", ln) is not None
    if k in ("const_inc", "const_dec") and _hint_of(ln) in ("tt_gen", "tt_uni"):
        return re.search(r"= icmp (eq|ne) i32 %tt_r\d+, -?1$", ln) is not None
    return False


def _tap_b_cap_nuw(job) -> bool:
    """``promise_lie`` ``nuw`` on the look-ahead B cap's ``tp_kblast = sub %tp_kendb,
    2*tiles*tile_k`` (block ``tap_pro`` or ``taptile_pro``): the uniform-tap loop is entered
    only with ntiles >= 2 (``k_end >= k_begin + 2*tile_k``), the tap-tile loop with ntiles >= 1,
    so ``2*k_end >= 2*tiles*tile_k`` and the sub never wraps: a true promise."""
    m = _nuw_sub(job)
    if m is None or not m.group(1).startswith("tp_kblast") or not m.group(2).startswith("%tp_kendb"):
        return False
    tk = job.spec.get("tile_k") or 0
    block = PROVED.block_labels(job.mutant.text).get(job.mutant.line, "")
    tiles = 2 if block.startswith("tap_pro") else 1 if block.startswith("taptile_pro") else 0
    return bool(tiles) and m.group(3) == str(2 * tiles * tk)


#: byte sizes of the scalar types an ir_core constant-offset access uses (:func:`_constant_offset_align`)
_SIZES = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "bfloat": 2, "float": 4, "double": 8}


def _constant_offset_align(job) -> bool:
    """ir_core: a doubled ``align`` on a load/store through ``gep inbounds T, %ARG, i64 C``
    (``%ARG`` a kernel parameter, ``C`` a literal) whose byte offset ``C * size(T)`` is a
    multiple of the new alignment, at most 16: the argument points at the start of its
    buffer (buffer bases at least 16-byte aligned, the ABI assumption the static proof
    states; hipMalloc gives 256), so the promise holds (``store i8 -128`` at ``%out + 0``
    made ``align 2``; ``store half`` at element 6 made ``align 4``)."""
    if job.family != "ir_core" or job.mutant.kind != "align_double":
        return False
    ln = _line(job.mutant.text, job.mutant.line)
    m = re.search(r"(?:load|store) \w+.* (%[\w.]+), align (\d+)$", ln)
    if not m:
        return False
    defs = {d.group(1): d.group(2) for d in re.finditer(r"^  (%[\w.]+) = (.*)$", job.original, re.M)}
    gep = re.match(r"getelementptr inbounds (\w+), ptr addrspace\(1\) %([A-Za-z_]+), i64 (\d+)$",
                   defs.get(m.group(1), ""))
    head = next((x for x in job.original.split("\n") if x.startswith("define ")), "")
    if not gep or gep.group(1) not in _SIZES or f" %{gep.group(2)}," not in head.replace(")", ","):
        return False
    a = int(m.group(2))
    return a <= 16 and (int(gep.group(3)) * _SIZES[gep.group(1)]) % a == 0


_PREDS = {"eq": lambda x, c: x == c, "ne": lambda x, c: x != c, "ult": lambda x, c: x < c,
          "ule": lambda x, c: x <= c, "ugt": lambda x, c: x > c, "uge": lambda x, c: x >= c}


def _storing_wave(job) -> bool:
    """ir_core workgroup_ids: the wave test (``wave = lshr tid, 5``, ``first = icmp eq wave,
    0``) changed so that other waves, or more of them, store. Every wave computes the same
    linear id from the workgroup ids alone and stores it at the same address, so any
    non-empty set of storing waves leaves the same bytes (identical re-stores: accepted by
    the race shadow by design). Checked: the mutant changes only those two lines, the test
    stays wave-uniform (``lshr 4`` splits a wave: a divergent branch, killed) and some wave
    of the ``amdgpu-flat-work-group-size`` block still stores (``eq`` made ``ne`` in a
    one-wave block stores nothing: killed)."""
    if job.family != "ir_core" or job.spec.get("kernel") != "workgroup_ids":
        return False
    old, new = job.original.split("\n"), job.mutant.text.split("\n")
    if len(old) != len(new):
        return False
    changed = {_hint_of(b) for a, b in zip(old, new) if a != b}
    sh = re.search(r"^  %wave\d+ = lshr i32 %tid\d+, (\d+)$", job.mutant.text, re.M)
    cmp = re.search(r"^  %first\d+ = icmp (\w+) i32 %wave\d+, (\d+)$", job.mutant.text, re.M)
    fwgs = re.search(r'"amdgpu-flat-work-group-size"="(\d+),\d+"', job.mutant.text)
    if not changed or not changed <= {"wave", "first"} or not (sh and cmp and fwgs) or cmp.group(1) not in _PREDS:
        return False
    shift, pred, c = int(sh.group(1)), _PREDS[cmp.group(1)], int(cmp.group(2))
    stores = [pred(t >> shift, c) for t in range(int(fwgs.group(1)))]
    uniform = all(len(set(stores[w:w + 32])) == 1 for w in range(0, len(stores), 32))   # lshr 4: divergent
    return uniform and any(stores)


#: arguments whose mutant creates poison that a select never chooses (equivalent under LangRef
#: 'select'): the emulator reports poison where it is made, so a kill by ``Poison:`` there is
#: consistent with them (parity/mutate/run.py's cross-check of kills against the arguments)
POISON_DISCARDED = frozenset({"guarded K limit"})

#: arguments about a promise that holds at run time but that the static proof (parity/proof)
#: cannot derive, with the text of the one proof failure each excuses: a kill by the ``proof``
#: oracle naming it ("declared align 8, proved align 4": the
#: proof's known bits do not see that ``elem + mk + mk`` is ``elem + 2 mk``) is the policy
#: "a promise only where an oracle checks it", consistent with the argument
PROOF_UNDERIVED = {"alignment holds": "proved align"}   # name -> the proof failure it excuses

#: survivors argued equivalent (docs/sim.md, "Mutation lane"): (name, predicate(job)); a
#: survivor one of them matches is counted equivalent with the argument as its reason
ARGUED = (("surplus tail iteration", _surplus_tail), ("wave path boundary", _wave_path_boundary),
          ("alignment holds", _alignment_holds), ("extra K tile", _extra_k_tile),
          ("one-wave workgroup", _one_wave_sync), ("D row past the end", _d_row_past_end),
          ("unstored accumulator", _unstored_accumulator), ("zero K limit", _zero_k_limit),
          ("masked partner", _masked_partner), ("non-empty reduction", _nonempty_reduction),
          ("pixel carry", _pixel_carry), ("relu at zero", _relu_at_zero), ("row sentinel", _row_sentinel),
          ("K span one long", _span_one_long), ("one-trip tail swap", _one_trip_swap),
          ("finite sums (nnan holds)", _finite_nnan),
          ("one-wave index", _one_wave_index), ("channel quotient", _channel_quotient),
          ("pixel carry value", _pixel_carry_value), ("padding-lane partner", _pad_lane_partner),
          ("channel-0 carry", _channel_zero_carry), ("tap branch disjoint", _tap_branch_disjoint),
          ("carry wrap sub", _carry_wrap_sub), ("guarded K limit", _guarded_k_limit),
          ("K limit past the end", _k_limit_past_end), ("K limit offset", _k_limit_offset),
          ("swapped K limit", _swapped_k_limit), ("K span rounding", _span_rounding),
          ("general path", _general_path), ("channel-0 x carry", _channel_zero_x_carry),
          ("first-step channel offset", _first_step_channel_offset), ("non-empty slice", _nonempty_slice),
          ("tap pair start", _tap_pair_start), ("constant-offset alignment", _constant_offset_align),
          ("any storing wave", _storing_wave), ("cast domain (nnan holds)", _cast_domain_nnan),
          ("tile slice start", _tile_slice_start), ("tap B cap nuw", _tap_b_cap_nuw))

"""Family ``conv_fwd_split_k_reduce``: Stage 2 of two-stage split-K.
Twin: cpp_engine/src/kernels/conv_fwd_split_k_reduce.{h,cpp}.

Folds the fp32 partial slabs ``ws[ks_count][M][K]`` (contiguous, fp32) written
by the forward kernel into ``D[M][K]`` (bf16 or fp16):
``D = cast(sum over s of ws[s])``. The sum runs in slab order starting from
slab 0 (``((ws[0] + ws[1]) + ws[2]) + ...``), so the result is bit-exact with a
sequential fp32 reference; the cast is ``fptrunc``, round-to-nearest-even.

Each thread owns ``vector`` consecutive elements of the flattened ``M*K``
output; the grid is ``ceil(M*K / (threads*vector))`` workgroups along x.
Every branch is wave-uniform: a wave whose elements all lie inside ``M*K``
takes the vector path; the last, partial wave walks its elements one at a
time with the index clamped to ``M*K - 1`` (lanes past the end store the last
element's own value again), which also covers ``M*K`` not a multiple of
``vector``. Slab loads use ``align 4``: slab ``s`` starts at
element ``s*M*K``, which is only a multiple of ``vector`` when ``M*K`` is.

Spec fields, in order: ``dtype`` (``bf16``/``fp16``), ``vector`` (1, 2, 4, 8
elements), ``threads`` (multiple of the wave size, <= 1024), ``degree`` (1..32
unrolls the slab loop for that many slabs and ignores ``ks_count``; 0 loops
over the ``ks_count`` argument at run time, which must be >= 1),
``acc_epilogue`` (``identity``, ``bias``, ``scale``, ``relu``, ``clamp``,
``bias_relu``, ``bias_clamp``; default ``identity``).

Accumulator epilogue (split-K of fused layers): applied once to the fp32 slab
sum, after the whole fold and before the cast, with the semantics of
``conv_implicit_gemm``'s epilogue (docs/conv_implicit_gemm.md, "Epilogues"):
``bias`` adds ``bias[c]`` with ``c = e mod K`` the output channel of flat
element ``e`` (the channel already includes the group base ``g*kpg``: D's row
is all K channels), read through a raw buffer resource of ``bias_bytes``
bytes, so a channel past ``bias_bytes`` reads 0; ``scale`` multiplies by
``scale``; ``relu`` is ``select(x olt 0, 0, x)`` (NaN passes); ``clamp`` is
``select(x olt lo, lo, x)`` then ``select(x1 ogt hi, hi, x1)``; ``bias_relu`` and
``bias_clamp`` are bias then relu / clamp (:mod:`.acc_epilogue`). The epilogue's
arguments follow :data:`ARGS` (:data:`EPILOGUE_ARGS`); ``identity`` builds the
kernel of the unfused family byte for byte (same name, same arguments).
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.builder import IRBuilder
from ..ir.values import const_int, i32, i64, zeroinit
from . import acc_epilogue
from .common import in_ptr, kernel_attrs, new_module, out_ptr, scalar
from ..spec.fields import Field

FAMILY = "conv_fwd_split_k_reduce"
FIELDS = (
    Field("dtype", "str", "bf16"),
    Field("vector", "int", 8),
    Field("threads", "int", 256),
    Field("degree", "int", 0),
    Field("acc_epilogue", "str", "identity"),
)
DTYPES = {"bf16": T.BFLOAT, "fp16": T.HALF}
VECTORS = (1, 2, 4, 8)
MAX_DEGREE = 32
ACC_EPILOGUES = acc_epilogue.ACC_EPILOGUES

# The kernel argument list, defined once: (name, kind). Sizes are in bytes;
# M and K are output pixels and output channels (elements).
ARGS = (
    ("ws_ptr", "in_ptr"),
    ("ws_bytes", "i64"),
    ("d_ptr", "out_ptr"),
    ("d_bytes", "i64"),
    ("M", "i32"),
    ("K", "i32"),
    ("ks_count", "i32"),
)
# The accumulator epilogue's arguments, appended to ARGS (bias: fp32[K] and its
# size in bytes; scale and clamp bounds: fp32 values), in step order
# (bias_clamp: bias_ptr, bias_bytes, clamp_lo, clamp_hi).
EPILOGUE_ARGS = {k: acc_epilogue.args(k) for k in ACC_EPILOGUES}


def args(acc_epilogue: str = "identity") -> tuple:
    """``(name, kind)`` of every kernel argument for ``acc_epilogue`` (one of
    :data:`ACC_EPILOGUES`; KeyError otherwise): :data:`ARGS` then the
    epilogue's own (:data:`EPILOGUE_ARGS`)."""
    return ARGS + EPILOGUE_ARGS[acc_epilogue]


def params(acc_epilogue: str = "identity") -> list:
    """The kernel parameters built from :func:`args`."""
    make = {
        "in_ptr": in_ptr,
        "out_ptr": out_ptr,
        "i64": lambda n: scalar(n, T.I64),
        "i32": lambda n: scalar(n, T.I32),
        "f32": lambda n: scalar(n, T.FLOAT),
    }
    return [make[kind](name) for name, kind in args(acc_epilogue)]


def _show(v) -> str:
    return "null" if v is None else f"'{v}'"


def validate(spec: dict, arch, flavor) -> str | None:
    """First failing rule's reason, or None. Order: dtype, vector, threads,
    degree, acc_epilogue, arch."""
    if spec["dtype"] not in DTYPES:
        return f"dtype must be bf16 or fp16, got {_show(spec['dtype'])}"
    if spec["vector"] not in VECTORS:
        return f"vector must be 1, 2, 4 or 8 elements, got {spec['vector']}"
    t, w = spec["threads"], arch.wave_size
    if t < w or t > 1024 or t % w:
        return f"threads must be a multiple of the wave size {w} in {w}..1024, got {t}"
    d = spec["degree"]
    if d < 0 or d > MAX_DEGREE:
        return f"degree must be 0 (runtime ks_count) or 1..{MAX_DEGREE}, got {d}"
    if spec["acc_epilogue"] not in ACC_EPILOGUES:
        return f"acc_epilogue must be {acc_epilogue.NAMES_TEXT}, got {_show(spec['acc_epilogue'])}"
    if arch.name != "gfx1250":
        return f"arch {arch.name} has no conv_fwd_split_k_reduce kernel (requires gfx1250)"
    return None


def kernel_name(spec: dict, arch, flavor) -> str:
    """``conv_fwd_split_k_reduce_<dtype>_v<vector>_t<threads>_d<degree>``, then
    ``_<acc_epilogue>`` unless it is ``identity``."""
    acc = spec["acc_epilogue"]
    return (f"conv_fwd_split_k_reduce_{spec['dtype']}_v{spec['vector']}"
            f"_t{spec['threads']}_d{spec['degree']}" + ("" if acc == "identity" else f"_{acc}"))


def build(spec: dict, arch, flavor):
    """Build the module of a valid spec; returns (kernel name, Module)."""
    name = kernel_name(spec, arch, flavor)
    m, fn = new_module(flavor, arch, name, params(spec["acc_epilogue"]), kernel_attrs(spec["threads"]))
    b = IRBuilder(m, fn)
    _body(b, spec, arch.wave_size)
    return name, m


def _slab_sum(b: IRBuilder, spec: dict, idx, mk, width: int):
    """Sum over slabs of the ``width`` fp32 elements at flat index ``idx`` (i64).
    Returns the fp32 value (scalar or vector); the builder is left in the block
    where the sum is available."""
    vt = T.FLOAT if width == 1 else T.vec(width, T.FLOAT)
    ws = b.fn.param("ws_ptr")
    p0 = b.gep(T.FLOAT, ws, [idx], "pws")
    acc = b.load(vt, p0, 4, "slab")
    d = spec["degree"]
    if d:
        off = idx
        for _ in range(1, d):
            off = b.add(off, mk, "off", ("nuw", "nsw"))
            p = b.gep(T.FLOAT, ws, [off], "pws")
            x = b.load(vt, p, 4, "slab")
            acc = b.fadd(acc, x, "acc")
        return acc
    ks = b.fn.param("ks_count")
    off1 = b.add(idx, mk, "off", ("nuw", "nsw"))
    more = b.icmp("sgt", ks, i32(1), "more")
    pre = b.block
    loop = b.new_block("slabs")
    done = b.new_block("summed")
    b.cond_br(more, loop, done)
    b.position(loop)
    s = b.phi(T.I32, "s")
    off = b.phi(T.I64, "off")
    a = b.phi(vt, "acc")
    p = b.gep(T.FLOAT, ws, [off.result], "pws")
    x = b.load(vt, p, 4, "slab")
    a2 = b.fadd(a.result, x, "acc")
    s2 = b.add(s.result, i32(1), "snext", ("nuw", "nsw"))
    off2 = b.add(off.result, mk, "offnext", ("nuw", "nsw"))
    again = b.icmp("slt", s2, ks, "again")
    b.cond_br(again, loop, done)
    s.add_incoming(i32(1), pre)
    s.add_incoming(s2, loop)
    off.add_incoming(off1, pre)
    off.add_incoming(off2, loop)
    a.add_incoming(acc, pre)
    a.add_incoming(a2, loop)
    b.position(done)
    total = b.phi(vt, "sum")
    total.add_incoming(acc, pre)
    total.add_incoming(a2, loop)
    return total.result


def _bias_rsrc(b: IRBuilder):
    """Buffer resource over ``bias_bytes`` bytes at ``bias_ptr`` (word 3: the arch
    table's ``rsrc_flags``, raw offset range check), as conv_implicit_gemm builds it."""
    n = b.fn.param("bias_bytes")
    if b.module.flavor.rsrc_num_records_bits == 32:
        n = b.cast("trunc", n, T.I32, "rsrc_bias_nrec")
    return b.call("make_buffer_rsrc", [b.fn.param("bias_ptr"), const_int(T.I16, 0), n,
                                       i32(b.module.arch.rsrc_flags)], "rsrc_bias")


def _bias(b: IRBuilder, ctx: dict, idx, width: int):
    """fp32 bias of the ``width`` elements from flat index ``idx`` (i64): channel
    ``c = idx mod K``, then ``c + 1`` wrapped to 0 at K for each next element (so a
    lane's elements may cross a row, any K >= 1); one range-checked f32 buffer
    load per element (offset ``4*c``; past ``bias_bytes`` reads 0)."""
    c = b.cast("trunc", b.binop("urem", idx, ctx["k64"], "ch_w"), T.I32, "ch")
    vt = T.vec(width, T.FLOAT)
    out = zeroinit(vt) if width > 1 else None
    for i in range(width):
        if i:
            c1 = b.add(c, i32(1), "ch_next", ("nuw", "nsw"))
            wrap = b.icmp("eq", c1, b.fn.param("K"), "ch_wrap")
            c = b.select(wrap, i32(0), c1, "ch")
        off = b.mul(c, i32(4), "bias_byte")
        x = b.call("raw_buffer_load_f32", [ctx["rbias"], off, i32(0), i32(0)], "bias")
        if width == 1:
            return x
        out = b.insertelement(out, x, i32(i), "biasv")
    return out


def _epilogue(b: IRBuilder, spec: dict, ctx: dict, x, idx, width: int):
    """The accumulator epilogue on the fp32 slab sum ``x`` (scalar or <width x
    float>) of the elements from flat index ``idx`` (:func:`.acc_epilogue.emit`,
    the bias from :func:`_bias`); identity returns ``x``."""
    return acc_epilogue.emit(b, spec["acc_epilogue"], x, width,
                             lambda: _bias(b, ctx, idx, width), b.fn.param)


def _store(b: IRBuilder, spec: dict, ctx: dict, total, idx, width: int) -> None:
    et = DTYPES[spec["dtype"]]
    ot = et if width == 1 else T.vec(width, et)
    total = _epilogue(b, spec, ctx, total, idx, width)
    y = b.cast("fptrunc", total, ot, "out")
    p = b.gep(et, b.fn.param("d_ptr"), [idx], "pd")
    b.store(y, p, 2 * width)


def _body(b: IRBuilder, spec: dict, wave: int) -> None:
    v, threads = spec["vector"], spec["threads"]
    b.position(b.new_block("entry"))
    tid = b.call("workitem_id_x", [], "tid")
    wg = b.call("workgroup_id_x", [], "wg")
    m64 = b.cast("zext", b.fn.param("M"), T.I64, "mw")
    k64 = b.cast("zext", b.fn.param("K"), T.I64, "kw")
    mk = b.mul(m64, k64, "mk", ("nuw", "nsw"))
    ctx = {"k64": k64, "rbias": _bias_rsrc(b) if acc_epilogue.has(spec["acc_epilogue"], "bias") else None}
    wg64 = b.cast("zext", wg, T.I64, "wgw")
    base = b.mul(wg64, i64(threads), "base", ("nuw", "nsw"))
    tid64 = b.cast("zext", tid, T.I64, "tidw")
    thread = b.add(base, tid64, "thread", ("nuw", "nsw"))
    e = b.mul(thread, i64(v), "elem", ("nuw", "nsw"))
    # Wave-uniform bounds: the first and one-past-last element of this wave.
    lane0 = b.binop("and", tid64, i64(-wave), "lanezero")
    wthread = b.add(base, lane0, "wthread", ("nuw", "nsw"))
    wfirst = b.mul(wthread, i64(v), "wfirst", ("nuw", "nsw"))
    wend = b.add(wfirst, i64(wave * v), "wend", ("nuw", "nsw"))
    live = b.icmp("ult", wfirst, mk, "live")
    body = b.new_block("body")
    exit_ = b.new_block("exit")
    b.cond_br(live, body, exit_)
    b.position(body)
    full = b.icmp("ule", wend, mk, "full")
    vec_b = b.new_block("vector")
    tail = b.new_block("tail")
    b.cond_br(full, vec_b, tail)
    b.position(vec_b)
    total = _slab_sum(b, spec, e, mk, v)
    _store(b, spec, ctx, total, e, v)
    b.br(exit_)
    # Last wave: each lane walks its `vector` elements one at a time with the
    # index clamped to M*K-1, so lanes past the end recompute and store the
    # last element's own value (same bytes) and no branch depends on the lane.
    b.position(tail)
    last = b.sub(mk, i64(1), "last", ("nuw", "nsw"))
    pre = b.block
    loop = b.new_block("tail_elem")
    b.br(loop)
    b.position(loop)
    i = b.phi(T.I64, "i")
    j = b.add(e, i.result, "j", ("nuw", "nsw"))
    inside = b.icmp("ult", j, last, "inside")
    jc = b.select(inside, j, last, "jc")
    t_total = _slab_sum(b, spec, jc, mk, 1)
    _store(b, spec, ctx, t_total, jc, 1)
    i2 = b.add(i.result, i64(1), "inext", ("nuw", "nsw"))
    again = b.icmp("ult", i2, i64(v), "again")
    b.cond_br(again, loop, exit_)
    i.add_incoming(i64(0), pre)
    i.add_incoming(i2, b.block)
    b.position(exit_)
    b.ret_void()

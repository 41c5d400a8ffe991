"""Family ``ir_core``: small kernels that between them exercise every printer
rule of DESIGN §2 and every flavor-dependent line of §3.
Twin: cpp_engine/src/kernels/ir_core.{h,cpp}.

Spec fields (in order): ``kernel`` (one of :data:`KERNELS` or :data:`UNLISTED_KERNELS`), ``threads``
(work-group size, a multiple of the arch wave size, at most 1024), ``cluster``
(0 = off, else 1..16 workgroups along z: ``amdgpu-cluster-dims`` ``1,1,cluster``;
needs flavor llvm23 and arch gfx1250), ``value`` (float, default 0.0; not NaN:
the IR prints every NaN as the canonical NaN, so its bits could not be
stored; only kernel ``float_field`` uses it, storing it as a ``float`` and a
``double`` constant, and names it in its kernel name).
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.builder import IRBuilder
from ..ir.values import const_float, const_int, const_vector, i1, i32, i64, poison
from .common import in_ptr, kernel_attrs, new_module, out_ptr, scalar
from ..spec.fields import Field, float_text

FAMILY = "ir_core"
FIELDS = (
    Field("kernel", "str", "constants_f32"),
    Field("threads", "int", 256),
    Field("cluster", "int", 0),
    Field("value", "float", 0.0),
)

KERNELS = (
    "constants_f32", "constants_f16", "constants_bf16", "constants_int",
    "buffer_copy", "lds_barrier", "loop_phi", "vector_ops", "casts", "workgroup_ids",
)
# Kernels accepted besides KERNELS but not listed in the unknown-kernel reason,
# whose text golden/ir_core.json holds (listing them would change golden bytes;
# docs/families.md): float_field stores the float field ``value``.
UNLISTED_KERNELS = ("float_field",)

# The special values every floating constant kind is printed for.
FLOAT_VALUES = (0.0, -0.0, float("inf"), float("-inf"), float("nan"), 0.1, 1.0, -2.5)
SUBNORMAL = {"float": 1e-40, "half": 3e-6, "bfloat": 1e-40}
INT_VALUES = ((T.I8, -128), (T.I8, 127), (T.I16, -32768), (T.I32, -2147483648), (T.I32, 2147483647),
              (T.I64, 9223372036854775807), (T.I64, -9223372036854775808), (T.I64, 1099511627776))



def validate(spec: dict, arch, flavor) -> str | None:
    """First failing rule's reason, or None. Rules, in order: kernel name,
    thread count, cluster range, cluster flavor, cluster arch, value not NaN."""
    k = spec["kernel"]
    if k not in KERNELS and k not in UNLISTED_KERNELS:
        return f"kernel must be one of {', '.join(KERNELS)}, got {_show(k)}"
    t = spec["threads"]
    if t < arch.wave_size or t > 1024 or t % arch.wave_size:
        return f"threads must be a multiple of the wave size {arch.wave_size} in {arch.wave_size}..1024, got {t}"
    c = spec["cluster"]
    if c < 0 or c > 16:
        return f"cluster must be 0 (off) or 1..16, got {c}"
    if c and not flavor.clusters:
        return "amdgpu-cluster-dims requires flavor llvm23"
    if c and not arch.clusters:
        return "amdgpu-cluster-dims requires arch gfx1250"
    v = spec["value"]
    if v != v:
        return f"value must not be NaN (the IR prints every NaN as the canonical NaN), got {float_text(v)}"
    return None


def _show(v) -> str:
    return "null" if v is None else f"'{v}'"


def kernel_name(spec: dict, arch, flavor) -> str:
    """``ir_core_<kernel>_t<threads>[_c<cluster>]``, then ``_v<value>`` (its
    :func:`float_text`) for kernel ``float_field``."""
    name = f"ir_core_{spec['kernel']}_t{spec['threads']}"
    name += f"_c{spec['cluster']}" if spec["cluster"] else ""
    return name + (f"_v{float_text(spec['value'])}" if spec["kernel"] == "float_field" else "")


def build(spec: dict, arch, flavor):
    """Build the module of a valid spec; returns (kernel name, Module)."""
    name = kernel_name(spec, arch, flavor)
    kind = spec["kernel"]
    params = _PARAMS[kind]()
    cl = (1, 1, spec["cluster"]) if spec["cluster"] else None
    m, fn = new_module(flavor, arch, name, params, kernel_attrs(spec["threads"], cl))
    b = IRBuilder(m, fn)
    b.position(b.new_block("entry"))
    _BODY[kind](b, spec)
    return name, m


# -- bodies ------------------------------------------------------------------------

def _store_constants(b: IRBuilder, t: T.Type, values: list) -> None:
    out = b.fn.param("out")
    for i, v in enumerate(values):
        p = b.gep(t, out, [i64(i)], "p")
        b.store(v, p, max(1, t.bits // 8))


def _constants_float(t: T.Type):
    def body(b: IRBuilder, spec):
        vals = [const_float(t, x) for x in FLOAT_VALUES + (SUBNORMAL[t.text],)]
        _store_constants(b, t, vals)
        b.ret_void()
    return body


def _constants_int(b: IRBuilder, spec) -> None:
    out = b.fn.param("out")
    off = 0
    for t, v in INT_VALUES:
        p = b.gep(T.I8, out, [i64(off)], "p")
        b.store(const_int(t, v), p, 1)
        off += t.bits // 8
    p = b.gep(T.I8, out, [i64(off)], "p")
    b.store(const_float(T.DOUBLE, 0.1), p, 1)
    b.ret_void()


def _float_field(b: IRBuilder, spec) -> None:
    """``value`` as a ``float`` (rounded like every float constant) at byte 0
    and as a ``double`` at byte 8 of ``out``."""
    out = b.fn.param("out")
    p = b.gep(T.I8, out, [i64(0)], "p")
    b.store(const_float(T.FLOAT, spec["value"]), p, 4)
    p = b.gep(T.I8, out, [i64(8)], "p")
    b.store(const_float(T.DOUBLE, spec["value"]), p, 8)
    b.ret_void()


def _tid(b: IRBuilder):
    return b.call("workitem_id_x", [], "tid")


def _buffer_copy(b: IRBuilder, spec) -> None:
    nr = T.I64 if b.module.flavor.rsrc_num_records_bits == 64 else T.I32
    nbytes = b.fn.param("n_bytes")
    if nr is T.I64:
        nbytes = b.cast("zext", nbytes, T.I64, "nrec")
    src = b.call("make_buffer_rsrc", [b.fn.param("in"), const_int(T.I16, 0), nbytes, i32(b.module.arch.rsrc_flags)], "src")
    dst = b.call("make_buffer_rsrc", [b.fn.param("out"), const_int(T.I16, 0), nbytes, i32(b.module.arch.rsrc_flags)], "dst")
    tid = _tid(b)
    off = b.mul(tid, i32(16), "off", ("nuw", "nsw"))
    v = b.call("raw_buffer_load_v4f32", [src, off, i32(0), i32(0)], "v")
    b.call("raw_buffer_store_v4f32", [v, dst, off, i32(0), i32(0)])
    b.ret_void()


def _lds_barrier(b: IRBuilder, spec) -> None:
    n = spec["threads"]
    lds = b.module.add_lds("lds_buf", T.array(n, T.FLOAT), 16)
    tid = _tid(b)
    t64 = b.cast("zext", tid, T.I64, "tidw")
    pin = b.gep(T.FLOAT, b.fn.param("in"), [t64], "pin")
    x = b.load(T.FLOAT, pin, 4, "x")
    pl = b.gep(T.FLOAT, lds, [tid], "pl")
    b.store(x, pl, 4)
    b.fence("workgroup", "release")
    b.call("s_barrier", [])
    b.fence("workgroup", "acquire")
    rev = b.sub(i32(n - 1), tid, "rev", ("nuw", "nsw"))
    pr = b.gep(T.FLOAT, lds, [rev], "pr")
    y = b.load(T.FLOAT, pr, 4, "y")
    pout = b.gep(T.FLOAT, b.fn.param("out"), [t64], "pout")
    b.store(y, pout, 4)
    b.ret_void()


def _loop_phi(b: IRBuilder, spec) -> None:
    entry = b.block
    tid = _tid(b)
    n = b.fn.param("n")
    has = b.icmp("sgt", n, i32(0), "has")
    loop = b.new_block("loop")
    done = b.new_block("done")
    b.cond_br(has, loop, done)
    b.position(loop)
    i = b.phi(T.I32, "i")
    acc = b.phi(T.FLOAT, "acc")
    row = b.mul(i.result, i32(spec["threads"]), "row", ("nuw", "nsw"))
    idx = b.add(row, tid, "idx", ("nuw", "nsw"))
    idxw = b.cast("zext", idx, T.I64, "idxw")
    p = b.gep(T.FLOAT, b.fn.param("in"), [idxw], "p")
    x = b.load(T.FLOAT, p, 4, "x")
    acc2 = b.fadd(acc.result, x, "acc")
    i2 = b.add(i.result, i32(1), "inext", ("nuw", "nsw"))
    more = b.icmp("slt", i2, n, "more")
    b.cond_br(more, loop, done)
    i.add_incoming(i32(0), entry)
    i.add_incoming(i2, loop)
    acc.add_incoming(const_float(T.FLOAT, 0.0), entry)
    acc.add_incoming(acc2, loop)
    b.position(done)
    s = b.phi(T.FLOAT, "sum")
    s.add_incoming(const_float(T.FLOAT, 0.0), entry)
    s.add_incoming(acc2, loop)
    t64 = b.cast("zext", tid, T.I64, "tidw")
    po = b.gep(T.FLOAT, b.fn.param("out"), [t64], "po")
    b.store(s.result, po, 4)
    b.ret_void()


def _vector_ops(b: IRBuilder, spec) -> None:
    v4 = T.vec(4, T.FLOAT)
    tid = _tid(b)
    t64 = b.cast("zext", tid, T.I64, "tidw")
    pin = b.gep(v4, b.fn.param("in"), [t64], "pin")
    v = b.load(v4, pin, 16, "v")
    e2 = b.extractelement(v, i32(2), "e")
    w = b.insertelement(v, e2, i32(0), "w")
    r = b.shufflevector(w, poison(v4), [3, 2, 1, 0], "rev")
    k = const_vector(v4, [const_float(T.FLOAT, x) for x in (1.0, 0.5, -0.0, 0.1)])
    s = b.fmul(r, k, "scaled")
    h = b.cast("fptrunc", s, T.vec(4, T.HALF), "h")
    lo = b.shufflevector(h, h, [0, 1, 4, 5, 2, 3, 6, 7], "wide")
    pout = b.gep(T.vec(8, T.HALF), b.fn.param("out"), [t64], "pout")
    b.store(lo, pout, 16)
    b.ret_void()


def _casts(b: IRBuilder, spec) -> None:
    tid = _tid(b)
    t64 = b.cast("zext", tid, T.I64, "tidw")
    pin = b.gep(T.FLOAT, b.fn.param("in"), [t64], "pin")
    x = b.load(T.FLOAT, pin, 4, "x")
    h = b.cast("fptrunc", x, T.HALF, "h")
    bf = b.cast("fptrunc", x, T.BFLOAT, "bf")
    hx = b.cast("fpext", h, T.FLOAT, "hx")
    bx = b.cast("fpext", bf, T.FLOAT, "bx")
    d = b.fadd(hx, bx, "d")
    neg = b.fcmp("olt", d, const_float(T.FLOAT, 0.0), "neg")
    nd = b.fneg(d, "nd")
    a = b.select(neg, nd, d, "abs")
    q = b.cast("fptosi", a, T.I32, "q")
    bits = b.cast("bitcast", a, T.I32, "bits")
    hi = b.binop("lshr", bits, i32(16), "hi")
    lo16 = b.cast("trunc", hi, T.I16, "lo")
    z = b.cast("zext", lo16, T.I32, "z")
    m = b.binop("xor", z, q, "mix")
    f = b.cast("sitofp", m, T.FLOAT, "f")
    pout = b.gep(T.FLOAT, b.fn.param("out"), [t64], "pout")
    b.store(f, pout, 4)
    b.ret_void()


def _workgroup_ids(b: IRBuilder, spec) -> None:
    x = b.call("workgroup_id_x", [], "wgx")
    y = b.call("workgroup_id_y", [], "wgy")
    z = b.call("workgroup_id_z", [], "wgz")
    nx = b.fn.param("nx")
    ny = b.fn.param("ny")
    zy = b.mul(z, ny, "zy", ("nuw",))
    zyy = b.add(zy, y, "zyy", ("nuw",))
    lin = b.mul(zyy, nx, "lin", ("nuw",))
    lin2 = b.add(lin, x, "lin", ("nuw",))
    # Wave 0 stores (every lane the same value to the same address): the branch
    # depends on the wave index only, so it is wave-uniform.
    tid = _tid(b)
    shift = b.module.arch.wave_size.bit_length() - 1
    wave = b.binop("lshr", tid, i32(shift), "wave")
    first = b.icmp("eq", wave, i32(0), "first")
    st = b.new_block("store")
    done = b.new_block("done")
    b.cond_br(first, st, done)
    b.position(st)
    l64 = b.cast("zext", lin2, T.I64, "linw")
    p = b.gep(T.I32, b.fn.param("out"), [l64], "p")
    b.store(lin2, p, 4)
    b.br(done)
    b.position(done)
    b.ret_void()


_IO = lambda: [in_ptr("in"), out_ptr("out")]  # noqa: E731
_PARAMS = {
    "constants_f32": lambda: [out_ptr("out")],
    "constants_f16": lambda: [out_ptr("out")],
    "constants_bf16": lambda: [out_ptr("out")],
    "constants_int": lambda: [out_ptr("out")],
    "buffer_copy": lambda: [in_ptr("in"), out_ptr("out"), scalar("n_bytes")],
    "lds_barrier": _IO,
    "loop_phi": lambda: [in_ptr("in"), out_ptr("out"), scalar("n")],
    "vector_ops": _IO,
    "casts": _IO,
    "workgroup_ids": lambda: [out_ptr("out"), scalar("nx"), scalar("ny")],
    "float_field": lambda: [out_ptr("out")],
}
_BODY = {
    "constants_f32": _constants_float(T.FLOAT),
    "constants_f16": _constants_float(T.HALF),
    "constants_bf16": _constants_float(T.BFLOAT),
    "constants_int": _constants_int,
    "buffer_copy": _buffer_copy,
    "lds_barrier": _lds_barrier,
    "loop_phi": _loop_phi,
    "vector_ops": _vector_ops,
    "casts": _casts,
    "workgroup_ids": _workgroup_ids,
    "float_field": _float_field,
}

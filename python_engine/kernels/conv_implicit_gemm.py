"""Family ``conv_implicit_gemm``: the forward implicit-GEMM convolution on gfx1250
(WMMA 16x16x32, wave32), plain, two-stage split-K (Stage 1) and cluster split-K.

docs/conv_implicit_gemm.md is the full description (the C++ twin mirrors this
module call for call); this docstring is the summary.

Per workgroup: an output tile of ``tile_m`` pixels x ``tile_n`` channels of one
group, reduced over the slice ``[k_begin, k_end)`` of ``Kgemm`` in steps of
``tile_k``. Grid ``(ceil(M/tile_m), ceil(kpg/tile_n), G*ks_count)``; z decodes
as ``group = z / ks_count``, ``slice = z % ks_count`` (plain: ``group = z``,
one slice covering ``[0, Kgemm)``).

Bounds: every global access is a raw buffer access; an element outside its
tensor (pixel padding, ``m >= M``, ``n >= kpg``, ``r >= k_end``, a cluster fold
row past the tile) gets the buffer's byte count as its offset, which the
buffer range check turns into a zero load or a dropped store. Surplus
load/store slots (a slot count that is not a multiple of the thread count) are
clamped to the last slot, so they re-store the identical bytes to the same
address. Every branch condition is wave-uniform: the K-tile loop count
(derived from z), the wavelet role (``readfirstlane`` of the wave index).

Spec fields are :data:`FIELDS`; rules :func:`validate`; name :func:`kernel_name`.
"""
from __future__ import annotations

import re

from ..ir import types as T
from ..ir.builder import IRBuilder
from ..ir.values import const_float, const_int, i1, i32, splat, zeroinit
from . import conv_abi
from .common import kernel_attrs, new_module
from ..spec.fields import Field

FAMILY = "conv_implicit_gemm"
FIELDS = (
    Field("dtype", "str", "bf16"),
    Field("tile_m", "int", 64),
    Field("tile_n", "int", 64),
    Field("tile_k", "int", 32),
    Field("waves_m", "int", 2),
    Field("waves_n", "int", 2),
    Field("pipeline", "str", "mem"),
    Field("num_load_waves", "int", 1),
    Field("epilogue", "str", "default"),
    Field("vector_a", "int", 8),
    Field("vector_b", "int", 8),
    Field("acc_epilogue", "str", "identity"),
    Field("split_k", "int", 1),
    Field("split_k_cluster", "int", 0),
    Field("name_prefix", "str", ""),
)

DTYPES = {"bf16": T.BFLOAT, "fp16": T.HALF}
WMMA_KEY = {"bf16": "wmma_f32_16x16x32_bf16", "fp16": "wmma_f32_16x16x32_f16"}
PIPELINES = ("mem", "wavelet")
EPILOGUES = ("default", "cshuffle")
ACC_EPILOGUES = ("identity", "bias", "scale", "relu", "clamp")
VECTORS = (1, 2, 3, 4, 5, 6, 7, 8)
# Padded-pixel widths (the small-channel path): a load slot is one pixel's cpg = v
# channels, zero-padded to pixel_slot(v) elements along K.
PIXEL_VECTORS = (3, 5, 6, 7)
MAX_LOAD_WAVES = 8
WMMA_M, WMMA_N, WMMA_K = 16, 16, 32
WAVE = 32
# A/B LDS layout: rows of tile_k elements (no padding), XOR-swizzled in 16-byte
# chunks of CHUNK elements (see swizzle()); the C-shuffle rows are tile_n + PAD_C
# fp32 (16 bytes) apart. Bank model (64 banks x 4 bytes, a 256-byte phase =
# SWEEP_CHUNKS chunks): parity/sim/lds_banks.py.
CHUNK = 8
SWEEP_CHUNKS = 16
PAD_C = 4
# Elements per lane in the C-shuffle store phase and the cluster fold (fp32 slabs,
# and D when kpg or K is not a multiple of D_VEC).
OUT_VEC = 4
# Elements per lane of a 16-byte D store (both epilogues, when K and kpg are
# multiples of D_VEC: a wave-uniform run-time branch on the kernel arguments).
D_VEC = 8
# Per-wave D transpose region of the default epilogue: 16 rows of DT_ROW elements
# (16 + 8 padding: row stride 48 bytes, conflict-free b16 writes and b128 reads).
DT_ROW = 24
# Per-wave slab transpose region of the default epilogue with split-K (fp32): 16
# rows of WT_ROW floats (16 + 4 padding: row stride 80 bytes). b32 writes: the two
# half-waves' rows are 8*80 = 640 bytes apart (bank offset 32), 16 dwords each, no
# overlap; b128 reads: the 16 rows of a 16-lane phase start at 20*r mod 64, 16
# distinct multiples of 4 (parity/sim/lds_banks.py counts 0 conflicts).
WT_ROW = 20
# 16-byte cshuffle D slots per row segment: with more per row, two rows share a
# 16-lane phase (PAIR_SLOTS slots each) so the two b128 C loads per slot do not
# collide (row stride tile_n + 4 fp32 puts the second row 4 banks over).
PAIR_SLOTS = 8
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _show(v) -> str:
    return "null" if v is None else f"'{v}'"


# -- derived sizes -------------------------------------------------------------------

def threads(spec: dict) -> int:
    """Work-group size: the compute waves, plus the load waves of ``wavelet``."""
    w = spec["waves_m"] * spec["waves_n"]
    if spec["pipeline"] == "wavelet":
        w += spec["num_load_waves"]
    return w * WAVE


def swizzle(tile_k: int) -> tuple:
    """``(rows_per_phase, period)`` of the A/B XOR swizzle: 16-byte chunk ``c`` of
    tile row ``r`` is stored at chunk ``c ^ ((r / rows_per_phase) % period)`` of the
    row. ``rows_per_phase = max(1, 16 / chunks_per_row)`` rows share one 256-byte
    bank sweep; ``period`` is the largest power of two dividing the chunks per row,
    at most 16, so the XOR stays inside the row. With 64 4-byte banks and 16-lane
    b128 phases (parity/sim/lds_banks.py) the 16 fragment rows a phase reads hit
    16 distinct chunk slots of the sweep, and the row-major A/B stores write whole
    rows (a permutation of each row's chunks): 0 conflicts for tile_k a power of two."""
    cpr = tile_k // CHUNK
    return max(1, SWEEP_CHUNKS // cpr), min(cpr & -cpr, SWEEP_CHUNKS)


def lds_parts(spec: dict) -> dict:
    """Byte offsets and sizes inside the one LDS allocation: ``a`` and ``b`` (the
    double-buffered ``[2][rows][tile_k]`` A/B tiles, B after A), ``c`` (cshuffle:
    the ``[tile_m][tile_n + PAD_C]`` fp32 tile) and ``dt`` (default epilogue with
    D: the per-wave ``[16][DT_ROW]`` transpose regions of the compute waves). ``c``
    and ``dt`` start at 0: they alias A/B, used only after the main loop's last
    barrier. With split-K the default epilogue's ``dt`` holds the fp32 ``[16][WT_ROW]``
    slab transpose regions instead. name -> (offset, bytes)."""
    es = T.byte_size(DTYPES[spec["dtype"]])
    tk = spec["tile_k"]
    a = 2 * spec["tile_m"] * tk * es
    out = {"a": (0, a), "b": (a, 2 * spec["tile_n"] * tk * es)}
    if spec["epilogue"] == "cshuffle":
        out["c"] = (0, spec["tile_m"] * (spec["tile_n"] + PAD_C) * 4)
    elif spec["split_k"] == 1:
        out["dt"] = (0, spec["waves_m"] * spec["waves_n"] * 16 * DT_ROW * es)
    else:
        out["dt"] = (0, spec["waves_m"] * spec["waves_n"] * 16 * WT_ROW * 4)
    return out


def lds_layout(spec: dict) -> dict:
    """LDS globals, in declaration order: name -> (element type, element count).
    One allocation ``lds`` of the dtype holding every part of :func:`lds_parts`
    (the epilogue's parts alias the A/B tiles)."""
    et = DTYPES[spec["dtype"]]
    n = max(o + nb for o, nb in lds_parts(spec).values())
    return {"lds": (et, n // T.byte_size(et))}


def load_vector(cpg: int) -> int:
    """The A/B load width (elements) the launch side picks for ``cpg`` channels per
    group: ``cpg`` itself for 3, 5, 6, 7 (the padded-pixel path), else the widest of
    8, 4, 2, 1 dividing ``cpg`` (every vector of a slot stays inside one pixel)."""
    return cpg if cpg in PIXEL_VECTORS else next(x for x in (8, 4, 2, 1) if cpg % x == 0)


def pixel_slot(v: int) -> int:
    """Elements one load slot fills along K: ``v``, or for a padded-pixel width
    (3, 5, 6, 7) the next power of two (4 or 8): the GEMM reduction runs over
    ``Y*X*pixel_slot(v)`` with the padding channels zero in A and B."""
    return 4 if v == 3 else 8 if v in PIXEL_VECTORS else v


def pixel_pieces(v: int) -> tuple:
    """Byte sizes of the buffer loads of one ``v``-element slot, in address order:
    one ``2*v``-byte load for 1, 2, 4, 8; for a padded pixel the widest first
    (3: 4+2, 5: 8+2, 6: 8+4, 7: 8+4+2), all 2-byte aligned."""
    if v not in PIXEL_VECTORS:
        return (2 * v,)
    out, n = [], 2 * v
    for w in (8, 4, 2):
        if n >= w:
            out.append(w)
            n -= w
    return tuple(out)


def lds_bytes(spec: dict) -> int:
    return sum(T.byte_size(t) * n for t, n in lds_layout(spec).values())


# A tile side above this can never fit the LDS of any arch; the bound also keeps
# every size the rules compute (threads, LDS bytes) well inside 64 bits.
MAX_TILE = 1024


# -- validation ----------------------------------------------------------------------

def validate(spec: dict, arch, flavor) -> str | None:
    """First failing rule's reason, or None. Order: dtype; tile shape; wave grid;
    pipeline (and num_load_waves); epilogue; threads; vector widths;
    acc_epilogue; LDS; arch WMMA; split_k; split-K epilogue; cluster (flavor,
    arch, pipeline, range, two-stage); name_prefix."""
    if spec["dtype"] not in DTYPES:
        return f"dtype must be bf16 or fp16, got {_show(spec['dtype'])}"
    tm, tn, tk = spec["tile_m"], spec["tile_n"], spec["tile_k"]
    if (tm < WMMA_M or tm % WMMA_M or tn < WMMA_N or tn % WMMA_N or tk < WMMA_K or tk % WMMA_K
            or max(tm, tn, tk) > MAX_TILE):
        return (f"tile must be a multiple of the WMMA shape 16x16x32 (tile_m, tile_n "
                f"multiples of 16, tile_k a multiple of 32, each at most 1024), got {tm}x{tn}x{tk}")
    wm, wn = spec["waves_m"], spec["waves_n"]
    if wm < 1 or wn < 1 or tm % (wm * WMMA_M) or tn % (wn * WMMA_N):
        return (f"waves {wm}x{wn} must divide the tile {tm}x{tn} into per-wave tiles "
                f"that are multiples of 16x16")
    if spec["pipeline"] not in PIPELINES:
        return f"pipeline must be mem or wavelet, got {_show(spec['pipeline'])}"
    lw = spec["num_load_waves"]
    if spec["pipeline"] == "wavelet" and (lw < 1 or lw > MAX_LOAD_WAVES):
        return f"num_load_waves must be 1..{MAX_LOAD_WAVES} for the wavelet pipeline, got {lw}"
    if spec["epilogue"] not in EPILOGUES:
        return f"epilogue must be default or cshuffle, got {_show(spec['epilogue'])}"
    t = threads(spec)
    if t > 1024:
        return f"work-group of {t} threads exceeds 1024"
    for f in ("vector_a", "vector_b"):
        if spec[f] not in VECTORS:
            return f"{f} must be 1 to 8 elements, got {spec[f]}"
    va, vb = spec["vector_a"], spec["vector_b"]
    if (va in PIXEL_VECTORS or vb in PIXEL_VECTORS) and va != vb:
        return (f"padded-pixel loads (vector 3, 5, 6 or 7) need vector_a = vector_b "
                f"(A and B share the padded K order), got {va} and {vb}")
    if spec["acc_epilogue"] not in ACC_EPILOGUES:
        return (f"acc_epilogue must be identity, bias, scale, relu or clamp, "
                f"got {_show(spec['acc_epilogue'])}")
    nb = lds_bytes(spec)
    if nb > arch.lds_bytes:
        return f"LDS use of {nb} bytes exceeds the {arch.lds_bytes} bytes of {arch.name}"
    if not any(s[:3] == (WMMA_M, WMMA_N, WMMA_K) for s in arch.wmma):
        return f"arch {arch.name} has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)"
    sk = spec["split_k"]
    if sk == -1:
        return "split_k = -1 (auto) must be resolved before lowering"
    if sk < 1:
        return f"split_k must be 1 (off) or greater than 1 (two-stage), got {sk}"
    if sk > 1 and spec["acc_epilogue"] != "identity":
        return (f"split-K needs the identity accumulator epilogue (it applies per slice), "
                f"got {_show(spec['acc_epilogue'])}")
    s = spec["split_k_cluster"]
    if s:
        if not flavor.clusters:
            return "split_k_cluster requires flavor llvm23"
        if not arch.clusters:
            return "split_k_cluster requires arch gfx1250"
        if spec["pipeline"] != "mem":
            return "split_k_cluster requires the mem pipeline"
        if s < 2 or s > 15:
            return f"split_k_cluster must be 0 (off) or 2..15, got {s}"
        if sk == 1:
            return "split_k_cluster requires split_k > 1 (the two-stage ABI)"
    p = spec["name_prefix"]
    if p is None or (p != "" and not NAME_RE.match(p)):
        return f"name_prefix must be empty or an identifier, got {_show(p)}"
    return None


def kernel_name(spec: dict, arch, flavor) -> str:
    """``[<prefix>_]conv_implicit_gemm_<dtype>_<tm>x<tn>x<tk>_w<wm>x<wn>_<pipe>_<epi>
    _va<a>_vb<b>_<acc>[_spk][_skc<S>]``; ``<pipe>`` is ``mem`` or ``wavelet<L>``
    (num_load_waves only changes the code of ``wavelet``)."""
    pipe = "mem" if spec["pipeline"] == "mem" else f"wavelet{spec['num_load_waves']}"
    name = (f"conv_implicit_gemm_{spec['dtype']}_{spec['tile_m']}x{spec['tile_n']}x{spec['tile_k']}"
            f"_w{spec['waves_m']}x{spec['waves_n']}_{pipe}_{spec['epilogue']}"
            f"_va{spec['vector_a']}_vb{spec['vector_b']}_{spec['acc_epilogue']}")
    if spec["split_k"] > 1:
        name += "_spk"
    if spec["split_k_cluster"]:
        name += f"_skc{spec['split_k_cluster']}"
    if spec["name_prefix"]:
        name = f"{spec['name_prefix']}_{name}"
    return name


def build(spec: dict, arch, flavor):
    """Build the module of a valid spec; returns (kernel name, Module)."""
    name = kernel_name(spec, arch, flavor)
    variant = conv_abi.variant_of(spec["split_k"], spec["split_k_cluster"])
    s = spec["split_k_cluster"]
    attrs = kernel_attrs(threads(spec), (1, 1, s) if s else None)
    m, fn = new_module(flavor, arch, name, conv_abi.params(variant), attrs)
    b = IRBuilder(m, fn)
    _Kernel(b, spec).emit()
    return name, m


# -- the kernel ----------------------------------------------------------------------

def _raw_type(nbytes: int) -> T.Type:
    """The raw buffer load/store type of ``nbytes`` (2, 4, 8 or 16)."""
    return {2: T.I16, 4: T.FLOAT, 8: T.vec(2, T.FLOAT), 16: T.vec(4, T.FLOAT)}[nbytes]


_LOAD_KEY = {2: "raw_buffer_load_i16", 4: "raw_buffer_load_f32", 8: "raw_buffer_load_v2f32",
             16: "raw_buffer_load_v4f32"}
_STORE_KEY = {2: "raw_buffer_store_i16", 4: "raw_buffer_store_f32", 8: "raw_buffer_store_v2f32",
              16: "raw_buffer_store_v4f32"}


class _Kernel:
    """Emits one kernel. Method order is emission order (the bytes depend on it)."""

    def __init__(self, b: IRBuilder, spec: dict):
        self.b = b
        self.s = spec
        self.et = DTYPES[spec["dtype"]]
        self.tm, self.tn, self.tk = spec["tile_m"], spec["tile_n"], spec["tile_k"]
        self.wm = self.tm // spec["waves_m"]   # per-wave tile
        self.wn = self.tn // spec["waves_n"]
        self.fm = self.wm // WMMA_M            # fragments per wave
        self.fn = self.wn // WMMA_N
        self.ncw = spec["waves_m"] * spec["waves_n"]  # compute waves
        self.wavelet = spec["pipeline"] == "wavelet"
        self.threads = threads(spec)
        self.load_threads = spec["num_load_waves"] * WAVE if self.wavelet else self.threads
        self.split = spec["split_k"] > 1
        self.cluster = spec["split_k_cluster"]
        self.swz = swizzle(self.tk)
        self.ncp = self.tn + PAD_C
        # Small-channel path: a slot is one pixel of pix = cpg channels, padded to
        # slot_a elements along K (0: the plain path, slot_* = vector_*).
        self.pix = spec["vector_a"] if spec["vector_a"] in PIXEL_VECTORS else 0
        self.slot_a = pixel_slot(spec["vector_a"])
        self.slot_b = pixel_slot(spec["vector_b"])

    # -- small helpers ---------------------------------------------------------------
    def p(self, name):
        return self.b.fn.param(name)

    def nuw(self, op, a, c, hint):
        return self.b.binop(op, a, c, hint, ("nuw", "nsw"))

    def umin_const(self, v, c: int, hint):
        """``min(v, c)`` for a slot index (icmp ult + select)."""
        b = self.b
        lt = b.icmp("ult", v, i32(c), hint + "_lt")
        return b.select(lt, v, i32(c), hint)

    def barrier(self):
        b = self.b
        b.fence("workgroup", "release")
        b.call("s_barrier", [])
        b.fence("workgroup", "acquire")

    def rsrc(self, ptr_name: str, nbytes, hint: str):
        """Buffer resource over ``nbytes`` (i64 value) bytes at ``ptr_name``; word 3
        is the arch table's ``rsrc_flags`` (raw offset range check)."""
        b = self.b
        n = nbytes
        if b.module.flavor.rsrc_num_records_bits == 32:
            n = b.cast("trunc", nbytes, T.I32, hint + "_nrec")
        return b.call("make_buffer_rsrc", [self.p(ptr_name), const_int(T.I16, 0), n, i32(b.module.arch.rsrc_flags)], hint)

    def kgemm(self):
        """The reduction length the K loop runs over: ``Kgemm``, or ``Y*X*slot`` on the
        padded-pixel path."""
        if not self.pix:
            return self.p("Kgemm")
        b = self.b
        yx = b.mul(self.p("Y"), self.p("X"), "k_taps")
        return b.mul(yx, i32(self.slot_a), "k_padded")

    # -- emission --------------------------------------------------------------------
    def emit(self):
        b = self.b
        b.position(b.new_block("entry"))
        self.prologue_values()
        self.slot_setup()
        self.main_loop()
        self.epilogue()

    def prologue_values(self):
        b = self.b
        s = self.s
        self.tid = b.call("workitem_id_x", [], "tid")
        self.lane = b.binop("and", self.tid, i32(WAVE - 1), "lane")
        wv = b.binop("lshr", self.tid, i32(5), "wave_v")
        self.wave = b.call("readfirstlane_i32", [wv], "wave")
        bx = b.call("workgroup_id_x", [], "bx")
        by = b.call("workgroup_id_y", [], "by")
        bz = b.call("workgroup_id_z", [], "bz")
        # z -> (group, slice); the slice's K range.
        if self.split:
            kc = self.p("ks_count")
            self.group = b.binop("udiv", bz, kc, "group")
            self.slice = b.binop("urem", bz, kc, "slice")
            ks = self.p("ks")
            self.k_begin = b.mul(self.slice, ks, "k_begin")
            kend0 = b.add(self.k_begin, ks, "k_end_raw")
            kg = self.kgemm()
            short = b.icmp("ult", kend0, kg, "k_short")
            self.k_end = b.select(short, kend0, kg, "k_end")
        else:
            self.group = bz
            self.slice = None
            self.k_begin = i32(0)
            self.k_end = self.kgemm()
        # Number of K tiles: ceil((k_end - k_begin) / tile_k), 0 for an empty slice.
        live = b.icmp("ugt", self.k_end, self.k_begin, "k_live")
        span = b.sub(self.k_end, self.k_begin, "k_span")
        span0 = b.select(live, span, i32(0), "k_span_nz")
        sp = b.add(span0, i32(self.tk - 1), "k_span_up")
        self.ntiles = b.binop("udiv", sp, i32(self.tk), "ntiles")
        # Tile origin and the group's channel bases.
        self.m0 = b.mul(bx, i32(self.tm), "m_org")
        self.n0 = b.mul(by, i32(self.tn), "n_org")
        self.cbase = b.mul(self.group, self.p("cpg"), "cbase")   # g*cpg
        self.kbase = b.mul(self.group, self.p("kpg"), "kbase")   # g*kpg
        # Buffer resources and the out-of-range offsets (the byte counts).
        self.rx = self.rsrc("x_ptr", self.p("x_bytes"), "rsrc_x")
        self.rw = self.rsrc("w_ptr", self.p("w_bytes"), "rsrc_w")
        self.oob_x = b.cast("trunc", self.p("x_bytes"), T.I32, "oob_x")
        self.oob_w = b.cast("trunc", self.p("w_bytes"), T.I32, "oob_w")
        if not self.split or self.cluster:
            self.rd = self.rsrc("d_ptr", self.p("d_bytes"), "rsrc_d")
            self.oob_d = b.cast("trunc", self.p("d_bytes"), T.I32, "oob_d")
        if self.split:
            self.rws = self.rsrc("ws_ptr", self.p("ws_bytes"), "rsrc_ws")
            self.oob_ws = b.cast("trunc", self.p("ws_bytes"), T.I32, "oob_ws")
        if s["acc_epilogue"] == "bias":
            k4 = b.mul(self.p("K"), i32(4), "bias_nbytes")
            k64 = b.cast("zext", k4, T.I64, "bias_nbytes_w")
            self.rbias = self.rsrc("bias_ptr", k64, "rsrc_bias")
            self.oob_bias = k4
        # Roles: compute wave coordinates (wave_m, wave_n); wavelet loaders.
        self.is_loader = None
        if self.wavelet:
            self.is_loader = b.icmp("uge", self.wave, i32(self.ncw), "is_loader")
            lt = b.sub(self.tid, i32(self.ncw * WAVE), "ltid")
            self.ltid = lt
        else:
            self.ltid = self.tid
        wn = self.s["waves_n"]
        self.wave_m = b.binop("udiv", self.wave, i32(wn), "wave_m")
        self.wave_n = b.binop("urem", self.wave, i32(wn), "wave_n")
        # LDS globals: one allocation; B after A; the epilogue's parts alias A/B.
        self.lds = {}
        for nm, (t, n) in lds_layout(s).items():
            self.lds[nm] = b.module.add_lds(nm, T.array(n, t), 16)
        self.lds_a = self.lds["lds"]
        boff = lds_parts(s)["b"][0] // T.byte_size(self.et)
        self.lds_b = b.gep(self.et, self.lds["lds"], [i32(boff)], "lds_b")

    # -- global -> LDS slots -----------------------------------------------------------
    def slot_setup(self):
        """Per-thread load slots (fixed for the whole K loop): slot j of a thread is
        vector ``v = ltid + j*load_threads`` of the tile, clamped to the last vector.

        The im2col walk is strength-reduced: a slot's K coordinate lives in a *K state*
        (channel ``c``, ``xd = x*dil_w``, ``yd = y*dil_h`` and the byte offset ``ko`` of
        ``(y, x, c)`` inside a pixel window), computed with divisions once here for
        ``k_begin`` and advanced by ``tile_k`` per K tile with two single wraps
        (:meth:`advance`). Slots whose vector index differs by a multiple of the row
        length share one K state (same ``kv``); a clamped slot has its own."""
        b = self.b
        s = self.s
        # the K walk's channel count: cpg, or the padded pixel (channel 0 in every state)
        cpg, X = (i32(self.slot_a) if self.pix else self.p("cpg")), self.p("X")
        self.kcpg = cpg
        dw, dh = self.p("dil_w"), self.p("dil_h")
        # tile_k = sa*cpg + sb, sa = ay*X + ax: the uniform per-tile step.
        tk = i32(self.tk)
        sa = b.binop("udiv", tk, cpg, "k_sa")
        sb = b.binop("urem", tk, cpg, "k_sb")
        ay = b.binop("udiv", sa, X, "k_ay")
        ax = b.binop("urem", sa, X, "k_ax")
        c2 = b.mul(self.p("C"), i32(2), "k_pixb")           # bytes per pixel
        rowb = b.mul(self.p("W"), c2, "k_rowb")             # bytes per image row
        axd = b.mul(ax, dw, "k_axd")
        ayd = b.mul(ay, dh, "k_ayd")
        xlim = b.mul(X, dw, "k_xlim")
        kc = b.add(b.mul(sb, i32(2), "k_sbb"), b.mul(axd, c2, "k_axb"), "k_kstep")
        ko0 = b.add(kc, b.mul(ayd, rowb, "k_ayb"), "k_kstep")
        d1 = b.sub(b.mul(dw, c2, "k_dwb"), b.mul(cpg, i32(2), "k_cpgb"), "k_dcy")
        d2 = b.sub(b.mul(dh, rowb, "k_dhb"), b.mul(xlim, c2, "k_xlimb"), "k_dcx")
        xs1 = b.add(axd, dw, "k_axdc")
        ys1 = b.add(ayd, dh, "k_aydc")
        ko1 = b.add(ko0, d1, "k_kstepc")
        self.step = dict(sb=sb, cpg=cpg, xs0=axd, xs1=xs1, xlim=xlim, ys0=ayd, ys1=ys1, ko0=ko0, ko1=ko1, d2=d2)
        self.c2, self.rowb = c2, rowb
        self.a_states, self.a_slots = [], []
        va = self.slot_a
        per_row = self.tk // va
        count = self.tm * per_row
        lt = self.load_threads
        for j in range((count + lt - 1) // lt):
            v = b.add(self.ltid, i32(j * lt), "a_slot")
            clamped = (j + 1) * lt > count
            if clamped:
                v = self.umin_const(v, count - 1, "a_slotc")
            row = b.binop("udiv", v, i32(per_row), "a_row")
            if j == 0 or clamped or lt % per_row:
                kv = b.binop("urem", v, i32(per_row), "a_kv")
                self.a_states.append(self.k_state(kv, va, "a"))
            st = len(self.a_states) - 1
            koff = self.a_states[st]["koff"]
            m = b.add(self.m0, row, "a_m")
            mok = b.icmp("ult", m, self.p("M"), "a_mok")
            hw = b.mul(self.p("Ho"), self.p("Wo"), "a_hw")
            img = b.binop("udiv", m, hw, "a_img")
            rem = b.binop("urem", m, hw, "a_pix")
            ho = b.binop("udiv", rem, self.p("Wo"), "a_ho")
            wo = b.binop("urem", rem, self.p("Wo"), "a_wo")
            hs = b.mul(ho, self.p("stride_h"), "a_hs")
            hbase = b.sub(hs, self.p("pad_h"), "a_hbase")
            ws = b.mul(wo, self.p("stride_w"), "a_ws")
            wbase = b.sub(ws, self.p("pad_w"), "a_wbase")
            nh = b.mul(img, self.p("H"), "a_nh")
            # Byte offset of (img, hbase, wbase, channel g*cpg): the slot's pixel base;
            # a row past M gets hbase 2^30 so that its hi check always fails.
            pw = b.add(b.mul(b.add(nh, hbase, "a_nhb"), self.p("W"), "a_nhw"), wbase, "a_pw")
            pc = b.add(b.mul(pw, self.p("C"), "a_pwc"), self.cbase, "a_pe")
            pbase = b.mul(pc, i32(2), "a_pbase")
            hb = b.select(mok, hbase, i32(1 << 30), "a_hb")
            lds_off = self.slot_lds(row, koff, va, "a")
            self.a_slots.append(dict(st=st, hb=hb, wb=wbase, pbase=pbase, lds=lds_off))
        self.b_states, self.b_slots = [], []
        vb = self.slot_b
        per_row = self.tk // vb
        count = self.tn * per_row
        for j in range((count + lt - 1) // lt):
            v = b.add(self.ltid, i32(j * lt), "b_slot")
            clamped = (j + 1) * lt > count
            if clamped:
                v = self.umin_const(v, count - 1, "b_slotc")
            row = b.binop("udiv", v, i32(per_row), "b_row")
            if j == 0 or clamped or lt % per_row:
                kv = b.binop("urem", v, i32(per_row), "b_kv")
                koff = b.mul(kv, i32(vb), "b_koff")
                self.b_states.append(dict(kv=kv, koff=koff, klim=self.k_limit(koff, "b")))
            st = len(self.b_states) - 1
            koff = self.b_states[st]["koff"]
            n = b.add(self.n0, row, "b_n")
            nok = b.icmp("ult", n, self.p("kpg"), "b_nok")
            kn = b.add(self.kbase, n, "b_kn")
            wrow = b.mul(kn, self.p("Kgemm"), "b_wrow")
            if self.pix:   # filter tap kv of the tile: pix channels (2*pix bytes) per tap in w
                wr = b.mul(wrow, i32(2), "b_wrowb")
                tb = b.mul(self.b_states[st]["kv"], i32(2 * self.pix), "b_tapb")
                wbyte = b.add(wr, tb, "b_wbyte")
            else:
                wk = b.add(wrow, koff, "b_wk")
                wbyte = b.mul(wk, i32(2), "b_wbyte")
            lds_off = self.slot_lds(row, koff, vb, "b")
            self.b_slots.append(dict(st=st, nok=nok, wbyte=wbyte, lds=lds_off))

    def swz_index(self, row, ch, within, hint):
        """Element index in an A/B buffer of 16-byte chunk ``ch`` of tile row ``row``
        (plus ``within`` elements, or None): ``row*tile_k + 8*(ch ^ f(row))``, the XOR
        swizzle of :func:`swizzle`."""
        b = self.b
        rps, per = self.swz
        q = row if rps == 1 else b.binop("lshr", row, i32(rps.bit_length() - 1), hint + "_swq")
        f = b.binop("and", q, i32(per - 1), hint + "_swf")
        sc = b.binop("xor", ch, f, hint + "_sch")
        e = b.binop("shl", sc, i32(3), hint + "_sce")
        if within is not None:
            e = b.binop("or", e, within, hint + "_scw")
        return b.add(b.mul(row, i32(self.tk), hint + "_lrow"), e, hint + "_loff")

    def slot_lds(self, row, koff, vec: int, hint):
        """LDS element index of a load slot's vector (``koff`` elements into the row)."""
        b = self.b
        ch = b.binop("lshr", koff, i32(3), hint + "_kch")
        within = b.binop("and", koff, i32(CHUNK - 1), hint + "_kin") if vec < CHUNK else None
        return self.swz_index(row, ch, within, hint)

    def k_limit(self, koff, hint):
        """``klim`` with ``k0 + koff < k_end  <=>  k0 < klim`` (unsigned) for every tile
        origin ``k0``: ``k_end - koff``, or 0 when ``koff >= k_end``."""
        b = self.b
        kin = b.icmp("ult", koff, self.k_end, hint + "_kin")
        kl = b.sub(self.k_end, koff, hint + "_klim")
        return b.select(kin, kl, i32(0), hint + "_klim")

    def k_state(self, kv, va, hint):
        """The K state of element ``r = k_begin + kv*va`` (divisions, once per workgroup)."""
        b = self.b
        koff = b.mul(kv, i32(va), hint + "_koff")
        r0 = b.add(self.k_begin, koff, hint + "_rk")
        c = b.binop("urem", r0, self.kcpg, hint + "_ck")
        q = b.binop("udiv", r0, self.kcpg, hint + "_qk")
        x = b.binop("urem", q, self.p("X"), hint + "_xk")
        y = b.binop("udiv", q, self.p("X"), hint + "_yk")
        xd = b.mul(x, self.p("dil_w"), hint + "_xdk")
        yd = b.mul(y, self.p("dil_h"), hint + "_ydk")
        ko = b.add(b.add(b.mul(yd, self.rowb, hint + "_kyb"), b.mul(xd, self.c2, hint + "_kxb"), hint + "_kxy"),
                   b.mul(c, i32(2), hint + "_kcb"), hint + "_ko")
        return dict(koff=koff, klim=self.k_limit(koff, hint), c=c, xd=xd, yd=yd, ko=ko)

    def advance(self, states):
        """The K states of the next tile: ``c += sb`` with one wrap (carry into x),
        ``x += ax (+1)`` with one wrap (carry into y), ``y += ay (+1)``; ``ko`` follows
        with the uniform byte steps. No division."""
        b = self.b
        st = self.step
        out = []
        for s0 in states:
            c1 = b.add(s0["c"], st["sb"], "k_cn")
            cy1 = b.icmp("uge", c1, st["cpg"], "k_cyc")
            c = b.sub(c1, b.select(cy1, st["cpg"], i32(0), "k_cw"), "k_c")
            xd1 = b.add(s0["xd"], b.select(cy1, st["xs1"], st["xs0"], "k_xs"), "k_xdn")
            cy2 = b.icmp("uge", xd1, st["xlim"], "k_cyx")
            xd = b.sub(xd1, b.select(cy2, st["xlim"], i32(0), "k_xw"), "k_xd")
            yd = b.add(s0["yd"], b.select(cy2, st["ys1"], st["ys0"], "k_ys"), "k_yd")
            ko1 = b.add(s0["ko"], b.select(cy1, st["ko1"], st["ko0"], "k_ks"), "k_kon")
            ko = b.add(ko1, b.select(cy2, st["d2"], i32(0), "k_kw"), "k_ko")
            out.append(dict(s0, c=c, xd=xd, yd=yd, ko=ko))
        return out

    CARRIED = ("c", "xd", "yd", "ko")

    def load_tile(self, k0, states):
        """Global loads of the K tile starting at ``k0`` (the A K states ``states``
        describe the same tile) into registers; returns the raw values of the A slots
        then the B slots."""
        b = self.b
        s = self.s
        out_a, out_b = [], []
        va, vb = s["vector_a"], s["vector_b"]
        roks = [b.icmp("ult", k0, st["klim"], "a_rok") for st in self.a_states]
        for sl in self.a_slots:
            st = states[sl["st"]]
            hi = b.add(sl["hb"], st["yd"], "a_hi")
            wi = b.add(sl["wb"], st["xd"], "a_wi")
            hok = b.icmp("ult", hi, self.p("H"), "a_hok")   # unsigned: negative is out
            wok = b.icmp("ult", wi, self.p("W"), "a_wok")
            ok = b.binop("and", roks[sl["st"]], hok, "a_ok")
            ok = b.binop("and", ok, wok, "a_ok")
            off = b.add(sl["pbase"], st["ko"], "a_byte")
            off = b.select(ok, off, self.oob_x, "a_off")
            out_a.append(self.load_slot(self.rx, off, va, "a"))
        roks = [b.icmp("ult", k0, st["klim"], "b_rok") for st in self.b_states]
        if self.pix:   # tap k0/slot of w: 2*pix bytes per tap
            tap = b.binop("lshr", k0, i32(self.slot_b.bit_length() - 1), "b_ktap")
            kb = b.mul(tap, i32(2 * self.pix), "b_kbyte")
        else:
            kb = b.mul(k0, i32(2), "b_kbyte")
        for sl in self.b_slots:
            ok = b.binop("and", sl["nok"], roks[sl["st"]], "b_ok")
            off = b.add(sl["wbyte"], kb, "b_byte")
            off = b.select(ok, off, self.oob_w, "b_off")
            out_b.append(self.load_slot(self.rw, off, vb, "b"))
        return out_a, out_b

    def load_slot(self, rsrc, off, v: int, hint: str):
        """The raw value of one load slot at byte ``off``: one ``2*v``-byte buffer load,
        or for a padded pixel (``v`` in 3, 5, 6, 7) the pieces of :func:`pixel_pieces`
        at ``off``, ``off+8``, ... (the constant as soffset) as i32 words, the 2-byte
        piece zero-extended (its high half is the first padding channel), the words
        past them zero: ``pixel_slot(v)`` elements. The pieces lie inside the pixel,
        so each is wholly in or out of the buffer range with it."""
        b = self.b
        if v not in PIXEL_VECTORS:
            return b.call(_LOAD_KEY[2 * v], [rsrc, off, i32(0), i32(0)], hint + "_val")
        words = []
        at = 0
        for nb in pixel_pieces(v):
            x = b.call(_LOAD_KEY[nb], [rsrc, off, i32(at), i32(0)], hint + "_pc")
            if nb == 8:
                x = b.cast("bitcast", x, T.vec(2, T.I32), hint + "_pcw")
                words += [b.extractelement(x, i32(0), hint + "_w"), b.extractelement(x, i32(1), hint + "_w")]
            elif nb == 4:
                words.append(b.cast("bitcast", x, T.I32, hint + "_w"))
            else:
                words.append(b.cast("zext", x, T.I32, hint + "_w"))
            at += nb
        nw = pixel_slot(v) // 2
        vec = zeroinit(T.vec(nw, T.I32))
        for k, w in enumerate(words):
            vec = b.insertelement(vec, w, i32(k), hint + "_pix")
        return b.cast("bitcast", vec, _raw_type(2 * pixel_slot(v)), hint + "_val")

    def store_tile(self, vals, buf):
        """Store loaded registers into LDS buffer ``buf`` (i32 0 or 1)."""
        b = self.b
        s = self.s
        out_a, out_b = vals
        abase = b.mul(buf, i32(self.tm * self.tk), "a_buf")
        for sl, v in zip(self.a_slots, out_a):
            idx = b.add(abase, sl["lds"], "a_lidx")
            p = b.gep(self.et, self.lds_a, [idx], "a_lp")
            b.store(v, p, 2 * self.slot_a)
        bbase = b.mul(buf, i32(self.tn * self.tk), "b_buf")
        for sl, v in zip(self.b_slots, out_b):
            idx = b.add(bbase, sl["lds"], "b_lidx")
            p = b.gep(self.et, self.lds_b, [idx], "b_lp")
            b.store(v, p, 2 * self.slot_b)

    # -- WMMA ------------------------------------------------------------------------
    def fragment(self, lds, base, row, kk, hint):
        """The 16-element A/B fragment of ``row`` (tile row) at K step ``kk``: lane l
        holds K = 8*(l/16) + [0,8) and 16 + 8*(l/16) + [0,8) of the 32, i.e. chunks
        ``4*kk + l/16`` and ``4*kk + 2 + l/16`` of the (swizzled) row."""
        b = self.b
        v8 = T.vec(8, self.et)
        ch = b.add(self.half, i32(4 * kk), "f_ch") if kk else self.half
        idx = b.add(base, self.swz_index(row, ch, None, "f"), "f_idx")
        p0 = b.gep(self.et, lds, [idx], hint)
        lo = b.load(v8, p0, 16, "f_lo")
        ch2 = b.add(self.half, i32(4 * kk + 2), "f_chh")
        idx2 = b.add(base, self.swz_index(row, ch2, None, "fh"), "f_idxh")
        p1 = b.gep(self.et, lds, [idx2], hint)
        hi = b.load(v8, p1, 16, "f_hi")
        return b.shufflevector(lo, hi, list(range(16)), "frag")

    def compute(self, buf, accs):
        """All WMMAs of one K tile from LDS buffer ``buf``; returns the new accumulators."""
        b = self.b
        abase = b.mul(buf, i32(self.tm * self.tk), "c_abuf")
        bbase = b.mul(buf, i32(self.tn * self.tk), "c_bbuf")
        accs = list(accs)
        key = WMMA_KEY[self.s["dtype"]]
        for kk in range(self.tk // WMMA_K):
            fa = [self.fragment(self.lds_a, abase, self.a_rows[i], kk, "fa_p") for i in range(self.fm)]
            fb = [self.fragment(self.lds_b, bbase, self.b_rows[j], kk, "fb_p") for j in range(self.fn)]
            for i in range(self.fm):
                for j in range(self.fn):
                    k = i * self.fn + j
                    accs[k] = b.call(key, [i1(False), fa[i], i1(False), fb[j], const_int(T.I16, 0),
                                           accs[k], i1(False), i1(False)], "acc")
        return accs

    # -- main loop -------------------------------------------------------------------
    def main_loop(self):
        b = self.b
        # Fragment rows (tile rows of this wave's fragments) and the lane's K offset.
        half = b.binop("lshr", self.lane, i32(4), "half")
        self.lrow = b.binop("and", self.lane, i32(15), "lrow")
        self.lane_k = b.mul(half, i32(8), "lane_k")
        self.half = half
        wm0 = b.mul(self.wave_m, i32(self.wm), "wm_org")
        wn0 = b.mul(self.wave_n, i32(self.wn), "wn_org")
        self.wm0, self.wn0 = wm0, wn0
        self.a_rows = [b.add(b.add(wm0, i32(i * WMMA_M), "ar"), self.lrow, "arow") for i in range(self.fm)]
        self.b_rows = [b.add(b.add(wn0, i32(j * WMMA_N), "br"), self.lrow, "brow") for j in range(self.fn)]
        nacc = self.fm * self.fn
        zero = zeroinit(T.vec(8, T.FLOAT))
        any_tile = b.icmp("ugt", self.ntiles, i32(0), "any_tile")
        entry = b.block
        pro = b.new_block("prologue")
        loop = b.new_block("kloop")
        done = b.new_block("kdone")
        b.cond_br(any_tile, pro, done)
        # Prologue: tile 0 -> buffer 0, barrier.
        b.position(pro)
        if self.wavelet:
            pl = b.new_block("pro_load")
            pj = b.new_block("pro_join")
            b.cond_br(self.is_loader, pl, pj)
            b.position(pl)
            self.store_tile(self.load_tile(self.k_begin, self.a_states), i32(0))
            b.br(pj)
            b.position(pj)
        else:
            self.store_tile(self.load_tile(self.k_begin, self.a_states), i32(0))
        st1 = self.advance(self.a_states)
        self.barrier()
        pro_end = b.block
        b.br(loop)
        # Loop: iteration t computes buffer t&1 while tile t+1 goes to buffer (t+1)&1.
        b.position(loop)
        t = b.phi(T.I32, "t")
        acc_phis = [b.phi(T.vec(8, T.FLOAT), "acc_in") for _ in range(nacc)]
        accs = [ph.result for ph in acc_phis]
        # The A K states of tile t+1 (loop-carried).
        st_phis = [{f: b.phi(T.I32, "k_" + f) for f in self.CARRIED} for _ in st1]
        cur = [dict(s0, **{f: ph[f].result for f in self.CARRIED}) for s0, ph in zip(st1, st_phis)]
        buf = b.binop("and", t.result, i32(1), "buf")
        nbuf = b.binop("xor", buf, i32(1), "nbuf")
        t1 = b.add(t.result, i32(1), "t_next", ("nuw", "nsw"))
        knext = b.add(self.k_begin, b.mul(t1, i32(self.tk), "k_step"), "k_next")
        if self.wavelet:
            ld = b.new_block("wl_load")
            cp = b.new_block("wl_compute")
            jn = b.new_block("wl_join")
            b.cond_br(self.is_loader, ld, cp)
            b.position(ld)
            self.store_tile(self.load_tile(knext, cur), nbuf)
            nxt = self.advance(cur)
            b.br(jn)
            b.position(cp)
            new = self.compute(buf, accs)
            cp_end = b.block
            b.br(jn)
            b.position(jn)
            merged = []
            for old, nw in zip(accs, new):
                ph = b.phi(T.vec(8, T.FLOAT), "acc_j")
                ph.add_incoming(old, ld)
                ph.add_incoming(nw, cp_end)
                merged.append(ph.result)
            new = merged
            jst = []
            for s1, s0 in zip(nxt, cur):
                d = dict(s1)
                for f in self.CARRIED:
                    ph = b.phi(T.I32, "k_j" + f)
                    ph.add_incoming(s1[f], ld)
                    ph.add_incoming(s0[f], cp_end)
                    d[f] = ph.result
                jst.append(d)
            nxt = jst
        else:
            # Software pipeline: tile t+1's global loads are issued first and fenced
            # from the WMMAs by a scheduling barrier (mask 0: nothing crosses), so the
            # machine scheduler cannot sink them; their wait lands at the LDS stores
            # after the WMMAs, which a second scheduling barrier keeps below the math
            # together with the K-state step (so no load-address register is reused
            # while the loads are in flight).
            vals = self.load_tile(knext, cur)
            b.call("sched_barrier", [i32(0)])
            new = self.compute(buf, accs)
            b.call("sched_barrier", [i32(0)])
            nxt = self.advance(cur)
            self.store_tile(vals, nbuf)
        self.barrier()
        again = b.icmp("ult", t1, self.ntiles, "again")
        loop_end = b.block
        b.cond_br(again, loop, done)
        t.add_incoming(i32(0), pro_end)
        t.add_incoming(t1, loop_end)
        for ph, nw in zip(acc_phis, new):
            ph.add_incoming(zero, pro_end)
            ph.add_incoming(nw, loop_end)
        for ph, s1, s2 in zip(st_phis, st1, nxt):
            for f in self.CARRIED:
                ph[f].add_incoming(s1[f], pro_end)
                ph[f].add_incoming(s2[f], loop_end)
        b.position(done)
        self.accs = []
        for nw in new:
            ph = b.phi(T.vec(8, T.FLOAT), "acc_out")
            ph.add_incoming(zero, entry)
            ph.add_incoming(nw, loop_end)
            self.accs.append(ph.result)

    # -- epilogues ---------------------------------------------------------------------
    def acc_epi(self, x, n_elem, width: int):
        """The accumulator epilogue on fp32 ``x`` (scalar or <width x float>) whose
        first output channel is ``n_elem`` (global channel index, i32)."""
        b = self.b
        kind = self.s["acc_epilogue"]
        vt = T.FLOAT if width == 1 else T.vec(width, T.FLOAT)

        def c(v):
            e = const_float(T.FLOAT, v)
            return e if width == 1 else splat(vt, e)

        def bc(v):  # broadcast an fp32 scalar argument
            if width == 1:
                return v
            ins = b.insertelement(zeroinit(vt), v, i32(0), "bc")
            return b.shufflevector(ins, ins, [0] * width, "bcast")
        if kind == "identity":
            return x
        if kind == "bias":
            nb = 4 * width
            off = b.mul(n_elem, i32(4), "bias_byte")
            return b.fadd(x, b.call(_LOAD_KEY[nb], [self.rbias, off, i32(0), i32(0)], "bias"), "biased")
        if kind == "scale":
            return b.fmul(x, bc(self.p("scale")), "scaled")
        if kind == "relu":
            neg = b.fcmp("olt", x, c(0.0), "neg")
            return b.select(neg, c(0.0), x, "relu")
        lo, hi = bc(self.p("clamp_lo")), bc(self.p("clamp_hi"))
        below = b.fcmp("olt", x, lo, "below")
        x1 = b.select(below, lo, x, "clamp_l")
        above = b.fcmp("ogt", x1, hi, "above")
        return b.select(above, hi, x1, "clamp_h")

    def store_d(self, x, m, n, ok, width: int):
        """Cast fp32 ``x`` (width 1 or OUT_VEC) and store it at D[m][kbase + n]."""
        b = self.b
        vt = self.et if width == 1 else T.vec(width, self.et)
        y = b.cast("fptrunc", x, vt, "d_val")
        self.store_d_raw(y, m, n, ok, width)

    def store_d_raw(self, y, m, n, ok, width: int):
        """Store ``width`` dtype elements ``y`` (already cast) at D[m][kbase + n]."""
        b = self.b
        raw = b.cast("bitcast", y, _raw_type(2 * width), "d_raw")
        kn = b.add(self.kbase, n, "d_ch")
        e = b.add(b.mul(m, self.p("K"), "d_rowe"), kn, "d_elem")
        off = b.mul(e, i32(2), "d_byte")
        off = b.select(ok, off, self.oob_d, "d_off")
        b.call(_STORE_KEY[2 * width], [raw, self.rd, off, i32(0), i32(0)])

    def ws_offset(self, slab, m, n, ok, hint):
        """Byte offset of ws[slab][m][kbase + n] (or the out-of-range offset)."""
        b = self.b
        rows = b.add(b.mul(slab, self.p("M"), hint + "_slabm"), m, hint + "_row")
        kn = b.add(self.kbase, n, hint + "_ch")
        e = b.add(b.mul(rows, self.p("K"), hint + "_rowe"), kn, hint + "_elem")
        off = b.mul(e, i32(4), hint + "_byte")
        return b.select(ok, off, self.oob_ws, hint + "_off")

    def out_elem(self, x, m, n, ok, width: int):
        """Write one fp32 element/vector of the tile: the slab (split) or D (plain)."""
        b = self.b
        if self.split:
            off = self.ws_offset(self.slice, m, n, ok, "ws")
            b.call(_STORE_KEY[4 * width], [x, self.rws, off, i32(0), i32(0)])
        else:
            kn = b.add(self.kbase, n, "epi_ch")
            y = self.acc_epi(x, kn, width)
            self.store_d(y, m, n, ok, width)

    def epilogue(self):
        b = self.b
        exit_ = b.new_block("exit")
        if self.s["epilogue"] == "default":
            if self.wavelet:
                body = b.new_block("epi_compute")
                skip = b.new_block("epi_skip")
                b.cond_br(self.is_loader, skip, body)
                b.position(body)
                self.epilogue_default()
                b.br(skip)
                b.position(skip)
            else:
                self.epilogue_default()
        else:
            self.epilogue_cshuffle()
        if self.cluster:
            self.cluster_fold()
        b.br(exit_)
        b.position(exit_)
        b.ret_void()

    def d_vec_ok(self, vec: int = D_VEC, hint: str = "d"):
        """Wave-uniform: K and kpg are multiples of ``vec`` (D_VEC for D, OUT_VEC for
        fp32 slabs), so every ``vec``-channel vector at a multiple of ``vec`` is
        16-byte aligned and wholly inside or outside ``[0, kpg)`` (kernel arguments
        only)."""
        b = self.b
        kk = b.binop("or", self.p("K"), self.p("kpg"), hint + "_kk")
        low = b.binop("and", kk, i32(vec - 1), hint + "_klow")
        return b.icmp("eq", low, i32(0), hint + "_wide")

    def d_branch(self, vec_fn, scalar_fn, hint, vec: int = D_VEC, ok_hint: str = "d"):
        """``if d_vec_ok(vec): vec_fn() else: scalar_fn()`` (a uniform branch), then join."""
        b = self.b
        ok = self.d_vec_ok(vec, ok_hint)
        bv = b.new_block(hint + "_wide")
        bs = b.new_block(hint + "_narrow")
        bj = b.new_block(hint + "_done")
        b.cond_br(ok, bv, bs)
        b.position(bv)
        vec_fn()
        b.br(bj)
        b.position(bs)
        scalar_fn()
        b.br(bj)
        b.position(bj)

    def epilogue_default(self):
        """D: 16-byte stores through the per-wave LDS transpose when K and kpg allow
        (:meth:`default_v16`), else :meth:`default_scalar`; fp32 slabs: 16-byte
        stores through the fp32 transpose when K and kpg are multiples of OUT_VEC
        (:meth:`slab_v4`), else :meth:`default_scalar`."""
        if self.split:
            self.d_branch(self.slab_v4, self.default_scalar, "slab", OUT_VEC, "ws")
        else:
            self.d_branch(self.default_v16, self.default_scalar, "epi")

    def default_scalar(self):
        """Each lane stores its fragment elements: acc[i][j] element e is tile row
        wm0 + 16*i + 8*(lane/16) + e, tile column wn0 + 16*j + lane%16."""
        b = self.b
        rbase = b.mul(self.half, i32(8), "e_rbase")
        for i in range(self.fm):
            for j in range(self.fn):
                acc = self.accs[i * self.fn + j]
                col = b.add(b.add(self.wn0, i32(j * WMMA_N), "e_c"), self.lrow, "e_col")
                n = b.add(self.n0, col, "e_n")
                nok = b.icmp("ult", n, self.p("kpg"), "e_nok")
                for e in range(8):
                    row = b.add(b.add(self.wm0, i32(i * WMMA_M + e), "e_r"), rbase, "e_row")
                    m = b.add(self.m0, row, "e_m")
                    mok = b.icmp("ult", m, self.p("M"), "e_mok")
                    ok = b.binop("and", mok, nok, "e_ok")
                    x = b.extractelement(acc, i32(e), "e_x")
                    self.out_elem(x, m, n, ok, 1)

    def wave_barrier(self):
        """``llvm.amdgcn.wave.barrier``: no instruction, a code-motion barrier for the
        wave; it orders the transpose's cross-lane LDS writes and reads (RAW: stores
        then loads of one accumulator; WAR: the loads, then the next accumulator's
        stores to the same region) in LLVM's memory model."""
        self.b.call("wave_barrier", [])

    def default_v16(self):
        """Per-wave LDS transpose (the region of wave w: DT_ROW*16 elements at
        w*16*DT_ROW, aliasing A/B after the main loop's last barrier; only this
        wave touches it). Per accumulator: lane l writes its 8 elements (epilogue
        applied, cast) to region rows 8*(l/16) + e, column l%16 (b16 stores); a
        wave barrier; then lane l reads row l%16, columns 8*(l/16) + [0,8) (one
        b128 load) and stores them as one 16-byte buffer store at tile row
        wm0 + 16*i + l%16, column wn0 + 16*j + 8*(l/16). A wave barrier precedes
        every accumulator's writes but the first."""
        b = self.b
        lds = self.lds["lds"]
        rb = b.mul(self.wave, i32(16 * DT_ROW), "dt_base")
        wcol = b.add(rb, self.lrow, "dt_wcol")
        rbase = b.mul(self.half, i32(8), "e_rbase")
        rrow = b.add(rb, b.mul(self.lrow, i32(DT_ROW), "dt_rrow"), "dt_rd")
        rd = b.add(rrow, rbase, "dt_rdc")
        for i in range(self.fm):
            for j in range(self.fn):
                acc = self.accs[i * self.fn + j]
                if i or j:
                    self.wave_barrier()
                col = b.add(b.add(self.wn0, i32(j * WMMA_N), "e_c"), self.lrow, "e_col")
                n = b.add(self.n0, col, "e_n")
                kn = b.add(self.kbase, n, "epi_ch")
                for e in range(8):
                    x = b.extractelement(acc, i32(e), "e_x")
                    y = self.acc_epi(x, kn, 1)
                    h = b.cast("fptrunc", y, self.et, "d_val")
                    r = b.add(rbase, i32(e), "dt_r")
                    idx = b.add(wcol, b.mul(r, i32(DT_ROW), "dt_wrow"), "dt_widx")
                    p = b.gep(self.et, lds, [idx], "dt_p")
                    b.store(h, p, 2)
                self.wave_barrier()
                p = b.gep(self.et, lds, [rd], "dt_p")
                v = b.load(T.vec(D_VEC, self.et), p, 16, "dt_v")
                row = b.add(b.add(self.wm0, i32(i * WMMA_M), "dt_rorg"), self.lrow, "dt_row")
                m = b.add(self.m0, row, "e_m")
                cn = b.add(b.add(self.wn0, i32(j * WMMA_N), "dt_corg"), rbase, "dt_col")
                n = b.add(self.n0, cn, "e_n")
                mok = b.icmp("ult", m, self.p("M"), "e_mok")
                nok = b.icmp("ult", n, self.p("kpg"), "e_nok")
                ok = b.binop("and", mok, nok, "e_ok")
                self.store_d_raw(v, m, n, ok, D_VEC)

    def slab_v4(self):
        """fp32 slab transpose (two-stage split-K, K and kpg multiples of OUT_VEC):
        the region of wave w is WT_ROW*16 floats at w*16*WT_ROW (aliasing A/B after
        the main loop's last barrier; only this wave touches it). Per accumulator:
        lane l writes its 8 fp32 elements to region rows 8*(l/16) + e, column l%16
        (b32 stores); a wave barrier; lane l reads row l%16, columns
        8*(l/16) + [0,4) and + [4,8) (two b128 loads) and stores each as one
        16-byte buffer store at ws[slice][m][kbase + n], m = m0 + wm0 + 16*i + l%16,
        n = n0 + wn0 + 16*j + 8*(l/16) + 4*h. A wave barrier precedes every
        accumulator's writes but the first."""
        b = self.b
        lds = self.lds["lds"]
        rb = b.mul(self.wave, i32(16 * WT_ROW), "wt_base")
        wcol = b.add(rb, self.lrow, "wt_wcol")
        rbase = b.mul(self.half, i32(8), "e_rbase")
        rrow = b.add(rb, b.mul(self.lrow, i32(WT_ROW), "wt_rrow"), "wt_rd")
        rd = b.add(rrow, rbase, "wt_rdc")
        for i in range(self.fm):
            for j in range(self.fn):
                acc = self.accs[i * self.fn + j]
                if i or j:
                    self.wave_barrier()
                for e in range(8):
                    x = b.extractelement(acc, i32(e), "e_x")
                    r = b.add(rbase, i32(e), "wt_r")
                    idx = b.add(wcol, b.mul(r, i32(WT_ROW), "wt_wrow"), "wt_widx")
                    p = b.gep(T.FLOAT, lds, [idx], "dt_p")
                    b.store(x, p, 4)
                self.wave_barrier()
                row = b.add(b.add(self.wm0, i32(i * WMMA_M), "dt_rorg"), self.lrow, "dt_row")
                m = b.add(self.m0, row, "e_m")
                mok = b.icmp("ult", m, self.p("M"), "e_mok")
                cn = b.add(b.add(self.wn0, i32(j * WMMA_N), "dt_corg"), rbase, "dt_col")
                for h in range(D_VEC // OUT_VEC):
                    c = b.add(rd, i32(OUT_VEC * h), "wt_rdh")
                    p = b.gep(T.FLOAT, lds, [c], "dt_p")
                    v = b.load(T.vec(OUT_VEC, T.FLOAT), p, 16, "wt_v")
                    n = b.add(self.n0, b.add(cn, i32(OUT_VEC * h), "wt_colh"), "e_n")
                    nok = b.icmp("ult", n, self.p("kpg"), "e_nok")
                    ok = b.binop("and", mok, nok, "e_ok")
                    off = self.ws_offset(self.slice, m, n, ok, "ws")
                    b.call(_STORE_KEY[4 * OUT_VEC], [v, self.rws, off, i32(0), i32(0)])

    def epilogue_cshuffle(self):
        """Compute waves write the accumulators to the fp32 LDS tile (aliasing A/B:
        every wave passed the main loop's last barrier, after its last A/B access);
        barrier; then all threads store row vectors: 16-byte D stores of D_VEC
        channels when K and kpg allow, else OUT_VEC-wide; OUT_VEC fp32 (16 bytes) to
        the slab. Surplus slots clamp to the last vector."""
        b = self.b
        lc = self.lds["lds"]
        if self.wavelet:
            body = b.new_block("cs_write")
            join = b.new_block("cs_join")
            b.cond_br(self.is_loader, join, body)
            b.position(body)
        rbase = b.mul(self.half, i32(8), "e_rbase")
        for i in range(self.fm):
            for j in range(self.fn):
                acc = self.accs[i * self.fn + j]
                col = b.add(b.add(self.wn0, i32(j * WMMA_N), "e_c"), self.lrow, "e_col")
                for e in range(8):
                    row = b.add(b.add(self.wm0, i32(i * WMMA_M + e), "e_r"), rbase, "e_row")
                    idx = b.add(b.mul(row, i32(self.ncp), "cs_rowi"), col, "cs_idx")
                    p = b.gep(T.FLOAT, lc, [idx], "cs_p")
                    b.store(b.extractelement(acc, i32(e), "e_x"), p, 4)
        if self.wavelet:
            b.br(join)
            b.position(join)
        self.barrier()
        if self.split:
            self.cshuffle_out(OUT_VEC)
        else:
            self.d_branch(lambda: self.cshuffle_out(D_VEC), lambda: self.cshuffle_out(OUT_VEC), "cs")

    def cshuffle_out(self, width: int):
        """The store phase of cshuffle: slot v -> row v / (tile_n/width), column
        width*(v % (tile_n/width)); LDS loads of OUT_VEC fp32 (b128), the epilogue
        per OUT_VEC, one store of ``width`` elements."""
        b = self.b
        lc = self.lds["lds"]
        per_row = self.tn // width
        count = self.tm * per_row
        v4 = T.vec(OUT_VEC, T.FLOAT)
        for j in range((count + self.threads - 1) // self.threads):
            v = b.add(self.tid, i32(j * self.threads), "cs_slot")
            if (j + 1) * self.threads > count:
                v = self.umin_const(v, count - 1, "cs_slotc")
            if width == D_VEC and per_row > PAIR_SLOTS and per_row % PAIR_SLOTS == 0:
                # 16 consecutive slots = PAIR_SLOTS of row 2p and PAIR_SLOTS of row 2p+1
                # (same columns): the two b128 C loads per slot stay conflict-free
                # (width OUT_VEC needs no pairing: 16 slots read 256 contiguous bytes)
                sl = b.binop("urem", v, i32(PAIR_SLOTS), "cs_sl")
                rest = b.binop("udiv", v, i32(PAIR_SLOTS), "cs_rest")
                rpar = b.binop("urem", rest, i32(2), "cs_rpar")
                rest = b.binop("udiv", rest, i32(2), "cs_rest")
                seg = b.binop("urem", rest, i32(per_row // PAIR_SLOTS), "cs_seg")
                pair = b.binop("udiv", rest, i32(per_row // PAIR_SLOTS), "cs_pair")
                row = b.add(b.mul(pair, i32(2), "cs_prow"), rpar, "cs_row")
                cv = b.add(b.mul(seg, i32(PAIR_SLOTS), "cs_segv"), sl, "cs_cv")
            else:
                row = b.binop("udiv", v, i32(per_row), "cs_row")
                cv = b.binop("urem", v, i32(per_row), "cs_cv")
            col = b.mul(cv, i32(width), "cs_col")
            idx = b.add(b.mul(row, i32(self.ncp), "cs_rowi"), col, "cs_idx")
            m = b.add(self.m0, row, "cs_m")
            n = b.add(self.n0, col, "cs_n")
            mok = b.icmp("ult", m, self.p("M"), "cs_mok")
            nok = b.icmp("ult", n, self.p("kpg"), "cs_nok")
            ok = b.binop("and", mok, nok, "cs_ok")
            if width == OUT_VEC:
                p = b.gep(T.FLOAT, lc, [idx], "cs_p")
                x = b.load(v4, p, 16, "cs_x")
                self.out_elem(x, m, n, ok, OUT_VEC)
                continue
            parts = []
            for h in range(width // OUT_VEC):
                ih = b.add(idx, i32(h * OUT_VEC), "cs_idxh") if h else idx
                p = b.gep(T.FLOAT, lc, [ih], "cs_p")
                x = b.load(v4, p, 16, "cs_x")
                nh = b.add(n, i32(h * OUT_VEC), "cs_nh") if h else n
                kn = b.add(self.kbase, nh, "epi_ch")
                parts.append(self.acc_epi(x, kn, OUT_VEC))
            y = b.shufflevector(parts[0], parts[1], list(range(width)), "cs_y")
            dv = b.cast("fptrunc", y, T.vec(width, self.et), "d_val")
            self.store_d_raw(dv, m, n, ok, width)

    def cluster_fold(self):
        """After every slab of the cluster is stored: cluster barrier between
        cluster-scope release/acquire fences, then this workgroup (rank = slice)
        folds tile rows [rank*R, rank*R + R), R = ceil(tile_m / S), over slabs
        0..S-1 in order and stores D: D_VEC channels (16 bytes) per slot when K
        and kpg allow, else OUT_VEC."""
        b = self.b
        b.fence("cluster", "release")
        b.call("s_cluster_barrier", [])
        b.fence("cluster", "acquire")
        self.d_branch(lambda: self.fold_out(D_VEC), lambda: self.fold_out(OUT_VEC), "fold")

    def fold_out(self, width: int):
        """The fold's slots: ``width`` channels each, slabs read OUT_VEC fp32 at a
        time (16 bytes), summed from slab 0 in order."""
        b = self.b
        S = self.cluster
        R = (self.tm + S - 1) // S
        per_row = self.tn // width
        count = R * per_row
        r0 = b.mul(self.slice, i32(R), "f_rorg")
        for j in range((count + self.threads - 1) // self.threads):
            v = b.add(self.tid, i32(j * self.threads), "f_slot")
            if (j + 1) * self.threads > count:
                v = self.umin_const(v, count - 1, "f_slotc")
            rr = b.binop("udiv", v, i32(per_row), "f_rr")
            cv = b.binop("urem", v, i32(per_row), "f_cv")
            col = b.mul(cv, i32(width), "f_col")
            row = b.add(r0, rr, "f_row")
            m = b.add(self.m0, row, "f_m")
            n = b.add(self.n0, col, "f_n")
            rok = b.icmp("ult", row, i32(self.tm), "f_rok")
            mok = b.icmp("ult", m, self.p("M"), "f_mok")
            nok = b.icmp("ult", n, self.p("kpg"), "f_nok")
            ok = b.binop("and", rok, mok, "f_ok")
            ok = b.binop("and", ok, nok, "f_ok")
            total = None
            for sl in range(S):
                off = self.ws_offset(i32(sl), m, n, ok, "f")
                x = b.call(_LOAD_KEY[4 * OUT_VEC], [self.rws, off, i32(0), i32(0)], "f_slab")
                if width > OUT_VEC:
                    off2 = b.add(off, i32(4 * OUT_VEC), "f_offh")
                    x2 = b.call(_LOAD_KEY[4 * OUT_VEC], [self.rws, off2, i32(0), i32(0)], "f_slab")
                    x = b.shufflevector(x, x2, list(range(width)), "f_slabw")
                total = x if total is None else b.fadd(total, x, "f_sum")
            self.store_d(total, m, n, ok, width)

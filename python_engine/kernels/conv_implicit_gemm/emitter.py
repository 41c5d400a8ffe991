"""The emitter of family ``conv_implicit_gemm``: the :class:`Kernel` state, its
small helpers, the prologue values, and :func:`build` (twin:
cpp_engine/src/kernels/conv_implicit_gemm/emitter.h, emitter.cpp).

:class:`Kernel` is one class whose methods are split by phase into mixins, each
in the module named after its phase (the C++ twin defines the same methods of
its class ``Kernel`` in the .cpp file of the same name): :mod:`.slots` (global
-> LDS load slots, the K walk), :mod:`.mainloop` (WMMA and the K loop),
:mod:`.taploop` and :mod:`.taptile` (the uniform-tap K loops),
:mod:`.epilogue` (accumulator epilogue, default and cshuffle stores) and
:mod:`.cluster_fold`. The builder call order decides the SSA numbering and the
bytes; :meth:`Kernel.emit` calls the phases in order."""
from __future__ import annotations

from ...ir import types as T
from ...ir.builder import IRBuilder
from ...ir.values import const_int, i32
from .. import acc_epilogue, conv_abi
from ..common import kernel_attrs, new_module
from .cluster_fold import ClusterFold
from .epilogue import Epilogue
from .lds import PAD_C, PIXEL_VECTORS, lds_layout, lds_parts, pixel_slot, swizzle
from .mainloop import MainLoop, tap_beside_waves
from .slots import Slots
from .taploop import TapLoop
from .taptile import TapTile
from .spec import DTYPES, WAVE, WMMA_M, WMMA_N, kernel_name, threads


def build(spec: dict, arch, flavor):
    """Build the module of a valid spec; returns (kernel name, Module)."""
    name = kernel_name(spec, arch, flavor)
    variant = conv_abi.variant_of(spec["split_k"], spec["split_k_cluster"])
    s = spec["split_k_cluster"]
    attrs = kernel_attrs(threads(spec), (1, 1, s) if s else None, tap_beside_waves(spec))
    m, fn = new_module(flavor, arch, name, conv_abi.params(variant), attrs)
    b = IRBuilder(m, fn)
    Kernel(b, spec).emit()
    return name, m


class Kernel(Slots, MainLoop, TapLoop, TapTile, Epilogue, ClusterFold):
    """Emits one kernel (C++ twin: class Kernel, emitter.h). Here: the state, the
    small helpers and the prologue values; the phase methods come from the mixins,
    one module per phase. Within each module, method order is emission order (the
    bytes depend on it)."""

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
        self.mmra_local = None   # metadata id of the LDS-only fence annotation, once emitted

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

    def barrier(self, lds_only: bool = False):
        """Workgroup barrier between a release and an acquire fence of workgroup scope;
        ``lds_only``: the fences order LDS only (:meth:`lds_fence_mmra`), so the
        release does not wait for global loads in flight."""
        b = self.b
        mmra = self.lds_fence_mmra() if lds_only else None
        b.fence("workgroup", "release", mmra)
        b.call("s_barrier", [])
        b.fence("workgroup", "acquire", mmra)

    def lds_fence_mmra(self):
        """The metadata node ``!{!"amdgpu-synchronize-as", !"local"}`` (added to the
        module on first use): a memory model relaxation annotation that makes a fence
        synchronize the LDS address space only (LLVM AMDGPUUsage, "Memory Model
        Relaxation Annotations"; without it a workgroup release fence waits for every
        global load in flight, s_wait_loadcnt 0)."""
        md = self.b.module.metadata
        if self.mmra_local is None:
            self.mmra_local = f"!{len(md) - 1}"
            md.append(self.mmra_local + ' = !{!"amdgpu-synchronize-as", !"local"}')
        return self.mmra_local

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
        if acc_epilogue.has(s["acc_epilogue"], "bias") and (not self.split or self.cluster):
            # Stage 1 of two-stage stores raw fp32 partials: Stage 2 applies the epilogue
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


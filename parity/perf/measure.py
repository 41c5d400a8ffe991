"""One kernel's static performance figures (:class:`Measure`) from its compiled assembly.

* the main loop (:mod:`.loop`) and its instruction mix; a kernel without a
  loop, or without WMMA whose code outside every loop loads more global
  bytes than its main loop (the reduce kernel at an unrolled degree: its one
  loop is the element-wise tail), is measured whole, once (``loop_source``
  "whole-kernel"); non-WMMA instructions
  per WMMA, global and LDS bytes per WMMA (:mod:`.mix`);
* K tiles per loop iteration: the loop's WMMAs over the WMMAs one K tile
  needs per wave, ``(tile_m / (16 waves_m)) * (tile_n / (16 waves_n)) *
  (tile_k / 32)`` (16x16x32 WMMA, conv_implicit_gemm's spec), so an unrolled
  loop is still compared per K tile;
* predicted cycles per iteration from llvm-mca (:mod:`.mca`), whole body and
  without barriers, and the barrier model's figure (:mod:`.barrier`: no-barrier
  cycles plus each barrier's exposed latency, an assumption);
* resources from the code-object metadata (parity/verify/isa_report.py):
  VGPRs, SGPRs, spills, scratch, LDS, and occupancy -- LLVM's own waves per
  SIMD, plus the VGPR-limited and LDS-limited waves by the gfx1250 rules
  documented (with their LLVM sources) in isa_report;
* the prefetch distance of the loop's global loads (:mod:`.prefetch`): the
  barriers, WMMAs and LDS loads between a load and the first use of its value,
  and the K tiles of work that makes;
* the epilogue's stores: {bytes per lane: count} of the global/buffer stores
  after the main loop (D, or the workspace slab for two-stage Stage 1; all of
  a loop-free kernel's stores).

``bank_conflicts`` stays None here: the emulator's LDS bank-conflict count
(parity/sim) is attached by the launch step (parity/perf/banks.py through
:func:`attach_bank_conflicts`, for the targets).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import barrier as BAR
from . import mca as MCA
from . import prefetch as PF
from .loop import LoopError, kernel_blocks, main_loop
from .mix import Mix, mix, store_widths

#: the IR blocks of the loop measured as :attr:`Measure.fallback`, the first the kernel has,
#: for a kernel with the uniform-tap loop (``%tap_loop``): the tap-tile K loop that
#: conv_implicit_gemm's kernels of its tiles run for cpg an odd multiple of tile_k
#: (docs/conv_implicit_gemm.md, "Tap-tile loop"), else the K walk's loop (``%kloop``)
FALLBACK_LOOPS = (("%taptile_loop", "tap-tile loop"), ("%kloop", "K walk"))
TAP_LOOP = "%tap_loop"

WMMA_M, WMMA_N, WMMA_K = 16, 16, 32  # v_wmma_f32_16x16x32_{bf16,f16} (conv_implicit_gemm's WMMA)


def wmma_per_k_tile(spec: dict) -> int | None:
    """WMMAs one wave issues per K tile for a conv_implicit_gemm spec (None for other specs)."""
    try:
        fm = spec["tile_m"] // (WMMA_M * spec["waves_m"])
        fn = spec["tile_n"] // (WMMA_N * spec["waves_n"])
        return fm * fn * (spec["tile_k"] // WMMA_K)
    except (KeyError, TypeError, ZeroDivisionError):
        return None


@dataclass
class Measure:
    kernel: str
    ok: bool = True
    error: str = ""
    loop_header: str = ""
    loop_source: str = ""
    loop_blocks: int = 0
    loops: int = 0
    mix: Mix | None = None
    k_tiles_per_iteration: float | None = None
    mca: dict | None = None           # {"full": MCAResult json, "no_barrier": ..., "barrier_model": ...}
    mca_error: str = ""
    vgprs: int | None = None
    sgprs: int | None = None
    vgpr_spills: int | None = None
    sgpr_spills: int | None = None
    scratch_bytes: int | None = None
    lds_bytes: int | None = None
    wg_size: int | None = None
    occupancy: int | None = None
    waves_vgpr: int | None = None
    waves_lds: int | None = None
    epilogue_stores: dict = field(default_factory=dict)   # bytes per lane -> count
    prefetch: dict | None = None          # parity.perf.prefetch.prefetch() of the loop body
    prefetch_tiles: float | None = None   # K tiles of WMMA and LDS-load work hiding the loads
    bank_conflicts: int | None = None
    problems: list = field(default_factory=list)
    #: the fallback loop (FALLBACK_LOOPS) beside a uniform-tap main loop: {"loop", "insns",
    #: "wmma", "non_wmma_per_wmma", "k_tiles", "prefetch_tiles", "no_barrier_per_k_tile"}
    fallback: dict | None = None

    # -- figures used by tables and goals --------------------------------------------------
    @property
    def non_wmma_per_wmma(self) -> float | None:
        return self.mix.per_wmma(self.mix.non_wmma) if self.mix else None

    def cycles(self, which: str = "full") -> float | None:
        r = (self.mca or {}).get(which)
        return r["cycles_per_iteration"] if r else None

    @classmethod
    def from_json(cls, d: dict) -> "Measure":
        """The Measure that :meth:`to_json` wrote (derived keys of the mix dropped)."""
        m = cls(d["kernel"])
        for k, v in d.items():
            if k in cls.__dataclass_fields__ and k not in ("mix", "epilogue_stores"):
                setattr(m, k, v)
        m.epilogue_stores = {int(k): v for k, v in (d.get("epilogue_stores") or {}).items()}
        if d.get("mix"):
            m.mix = Mix(**{k: d["mix"][k] for k in Mix.__dataclass_fields__})
        return m

    def to_json(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k != "mix"}
        d["mix"] = self.mix.to_json() if self.mix else None
        d["epilogue_stores"] = {str(k): v for k, v in self.epilogue_stores.items()}
        return d


def measure(asm: str, kernel: str, isa: dict, spec: dict, *, mca_tool: str | None,
            mca_timeout: float = 120.0) -> Measure:
    """The :class:`Measure` of ``kernel`` from its assembly ``asm`` and ISA report ``isa``
    (parity.verify.isa_report.ISAReport.to_json()); ``mca_tool`` None skips llvm-mca."""
    from parity.verify.isa_report import occupancy_gfx1250  # PyYAML ([verify] extra) via parity.verify.isa_report
    m = Measure(kernel)
    for k in ("vgprs", "sgprs", "vgpr_spills", "sgpr_spills", "scratch_bytes", "lds_bytes", "wg_size",
              "occupancy"):
        setattr(m, k, isa.get(k))
    if m.vgprs is not None:
        m.waves_vgpr = occupancy_gfx1250(m.vgprs, 0, None)
    if m.wg_size:
        m.waves_lds = occupancy_gfx1250(0, m.lds_bytes or 0, m.wg_size)
    whole = False
    marks = []
    try:
        ml = main_loop(asm, kernel)
        body, after, marks = ml.body, ml.after, ml.marks
        m.loop_header, m.loop_source, m.loop_blocks, m.loops = (ml.loop.header, ml.loop.source,
                                                              len(ml.loop.blocks), ml.loops)
        m.problems += ml.problems
        # no WMMA, and the code in no loop moves more global bytes than the loop (an unrolled
        # reduce degree: its loop is the element-wise tail): the straight-line code is the work
        whole = mix(body).wmma == 0 and _load_bytes(ml.outside) > _load_bytes(body)
    except LoopError as exc:
        if "has no loop" not in str(exc):
            m.problems.append(str(exc))
            return m
        whole = True
    if whole:
        # the whole kernel, once, is its one "iteration"
        blocks = kernel_blocks(asm, kernel)
        body = after = [s for b in blocks for s in b.instructions]
        m.loop_header, m.loop_source, m.loop_blocks = "", "whole-kernel", len(blocks)
    m.mix = mix(body)
    per = wmma_per_k_tile(spec)
    if per and m.mix.wmma:
        m.k_tiles_per_iteration = m.mix.wmma / per
        if not whole:
            m.prefetch = PF.prefetch(body, marks)
            ds_loads = sum(1 for x in body if x.split(None, 1)[0].startswith("ds_load"))
            m.prefetch_tiles = PF.tiles(m.prefetch, per, ds_loads / m.k_tiles_per_iteration)
    m.epilogue_stores = store_widths(after)
    if mca_tool is not None:
        try:
            m.mca = {"full": MCA.run(body, tool=mca_tool, timeout=mca_timeout).to_json(),
                     "no_barrier": MCA.run(MCA.without_barriers(body), tool=mca_tool,
                                           timeout=mca_timeout).to_json()}
            m.mca["barrier_model"] = BAR.model(body, m.mca["no_barrier"]["cycles_per_iteration"], mca_tool,
                                               mca_timeout)
        except MCA.MCAError as exc:
            m.mca_error = str(exc)
    if per and not whole:
        m.fallback = fallback(asm, kernel, per, mca_tool, mca_timeout)
    return m


def fallback(asm: str, kernel: str, per: int, mca_tool: str | None, mca_timeout: float) -> dict | None:
    """The figures of the first FALLBACK_LOOPS loop of ``kernel`` (None when the kernel has
    no uniform-tap loop, or none of them): its name (``loop``), instructions, WMMAs,
    non-WMMA per WMMA, K tiles per iteration (``per`` WMMAs a K tile), prefetch in K tiles
    and llvm-mca cycles per K tile without barriers (None without ``mca_tool``)."""
    try:
        main_loop(asm, kernel, named=TAP_LOOP)
    except LoopError:
        return None
    for block, name in FALLBACK_LOOPS:
        try:
            ml = main_loop(asm, kernel, named=block)
        except LoopError:
            continue
        mx = mix(ml.body)
        if mx.wmma:
            break
    else:
        return None
    kt = mx.wmma / per
    ds_loads = sum(1 for x in ml.body if x.split(None, 1)[0].startswith("ds_load"))
    out = {"loop": name, "insns": mx.total, "wmma": mx.wmma, "non_wmma_per_wmma": mx.per_wmma(mx.non_wmma),
           "k_tiles": kt, "prefetch_tiles": PF.tiles(PF.prefetch(ml.body, ml.marks), per, ds_loads / kt),
           "no_barrier_per_k_tile": None}
    if mca_tool is not None:
        try:
            r = MCA.run(MCA.without_barriers(ml.body), tool=mca_tool, timeout=mca_timeout)
            out["no_barrier_per_k_tile"] = r.cycles_per_iteration / kt
        except MCA.MCAError as exc:
            out["mca_error"] = str(exc)
    return out


def _load_bytes(lines: list[str]) -> int:
    return mix(lines).global_load_bytes


def attach_bank_conflicts(measures: dict, counts: dict) -> None:
    """Set ``bank_conflicts`` of ``measures`` ({FAMILY/CONFIG: Measure}) from ``counts``
    ({FAMILY/CONFIG: conflicts counted by the emulator on a launch})."""
    for key, n in counts.items():
        if key in measures:
            measures[key].bank_conflicts = int(n)

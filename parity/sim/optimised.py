"""The opt lane: every numerics case also run on the module after LLVM's optimizer
(DESIGN §7.4; docs/sim.md, "The IR after LLVM's optimizer").

hipcc and comgr run LLVM's middle end (``-O3``) before code generation; the
project's own compile path (llvmlite's code generator) does not, so the
promises the engines' IR makes (flags, attributes) are exploited only there.
This lane runs each case of a config twice -- the engines' module and the same
module after ``-O3`` for the config's arch -- and requires every buffer of the
case (D, the workspace, every guard byte) to be bit-identical. A difference is
either a promise the IR cannot keep (LLVM transformed on its strength) or an
emulator bug; both are failures naming the buffer and the first byte.

Which LLVM optimises which flavor: the lane runs the ``llvm23`` text the
numerics oracle runs (:data:`parity.sim.numerics.FLAVOR`), through llvmlite's
LLVM 22.1 (the LLVM of the validity oracle and the project's compile path)
with its new pass manager: ``PassBuilder(target machine amdgcn-amd-amdhsa,
cpu=arch, -O3)`` and the default ``<O3>`` module pipeline with loop and SLP
vectorization on, as clang -O3 and ``opt -O3`` set them (checked: the output
equals Debian's ``opt-22 -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1250``,
LLVM 22.1.8, on all 250 accepted configs but for the ``"target-cpu"``
attribute opt's ``-mcpu`` adds). llvm22 text differs from llvm23 only in
the datalayout's mangling component; llvm20 text is not optimised: Debian's
LLVM 19 has an AMDGPU target but no gfx1250 (its newest GFX12 CPU is gfx1201),
and the kernels call gfx1250-only intrinsics.

The optimised text goes to the emulator through :func:`normalise`, the
"optimised module" mode: what LLVM *deduced* is accepted there and not checked
(it is LLVM's inference, not the engines' promise), each kind listed in
:data:`ACCEPTED` with its reason; the kernel's signature and attribute groups
are the engines' own (LLVM's inferred parameter and function attributes are
dropped; a string attribute the engines wrote that opt changed is a failure).
Anything else outside the emulator's subset stays a ParseError/Unsupported
naming the line: a failure, never a skip.

Hook: :func:`wrap_case` turns a :class:`parity.sim.numerics.Case` into one
whose check also runs the case on the optimised modules and compares; the
numerics runner applies it to every case when ``parity numerics --opt`` (or
``parity write``) asks (``_Lowerer.wrap_case``). It compares "optimised vs
unoptimised on the same cases", whatever the plan's case list is.
"""
from __future__ import annotations

import dataclasses
import re
import time

import numpy as np

from parity.llvm import compile as llvm_compile, compile_cache
from parity.sim import ir
from parity.sim import reference as REF
from parity.sim.errors import SimError

#: decorations of opt's output accepted (stripped before parsing) in the optimised mode:
#: (name, pattern, replacement, why it may be dropped)
ACCEPTED = (
    ("block comment", re.compile(r"^([-A-Za-z$._0-9]+:)\s+;.*$"), r"\1",
     "`; preds = ...` after a block label: a comment"),
    ("unnamed_addr", re.compile(r" (local_)?unnamed_addr\b"), "",
     "the kernel's address is not significant: no effect on its execution"),
    ("tail call", re.compile(r"\b(tail|notail|musttail) call\b"), "call",
     "a tail-call marker of an intrinsic call: no effect on its value"),
    ("!amdgpu.noclobber", re.compile(r", !amdgpu\.noclobber ![0-9]+"), "",
     "LLVM's deduction (AMDGPUAnnotateUniformValues) that no store of the kernel clobbers the load's memory: "
     "not checked here (a code-generation hint: scalar loads)"),
    ("!llvm.loop", re.compile(r", !llvm\.loop ![0-9]+"), "",
     "loop metadata (isvectorized, unroll hints): no semantics"),
    ("icmp samesign", re.compile(r"\bicmp samesign "), "icmp ",
     "a poison flag LLVM deduced (operands of one sign): not checked in this mode"),
    ("nneg", re.compile(r"\b(zext|uitofp) nneg "), r"\1 ",
     "a poison flag LLVM deduced (a non-negative operand): not checked in this mode"),
    ("trunc nuw/nsw", re.compile(r"\btrunc (nuw |nsw )+"), "trunc ",
     "poison flags LLVM deduced (no bits lost): not checked in this mode"),
    ("getelementptr nuw/nusw", re.compile(r"\bgetelementptr (inbounds )?(nuw |nusw )+"), r"getelementptr \1",
     "offset-wrap flags LLVM deduced (inbounds is kept, as the engines' subset has it): not checked here"),
)

_SPLAT = re.compile(r"splat \(([a-z0-9]+) ([^()]+)\)")
_VEC_LIT = re.compile(r"<((?:\s*(?:i\d+|half|bfloat|float|double) [^,<>()]+,)*\s*(?:i\d+|half|bfloat|float|double) "
                      r"[^,<>()]+)>")
_ZERO = {"half": "0xH0000", "bfloat": "0xR0000", "float": "0.0", "double": "0.0"}
_ATTR_LINE = re.compile(r"^attributes #\d+ = ")
_DEFINE = re.compile(r"^define ")


def _literal(m) -> str:
    """A vector literal with its poison elements as zeros (the emulator reads poison as
    zero; a poison shufflevector mask element picks element 0, a refinement LangRef allows)."""
    out = re.sub(r"\b(i\d+|half|bfloat|float|double) poison\b",
                 lambda e: f"{e.group(1)} {_ZERO.get(e.group(1), '0')}", m.group(1))
    return f"<{out}>"


def _splat(line: str) -> str:
    """``splat (T v)`` written out as ``<T v, T v, ...>``, its length from the nearest
    ``<n x T>`` before it on the line (the operand's type: ``add <2 x i64> %a, splat
    (i64 2)``); left as it is (a ParseError later) when there is none."""
    out, pos = [], 0
    for m in _SPLAT.finditer(line):
        ety, val = m.group(1), m.group(2).strip()
        types = re.findall(rf"<(\d+) x {re.escape(ety)}>", line[:m.start()])
        if not types:
            continue
        n = int(types[-1])
        out.append(line[pos:m.start()] + "<" + ", ".join([f"{ety} {val}"] * n) + ">")
        pos = m.end()
    return "".join(out) + line[pos:]


def normalise(opt_text: str, original: str) -> str:
    """``opt_text`` (a module after opt) in the emulator's subset, the optimised mode:
    every :data:`ACCEPTED` decoration stripped, ``splat (T v)`` constants written out,
    poison elements of vector literals made zero, and the kernel's ``define`` line and
    attribute groups replaced by ``original``'s (the engines' module: LLVM's inferred
    attributes are dropped). Lines keep their numbers (an error's line is the opt
    output's line). Raises SimError when the signature or an attribute the engines
    wrote differs between the two."""
    orig_lines = original.split("\n")
    odef = [ln for ln in orig_lines if _DEFINE.match(ln)]
    oattrs = [ln for ln in orig_lines if _ATTR_LINE.match(ln)]
    out = []
    for ln in opt_text.split("\n"):
        if _ATTR_LINE.match(ln):
            out.append("; " + ln)   # kept as a comment: the line numbers stay
            continue
        for _name, rx, rep, _why in ACCEPTED:
            ln = rx.sub(rep, ln)
        if "splat (" in ln:
            ln = _splat(ln)
        if "poison" in ln and "<" in ln:
            ln = _VEC_LIT.sub(_literal, ln)
        if _DEFINE.match(ln) and len(odef) == 1:
            _same_signature(ln, odef[0])
            ln = odef[0]
        out.append(ln)
    _same_attributes(opt_text, original)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out + oattrs) + "\n"


def _sig(line: str) -> tuple:
    """(kernel name, ((parameter type, name), ...)) of a ``define`` line."""
    m = re.match(r"define amdgpu_kernel void @([-A-Za-z$._0-9]+)\((.*)\)", line)
    if not m:
        raise SimError(f"optimised module: unsupported define: {line}")
    params, depth, cur = [], 0, ""
    for ch in m.group(2) + ",":
        if ch == "," and depth == 0:
            t = re.match(r"\s*(ptr addrspace\(\d+\)|ptr|i\d+|half|bfloat|float|double)\b.*%([-A-Za-z$._0-9]+)\s*$", cur)
            params.append(t.groups() if t else cur.strip())
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    return m.group(1), tuple(params)


def _same_signature(opt_line: str, orig_line: str) -> None:
    if _sig(opt_line) != _sig(orig_line):
        raise SimError(f"optimised module: opt changed the kernel signature: {opt_line} (was {orig_line})")


def _same_attributes(opt_text: str, original: str) -> None:
    """Every ``"key"="value"`` attribute of the engines' module is in opt's output with
    the same value (opt adds ``"target-cpu"`` and ``"amdgpu-no-*"``; it must not change
    what the engines promised: the work-group size, the cluster dims, ...)."""
    have = dict(ir._ATTR_RX.findall("\n".join(ln for ln in opt_text.split("\n") if _ATTR_LINE.match(ln))))
    for k, v in ir._ATTR_RX.findall("\n".join(ln for ln in original.split("\n") if _ATTR_LINE.match(ln))):
        if have.get(k) != v:
            raise SimError(f"optimised module: attribute \"{k}\"=\"{v}\" of the engines' module is "
                           f"{'missing' if k not in have else repr(have[k])} after opt -O3")


# -- running opt ---------------------------------------------------------------------------------

PIPELINE = "default<O3> (llvmlite PassBuilder, loop + SLP vectorization)"


def optimise(text: str, arch: str) -> tuple[str, bool]:
    """``(text after -O3 for amdgcn-amd-amdhsa / arch, from the compile cache?)``.
    The module is parsed and verified first (llvm_compile.parse_verify: a CompileError
    naming the stage for bad IR), then LLVM 22.1's default O3 pipeline runs in this
    process (module doc). Cached in the compile cache (parity/llvm/compile_cache.py) under
    kind ``opt-O3-ir`` keyed by the text's sha256, the LLVM and llvmlite versions,
    the CPU and the pipeline."""
    k = compile_cache.key("opt-O3-ir", text, llvm=_llvm_key(), cpu=arch, pipeline=PIPELINE) \
        if compile_cache.cache_dir() is not None else None
    e = compile_cache.load(k) if k else None
    if e is not None:
        return e.data.decode("utf-8"), True
    llvm = llvm_compile.binding()
    m = llvm_compile.parse_verify(text)
    tm = llvm_compile.target_machine(m.triple or llvm_compile.DEFAULT_TRIPLE, arch)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_interleaving = True
    pto.loop_unrolling = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(m, pb)
    out = str(m)
    if k:
        compile_cache.store(k, {"arch": arch, "pipeline": PIPELINE}, out.encode("utf-8"))
    return out, False


def _llvm_key() -> str:
    import llvmlite  # the [verify] extra, as for every compile

    return f"LLVM {llvm_compile.llvm_version()} (llvmlite {llvmlite.__version__})"


# -- the lane ------------------------------------------------------------------------------------

@dataclasses.dataclass
class Stats:
    """The lane's cost in one process: seconds in opt (cache hits included), seconds
    emulating the optimised modules, wave-instructions, cases compared, modules optimised
    and how many of those came from the cache."""

    opt_seconds: float = 0.0
    emulation_seconds: float = 0.0
    instructions: int = 0
    cases: int = 0
    order_cases: int = 0
    modules: int = 0
    cached: int = 0

    def as_dict(self) -> dict:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in dataclasses.asdict(self).items()}


def lowerer_class(base):
    """A lowerer class over ``base`` (parity.sim.numerics._Lowerer) that hands out the
    optimised, normalised text of every kernel a case names (the config's own kernel,
    Stage 2, the invariant twins)."""

    class OptLowerer(base):
        def __init__(self, stats: Stats, *args):
            super().__init__(*args)
            self.coverage = False     # coverage is the engines' module's (the plain run's)
            self.stats = stats

        def text(self, family, spec, arch, flavor=None):
            orig = super().text(family, spec, arch) if flavor is None else super().text(family, spec, arch, flavor)
            t0 = time.perf_counter()
            try:
                opt, cached = optimise(orig, arch)
            except llvm_compile.CompileError as exc:
                raise SimError(f"optimised module: opt -O3 failed: {exc}") from None
            self.stats.opt_seconds += time.perf_counter() - t0
            self.stats.modules += 1
            self.stats.cached += cached
            return normalise(opt, orig)

    return OptLowerer


class Lane:
    """The opt lane of one numerics process: an optimising lowerer (its decoded kernels
    kept across configs, like the plain lowerer's) and the stats of the config running.
    ``base`` is the plain lowerer's class and ``args`` its constructor's arguments
    (``_Lowerer``; ``TextLowerer(family, spec, arch, text)`` for ``--ir``: then the
    given text is what opt optimises)."""

    def __init__(self, base, *args):
        self.stats = Stats()
        self.lowerer = lowerer_class(base)(self.stats, *args)

    def attach(self, lowerer) -> None:
        """Make the numerics runner apply this lane to every case ``lowerer`` runs."""
        lowerer.opt_lane = self
        lowerer.wrap_case = self.wrap_case

    def reset(self) -> None:
        self.stats = self.lowerer.stats = Stats()

    def wrap_case(self, case, run_case):
        """``case`` with a check that, after the case's own, runs it again on the
        optimised modules (``run_case(case, lowerer, orders)``, the runner's) and compares
        every final buffer bit for bit. A case that expects an emulator error is left as is."""
        if case.expect_error is not None:
            return case
        own = case.check

        def check(bufs):
            probs = own(bufs)
            return probs + self.compare(case, bufs, run_case)
        return dataclasses.replace(case, check=check)

    def run_order_cases(self, outcome, family: str, spec: dict, arch: str, plain_lowerer, numerics) -> None:
        """Run :func:`order_cases` of the config (plain and optimised, compared) and add
        their problems to ``outcome`` (a parity.sim.numerics.Outcome). ``numerics`` is the
        runner's module (parity.sim.numerics, handed in: it imports this module)."""
        run_case = numerics.run_case
        try:
            cases = order_cases(family, spec, arch, numerics)
        except Exception as exc:   # a plan bug is a failure of the config, never a traceback
            outcome.problems.append(f"opt lane order problems: {type(exc).__name__}: {exc}")
            cases = []
        for case in cases:
            try:
                probs, _ = run_case(self.wrap_case(case, run_case), plain_lowerer, case.orders)
            except Exception as exc:   # as run_config: an emulator or lowering failure is the case's
                probs = [f"{type(exc).__name__}: {exc}"]
            self.stats.order_cases += 1
            outcome.problems += [f"{case.name}: {p}" for p in probs]
        outcome.ok = not outcome.problems

    def compare(self, case, plain: dict, run_case) -> list:
        """Run ``case`` on the optimised modules (``run_case`` of parity.sim.numerics, the
        case's own launches and wave orders) and return the problems of
        :func:`compare_buffers` against ``plain`` (name -> the engines' module's final
        numpy buffer), or the one error the optimised run raised, as a string."""
        got = {}

        def capture(bufs):
            got.update({k: v.copy() for k, v in bufs.items()})
            return []
        t0, opt0 = time.perf_counter(), self.stats.opt_seconds
        try:
            _, n = run_case(dataclasses.replace(case, check=capture), self.lowerer, case.orders)
        except Exception as exc:   # SimError, ParseError (outside the subset), a lowering failure
            return [f"optimised module (opt -O3): {type(exc).__name__}: {exc}"]
        finally:   # opt's own time (the first case of a kernel optimises it) is counted apart
            self.stats.emulation_seconds += time.perf_counter() - t0 - (self.stats.opt_seconds - opt0)
        self.stats.instructions += n
        self.stats.cases += 1
        return compare_buffers(plain, got)


def compare_buffers(plain: dict, opt: dict) -> list:
    """Problems (empty when every buffer of ``plain`` has the same bytes in ``opt``): the
    first differing buffer, its first differing element (by the buffer's dtype) and how
    many elements differ."""
    out = []
    for name in sorted(plain):
        a, b = np.ascontiguousarray(plain[name]), np.ascontiguousarray(opt.get(name))
        if b is None or a.nbytes != b.nbytes:
            out.append(f"optimised module (opt -O3): buffer {name!r} missing or resized")
            continue
        ab, bb = a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)
        if np.array_equal(ab, bb):
            continue
        isz = a.dtype.itemsize
        bad = np.flatnonzero((ab != bb).reshape(-1, isz).any(axis=1)) if ab.size % isz == 0 else \
            np.flatnonzero(ab != bb)
        k = int(bad[0])
        av, bv = a.reshape(-1)[k], b.reshape(-1)[k]
        out.append(f"optimised module (opt -O3) differs from the engines' module: {name}[{k}] = {_show(bv)}, "
                   f"unoptimised {_show(av)} ({bad.size} of {a.size} elements differ)")
    return out


def _show(v) -> str:
    v = np.asarray(v)
    if v.dtype.kind == "f":
        return f"{float(v)!r} ({int(v.view(np.uint32 if v.itemsize == 4 else np.uint16 if v.itemsize == 2 else np.uint64)):#x})"
    return f"{int(v)} ({int(v):#x})"


# -- order-sensitive problems ------------------------------------------------------------------

#: (M, K) of the Stage-2 order problems: a problem on the tail path alone (63 elements
#: are less than one wave's vector), and one on both paths (2310 elements)
ORDER_PROBLEMS = ((7, 9), (33, 70))
#: slab counts of a degree-0 kernel: at 3 and 4 slabs a two-lane partial sum of the loop
#: (s0 + s1, then s2) still adds in slab order; from 5 on it does not
ORDER_KS = (5, 8)


def cancelling_slabs(rng, ks: int, n: int) -> np.ndarray:
    """A ``[ks][n]`` float32 workspace whose fp32 sum depends on the order at bf16/fp16
    resolution: small random values (normal times 2^-6..2^3) plus, per element, a large
    power of two B (2^12..2^21) added to one random slab and subtracted from another. The
    exact sum is the small values' sum; an order that adds small values while B is
    part of the partial sum loses their low bits (ulp(B) is 2^-11..2^-2), so about 30 %
    of the elements differ in bf16 between slab order and a two-lane partial sum."""
    ws = (rng.standard_normal((ks, n)) * 2.0 ** rng.integers(-6, 4, size=(ks, n))).astype(np.float32)
    big = (2.0 ** rng.integers(12, 22, size=n)).astype(np.float32)
    i = rng.integers(0, ks, size=n)
    j = (i + rng.integers(1, ks, size=n)) % ks
    sign = np.where(rng.random(n) < 0.5, 1.0, -1.0).astype(np.float32)
    cols = np.arange(n)
    ws[i, cols] += sign * big
    ws[j, cols] -= sign * big
    return ws.astype(np.float32)


def order_cases(family: str, spec: dict, arch: str, N) -> list:
    """Extra cases of the opt lane where a reassociated sum shows in D: for a Stage-2
    reduce config, :data:`ORDER_PROBLEMS` with :func:`cancelling_slabs` (degree 0: ks_count
    in :data:`ORDER_KS`; degree d >= 3: d slabs; one or two slabs have one order). Each checks D against RNE of the sequential
    fp32 sum from slab 0 (the documented order, parity.sim.reference.split_k_sum); the lane
    then compares the optimised module's buffers with these bit for bit. Other families:
    none (their plans' cases are compared); a fused reduce (``acc_epilogue`` not identity)
    neither: its own cases (parity/sim/numerics_fused.py, with cancelling slabs) are compared.
    ``N``: parity.sim.numerics (its Case, Launch and Buf; handed in, not imported:
    numerics imports this module)."""
    if family != "conv_fwd_split_k_reduce" or spec.get("acc_epilogue", "identity") != "identity":
        return []
    ref = REF

    dt, v, t, deg = spec["dtype"], spec["vector"], spec["threads"], spec["degree"]
    rng = np.random.default_rng(4321 + 7 * v + t + deg)
    out = []
    for (M, K) in ORDER_PROBLEMS:
        for ks in (ORDER_KS if deg == 0 else (deg,)):
            if ks < 3:   # one or two slabs: every order is slab order (s0 + s1 = s1 + s0)
                continue
            ws = cancelling_slabs(rng, ks, M * K)
            want = ref.ref_cast_bits(ref.split_k_sum(ws), dt)
            d = np.full(M * K, 0xDEAD, np.uint16)

            def check(bufs, want=want, dt=dt):
                ok = ref.same_bits_16(bufs["d"], want, dt)
                if ok.all():
                    return []
                k = int(np.argmin(ok))
                return [f"D[{k}] = {int(bufs['d'][k]):#06x}, want {int(want[k]):#06x} (RNE of the slab-order "
                        f"sum; {int((~ok).sum())} of {ok.size} elements differ)"]
            args = {"ws_ptr": N.Buf("ws"), "ws_bytes": ws.nbytes, "d_ptr": N.Buf("d"), "d_bytes": d.nbytes,
                    "M": M, "K": K, "ks_count": ks}
            grid = (-(-M * K // (t * v)), 1, 1)
            out.append(N.Case(f"order_M{M}_K{K}_ks{ks}", {"reduce": (family, spec, arch)}, {"ws": ws, "d": d},
                              [N.Launch("reduce", grid, t, args)], check, orders=("forward",)))
    return out

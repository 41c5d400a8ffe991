"""``parity numerics``: every accepted config of every family with a numerics
plan, run through the emulator on small problems and compared with numpy.

A *plan* (one module per family, ``parity/sim/plans/<family>.py``, found by
name: :data:`PLANS`) turns a config's spec into cases. A :class:`Case` lists
the kernels it needs (family, spec), its buffers, its launches in order
(Stage 1 then Stage 2, ...) and a check of the final buffers against a numpy
reference, with the tolerance stated by the plan. Every launch runs in forward
and reverse wave order (the emulator compares the two byte for byte). A config
the emulator cannot run is a failure; a family with neither a plan nor
``NUMERICS_OPT_OUT`` is an error (:func:`parity.sim.plans.check_families`).
"""
from __future__ import annotations

import importlib
import math
import multiprocessing as mp
import sys
import time
from dataclasses import dataclass, field

import python_engine
from parity.config import load_families
from parity.cli.interrupt import leave_sigint_to_parent
from parity.gate.executor import progress_tick
from parity.sim import launch_route as LR
from parity.sim.cases import Buf, Case, Launch, Skipped  # noqa: F401 (re-exported: the plans' records)
from parity.sim.errors import SimError
from parity.sim.kernel import Kernel
from parity.sim.plans import PLANS, check_families
from parity.sim import cover
from parity.sim import result_cache as RC
from parity.sim.schedule import longest_first

FLAVOR = "llvm23"


@dataclass
class Outcome:
    family: str
    config: str
    ok: bool
    cases: int = 0
    launches: int = 0
    instructions: int = 0
    seconds: float = 0.0
    problems: list = field(default_factory=list)
    expected_errors: int = 0
    coverage: dict = None     # Coverage.summary() of the config's own kernel (coverage runs only)
    classes: dict = None      # tile class -> hit (coverage runs only; parity/sim/cover.py)
    skipped: list = field(default_factory=list)   # Skipped problems (not admitted by the launch plan)
    opt: dict = None          # the opt lane's cost (parity/sim/optimised.py Stats) when it ran
    cached: bool = False      # read from the result cache (parity/sim/result_cache.py), not emulated


#: families whose output plans launches or degrees -> the kernel families whose launches
#: (and so whose numerics) depend on it: conv_launch plans every conv launch and its
#: Stage 2; split_k_policy picks degrees and the Stage-2 spec; conv_abi is the argument
#: list the runtime packs for both kernels. A change to one makes ``parity write`` run
#: the numerics of every config of those families (parity/golden/bless.py).
PLANNERS = {
    "conv_launch": ("conv_implicit_gemm",),
    "split_k_policy": ("conv_implicit_gemm", "conv_fwd_split_k_reduce"),
    "conv_abi": ("conv_implicit_gemm", "conv_fwd_split_k_reduce"),
}


def planned_configs(changed_families, families=None) -> dict:
    """``planner -> {(family, config)}``: for every changed family of :data:`PLANNERS`,
    the accepted configs (:func:`accepted_configs`) of the kernel families it plans."""
    out = {}
    for planner in sorted(set(changed_families) & set(PLANNERS)):
        fams = PLANNERS[planner]
        out[planner] = {(f, c) for f, c, _, _ in accepted_configs(fams, families=families)}
    return out


# -- running ----------------------------------------------------------------------------------

class _Lowerer:
    """Lowers (and decodes once) the kernels cases name. ``coverage``: decode
    them with branch/select recording (:mod:`parity.sim.coverage`)."""

    def __init__(self, engine: str = "python", coverage: bool = False, opt: bool = False):
        self.E = importlib.import_module("python_engine" if engine == "python" else "cpp_engine")
        self.kernels: dict = {}
        self.coverage = coverage
        self.opt_lane = None
        if opt:   # every case also on the modules after opt -O3 (parity/sim/optimised.py)
            from parity.sim import optimised
            optimised.Lane(_Lowerer).attach(self)

    def text(self, family, spec, arch, flavor=FLAVOR) -> str:
        return self.E.lower(family, spec, arch, flavor).text

    def kernel(self, family, spec, arch, flavor=FLAVOR) -> Kernel:
        key = (family, repr(sorted(spec.items())), arch, flavor)
        k = self.kernels.get(key)
        if k is None:
            k = self.kernels[key] = Kernel(self.text(family, spec, arch, flavor), arch=arch,
                                           coverage=self.coverage)
        return k

    def launch_plan(self, spec: dict, arch: str, flavor=FLAVOR) -> tuple:
        """``(plan text, None)`` of an admitted conv_launch spec, else ``(None, reason)``."""
        reason = self.E.validate("conv_launch", spec, arch, flavor)
        if reason:
            return None, reason
        return self.E.lower("conv_launch", spec, arch, flavor).text, None


def run_case(case: Case, lowerer, orders=("forward", "reverse")) -> tuple:
    """Run a case's launches in order on its buffers (copied into a guarded
    arena, parity/sim/launch_route.py) and check them: ``(problems, wave-instructions)``."""
    arena = LR.Arena(case.buffers)
    bufs = arena.views
    n = 0
    for la in case.launches:
        fam, spec, arch = case.kernels[la.kernel]
        k = lowerer.kernel(fam, spec, arch)
        if la.kernel_name is not None and k.name != la.kernel_name:
            raise SimError(f"the launch plan names kernel {la.kernel_name}, the lowered kernel is {k.name}")
        if la.lds_bytes is not None:
            lds = sum(g.ty.size for g in k.module.lds)
            if lds != la.lds_bytes:
                raise SimError(f"the launch plan says lds_bytes {la.lds_bytes}, kernel {k.name} allocates {lds}")
        cluster = la.cluster
        if la.variant is not None:
            args = LR.routed_args(la.variant, la.plan_args, la.scalars, k, arena, la.acc_epilogue)
            cluster = LR.routed_cluster(k, la.grid, la.plan_cluster)
        else:
            args = {p: (bufs[v.name] if isinstance(v, Buf) else v) for p, v in la.args.items()}
        cap = getattr(lowerer, "max_instructions", None)
        if cap is not None:  # per wave: its static instructions, 64 times over (loops, retries)
            cap = 64 * k.n_instructions * math.prod(la.grid) * (la.block // 32)
        st = k.launch(la.grid, la.block, args, cluster=cluster, orders=orders,
                      shadow=getattr(lowerer, "shadow", True), max_instructions=cap or 200_000_000)
        n += st.instructions
        arena.check_guards(f"launch of {k.name}")
    return case.check(bufs), n


def run_config(family: str, cfg_name: str, spec: dict, arch: str, lowerer=None, first_failure: bool = False,
               order=None) -> Outcome:
    """Run every case of one config; ``first_failure``: stop at the first failing case
    (``parity mutate``: a mutant is killed by one); ``order``: a function reordering the
    plan's cases (parity/mutate/prioritise.py; every case still runs unless one fails)."""
    lowerer = lowerer or _Lowerer()
    o = Outcome(family, cfg_name, True)
    t0 = time.perf_counter()
    try:
        plan = PLANS[family].cases
        spec = _with_defaults(family, spec)
        own = None
        if getattr(lowerer, "coverage", False):
            own = lowerer.kernel(family, spec, arch)
            own.coverage.reset()
        cases = plan(spec, arch, lowerer)
        if order is not None:
            cases = order(cases)
        hit = set().union(*(c.classes for c in cases if isinstance(c, Case)))
        o.skipped = [c for c in cases if isinstance(c, Skipped)]
        wrap = getattr(lowerer, "wrap_case", None)   # the opt lane (parity/sim/optimised.py)
        for case in (c for c in cases if not isinstance(c, Skipped)):
            if wrap is not None:
                case = wrap(case, run_case)
            try:
                probs, n = run_case(case, lowerer, case.orders)
                if case.expect_error is not None:
                    probs = [f"expected {case.expect_error.__name__} at `{case.expect_where}`, the kernel ran"]
            except SimError as e:
                n = 0
                if case.expect_error is not None and isinstance(e, case.expect_error) \
                        and case.expect_where in str(e):
                    probs = []
                    o.expected_errors += 1
                else:
                    probs = [f"{type(e).__name__}: {e}"]
            o.cases += 1
            o.launches += len(case.launches)
            o.instructions += n
            o.problems += [f"{case.name}: {p}" for p in probs]
            if first_failure and o.problems:
                break
        if own is not None:
            o.coverage = own.coverage.summary()
            o.classes = {c: c in hit for c in cover.required_classes(family, spec)}
    except Exception as e:  # lowering failed, plan failed, emulator bug: a failure, not a skip
        o.problems.append(f"{type(e).__name__}: {e}")
    o.ok = not o.problems
    o.seconds = time.perf_counter() - t0
    return o


def _with_defaults(family: str, spec: dict) -> dict:
    """``spec`` with the engine's defaults for missing fields (the kernels are
    lowered from the config's own spec; the plan needs every field)."""
    try:
        fields = python_engine.spec_fields(family)
    except Exception:
        return dict(spec)
    return {**{n: d for n, d in fields}, **spec}


def accepted_configs(only=None, flavor: str = FLAVOR, families=None) -> list:
    """(family, config name, spec, arch) of every config expected to lower at
    ``flavor`` in every family that has a numerics plan. ``families``: the
    already selected families (``--only`` with FAMILY/NAME items), else all.
    PlanError (parity/sim/plans) for a selected family with neither a plan nor
    ``NUMERICS_OPT_OUT``, or a plan module that does not load."""
    out = []
    fams = [f for f in (families if families is not None else load_families()) if not only or f.name in only]
    check_families(fams)
    for fam in fams:
        if fam.numerics_opt_out:
            continue
        for c in fam.configs:
            if c.applies(flavor) and c.expectation(flavor).kind == "ok":
                out.append((fam.name, c.name, dict(c.spec), c.arch))
    return out


def _worker(item):
    fam, name, spec, arch = item
    lw = _worker_lowerer()
    key = None
    if _CACHE is not None and lw.opt_lane is None:   # parity/sim/result_cache.py (not the opt lane)
        from parity.sim import hw_facts as HF
        key = RC.config_key(fam, name, _with_defaults(fam, spec), arch, _COVERAGE, HF.assumed())
        hit = RC.load(_CACHE, key, Outcome)
        if hit is not None:
            hit.cached = True
            return hit
    if lw.opt_lane is not None:
        lw.opt_lane.reset()
    o = run_config(fam, name, spec, arch, lw)
    if key is not None:
        RC.store(_CACHE, key, o)
    if lw.opt_lane is not None:   # the opt lane's order-sensitive problems (parity/sim/optimised.py)
        lw.opt_lane.run_order_cases(o, fam, _with_defaults(fam, spec), arch, lw, sys.modules[__name__])
        o.opt = lw.opt_lane.stats.as_dict()
    return o


def _indexed_worker(job):
    i, item = job
    return i, _worker(item)


_LOWERER = None
_COVERAGE = False   # set by run_all before the worker processes fork
_OPT = False        # likewise: the opt lane (parity/sim/optimised.py)
_CACHE = None       # likewise: the result cache's directory (parity/sim/result_cache.py), None: off


def _worker_lowerer():
    global _LOWERER
    if _LOWERER is None or _LOWERER.coverage != _COVERAGE or (_LOWERER.opt_lane is not None) != _OPT:
        _LOWERER = _Lowerer(coverage=_COVERAGE, opt=_OPT)
    return _LOWERER


def _remote_worker(job):
    """On a Dask worker (``--scheduler``): :func:`_worker` of ``job = (item, coverage, opt,
    --assume readings)``, the settings the local pool's workers inherit by fork."""
    global _COVERAGE, _OPT
    item, _COVERAGE, _OPT, readings = job
    from parity.sim import hw_facts as HF
    if HF.assumed() != readings:
        HF.assume(readings)
    return _worker(item)


def _crash_outcome(job, message: str):
    """The outcome of a config whose Dask job raised or whose workers kept dying: failed."""
    fam, name, spec, arch = job[0]
    o = Outcome(fam, name, False)
    o.problems.append(f"crash: {message}")
    return o


def _run_on(cluster, items: list, coverage: bool, opt: bool, progress) -> list:
    """:func:`run_all`'s configs on a Dask cluster: submitted longest first, the
    outcomes in catalog order."""
    from parity.sim import hw_facts as HF
    order = longest_first(items)
    got = cluster.map(_remote_worker, [(items[i], coverage, opt, HF.assumed()) for i in order],
                      name="numerics", on_crash=_crash_outcome, on_result=progress_tick(progress, len(items)))
    out = [None] * len(items)
    for i, o in zip(order, got):
        out[i] = o
    return out


def run_all(only=None, jobs: int = 1, progress=None, families=None, select=None, coverage: bool = False,
            opt: bool = False, cluster=None, cache=None) -> list:
    """Run every accepted config (:func:`accepted_configs`) in ``jobs`` processes;
    ``progress(outcome, done, total)`` after each config (in the order they
    finish; the list returned is in catalog order). ``select``, a set of
    (family, config name), narrows it further (``parity write`` runs only the
    configs whose llvm23 text changed). ``coverage``: record branch/select
    coverage and tile classes (``Outcome.coverage`` / ``Outcome.classes``). ``opt``: also run
    every case on the modules after ``opt -O3`` and require bit-identical buffers
    (parity/sim/optimised.py; its cost in ``Outcome.opt``). ``cluster``
    (parity/gate/executor.py, ``--scheduler``): the configs run there, longest first,
    the outcomes in catalog order. ``cache``: the result cache's directory
    (parity/sim/result_cache.py; not with ``opt`` or ``cluster``): a config whose key is
    there is not emulated (``Outcome.cached``), a passing outcome is stored."""
    global _COVERAGE, _OPT, _CACHE
    _COVERAGE = coverage
    _OPT = opt
    _CACHE = cache if not opt and cluster is None else None
    items = accepted_configs(only, families=families)
    if select is not None:
        items = [it for it in items if (it[0], it[1]) in select]
    total = len(items)
    if cluster is not None:
        return _run_on(cluster, items, coverage, opt, progress)
    jobs = min(jobs, total)   # no more workers than configs (as the gate's pool starts them)
    if jobs <= 1:
        out = []
        for it in items:
            out.append(_worker(it))
            if progress:
                progress(out[-1], len(out), total)
        return out
    # longest first, one config per task: both workers stay busy to the end
    # (parity/sim/schedule.py); the outcomes are returned in catalog order
    ctx = mp.get_context("fork")
    out = [None] * total
    done = 0
    with ctx.Pool(jobs, initializer=leave_sigint_to_parent) as pool:  # Ctrl-C: one error line
        for i, r in pool.imap_unordered(_indexed_worker, [(i, items[i]) for i in longest_first(items)],
                                        chunksize=1):
            out[i] = r
            done += 1
            if progress:
                progress(r, done, total)
    return out


class TextLowerer(_Lowerer):
    """A lowerer that hands out ``text`` (an IR module, e.g. a mutant or ``parity
    numerics --ir FILE``) in place of ``family``'s kernel of ``spec``; every other
    kernel a case needs (Stage 2, the two-stage twin) is lowered as usual."""

    def __init__(self, family: str, spec: dict, arch: str, text: str, coverage: bool = False):
        super().__init__("python", coverage)
        #: per launch (run_case): 64 times the kernel's static instruction count per
        #: wave; a text that runs longer hangs (a mutated loop bound). The plans' loops
        #: run at most a few dozen K tiles or slabs.
        self.max_instructions = "per wave"
        self.target = (family, repr(sorted(_with_defaults(family, spec).items())), arch)
        self.replacement = text

    def text(self, family, spec, arch, flavor=FLAVOR) -> str:
        if (family, repr(sorted(spec.items())), arch) == self.target and flavor == FLAVOR:
            return self.replacement
        return super().text(family, spec, arch, flavor)


def find_config(ref: str, families=None) -> tuple:
    """``(family, config name, spec, arch)`` of the accepted llvm23 config named by
    ``ref`` (``FAMILY/NAME`` or a NAME unique over the families with a plan).
    Raises ``ValueError`` naming the rule."""
    fam, _, name = ref.rpartition("/")
    hits = [it for it in accepted_configs(families=families) if it[1] == name and (not fam or it[0] == fam)]
    if len(hits) != 1:
        why = "no accepted llvm23 config with a numerics plan is" if not hits else "several configs are"
        raise ValueError(f"{why} named {ref!r} (use FAMILY/NAME)")
    return hits[0]

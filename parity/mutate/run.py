"""The oracles a mutant must pass, and the kill-rate report of ``parity mutate``.

A mutant (parity/mutate/operators.py) of an accepted config's llvm23 kernel is
*killed* by the first oracle of :data:`ORACLES` that fails on it, in order:

1. ``llvm``: llvmlite (LLVM 22.1) parses and verifies the module (the validity
   oracle's first step, parity/llvm/compile.py);
2. ``numerics``: the config's numerics plan (parity/sim/numerics.py: covering
   problems, cross-form invariants) with the mutant in place of the config's own
   kernel, stopped at the first failing case.

An oracle is a function ``(Job) -> list[str]`` (failures; empty = passed) added
with :func:`register_oracle`; the static proof of parity/proof is registered
the same way (one line, :func:`_register_proof`). A mutant no oracle kills
*survived*; one proved the same (:func:`parity.mutate.operators.equivalent_reason`)
is *equivalent* and not run. The kill rate is killed / (killed + survived).
"""
from __future__ import annotations

import difflib
import math
import importlib.util
import multiprocessing as mp
import random
import time
import zlib
from dataclasses import dataclass, field

from parity.cli.interrupt import leave_sigint_to_parent
from parity.gate.executor import NOT_RUN, progress_tick
from parity.llvm.compile import CompileError, parse_verify
from parity.mutate import lies as LIES
from parity.mutate import operators as OPS
from parity.mutate.argued import ARGUED, POISON_DISCARDED, PROOF_UNDERIVED
from parity.mutate import prioritise as PRI
from parity.mutate import proved as PROVED
from parity.sim import launch_route as LR
from parity.sim import numerics as N


@dataclass
class Job:
    """One mutant to judge: its config and the mutant text."""

    family: str
    config: str
    spec: dict
    arch: str
    original: str
    mutant: OPS.Mutant
    #: run the numerics cases that enter the changed block first (parity/mutate/prioritise.py)
    ordered: bool = False


@dataclass
class Site:
    """One planned mutant, not yet applied: its config, the config's kernel text
    (``original``, one string shared by every site of the config) and the
    mutation ``kind`` at ``site`` (a key of :func:`parity.mutate.operators.sites`).
    A plan holds these, not :class:`Job` s: a mutant's text (a whole module, tens of
    KB) exists only while it is judged, so planning the whole catalog costs the
    configs' kernel texts plus a few hundred bytes per mutant."""

    family: str
    config: str
    spec: dict
    arch: str
    original: str
    kind: str
    site: tuple
    ordered: bool = False   # see Job.ordered

    def job(self) -> Job:
        """The :class:`Job` of this site: the mutant text made now."""
        return Job(self.family, self.config, self.spec, self.arch, self.original,
                   OPS.apply(self.original, self.kind, self.site), self.ordered)


@dataclass
class Verdict:
    family: str
    config: str
    kind: str
    line: int
    what: str
    status: str                 # killed | survived | equivalent
    oracle: str = ""            # the oracle that killed it
    reason: str = ""            # its first failure, or why equivalent
    diff: str = ""              # survivors: the unified diff
    seconds: float = 0.0
    contradiction: str = ""     # killed, yet proved.py (or argued.py: "argued: NAME") claims it equivalent


ORACLES: list = []


def register_oracle(name: str, fn, before: str | None = None) -> None:
    """Add oracle ``name`` (``fn(job) -> list[str]`` of failures) to :data:`ORACLES`,
    before the oracle named ``before`` (else last)."""
    at = next((k for k, (n, _) in enumerate(ORACLES) if n == before), len(ORACLES))
    ORACLES.insert(at, (name, fn))


def _llvm_oracle(job: Job) -> list:
    try:
        parse_verify(job.mutant.text)
    except CompileError as e:
        return [str(e)]
    return []


class _PlanLowerer(N.TextLowerer):
    """A lowerer whose conv_launch plans carry a ``launch_plan`` mutant's slip
    (parity/mutate/lies.py): what the runtime is given, not the IR."""

    def __init__(self, job: Job, field: str):
        super().__init__(job.family, job.spec, job.arch, job.mutant.text)
        self.field = field

    def launch_plan(self, spec: dict, arch: str, flavor=N.FLAVOR) -> tuple:
        text, reason = super().launch_plan(spec, arch, flavor)
        return (text if text is None else LIES.mutate_plan(text, self.field)), reason


def plan_field(m: OPS.Mutant) -> str:
    """The plan field (or ``kernarg:NAME``) of a ``launch_plan`` mutant."""
    return m.what.split(" ")[1]


def _numerics_oracle(job: Job) -> list:
    if job.mutant.kind == "launch_plan":
        field = plan_field(job.mutant)
        if field.startswith("kernarg:"):
            base = LR.KA.variant_layout
            LR.KA.variant_layout = LIES.kernarg_shift(base, field.split(":", 1)[1])
            try:
                lw = N.TextLowerer(job.family, job.spec, job.arch, job.mutant.text)
                return N.run_config(job.family, job.config, job.spec, job.arch, lw, first_failure=True).problems
            finally:
                LR.KA.variant_layout = base
    lw = mutant_lowerer(job)
    order = PRI.case_order(job) if job.ordered else None
    return N.run_config(job.family, job.config, job.spec, job.arch, lw, first_failure=True, order=order).problems


def mutant_lowerer(job: Job):
    """The lowerer that gives the numerics plans ``job``'s mutant: its IR text, or
    (``launch_plan``, a plan field) its mutated conv_launch plans."""
    if job.mutant.kind == "launch_plan" and not plan_field(job.mutant).startswith("kernarg:"):
        return _PlanLowerer(job, plan_field(job.mutant))
    return N.TextLowerer(job.family, job.spec, job.arch, job.mutant.text)


def _proof_oracle(job: Job) -> list:
    from parity.proof import prove_module  # the static alignment/bounds proof (issue 22 item 1)
    return list(prove_module(job.mutant.text, job.family, job.config, job.spec, job.arch, N.FLAVOR).failures)


def _register_proof() -> None:
    """The proof runs between llvm and numerics once parity/proof exists (the oracle-proof branch)."""
    if importlib.util.find_spec("parity.proof") is not None:
        register_oracle("proof", _proof_oracle, before="numerics")


register_oracle("llvm", _llvm_oracle)
register_oracle("numerics", _numerics_oracle)
_register_proof()


def judge(job: Job | Site) -> Verdict:
    """Run ``job``'s mutant through :data:`ORACLES` (after the equivalence rules); a
    :class:`Site` is applied first (its mutant text lives until the verdict is made).
    A killed mutant the abstract proof (parity/mutate/proved.py) claims equivalent is
    a *contradiction* (a proof bug: the run is RED). A :class:`MemoryError` or an
    :class:`ImportError` (the machine's limit, a tool the oracle needs that is not
    installed) is not a kill: it propagates (the command reports it, exit 2)."""
    if isinstance(job, Site):
        job = job.job()
    m = job.mutant
    v = Verdict(job.family, job.config, m.kind, m.line, m.what, "survived")
    t0 = time.perf_counter()
    eq = OPS.equivalent_reason(job.original, m) or PROVED.dead_reason(job.original, m.kind, m.text, m.line)
    if eq:
        v.status, v.reason = "equivalent", eq
        return v
    for name, fn in ORACLES:
        try:
            fails = fn(job)
        except (MemoryError, ImportError):
            raise  # the machine's limit or a missing tool, not the mutant's fault
        except Exception as e:  # an oracle that crashes on a mutant has noticed it
            fails = [f"{type(e).__name__}: {e}"]
        if fails:
            v.status, v.oracle, v.reason = "killed", name, fails[0].split("\n")[0][:300]
            v.contradiction = PROVED.abstract_reason(_view(job)) or _argued_contradiction(job, v)
            break
    else:
        _equivalent_or_diff(job, v)
    v.seconds = time.perf_counter() - t0
    return v


def _argued_contradiction(job: Job, v: Verdict) -> str:
    """``argued: NAME`` when an argument of parity/mutate/argued.py matches a killed mutant:
    its predicate is broader than its reasoning (the arguments are consulted on survivors
    only, so a run would not otherwise notice). An argument of :data:`POISON_DISCARDED`
    (a wrapped value whose poison a select never chooses: equivalent under LangRef) with a
    kill by the emulator's eager ``Poison:`` report at that flag is consistent, not one; so
    is a :data:`PROOF_UNDERIVED` argument with a kill by the ``proof`` oracle (a true promise
    the static proof cannot derive is refused by policy)."""
    name = next((n for n, pred in ARGUED if pred(_view(job))), None)
    if name is None or (name in POISON_DISCARDED and ": Poison: " in f": {v.reason}") or \
            (name in PROOF_UNDERIVED and v.oracle == "proof" and PROOF_UNDERIVED[name] in v.reason):
        return ""
    return f"argued: {name}"


def _view(job: Job) -> Job:
    """``job`` as the arguments and proofs see it: a ``kloop_cmp`` mutant as the mutation it
    applies (the arguments are about the mutation, not the kind's name)."""
    m = job.mutant
    if m.kind != "kloop_cmp":
        return job
    return Job(job.family, job.config, job.spec, job.arch, job.original,
               OPS.Mutant(m.what.split(":")[0], m.line, m.what.split(": ", 1)[1], m.text))


def _equivalent_or_diff(job: Job, v: Verdict) -> None:
    """A survivor: equivalent when proved (abstract values) or argued, else its diff."""
    view, m = _view(job), job.mutant
    proved = PROVED.abstract_reason(view)
    why = next((n for n, pred in ARGUED if pred(view)), None)
    if proved:
        v.status, v.reason = "equivalent", f"proved: {proved}"
    elif why is not None:
        v.status, v.reason = "equivalent", f"argued: {why} (docs/sim.md)"
    else:
        v.diff = "".join(difflib.unified_diff(job.original.splitlines(True), m.text.splitlines(True),
                                              f"{job.config}.ll", f"{job.config}.mutant.ll", n=2))


def plan(configs: list, seed: int, per_kind: int | None = None, kinds=OPS.KINDS, lowerer=None) -> list:
    """:class:`Site` s for ``configs`` ((family, name, spec, arch)): per config and kind up to
    ``per_kind`` sites (all when None), drawn with a generator seeded by ``seed``
    and the config name; then shuffled (seeded) so a time-bounded run samples
    every kind and config; cheaper kernels first, the families interleaved. A conv config
    with at least ``prioritise.MIN_SITES`` sites has its cases ordered by coverage (``ordered``).
    No mutant text is made here (:meth:`Site.job` makes it when judged): the
    whole catalog at every site plans in well under a GB (docs/sim.md)."""
    lw = lowerer or N._Lowerer()
    jobs = []
    reps = tile_class_representatives(configs)
    for fam, name, spec, arch in configs:
        full = N._with_defaults(fam, spec)
        text = lw.text(fam, full, arch)
        rng = random.Random(seed * 1_000_003 + zlib.crc32(f"{fam}/{name}".encode()))
        for k in kinds:
            if k == "kloop_cmp" and (fam, name) not in reps:
                continue
            ss = OPS.sites(text, k)
            if k == "launch_plan":   # only the slips an oracle sees (lies.py KERNARG_ROUTED)
                ss = LIES.judged_plan_sites(fam, ss)
            if per_kind is not None and len(ss) > per_kind:
                ss = sorted(rng.sample(ss, per_kind))
            jobs += [Site(fam, name, full, arch, text, k, s) for s in ss]
    per_config = {}
    for j in jobs:
        per_config[(j.family, j.config)] = per_config.get((j.family, j.config), 0) + 1
    for j in jobs:   # a config judged many times: its cases ordered by coverage (prioritise.py)
        j.ordered = j.family == "conv_implicit_gemm" and per_config[(j.family, j.config)] >= PRI.MIN_SITES
    random.Random(seed).shuffle(jobs)
    # cheap kernels first (a time-bounded run judges more mutants and overruns less: a
    # surviving mutant runs its config's whole plan), the families interleaved
    order = {}
    for j in jobs:
        order.setdefault(j.family, []).append(j)
    for fam in order:
        order[fam].sort(key=lambda j: _cost_bucket(j))
    out = []
    lists = list(order.values())
    for k in range(max((len(x) for x in lists), default=0)):
        out += [x[k] for x in lists if k < len(x)]
    return out


def tile_class(spec: dict) -> tuple:
    """A conv config's AOT tile class (python_engine/policy/aot.py: the grid's axes that
    shape the K loop): form (plain, two-stage, cluster), pipeline, load waves, tile_k,
    vector_a (the K walk's vector width; 3, 5, 6, 7 the padded-pixel widths)."""
    form = "cluster" if spec["split_k_cluster"] else "two_stage" if spec["split_k"] > 1 else "plain"
    return (form, spec["pipeline"], spec["num_load_waves"], spec["tile_k"], spec["vector_a"])


def tile_class_representatives(configs: list) -> set:
    """(family, name) of one conv config per :func:`tile_class`: the one with the
    smallest tile (tile_m * tile_n), then catalog order (the cheapest K loop of its class)."""
    best = {}
    for fam, name, spec, _arch in configs:
        if fam != "conv_implicit_gemm":
            continue
        full = N._with_defaults(fam, spec)
        key = tile_class(full)
        cost = full["tile_m"] * full["tile_n"]
        if key not in best or cost < best[key][0]:
            best[key] = (cost, (fam, name))
    return {v[1] for v in best.values()}


def _cost_bucket(job: Job | Site) -> int:
    """log2 of a kernel's emulation cost: its text length times the cluster size."""
    return int(math.log2(len(job.original) * max(1, job.spec.get("split_k_cluster", 0) or 1)))


def run(jobs: list, seconds: float | None = None, n_jobs: int = 1, progress=None, cluster=None) -> list:
    """Judge ``jobs`` in order until done or ``seconds`` have passed (the job under
    way finishes); ``progress(verdict, done, total)`` after each. ``cluster``
    (parity/gate/executor.py, ``--scheduler``): judged there, the verdicts in job
    order (with ``seconds``, the jobs judged in time up to the first one that was not)."""
    if cluster is not None:
        return _run_on(cluster, jobs, seconds, progress)
    t_end = None if seconds is None else time.perf_counter() + seconds
    out = []
    n_jobs = min(n_jobs, len(jobs))   # no more workers than mutants (as the gate's pool starts them)
    if n_jobs <= 1:
        for j in jobs:
            if t_end is not None and time.perf_counter() >= t_end:
                break
            out.append(judge(j))
            if progress:
                progress(out[-1], len(out), len(jobs))
        return out
    with mp.get_context("fork").Pool(n_jobs, initializer=leave_sigint_to_parent) as pool:
        for v in pool.imap(judge, jobs, chunksize=1):
            out.append(v)
            if progress:
                progress(v, len(out), len(jobs))
            if t_end is not None and time.perf_counter() >= t_end:
                pool.terminate()
                break
    return out


def _crash_verdict(job: Job | Site, message: str) -> Verdict:
    """The verdict of a mutant whose judging raised or whose Dask workers kept dying:
    killed by ``crash`` (the mutant broke an oracle's process), the message as reason."""
    m = (job.job() if isinstance(job, Site) else job).mutant
    return Verdict(job.family, job.config, m.kind, m.line, m.what, "killed", "crash", message)


def _run_on(cluster, jobs: list, seconds: float | None, progress) -> list:
    deadline = None if seconds is None else time.monotonic() + seconds
    got = cluster.map(judge, jobs, name="mutate", on_crash=_crash_verdict,
                      on_result=progress_tick(progress, len(jobs)), deadline=deadline)
    out = []
    for v in got:
        if v is NOT_RUN:
            break
        out.append(v)
    return out


@dataclass
class Report:
    verdicts: list
    per_kind: dict = field(default_factory=dict)
    killed_by: dict = field(default_factory=dict)

    @property
    def killed(self) -> int:
        return sum(1 for v in self.verdicts if v.status == "killed")

    @property
    def survived(self) -> int:
        return sum(1 for v in self.verdicts if v.status == "survived")

    @property
    def equivalent(self) -> int:
        return sum(1 for v in self.verdicts if v.status == "equivalent")

    @property
    def contradictions(self) -> list:
        """Killed mutants the abstract proof claimed equivalent (each a proof bug)."""
        return [v for v in self.verdicts if v.contradiction]

    @property
    def kill_rate(self) -> float | None:
        n = self.killed + self.survived
        return None if n == 0 else self.killed / n


def report(verdicts: list) -> Report:
    """Counts per mutation kind (killed / survived / equivalent) and per killing oracle."""
    r = Report(verdicts)
    for k in OPS.KINDS:
        vs = [v for v in verdicts if v.kind == k]
        r.per_kind[k] = {s: sum(1 for v in vs if v.status == s) for s in ("killed", "survived", "equivalent")}
    for v in verdicts:
        if v.status == "killed":
            r.killed_by[v.oracle] = r.killed_by.get(v.oracle, 0) + 1
    return r


def render(r: Report) -> str:
    """The text report: a line per kind, the oracles that killed, the rate, every survivor with its diff."""
    lines = [f"{'kind':<14} {'killed':>7} {'survived':>9} {'equivalent':>11} {'kill rate':>10}"]
    for k, c in r.per_kind.items():
        n = c["killed"] + c["survived"]
        kr = f"{100 * c['killed'] / n:.1f} %" if n else "n/a"
        lines.append(f"{k:<14} {c['killed']:>7} {c['survived']:>9} {c['equivalent']:>11} {kr:>10}")
    by = ", ".join(f"{n} {c}" for n, c in r.killed_by.items()) or "none"
    rate = "n/a (no non-equivalent mutant ran)" if r.kill_rate is None else f"{100 * r.kill_rate:.1f} %"
    lines.append(f"{len(r.verdicts)} mutants: {r.killed} killed ({by}), {r.survived} survived, "
                 f"{r.equivalent} equivalent; kill rate {rate}")
    for v in r.contradictions:
        what = ("ARGUMENT", "argued") if v.contradiction.startswith("argued: ") else ("PROOF", "proved")
        lines.append(f"{what[0]} CONTRADICTION {v.family}/{v.config} {v.kind} line {v.line}: {v.what}: "
                     f"{what[1]} '{v.contradiction.removeprefix('argued: ')}', yet {v.oracle} killed it: {v.reason}")
    for v in r.verdicts:
        if v.status == "survived":
            lines.append(f"SURVIVED {v.family}/{v.config} {v.kind} line {v.line}: {v.what}")
            lines += ["    " + ln for ln in v.diff.rstrip("\n").split("\n")]
    return "\n".join(lines)


def to_json(r: Report, seed: int, seconds) -> dict:
    return {"seed": seed, "seconds": seconds, "mutants": len(r.verdicts), "killed": r.killed,
            "survived": r.survived, "equivalent": r.equivalent, "kill_rate": r.kill_rate,
            "killed_by": r.killed_by, "per_kind": r.per_kind, "contradictions": len(r.contradictions),
            "verdicts": [{"family": v.family, "config": v.config, "kind": v.kind, "line": v.line, "what": v.what,
                          "status": v.status, "oracle": v.oracle, "reason": v.reason, "diff": v.diff,
                          **({"contradiction": v.contradiction} if v.contradiction else {})}
                         for v in r.verdicts]}

"""The byte-identity runner: every config of every family at every canonical
flavor through both engines, in crash-isolating worker processes.

Verdicts (DESIGN §6), per config and flavor:

=================  ==========================================================
IDENTICAL          both lowered; same sha256, byte count and kernel name
BOTH_REJECTED      both rejected with the same reason
MISMATCH           both lowered; bytes or kernel name differ
REASON_MISMATCH    both rejected with different reasons
ASYMMETRIC         one engine lowered, the other rejected
CRASH              an engine raised something other than SpecRejected, died
                   (segfault, exit, abort), hung past the timeout, or
                   returned something the gate does not know
EXPECTATION        the engines agree but not with the config's expectation
                   (must-reject accepted, must-pass rejected, or rejected
                   with a reason other than the expected one)
=================  ==========================================================

Only IDENTICAL and BOTH_REJECTED pass; anything else -- including a verdict
or status this module does not know -- fails (fail-closed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from parity.config import CANONICAL_FLAVORS, DEFAULT_ENGINES, DEFAULT_TIMEOUT, Config, Family, load_families
from parity.gate.pool import WorkerPool

IDENTICAL = "IDENTICAL"
BOTH_REJECTED = "BOTH_REJECTED"
MISMATCH = "MISMATCH"
REASON_MISMATCH = "REASON_MISMATCH"
ASYMMETRIC = "ASYMMETRIC"
CRASH = "CRASH"
EXPECTATION = "EXPECTATION"

VERDICTS: tuple[str, ...] = (IDENTICAL, BOTH_REJECTED, MISMATCH, REASON_MISMATCH,
                             ASYMMETRIC, CRASH, EXPECTATION)
PASSING = frozenset({IDENTICAL, BOTH_REJECTED})

#: Engine names the gate knows; anything else is taken as a module name
#: (tests inject deliberately wrong stub engines that way).
ENGINE_MODULES = {"python": "python_engine", "cpp": "cpp_engine"}
BUILTIN_FLAVOR_ALIASES = {"llvm24": "llvm23"}


#: Gate jobs per worker process when ``--jobs`` is not given: a worker costs about
#: 0.15 CPU-s to start (two engines imported), more than a small run's work.
#: Measured (farm-bench, 5 paired runs, load 20): `parity check --only ir_core`
#: (75 jobs) takes 0.75x the wall and 0.70x the CPU with one worker instead of two.
JOBS_PER_WORKER = 128


def auto_workers(jobs: int) -> int:
    """Workers for ``jobs`` gate jobs without ``--jobs``: the CPU count, but one per
    :data:`JOBS_PER_WORKER` jobs started (at least one)."""
    return max(1, min(os.cpu_count() or 1, -(-jobs // JOBS_PER_WORKER)))


def engine_module(name: str) -> str:
    return ENGINE_MODULES.get(name, name)


def passes(verdict: str) -> bool:
    return verdict in PASSING


@dataclass
class Result:
    family: str
    config: str
    flavor: str
    verdict: str
    detail: str
    expected: str  # "ok" or "reject('...')"
    outcomes: tuple[dict, dict]
    first_diff: tuple[int, str, str] | None = None
    #: Seconds the worker spent on the entry (both engines): the JUnit testcase time and the
    #: cost ``parity check --record-costs`` measures (parity/app/ci_output.py); 0 when not run.
    seconds: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.family}/{self.config}@{self.flavor}"

    @property
    def passed(self) -> bool:
        return passes(self.verdict)

    def golden_entry(self) -> dict | None:
        """The entry both engines agree on (for the golden shard), else None."""
        a, b = self.outcomes
        if self.verdict == IDENTICAL or (self.verdict == EXPECTATION and a.get("status") == "ok"
                                         and b.get("status") == "ok"):
            return {"bytes": a["bytes"], "kernel": a["kernel"], "sha256": a["sha256"]}
        if self.verdict == BOTH_REJECTED or (self.verdict == EXPECTATION and a.get("status") == "rejected"
                                             and b.get("status") == "rejected"):
            return {"rejected": a["reason"]}
        return None

    def engine_entries(self) -> tuple[dict | None, dict | None]:
        """Each engine's own outcome in golden-entry form (None for a crash or an
        unknown status): what the shard would hold if that engine alone were right."""
        def one(o):
            if not isinstance(o, dict):
                return None
            if o.get("status") == "ok" and all(k in o for k in ("bytes", "kernel", "sha256")):
                return {"bytes": o["bytes"], "kernel": o["kernel"], "sha256": o["sha256"]}
            if o.get("status") == "rejected":
                return {"rejected": o.get("reason")}
            return None
        a, b = self.outcomes
        return one(a), one(b)

    def to_json(self, labels: Sequence[str]) -> dict:
        d = {"family": self.family, "config": self.config, "flavor": self.flavor,
             "verdict": self.verdict, "passed": self.passed, "detail": self.detail,
             "expected": self.expected,
             "engines": [dict(o, engine=l) for l, o in zip(labels, self.outcomes)]}
        if self.first_diff is not None:
            n, x, y = self.first_diff
            d["first_diff"] = {"line": n, labels[0]: x, labels[1]: y}
        return d


def _short(o: dict) -> str:
    s = o.get("status")
    if s == "ok":
        return f"ok {o.get('kernel')} {o.get('bytes')}B sha256:{str(o.get('sha256'))[:12]}"
    if s == "rejected":
        return f"rejected {o.get('reason')!r}"
    if s == "crash":
        return f"crash: {o.get('error')}"
    return f"status {s!r}"


def classify(a: dict, b: dict, expect, labels: Sequence[str] = ("a", "b")) -> tuple[str, str]:
    """(verdict, detail) for two engine outcomes and the config's Expect."""
    la, lb = labels
    known = {"ok", "rejected"}
    sa, sb = (a.get("status") if isinstance(a, dict) else None,
              b.get("status") if isinstance(b, dict) else None)
    if sa == "crash" or sb == "crash":
        parts = [f"{l}: {o.get('error')}" for l, o in ((la, a), (lb, b)) if o.get("status") == "crash"]
        return CRASH, "; ".join(parts)
    if sa not in known or sb not in known:
        parts = [f"{l}: unknown status {s!r}" for l, s in ((la, sa), (lb, sb)) if s not in known]
        return CRASH, "; ".join(parts)
    if sa == "ok" and sb == "ok":
        try:
            same = (a["sha256"] == b["sha256"] and a["bytes"] == b["bytes"]
                    and a["kernel"] == b["kernel"])
        except KeyError as exc:
            return CRASH, f"incomplete outcome (missing {exc})"
        if not same:
            what = []
            if a["sha256"] != b["sha256"] or a["bytes"] != b["bytes"]:
                what.append(f"text differs ({la} {a['bytes']}B, {lb} {b['bytes']}B)")
            if a["kernel"] != b["kernel"]:
                what.append(f"kernel name differs ({la} {a['kernel']!r}, {lb} {b['kernel']!r})")
            return MISMATCH, "; ".join(what)
        if expect.kind == "reject":
            return EXPECTATION, f"expected reject({expect.reason!r}) but both engines accepted"
        if expect.kind != "ok":
            return CRASH, f"unknown expectation {expect.kind!r}"
        return IDENTICAL, ""
    if sa == "rejected" and sb == "rejected":
        ra, rb = a.get("reason"), b.get("reason")
        if ra != rb:
            return REASON_MISMATCH, f"{la}: {ra!r} | {lb}: {rb!r}"
        if expect.kind == "ok":
            return EXPECTATION, f"expected ok but both engines rejected: {ra!r}"
        if expect.kind != "reject":
            return CRASH, f"unknown expectation {expect.kind!r}"
        if ra != expect.reason:
            return EXPECTATION, f"rejected with {ra!r}, expected {expect.reason!r}"
        return BOTH_REJECTED, ""
    rej, rl = (a, la) if sa == "rejected" else (b, lb)
    acc_l = lb if rl == la else la
    return ASYMMETRIC, f"{rl} rejected {rej.get('reason')!r}, {acc_l} accepted"


@dataclass
class FlavorSummary:
    counts: dict[str, int]
    applicable: int
    problems: list[str]
    #: what the summary line adds to a GREEN status (e.g. a selection of must-reject configs)
    notes: list[str] = field(default_factory=list)

    @property
    def green(self) -> bool:
        return not self.problems


@dataclass
class FamilySummary:
    family: str
    flavors: dict[str, FlavorSummary]
    problems: list[str] = field(default_factory=list)  # family-level

    @property
    def green(self) -> bool:
        return not self.problems and all(f.green for f in self.flavors.values())


@dataclass
class Report:
    labels: tuple[str, str]
    flavors: tuple[str, ...]
    families: list[Family]
    results: list[Result]
    summaries: dict[str, FamilySummary]
    restarts: int = 0
    #: a `check --shard I/N` shard that holds no config (N above the configs there are): GREEN
    #: with nothing run; any other run that ran nothing is RED
    empty_shard: bool = False

    @property
    def green(self) -> bool:
        return (bool(self.summaries) or self.empty_shard) and all(s.green for s in self.summaries.values())

    def failures(self) -> list[Result]:
        return [r for r in self.results if not r.passed]

    def by_family(self, family: str) -> list[Result]:
        return [r for r in self.results if r.family == family]

    def to_json(self) -> dict:
        return {
            "format": 1,
            "result": "GREEN" if self.green else "RED",
            "engines": list(self.labels),
            "flavors": list(self.flavors),
            "families": {
                name: {
                    "green": s.green,
                    "configs": len(next(f for f in self.families if f.name == name).configs),
                    "problems": list(s.problems),
                    "flavors": {fl: {"green": fs.green, "applicable": fs.applicable,
                                     "counts": dict(fs.counts), "problems": list(fs.problems),
                                     "notes": list(fs.notes)}
                                for fl, fs in s.flavors.items()},
                }
                for name, s in self.summaries.items()
            },
            "results": [r.to_json(self.labels) for r in self.results],
        }


def summarize(families: Sequence[Family], results: Sequence[Result],
              flavors: Sequence[str]) -> dict[str, FamilySummary]:
    out: dict[str, FamilySummary] = {}
    for fam in families:
        fres = [r for r in results if r.family == fam.name]
        fsum = FamilySummary(fam.name, {})
        if not fam.configs:
            fsum.problems.append("family has no configs")
        for fl in flavors:
            rs = [r for r in fres if r.flavor == fl]
            counts = {v: 0 for v in VERDICTS}
            problems = []
            for r in rs:
                if r.verdict in counts:
                    counts[r.verdict] += 1
                else:
                    counts[r.verdict] = counts.get(r.verdict, 0) + 1
                if not r.passed:
                    problems.append(f"{r.config}: {r.verdict}")
            here = [c for c in fam.configs if c.applies(fl)]
            applicable = len(here)
            notes = []
            if applicable != len(rs):
                problems.append(f"{applicable} configs apply but {len(rs)} verdicts")
            if applicable and counts[IDENTICAL] == 0:
                if fam.selection and all(c.expectation(fl).kind == "reject" for c in here):
                    # a user's selection (--only FAMILY/NAME) of configs that must be rejected at
                    # this flavor (e.g. a cluster config before llvm23): their BOTH_REJECTED
                    # verdicts, reason checked, are the whole check; the whole-family rule
                    # below judges the family, which a selection does not run
                    notes.append(f"the selected config{'s' if applicable > 1 else ''} must be rejected at {fl}")
                else:
                    problems.append("compared nothing (no IDENTICAL)")
            fsum.flavors[fl] = FlavorSummary(counts, applicable, problems, notes if not problems else [])
        out[fam.name] = fsum
    return out


def _crash_result(job: tuple, message: str, note: str) -> dict:
    which = int(note) if note in ("0", "1") else 0
    outcomes = [{"status": "notrun"}, {"status": "notrun"}]
    outcomes[which] = {"status": "crash", "error": message}
    return {"outcomes": outcomes, "first_diff": None}


def resolve_flavor(name: str, engine: str = "python", *, pool: WorkerPool | None = None,
                   timeout: float = DEFAULT_TIMEOUT) -> str:
    """Canonical flavor for ``name`` via the engine's flavor table (in a worker).

    Falls back to the built-in alias table only when the engine module cannot
    be imported. Raises ValueError for an unknown flavor.
    """
    return resolve_flavors([name], engine, pool=pool, timeout=timeout)[name] or _unknown(name)


def _unknown(name: str):
    raise ValueError(f"unknown flavor {name!r} (canonical: {', '.join(CANONICAL_FLAVORS)}, "
                     f"aliases: {', '.join(sorted(BUILTIN_FLAVOR_ALIASES))})")


def resolve_flavors(names: Iterable[str], engine: str = "python", *,
                    pool: WorkerPool | None = None,
                    timeout: float = DEFAULT_TIMEOUT) -> dict[str, str | None]:
    names = list(dict.fromkeys(names))
    mod = engine_module(engine)
    own = pool is None
    if own:
        pool = WorkerPool((mod,), workers=1, timeout=timeout)
    try:
        [res] = pool.run([("resolve_flavors", mod, names)],
                         on_crash=lambda job, msg, note: {"error": msg})
    finally:
        if own:
            pool.close()
    if "flavors" in res:
        return {n: (v if v in CANONICAL_FLAVORS else None) for n, v in res["flavors"].items()}
    # engine unavailable: built-in table
    return {n: (n if n in CANONICAL_FLAVORS else BUILTIN_FLAVOR_ALIASES.get(n)) for n in names}


ProgressFn = Callable[[int, int], None]


def run_gate(
    families: Sequence[Family] | None = None,
    *,
    engines: Sequence[str] = DEFAULT_ENGINES,
    flavors: Sequence[str] = CANONICAL_FLAVORS,
    timeout: float = DEFAULT_TIMEOUT,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    pool: WorkerPool | None = None,
) -> Report:
    """Run every applicable (config, flavor) of ``families`` through both engines."""
    if families is None:
        families = load_families()
    if len(engines) != 2:
        raise ValueError(f"the gate compares exactly two engines, got {list(engines)}")
    for fl in flavors:
        if fl not in CANONICAL_FLAVORS:
            raise ValueError(f"flavor {fl!r} is not canonical (resolve aliases first)")
    labels = (engines[0], engines[1])
    modules = (engine_module(engines[0]), engine_module(engines[1]))
    units: list[tuple[Family, Config, str]] = []
    for fam in families:
        for cfg in fam.configs:
            for fl in flavors:
                if cfg.applies(fl):
                    units.append((fam, cfg, fl))
    jobs = [("compare", fam.name, dict(cfg.spec), cfg.arch, fl, modules) for fam, cfg, fl in units]
    done = 0

    def tick(i, value):
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(jobs))

    own = pool is None
    n = min(workers or auto_workers(len(jobs)), max(1, len(jobs)))
    if own:
        pool = WorkerPool(tuple(dict.fromkeys(modules)), workers=n, timeout=timeout)
    try:
        raw = pool.run(jobs, on_crash=_crash_result, on_result=tick, workers=n)
        restarts = pool.restarts
    finally:
        if own:
            pool.close()
    results: list[Result] = []
    for (fam, cfg, fl), value in zip(units, raw):
        expect = cfg.expectation(fl)
        seconds = value.get("seconds", 0.0) if isinstance(value, dict) else 0.0
        if not isinstance(value, dict) or "outcomes" not in value:
            err = value.get("job_error") if isinstance(value, dict) else repr(value)
            outcomes = ({"status": "crash", "error": f"gate job failed: {err}"}, {"status": "notrun"})
            first_diff = None
        else:
            outcomes = tuple(value["outcomes"])
            first_diff = value.get("first_diff")
            if first_diff is not None:
                first_diff = tuple(first_diff)
        verdict, detail = classify(outcomes[0], outcomes[1], expect, labels)
        results.append(Result(fam.name, cfg.name, fl, verdict, detail, str(expect),
                              outcomes, first_diff if verdict == MISMATCH else None,
                              seconds if isinstance(seconds, (int, float)) else 0.0))
    return Report(labels, tuple(flavors), list(families), results,
                  summarize(families, results, flavors), restarts)


def lower_text(family: str, cfg: Config, flavor: str, engine: str = "python", *,
               timeout: float = DEFAULT_TIMEOUT, pool: WorkerPool | None = None) -> dict:
    """One engine's outcome for one config, with ``text`` (crash-isolated)."""
    mod = engine_module(engine)
    own = pool is None
    if own:
        pool = WorkerPool((mod,), workers=1, timeout=timeout)
    try:
        [res] = pool.run([("lower", mod, family, dict(cfg.spec), cfg.arch, flavor)],
                         on_crash=lambda job, msg, note: {"status": "crash", "error": msg, "text": None})
    finally:
        if own:
            pool.close()
    if not isinstance(res, dict) or "status" not in res:
        return {"status": "crash", "error": f"gate job failed: {res!r}", "text": None}
    return res

"""`parity verify`: every emitted module checked by its flavor's LLVM, and a
gfx1250 ISA resource report per compiled config (DESIGN §7, docs/verify.md).

A run:

1. lowers every applicable (family, config, flavor) with one engine (python
   by default; the byte-identity gate guarantees the other emits the same
   bytes) in the gate's crash-isolating engine pool;
2. checks both engines' intrinsic tables: every entry must be an intrinsic
   LLVM 22.1 knows (parity.verify.intrinsics_check) and its declared
   signature must verify in its flavor's lane;
3. per module: no external function that is not an ``llvm.`` intrinsic, every
   declared intrinsic known to LLVM 22.1, then the lane: llvm20 text through
   ``opt-19 -passes=verify``; llvm22/llvm23 text through llvmlite (LLVM 22.1):
   parse, verify, compile once for the config's arch to assembly (through the
   compile cache, parity.llvm.compile_cache), the code object assembled from it by
   LLVM 22's llvm-mc, in worker processes (parity.verify.compile_worker);
4. gates each compiled kernel: no spill and no scratch (unless the config
   has ``allow_spill="reason"``), LDS within the arch limit, ``.cluster_dims``
   in the metadata exactly when the kernel has ``amdgpu-cluster-dims``;
   and the descriptor words every buffer instruction receives equal the arch
   table's buffer resource (parity.verify.descriptor);
5. proves every module's memory accesses aligned for every admissible problem
   (parity.proof, docs/proof.md), in a thread while LLVM compiles: a declared
   ``align N`` (or a buffer access wider than the arch accepts unaligned)
   above the proved alignment fails the unit.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence

from parity.base.escape import shown
from parity.config import CANONICAL_FLAVORS, Family, load_families
from parity.proof import assumptions as proof_assumptions
from parity.proof import ProofReport, prove_module, summarise
from parity.config import DEFAULT_TIMEOUT as LOWER_TIMEOUT
from parity.gate.pool import WorkerPool
from parity.gate.runner import engine_module
from parity.cli.interrupt import cancel_on_error
from parity.verify import intrinsics_check as IC
from parity.verify import lanes as L
from parity.verify import readback as RB
from parity.verify.compile_worker import DEFAULT_TIMEOUT, CompileWorkers
from parity.cli.common import add_compile_cache_option, finish, finite_seconds, note_outside_checkout
from parity.config import ConfigError
from parity.gate.pool import PoolError
from parity.gate import executor as X
from parity.gate.report import add_common_options, die, progress, select

PASS, FAIL, SKIPPED, REJECTED = "PASS", "FAIL", "SKIPPED", "REJECTED"
ENGINES = ("python", "cpp")
_CLUSTER_RE = re.compile(r'"amdgpu-cluster-dims"="([^"]*)"')


@dataclass
class UnitResult:
    family: str
    config: str
    flavor: str
    arch: str
    lane: str = ""
    llvm: str = ""
    llvm_also: str = ""
    kernel: str = ""
    status: str = FAIL
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    isa: dict | None = None
    proof: dict | None = None
    readback: dict = field(default_factory=dict)  # LLVM label -> difference lines (parity/verify/readback.py)

    @property
    def key(self) -> str:
        return f"{self.family}/{self.config}@{self.flavor}"

    @property
    def failed(self) -> bool:
        return self.status == FAIL or (self.status == SKIPPED and L.ci())

    def to_json(self) -> dict:
        return {"family": self.family, "config": self.config, "flavor": self.flavor, "arch": self.arch,
                "lane": self.lane, "llvm": self.llvm, "llvm_also": self.llvm_also, "kernel": self.kernel, "status": self.status,
                "passed": not self.failed, "errors": list(self.errors), "notes": list(self.notes),
                "isa": self.isa, "proof": self.proof, "readback": self.readback}


@dataclass
class VerifyReport:
    engine: str
    flavors: tuple[str, ...]
    lanes: dict[str, L.LaneStatus]
    results: list[UnitResult]
    intrinsic_problems: list[str]
    intrinsic_notes: list[str]
    intrinsics_checked: int
    restarts: int = 0
    proofs: list = field(default_factory=list)
    proof_seconds: float = 0.0
    also: dict = field(default_factory=dict)   # flavor -> LaneStatus of its second checker (LLVM 23 opt)

    def failures(self) -> list[UnitResult]:
        return [r for r in self.results if r.failed]

    def skipped_lanes(self) -> list[str]:
        out = {fl for fl in self.flavors if not self.lanes[fl].available}
        out |= {f"{fl} ({st.lane.name})" for fl, st in self.also.items() if fl in self.flavors and not st.available}
        return sorted(out)

    @property
    def result(self) -> str:
        """``GREEN``, ``RED`` (a failure; under CI a skipped lane is one) or
        ``INCOMPLETE`` (nothing failed but a lane was skipped: never a pass)."""
        if not self.results or self.intrinsic_problems or self.failures():
            return "RED"
        if self.skipped_lanes():
            return "RED" if L.ci() else "INCOMPLETE"
        return "GREEN"

    @property
    def green(self) -> bool:
        return self.result == "GREEN"

    def result_line(self) -> str:
        """The last line of ``parity verify``: ``RESULT: GREEN|RED|INCOMPLETE (skipped lanes: ...)``."""
        r = self.result
        return f"RESULT: {r}" + (f" (skipped lanes: {', '.join(self.skipped_lanes())})" if r == "INCOMPLETE" else "")

    def summary(self) -> dict:
        compiled = [r for r in self.results if r.isa is not None]
        isa = [r.isa for r in compiled]

        def mx(k):
            vs = [x[k] for x in isa if isinstance(x.get(k), int)]
            return max(vs) if vs else None

        occ = [x["occupancy"] for x in isa if isinstance(x.get("occupancy"), int)]
        return {
            "units": len(self.results),
            "passed": sum(1 for r in self.results if r.status == PASS),
            "failed": sum(1 for r in self.results if r.failed),
            "skipped": sum(1 for r in self.results if r.status == SKIPPED),
            "rejected": sum(1 for r in self.results if r.status == REJECTED),
            "verified_opt19": sum(1 for r in self.results if r.lane == L.OPT_TOOL and r.status == PASS),
            "verified_llvm23_opt": sum(1 for r in self.results if r.llvm_also and r.status == PASS),
            "compiled": len(compiled),
            "max_vgprs": mx("vgprs"), "max_sgprs": mx("sgprs"),
            "vgpr_spills": sum(x.get("vgpr_spills") or 0 for x in isa),
            "sgpr_spills": sum(x.get("sgpr_spills") or 0 for x in isa),
            "max_scratch_bytes": mx("scratch_bytes"),
            "max_lds_bytes": mx("lds_bytes"),
            "min_occupancy": min(occ) if occ else None,
            "max_instructions": mx("instructions"),
            "wmma": sum(x.get("wmma") or 0 for x in isa),
            "descriptors_checked": sum(x.get("descriptors_checked") or 0 for x in isa),
            "readbacks": sum(len(r.readback) for r in self.results),
            "readback_differences": sum(len(v) for r in self.results for v in r.readback.values()),
            "intrinsics_checked": self.intrinsics_checked,
        }

    def to_json(self) -> dict:
        return {
            "format": 1,
            "result": self.result,
            "skipped_lanes": self.skipped_lanes(),
            "engine": self.engine,
            "flavors": list(self.flavors),
            "ci": L.ci(),
            "lanes": {fl: {"lane": st.lane.name, "available": st.available, "llvm": st.version,
                           "problem": st.problem, "compiles": st.lane.compiles,
                           "also": ({"lane": self.also[fl].lane.name, "available": self.also[fl].available,
                                     "llvm": self.also[fl].version, "problem": self.also[fl].problem}
                                    if fl in self.also else None)}
                      for fl, st in self.lanes.items() if fl in self.flavors},
            "intrinsics": {"checked": self.intrinsics_checked, "problems": list(self.intrinsic_problems),
                           "notes": list(self.intrinsic_notes)},
            "summary": self.summary(),
            "proof": {"seconds": round(self.proof_seconds, 3),
                      "families": {f: sm.to_json() for f, sm in sorted(summarise(self.proofs).items())}},
            "results": [r.to_json() for r in self.results],
        }


# ---------------------------------------------------------------------------

def _lower_all(units, engine: str, workers: int, timeout: float, cluster=None) -> list[dict]:
    mod = engine_module(engine)
    jobs = [("lower", mod, fam.name, dict(cfg.spec), cfg.arch, fl) for fam, cfg, fl in units]
    with WorkerPool((mod,), workers=min(workers, max(1, len(jobs))), timeout=timeout, cluster=cluster) as pool:
        raw = pool.run(jobs, on_crash=lambda job, msg, note: {"status": "crash", "error": msg})
    out = []
    for v in raw:
        if not isinstance(v, dict) or "status" not in v:
            v = {"status": "crash", "error": f"gate job failed: {v!r}"}
        out.append(v)
    return out


def check_tables(cw: CompileWorkers, lanes: dict[str, L.LaneStatus], engine: str,
                 flavors: Sequence[str]) -> tuple[list[str], list[str], int, dict, dict]:
    """(problems, notes, entries checked, probe results by decl line, arch table).

    Every intrinsic of both engines' tables (each flavor) must be known to
    LLVM 22.1, and its declared signature must verify in the flavor's lane.
    """
    problems: list[str] = []
    notes: list[str] = []
    mods = [engine_module(e) for e in dict.fromkeys((engine,) + ENGINES)]
    answers = cw.run([{"kind": "tables", "module": m, "flavors": list(CANONICAL_FLAVORS)} for m in mods])
    arch: dict = {}
    rows: dict[str, set[str]] = {fl: set() for fl in CANONICAL_FLAVORS}  # flavor -> decl lines
    for m, a in zip(mods, answers):
        if not a.get("ok"):
            msg = f"{m}: tables not read ({a.get('error')})"
            if m == engine_module(engine):
                problems.append(msg)
            else:
                notes.append(msg + "; its intrinsic table is not checked")
            continue
        if m == engine_module(engine):
            arch = {row["name"]: row for row in a["arch"]}
        for fl, tab in a["intrinsics"].items():
            for key, decl in tab:
                rows.setdefault(fl, set()).add(decl)
    llvmlite_ok = lanes["llvm22"].available
    if not llvmlite_ok:
        msg = (f"SKIPPED intrinsic existence check: {lanes['llvm22'].problem}")
        (problems if L.ci() else notes).append(msg)
        return problems, notes, 0, {}, arch
    new = sorted(rows.get("llvm22", set()) | rows.get("llvm23", set()))
    old = sorted(rows.get("llvm20", set()))
    res_new, res_old = cw.run([{"kind": "probe", "decls": new, "check_right": True},
                               {"kind": "probe", "decls": old, "check_right": False}])
    probes: dict = {}
    for which, res in (("llvm22/llvm23", res_new), ("llvm20", res_old)):
        if not res.get("ok"):
            problems.append(f"intrinsic probe ({which}) failed: {res.get('error')}")
            continue
        for line, r in res["results"].items():
            probes.setdefault(line, r)
            if not r.get("known"):
                problems.append(f"intrinsic table ({which}): {_unknown_msg(line, r)}")
            elif "right_ok" in r and not r["right_ok"]:
                problems.append(f"intrinsic table ({which}): declared signature does not verify in "
                                f"{lanes['llvm22'].version}: {line} -- {r['right_error']}")
    n = len(new) + len(old)
    # llvm20 signatures in opt-19
    if old:
        st = lanes["llvm20"]
        if st.available:
            decls = [IC.parse_decl(l) for l in old]
            ok, err = L.run_opt_verify(IC.combined_right_signature_module(decls))
            if not ok:
                for d in decls:
                    ok1, err1 = L.run_opt_verify(IC.right_signature_module(d))
                    if not ok1:
                        problems.append(f"intrinsic table (llvm20): declared signature does not verify in "
                                        f"{st.version}: {d.text} -- {_first_line(err1)}")
        else:
            msg = f"SKIPPED llvm20 intrinsic signatures in {L.OPT_TOOL}: {st.problem}"
            (problems if L.ci() else notes).append(msg)
    return problems, notes, n, probes, arch


def _first_line(s: str) -> str:
    lines = [l for l in s.splitlines() if l.strip()]
    return " | ".join(lines[:3])


def _unknown_msg(line: str, r: dict) -> str:
    if r.get("error"):
        return f"{line}: {r['error']}"
    return (f"@{r.get('name')} is not an intrinsic LLVM 22.1 knows: a declaration with a wrong "
            f"signature still verifies ({line})")


def _cluster_attr(text: str) -> list[int] | None:
    m = _CLUSTER_RE.search(text)
    if not m:
        return None
    try:
        dims = [int(x) for x in m.group(1).split(",")]
    except ValueError:
        return [-1]
    return None if all(d == 0 for d in dims) else dims


def gate_isa(u: UnitResult, isa: dict, text: str, cfg, arch_row: dict | None) -> None:
    """Append the ISA gate's failures for one compiled kernel to ``u.errors``."""
    for p in isa.get("problems") or []:
        u.errors.append(f"ISA report: {p}")
    spills = (isa.get("vgpr_spills") or 0, isa.get("sgpr_spills") or 0)
    scratch = isa.get("scratch_bytes") or 0
    if any(spills) or scratch or isa.get("dynamic_stack"):
        what = (f"{spills[0]} VGPR spills, {spills[1]} SGPR spills, {scratch} scratch bytes"
                + (", dynamic stack" if isa.get("dynamic_stack") else ""))
        if getattr(cfg, "allow_spill", ""):
            u.notes.append(f"spills allowed ({cfg.allow_spill}): {what}")
        else:
            u.errors.append(f"spill/scratch: {what} (mark the config allow_spill=\"reason\" if intended)")
    lds = isa.get("lds_bytes")
    if arch_row is None:
        u.errors.append(f"arch {u.arch!r} is not in the engine's arch table (no LDS limit)")
    elif isinstance(lds, int) and lds > arch_row.get("lds_bytes", 0):
        u.errors.append(f"LDS {lds} bytes exceeds the {u.arch} limit of {arch_row['lds_bytes']} bytes")
    want = _cluster_attr(text)
    have = isa.get("cluster_dims")
    if want is not None and have is None:
        u.errors.append(f"kernel has amdgpu-cluster-dims={','.join(map(str, want))} but its code-object "
                        "metadata has no .cluster_dims")
    elif want is None and have is not None:
        u.errors.append(f"code-object metadata has .cluster_dims {have} but the kernel has no "
                        "amdgpu-cluster-dims")
    elif want is not None and list(have) != want:
        u.errors.append(f".cluster_dims {have} differs from amdgpu-cluster-dims {want}")


def gate_descriptors(u: UnitResult, desc: dict | None) -> None:
    """Append the buffer-descriptor check's failures (parity.verify.descriptor:
    the compiled SGPR quads against the arch table) to ``u.errors``; record the
    number of buffer instructions checked in the ISA report."""
    if desc is None:
        u.errors.append(f"buffer descriptors not checked: arch {u.arch!r} has no row in the engine's arch table")
        return
    if u.isa is not None:
        u.isa["descriptors_checked"] = desc["checked"]
    for p in desc["problems"]:
        u.errors.append(f"buffer descriptor ({u.arch}): {p}")


@dataclass
class _Jobs:
    """The LLVM, opt and proof jobs of one run, and the units they judge."""
    results: list = field(default_factory=list)     # UnitResult, unit order
    compile: list = field(default_factory=list)     # (UnitResult, worker job, text)
    opt: list = field(default_factory=list)         # (UnitResult, text): llvm20 via opt-19
    opt23: list = field(default_factory=list)       # (UnitResult, text): LLVM 23 read-back
    proof: list = field(default_factory=list)       # (UnitResult, text, config)
    extra_decls: set = field(default_factory=set)   # module intrinsic declarations not probed yet


def run_verify(
    families: Sequence[Family] | None = None,
    *,
    engine: str = "python",
    flavors: Sequence[str] = CANONICAL_FLAVORS,
    workers: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    lower_timeout: float = LOWER_TIMEOUT,
    progress: Callable[[int, int], None] | None = None,
    lanes: dict[str, L.LaneStatus] | None = None,
    cluster=None,
) -> VerifyReport:
    """Verify every applicable (family, config, flavor) of ``families`` (all LLVM IR
    families by default) lowered by ``engine``; see the module docstring for the
    steps. ``timeout``: seconds per LLVM job; ``lower_timeout``: seconds per
    lowering. ``cluster`` (parity/gate/executor.py, ``--scheduler``): the lowerings and
    the LLVM compiles and read-backs run there (the proof and the opt subprocesses stay
    here). Raises ValueError for a flavor that is not canonical."""
    if families is None:
        families = load_families()
    families = [f for f in families if f.output == "llvm_ir"]  # text families are not LLVM IR
    for fl in flavors:
        if fl not in CANONICAL_FLAVORS:
            raise ValueError(f"flavor {fl!r} is not canonical (resolve aliases first)")
    n = workers or os.cpu_count() or 1
    lanes = lanes or L.statuses()
    also = {fl: st for fl in flavors if (st := L.also_status(fl)) is not None}
    units = [(fam, cfg, fl) for fam in families for cfg in fam.configs for fl in flavors if cfg.applies(fl)]
    lowered = _lower_all(units, engine, n, lower_timeout, cluster)
    with CompileWorkers(workers=n, timeout=timeout, keep=True, cluster=cluster) as cw:  # one set of workers for every run below
        t_problems, t_notes, n_checked, probes, arch = check_tables(cw, lanes, engine, flavors)
        jobs = _plan_jobs(units, lowered, engine, lanes, also, probes)
        if jobs.extra_decls and lanes["llvm22"].available:
            [res] = cw.run([{"kind": "probe", "decls": sorted(jobs.extra_decls), "check_right": False}])
            if res.get("ok"):
                probes.update(res["results"])
            else:
                t_problems.append(f"intrinsic probe of module declarations failed: {res.get('error')}")
        for j in jobs.compile:
            j[1]["arch_row"] = arch.get(j[1]["arch"])
        proof_pool, opt_pool, futures = _run_jobs(cw, jobs, n, timeout, progress)
    _judge_compiles(jobs, futures, arch)
    with cancel_on_error(proof_pool, opt_pool), opt_pool:
        _judge_readbacks(jobs, futures)
    with cancel_on_error(proof_pool), proof_pool:
        proved = [f.result() for f in futures["proof"]]
    proofs, proof_seconds = [r for r, _ in proved], sum(t for _, t in proved)
    _judge_proofs(jobs, proofs)
    _judge_intrinsics(jobs.results, probes, lanes["llvm22"].available)
    return VerifyReport(engine, tuple(flavors), {fl: lanes[fl] for fl in CANONICAL_FLAVORS},
                        jobs.results, t_problems, t_notes, n_checked, cw.restarts, proofs, proof_seconds, also)


def _plan_jobs(units, lowered, engine: str, lanes, also, probes) -> _Jobs:
    """One UnitResult per unit and the jobs that judge it: a rejected or crashed
    lowering is judged here; a lowered module goes to the proof, LLVM 23's
    read-back where available, and its flavor's lane (opt-19 or llvmlite)."""
    jobs = _Jobs()
    for (fam, cfg, fl), out in zip(units, lowered):
        st = lanes[fl]
        u = UnitResult(fam.name, cfg.name, fl, cfg.arch, lane=st.lane.name, llvm=st.label)
        jobs.results.append(u)
        expect = cfg.expectation(fl)
        if out["status"] == "rejected":
            u.status = REJECTED
            if expect.kind == "ok":
                u.status = FAIL
                u.errors.append(f"expected ok but {engine} rejected: {out.get('reason')!r}")
            continue
        if out["status"] != "ok" or not isinstance(out.get("text"), str):
            u.errors.append(f"{engine} engine crashed: {out.get('error')}")
            continue
        if expect.kind == "reject":
            u.notes.append(f"expected reject({expect.reason!r}) but {engine} lowered it (the gate's verdict)")
        u.kernel = out["kernel"]
        text = out["text"]
        u.errors.extend(IC.external_call_problems(text))
        try:
            decls = IC.declarations(text)
        except IC.DeclError as exc:
            u.errors.append(str(exc))
            decls = []
        jobs.extra_decls.update(d.text for d in decls if d.is_intrinsic_name and d.text not in probes)
        u._decls = decls  # type: ignore[attr-defined]
        u._cfg = cfg  # type: ignore[attr-defined]
        jobs.proof.append((u, text, cfg))
        if fl in also and also[fl].available:
            u.llvm_also = also[fl].version
            jobs.opt23.append((u, text))
        if not st.available:
            u.status = SKIPPED
            u.notes.append(f"lane {st.lane.name} missing: {st.problem}")
            continue
        if st.lane.kind == L.OPT:
            jobs.opt.append((u, text))
        else:
            jobs.compile.append((u, {"kind": "compile", "text": text, "kernel": u.kernel, "arch": cfg.arch}, text))
    return jobs


def _run_jobs(cw: CompileWorkers, jobs: _Jobs, n: int, timeout: float, progress) -> tuple:
    """Run every job: the proof in one thread (overlapping the LLVM workers, one job
    per module so Ctrl-C cancels the rest, parity/cli/interrupt.py); opt-19 / LLVM 23
    opt subprocesses on ``n`` threads, filling the cores the LLVM workers leave idle;
    compiles (longest module first, so no long compile runs alone at the end) and
    llvmlite read-backs in ``cw``. Returns ``(proof_pool, opt_pool, futures)``:
    the compile and read-back answers are in; the proof and opt answers are
    futures/iterators the caller drains inside the pools' shutdown."""
    total = 2 * len(jobs.compile) + len(jobs.opt) + len(jobs.opt23)
    done = 0
    tick_lock = threading.Lock()

    def tick(*_):
        nonlocal done
        with tick_lock:  # the LLVM workers' thread and the opt threads
            done += 1
            if progress is not None:
                progress(done, total)

    def opt_with(tool):  # opt -S: verifies its input, prints it back (read-back)
        def one(job):
            res = RB.run_opt_print(job[1], tool, timeout=timeout)
            tick()
            return res
        return one

    proof_pool = ThreadPoolExecutor(max_workers=1)
    opt_pool = ThreadPoolExecutor(max_workers=n)
    with cancel_on_error(proof_pool, opt_pool):
        futures = {"proof": [proof_pool.submit(_prove_one, job) for job in jobs.proof],
                   "opt": opt_pool.map(opt_with(L.opt_path() or L.OPT_TOOL), jobs.opt),
                   "opt23": opt_pool.map(opt_with(L.opt23_path() or L.OPT23_TOOL), jobs.opt23)}
        order = sorted(range(len(jobs.compile)), key=lambda i: -len(jobs.compile[i][2]))
        answers: list = [None] * len(jobs.compile)
        rb_jobs = [{"kind": "readback", "text": text} for _, _, text in jobs.compile]
        got = cw.run([jobs.compile[i][1] for i in order] + rb_jobs, on_result=tick)
        for i, a in zip(order, got):
            answers[i] = a
        futures["compile"], futures["readback"] = answers, got[len(jobs.compile):]
    return proof_pool, opt_pool, futures


_STAGE_LABEL = {"abort": "LLVM aborted", "timeout": "LLVM hung", "parse": "parse error",
                "verify": "verifier error", "compile": "compile error",
                "assemble": "assembler error (llvm-mc)"}


def _judge_compiles(jobs: _Jobs, futures: dict, arch: dict) -> None:
    """The llvmlite lane's verdicts: read-back, the compile's errors and stderr, the
    ELF, the ISA gate and the buffer descriptors."""
    for (u, _, text), a in zip(jobs.compile, futures["readback"]):
        _readback(u, u.llvm, text, a.get("ok", False), a.get("printed", ""), a.get("error", ""))
    for (u, _, text), a in zip(jobs.compile, futures["compile"]):
        err = a.get("stderr", "")
        if "not a recognized processor" in err:
            u.errors.append(f"{u.llvm} does not know cpu {u.arch!r}: {_first_line(err)}")
        elif err and a.get("ok"):
            u.notes.append(f"LLVM stderr: {_first_line(err)}")
        if not a.get("ok"):
            stage = a.get("stage", "?")
            label = _STAGE_LABEL.get(stage, f"{stage} error")
            u.errors.append(f"{label} ({u.llvm}, cpu {u.arch}): {a.get('error')}")
            continue
        for name in a.get("externals", []):
            msg = f"declares external function @{name}, which is not an llvm. intrinsic"
            if msg not in u.errors:
                u.errors.append(msg)
        if not a.get("elf"):
            u.errors.append("code object is not an AMDGPU ELF (e_machine != EM_AMDGPU)")
        u.isa = a["report"]
        gate_isa(u, u.isa, text, u._cfg, arch.get(u.arch))  # type: ignore[attr-defined]
        gate_descriptors(u, a.get("descriptors"))


def _judge_readbacks(jobs: _Jobs, futures: dict) -> None:
    """opt-19's (llvm20 lane) and LLVM 23's read-back verdicts."""
    for units, answers, also in ((jobs.opt, futures["opt"], False), (jobs.opt23, futures["opt23"], True)):
        for (u, text), (ok, printed, err) in zip(units, answers):
            llvm = u.llvm_also if also else u.llvm
            if not ok:
                u.errors.append(f"{llvm} rejects the {u.flavor if also else 'llvm20'} text: {_first_line(err)}")
                continue
            if err:
                u.notes.append(f"{'LLVM 23 opt' if also else 'opt'} stderr: {_first_line(err)}")
            _readback(u, llvm, text, True, printed, "")


def _judge_proofs(jobs: _Jobs, proofs: list) -> None:
    """The alignment proof's verdicts (they stand without an LLVM lane)."""
    for (u, _, _), pr in zip(jobs.proof, proofs):
        u.proof = pr.counts()
        for f in pr.failures:
            u.errors.append(f"alignment proof: {f}")
        if pr.failures and u.status == SKIPPED:
            u.status = FAIL  # the proof needs no LLVM: its verdict stands without the lane


def _judge_intrinsics(results: list, probes: dict, probed: bool) -> None:
    """Every declared intrinsic known to LLVM 22.1 (``probed``: the llvm22 lane ran
    the probe); then each unit's final status."""
    for u in results:
        for d in getattr(u, "_decls", []):
            if not d.is_intrinsic_name:
                continue
            r = probes.get(d.text)
            if r is None:
                if probed:
                    u.errors.append(f"intrinsic @{d.name} was not probed")
                continue
            if not r.get("known"):
                u.errors.append(_unknown_msg(d.text, r))
        if u.status not in (SKIPPED, REJECTED):
            u.status = FAIL if u.errors else PASS
        for a in ("_decls", "_cfg"):
            if hasattr(u, a):
                delattr(u, a)


def _readback(u: UnitResult, llvm: str, text: str, ok: bool, printed: str, error: str) -> None:
    """Compare ``text`` with its read-back by ``llvm`` (parity/verify/readback.py):
    record the differences on the unit; an undeclared one is an error. A module
    the printer could not parse is left to the lane's own check (parse error)."""
    if not ok:
        return
    diffs = RB.compare(text, printed)
    u.readback[llvm] = [d.line() for d in diffs]
    errors, notes = RB.judge(u.flavor, llvm, diffs)
    u.errors.extend(errors)
    u.notes.extend(notes)


def _prove_one(job) -> tuple:
    """parity.proof over one lowered unit ``(unit, text, config)``: (its report, CPU seconds)."""
    u, text, cfg = job
    t0 = time.thread_time()
    try:
        r = prove_module(text, u.family, u.config, dict(cfg.spec), u.arch, u.flavor)
    except Exception as exc:  # noqa: BLE001 -- a bug in the proof is a failed unit, not a traceback
        r = ProofReport(u.family, u.config, u.flavor, u.arch)
        r.failures.append(f"the proof crashed: {type(exc).__name__}: {exc}")
    return r, time.thread_time() - t0


# --- output -------------------------------------------------------------------

COLUMNS = (("config", None), ("flavor", None), ("LLVM", None), ("status", None),
           ("VGPR", "vgprs"), ("SGPR", "sgprs"), ("vspill", "vgpr_spills"), ("sspill", "sgpr_spills"),
           ("scratch", "scratch_bytes"), ("LDS", "lds_bytes"), ("occ", "occupancy"),
           ("insts", "instructions"), ("wmma", "wmma"), ("cluster", "cluster_dims"))


def lane_lines(rep: VerifyReport) -> list[str]:
    out = []
    for fl in rep.flavors:
        st = rep.lanes[fl]
        what = ("parse, verify(), read-back, compile (O3) to assembly + code object" if st.lane.compiles
                else "parse + verify + read-back (opt -S)")
        also = rep.also.get(fl)
        more = f"; and by {also.version}: parse + verify + read-back (opt -S)" if also is not None and also.available else ""
        if st.available:
            out.append(f"lane {fl}: checked by {st.version}: {what}{more}")
        else:
            tag = "FAILED (CI)" if L.ci() else "SKIPPED"
            out.append(f"lane {fl}: {tag} -- {st.problem}; {fl} text is NOT checked by it{more}")
        if also is not None and not also.available:
            tag = "FAILED (CI)" if L.ci() else "SKIPPED"
            out.append(f"lane {fl}: {also.lane.name} {tag} -- {also.problem}; {fl} text is not checked by "
                       "its own LLVM release")
    return out


def table_rows(rep: VerifyReport) -> list[list[str]]:
    rows = []
    for r in rep.results:
        if r.status == REJECTED:
            continue
        row = [f"{r.family}/{r.config}", r.flavor, r.llvm.split(" (")[0] if r.llvm else "-",
               r.status if not r.failed or r.status == FAIL else f"{r.status}(CI)"]
        for _, k in COLUMNS[4:]:
            v = (r.isa or {}).get(k) if k else None
            if k == "occupancy" and r.isa and r.isa.get("occupancy_source") == "computed":
                v = f"{v}*"
            if isinstance(v, list):
                v = "x".join(map(str, v))
            row.append("-" if v is None else str(v))
        rows.append(row)
    return rows


def summary_lines(rep: VerifyReport) -> list[str]:
    s = rep.summary()
    lines = [f"verify: engine {rep.engine}; {s['units']} units: {s['passed']} passed, {s['failed']} failed, "
             f"{s['skipped']} skipped, {s['rejected']} rejected by the engine (not compiled)"]
    lines.append(f"verify: compiled {s['compiled']} kernels (llvmlite), verified {s['verified_opt19']} "
                 f"llvm20 modules ({L.OPT_TOOL}) and {s['verified_llvm23_opt']} llvm23 modules "
                 f"({L.OPT23_TOOL}); max VGPRs {s['max_vgprs']}, max SGPRs {s['max_sgprs']}, "
                 f"spills {s['vgpr_spills']} VGPR / {s['sgpr_spills']} SGPR, max scratch {s['max_scratch_bytes']} B, "
                 f"max LDS {s['max_lds_bytes']} B, min occupancy {s['min_occupancy']} waves/SIMD, "
                 f"v_wmma {s['wmma']}, buffer descriptors checked {s['descriptors_checked']}")
    lines.append(readback_line(rep))
    lines.append(f"verify: {s['intrinsics_checked']} intrinsic declarations checked against LLVM 22.1"
                 + (f"; {len(rep.intrinsic_problems)} problem(s)" if rep.intrinsic_problems else ""))
    for sm in sorted(summarise(rep.proofs).values(), key=lambda x: x.family):
        lines.append(f"verify: {sm.line()}")
    lines.append(f"verify: alignment proof of {len(rep.proofs)} modules took {rep.proof_seconds:.1f} s CPU "
                 f"(docs/proof.md; {len(proof_assumptions.TABLE)} declared assumptions)")
    return lines


def readback_line(rep: VerifyReport) -> str:
    """``verify: read-back: ...``: modules printed back per LLVM, and every distinct
    difference with the number of units it occurs in (expected ones marked)."""
    per_llvm: dict[str, int] = {}
    diffs: dict[tuple[str, str, str], int] = {}
    for r in rep.results:
        for llvm, lines in r.readback.items():
            name = llvm.split(" (")[0]
            per_llvm[name] = per_llvm.get(name, 0) + 1
            for d in lines:
                diffs[(r.flavor, name, d)] = diffs.get((r.flavor, name, d), 0) + 1
    head = ", ".join(f"{n} by {llvm}" for llvm, n in sorted(per_llvm.items())) or "none"
    out = f"verify: read-back: {head}; {len(diffs)} distinct difference(s)"
    for (fl, llvm, d), n in sorted(diffs.items()):
        tag = "expected" if RB.expected(fl, llvm, RB.Difference(*_split_diff(d))) else "NOT EXPECTED"
        out += f"\n  read-back {fl} by {llvm} [{tag}, {n} modules]: {d}"
    return out


def _split_diff(line: str) -> tuple[str, str, str, str]:
    what, rest = line.split(": ", 1)
    kind = rest.split(" ", 1)[0]
    return kind, what, "", ""


def failure_lines(rep: VerifyReport, limit: int = 200) -> list[str]:
    out = [f"  INTRINSICS: {p}" for p in rep.intrinsic_problems]
    out += [f"  note: {n}" for n in rep.intrinsic_notes]
    fails = rep.failures()
    for r in fails[:limit]:
        if r.status == SKIPPED:
            out.append(f"  SKIPPED(CI) {r.key}: lane {r.lane} missing")
        for e in r.errors:
            out.append(f"  FAIL {r.key} [{r.llvm}]: {e}")
    if len(fails) > limit:
        out.append(f"  ... and {len(fails) - limit} more (see --json)")
    return out


def print_table(rep: VerifyReport, file=None) -> None:
    file = file or sys.stdout
    header = [c for c, _ in COLUMNS]
    rows = table_rows(rep)
    if file.isatty():
        try:
            from rich.console import Console  # rich: only when drawing on a terminal
            from rich.table import Table  # rich: only when drawing on a terminal
        except ImportError:
            pass
        else:
            t = Table(title=f"ISA report (engine {rep.engine}; * = occupancy computed, not LLVM's)")
            for i, h in enumerate(header):
                t.add_column(h, justify="right" if i >= 4 else "left")
            for row in rows:
                style = "red" if row[3].startswith(("FAIL", "SKIPPED")) else None
                t.add_row(*row, style=style)
            Console(file=file).print(t)
            return
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    fmt = lambda row: "  ".join(v.ljust(w) if i < 4 else v.rjust(w)  # noqa: E731
                                for i, (v, w) in enumerate(zip(row, widths)))
    print(fmt(header), file=file)
    for row in rows:
        print(fmt(row), file=file)


def print_report(rep: VerifyReport, *, table: bool = False) -> None:
    for line in lane_lines(rep):
        print(line)
    if table:
        print_table(rep)
    for line in summary_lines(rep):
        print(line)
    for line in failure_lines(rep):
        print(line)
    skipped = [fl for fl in rep.skipped_lanes() if fl in rep.lanes]  # a missing second checker: its lane line says it
    if skipped:
        print(f"WARNING: lane(s) {', '.join(skipped)} SKIPPED: that text was NOT checked by any LLVM "
              + ("(CI: this is a failure)" if L.ci() else "(the result is INCOMPLETE, exit 1; under CI a failure)"))


# --- CLI ----------------------------------------------------------------------

def add_command(sub) -> None:
    """Register ``parity verify`` on the parity CLI's subparsers."""
    v = sub.add_parser("verify", help="check every emitted module with its flavor's LLVM; ISA report")
    add_common_options(v)
    v.add_argument("--report", action="store_true", help="print the per-config ISA table")
    v.add_argument("--engine", default="python", choices=ENGINES,
                   help="whose text to verify (default python; byte identity makes them equal)")
    v.add_argument("--compile-timeout", type=finite_seconds("--compile-timeout"), default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"per-module LLVM timeout in seconds (default {DEFAULT_TIMEOUT:g})")
    v.add_argument("--intrinsics", action="store_true",
                   help="print the intrinsic drift report instead: every intrinsic each flavor uses, "
                        "as LLVM 19, 22.1 and 23.1 parse it (docs/verify.md)")
    add_compile_cache_option(v)
    X.add_argument(v)
    v.set_defaults(func=cmd_verify)


def cmd_verify(args) -> int:
    note_outside_checkout()
    if getattr(args, "intrinsics", False):
        from parity.verify.drift import cmd_intrinsics
        try:
            return cmd_intrinsics(args)
        except (ConfigError, ValueError, PoolError, OSError) as exc:
            return die(f"parity verify --intrinsics: {exc}")
    try:
        families, flavors, _ = select(args)
        if families and not any(f.output == "llvm_ir" for f in families):
            names = ", ".join(shown(f.name) for f in families)
            return die(f"parity verify: {names}: text famil{'y' if len(families) == 1 else 'ies'}, "
                       "no LLVM IR to verify (verify checks the IR families; docs/verify.md)")
        with X.cluster_for(X.scheduler_address(getattr(args, "scheduler", None))) as cluster, \
                progress("verify") as cb:
            rep = run_verify(families, engine=args.engine, flavors=flavors, workers=args.jobs,
                             timeout=args.compile_timeout, lower_timeout=args.timeout, progress=cb,
                             cluster=cluster)
    except (ConfigError, ValueError, PoolError, X.SchedulerError) as exc:
        return die(str(exc))
    print_report(rep, table=args.report)
    print(rep.result_line())
    return finish(args, "verify", rep.result, rep.to_json())

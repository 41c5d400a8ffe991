"""`parity verify --intrinsics`: the intrinsic drift report (docs/verify.md,
"Intrinsic drift").

Every intrinsic each canonical flavor's IR uses (the ``llvm.*`` declarations
of every module the engine lowers at that flavor, and the rows of its
intrinsic table), with the signature each available LLVM gives it when it
parses a module that declares and calls it as the flavor writes it: LLVM 19
(``opt-19 -S``), LLVM 22.1 (llvmlite, parse + verify + print) and LLVM 23.1.4
(``opt -S``). Each answer is ``as written``, ``upgraded`` (the printed
declaration or call differs: the release rewrote it, parity/verify/readback.py)
or ``rejected`` (with LLVM's message). So the next flavor's changes show
before a user meets them: a row that one release upgrades or rejects is
where a new flavor column will differ.

The report is informational (exit 0 when it ran); the read-back in `parity
verify` is the gate.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from parity.base.outputs import write_report
from parity.config import CANONICAL_FLAVORS, load_families
from parity.verify import intrinsics_check as IC
from parity.verify import lanes as L
from parity.verify import readback as RB

AS_WRITTEN, UPGRADED, REJECTED, MISSING = "as written", "upgraded", "rejected", "not available"


def probe_module(decl: IC.Decl) -> str:
    """A module that declares ``decl`` and calls it once with zero operands
    (``0``/``null``/``zeroinitializer``: immediates where LLVM wants ``immarg``)."""
    args = []
    for t in decl.params:
        if re.fullmatch(r"i\d+", t):
            args.append(f"{t} 0")
        elif t.startswith("ptr"):
            args.append(f"{t} null")
        else:
            args.append(f"{t} zeroinitializer")
    call = f"call {decl.ret} @{decl.name}({', '.join(args)})"
    body = f"  {call}\n" if decl.ret == "void" else f"  %r = {call}\n"
    return f"{decl.text}\n\ndefine void @probe() {{\n{body}  ret void\n}}\n"


def printed_signature(printed: str) -> str:
    """The declaration of the function ``@probe`` calls, as ``printed`` has it
    (attribute group reference dropped)."""
    fp_call = re.search(r"call[^@\n]*@([\w.]+)\(", printed)
    if not fp_call:
        return "(no call)"
    name = fp_call.group(1)
    for line in printed.splitlines():
        if line.startswith("declare") and f"@{name}(" in line:
            return re.sub(r"\s*#\d+\s*$", "", line.strip())
    return f"(no declaration of @{name})"


@dataclass
class Answer:
    """One LLVM's answer for one (flavor, declaration): ``status`` is
    ``as written``, ``upgraded`` (``signature`` = the declaration as printed),
    ``rejected`` (``detail`` = LLVM's message) or ``not available``."""

    llvm: str
    status: str
    signature: str = ""
    detail: str = ""

    def to_json(self) -> dict:
        return {"llvm": self.llvm, "status": self.status, "signature": self.signature, "detail": self.detail}


@dataclass
class Row:
    """One (flavor, declaration line) of the report: how many of the flavor's
    modules declare it, and every LLVM's :class:`Answer`."""

    flavor: str
    decl: str
    used_by: int                      # modules of the flavor that declare it
    answers: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"flavor": self.flavor, "declaration": self.decl, "modules": self.used_by,
                "answers": [a.to_json() for a in self.answers]}


def _judge(llvm: str, text: str, ok: bool, printed: str, error: str) -> Answer:
    if not ok:
        return Answer(llvm, REJECTED, detail=" | ".join(l for l in error.splitlines() if l.strip())[:300])
    diffs = [d for d in RB.compare(text, printed)]
    sig = printed_signature(printed)
    if diffs:
        return Answer(llvm, UPGRADED, sig, "; ".join(d.line() for d in diffs))
    return Answer(llvm, AS_WRITTEN, sig)


def used_declarations(engine: str = "python", workers: int | None = None) -> dict[str, dict[str, int]]:
    """{flavor: {declaration line: number of modules declaring it}} over every
    config of every IR family the engine lowers, plus its intrinsic table rows
    (count 0 when no module declares a row)."""
    import importlib

    from parity.gate.pool import WorkerPool
    from parity.gate.runner import engine_module

    fams = [f for f in load_families() if f.output == "llvm_ir"]
    units = [(fam, cfg, fl) for fam in fams for cfg in fam.configs for fl in CANONICAL_FLAVORS if cfg.applies(fl)]
    mod = engine_module(engine)
    jobs = [("lower", mod, fam.name, dict(cfg.spec), cfg.arch, fl) for fam, cfg, fl in units]
    with WorkerPool((mod,), workers=workers or 2, timeout=120.0) as pool:  # the gate's crash-isolating pool
        lowered = pool.run(jobs, on_crash=lambda job, msg, note: {"status": "crash", "error": msg})
    out: dict[str, dict[str, int]] = {fl: {} for fl in CANONICAL_FLAVORS}
    for (fam, cfg, fl), res in zip(units, lowered):
        if not isinstance(res, dict) or res.get("status") != "ok":
            continue
        for d in IC.declarations(res["text"]):
            if d.is_intrinsic_name:
                out[fl][d.text] = out[fl].get(d.text, 0) + 1
    E = importlib.import_module(engine_module(engine))
    for fl in CANONICAL_FLAVORS:
        for _, line in E.intrinsic_table(fl):
            out[fl].setdefault(line, 0)
    return out


def run_drift(engine: str = "python", workers: int | None = None) -> dict:
    """The drift report as JSON: which LLVMs answered, and one row per
    (flavor, declaration) with each LLVM's answer."""
    from parity.verify.compile_worker import CompileWorkers

    used = used_declarations(engine, workers)
    opt19, opt23 = L.opt_path(), L.opt23_path()
    llvm_st = L.status(L.LANES[1])
    also = L.also_status("llvm23")
    tools = [("LLVM 19 (opt-19)", L.status(L.LANES[0]).version if opt19 else "", opt19),
             ("LLVM 22.1 (llvmlite)", llvm_st.version if llvm_st.available else "", "llvmlite"),
             ("LLVM 23.1 (opt)", also.version if also and also.available else "", opt23 if also and also.available else None)]
    rows: list[Row] = []
    texts: list[str] = []
    for fl in CANONICAL_FLAVORS:
        for line, n in sorted(used[fl].items()):
            rows.append(Row(fl, line, n))
            texts.append(probe_module(IC.parse_decl(line)))
    lite: list = [None] * len(texts)
    if llvm_st.available:
        with CompileWorkers(workers=workers or 2) as cw:
            lite = cw.run([{"kind": "readback", "text": t, "verify": True} for t in texts])
    for row, text, la in zip(rows, texts, lite):
        for label, version, tool in tools:
            if not version or tool is None:
                row.answers.append(Answer(label, MISSING))
            elif tool == "llvmlite":
                row.answers.append(_judge(version, text, la.get("ok", False), la.get("printed", ""),
                                          la.get("error", "")))
            else:
                ok, printed, err = RB.run_opt_print(text, tool)
                row.answers.append(_judge(version, text, ok, printed, err))
    return {"format": 1, "engine": engine, "llvms": [{"name": n, "version": v} for n, v, _ in tools],
            "rows": [r.to_json() for r in rows]}


def report_lines(rep: dict) -> list[str]:
    """The drift report as text: one block per (flavor, declaration)."""
    out = ["intrinsic drift: " + "; ".join(f"{l['name']}: {l['version'] or 'not available'}" for l in rep["llvms"])]
    counts: dict[str, int] = {}
    for row in rep["rows"]:
        out.append(f"{row['flavor']}  {row['declaration']}  [{row['modules']} modules]")
        for a in row["answers"]:
            counts[a["status"]] = counts.get(a["status"], 0) + 1
            what = a["signature"] if a["status"] == UPGRADED else a["detail"] if a["status"] == REJECTED else ""
            out.append(f"    {a['llvm']}: {a['status']}" + (f": {what}" if what else ""))
    out.append("intrinsic drift: " + f"{len(rep['rows'])} (flavor, intrinsic) rows; "
               + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return out


def cmd_intrinsics(args) -> int:
    """``parity verify --intrinsics``: print the drift report (and write
    ``--json``); exit 0 when it ran."""
    rep = run_drift(engine=args.engine, workers=args.jobs)
    for line in report_lines(rep):
        print(line)
    if args.json:  # `-` to stdout, a device in place, a file atomically (parity/base/outputs.py)
        write_report(args.json, json.dumps(rep, indent=1, sort_keys=True) + "\n")
    return 0

"""Code that runs inside the gate's worker processes (and in-process for bench).

An engine outcome is a small dict:

* ``{"status": "ok", "kernel": k, "sha256": h, "bytes": n}``
* ``{"status": "rejected", "reason": r}``
* ``{"status": "crash", "error": msg}``  (any non-SpecRejected failure)
* ``{"status": "notrun"}``  (the other engine crashed the worker first)

Texts never leave the worker for a comparison; only the first differing line
of a MISMATCH does (the ``show``/``diff`` jobs return the text on request).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable

from parity.gate.outcomes import MAX_LINE, lower_outcome, import_engine, crash_line
from parity.gate.fuzz_check import check_spec, run_batch
from parity.base.stale import skip_import_rebuild

def first_difference(a: str, b: str) -> tuple[int, str, str]:
    """1-based line number and the first differing line of both texts."""
    la, lb = a.split("\n"), b.split("\n")
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else None
        y = lb[i] if i < len(lb) else None
        if x != y:
            def show(v):
                if v is None:
                    return "<end of text>"
                return v if len(v) <= MAX_LINE else v[: MAX_LINE - 3] + "..."
            return i + 1, show(x), show(y)
    return 0, "", ""  # identical texts


def compare(family: str, spec: dict, arch: str, flavor: str, modules: tuple[str, str],
            note: Callable[[str], None] = lambda s: None) -> dict:
    start = time.perf_counter()  # the entry's measured cost (parity check --record-costs, --shard)
    outcomes = []
    texts = []
    for k, module in enumerate(modules):
        if k:  # engine 0 needs no note: a crash before any note is the first engine's (runner._crash_result)
            note(str(k))
        out, text = lower_outcome(module, family, spec, arch, flavor, keep_text=True)
        outcomes.append(out)
        texts.append(text)
    first_diff = None
    a, b = outcomes
    if a["status"] == "ok" and b["status"] == "ok" and (
            a["sha256"] != b["sha256"] or a["bytes"] != b["bytes"]):
        first_diff = first_difference(texts[0], texts[1])
    del texts
    return {"outcomes": outcomes, "first_diff": first_diff, "seconds": time.perf_counter() - start}


def resolve_flavors(module: str, names: list[str]) -> dict:
    """{name: canonical flavor or None (unknown)}; {"error": msg} if unusable."""
    try:
        E = import_engine(module)
    except ImportError as exc:
        return {"error": str(exc)}
    rejected_cls = getattr(E, "SpecRejected", Exception)
    out = {}
    for n in names:
        try:
            r = E.resolve_flavor(n)
        except rejected_cls:
            r = None
        out[n] = r if isinstance(r, str) else None
    return {"flavors": out}


def _lower_job(module: str, family: str, spec: dict, arch: str, flavor: str, note: Callable[[str], None]) -> dict:
    note("0")
    out, text = lower_outcome(module, family, spec, arch, flavor, keep_text=True)
    out["text"] = text
    return out


def _lower_origins_job(module: str, family: str, spec: dict, arch: str, flavor: str,
                       note: Callable[[str], None]) -> dict:
    """One engine's text and origin table (its ``lower_origins``; parity/gate/locate.py)."""
    note("0")
    try:
        E = import_engine(module)
        low, origins = E.lower_origins(family, dict(spec), arch, flavor)
    except ImportError as exc:
        return {"status": "crash", "error": str(exc)}
    except BaseException as exc:  # noqa: BLE001 - a rejection or crash is an outcome
        if isinstance(exc, KeyboardInterrupt):
            raise
        rejected_cls = getattr(E, "SpecRejected", None)
        if isinstance(rejected_cls, type) and isinstance(exc, rejected_cls):
            return {"status": "rejected", "reason": str(getattr(exc, "reason", exc))}
        return {"status": "crash", "error": crash_line(f"{type(exc).__name__}: {exc}")}
    data = low.text.encode("utf-8")
    return {"status": "ok", "kernel": low.kernel, "text": low.text, "origins": list(origins),
            "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _resolve_flavors_job(module: str, names: list[str], note: Callable[[str], None]) -> dict:
    return resolve_flavors(module, names)


# The job kinds: a job is (kind, *args); its handler is called as
# handler(*args, note). A new kind is one line here.
JOBS: dict[str, Callable[..., Any]] = {
    "compare": compare,                   # the gate: both engines on one (config, flavor)
    "lower": _lower_job,                  # one engine's text (show, diff, verify, ir_diff)
    "lower_origins": _lower_origins_job,  # one engine's text + origin table (diff/check --origin)
    "resolve_flavors": _resolve_flavors_job,
    "fuzz": run_batch,                    # parity fuzz: a batch of generated specs (parity/gate/fuzz_check.py)
    "fuzz_one": check_spec,               # parity fuzz: one given spec (shrinking)
}


def run_job(job: tuple, note: Callable[[str], None]) -> Any:
    kind, *args = job
    handler = JOBS.get(kind)
    if handler is None:
        raise ValueError(f"unknown job kind {kind!r}")
    return handler(*args, note)


def serve(conn, modules: tuple[str, ...]) -> None:
    skip_import_rebuild()  # the parent rebuilt and checked cpp_engine (parity/base/stale.py)
    for m in modules:  # import every engine once, up front
        try:
            import_engine(m)
        except ImportError:
            pass  # reported per job as a crash
    conn.send(("ready",))
    while True:
        try:
            chunk = conn.recv()
        except (EOFError, OSError):
            return
        if chunk is None:
            return
        # ("start", i) for the chunk's first job; each result names the job that starts
        # next, so a job costs one message (plus its notes), not two
        conn.send(("start", chunk[0][0]))
        for n, (i, job) in enumerate(chunk):
            try:
                value = run_job(job, lambda s, i=i: conn.send(("note", i, s)))
            except Exception as exc:  # noqa: BLE001 - gate bug or bad job: report, keep serving
                value = {"job_error": crash_line(f"{type(exc).__name__}: {exc}")}
            conn.send(("result", i, value, chunk[n + 1][0] if n + 1 < len(chunk) else None))

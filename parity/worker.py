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
import importlib
import traceback
from typing import Any, Callable

MAX_LINE = 400
_engines: dict[str, Any] = {}
_import_errors: dict[str, str] = {}


def import_engine(module: str):
    if module in _engines:
        return _engines[module]
    if module in _import_errors:
        raise ImportError(_import_errors[module])
    try:
        mod = importlib.import_module(module)
    except BaseException as exc:  # noqa: BLE001 - an import failure is a crash, not our death
        _import_errors[module] = f"cannot import engine module {module!r}: {type(exc).__name__}: {exc}"
        raise ImportError(_import_errors[module]) from None
    _engines[module] = mod
    return mod


def _one_line(s: str) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= MAX_LINE else s[: MAX_LINE - 3] + "..."


def lower_outcome(module: str, family: str, spec: dict, arch: str, flavor: str,
                  keep_text: bool = False) -> tuple[dict, str | None]:
    """Lower once with engine ``module``; never raises (except BaseException
    that kills the process, which the pool reports)."""
    try:
        E = import_engine(module)
    except ImportError as exc:
        return {"status": "crash", "error": str(exc)}, None
    rejected_cls = getattr(E, "SpecRejected", None)
    try:
        low = E.lower(family, dict(spec), arch, flavor)
    except BaseException as exc:  # noqa: BLE001
        if isinstance(rejected_cls, type) and isinstance(exc, rejected_cls):
            reason = getattr(exc, "reason", None)
            if not isinstance(reason, str):
                return {"status": "crash",
                        "error": f"SpecRejected without a str reason: {reason!r}"}, None
            return {"status": "rejected", "reason": reason}, None
        if isinstance(exc, KeyboardInterrupt):
            raise
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
        return {"status": "crash",
                "error": _one_line(f"{type(exc).__name__}: {exc}{where}")}, None
    kernel = getattr(low, "kernel", None)
    text = getattr(low, "text", None)
    if not isinstance(kernel, str) or not isinstance(text, str):
        return {"status": "crash",
                "error": _one_line(f"lower() returned {type(low).__name__} without str kernel/text")}, None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return {"status": "crash", "error": _one_line(f"text is not valid UTF-8: {exc}")}, None
    out = {"status": "ok", "kernel": kernel,
           "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    return out, (text if keep_text else None)


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
    outcomes = []
    texts = []
    for k, module in enumerate(modules):
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
    return {"outcomes": outcomes, "first_diff": first_diff}


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


def run_job(job: tuple, note: Callable[[str], None]) -> Any:
    kind = job[0]
    if kind == "compare":
        _, family, spec, arch, flavor, modules = job
        return compare(family, spec, arch, flavor, modules, note)
    if kind == "lower":
        _, module, family, spec, arch, flavor = job
        note("0")
        out, text = lower_outcome(module, family, spec, arch, flavor, keep_text=True)
        out["text"] = text
        return out
    if kind == "fuzz":  # parity fuzz: a batch of generated specs (parity/fuzz/check.py)
        from parity.fuzz.check import run_batch
        _, seed, family, start, count, modules = job
        return run_batch(seed, family, start, count, modules, note)
    if kind == "fuzz_one":  # parity fuzz: one given spec (shrinking)
        from parity.fuzz.check import check_spec
        _, family, spec, arch, flavor, modules = job
        return check_spec(family, spec, arch, flavor, modules, note)
    if kind == "resolve_flavors":
        _, module, names = job
        return resolve_flavors(module, names)
    raise ValueError(f"unknown job kind {kind!r}")


def serve(conn, modules: tuple[str, ...]) -> None:
    from parity.stale import skip_import_rebuild
    skip_import_rebuild()  # the parent rebuilt and checked cpp_engine (parity/stale.py)
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
        for i, job in chunk:
            conn.send(("start", i))
            try:
                value = run_job(job, lambda s, i=i: conn.send(("note", i, s)))
            except Exception as exc:  # noqa: BLE001 - gate bug or bad job: report, keep serving
                value = {"job_error": _one_line(f"{type(exc).__name__}: {exc}")}
            conn.send(("result", i, value))

"""One engine call, never raising: import an engine module once per process
and lower one spec into a small outcome dict (the shapes are in
parity/gate/worker.py). Shared by the gate's job handlers (parity/gate/worker.py) and the
fuzzer's (parity/gate/fuzz_check.py), which the worker's job table names.
"""

from __future__ import annotations

import hashlib
import importlib
import traceback
from typing import Any

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


def crash_line(s: str) -> str:
    """A crash or job-error message for a report: white space runs made one space,
    cut to MAX_LINE characters with ``...`` (unlike :func:`parity.cli.common.one_line`,
    which escapes and never cuts, and :func:`parity.llvm.compile.message_line`)."""
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
                "error": crash_line(f"{type(exc).__name__}: {exc}{where}")}, None
    kernel = getattr(low, "kernel", None)
    text = getattr(low, "text", None)
    if not isinstance(kernel, str) or not isinstance(text, str):
        return {"status": "crash",
                "error": crash_line(f"lower() returned {type(low).__name__} without str kernel/text")}, None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return {"status": "crash", "error": crash_line(f"text is not valid UTF-8: {exc}")}, None
    out = {"status": "ok", "kernel": kernel,
           "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    return out, (text if keep_text else None)

"""One fuzz spec through both engines (runs inside the gate's worker
processes; see parity/gate/worker.py job kinds ``fuzz`` and ``fuzz_one``).

For each engine: ``validate`` then ``lower`` (parity/gate/worker.py
``lower_outcome``: ok with sha256/bytes/kernel, rejected with the reason, or
crash). The verdict of a spec:

=================  ==========================================================
IDENTICAL          both lowered the same bytes and kernel name
BOTH_REJECTED      both rejected with the same reason
MISMATCH           both lowered; text or kernel name differ
REASON_MISMATCH    both rejected (in validate or lower) with other reasons
ASYMMETRIC         one engine accepted what the other rejected
CRASH              an exception other than SpecRejected, a dead or hung worker
INCONSISTENT       an engine's validate disagrees with its own lower
UNCLEAN_REASON     a reason that is not one line of printable text (no control
                   character, U+2028/U+2029 or lone surrogate)
=================  ==========================================================

Only IDENTICAL and BOTH_REJECTED pass.
"""
from __future__ import annotations

import re
import traceback

from parity.gate.outcomes import import_engine, lower_outcome, crash_line
from parity.gate.fuzz_generate import generate

PASSING = ("IDENTICAL", "BOTH_REJECTED")
FAILING = ("MISMATCH", "REASON_MISMATCH", "ASYMMETRIC", "CRASH", "INCONSISTENT", "UNCLEAN_REASON")
VERDICTS = PASSING + FAILING
_UNCLEAN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _validate(module: str, family, spec, arch, flavor) -> dict:
    try:
        E = import_engine(module)
    except ImportError as exc:
        return {"status": "crash", "error": str(exc)}
    try:
        r = E.validate(family, dict(spec), arch, flavor)
    except BaseException as exc:  # noqa: BLE001 - validate must never raise
        if isinstance(exc, KeyboardInterrupt):
            raise
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
        return {"status": "crash", "error": crash_line(f"validate raised {type(exc).__name__}: {exc}{where}")}
    if r is None:
        return {"status": "ok"}
    if not isinstance(r, str):
        return {"status": "crash", "error": f"validate returned {type(r).__name__}"}
    return {"status": "rejected", "reason": r}


def _clean(reason: str) -> bool:
    return bool(reason) and not _UNCLEAN.search(reason)


def verdict(va: dict, la: dict, vb: dict, lb: dict, labels=("python", "cpp")) -> tuple:
    """(verdict, detail) from both engines' validate and lower outcomes."""
    for lab, v, low in ((labels[0], va, la), (labels[1], vb, lb)):
        for what, o in (("validate", v), ("lower", low)):
            if o.get("status") not in ("ok", "rejected"):
                return "CRASH", f"{lab} {what}: {o.get('error', o.get('status'))}"
    for lab, v, low in ((labels[0], va, la), (labels[1], vb, lb)):
        if v["status"] != low["status"] or v.get("reason") != low.get("reason"):
            return "INCONSISTENT", (f"{lab}: validate {v.get('reason', 'ok')!r} but lower "
                                    f"{low.get('reason', 'ok')!r}")
        if low["status"] == "rejected" and not _clean(low["reason"]):
            return "UNCLEAN_REASON", f"{lab}: {low['reason']!r}"
    sa, sb = la["status"], lb["status"]
    if sa == "ok" and sb == "ok":
        same_text = la["sha256"] == lb["sha256"] and la["bytes"] == lb["bytes"]
        if same_text and la["kernel"] == lb["kernel"]:
            return "IDENTICAL", ""
        what = [] if same_text else [f"text differs ({la['bytes']}B vs {lb['bytes']}B)"]
        if la["kernel"] != lb["kernel"]:
            what.append(f"kernel {la['kernel']!r} vs {lb['kernel']!r}")
        return "MISMATCH", "; ".join(what)
    if sa == "rejected" and sb == "rejected":
        if la["reason"] == lb["reason"]:
            return "BOTH_REJECTED", ""
        return "REASON_MISMATCH", f"{labels[0]}: {la['reason']!r} | {labels[1]}: {lb['reason']!r}"
    rej = labels[0] if sa == "rejected" else labels[1]
    reason = la.get("reason") if sa == "rejected" else lb.get("reason")
    return "ASYMMETRIC", f"{rej} rejected {reason!r}, the other accepted"


def check_spec(family, spec, arch, flavor, modules, note=lambda s: None) -> tuple:
    """(verdict, detail) of one spec; ``note`` is told which engine runs."""
    outs = []
    for k, m in enumerate(modules):
        note(f"{k}")
        v = _validate(m, family, spec, arch, flavor)
        low, _ = lower_outcome(m, family, spec, arch, flavor)
        outs += [v, low]
    return verdict(*outs)


def run_batch(seed: int, family: str, start: int, count: int, modules, note) -> dict:
    """Specs ``start .. start+count-1`` of ``family``: verdict counts and the
    failures as ``(index, verdict, detail)``. ``note`` gets the index before
    each spec, so a worker death is charged to that spec."""
    counts: dict = {}
    failures = []
    for i in range(start, start + count):
        note(str(i))
        spec, arch, flavor, _ = generate(seed, family, i)
        v, detail = check_spec(family, spec, arch, flavor, modules)
        counts[v] = counts.get(v, 0) + 1
        if v not in PASSING:
            failures.append((i, v, detail))
    return {"counts": counts, "failures": failures}


def replay(family, spec, arch, flavor, modules=("python_engine", "cpp_engine")) -> int:
    """Run one spec in this process and print its verdict (reproducer files
    call this); exit status 0 when it passes, 1 when not."""
    v, detail = check_spec(family, spec, arch, flavor, modules)
    print(f"{family}: {v}{': ' + detail if detail else ''}")
    return 0 if v in PASSING else 1

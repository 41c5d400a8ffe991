"""The divergence locator (docs/gate.md, "Finding the builder call behind a
difference"): both engines lower one config with origin recording on
(``lower_origins`` of docs/engine_api.md, never changing the bytes), and the
first differing line is shown with the source line of the builder call that
produced it in each engine (``python_engine/...py:LINE``,
``cpp_engine/src/...cpp:LINE``). Used by ``parity diff FAMILY/NAME --origin``
and ``parity check --origin``.
"""
from __future__ import annotations

from dataclasses import dataclass

from parity.base.escape import shown
from parity.gate.pool import WorkerPool
from parity.gate.runner import engine_module


@dataclass
class Located:
    """The first difference of two engines' texts at one config and flavor.

    ``line``: 1-based line number (0: no difference); ``texts``: each
    engine's line there; ``origins``: each engine's builder call for that line
    (``""`` when no builder call made it, e.g. a declaration); ``error``: why
    nothing could be located (a rejection, a crash), else None."""

    line: int = 0
    texts: tuple = ("", "")
    origins: tuple = ("", "")
    error: str | None = None


def origin_of(out: dict, line: int) -> str:
    """The origin of 1-based ``line`` in one engine's ``lower_origins`` outcome ("" if none)."""
    table = out.get("origins") or []
    return table[line - 1] if 0 < line <= len(table) else ""


def locate_outcomes(outs: list) -> Located:
    """:class:`Located` of two ``lower_origins`` job outcomes."""
    bad = [f"{o.get('status')}: {o.get('reason') or o.get('error')}" for o in outs if o.get("status") != "ok"]
    if bad:
        return Located(error="; ".join(bad))
    from parity.gate.worker import first_difference  # the worker side (and the engines through it): off the parent's start-up
    n, x, y = first_difference(outs[0]["text"], outs[1]["text"])
    if n == 0:
        return Located()
    return Located(n, (x, y), (origin_of(outs[0], n), origin_of(outs[1], n)))


def run_origins(pool: WorkerPool, family: str, spec: dict, arch: str, flavor: str, engines) -> list:
    """Both engines' ``lower_origins`` outcomes for one config (in ``pool``'s workers)."""
    jobs = [("lower_origins", engine_module(e), family, dict(spec), arch, flavor) for e in engines]
    return pool.run(jobs, on_crash=lambda job, msg, note: {"status": "crash", "error": msg})


def locate(family: str, spec: dict, arch: str, flavor: str, engines, *, timeout: float,
           pool: WorkerPool | None = None) -> Located:
    """Lower one config with both engines in origin mode and locate the first difference."""
    own = pool is None
    if own:
        pool = WorkerPool(tuple(dict.fromkeys(engine_module(e) for e in engines)), workers=2, timeout=timeout)
    try:
        return locate_outcomes(run_origins(pool, family, spec, arch, flavor, engines))
    finally:
        if own:
            pool.close()


def located_lines(loc: Located, labels, indent: str = "  ") -> list[str]:
    """The lines that show ``loc``: per engine its line and the builder call behind it."""
    if loc.error is not None:
        return [f"{indent}origin: not located ({shown(loc.error)})"]
    if loc.line == 0:
        return [f"{indent}origin: the texts do not differ"]
    w = max(len(labels[0]), len(labels[1]))
    out = [f"{indent}first difference at line {loc.line}, made by:"]
    for lab, text, org in zip(labels, loc.texts, loc.origins):
        out.append(f"{indent}  {lab:<{w}}  {org or '(no builder call: printer line)'}  {shown(text.strip())}")
    return out

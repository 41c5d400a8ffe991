"""Text output and option handling shared by check_byte_identity and the parity CLI
(the vocabulary itself: :mod:`parity.cli.common`)."""

from __future__ import annotations

import argparse

from parity.base.escape import shown
from parity.config import CANONICAL_FLAVORS, DEFAULT_ENGINES, DEFAULT_TIMEOUT, ConfigError, load_families, DEFAULT_PACKAGE
from parity.gate.runner import (MISMATCH, VERDICTS, Report, Result, resolve_flavors)
from parity.cli.common import (add_options, check_writable, die, one_line, parse_only, positive_int,  # noqa: F401
                               positive_seconds, progress, select_configs, split_csv, write_json)


def add_common_options(p: argparse.ArgumentParser, *, flavor: bool = True, only: bool = True,
                       json: bool = True, jobs: bool = True) -> None:
    """The shared options of the config commands (:func:`parity.cli.common.add_options`)."""
    add_options(p, only="configs" if only else None, flavor=flavor, json=json, jobs=jobs)


def parse_engines(s: str) -> tuple[str, str]:
    parts = [p.strip() for p in s.split(",") if p.strip()]
    if len(parts) != 2:
        raise ValueError(f"--engines wants two engines, e.g. python,cpp (got {s!r})")
    return parts[0], parts[1]


def select(args) -> tuple[list, tuple[str, ...], tuple[str, str]]:
    """(families, flavors, engines) from parsed common options; ConfigError/ValueError on bad input.

    ``--only`` takes families and FAMILY/NAME configs: a family named by
    FAMILY/NAME items only carries those configs."""
    engines = parse_engines(getattr(args, "engines", ",".join(DEFAULT_ENGINES)))
    fams, names = parse_only(getattr(args, "only", None), getattr(args, "configs", DEFAULT_PACKAGE))
    families = select_configs(load_families(getattr(args, "configs", DEFAULT_PACKAGE), only=fams), names)
    json_path = getattr(args, "json", None)
    if json_path:
        check_writable(json_path)
    flavors = CANONICAL_FLAVORS
    fl = getattr(args, "flavor", None)
    if fl:
        flavors = (canonical_flavor(fl, engines[0], getattr(args, "timeout", DEFAULT_TIMEOUT)),)
        only = getattr(args, "only", None)
        if only and families and not any(c.applies(f) for fam in families for c in fam.configs for f in flavors):
            # before: every count 0 and a silent GREEN, with nothing checked
            theirs = sorted({f for fam in families for c in fam.configs for f in c.flavors})
            raise ValueError(f"--only {shown(only)} with --flavor {fl}: no selected config applies at {flavors[0]} "
                             f"(they apply at {', '.join(theirs) or 'no flavor'}); nothing would be checked")
    return families, flavors, engines


def canonical_flavor(name: str, engine: str = "python", timeout: float = DEFAULT_TIMEOUT) -> str:
    """The canonical flavor of ``name`` (an alias such as llvm24 resolves); ValueError if unknown."""
    if name in CANONICAL_FLAVORS:
        return name
    r = resolve_flavors([name], engine, timeout=timeout)[name]
    if r is None:
        raise ValueError(f"--flavor: unknown flavor {name!r} (canonical: {', '.join(CANONICAL_FLAVORS)}; "
                         "aliases per the engine's flavor table, e.g. llvm24)")
    return r


def summary_lines(report: Report) -> list[str]:
    lines = []
    width = max([len(s) for s in report.summaries] + [8])
    for name, s in report.summaries.items():
        for fl, fs in s.flavors.items():
            counts = " ".join(f"{v}={fs.counts.get(v, 0)}" for v in VERDICTS)
            extra = [k for k in fs.counts if k not in VERDICTS]
            if extra:
                counts += " " + " ".join(f"{k}={fs.counts[k]}" for k in extra)
            probs = list(s.problems) + [p for p in fs.problems if ": " not in p or "configs apply" in p]
            status = "GREEN" if (fs.green and not s.problems) else "RED"
            probs += [n for n in fs.notes if status == "GREEN"]
            tail = f" ({'; '.join(probs)})" if probs else ""
            lines.append(f"{name:<{width}} {fl:<7} {counts} {status}{tail}")
    return lines


def entry_lines(r: Result, labels: tuple[str, str]) -> list[str]:
    """The summary line of one failing entry (``VERDICT FAMILY/CONFIG@FLAVOR: detail``),
    and a MISMATCH's first differing line of each engine."""
    la, lb = labels
    w = max(len(la), len(lb))
    lines = [f"  {r.verdict} {one_line(r.key)}: {one_line(r.detail)}" if r.detail
             else f"  {r.verdict} {one_line(r.key)}"]  # engine text (a crash's error): one line
    if r.verdict == MISMATCH and r.first_diff is not None:
        n, x, y = r.first_diff
        lines.append(f"      line {n} {la:<{w}}: {x}")
        lines.append(f"      line {n} {lb:<{w}}: {y}")
    return lines


def failure_lines(report: Report, limit: int = 200) -> list[str]:
    lines = []
    fails = report.failures()
    for r in fails[:limit]:
        lines.extend(entry_lines(r, report.labels))
    if len(fails) > limit:
        lines.append(f"  ... and {len(fails) - limit} more (see --json)")
    return lines


__all__ = ["progress", "add_common_options", "select", "summary_lines", "failure_lines",
           "write_json", "die", "canonical_flavor", "ConfigError", "split_csv"]

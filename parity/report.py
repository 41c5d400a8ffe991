"""Text output shared by check_byte_identity and the parity CLI."""

from __future__ import annotations

import argparse
import math
import os
import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from parity.config import CANONICAL_FLAVORS, ConfigError, load_families, DEFAULT_PACKAGE
from parity.pool import DEFAULT_TIMEOUT
from parity.runner import (DEFAULT_ENGINES, MISMATCH, VERDICTS, Report, resolve_flavors)


@contextmanager
def progress(label: str) -> Iterator:
    """A progress callback (done, total) drawn on stderr -- only on a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        yield None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as p:
        task = p.add_task(label, total=None)
        yield lambda done, total: p.update(task, completed=done, total=total)


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout wants seconds, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"--timeout must be a finite number of seconds > 0, got {text!r}")
    return v


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs wants an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be at least 1, got {v}")
    return v


def add_common_options(p: argparse.ArgumentParser, *, flavor: bool = True, only: bool = True) -> None:
    if only:
        p.add_argument("--only", metavar="FAM[,FAM...]",
                       help="only these families (comma-separated)")
    if flavor:
        p.add_argument("--flavor", metavar="F",
                       help="only this flavor (aliases such as llvm24 resolve to their canonical flavor)")
    p.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"per-config timeout in seconds (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--jobs", "-j", type=positive_int, default=None, metavar="N",
                   help="worker processes (default: os.cpu_count())")
    # development / test injection (not part of the user surface)
    p.add_argument("--engines", default=",".join(DEFAULT_ENGINES), help=argparse.SUPPRESS)
    p.add_argument("--configs", default=DEFAULT_PACKAGE, help=argparse.SUPPRESS)


def parse_engines(s: str) -> tuple[str, str]:
    parts = [p.strip() for p in s.split(",") if p.strip()]
    if len(parts) != 2:
        raise SystemExit(f"--engines wants two engines, e.g. python,cpp (got {s!r})")
    return parts[0], parts[1]


def split_csv(s: str | None) -> list[str] | None:
    if s is None:
        return None
    return [p.strip() for p in s.split(",") if p.strip()]


def select(args) -> tuple[list, tuple[str, ...], tuple[str, str]]:
    """(families, flavors, engines) from parsed common options; ConfigError/ValueError on bad input."""
    engines = parse_engines(args.engines)
    only = split_csv(getattr(args, "only", None))
    if only is not None and not only:
        raise ValueError("--only names no family (give FAM[,FAM...])")
    families = load_families(args.configs, only=only)
    json_path = getattr(args, "json", None)
    if json_path:
        check_writable(json_path)
    flavors = CANONICAL_FLAVORS
    fl = getattr(args, "flavor", None)
    if fl:
        flavors = (canonical_flavor(fl, engines[0], args.timeout),)
    return families, flavors, engines


def canonical_flavor(name: str, engine: str, timeout: float) -> str:
    if name in CANONICAL_FLAVORS:
        return name
    r = resolve_flavors([name], engine, timeout=timeout)[name]
    if r is None:
        raise ValueError(f"unknown flavor {name!r} (canonical: {', '.join(CANONICAL_FLAVORS)}; "
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
            tail = f" ({'; '.join(probs)})" if probs else ""
            lines.append(f"{name:<{width}} {fl:<7} {counts} {status}{tail}")
    return lines


def failure_lines(report: Report, limit: int = 200) -> list[str]:
    lines = []
    fails = report.failures()
    la, lb = report.labels
    w = max(len(la), len(lb))
    for r in fails[:limit]:
        lines.append(f"  {r.verdict} {r.key}: {r.detail}" if r.detail else f"  {r.verdict} {r.key}")
        if r.verdict == MISMATCH and r.first_diff is not None:
            n, x, y = r.first_diff
            lines.append(f"      line {n} {la:<{w}}: {x}")
            lines.append(f"      line {n} {lb:<{w}}: {y}")
    if len(fails) > limit:
        lines.append(f"  ... and {len(fails) - limit} more (see --json)")
    return lines


def check_writable(path: str | Path) -> None:
    """ValueError unless ``path`` can be written as a file (checked before a
    long run, so a bad --json path does not waste the run)."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"--json {path}: is a directory")
    if not p.parent.is_dir():
        raise ValueError(f"--json {path}: directory {p.parent} does not exist")
    if not os.access(p.parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise ValueError(f"--json {path}: not writable")


def write_json(path: str | Path, doc: dict) -> None:
    Path(path).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def die(msg: str, code: int = 2) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return code


__all__ = ["progress", "add_common_options", "select", "summary_lines", "failure_lines",
           "write_json", "die", "canonical_flavor", "ConfigError", "split_csv"]

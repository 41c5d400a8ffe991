"""The report options of one command, checked together after parsing (docs/cli.md, "Reports"):
each option's own check is :func:`parity.cli.common.check_writable`; here what it cannot see
alone.

* two reports to one file (``--json X --junit X``): one silently overwrote the other;
* a report inside the golden directory of this command (``--golden-dir D``, else the
  checkout's ``golden/``) even while D holds no shard yet (a first ``write``): the report
  became a ``FAMILY.json`` the next check read as a shard;
* ``--json -`` with stdout closed (``>&-``): the report was lost, exit 0;
* an output directory of the command (``emit --out``, ``aot --emit`` / ``--build``,
  ``fuzz --out``) in a golden directory (``aot --emit golden`` left 253 files there), or a
  report inside it (``aot --emit D --json D/jobs.tsv`` replaced the job list, exit 0).
"""
from __future__ import annotations

import os
from pathlib import Path

from parity.base import outputs
from parity.base.escape import shown
from parity.base.outputs import STDOUT, written_in_place
from parity.base.project import find_project_root, golden_dir_holding

#: (option, attribute) of every report file option; ``--annotations`` holds (kind, path).
REPORT_OPTIONS = (("--json", "json"), ("--junit", "junit"), ("--annotations", "annotations"),
                  ("--record-costs", "record_costs"))


def report_paths(args) -> list[tuple[str, str]]:
    """(option, path) of each report file ``args`` names, in option order."""
    out = []
    for flag, attr in REPORT_OPTIONS:
        value = getattr(args, attr, None)
        if isinstance(value, tuple):  # --annotations: (github, None) or (gitlab, FILE)
            value = value[1]
        if value:
            out.append((flag, value))
    return out


def _golden_dir_of(args) -> Path | None:
    """The golden directory the command uses: ``--golden-dir``, else the checkout's golden/."""
    given = getattr(args, "golden_dir", None)
    if given:
        return Path(os.path.realpath(given))
    root = find_project_root()
    return Path(os.path.realpath(root / "golden")) if root is not None else None


#: (command, option, attribute) of the directories a command writes its outputs into
OUTPUT_DIRS = (("emit", "--out", "out"), ("aot", "--emit", "emit"), ("aot", "--build", "build"),
               ("fuzz", "--out", "out"))


def _output_dir_error(args, paths: list) -> str | None:
    """An output directory in a golden directory, or a report inside an output directory."""
    gold = _golden_dir_of(args)
    for command, flag, attr in OUTPUT_DIRS:
        value = getattr(args, attr, None) if getattr(args, "command", None) == command else None
        if not value or not isinstance(value, (str, os.PathLike)):
            continue
        real = Path(os.path.realpath(value))
        held = golden_dir_holding(real / "x")
        if held is not None or (gold is not None and real.is_relative_to(gold)):
            return (f"{flag} {shown(str(value))}: is in a golden directory ({shown(str(held or gold))}); "
                    "outputs go elsewhere")
        for rflag, path in paths:
            if path != STDOUT and Path(os.path.realpath(path)).is_relative_to(real):
                return (f"{rflag} {shown(path)}: is inside the output directory of {flag} ({shown(str(value))}); "
                        "the report would replace or join the outputs: write it elsewhere")
    return None


def report_paths_error(args) -> str | None:
    """The one-line error of ``args``'s report options taken together, or None."""
    paths = report_paths(args)
    why = _output_dir_error(args, paths)
    if why is not None:
        return why
    if any(p == STDOUT for f, p in paths if f == "--json") and "stdout" in outputs.CLOSED_STREAMS:
        return "--json -: stdout is closed (the report would be lost); give a file name"
    gold = _golden_dir_of(args)
    seen: dict[str, str] = {}
    for flag, path in paths:
        if path == STDOUT:
            continue
        real = os.path.realpath(path)
        if gold is not None and Path(real).parent.is_relative_to(gold):
            return (f"{flag} {shown(path)}: is in the golden directory of this command ({shown(str(gold))}); "
                    "reports go elsewhere")
        if real in seen and not written_in_place(Path(real)):
            return f"{flag} {shown(path)}: the same file as {seen[real]}; give each report its own file"
        seen.setdefault(real, flag)
    return None

"""What ``parity check`` gives a CI system besides its text (docs/ci.md, "CI output"):

* ``--junit FILE``: JUnit XML (junitparser), one testsuite per family, one testcase per
  entry and flavor (``CONFIG@FLAVOR``, classname ``parity.FAMILY``, the worker's seconds);
  a failing verdict or golden finding is a ``<failure>`` (a CRASH an ``<error>``) whose
  message is the verdict and whose text is the first difference; an ORPHAN or CONFLICT
  entry no config runs is a failing testcase of its own.
* ``--annotations github``: GitHub workflow commands on stdout, ``::error file=F,line=L,
  title=T::MESSAGE``, one per failure group and one per golden finding kind of a family.
  A MISMATCH group points at the builder call behind its first difference in each engine
  (the divergence locator, parity/gate/locate.py: ``python_engine/...py:LINE``,
  ``cpp_engine/src/...cpp:LINE``); any other verdict at the config's line in
  ``parity/configs/FAMILY.py``; a golden finding at the entry's line of ``golden/FAMILY.json``.
* ``--annotations gitlab[=FILE]``: the same findings as a GitLab code-quality report
  (JSON, default ``gl-code-quality-report.json``).
* ``$GITHUB_STEP_SUMMARY`` set (GitHub Actions sets it): a markdown summary appended to it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from parity.base.escape import shown
from parity.base.outputs import write_report
from parity.gate.runner import CRASH, MISMATCH

GITLAB_DEFAULT = "gl-code-quality-report.json"
#: At most this many MISMATCH groups are located (each lowers one config twice in origin mode).
MAX_LOCATED = 10
_ORIGIN = re.compile(r"((?:python_engine|cpp_engine)/[^\s:]+):(\d+)")


def annotations_arg(text: str) -> tuple[str, str | None]:
    """argparse type of ``--annotations``: ``github``, ``gitlab`` or ``gitlab=FILE``."""
    kind, sep, path = text.partition("=")
    if kind == "github" and not sep:
        return kind, None
    if kind == "gitlab":
        if sep and not path:
            raise argparse.ArgumentTypeError("gitlab=FILE needs a file name")
        return kind, _output_file("--annotations", lambda fh: fh.read(4096).lstrip().startswith(b"["))(
            path or GITLAB_DEFAULT)
    raise argparse.ArgumentTypeError(f"want github, gitlab or gitlab=FILE, got '{shown(text)}'")


def _output_file(flag: str, ours):
    """argparse check of a file ``flag`` writes (parity/cli/common.py ``check_writable``, as
    --json and --record-costs): its directory exists and is writable, it is in no golden
    directory, an existing file is replaced only when empty or when ``ours(fh)`` says this
    tool wrote it (a golden shard or any other file is never overwritten), a FIFO with no
    reader is refused."""
    def check(text: str) -> str:
        from parity.cli.common import check_writable
        try:
            check_writable(text, flag, ours)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)[len(flag) + 1:]) from None  # argparse names the flag
        return text
    return check


def _is_junit(fh) -> bool:
    head = fh.read(4096)
    return head.startswith(b"<?xml") and b'name="parity check' in head


#: argparse type of --junit: a file path (an earlier JUnit report of `parity check` is replaced).
junit_path = _output_file("--junit", _is_junit)


@dataclass
class Note:
    """One annotation: where, a title and a message (one line each)."""

    path: str
    line: int
    title: str
    message: str


# -- locations -------------------------------------------------------------------------------

def _root(gdir: Path) -> Path:
    """Where annotation paths start: the checkout holding the working directory (a CI
    workspace), else the working directory; a file outside it is named by its absolute path
    (``--golden-dir /tmp/g5``: ``/tmp/g5/ir_core.json``, not ``g5/ir_core.json``)."""
    from parity.base.project import find_project_root
    return find_project_root() or Path.cwd().resolve()


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _line_of(path: Path, needle: str) -> int:
    """1-based line of the first line of ``path`` holding ``needle`` (1 when none or unreadable)."""
    try:
        for n, text in enumerate(Path(path).read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if needle in text:
                return n
    except OSError:
        pass
    return 1


def config_location(family, config: str, root: Path) -> tuple[str, int]:
    """``(path, line)`` of ``config``'s name in its family's configs module."""
    src = Path(getattr(family, "source", "") or "")
    if not src.is_file():
        return f"parity/configs/{family.name}.py", 1
    return _rel(src, root), _line_of(src, f'"{config}"')


def golden_location(gdir: Path, family: str, flavor: str, config: str) -> tuple[str, int]:
    """``(path, line)`` of a golden entry (a shard holds one entry per line)."""
    p = Path(gdir) / f"{family}.json"
    return _rel(p, _root(gdir)), _line_of(p, f'"{flavor}/{config}"')


# -- the findings, once for every output ----------------------------------------------------

def _first_diff_text(r, labels) -> str:
    """The first difference of a MISMATCH (each engine's line), else the verdict's detail."""
    if r.first_diff is None:
        return shown(r.detail, limit=2000)
    n, a, b = r.first_diff
    return (f"first difference at line {n}:\n{labels[0]}: {shown(a, limit=2000)}\n"
            f"{labels[1]}: {shown(b, limit=2000)}")


def notes(v, locate_group=None) -> list[Note]:
    """The annotations of check verdict ``v``: per failure group and per (family, golden kind).
    ``locate_group(result) -> Located | None`` locates a MISMATCH example (None: not located)."""
    root = _root(v.golden_dir)
    families = {f.name: f for f in v.report.families}
    out: list[Note] = []
    located = 0
    for g in v.groups:
        ex = g.results[0]
        count = f"{len(g.results)} entr{'y' if len(g.results) == 1 else 'ies'}"
        title = f"parity {g.verdict}: {ex.family}"
        msg = f"{g.verdict} in {ex.family}, {count} (e.g. {ex.config}@{ex.flavor}): {shown(g.key, limit=500)}"
        loc = None
        if g.verdict == MISMATCH and locate_group is not None and located < MAX_LOCATED:
            located += 1
            loc = locate_group(ex)
        places = []
        if loc is not None and getattr(loc, "line", 0):
            for lab, org, text in zip(v.report.labels, loc.origins, loc.texts):
                m = _ORIGIN.search(org or "")
                if m:
                    places.append((m.group(1), int(m.group(2)),
                                   f"{msg}; {lab} made IR line {loc.line} here: {shown(text.strip(), limit=300)}"))
        if not places:
            fam = families.get(ex.family)
            path, line = config_location(fam, ex.config, root) if fam else (f"parity/configs/{ex.family}.py", 1)
            places.append((path, line, msg))
        out += [Note(p, n, title, m) for p, n, m in places]
    kinds: dict[tuple[str, str], list] = {}
    for f in v.findings:
        kinds.setdefault((f.family, f.kind), []).append(f)
    for (fam, kind), fs in sorted(kinds.items()):
        f = fs[0]
        if kind == "MISSING" and fam in families:
            path, line = config_location(families[fam], f.config, root)
        else:
            path, line = golden_location(v.golden_dir, fam, f.flavor, f.config)
        more = f" and {len(fs) - 1} more" if len(fs) > 1 else ""
        out.append(Note(path, line, f"parity golden {kind}: {fam}",
                        f"golden {kind}: {shown(fam)}/{shown(f.config)}@{shown(f.flavor)}{more}: "
                        f"{shown(f.detail, limit=500)}"))
    return out


# -- GitHub / GitLab -------------------------------------------------------------------------

def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(items: list[Note]) -> list[str]:
    """GitHub workflow commands (``::error file=...,line=...,title=...::message``)."""
    return [f"::error file={_gh_prop(n.path)},line={n.line},title={_gh_prop(n.title)}::{_gh_data(n.message)}"
            for n in items]


def gitlab_report(items: list[Note]) -> list[dict]:
    """A GitLab code-quality report (a list of issues; ``fingerprint`` unique per issue)."""
    out = []
    for n in items:
        fp = hashlib.sha256(f"{n.title}\0{n.path}\0{n.line}\0{n.message}".encode()).hexdigest()
        out.append({"description": n.message, "check_name": n.title, "fingerprint": fp, "severity": "major",
                    "location": {"path": n.path, "lines": {"begin": n.line}}})
    return out


# -- JUnit -----------------------------------------------------------------------------------

def write_junit(v, path: str | Path, name: str) -> int:
    """JUnit XML of check verdict ``v`` at ``path``; returns the number of testcases."""
    from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite  # junitparser: only for --junit
    findings = {(f.family, f.flavor, f.config): f for f in v.findings}
    suites: dict[str, TestSuite] = {}

    def suite(fam: str) -> TestSuite:
        if fam not in suites:
            suites[fam] = TestSuite(fam)
        return suites[fam]
    ran = set()
    for e in v.entries:
        r = e.result
        ran.add((r.family, r.flavor, r.config))
        case = TestCase(f"{r.config}@{r.flavor}", classname=f"parity.{r.family}", time=round(r.seconds, 6))
        f = findings.get((r.family, r.flavor, r.config))
        if not r.passed:
            kind = Error if r.verdict == CRASH else Failure
            res = kind(f"{r.verdict}: {shown(r.detail, limit=500)}", r.verdict)
            res.text = _first_diff_text(r, v.report.labels) + (f"\ngolden {f.kind}: {shown(f.detail, limit=500)}" if f else "")
            case.result = [res]
        elif f is not None:
            res = Failure(f"golden {f.kind}: {shown(f.detail, limit=500)}", f"golden {f.kind}")
            res.text = (f"{f.kind} {f.family}/{f.config}@{f.flavor}: {shown(f.detail, limit=2000)}\n"
                        "if the change is intended: parity diff --base HEAD, parity write, commit golden/")
            case.result = [res]
        suite(r.family).add_testcase(case)
    for f in v.findings:
        if (f.family, f.flavor, f.config) in ran:
            continue
        case = TestCase(f"{f.config}@{f.flavor}", classname=f"parity.{f.family}", time=0)
        res = Failure(f"golden {f.kind}: {shown(f.detail, limit=500)}", f"golden {f.kind}")
        res.text = f"{f.kind} {f.family}/{f.config}@{f.flavor}: {shown(f.detail, limit=2000)}"
        case.result = [res]
        suite(f.family).add_testcase(case)
    xml = JUnitXml(name)
    for fam in sorted(suites):
        suites[fam].update_statistics()
        xml.add_testsuite(suites[fam])
    xml.update_statistics()
    tmp = Path(f"{path}.tmp{os.getpid()}")
    xml.write(str(tmp), pretty=True)
    write_report(path, tmp.read_text(encoding="utf-8"))
    tmp.unlink()
    return sum(len(list(s)) for s in suites.values())


# -- markdown --------------------------------------------------------------------------------

def markdown_summary(v, shard_label: str | None = None, items: list[Note] | None = None) -> str:
    """The check as a markdown step summary: result, per-family counts, groups, golden findings."""
    res = "GREEN" if v.green else "RED"
    head = f"## parity check{' shard ' + shard_label if shard_label else ''}: {res}"
    rows = ["| family | flavor | entries | passed | failing | golden |", "|---|---|---:|---:|---:|---|"]
    for fam, s in v.report.summaries.items():
        for fl, fs in s.flavors.items():
            n = sum(fs.counts.values())
            bad = sum(1 for r in v.report.results if r.family == fam and r.flavor == fl and not r.passed)
            gold = sum(1 for f in v.findings if f.family == fam and f.flavor == fl)
            rows.append(f"| {fam} | {fl} | {n} | {n - bad} | {bad} | {gold or 'clean'} |")
    lines = [head, "", *rows]
    if v.groups:
        lines += ["", "### Failures", ""]
        for g in v.groups:
            ex = g.results[0]
            lines.append(f"- **{g.verdict}** `{ex.family}`: {len(g.results)} entries, e.g. `{ex.config}@{ex.flavor}`"
                         f" — {shown(g.key, limit=300)}")
    if v.findings:
        lines += ["", "### Golden", ""]
        kinds: dict[tuple[str, str], int] = {}
        for f in v.findings:
            kinds[(f.family, f.kind)] = kinds.get((f.family, f.kind), 0) + 1
        lines += [f"- `golden/{fam}.json`: {n} {kind}" for (fam, kind), n in sorted(kinds.items())]
        lines.append("")
        lines.append("If intended: `parity diff --base origin/main`, `parity write`, commit `golden/` (docs/gate.md).")
    if items:
        lines += ["", "### Where", ""] + [f"- `{n.path}:{n.line}` {n.title}" for n in items[:20]]
    return "\n".join(lines) + "\n"


def write_outputs(args, v, shard_label: str | None, locate_group) -> int | None:
    """Write what ``args`` ask for (--junit, --annotations) and the step summary; an exit
    status (2) with one ``error:`` line when a file cannot be written, else None."""
    from parity.cli.common import die
    want_notes = getattr(args, "annotations", None) is not None or os.environ.get("GITHUB_STEP_SUMMARY")
    items = notes(v, locate_group if getattr(args, "annotations", None) else None) if want_notes else []
    try:
        if getattr(args, "junit", None):
            write_junit(v, args.junit, f"parity check{' shard ' + shard_label if shard_label else ''}")
        if getattr(args, "annotations", None):
            kind, path = args.annotations
            if kind == "github":
                for line in github_lines(items):
                    print(line)
            else:
                write_report(path, json.dumps(gitlab_report(items), indent=1) + "\n")
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(markdown_summary(v, shard_label, items))
    except OSError as exc:
        return die(f"parity check: {shown(exc.filename or 'standard output')}: {shown(exc.strerror or exc)}")
    return None


def add_check_options(c) -> None:
    """``parity check``'s CI options (docs/ci.md)."""
    from parity.cli.common import Once, writable_file
    c.add_argument("--junit", metavar="FILE", type=junit_path, action=Once,
                   help="also write the result as JUnit XML (one testcase per entry and flavor)")
    c.add_argument("--annotations", metavar="KIND", type=annotations_arg, action=Once,
                   help="github: print ::error annotations at the engine sources / configs / golden lines; "
                        f"gitlab[=FILE]: write a GitLab code-quality report (default {GITLAB_DEFAULT})")
    from parity.cli.shard import shard_arg
    c.add_argument("--shard", metavar="I/N", action=Once, type=shard_arg,
                   help="run shard I of N only (deterministic, balanced by the measured cost of each config; "
                        "the N shards together are the full check)")
    c.add_argument("--record-costs", metavar="FILE", type=writable_file("--record-costs"), action=Once,
                   help="write each config's measured seconds as a cost table (parity/data/check_costs.json "
                        "is the one --shard uses)")

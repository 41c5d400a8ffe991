"""Failure summaries of ``parity check`` and ``check_byte_identity``: the
failing verdicts grouped by family, verdict kind and first differing
normalised line, each group once with its count, one example in full, the
configs it covers (``NAME@{llvm20,llvm22,llvm23}``) and, for a disagreement,
which engine still matches the golden entry; then one hint line per RED kind
naming the command that helps (docs/gate.md, "Reading a RED check").

Normalisation of a first differing line pair (:func:`signature`): SSA value
and block numbers dropped (``%acc12`` -> ``%acc``), vector types written
``<N x T>``, and the integer literals that differ between the two lines
written ``#``. So the same slip at every vector width, dtype, degree and
flavor is one group. The full list of entries stays in ``--json``
(``summary_groups``) and under ``parity check --full``.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from parity.base.escape import shown
from parity.gate.runner import ASYMMETRIC, CRASH, EXPECTATION, MISMATCH, REASON_MISMATCH, Report

#: Groups printed before "... and N more groups" (all of them in --json).
MAX_GROUPS = 12
#: Config names listed per group before "... (+N configs)".
MAX_NAMES = 6

_SSA = re.compile(r"(%[A-Za-z_][A-Za-z0-9_]*?)\d+\b")  # locals and labels; globals and intrinsics kept
_LABEL = re.compile(r"^(\s*[A-Za-z_][A-Za-z0-9_.]*?)\d+:")
_VEC = re.compile(r"<\d+ x [^<>]+>")
_TOKEN = re.compile(r"-?\d+|[A-Za-z_%@.][A-Za-z0-9_.%@]*|\S")
_NUM = re.compile(r"-?\d+")


def normalise_line(line: str) -> str:
    """``line`` (one IR line) without SSA/block numbers and with vector types as ``<N x T>``."""
    line = _LABEL.sub(r"\1:", line)
    line = _SSA.sub(r"\1", line)
    return _VEC.sub("<N x T>", line).strip()


def signature(a: str, b: str) -> str:
    """The group key of a first differing line pair (``a``: first engine's line,
    ``b``: second's). When the normalised lines differ only in integer literals,
    one line with those literals as ``#``; else ``a  |  b`` normalised."""
    na, nb = normalise_line(a), normalise_line(b)
    ta, tb = _TOKEN.findall(na), _TOKEN.findall(nb)
    if len(ta) == len(tb) and all(x == y or (_NUM.fullmatch(x) and _NUM.fullmatch(y)) for x, y in zip(ta, tb)):
        out, pos = [], 0
        for x, y in zip(ta, tb):  # rebuild na with the differing literals replaced, spacing kept
            i = na.index(x, pos)
            out.append(na[pos:i] + (x if x == y else "#"))
            pos = i + len(x)
        return "".join(out) + na[pos:]
    return f"{na}  |  {nb}"


def _detail_key(detail: str) -> str:
    return _NUM.sub("#", detail)


@dataclass
class Group:
    """One group of failing entries: same family, verdict and signature."""

    family: str
    verdict: str
    key: str
    results: list = field(default_factory=list)
    golden_sides: Counter = field(default_factory=Counter)  # "python matches golden" -> count

    def to_json(self) -> dict:
        return {"family": self.family, "verdict": self.verdict, "key": self.key, "count": len(self.results),
                "golden_sides": dict(self.golden_sides),
                "entries": [f"{r.config}@{r.flavor}" for r in self.results]}


def group_failures(report: Report, sides: dict[str, str] | None = None) -> list[Group]:
    """The failing results of ``report`` in groups, biggest first (ties: first
    seen). ``sides`` ({entry key: "python matches golden", ...}; the golden
    workflow's parity.golden.verdict.golden_sides) adds which engine matches golden."""
    groups: dict[tuple, Group] = {}
    for r in report.failures():
        if r.verdict == MISMATCH and r.first_diff is not None:
            key = signature(r.first_diff[1], r.first_diff[2])
        else:
            key = _detail_key(r.detail)
        g = groups.setdefault((r.family, r.verdict, key), Group(r.family, r.verdict, key))
        g.results.append(r)
        side = sides.get(r.key) if sides is not None else None
        if side is not None:
            g.golden_sides[side] += 1
    order = list(groups.values())
    return sorted(order, key=lambda g: -len(g.results))


def configs_text(results, limit: int = MAX_NAMES) -> str:
    """``NAME@{fl,fl}`` per config in first-seen order, the first ``limit`` of them."""
    by_name: dict[str, list[str]] = {}
    for r in results:
        by_name.setdefault(r.config, []).append(r.flavor)
    parts = [shown(n) + "@" + (fls[0] if len(fls) == 1 else "{" + ",".join(fls) + "}")
             for n, fls in list(by_name.items())[:limit]]
    more = len(by_name) - limit
    return ", ".join(parts) + (f", ... (+{more} configs)" if more > 0 else "")


def _sides_text(g: Group) -> str:
    if not g.golden_sides:
        return ""
    n = len(g.results)
    parts = [f"{side} in {'all' if c == n else c}" for side, c in g.golden_sides.most_common()]
    return " (" + ", ".join(parts) + ")"


def group_lines(g: Group, labels: tuple[str, str], locate=None) -> list[str]:
    """The lines of one group: the count line, the example in full (with
    ``locate(result)``'s lines after a MISMATCH example: --origin), its configs."""
    n = len(g.results)
    noun = "divergence" if g.verdict == MISMATCH else "failure"
    ex = g.results[0]
    out = [f"{shown(g.family)}: {g.verdict}: 1 {noun} x {n} entr{'y' if n == 1 else 'ies'}{_sides_text(g)}"]
    head = f"  e.g. {shown(ex.key)}"
    out.append(f"{head}: {shown(ex.detail)}" if ex.detail else head)
    if ex.first_diff is not None:
        line, x, y = ex.first_diff
        w = max(len(labels[0]), len(labels[1]))
        out.append(f"      line {line} {labels[0]:<{w}}: {shown(x)}")
        out.append(f"      line {line} {labels[1]:<{w}}: {shown(y)}")
        if locate is not None:
            out.extend(locate(ex))
    if ex.first_diff is not None and n > 1:
        out.append(f"  normalised: {shown(g.key)}")
    if n > 1:
        out.append(f"  in: {configs_text(g.results)}")
    return out


def _ref(r) -> str:
    return shown(f"{r.family}/{r.config} --flavor {r.flavor}")


def hint_lines(groups: list[Group], labels: tuple[str, str]) -> list[str]:
    """One ``hint:`` line per RED verdict kind among ``groups``, naming the command that helps."""
    out = []
    kinds = {g.verdict: g for g in reversed(groups)}  # each kind's biggest group
    a, b = labels
    if MISMATCH in kinds:
        g = kinds[MISMATCH]
        sides = set(g.golden_sides)
        lead = ""
        for lab, other in ((a, b), (b, a)):
            if sides == {f"{lab} matches golden"}:
                lead = f"{other} alone changed (fix it, or make the same change in {lab}); "
        out.append(f"hint: MISMATCH: {lead}`parity diff {_ref(g.results[0])} --origin` shows the first "
                   f"difference with the builder call behind it in both engines")
    if REASON_MISMATCH in kinds:
        out.append(f"hint: REASON_MISMATCH: the engines reject with different texts or rule order; "
                   f"`parity diff {_ref(kinds[REASON_MISMATCH].results[0])}` prints both reasons")
    if ASYMMETRIC in kinds:
        out.append(f"hint: ASYMMETRIC: one engine rejects what the other lowers; compare their validate "
                   f"rules, `parity diff {_ref(kinds[ASYMMETRIC].results[0])}` prints both outcomes")
    if CRASH in kinds:
        r = kinds[CRASH].results[0]
        eng = next((lab for lab, o in zip(labels, r.outcomes) if o.get("status") == "crash"), a)
        out.append(f"hint: CRASH: `parity show {_ref(r)} --engine {eng}` reproduces it in one process")
    if EXPECTATION in kinds:
        out.append(f"hint: EXPECTATION: both engines agree but not with parity/configs/"
                   f"{shown(kinds[EXPECTATION].family)}.py; fix the config's expectation or the rule "
                   f"(`parity list --only {shown(kinds[EXPECTATION].family)}`)")
    return out


def summary_block(report: Report, sides: dict[str, str] | None = None) -> tuple[list[str], list[Group]]:
    """(lines, groups) of the grouped failure summary of ``report`` (``sides``: as
    :func:`group_failures`); no lines when nothing failed."""
    groups = group_failures(report, sides)
    return block_lines(groups, report.labels), groups


def block_lines(groups: list[Group], labels: tuple[str, str], locate=None) -> list[str]:
    """The lines of the grouped failure summary of ``groups`` (the first
    :data:`MAX_GROUPS`, then a count). ``locate(result) -> lines``: shown after
    each MISMATCH example (--origin)."""
    lines: list[str] = []
    for g in groups[:MAX_GROUPS]:
        lines.extend(group_lines(g, labels, locate))
    if len(groups) > MAX_GROUPS:
        rest = sum(len(g.results) for g in groups[MAX_GROUPS:])
        lines.append(f"... and {len(groups) - MAX_GROUPS} more groups ({rest} entries; see --json or --full)")
    return lines


#: Golden findings printed per kind and shard before "... and N more".
MAX_FINDINGS = 2


def finding_lines(findings: list) -> list[str]:
    """The golden findings of one shard, at most :data:`MAX_FINDINGS` examples per kind."""
    out: list[str] = []
    by_kind: dict[str, list] = {}
    for f in findings:
        by_kind.setdefault(f.kind, []).append(f)
    for kind, fs in by_kind.items():
        out.extend(f"  {f}" for f in fs[:MAX_FINDINGS])  # Finding.__str__ escapes its names (parity.base.escape.shown)
        if len(fs) > MAX_FINDINGS:
            out.append(f"  ... and {len(fs) - MAX_FINDINGS} more {kind} (see --json or --full)")
    return out

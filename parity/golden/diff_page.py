"""The review page of ``parity diff --base REF --format markdown``, and the
oracle verdict of each change group (``--oracles``; also ``parity review``).

The page is GitHub-flavoured markdown a CI job can attach to a pull request
(or post as a comment): the base and its commit, a table of the counts per
family and flavor that differ, then per family each change group once --
its id, its entries (patterns when many, parity/golden/change_groups.py), its
oracle verdict when the oracles ran, and the IR hunks of its first entry in a
```` ```diff ```` block. The last line is ``groups: G, entries: E``, as in the
text report.
"""

from __future__ import annotations

from parity.golden.change_groups import ADDED, TEXT, ChangeGroup, repeat_note
from parity.config import Family
from parity.base.escape import shown

FENCE = "```"


def changed_units(families: list[Family], groups: list[ChangeGroup]) -> dict[str, dict[str, set[str]]]:
    """``family -> flavor -> {config}`` of the entries of ``groups`` that the oracles can check
    (text changes and added entries of families in ``families``)."""
    known = {f.name: {c.name for c in f.configs} for f in families}
    out: dict[str, dict[str, set[str]]] = {}
    for g in groups:
        if g.kind not in (TEXT, ADDED) or g.family not in known:
            continue
        for cfg, fl in g.entries:
            if cfg in known[g.family]:
                out.setdefault(g.family, {}).setdefault(fl, set()).add(cfg)
    return out


def group_verdicts(families: list[Family], groups: list[ChangeGroup], *, engine: str = "python",
                   workers: int | None = None, progress=None) -> dict[str, list[str]]:
    """``gid -> [failure, ...]`` (an empty list: every oracle passes) for the groups the
    oracles can check, by :func:`parity.golden.bless.run_oracles` on exactly their entries
    (the validity oracle per entry; the numerics oracle per config at llvm23)."""
    from parity.golden.bless import run_oracles  # LLVM + emulator: only when verdicts are asked for
    changed = changed_units(families, groups)
    if not changed:
        return {}
    rep = run_oracles([f for f in families if f.name in changed], changed, engine=engine,
                      workers=workers, progress=progress)
    out: dict[str, list[str]] = {}
    for g in groups:
        if g.kind not in (TEXT, ADDED) or g.family not in changed:
            continue
        keys = {f"{c}@{fl}" for c, fl in g.entries}
        cfgs = {c for c, _ in g.entries}
        out[g.gid] = [m for m in rep.failures.get(g.family, [])
                      if m.split(":", 1)[0] in keys
                      or (" numerics oracle" in m and m.split("@", 1)[0] in cfgs)]
    return out


def verdict_text(verdicts: dict[str, list[str]] | None, g: ChangeGroup) -> str | None:
    """``oracles: PASS`` / ``oracles: FAIL (n): first`` for a group, None when not checked."""
    if verdicts is None or g.gid not in verdicts:
        return None
    fails = verdicts[g.gid]
    if not fails:
        return "oracles: PASS (validity and numerics)"
    return f"oracles: FAIL ({len(fails)}): " + shown(fails[0]) + (" ..." if len(fails) > 1 else "")


def markdown_page(diffs: dict, ref: str, commit: str, flavors, verdicts: dict | None) -> str:
    """The review page (module docstring) of :func:`parity.golden.ir_diff.diff_base`'s result."""
    lines = [f"## IR changes from `{shown(ref)}` ({commit[:12]}) to this tree", ""]
    rows = [(n, fl, c) for n, d in diffs.items() for fl in flavors
            for c in [d.counts.get(fl)] if c and (c["changed"] or c["added"] or c["removed"])]
    if not rows:
        lines.append("No IR change.")
    else:
        lines += ["| family | flavor | changed | added | removed | unchanged |", "|---|---|---|---|---|---|"]
        lines += [f"| {n} | {fl} | {c['changed']} | {c['added']} | {c['removed']} | {c['unchanged']} |"
                  for n, fl, c in rows]
    if verdicts is None:
        lines += ["", "Oracle verdicts: not run (`parity diff --base REF --oracles`)."]
    for name, d in diffs.items():
        if not d.groups:
            continue
        lines += ["", f"### {name}: {d.entries} entries in {len(d.groups)} change group(s)"]
        for i, g in enumerate(d.groups, 1):
            lines += ["", f"**group {i}/{len(d.groups)}** `{g.gid}` -- " + g.title().replace("*", "\\*")]
            v = verdict_text(verdicts, g)
            if v:
                lines += ["", ("✅ " if "PASS" in v else "❌ ") + v]
            if g.hunks:
                lines += ["", FENCE + "diff"]
                for k, h in enumerate(g.hunks):
                    if k:
                        lines.append("@@ ... @@")
                    lines += [line.replace(FENCE, "` ` `") for line in h]
                lines.append(FENCE)
                note = repeat_note(g)
                if note:
                    lines += ["", note]
    groups = sum(len(d.groups) for d in diffs.values())
    entries = sum(len(g.entries) for d in diffs.values() for g in d.groups)
    lines += ["", f"groups: {groups}, entries: {entries}", ""]
    return "\n".join(lines)

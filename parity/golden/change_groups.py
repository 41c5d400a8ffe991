"""Change groups: the IR changes of many (config, flavor) entries, grouped by what changed.

Used by ``parity diff --base REF`` (parity/golden/ir_diff.py, its markdown page
parity/diff_markdown.py) and ``parity review`` (parity/golden/review.py).

An entry's change is the list of unified-diff hunks (3 lines of context, no
``@@`` line numbers) between its old and new text after
:func:`drop_ssa_numbers` (value and block counters replaced by ``#``: both
printers number with one running counter, so one inserted instruction would
otherwise renumber the rest of the kernel). Its **key** (:func:`change_key`)
is what changed, without context lines:

* the ``-``/``+`` lines of every hunk, in order;
* in a ``-`` line paired with a ``+`` line (the i-th of a run of n removed
  lines with the i-th of the n added lines that follow), a type that both
  lines hold at the same place is context, not change, and is written ``T``
  (``store <8 x bfloat> ..., align 16`` -> ``align 2`` and ``store <8 x half>
  ..., align 16`` -> ``align 2`` are one change; the configs listed say which
  types it touches); a type that differs stays;
* with ``ignore_types`` every type of every changed line is written ``T``.

Entries with equal keys form one :class:`ChangeGroup`, shown once with the
hunks of its first entry and all its entries. Entries that are added,
removed, whose rejection changed, or that differ only in value numbering are
grouped by that description (:func:`add_change`: the one classification both
``parity diff --base`` / ``parity review`` and the git diff driver
parity/golden/ext_diff.py use).

A group's id (:attr:`ChangeGroup.gid`) is ``FAMILY:`` and the first 8 hex
digits of the sha256 of its kind and key: stable across runs for the same
change, so ``parity review --accept ID`` can name what ``--list`` printed.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field

from parity.base.escape import shown

# A local value or block name as the printers write it: the hint, then a counter
# (``%a_r45``, ``%acc_in.12``). Dropping the counter keeps the hint.
_SSA_NUMBER = re.compile(r"%([A-Za-z_.][A-Za-z0-9_.]*?)\d+\b")
_LABEL_NUMBER = re.compile(r"^([A-Za-z_.][A-Za-z0-9_.]*?)\d+:", re.M)
# An LLVM first-class type token: a vector of a scalar, or a scalar (ints, floats).
_TYPE = re.compile(r"<\d+ x (?:bfloat|half|float|double|i\d+)>|\b(?:bfloat|half|float|double|i\d+)\b")

TEXT, RENUMBERED, ADDED, REMOVED, OUTCOME = "text", "renumbered", "added", "removed", "outcome"
KINDS = (TEXT, RENUMBERED, ADDED, REMOVED, OUTCOME)
PATTERN_OVER = 6  # more entries than this: configs are written as patterns


def drop_ssa_numbers(text: str) -> str:
    """``text`` with the counter of every ``%name<digits>`` and label replaced by ``#``:
    two texts that differ only in value numbering become equal."""
    return _LABEL_NUMBER.sub(r"\1#:", _SSA_NUMBER.sub(r"%\1#", text))


def _ops(la: list[str], lb: list[str], norm) -> list[tuple[str, str]]:
    """The whole diff of la -> lb as (" " | "-" | "+", line) with ``norm`` applied to every line.

    Lines are aligned on the texts as printed (value numbers make most lines
    unique, so the alignment is the natural one even in an unrolled loop); a
    replaced block is aligned again on its normalised lines, so a line that
    only changed its number is context, not change."""
    out: list[tuple[str, str]] = []
    sm = difflib.SequenceMatcher(None, la, lb, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        a, b = [norm(x) for x in la[i1:i2]], [norm(x) for x in lb[j1:j2]]
        if tag == "equal":
            out += [(" ", x) for x in a]
            continue
        inner = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for t, p1, p2, q1, q2 in inner.get_opcodes():
            if t == "equal":
                out += [(" ", x) for x in a[p1:p2]]
            else:
                out += [("-", x) for x in a[p1:p2]] + [("+", x) for x in b[q1:q2]]
    return out


def hunks(a: str, b: str, normalise: bool = False, context: int = 3) -> list[tuple[str, ...]]:
    """The unified-diff hunks (``context`` lines of context) of a -> b, each as its lines
    without the @@ header; ``normalise``: lines compared and shown after :func:`drop_ssa_numbers`."""
    norm = drop_ssa_numbers if normalise else (lambda x: x)
    ops = _ops(a.splitlines(), b.splitlines(), norm)
    changed = [i for i, (t, _) in enumerate(ops) if t != " "]
    out: list[tuple[str, ...]] = []
    k = 0
    while k < len(changed):
        lo = max(0, changed[k] - context)
        end = changed[k]
        while k + 1 < len(changed) and changed[k + 1] - end <= 2 * context:
            k += 1
            end = changed[k]
        hi = min(len(ops), end + context + 1)
        out.append(tuple(t + x for t, x in ops[lo:hi]))
        k += 1
    return out


# A token of a changed line: a type, a local value, an integer literal, a word, or one other character.
_TOKEN = re.compile(r"<\d+ x (?:bfloat|half|float|double|i\d+)>|%[A-Za-z_.][A-Za-z0-9_.#]*|-?\d+\b"
                    r"|[A-Za-z_][A-Za-z0-9_.]*|\S")
_NUMBER = re.compile(r"(?<![\w.%@#!<])-?\d+\b")


def _shared_context(a: str, b: str) -> tuple[str, str]:
    """``a`` and ``b`` (a removed line and the added line paired with it) with what both hold
    in the same place written as context: a type ``T``, an operand value ``%_`` (the unroll
    position: ``%elem#`` in the first copy, ``%off#`` in the next), an integer literal ``N``
    (an unroll index or offset). The defined value (``%x# =``) and everything that differs stay."""
    ma, mb = list(_TOKEN.finditer(a[1:])), list(_TOKEN.finditer(b[1:]))
    ta, tb = [m.group() for m in ma], [m.group() for m in mb]
    ra: dict[int, str] = {}
    rb: dict[int, str] = {}
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        for k in range(i2 - i1 if tag == "equal" else 0):
            tok = ta[i1 + k]
            defined = i1 + k == 0 and len(ta) > 1 and ta[1] == "="
            rep = ("T" if _TYPE.fullmatch(tok) else "%_" if tok.startswith("%") and not defined
                   else "N" if re.fullmatch(r"-?\d+", tok) else None)
            if rep is not None:
                ra[i1 + k], rb[j1 + k] = rep, rep

    def sub(s, ms, reps):
        out, last = [s[:1]], 1
        for i, m in enumerate(ms):
            out.append(s[last:m.start() + 1])
            out.append(reps.get(i, m.group()))
            last = m.end() + 1
        return "".join(out) + s[last:]
    return sub(a, ma, ra), sub(b, mb, rb)


def blocks(h: tuple[str, ...]) -> list[tuple[int, int]]:
    """``(start, end)`` of every run of changed (``-``/``+``) lines of hunk ``h``."""
    out, i = [], 0
    while i < len(h):
        if h[i][:1] not in "-+":
            i += 1
            continue
        j = i
        while j < len(h) and h[j][:1] in "-+":
            j += 1
        out.append((i, j))
        i = j
    return out


def block_key(lines, ignore_types: bool = False) -> tuple[str, ...]:
    """What one run of changed lines changes: a removed line paired with an added one (the
    i-th of n removed with the i-th of the n added that follow) keeps only what differs
    (:func:`_shared_context`); a line with no partner keeps its text, integer literals
    written ``N`` (the same line in every unrolled copy); ``ignore_types``: every type ``T``."""
    lines = list(lines)
    minus = [x for x in lines if x.startswith("-")]
    plus = [x for x in lines if x.startswith("+")]
    if ignore_types:
        minus = [_TYPE.sub("T", x) for x in minus]
        plus = [_TYPE.sub("T", x) for x in plus]
    if len(minus) == len(plus) and lines == minus + plus:
        pairs = [_shared_context(x, y) for x, y in zip(minus, plus)]
        return tuple(p[0] for p in pairs) + tuple(p[1] for p in pairs)
    return tuple(_NUMBER.sub("N", x) for x in minus + plus)


def hunk_key(h: tuple[str, ...], ignore_types: bool = False) -> tuple[tuple[str, ...], ...]:
    """The :func:`block_key` of every run of changed lines of one hunk, in order."""
    return tuple(block_key(h[i:j], ignore_types) for i, j in blocks(h))


def change_key(hs: list[tuple[str, ...]], ignore_types: bool = False) -> tuple:
    """The key of one entry's change: its distinct :func:`block_key` s, sorted. The same edit
    repeated (every unrolled copy, every degree's copies, the vector and the scalar tail
    path) is one block key, so entries that differ only in how often the edit is repeated
    share a key."""
    return tuple(sorted({k for h in hs for k in hunk_key(h, ignore_types)}))


def condense(hs: list[tuple[str, ...]], ignore_types: bool = False, context: int = 3
             ) -> tuple[list[tuple[str, ...]], int]:
    """(``hs`` with each distinct change shown once: a run of changed lines whose
    :func:`block_key` was shown already is dropped with its context, the number of runs dropped)."""
    seen: set = set()
    out: list[tuple[str, ...]] = []
    dropped = 0
    for h in hs:
        bl = blocks(h)
        keep = []
        for n, (i, j) in enumerate(bl):
            k = block_key(h[i:j], ignore_types)
            if k in seen:
                dropped += 1
                continue
            seen.add(k)
            lo = max(i - context, bl[n - 1][1] if n else 0)
            hi = min(j + context, bl[n + 1][0] if n + 1 < len(bl) else len(h))
            if keep and lo <= keep[-1][1]:
                keep[-1] = (keep[-1][0], hi)
            else:
                keep.append((lo, hi))
        out += [tuple(h[lo:hi]) for lo, hi in keep]
    return out, dropped


@dataclass
class ChangeGroup:
    """Entries of one family with the same change.

    ``kind``: one of :data:`KINDS`; ``key``: the change key (text) or the
    description (the other kinds); ``hunks``: the SSA-normalised hunks of the
    first entry (text kind only); ``entries``: ``(config, flavor)`` pairs."""

    family: str
    kind: str
    key: tuple
    what: str = ""
    hunks: list[tuple[str, ...]] = field(default_factory=list)
    entries: list[tuple[str, str]] = field(default_factory=list)
    repeats: list[int] = field(default_factory=list)  # per entry: runs of changed lines its key folds away

    @property
    def gid(self) -> str:
        digest = hashlib.sha256(repr((self.kind, self.key)).encode("utf-8")).hexdigest()
        return f"{self.family}:{digest[:8]}"

    def title(self) -> str:
        """One line: kind, entry count and the entries (patterns when many)."""
        n = len(self.entries)
        what = {TEXT: "IR change", RENUMBERED: "differ only in value numbering"}.get(self.kind, self.kind)
        if self.what:
            what += f": {shown(self.what)}"
        return f"{what}: {n} entr{'y' if n == 1 else 'ies'}: {entries_text(self.entries)}"

    def to_json(self) -> dict:
        return {"id": self.gid, "family": self.family, "kind": self.kind, "what": self.what,
                "hunks": [list(h) for h in self.hunks],
                "entries": [{"config": c, "flavor": f} for c, f in self.entries],
                "repeated": [min(self.repeats), max(self.repeats)] if self.repeats else [0, 0],
                "configs": entries_text(self.entries)}


class Grouper:
    """Collects entries of one family into :class:`ChangeGroup` s."""

    def __init__(self, family: str, ignore_types: bool = False, normalise: bool = True):
        self.family, self.ignore_types, self.normalise = family, ignore_types, normalise
        self._groups: dict[tuple, ChangeGroup] = {}

    def add_text(self, cfg: str, fl: str, old: str, new: str) -> None:
        """An entry whose text changed (``old`` -> ``new``)."""
        if self.normalise and drop_ssa_numbers(old) == drop_ssa_numbers(new):
            self._add(RENUMBERED, (), "", cfg, fl)
            return
        hs = hunks(old, new, self.normalise)
        g = self._add(TEXT, change_key(hs, self.ignore_types), "", cfg, fl)
        shown_hs, dropped = condense(hs, self.ignore_types)
        g.repeats.append(dropped)
        if not g.hunks:
            g.hunks = shown_hs

    def add_other(self, kind: str, what: str, cfg: str, fl: str) -> None:
        """An added / removed / outcome-change entry, grouped by ``what``."""
        self._add(kind, (what,), what, cfg, fl)

    def _add(self, kind, key, what, cfg, fl) -> ChangeGroup:
        g = self._groups.get((kind, key))
        if g is None:
            g = self._groups[(kind, key)] = ChangeGroup(self.family, kind, key, what)
        g.entries.append((cfg, fl))
        return g

    def groups(self) -> list[ChangeGroup]:
        """Text changes first (most entries first), then the other kinds in :data:`KINDS` order."""
        return sorted(self._groups.values(),
                      key=lambda g: (KINDS.index(g.kind), -len(g.entries), g.gid))


def describe_outcome(o: dict | None) -> str:
    """A lowering outcome (``{"status": "ok" | "rejected" | "crash", ...}``, None: absent) as
    a group's description."""
    if o is None:
        return "absent"
    if o["status"] == "ok":
        return f"lowers ({o.get('kernel')})"
    if o["status"] == "rejected":
        return f"rejected {o['reason']!r}"
    return f"crash {o.get('error')!r}"


def add_change(g: Grouper, cfg: str, fl: str, old: dict | None, new: dict | None) -> str:
    """Put one entry's change from outcome ``old`` to ``new`` (None: absent; an ``ok`` outcome
    holds ``kernel``, ``sha256`` and ``text``) into ``g``; how it counts: ``added``,
    ``removed``, ``changed`` or ``unchanged``. The one grouping of ``parity diff --base`` and
    ``parity review`` (parity/golden/ir_diff.py ``compare``) and of the git diff driver
    (parity/golden/ext_diff.py, golden entries read as outcomes), so one change reads as the
    same groups in both: an entry lowered now and absent or rejected before is added, the
    reverse removed, each grouped by its kernel name and old / new outcome, never by its bytes
    or sha256 (those differ per flavor and config)."""
    if old is None or (old["status"] != "ok" and new is not None and new["status"] == "ok"):
        g.add_other(ADDED, describe_outcome(new) + ("" if old is None else f", at base {describe_outcome(old)}"),
                    cfg, fl)
        return "added"
    if new is None or (new["status"] != "ok" and old["status"] == "ok"):
        g.add_other(REMOVED, describe_outcome(old) + ("" if new is None else f", now {describe_outcome(new)}"),
                    cfg, fl)
        return "removed"
    if new["status"] == old["status"] == "ok":
        if new["sha256"] == old["sha256"]:
            return "unchanged"
        g.add_text(cfg, fl, old["text"], new["text"])
        return "changed"
    if (new["status"], new.get("reason"), new.get("error")) == (old["status"], old.get("reason"), old.get("error")):
        return "unchanged"
    g.add_other(OUTCOME, f"{describe_outcome(old)} -> {describe_outcome(new)}", cfg, fl)
    return "changed"


# -- naming many entries ------------------------------------------------------------

def _merge_patterns(rows: list[tuple[frozenset, ...]]) -> list[tuple[frozenset, ...]]:
    """Merge product patterns that differ in one position until none do (each merge
    is the exact union of two products, so the result covers exactly the input)."""
    rows = list(dict.fromkeys(rows))
    changed = True
    while changed:
        changed = False
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                a, b = rows[i], rows[j]
                diff = [p for p in range(len(a)) if a[p] != b[p]]
                if len(diff) == 1:
                    p = diff[0]
                    rows[i] = a[:p] + (a[p] | b[p],) + a[p + 1:]
                    del rows[j]
                    changed = True
                    break
            if changed:
                break
    return rows


def _segments(name: str) -> tuple[str, ...]:
    return tuple(re.split(r"(?<=_)|(?=_)", name))


def _num_or_text(s: str):
    return (0, int(s), "") if s.isdigit() else (1, 0, s)


def _flavors(values) -> str:
    vals = sorted(values)
    return vals[0] if len(vals) == 1 else "{" + ",".join(vals) + "}"


def _alt(values: frozenset) -> str:
    if len(values) == 1:
        return next(iter(values))
    # common prefix letters (d0, d16 -> d{0,16})
    vals = sorted(values)
    pre = ""
    m = re.match(r"[A-Za-z]+", vals[0])
    if m and all(v.startswith(m.group()) and v[len(m.group()):].isdigit() for v in vals):
        pre = m.group()
    return pre + "{" + ",".join(sorted((v[len(pre):] for v in vals), key=_num_or_text)) + "}"


def entries_text(entries: list[tuple[str, str]]) -> str:
    """``NAME@{llvm20,llvm22,llvm23}, ...`` for every config of ``entries``; with more
    than :data:`PATTERN_OVER` configs, names are merged into exact patterns
    (``{bf16,fp16}_v8_t{64,256}_d{0,1,2}@{llvm20,llvm22,llvm23}``)."""
    by_cfg: dict[str, set[str]] = {}
    for cfg, fl in entries:
        by_cfg.setdefault(shown(cfg), set()).add(shown(fl))
    if len(by_cfg) <= PATTERN_OVER:
        return ", ".join(f"{c}@{_flavors(f)}" for c, f in sorted(by_cfg.items()))
    rows = []
    for cfg, fls in by_cfg.items():
        rows.append(tuple(frozenset([s]) for s in _segments(cfg)) + (frozenset(fls),))
    out = []
    for n in sorted({len(r) for r in rows}):
        for r in sorted(_merge_patterns([r for r in rows if len(r) == n]), key=lambda r: [sorted(x) for x in r]):
            out.append("".join(_alt(x) for x in r[:-1]) + "@" + _flavors(r[-1]))
    return ", ".join(out)


# -- showing a group -----------------------------------------------------------------

class Paint:
    """ANSI colour on or off: ``paint(code, text)``."""

    def __init__(self, on: bool):
        self.on = on

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.on else text


def repeat_note(g: ChangeGroup) -> str | None:
    """``(the same change repeated at 1 to 61 more places per entry)``, None when nothing repeats."""
    if not g.repeats or not max(g.repeats):
        return None
    lo, hi = min(g.repeats), max(g.repeats)
    span = f"{hi}" if lo == hi else f"{lo} to {hi}"
    return f"(shown once: the same change at {span} more place{'' if hi == 1 else 's'} per entry)"


def group_lines(g: ChangeGroup, i: int, n: int, paint=None) -> list[str]:
    """A change group as text: its header line, then (text changes) each distinct change of its
    first entry once, with its context, and a note of how often it repeats."""
    paint = paint or Paint(False)
    lines = [paint("36", f"  @@ group {i}/{n} [{g.gid}] {g.title()}")]
    for k, h in enumerate(g.hunks):
        if k:
            lines.append("  ...")
        for line in h:
            code = "31" if line.startswith("-") else "32" if line.startswith("+") else ""
            lines.append(("  " + paint(code, line)) if code else "  " + line)
    note = repeat_note(g)
    if note:
        lines.append("  " + note)
    return lines


def first_changed_line(g: ChangeGroup) -> str:
    """The group's first changed (``-``/``+``) line, or its description."""
    return next((x for h in g.hunks for x in h if x[:1] in "-+"), g.what or g.kind)

"""The oracles before a bless: what ``parity write`` checks before it writes a shard.

``parity write`` computes, per family, the (config, flavor) entries whose
golden entry changes or is new (:func:`changed_units`; a rejection is not
checked: there is no text). Before writing it runs on exactly those:

* the validity oracle (:func:`parity.verify.verify.run_verify`, docs/verify.md)
  on every changed lowered (config, flavor) of an LLVM IR family -- llvm20 text
  through opt-19, llvm22/llvm23 through llvmlite (LLVM 22.1), ISA gates;
* the numerics oracle (:func:`parity.sim.numerics.run_all`, docs/sim.md) on
  every config of a family with a numerics plan that has a changed or new
  entry at any flavor and lowers at llvm23, with the opt lane (every case also
  on the module after ``opt -O3``, bit-identical) (the emulator runs its llvm23 text,
  also when only `--flavor llvm20` is being blessed; a config that lowers only at llvm20 or
  llvm22 text is checked by the validity oracle alone).

A family with any failing config is not blessed (:func:`check`); its failures
name config, flavor and the oracle's message. A validity lane that is missing
(opt-19 not installed, ...) counts as a failure here: the text was not
checked.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
import os

from parity.golden import conflict_sides as CS
from parity.golden import pending as P
from parity.golden import shards as G
from parity.golden.verdict import golden_sides
from parity.config import Family
from parity.base.escape import shown
from parity.cli.common import EXIT_RED, finish, only_names
from parity.config import CANONICAL_FLAVORS
from parity.gate.failure_summary import hint_lines, summary_block
from parity.gate.report import die, progress, summary_lines


@dataclass
class OracleReport:
    """Per-family failures (``family -> ["config@flavor: oracle: message", ...]``) and counts."""

    failures: dict[str, list[str]] = field(default_factory=dict)
    verified: int = 0
    simulated: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def failed(self, family: str) -> bool:
        return bool(self.failures.get(family))

    def add(self, family: str, msg: str) -> None:
        self.failures.setdefault(family, []).append(msg)


def changed_units(report, old_shards: dict[str, G.Flavors | None]) -> dict[str, dict[str, set[str]]]:
    """``family -> flavor -> {config}`` whose new entry lowered and differs from the shard (or is new)."""
    out: dict[str, dict[str, set[str]]] = {}
    for r in report.results:
        new = r.golden_entry()
        if new is None or "sha256" not in new:
            continue
        old = ((old_shards.get(r.family) or {}).get(r.flavor) or {}).get(r.config)
        if old != new:
            out.setdefault(r.family, {}).setdefault(r.flavor, set()).add(r.config)
    return out


def restrict_family(fam: Family, flavor_cfgs: dict[str, set[str]]) -> Family:
    """``fam`` with only the changed configs, each at only its changed flavors."""
    cfgs = []
    for c in fam.configs:
        fls = tuple(fl for fl in c.flavors if c.name in flavor_cfgs.get(fl, ()))
        if fls:
            cfgs.append(dataclasses.replace(
                c, flavors=fls, per_flavor={f: e for f, e in c.per_flavor.items() if f in fls}))
    return Family(fam.name, tuple(cfgs), source=fam.source, output=fam.output, numerics_opt_out=fam.numerics_opt_out)


def numerics_selection(families: list[Family], changed: dict[str, dict[str, set[str]]]) -> set:
    """(family, config) pairs the numerics oracle runs for a bless: every config of a family with a
    numerics plan that has a changed or new entry at ANY flavor and lowers at llvm23 (the emulator
    runs llvm23 text; a kernel change reaches every flavor, so `write --flavor llvm20` cannot skip it)."""
    from parity.sim import numerics as N  # numpy + emulator: off `parity check` start-up
    return _own_selection(families, changed).union(*N.planned_configs(changed).values())  # a plan change


def _own_selection(families: list[Family], changed: dict[str, dict[str, set[str]]]) -> set:
    """The configs of :func:`numerics_selection` whose own entry changed (not only planned)."""
    from parity.sim import numerics as N
    touched = {(fam, cfg) for fam, fls in changed.items() for cfgs in fls.values() for cfg in cfgs}
    return {(f.name, c.name) for f in families if f.name in N.PLANS for c in f.configs
            if (f.name, c.name) in touched and c.applies(N.FLAVOR) and c.expectation(N.FLAVOR).kind == "ok"}


def run_oracles(families: list[Family], changed: dict[str, dict[str, set[str]]], *,
                engine: str = "python", workers: int | None = None, progress=None) -> OracleReport:
    """Run both oracles on the changed units of ``families``."""

    from parity.sim import numerics as N  # numpy + emulator: off `parity check` start-up
    from parity.verify.verify import FAIL, SKIPPED, run_verify  # imports the emulator too (parity.proof)

    rep = OracleReport()
    t0 = time.perf_counter()
    subset = [restrict_family(f, changed[f.name]) for f in families if f.name in changed]
    subset = [f for f in subset if f.configs]
    ir = [f for f in subset if f.output == "llvm_ir"]
    if ir:
        flavors = tuple(sorted({fl for f in ir for c in f.configs for fl in c.flavors}))
        vr = run_verify(ir, engine=engine, flavors=flavors, workers=workers, progress=progress)
        rep.verified = len(vr.results)
        for p in vr.intrinsic_problems:
            for f in ir:
                rep.add(f.name, f"validity oracle: intrinsic tables: {p}")
        for u in vr.results:
            if u.status == FAIL:
                msg = " ".join("; ".join(u.errors).split()) or "failed"
                rep.add(u.family, f"{u.config}@{u.flavor}: validity oracle: {msg}")
            elif u.status == SKIPPED:
                rep.add(u.family, f"{u.config}@{u.flavor}: validity oracle: not checked ({'; '.join(u.notes)})")
    sim = numerics_selection(families, changed)
    own = _own_selection(families, changed)
    planned = N.planned_configs(changed)
    if sim:
        n = workers or os.cpu_count() or 1
        # opt=True: every case also on the modules after opt -O3, bit-identical (parity/sim/optimised.py)
        outs = N.run_all(sorted({f for f, _ in sim}), jobs=n, select=sim, opt=True)
        rep.simulated = len(outs)
        for o in outs:
            if not o.ok:
                more = f" (and {len(o.problems) - 1} more)" if len(o.problems) > 1 else ""
                first = " ".join(o.problems[0].split())  # the emulator's message, on one line
                blamed = [o.family] if (o.family, o.config) in own else []
                for fam in blamed + [p for p, cs in planned.items() if (o.family, o.config) in cs]:
                    by = "" if fam == o.family else f" of {o.family}, whose launch {fam} plans"
                    rep.add(fam, f"{o.config}@{N.FLAVOR}: numerics oracle{by}: {first}{more}")
    for p, cs in planned.items():  # a plan change checked by no kernel's numerics is not blessed
        if not cs:
            rep.add(p, f"numerics oracle: 0 config(s) for a change to {p}, which plans the launches of "
                       f"{', '.join(N.PLANNERS[p])} (rule: a plan change is blessed only through the numerics "
                       "of the kernels whose launches it plans)")
    rep.seconds = time.perf_counter() - t0
    return rep


# -- parity write ------------------------------------------------------------

def load_for_write(gdir, name: str, resolve, seen: dict | None = None) -> tuple[G.Flavors | None, str | None]:
    """(old entries, note) of a shard about to be rewritten.

    A readable shard gives its entries. An unreadable one (git conflict
    markers, a duplicate key left by a merge, malformed JSON, CRLF) is
    regenerated, never a reason to refuse (a path that is not a regular file
    -- a directory, FIFO, socket or device -- is refused with GoldenError,
    never read and never replaced): with conflict markers the entries
    both sides agree on are kept as the old state (so the oracles run only on
    what the merge left open); otherwise nothing is known and every entry
    counts as new. Conflict entries count as changed.
    """
    path = G.shard_path(gdir, name)
    try:
        data = G.read_regular_file(path)  # GoldenError for a directory, FIFO, socket, device: refused
        if seen is not None:
            seen[name] = data  # what write_shard(expect=) compares the file with before replacing it
    except G.ShardTooLarge as exc:
        if seen is not None:
            seen[name] = G.UNREADABLE
        return None, f"unreadable ({exc}); regenerating it"
    if data is None:
        return None, None
    try:
        flavors = G.parse_shard(data, str(path), name, resolve)
        layout = G.layout_problem(data, name, flavors)
        return flavors, (f"{layout}; rewriting it" if layout else None)
    except G.GoldenError as exc:
        note = f"unreadable ({exc}); regenerating it"
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    sides = G.marker_sides(text)
    if sides is None:
        return None, note
    try:
        ours = G.parse_shard(sides[0], f"{path} (ours)", name, resolve)
        theirs = G.parse_shard(sides[1], f"{path} (theirs)", name, resolve)
    except G.GoldenError:
        return None, note
    agreed = {fl: {c: e for c, e in ours.get(fl, {}).items() if (theirs.get(fl) or {}).get(c) == e}
              for fl in set(ours) | set(theirs)}
    return agreed, "holds git conflict markers; regenerating it (entries both sides agree on kept as the old state)"


def new_shard(old: dict | None, flavors, results, sel: set | None, keys: set | None = None) -> dict:
    """The shard after a write: the selected flavors' entries replaced by the
    run's (``sel``: only these config names, from --only FAMILY/NAME; others kept);
    flavors not run are kept as they were. A full write (every canonical
    flavor, no names) drops non-canonical flavors. ``keys``: a set of
    ``(flavor, config)``: exactly those entries are replaced by the run's (or
    removed when the run has none), every other entry is kept."""
    old = old or {}
    if keys is not None:
        new = {fl: dict(e) for fl, e in old.items()}
        for fl, cfg in keys:
            new.get(fl, {}).pop(cfg, None)
        for r in results:
            if (r.flavor, r.config) in keys:
                entry = r.golden_entry()
                assert entry is not None and r.passed
                new.setdefault(r.flavor, {})[r.config] = entry
        return {fl: e for fl, e in new.items() if e or fl in CANONICAL_FLAVORS}
    full = sel is None and tuple(flavors) == CANONICAL_FLAVORS
    new: dict = {} if full else {fl: dict(e) for fl, e in old.items()}
    for fl in CANONICAL_FLAVORS:
        new.setdefault(fl, {})
    for fl in flavors:
        if sel is None:
            new[fl] = {}
        else:
            for n in sel:
                new[fl].pop(n, None)
    for r in results:
        entry = r.golden_entry()
        assert entry is not None and r.passed
        new[r.flavor][r.config] = entry
    return new


def new_keys(report, old_shards: dict) -> dict[str, set]:
    """``--mode new``: ``family -> {(flavor, config)}`` of the entries the run agrees on
    that have no golden entry yet (MISSING); every existing entry is kept as it is."""
    out: dict[str, set] = {}
    for r in report.results:
        if r.golden_entry() is not None and r.config not in ((old_shards.get(r.family) or {}).get(r.flavor) or {}):
            out.setdefault(r.family, set()).add((r.flavor, r.config))
    return out


def _only_keys(changed: dict, keys: dict | None) -> dict:
    """``changed`` (``family -> flavor -> {config}``) narrowed to ``keys`` (``family ->
    {(flavor, config)}``); unchanged when ``keys`` is None."""
    if keys is None:
        return changed
    out: dict = {}
    for fam, fls in changed.items():
        for fl, cs in fls.items():
            kept = {c for c in cs if (fl, c) in keys.get(fam, set())}
            if kept:
                out.setdefault(fam, {})[fl] = kept
    return out


def _refuse_non_files(gdir, names) -> None:
    """GoldenError for the first shard path in ``names`` that exists but is not a regular
    file (a directory, FIFO, socket, device, symlink loop): never read, never replaced."""
    for n in names:
        try:
            G.read_regular_file(G.shard_path(gdir, n), limit=0)
        except G.ShardTooLarge:
            pass  # a regular file: regenerated


def write(args, families, flavors, engines, gdir, resolve, run, keys: dict | None = None,
          list_changes: bool = True) -> int:
    """The body of ``parity write`` after argument checks: run, oracles, write. Returns the exit status.

    ``--only FAMILY/NAME`` and ``--flavor`` rewrite only those entries and keep
    the rest of each shard (:func:`new_shard`). ``keys`` (``family -> {(flavor,
    config)}``, from ``parity review``) and ``--mode new`` (:func:`new_keys`)
    write exactly those entries: the oracles run on those of them that change,
    every other entry of the shard is kept.

    The read-modify-write of every shard happens inside the golden lock: the
    shards are read once before the run (what changed decides where the
    oracles run) and again under the lock, and each new shard is built from
    the second read, so a concurrent ``parity write`` of another flavor,
    config or family is never lost. An entry that changed between the two
    reads so that it would now be blessed unchecked stops the write (nothing
    written). Raises GoldenError for a shard path that is not a regular file,
    a golden directory that cannot be written, a lock that cannot be taken or
    a write the OS refuses (one line; each shard is whole: old or new).
    ``list_changes`` False (``parity review``): each shard's one summary line, not a line per entry.
    Merge-conflicted entries are summarised per shard (the side the engines reproduce,
    parity/golden/conflict_sides.py), never listed key by key. The pending entries
    (parity/golden/pending.py) of every shard written are pruned of what is now done or stale."""

    names = only_names(args)
    fams = [f.name for f in families]
    mode_new = getattr(args, "mode", "all") == "new"
    everything = not (args.only or getattr(args, "flavor", None) or keys is not None or mode_new)
    _refuse_non_files(gdir, fams + _gone(gdir, fams, everything))  # before the run: refused input costs no engine time
    G.check_dir_writable(gdir)
    old_shards: dict[str, G.Flavors | None] = {}
    for n in fams:
        old_shards[n], note = load_for_write(gdir, n, resolve)
        if note:
            print(f"golden {shown(n)}.json: {note}")
    report = run()
    if not report.green:
        return _refuse_red(report, old_shards)
    if mode_new:
        keys = new_keys(report, old_shards)
    changed = _only_keys(changed_units(report, old_shards), keys)
    no_oracles = getattr(args, "no_oracles", False)
    refused = _oracles_step(families, changed, engines, args.jobs, no_oracles)
    writer = _ShardWriter(gdir, families, flavors, resolve, report, keys, names, everything, list_changes)
    lock_timeout = getattr(args, "lock_timeout", G.LOCK_TIMEOUT)
    for attempt in range(3):  # a shard changed under the lock (git checkout/merge): read again, never replace it
        try:
            with G.lock(gdir, lock_timeout, _say_waiting(lock_timeout)):
                writer.write_locked(changed, refused, no_oracles)
            break
        except G.ShardChanged as exc:
            if attempt == 2:
                raise G.GoldenError(f"{exc}; it kept changing: nothing more was written; run `parity write` again") from None
            print(f"golden: {exc}; reading golden/ again")
    total = writer.total
    print(f"{total} golden entr{'y' if total == 1 else 'ies'} changed")
    if refused:
        fams_s = ",".join(sorted(refused))
        return die(f"parity write refuses to bless {fams_s}: a changed config fails an oracle (listed above); "
                   f"fix the engines, or check with `parity verify --only {fams_s}` / "
                   f"`parity numerics --only {fams_s}`", EXIT_RED)
    return finish(args, "write", True, {"golden_dir": str(gdir), "flavors": list(flavors),
                                        "shards": writer.shards_out, "changed_entries": total})


def _say_waiting(timeout: float):
    """``G.lock``'s ``on_wait``: one stdout line, flushed, when another process holds the
    golden lock (the wait is otherwise silent for up to ``timeout`` seconds)."""
    def say(path) -> None:
        print(f"golden: waiting for the golden lock {shown(path)} (another `parity write` holds it; "
              f"up to {timeout:g} s, --lock-timeout)", flush=True)
    return say


def _gone(gdir, fams: list[str], everything: bool) -> list[str]:
    """Shards of families that no longer exist (removed by a full write only)."""
    return [n for n in G.shard_families(gdir) if n not in set(fams)] if everything else []


def _refuse_red(report, old_shards: dict) -> int:
    """A run that is not GREEN: its summary, grouped as `parity check` prints it, and exit 1."""
    for line in summary_lines(report):
        print(line)
    groups_text, groups = summary_block(report, golden_sides(report, old_shards))  # grouped, as `parity check` prints them
    for line in groups_text + hint_lines(groups, report.labels):
        print(line)
    nfail = len(report.failures())
    return die(f"parity write refuses: {nfail} config verdict(s) fail"  # a refusal: exit 1, not 2
               + ("" if nfail else " (a family compared nothing or has no configs)")
               + "; only what both engines agree on can be blessed (`parity check` lists them)", EXIT_RED)


def _oracles_step(families, changed: dict, engines, jobs, no_oracles: bool) -> dict[str, list[str]]:
    """Run the oracles on the ``changed`` units (or say why not); ``family -> [failure]`` refused."""
    nchanged = sum(len(c) for fl in changed.values() for c in fl.values())
    entries = f"entr{'y' if nchanged == 1 else 'ies'}"
    if no_oracles:
        print(f"oracles: SKIPPED (--no-oracles): {nchanged} changed or new lowered {entries} "
              "blessed without the validity and numerics oracles")
        return {}
    if not changed:
        print("oracles: no lowered entry changed; nothing to check")
        return {}
    with progress("oracles") as cb:
        orep = run_oracles(families, changed, engine=engines[0], workers=jobs, progress=cb)
    print(f"oracles: {nchanged} changed or new lowered {entries}: "
          f"validity oracle {orep.verified} module(s), numerics oracle {orep.simulated} config(s), "
          f"{orep.seconds:.1f}s")
    return orep.failures


class _ShardWriter:
    """The read-modify-write of every shard of one ``parity write``, run inside the golden lock
    (:meth:`write_locked`); ``total`` and ``shards_out`` are the last attempt's counts."""

    def __init__(self, gdir, families, flavors, resolve, report, keys, names, everything, list_changes):
        self.gdir, self.families, self.flavors, self.resolve = gdir, families, flavors, resolve
        self.report, self.keys, self.names = report, keys, names
        self.everything, self.list_changes = everything, list_changes
        self.fams = [f.name for f in families]
        self.total, self.shards_out = 0, {}

    def write_locked(self, changed: dict, refused: dict, no_oracles: bool) -> None:
        """Read the shards again (as they are now, not as before the run), refuse a late change
        the oracles did not see, plan every shard and write it."""
        self.total, self.shards_out = 0, {}
        gone = _gone(self.gdir, self.fams, self.everything)
        _refuse_non_files(self.gdir, self.fams + gone)
        seen: dict[str, bytes | None] = {}  # each shard's bytes as read under the lock: replaced only if still those
        fresh: dict[str, G.Flavors | None] = {n: load_for_write(self.gdir, n, self.resolve, seen)[0]
                                              for n in self.fams}
        if not no_oracles:
            self._refuse_late(fresh, changed, refused)
        lines: list[str] = []
        plan = self._plan(fresh, refused, gone, lines)
        for p in G.remove_stale_temp_files(self.gdir):
            lines.append(f"golden: removed stale temp file {shown(p.name)}")
        for line in lines:
            print(line)
        for name, new, changes in plan:
            self._write_one(name, new, changes, fresh, seen)

    def _refuse_late(self, fresh: dict, changed: dict, refused: dict) -> None:
        """GoldenError when an entry changed between the two reads so that it would be blessed unchecked."""
        now = _only_keys(changed_units(self.report, fresh), self.keys)
        late = sorted(f"{f}/{c}@{fl}" for f, fls in now.items() if f not in refused
                      for fl, cs in fls.items() for c in cs - changed.get(f, {}).get(fl, set()))
        if late:
            raise G.GoldenError(
                f"golden/ changed while this write ran (another `parity write`?): "
                f"{shown(', '.join(late[:3]))}{' ...' if len(late) > 3 else ''} would be blessed "
                "without the oracles; nothing was written; run `parity write` again")

    def _plan(self, fresh: dict, refused: dict, gone: list[str], lines: list[str]) -> list[tuple]:
        """``[(name, new shard or None for a removed family, changes)]``; refused families' lines into ``lines``."""
        plan: list[tuple[str, dict | None, list]] = []
        for fam in self.families:
            path = G.shard_path(self.gdir, fam.name)
            if refused.get(fam.name):
                lines.append(f"golden {shown(path.name)}: NOT blessed: {len(refused[fam.name])} "
                             "changed config(s) fail an oracle")
                lines.extend(f"  {shown(msg, limit=2000)}" for msg in refused[fam.name])
                continue
            old = fresh[fam.name]
            new = new_shard(old, self.flavors, self.report.by_family(fam.name), self.names.get(fam.name),
                            None if self.keys is None else self.keys.get(fam.name, set()))
            plan.append((fam.name, new, G.diff_flavors(fam.name, old or {}, new)))
        for name in gone:
            try:
                old = G.load_shard(self.gdir, name, self.resolve) or {}
            except G.GoldenError:
                old = {}
            plan.append((name, None, G.diff_flavors(name, old, {})))
        return plan

    def _write_one(self, name: str, new: dict | None, changes: list, fresh: dict, seen: dict) -> None:
        """Write (or remove) one planned shard, print its lines, prune its pending entries."""
        path = G.shard_path(self.gdir, name)
        if new is None:
            G.remove_shard(self.gdir, name)  # a family that is gone
            print(f"golden {shown(path.name)}: removed (family no longer exists; {len(changes)} entries)")
            summary = {"ADDED": 0, "REMOVED": len(changes), "CHANGED": 0}
            verb = "removed"
        else:
            verb = self._replace(name, new, path, seen)
            summary = {k: sum(1 for c in changes if c.kind == k) for k in ("ADDED", "REMOVED", "CHANGED")}
            print(f"golden {shown(path.name)}: {verb} ({summary['ADDED']} added, "
                  f"{summary['REMOVED']} removed, {summary['CHANGED']} changed)")
        prior = fresh.get(name) if name in fresh else None
        conflicted = CS.write_pairs(changes, prior, new)
        if conflicted:
            print(CS.summary_line(name, CS.count(conflicted), verb="wrote"))
        if self.list_changes:
            for c in changes:
                if not G.is_conflict(((prior or {}).get(c.flavor) or {}).get(c.config)):
                    print(f"  {c}")
        P.prune(self.gdir, name)
        self.total += len(changes)
        self.shards_out[name] = {"state": verb, **{k.lower(): v for k, v in summary.items()}}

    def _replace(self, name: str, new: dict, path, seen: dict) -> str:
        """Write shard ``name`` when its bytes change; "updated", "created" or "unchanged"."""
        rendered = G.render_shard(name, new).encode("utf-8", errors="surrogateescape")
        try:
            current = G.read_regular_file(path, limit=len(rendered))
        except G.ShardTooLarge:
            current = None  # longer than the new text: it changes
        if current == rendered:
            return "unchanged"
        verb = "updated" if path.exists() else "created"
        G.write_shard(self.gdir, name, new, expect=seen.get(name))
        return verb

"""Which configs an edit reached, for ``parity check --changed`` (docs/gate.md,
"Checking only what an edit reached").

The edit is every file that differs between a git revision (``HEAD``, or
``--since REV``) and the working tree, untracked files included. Each changed
line of an engine source is mapped to the function holding it
(parity/gate/edit_units.py), and each function to the configs whose lowering
ran it (the edit map, parity/gate/edit_map.py):

* ``python_engine/**.py``: the configs whose Python lowering called the function;
* ``cpp_engine/src/**.cpp``: the configs whose C++ lowering made a builder call in
  the function, plus those of its Python twin (same folders and file names,
  DESIGN.md section 1): the twin file's function of the same name (leading
  underscores aside; none: unmappable); ``cpp_engine/src/api/<family>.cpp``:
  that family;
* ``parity/configs/<family>.py`` and ``golden/<family>.json``: that family;
* tests/, docs/, bench/, examples/, scripts/ and top-level ``*.md``: nothing.

Anything else cannot be mapped and the check is the full one, with a note
saying why: module-level code (or a class body, a namespace-scope table), a
function the Python engine runs while it is imported, a header, a new or
removed engine file, the gate itself (parity/), the build, a function the
config modules call while they are loaded (their specs may come from it). The map also holds
the function hashes of the sources it was recorded from: the configs that
reached a function changed since then are checked too (their record no longer
holds), and configs the map does not know (new ones) always are.
"""

from __future__ import annotations

import ast
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from parity.gate import edit_map as M
from parity.gate import edit_units as U

#: Paths whose change never reaches a verdict.
IGNORED = ("tests/", "docs/", "bench/", "examples/", "scripts/")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class ChangedError(Exception):
    """The edit cannot be read (not a git checkout, an unknown revision)."""


@dataclass
class Selection:
    """What ``--changed`` checks: ``full`` (with ``reasons``), or the configs
    (``family/name``) of ``configs``; ``units`` names the changed functions."""

    full: bool = False
    reasons: list = field(default_factory=list)
    configs: set = field(default_factory=set)
    units: set = field(default_factory=set)
    #: the reasons the map's own record cannot be carried to the working tree (recording
    #: the map again clears them; the others are the edit's own)
    stale: list = field(default_factory=list)

    def fall_back(self, why: str) -> None:
        self.full = True
        if why not in self.reasons:
            self.reasons.append(why)


def _git(root: Path, *args: str) -> str:
    r = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise ChangedError(f"git {' '.join(args[:2])}: {(r.stderr.strip().splitlines() or ['failed'])[-1]}")
    return r.stdout


def check_rev(root: Path, rev: str) -> str:
    """The commit (full hash) ``rev`` names in the checkout at ``root``; ChangedError (one line)
    when ``root`` is not a git checkout or ``rev`` names no commit there. The revision is
    resolved first and its commit taken from the hash (``:/text`` searches, which a
    ``^{commit}`` suffix would become part of, resolve too); an option-like ``rev`` is refused."""
    try:
        _git(root, "rev-parse", "--git-dir")
    except ChangedError:
        raise ChangedError(f"--changed: {root} is not a git checkout (the edit is read with git diff)") from None
    bad = ChangedError(f"--since: {rev!r} names no commit of the checkout {root}")
    if rev.startswith("-"):   # git would read it as an option
        raise bad
    try:
        sha = _git(root, "rev-parse", "--verify", "--quiet", rev).strip()
        return _git(root, "rev-parse", "--verify", "--quiet", sha + "^{commit}").strip()
    except ChangedError:
        raise bad from None


def git_edit(root: Path, rev: str) -> dict:
    """``{path: (old lines, new lines, status)}`` of the working tree against ``rev``:
    changed 1-based line numbers on each side; status ``M``, ``A`` (added, untracked
    too) or ``D``. ChangedError when ``rev`` names no commit."""
    commit = check_rev(root, rev)
    out: dict = {}
    path = None
    for line in _git(root, "diff", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv",
                     commit, "--").splitlines():
        if line.startswith("diff --git "):
            path = line.split(" b/", 1)[1] if " b/" in line else None
            if path is not None:
                out[path] = (set(), set(), "M")
        elif line.startswith("new file mode") and path:
            out[path] = (set(), set(), "A")
        elif line.startswith("deleted file mode") and path:
            out[path] = (set(), set(), "D")
        elif path and (m := _HUNK.match(line)):
            a, b = int(m.group(1)), int(m.group(2) or 1)
            c, d = int(m.group(3)), int(m.group(4) or 1)
            old, new, _ = out[path]
            old.update(range(a, a + b))
            new.update(range(c, c + d))
            if d == 0:  # a pure deletion: the lines around it on the new side
                new.update((c, c + 1))
    for p in _git(root, "ls-files", "--others", "--exclude-standard").splitlines():
        out[p] = (set(), set(), "A")
    return out


def _family_of(path: str, prefix: str, suffix: str, families: set) -> str | None:
    if path.startswith(prefix) and path.endswith(suffix) and "/" not in path[len(prefix):]:
        name = path[len(prefix):-len(suffix)]
        return name if name in families else None
    return None


def _units_of_edit(root: Path, rev: str, path: str, old_lines, new_lines, sel: Selection) -> set:
    units: set = set()
    try:
        new_text = (root / path).read_text(encoding="utf-8")
        units |= U.units_of_lines(path, new_text, new_lines)
        if old_lines:
            old_text = _git(root, "show", f"{rev}:{path}")
            units |= U.units_of_lines(path, old_text, old_lines)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, ChangedError) as exc:
        sel.fall_back(f"{path}: cannot be read as functions ({type(exc).__name__})")
    return units


def _twin_configs(emap: dict, path: str, name: str, root: Path, sel: Selection) -> set:
    rel = path[len(M.CPP_ROOT) + 1:-len(".cpp")]
    fams = set(emap.get("families", ()))
    if rel.startswith("api/") and rel[4:] in fams:
        return _family_configs(emap, rel[4:])
    twin = f"{M.PY_ROOT}/{rel}.py"
    try:
        tree = ast.parse((root / twin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        sel.fall_back(f"{path}::{name}: no Python twin {twin} to map it through")
        return set()
    want = name.lstrip("_")
    names = {n.name.lstrip("_") for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if want not in names:  # no twin to stand for it: which configs run it is not known
        sel.fall_back(f"{path}::{name}: no function of that name in its Python twin {twin}")
        return set()
    return {i for unit, idx in emap["py"].items()
            if unit.partition("::")[0] == twin and unit.partition("::")[2].split(".")[-1].lstrip("_") == want
            for i in idx}


def _family_configs(emap: dict, family: str) -> set:
    return {i for i, c in enumerate(emap["configs"]) if c.split("/", 1)[0] == family}


def _unit_configs(emap: dict, root: Path, path: str, name, sel: Selection) -> set:
    if name is U.OUTSIDE:
        sel.fall_back(f"{path}: a change outside every function (module level, class body, namespace scope)")
        return set()
    uid = f"{path}::{name}"
    sel.units.add(uid)
    if path.endswith(".py"):
        if uid in emap.get("import_time", ()):
            sel.fall_back(f"{uid}: runs while the Python engine is imported or the configs are loaded")
        return set(emap["py"].get(uid, ()))
    return set(emap["cpp"].get(uid, ())) | _twin_configs(emap, path, name, root, sel)


def _since_map(emap: dict, root: Path, sel: Selection) -> dict:
    """``{path: changed unit names}`` between the sources the map was recorded from and
    the working tree (unmappable changes noted in ``sel``)."""
    out: dict = {}
    recorded = emap.get("files", {})
    stats = emap.get("stat", {})
    now = M.engine_files(root)
    for p in sorted(set(now) | set(recorded)):
        if p not in now or p not in recorded:
            sel.fall_back(f"{p}: {'new' if p in now else 'removed'} since the edit map was recorded")
            continue
        old = recorded[p]
        if stats.get(p) == M.file_stat(root, p) or M.file_sha(root, p) == old.get("<sha>"):
            continue
        new = M.file_table(root, p)
        if "<file>" in old or "<file>" in new or not M.mapped(p):
            sel.fall_back(f"{p}: changed since the edit map was recorded (not mapped by function)")
            continue
        names = U.changed_units(p, {k: v for k, v in old.items() if k != "<sha>"},
                                {k: v for k, v in new.items() if k != "<sha>"})
        if names:
            out[p] = names
    return out


def select(root: Path, rev: str, emap: dict, families: dict) -> Selection:
    """The configs the edit since ``rev`` reached (see the module doc). ``families``:
    ``{family: [config names]}`` of today's configs."""
    root = Path(root)
    sel = Selection()
    hit: set = set()
    fams = set(families)
    for path, (old, new, status) in sorted(git_edit(root, rev).items()):
        if path.startswith(IGNORED) or ("/" not in path and path.endswith(".md")):
            continue
        fam = _family_of(path, "parity/configs/", ".py", fams) or _family_of(path, "golden/", ".json", fams)
        if fam is not None:
            sel.configs.update(f"{fam}/{n}" for n in families[fam])
            continue
        if not M.mapped(path):
            sel.fall_back(f"{path}: not an engine source mapped by function")
            continue
        if status != "M":
            sel.fall_back(f"{path}: {'added' if status == 'A' else 'removed'} since {rev}")
            continue
        for name in _units_of_edit(root, rev, path, old, new, sel):
            hit |= _unit_configs(emap, root, path, name, sel)
    since = Selection()
    for path, names in _since_map(emap, root, since).items():
        for name in names:
            hit |= _unit_configs(emap, root, path, name, since)
    sel.units |= since.units
    if since.full:
        sel.stale = since.reasons
        sel.full = True
    sel.configs.update(emap["configs"][i] for i in hit)
    known = set(emap["configs"])
    sel.configs.update(f"{f}/{n}" for f, names in families.items() for n in names if f"{f}/{n}" not in known)
    return sel

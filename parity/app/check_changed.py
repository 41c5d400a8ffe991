"""``parity check --changed [--since REV]``: the check of only the configs an edit
reached (parity/gate/changed.py; docs/gate.md, "Checking only what an edit reached").

:func:`narrow` turns the option into ``--only`` items before the ordinary check
runs, printing one line saying what is checked and why; the check itself (its
verdicts, golden findings, exit status) is ``parity check --only`` of those
configs. An edit that cannot be mapped is checked in full, with the reason.
"""

from __future__ import annotations

import time
from pathlib import Path

from parity.base.escape import shown
from parity.base.project import find_project_root
from parity.cli.common import nonempty
from parity.config import load_families
from parity.gate import changed as CH
from parity.gate import edit_map as M

#: Nothing to check: the exit status of a --changed run that selected no config.
NOTHING = "nothing"


def add_options(c) -> None:
    c.add_argument("--changed", action="store_true",
                   help="run only the configs whose lowering ran a function the edit changed (files that "
                        "differ from HEAD, or from --since REV), found through the edit map; an edit that "
                        "cannot be mapped (module level, a header, the gate) checks everything")
    c.add_argument("--since", metavar="REV", default=None, type=nonempty("--since", "a git revision"),
                   help="with --changed: the git revision the edit is measured from (default HEAD)")


def _current_map(root: Path, families: list, out=print) -> dict:
    """The edit map, recorded first when missing, of another version or for other families."""
    path = M.map_path(root)
    emap = M.load(path)
    if emap is None or set(emap.get("families", ())) != {f.name for f in families}:
        t0 = time.perf_counter()
        out("changed: recording the edit map (each config lowered once by both engines, with its "
            "functions noted; done again only when the map no longer fits)")
        M.build(root, path)
        emap = M.load(path)
        if emap is None:
            raise CH.ChangedError(f"the edit map at {path} cannot be read after recording it")
        out(f"changed: edit map recorded in {time.perf_counter() - t0:.1f} s -> {shown(path)}")
    return emap


def narrow(args, out=print) -> str | None:
    """Set ``args.only`` to the configs the edit reached (None: every config) and say so;
    returns :data:`NOTHING` when no config is reached, else None. ChangedError when
    the edit cannot be read."""
    rev = args.since or "HEAD"
    root = find_project_root()
    if root is None:
        raise CH.ChangedError("--changed: not inside a splitk-parity checkout")
    CH.check_rev(root, rev)   # a bad --since is refused before the map is recorded (seconds of lowering)
    families = load_families(args.configs)
    emap = _current_map(root, families, out)
    names = {f.name: [c.name for c in f.configs] for f in families}
    sel = CH.select(root, rev, emap, names)
    if sel.full and sel.stale and not sel.reasons:
        # only the map's record is out of date (the edit itself maps): record it again
        out(f"changed: the edit map no longer fits the sources ({sel.stale[0]})")
        M.map_path(root).unlink(missing_ok=True)
        emap = _current_map(root, families, out)
        sel = CH.select(root, rev, emap, names)
    if sel.full:
        reasons = sel.reasons + sel.stale
        out(f"changed: full check since {rev}: {reasons[0]}"
            + (f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""))
        args.only = None
        return None
    if not sel.configs:
        out(f"changed: no config reached by the edit since {rev} "
            f"({len(sel.units)} changed function{'s' if len(sel.units) != 1 else ''}): nothing to check")
        return NOTHING
    total = sum(len(v) for v in names.values())
    out(f"changed: {len(sel.configs)} of {total} configs reached by {len(sel.units)} changed "
        f"function{'s' if len(sel.units) != 1 else ''} since {rev}")
    args.only = ",".join(sorted(sel.configs))
    return None

"""The pre-commit hook ``parity-check`` (``.pre-commit-hooks.yaml``; docs/ci.md, "The
pre-commit hook"): ``parity check`` on the families the staged files touch.

    python -m parity.app.precommit [--print] FILE...

pre-commit passes the staged paths (relative to the repository root, its working
directory). Each path maps to what it can change (:func:`touched`):

* ``golden/FAMILY.json`` -> FAMILY; ``parity/configs/FAMILY.py`` -> FAMILY (a family is a
  module of parity/configs/ other than ``__init__`` and ``_private`` ones, as
  :func:`parity.config.load_families` discovers them);
* anything under ``python_engine/``, ``cpp_engine/`` or ``spec_front/`` (an engine, or the
  front check both engines share), anything else under ``parity/`` (the gate itself,
  a shared config helper) and a golden shard of no family (an ORPHAN is the whole
  check's finding) -> every family: ``parity check`` without ``--only``;
* anything else (docs/, tests/, scripts/, examples/, README.md, ...) -> nothing.

Nothing to check prints one line and exits 0; otherwise one line names the command and
the paths behind it, then ``parity check [--only F,..]`` runs in this process and its exit
status is the hook's (0 GREEN, 1 RED, 2 a usage or input error). ``--print`` prints the
command line only.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from parity.base.project import find_project_root
from parity.configs import family_module_names

#: The checkout this module belongs to: the root when the working directory is in no checkout.
ROOT = Path(__file__).resolve().parents[2]
#: Top-level directories whose every file can change every family's IR or verdict.
EVERY_FAMILY_DIRS = ("python_engine", "cpp_engine", "spec_front", "parity")
PREFIX = "parity-check"


@dataclass
class Touched:
    """What a set of staged paths can change: ``every`` family (with the first path that
    says so), or ``families`` (sorted), each with the paths behind it."""
    every: str | None = None
    families: dict[str, list[str]] = field(default_factory=dict)

    def argv(self) -> list[str] | None:
        """The ``parity`` arguments to run, or None when nothing is to be checked."""
        if self.every is not None:
            return ["check"]
        if self.families:
            return ["check", "--only", ",".join(sorted(self.families))]
        return None


def checkout(root: Path | None = None) -> Path:
    """``root``, else the checkout holding the working directory (pre-commit runs hooks at
    the repository root), else the checkout of this module."""
    return root or find_project_root() or ROOT


def family_names(root: Path | None = None) -> set[str]:
    """The families of the checkout at ``root`` (:func:`checkout`): the module names of
    parity/configs/ other than ``__init__`` and ``_*`` (read from the directory, no import)."""
    return family_module_names(checkout(root) / "parity" / "configs")


def relative(path: str, root: Path) -> PurePosixPath:
    """``path`` as pre-commit passes it (relative to the root, or absolute inside it) as a
    POSIX path relative to ``root``; a path outside the root is returned as given."""
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.resolve().relative_to(root.resolve())
        except ValueError:
            pass
    return PurePosixPath(p.as_posix().removeprefix("./"))


def touched(paths: list[str], root: Path | None = None) -> Touched:
    """Map staged paths to the families they touch (module doc). Pure: reads only the
    names of parity/configs/*.py under ``root`` (:func:`checkout`)."""
    root = checkout(root)
    names = family_names(root)
    out = Touched()
    for raw in paths:
        p = relative(raw, root)
        parts = p.parts
        family = None
        if len(parts) == 2 and parts[0] == "golden" and p.suffix == ".json":
            family = p.stem
        elif len(parts) == 3 and parts[:2] == ("parity", "configs") and p.suffix == ".py":
            family = p.stem
        if family is not None and family in names:
            out.families.setdefault(family, []).append(str(p))
        elif family is not None or (parts and parts[0] in EVERY_FAMILY_DIRS):
            out.every = out.every or str(p)
    return out


def describe(t: Touched, paths: list[str]) -> str:
    """The hook's one line about what it runs (or why nothing)."""
    argv = t.argv()
    if argv is None:
        return (f"{PREFIX}: nothing to check: none of the {len(paths)} staged file(s) touches a family's "
                "config, golden shard or an engine")
    if t.every is not None:
        return f"{PREFIX}: parity {' '.join(argv)} (every family: {t.every} changed)"
    why = "; ".join(f"{f}: {', '.join(ps)}" for f, ps in sorted(t.families.items()))
    return f"{PREFIX}: parity {' '.join(argv)} ({why})"


def main(argv: list[str] | None = None) -> int:
    """The hook: ``[--print] FILE...`` (module doc); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    dry = "--print" in args
    paths = [a for a in args if a != "--print"]
    t = touched(paths)
    print(describe(t, paths), flush=True)
    command = t.argv()
    if command is None or dry:
        return 0
    from parity.app.main import main as parity_main  # the gate, in this process
    return parity_main(command)


if __name__ == "__main__":
    raise SystemExit(main())

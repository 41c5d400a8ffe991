"""Where the gate's inputs live: the splitk-parity checkout that holds the working directory.

The gate reads golden shards (and, in a checkout, its configs) from the
project root: the nearest directory at or above the working directory that
holds both a ``pyproject.toml`` naming ``splitk-parity`` and a ``golden/``
directory. It never falls back to the tree the package was installed from,
so ``parity check`` run in checkout A can never go GREEN against checkout B's
goldens, and ``parity write`` never writes into site-packages.

    find_project_root(start=None) -> Path | None
    resolve_golden_dir(explicit=None, start=None) -> Path   (raises ProjectError)
"""

from __future__ import annotations

from parity.base.escape import shown

import os
import re
from pathlib import Path

PROJECT_NAME = "splitk-parity"
_NAME_RE = re.compile(r'^\s*name\s*=\s*["\']splitk-parity["\']\s*$', re.MULTILINE)


class ProjectError(Exception):
    """No usable golden directory; the message is one line that names the fix."""


def is_project_root(path: Path) -> bool:
    """True when ``path`` holds ``pyproject.toml`` (project name splitk-parity) and ``golden/``."""
    pp = path / "pyproject.toml"
    if not (pp.is_file() and (path / "golden").is_dir()):
        return False
    try:
        return _NAME_RE.search(pp.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def _start(start: Path | str | None) -> Path:
    """``start`` resolved, default the working directory; a working directory that was
    deleted (or cannot be read) is ``/nonexistent-working-directory``, inside no checkout."""
    if start is None:
        try:
            start = Path.cwd()
        except OSError:
            return Path("/nonexistent-working-directory")
    return Path(start).resolve()


def find_project_root(start: Path | str | None = None) -> Path | None:
    """The nearest splitk-parity checkout at or above ``start`` (default: the working directory).

    Returns the resolved directory, or None when no ancestor qualifies.
    """
    here = _start(start)
    for d in (here, *here.parents):
        if is_project_root(d):
            return d
    return None


SHARD_HEAD = re.compile(rb'\{"family": "([A-Za-z0-9_]+)"')


def is_golden_shard(path: Path) -> bool:
    """``path`` is a golden shard or a pending one: ``FAMILY.json`` or
    ``FAMILY.json.new``, a regular file that starts ``{"family": "FAMILY"`` as
    parity/golden/shards.py writes them (a renamed copy elsewhere is not one); False
    for anything else, unreadable files included."""
    try:
        if not path.is_file():
            return False
        with open(path, "rb") as fh:
            m = SHARD_HEAD.match(fh.read(200))
    except OSError:
        return False
    return bool(m) and path.name in (f"{m.group(1).decode()}.json", f"{m.group(1).decode()}.json.new")


def holds_golden_shards(directory: Path) -> bool:
    """``directory`` holds at least one golden or pending shard (FAMILY.json,
    FAMILY.json.new). OSError when it cannot be listed."""
    return any(q.name.endswith((".json", ".json.new")) and is_golden_shard(q) for q in directory.iterdir())


def golden_dir_holding(path: Path) -> Path | None:
    """The nearest directory at or above ``path``'s directory that holds golden shards
    (:func:`holds_golden_shards`), or None: a file written there, or in a directory
    below it, would land in a golden directory (a new ``FAMILY.json`` read as a shard,
    an untracked file in ``golden/``). A directory that cannot be listed is passed over."""
    up = Path(os.path.abspath(path)).parent
    for d in (up, *up.parents):
        try:
            if d.is_dir() and holds_golden_shards(d):
                return d
        except OSError:
            continue
    return None


def _names_shard(name: str, families) -> bool:
    """``name`` is ``F.json`` or ``F.json.new`` for a family ``F`` of ``families``."""
    stem = name[:-len(".new")] if name.endswith(".json.new") else name
    return stem.endswith(".json") and stem[:-len(".json")] in families


def resolve_golden_dir(explicit: str | Path | None = None, start: Path | str | None = None,
                       families=None) -> Path:
    """The golden shard directory the gate uses.

    ``explicit`` (``--golden-dir``) wins and must be an existing directory that is
    empty (a first write) or holds a golden shard: a file :func:`is_golden_shard`
    accepts, or one named ``F.json`` / ``F.json.new`` for a family ``F`` of
    ``families`` (a callable giving the configured family names, called only when
    needed), so a corrupt shard of a configured family is still reported as one;
    otherwise ``<project root>/golden``. Raises ProjectError with a one-line
    message when neither exists.
    """
    if explicit is not None:
        if not str(explicit).strip():   # Path("") is ".": an empty value would name the working directory
            raise ProjectError(f"--golden-dir {shown(explicit)}: an empty path; give the golden directory's path")
        p = Path(explicit)
        try:
            if not p.is_dir():
                raise ProjectError(f"--golden-dir {shown(explicit)}: not a directory")
            # a check writes pending .json.new files there: only into a golden
            # directory (one holding shards) or an empty one (a first write)
            entries = list(p.iterdir())
        except OSError as exc:
            raise ProjectError(f"--golden-dir {shown(explicit)}: cannot be read "
                               f"({shown(exc.strerror or exc)})") from None
        if entries and not _holds_a_shard(entries, families):
            raise ProjectError(f"--golden-dir {shown(explicit)}: holds no golden shard (a FAMILY.json that starts "
                               f'{{"family": "FAMILY", or is named for a configured family) and is not empty: '
                               f"not a golden directory")
        return p.resolve()
    root = find_project_root(start)
    if root is None:
        where = _start(start)
        raise ProjectError(f"no {PROJECT_NAME} checkout at or above {shown(where)} (looked for pyproject.toml "
                           f"and golden/); run inside a checkout or pass --golden-dir DIR")
    return root / "golden"


def golden_dir_error(exc: ProjectError, command: str, given) -> str:
    """``exc``'s message worded as argparse words an option's errors when it is about the
    ``--golden-dir`` given (``parity check: argument --golden-dir: DIR: not a directory``)."""
    head = f"--golden-dir {shown(given)}: " if given is not None else None
    msg = str(exc)
    if head is None or not msg.startswith(head):
        return msg
    return f"parity {command}: argument --golden-dir: {shown(given)}: {msg[len(head):]}"


def _holds_a_shard(entries: list[Path], families) -> bool:
    """One of ``entries`` is a golden shard, or named as one of a configured family."""
    named = [q for q in entries if q.name.endswith((".json", ".json.new"))]
    if any(is_golden_shard(q) for q in named):
        return True
    if not named or families is None:
        return False
    known = set(families() if callable(families) else families)
    return any(_names_shard(q.name, known) for q in named)


def checkout_configs_dir(start: Path | str | None = None) -> Path | None:
    """``<root>/parity/configs`` of the checkout holding ``start`` (default: the
    working directory) when the imported ``parity`` package is not that
    checkout's own (a non-editable install run inside a checkout); None when
    there is no checkout or the imported package already is the checkout's.

    The gate then loads the checkout's config files, so ``parity check`` in a
    checkout always checks that checkout's configs against its goldens."""
    root = find_project_root(start)
    if root is None:
        return None
    d = root / "parity" / "configs"
    if not d.is_dir():
        return None
    here = Path(__file__).resolve().parents[1] / "configs"
    return None if here == d.resolve() else d


def outside_checkout_note(start: Path | str | None = None) -> str | None:
    """One line saying the working directory is in no checkout (so configs are
    the installed package's and goldens need ``--golden-dir``), or None."""
    if find_project_root(start) is not None:
        return None
    where = shown(_start(start))
    here = Path(__file__).resolve().parents[1] / "configs"
    return (f"note: {where} is not inside a {PROJECT_NAME} checkout: using the configs installed at {here} "
            f"(golden shards need a checkout or --golden-dir DIR)")

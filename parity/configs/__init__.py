"""Config families of the gate: one module per kernel family (see parity.config).

Every module in this package other than ``__init__`` (and private ``_*``
modules) is discovered automatically.
"""

from pathlib import Path


def family_module_names(directory: Path | None = None) -> set[str]:
    """The family module names in ``directory`` (default: this package's own), read from the
    file names without importing anything: every ``*.py`` other than ``__init__`` and
    ``_*`` (the rule of :func:`parity.config.load_families`' discovery). Used by the
    pre-commit hook and ``--only`` completion (parity/app/precommit.py, completion.py)."""
    where = Path(__file__).parent if directory is None else Path(directory)
    return {p.stem for p in where.glob("*.py") if not p.stem.startswith("_")}

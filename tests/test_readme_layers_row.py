"""README's command table shows what `parity layers` takes today (several catalogs and
a flavor list, docs/cli.md), not the one-catalog form it had before."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_readme_layers_row_names_several_catalogs_and_flavors():
    rows = [ln for ln in (REPO / "README.md").read_text().splitlines() if ln.startswith("| `parity layers")]
    assert len(rows) == 1, rows
    assert "[FILE..]" in rows[0] and "--flavor F[,F..]" in rows[0], rows[0]
    assert "[FILE..]" in (REPO / "docs" / "cli.md").read_text()

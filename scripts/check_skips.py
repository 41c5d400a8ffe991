"""Fail CI when a test skipped for a reason not in the documented set (issue 39).

    python scripts/check_skips.py SKIP_LOG [.ci/skips_allowed.txt]

SKIP_LOG is what tests/conftest.py writes under ``PARITY_SKIP_LOG`` (one
``nodeid<TAB>reason`` per skipped test). Every skip is printed (the CI log lists
each reason); exit 1 when a skip matches no allowed line (TEST-FILE<TAB>REGEX),
0 otherwise; 2 when a file cannot be read.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path


def allowed_rules(path: Path) -> list[tuple[str, re.Pattern]]:
    """(test file, reason regex) of each non-comment line of the allow-list."""
    rules = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            fname, _, rx = line.partition("\t")
            rules.append((fname.strip(), re.compile(rx.strip())))
    return rules


def unexpected(skips: list[str], rules: list[tuple[str, re.Pattern]]) -> list[str]:
    """The skips (``nodeid<TAB>reason``) no rule allows."""
    bad = []
    for s in skips:
        nodeid, _, reason = s.partition("\t")
        fname = nodeid.split("::", 1)[0]
        if not any(fname == f and rx.search(reason) for f, rx in rules):
            bad.append(s)
    return bad


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print("error: check_skips.py SKIP_LOG [ALLOWED]", file=sys.stderr)
        return 2
    allow = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1] / ".ci" / "skips_allowed.txt"
    try:
        skips = [ln for ln in Path(argv[0]).read_text(encoding="utf-8").splitlines() if ln.strip()]
        rules = allowed_rules(allow)
    except OSError as exc:
        print(f"error: check_skips.py: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    for s in skips:
        print("skipped: " + s.replace("\t", ": ", 1))
    bad = unexpected(skips, rules)
    print(f"skips: {len(skips)}, allowed by {allow.name}: {len(skips) - len(bad)}, not allowed: {len(bad)}")
    for s in bad:
        print("error: skip not in the documented set: " + s.replace("\t", ": ", 1), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

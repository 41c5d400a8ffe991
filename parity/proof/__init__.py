"""The alignment and bounds proof over the engines' IR (DESIGN section 7, item 3; docs/proof.md).

Entry point: :func:`prove_module` (parity/proof/report.py). The assumed facts
are in parity/proof/assumptions.py, the abstract values in domain.py, the
interpreter in interpret.py.
"""

from parity.proof.report import FamilySummary, ProofReport, prove_module, summarise  # noqa: F401

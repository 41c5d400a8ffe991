"""Real layers: MIOpen command lines and catalogs, and what the engines make of them.

Owns: the MIOpen command-line and catalog parser (``miopen``), a layer's
kernels and launch plan (``emit``, ``parity emit``), every catalog layer end to
end (``layers``, ``parity layers``), the reduce launch's admission
(``reduce_launch``) and the catalog's perf-model predictions (``model``).

May import: the oracles (``layers`` runs verify and the emulator's reference),
parity.gate, parity.cli, parity.config, parity.llvm, parity.base
(docs/architecture.md, the ``parity-layers`` contract). The runtime, AOT and
perf tools import it.
"""

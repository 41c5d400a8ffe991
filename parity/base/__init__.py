"""The bottom of parity: small utilities every layer above may use.

Owns: terminal-safe quoting of untrusted text (``escape``), the checkout and
golden-directory paths (``project``), atomic writes and the standard streams
(``outputs``), the size/type checks of input files (``input_files``), "did you
mean" (``suggest``) and the stale-build check of the C++ engine (``stale``).

May import: the standard library and the engines' public API only; nothing
else of parity (the bottom layer of the ``parity-layers`` contract,
docs/architecture.md).
"""

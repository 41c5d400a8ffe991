"""The plumbing every command module is built from (not the ``parity`` program
itself, which is parity.app).

Owns: the exit codes, the ``error:`` line and the argparse subclass (``parser``),
the shared option vocabulary, ``--only`` parsing, the JSON report envelope and
``finish`` (``common``), each command's help and exit-status texts (``help``),
colour (``color``) and Ctrl-C handling (``interrupt``).

May import: parity.config, parity.llvm, parity.base (docs/architecture.md, the
``parity-layers`` contract). The gate, the oracles and the tools import it;
it imports none of them.
"""

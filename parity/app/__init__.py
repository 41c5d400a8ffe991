"""The ``parity`` program: the top of parity.

Owns: ``main`` and the command table (``main.COMMAND_MODULES``: each command's
module is imported only when it runs), the gate's own commands (``check``,
``write``, ``list``, ``show``, ``diff``: ``gate_commands``), the check/write
preamble (``preamble``: stale build, provenance) and the new-family scaffold
(``new_family``, ``parity new-family``).

May import: every other parity package (the command modules by name, through
``main.COMMAND_MODULES``); nothing imports it except ``parity.__main__`` and
``parity.check_byte_identity`` (docs/architecture.md, the ``parity-layers``
contract).
"""

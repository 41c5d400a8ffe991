"""The ``parity`` program: the top of parity.

Owns: ``main`` and the command table (``main.COMMAND_MODULES``: each command's
module is imported only when it runs), the gate's own commands (``check``,
``write``, ``list``, ``show``, ``diff``: ``gate_commands``), the check/write
preamble (``preamble``: stale build, provenance), the new-family scaffold
(``new_family``, ``parity new-family``; its engines' templates ``new_family_engines``, its plan
and done-run ``new_family_done``), the CI outputs of ``check`` (``ci_output``,
``check_shard``), shell completion (``completion``, ``parity completion``; main asks it
first when a shell requests completions) and the pre-commit hook's entry point
(``precommit``, ``python -m parity.app.precommit``: staged paths -> ``check --only``).

May import: every other parity package (the command modules by name, through
``main.COMMAND_MODULES``); nothing imports it except ``parity.__main__`` and
``parity.check_byte_identity`` (docs/architecture.md, the ``parity-layers``
contract).
"""

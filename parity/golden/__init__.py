"""The golden workflow: the sha256 shards under golden/ and every way they change.

Owns: the shard format, strict loading and atomic writes (``shards``), the
verdict of ``parity check`` (``verdict``: the gate's run joined with the
shards, one object per entry, which parity.app.gate_commands prints),
re-blessing through the oracles (``bless``, ``parity write``), the pending
changes a RED check leaves and their review (``pending``, ``review``,
``change_groups``, ``diff_page``), the IR changes since a git ref (``ir_diff``,
``ref_tree``), and the git drivers (``merge_driver``: ``parity merge-golden``;
``textconv``: ``parity golden-textconv``; ``git_attributes``).

May import: the oracles (parity.verify, parity.proof, parity.sim: ``bless``
runs them), parity.gate, parity.cli, parity.config, parity.llvm, parity.base
(docs/architecture.md, the ``parity-layers`` contract).
"""

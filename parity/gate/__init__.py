"""The byte-identity gate's engine room: both engines on every config, in
crash-isolating worker processes.

Owns: the run and its verdicts (``runner``), the worker pool (``pool``) and
the code that runs inside a worker with its job table (``worker``, the engine
outcomes in ``outcomes``), the fuzzer's job handlers, spec generator and lying
values beside the worker (``fuzz_check``, ``fuzz_generate``, ``fuzz_values``;
the ``parity fuzz`` command in parity.fuzz drives them), the failure summary
and divergence locator (``failure_summary``, ``locate``), the engines'
provenance line (``provenance``) and the shared selection of families, flavors
and engines from parsed options (``report``).

May import: parity.cli, parity.config, parity.llvm, parity.base and the
engines' public API (docs/architecture.md, the ``parity-layers`` contract).
It never imports the oracles, the golden workflow or the tools; the commands
that format its results (parity.app.gate_commands, check_byte_identity) sit on
top.
"""

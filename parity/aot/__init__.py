"""``parity aot``: the AOT job grid built to code objects (docs/aot.md).

* :mod:`.manifest` — the manifest document: entries, gate, validation, merge, compare;
* :mod:`.shard` — deterministic ``--shard I/N`` partition by identity hash;
* :mod:`.worker` — one job in a worker process: compile (llvmlite) + link (ld.lld);
* :mod:`.build` — the parallel, incremental build of a flavor's grid;
* :mod:`.cli` — the ``parity aot`` command line.
"""

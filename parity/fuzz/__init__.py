"""``parity fuzz``: the in-tree differential fuzzer (docs/fuzz.md).

Specs are generated per family from its spec fields (``generate``), run
through both engines' ``validate`` and ``lower`` in the gate's crash-isolating
worker pool (``check``, ``run``), every failing spec is shrunk (``shrink``)
and written as a runnable reproducer (``repro``). ``cli`` wires it into the
``parity`` command.
"""

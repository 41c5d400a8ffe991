"""The LLVM toolchain as parity's oracles and tools call it.

Owns: finding and running the LLVM tools on an IR text (``compile``: llc, opt,
llvm-mc, ld.lld; llvmlite where present) and the content-addressed cache of
their outputs (``compile_cache``, docs/verify.md "The compile cache"). Used by
verify/, perf/, aot/, runtime/, mutate/ and the ``--no-compile-cache`` option.

May import: parity.base only (docs/architecture.md, the ``parity-layers``
contract).
"""

"""The validity oracle (DESIGN §7.1, docs/verify.md): every emitted module
checked by its flavor's LLVM, and an ISA resource report per compiled config.

Modules: ``lanes`` (which LLVM checks which flavor), ``compile_worker``
(LLVM in worker processes), ``isa_report`` (registers, spills, LDS,
occupancy from the assembly), ``intrinsics_check`` (intrinsic existence,
external calls), ``verify`` (the runner and ``parity verify``).
"""

from parity.verify.verify import (FAIL, PASS, REJECTED, SKIPPED, UnitResult, VerifyReport,  # noqa: F401
                                  run_verify)

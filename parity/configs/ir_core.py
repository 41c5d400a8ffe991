"""ir_core: small kernels that exercise the IR builder and printer."""

from parity.config import Config, ok, reject, reject_before_llvm23  # noqa: F401

FAMILY = "ir_core"

CONFIGS = [
    # Placeholders; the family owner completes this list.
    Config("constants_f32", arch="gfx1250", spec={"kernel": "constants_f32"}, expect=ok()),
    Config("lds_barrier", arch="gfx1250", spec={"kernel": "lds_barrier"}, expect=ok()),
]

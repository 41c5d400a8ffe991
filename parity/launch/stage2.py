"""The Stage-2 (reduce) launch of a conv_launch plan: the reduce binary's spec and grid,
pure functions of the plan, shared by the GPU pipeline (parity/runtime/pipeline.py) and the
emulator (parity/sim/numerics.py)."""
from __future__ import annotations

from parity.launch.plan import LaunchPlan

REDUCE_THREADS = 256
REDUCE_VECTOR = 4


def reduce_spec(dtype: str, acc_epilogue: str = "identity") -> dict:
    """The Stage-2 binary: runtime slab loop (degree 0), so one binary serves every degree;
    a fused layer's (``acc_epilogue`` not identity) applies the epilogue after the fold."""
    out = {"dtype": dtype, "vector": REDUCE_VECTOR, "threads": REDUCE_THREADS, "degree": 0}
    if acc_epilogue != "identity":
        out["acc_epilogue"] = acc_epilogue
    return out


def reduce_grid(plan: LaunchPlan, rspec: dict | None = None) -> tuple:
    """``ceil(M*K / (threads*vector))`` workgroups along x for the reduce spec ``rspec``
    (default :func:`reduce_spec`)."""
    n = plan.stage2_args["M"] * plan.stage2_args["K"]
    rs = rspec or {"threads": REDUCE_THREADS, "vector": REDUCE_VECTOR}
    per = rs["threads"] * rs["vector"]
    return ((n + per - 1) // per, 1, 1)

"""The pairing rule of a Stage-2 launch: which reduce kernel may run with
which arguments (docs/conv_launch.md, "Stage 2").

``conv_fwd_split_k_reduce`` with ``degree`` d >= 1 is unrolled for d slabs and
ignores its ``ks_count`` argument: it reads ``d * M * K`` fp32 partials from
``ws_ptr`` whatever ``ks_count`` and ``ws_bytes`` say. Rather than make the
unrolled kernel branch per slab (``min(d, ks_count)``), a launch that pairs it
with ``ks_count != d`` is refused: the pair is decided once, by the split-K
policy (its ``reduce_spec`` unrolls for the plan's actual slice count, or loops
with degree 0), and every launcher checks it here (``emit``/``parity layers``
through :func:`parity.catalog.emit.plan_layer`, the runtime's ``ConvRun``). A
degree-0 kernel loops over ``ks_count``. Both must also find ``ks_count``
slabs inside ``ws_bytes`` and the output inside ``d_bytes``.

This is a Python-side launch rule (the engines emit kernels and plan text;
they launch nothing), so it has no C++ twin.
"""
from __future__ import annotations

ELEM_BYTES = {"bf16": 2, "fp16": 2}


def reduce_launch_reason(rspec: dict, args: dict) -> str | None:
    """Why the reduce kernel ``rspec`` (``dtype``, ``degree``) may not run with
    the Stage-2 arguments ``args`` (``ws_bytes``, ``d_bytes`` in bytes, ``M``,
    ``K`` elements, ``ks_count`` slabs), or None. One line naming the field and
    the rule."""
    d = int(rspec.get("degree", 0))
    kc, M, K = int(args["ks_count"]), int(args["M"]), int(args["K"])
    if kc < 1:
        return f"ks_count must be >= 1, got {kc}"
    if d and d != kc:
        return (f"ks_count {kc} does not match the reduce kernel's degree {d}: an unrolled reduce kernel "
                f"folds exactly degree slabs (rule: pair degree d with ks_count d, or use degree 0)")
    slabs = d or kc
    need_ws = slabs * M * K * 4
    if int(args["ws_bytes"]) < need_ws:
        return (f"ws_bytes {args['ws_bytes']} is below the {slabs} fp32 slabs of M*K = {M}*{K} the reduce "
                f"kernel reads ({need_ws} bytes)")
    need_d = M * K * ELEM_BYTES.get(rspec.get("dtype", "bf16"), 2)
    if int(args["d_bytes"]) < need_d:
        return f"d_bytes {args['d_bytes']} is below the M*K = {M}*{K} outputs the reduce kernel writes ({need_d} bytes)"
    return None

"""`parity numerics` scheduling (parity/sim/schedule.py): the expensive configs
are handed out first, one per task, and the outcomes come back in catalog order."""
from __future__ import annotations

from parity.sim import numerics as N
from parity.sim.schedule import estimated_cost, longest_first


def test_cluster_configs_are_estimated_dearest_and_go_first():
    items = N.accepted_configs()
    order = [items[i] for i in longest_first(items)]
    costs = [estimated_cost(f, s) for f, _, s, _ in order]
    assert costs == sorted(costs, reverse=True)
    # the 8-, 12- and 15-workgroup cluster configs lead the queue
    assert all(int(it[2].get("split_k_cluster", 0) or 0) >= 8 for it in order[:8])
    # families without a cost model (ir_core, and a family added after it) share the flat
    # cost and close the queue in catalog order (a new family must not need this test edited)
    flat = estimated_cost("ir_core", {})
    tail = [it for it in items if estimated_cost(it[0], it[2]) == flat]
    assert "ir_core" in {it[0] for it in tail} and order[-len(tail):] == tail
    # the 15-workgroup cluster with 128x128x64 tiles is the dearest; 4-workgroup clusters cost less than 15
    assert order[0][1] == "skc15_mem_cshuffle_128x128x64_bf16"
    assert estimated_cost("conv_implicit_gemm", {"split_k_cluster": 4}) < \
        estimated_cost("conv_implicit_gemm", {"split_k_cluster": 15})
    assert estimated_cost("conv_fwd_split_k_reduce", {"degree": 32}) > \
        estimated_cost("conv_fwd_split_k_reduce", {"degree": 0})


def test_two_workers_return_outcomes_in_catalog_order():
    items = [it for it in N.accepted_configs(["ir_core"])][:6]
    sel = {(f, n) for f, n, _, _ in items}
    seen = []
    outs = N.run_all(["ir_core"], jobs=2, select=sel, progress=lambda o, done, total: seen.append((done, total)))
    assert [o.config for o in outs] == [n for _, n, _, _ in items]
    assert all(o.ok for o in outs), [o.problems for o in outs]
    assert seen == [(k, len(items)) for k in range(1, len(items) + 1)]

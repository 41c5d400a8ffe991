"""Coverage-ordered cases of the numerics oracle (parity/mutate/prioritise.py) and the
instruction parse cache (parity/sim/ir.py) that make an every-site mutation run cheaper
without changing a verdict."""
from __future__ import annotations

import dataclasses

import pytest

from parity.mutate import prioritise as PRI
from parity.mutate import run as R
from parity.sim import ir
from parity.sim import numerics as N
from tests.mutant_helpers import conv_jobs

CFG = "plain_mem_default_32x32x32_w1x1_bf16"


@pytest.fixture(scope="module")
def jobs():
    return conv_jobs(CFG, "cmp_negate", "icmp")


def test_profile_gives_each_case_its_cost_and_the_blocks_it_entered(jobs):
    p = PRI.profile(jobs[0])
    names = [c.name for c in p.cases]
    assert names[0] == "pad_stride_ks96x1" and len(names) == 36   # with cover_unit_first / _loop
    byname = {c.name: c for c in p.cases}
    # the uniform-tap loop runs only where cpg is a multiple of 2 tile_k: cover_taps, not pad_stride
    assert "tap_loop315" in byname["cover_taps_ks512x1"].blocks
    assert "tap_loop315" not in byname["pad_stride_ks96x1"].blocks
    assert all("entry0" in c.blocks and c.cost > 0 for c in p.cases)
    assert byname["cover_diff_hok_ks1568x1"].cost > 10 * byname["pad_stride_ks96x1"].cost
    assert p.block_of[30] == "entry0"


def test_changed_blocks_are_the_blocks_of_the_changed_lines(jobs):
    p = PRI.profile(jobs[0])
    j = next(j for j in jobs if p.block_of.get(j.mutant.line) == "kwalk236")
    assert PRI.changed_blocks(p.block_of, j.original, j.mutant.text) == frozenset({"kwalk236"})
    assert PRI.changed_blocks(p.block_of, j.original, j.original) is None    # nothing changed
    lines = j.original.split("\n")
    attr = next(i for i, s in enumerate(lines) if s.startswith("attributes "))
    lines[attr] = lines[attr].replace('"amdgpu-flat-work-group-size"', '"amdgpu-flat-work-group-size" nosync')
    assert PRI.changed_blocks(p.block_of, j.original, "\n".join(lines)) is None   # outside every block


def test_the_order_puts_the_cases_entering_the_changed_block_first_by_cost(jobs):
    p = PRI.profile(jobs[0])
    j = next(j for j in jobs if p.block_of.get(j.mutant.line) == "tap_loop315")
    order = PRI.case_order(j)
    cases = [c for c in N.PLANS[j.family].cases(j.spec, j.arch, N._Lowerer()) if hasattr(c, "launches")]
    got = [c.name for c in order(cases)]
    tap = sorted((c for c in p.cases if "tap_loop315" in c.blocks), key=lambda c: c.cost)
    assert got[:len(tap)] == [c.name for c in tap]
    assert got[0] == "cover_taps_first_ks192x1"       # the cheapest case that runs the tap loop
    rest = [c.name for c in p.cases if "tap_loop315" not in c.blocks]
    assert got[len(tap):] == rest                      # the others in plan order
    entry = next(j for j in jobs if p.block_of.get(j.mutant.line) == "entry0")
    assert [c.name for c in PRI.case_order(entry)(cases)][0] == "odd_k9_ks32x1"   # every case enters entry0


def test_ordered_and_plan_order_give_the_same_verdicts(jobs):
    p = PRI.profile(jobs[0])
    picked = [j for j in jobs if p.block_of.get(j.mutant.line) in ("tap_loop315", "kwalk236")][:6]
    assert len(picked) == 6
    for j in picked:
        a, b = R.judge(j), R.judge(dataclasses.replace(j, ordered=True))
        assert (a.status, a.oracle) == (b.status, b.oracle) == ("killed", "numerics"), (a, b)


def test_plan_orders_only_conv_configs_with_many_sites():
    configs = [c for c in N.accepted_configs(["conv_implicit_gemm", "conv_fwd_split_k_reduce"])
               if c[1] in (CFG, "bf16_v1_t64_d0")]
    every = R.plan(configs, 0, per_kind=None, kinds=("const_inc",))
    assert {(s.family, s.ordered) for s in every} == {("conv_implicit_gemm", True),
                                                      ("conv_fwd_split_k_reduce", False)}
    sampled = R.plan(configs, 0, per_kind=2, kinds=("const_inc",))
    assert not any(s.ordered for s in sampled)       # 2 sites: the profile would cost more than it saves
    assert all(s.job().ordered == s.ordered for s in every[:3])


def test_parse_cache_hands_out_copies_equal_to_a_fresh_parse(jobs):
    text = jobs[0].original
    ir._INS_CACHE.clear()
    a, b = ir.parse(text), ir.parse(text)
    fresh = [ir.parse_instruction(i.text, i.block, i.line) for blk in a.blocks for i in blk.ins]
    key = lambda ins: repr(ins)   # noqa: E731  (an Operand may hold a numpy constant: no ==)
    assert [key(i) for blk in a.blocks for i in blk.ins] == [key(i) for i in fresh] \
        == [key(i) for blk in b.blocks for i in blk.ins]
    assert len(fresh) > 500
    assert a.blocks[0].ins[0] is not b.blocks[0].ins[0]
    assert a.blocks[0].ins[0].ops is not b.blocks[0].ins[0].ops   # _expand_const_geps rewrites ops in place
    assert a.blocks[0].ins[0].extra is not b.blocks[0].ins[0].extra


def test_block_labels_by_hand():
    """The one block map of parity/mutate: instruction lines inside a body, by label."""
    from parity.mutate import proved as PROVED
    text = "; m\ndefine void @k() {\nentry0:\n  %a = add i32 1, 2\n  br label %b1\n\nb1:\n  ret void\n}\n"
    assert PROVED.block_labels(text) == {4: "entry0", 5: "entry0", 8: "b1"}
    assert PROVED.block_labels(text.replace("b1:\n", "b1:                ; preds = %entry0\n")) == \
        {4: "entry0", 5: "entry0", 8: "b1"}

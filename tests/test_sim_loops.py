"""The loops of a kernel for coverage per K-loop iteration class (parity/sim/loops.py,
docs/sim.md "Coverage"): natural loops from dominators, not text order; values dead in
the last trip; the judgement on by default in `parity numerics --coverage`."""
from __future__ import annotations

import pytest

from parity.sim import coverage as COV
from parity.sim import ir
from parity.sim import loops as L
from parity.sim import numerics as N

# the conv kernel's layout in miniature: the K loop's pre-header (`walk`) after the loop,
# the epilogue after the `exit` block it branches back to (not a loop), a select whose
# value only feeds the next trip (`nx`) and one that is stored (`st`)
TEXT = """\
define amdgpu_kernel void @k(ptr addrspace(1) noalias %out, i32 %n) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %go = icmp ult i32 %tid, %n
  br i1 %go, label %walk, label %epi
loop:
  %i = phi i32 [ 0, %walk ], [ %inext, %loop ]
  %p = phi i32 [ 0, %walk ], [ %nx, %loop ]
  %inext = add i32 %i, 1
  %big = icmp ugt i32 %inext, 2
  %nx = select i1 %big, i32 7, i32 %p
  %st = select i1 %big, i32 %p, i32 1
  %g = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %i
  store i32 %st, ptr addrspace(1) %g, align 4
  %again = icmp ult i32 %inext, %n
  br i1 %again, label %loop, label %exit
exit:
  ret void
walk:
  br label %loop
epi:
  br label %exit
}
declare i32 @llvm.amdgcn.workitem.id.x()
attributes #0 = { "amdgpu-flat-work-group-size"="32,32" }
"""


def _blocks():
    return ir.parse(TEXT).blocks


def test_natural_loops_follow_dominators_not_text_order():
    blocks = _blocks()
    names = [b.name for b in blocks]
    loops = L.natural_loops(blocks)
    body = sorted(names[i] for (w, i), _ in loops.items() if w == "in")
    assert body == ["loop"]          # not walk (the pre-header after it) nor exit..epi
    assert {names[i] for (w, i) in loops if w == "head"} == {"loop"}
    assert {names[i] for (w, i) in loops if w == "exit"} == {"exit"}


def test_carried_only_names_values_dead_in_the_last_trip():
    blocks = _blocks()
    loops = L.natural_loops(blocks)
    carried = L.carried_only(blocks, loops)
    assert "nx" in carried and "inext" not in carried   # inext feeds the store's address
    assert "st" not in carried and "big" not in carried


def test_carried_site_last_class_is_declared_not_failed():
    cov = COV.Coverage()
    sel = COV.Site("select", "%a_off9 = select i1 %a_ok6, i32 %a_byte5, i32 %oob_x1", "kloop3", 41)
    cov.sites.append(sel)
    cov.true.append(True)
    cov.false.append(True)
    cov.in_loop = {0: "L"}
    cov.carried = {0}
    cov.by_class.update(first={0: 3}, middle={0: 3}, last={0: 2})
    summ = cov.summary()
    assert summ["iteration_missing"] == []
    assert [(c, h) for _, c, h, _ in summ["iteration_carried"]] == [("last", "never true")]
    fails, declared = COV.judge(summ, {}, {})
    assert fails == [] and declared == [
        "K-loop iteration class last: never true: `%a_off9 = select i1 %a_ok6, i32 %a_byte5, i32 %oob_x1` "
        "(block kloop3, line 41): declared: " + COV.CARRIED_REASON]


@pytest.fixture(scope="module")
def plain_outcome():
    fam, cfg, spec, arch = N.find_config("conv_implicit_gemm/plain_mem_default_64x64x32_w2x2_bf16")
    return N.run_config(fam, cfg, spec, arch, lowerer=N._Lowerer(coverage=True))


def test_plain_64x64_meets_every_iteration_class(plain_outcome):
    """The conv kernel's K walk loop, uniform-tap loop and tap-tile loop: every loop site that went both
    ways went both ways in its first, middle and last trips, or is declared (the look-ahead
    selects' last trip: `a_off@last`, `b_off@last`; values dead in the last trip)."""
    from parity.config import load_families
    o = plain_outcome
    assert o.ok, o.problems
    unc = {c.name: dict(c.uncovered) for f in load_families(only=["conv_implicit_gemm"]) for c in f.configs}
    fails, declared = COV.judge(o.coverage, o.classes, unc[o.config])
    assert fails == []
    it = o.coverage["iterations"]
    # the K loop's, the tap loop's and the tap-tile loop's sites (17 of the last; 3 of them the
    # look-ahead B caps, cap_kb)
    assert it["first"][0] == it["middle"][0] == it["last"][0] == 50
    assert sum("a_off@last" in d or "look-ahead A tile" in d for d in declared) == 2
    # 7 carried-only selects dead in the last trip (8 before the every-site run's problems: one
    # of them now also goes the other way in a last trip), 5 of the tap-tile loop's next-tile
    # steps and voffsets, and the 3 look-ahead B caps (cap_kb: true in every last trip)
    assert sum(COV.CARRIED_REASON in d for d in declared) == 15


def test_first_trip_tap_problems_close_the_tap_loop_misses(monkeypatch):
    """Without ``cover_taps_first`` / ``cover_taps_xwrap`` (and the slot problems, which since
    the every-site run of 64x64x32 also reach this class and close three of them) the tap
    loop's first trip always wraps the channel (two pairs a tap or one) and never wraps x:
    six named failures, and the look-ahead B cap's two (cap_kb)."""
    from parity.sim import cover
    real = cover.conv_cover_problems
    drop = ("cover_taps_first", "cover_taps_xwrap", "cover_taps_slots", "cover_taps_slots_pro")
    monkeypatch.setattr(cover, "conv_cover_problems", lambda full: tuple(p for p in real(full) if p[0] not in drop))
    fam, cfg, spec, arch = N.find_config("conv_implicit_gemm/plain_mem_default_64x64x32_w2x2_bf16")
    o = N.run_config(fam, cfg, spec, arch, lowerer=N._Lowerer(coverage=True))
    from parity.config import load_families
    unc = {c.name: dict(c.uncovered) for f in load_families(only=["conv_implicit_gemm"]) for c in f.configs}
    fails, _ = COV.judge(o.coverage, o.classes, unc[o.config])
    got = sorted((f.split(":")[0], f.split("`%")[1].split(" ")[0].rstrip("0123456789")) for f in fails)
    # (and the look-ahead B cap, cap_kb, which only their short runs meet: in a first trip, and
    # the prologue's cap of the divided second pair at all)
    assert got == [("K-loop iteration class first", h) for h in
                   ("tp_cb", "tp_kb", "tp_ks", "tp_kw", "tp_xd", "tp_xs", "tp_ys")] + [("never false", "tp_kb")]

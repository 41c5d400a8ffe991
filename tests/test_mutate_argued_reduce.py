"""The reduce family's arguments against the kills that showed them too broad (the argument
cross-check over `parity mutate --only conv_fwd_split_k_reduce`, stop 49): the degree-0
slab loop's back edge is not the tail loop's, relu's literal-zero bound is not a min/max
bound, and the proof's alignment kills are consistent with *alignment holds*."""
from __future__ import annotations

import python_engine.api as api
from parity.mutate import argued as AR
from parity.mutate import operators as OPS
from parity.mutate import run as R
from parity.sim import numerics as N

FAM = "conv_fwd_split_k_reduce"


def _jobs(name, kind, pattern):
    _, _, spec, arch = next(c for c in N.accepted_configs([FAM]) if c[1] == name)
    full = N._with_defaults(FAM, spec)
    t = api.lower(FAM, full, arch, "llvm23").text
    lines = t.split("\n")
    return [R.Job(FAM, name, full, arch, t, OPS.apply(t, kind, s)) for s in OPS.sites(t, kind)
            if pattern in lines[s[0]]]


def _argued(job):
    return next((n for n, p in AR.ARGUED if p(R._view(job))), None)


def test_slab_loop_back_edge_is_not_the_tail_edge():
    """bf16_v1_t64_d0: ``again = snext < ks_count`` one long reads a slab past the workspace,
    swapped it stops after one slab (both killed); the tail's ``again = inext < 1`` is
    still *surplus tail iteration* / *one-trip tail swap*."""
    slab = _jobs("bf16_v1_t64_d0", "cmp_boundary", "icmp slt i32 %snext")
    tail = _jobs("bf16_v1_t64_d0", "cmp_boundary", "icmp ult i64 %inext")
    assert slab and tail
    assert {_argued(j) for j in slab} == {None}
    assert {_argued(j) for j in tail} == {"surplus tail iteration"}
    swaps = _jobs("fp16_v1_t64_d0", "swap_operands", "= icmp slt i32 %snext")
    assert swaps and {_argued(j) for j in swaps} == {None}
    assert {_argued(j) for j in _jobs("fp16_v1_t64_d0", "swap_operands", "= icmp ult i64 %inext")} == \
        {"one-trip tail swap"}


def test_relu_zero_bound_is_not_a_min_max_bound():
    """relu ``s < 0`` made ``s <= 0``: -0.0 meets the bound and D's sign bit differs, scalar
    and vector constants alike; the clamp's caller bounds are not argued either (a bound of
    +-0 meets the other zero: the zero-bound cases kill them)."""
    for name in ("fused_relu_bf16_v4_t64_d0", "fused_relu_bf16_v4_t64_d4"):
        js = [j for j in _jobs(name, "cmp_boundary", "fcmp olt") if j.mutant.what.startswith("olt -> ole")]
        assert js and {_argued(j) for j in js} == {None}, name
    clamp = _jobs("fused_clamp_bf16_v4_t64_d4", "cmp_boundary", "fcmp ogt")
    assert clamp and {_argued(j) for j in clamp} == {None}   # killed by the zero-bound cases


def test_alignment_argument_is_consistent_with_a_proof_kill():
    """A doubled ``align`` the argument shows true but the proof cannot derive is killed by
    the proof oracle: consistent (PROOF_UNDERIVED), not a contradiction; a numerics kill
    of the same mutant would be one."""
    js = [j for j in _jobs("fp16_v8_t64_d4", "align_double", "load <8 x float>") if _argued(j)]
    assert js and _argued(js[0]) == "alignment holds"
    v = R.Verdict(FAM, "fp16_v8_t64_d4", "align_double", js[0].mutant.line, js[0].mutant.what, "killed", "proof",
                  "declared align 8, proved align 4")
    assert R._argued_contradiction(js[0], v) == ""
    v.oracle = "numerics"
    assert R._argued_contradiction(js[0], v) == "argued: alignment holds"
    v.oracle, v.reason = "proof", "an access past the buffer end"   # not the failure the argument excuses
    assert R._argued_contradiction(js[0], v) == "argued: alignment holds"


def test_padding_lane_partner_needs_an_index_llvm_parses():
    """va3's WMMA fragment mask ``15 -> 16`` names no element of the two 8-element operands
    (LLVM refuses it: killed by the llvm oracle), so *padding-lane partner* must not claim
    it; a padding position changed within 0..15 is still argued."""
    fam, name = "conv_implicit_gemm", "plain_mem_default_va3_vb3_bf16"
    _, _, spec, arch = next(c for c in N.accepted_configs([fam]) if c[1] == name)
    full = N._with_defaults(fam, spec)
    t = api.lower(fam, full, arch, "llvm23").text
    lines = t.split("\n")
    js = [R.Job(fam, name, full, arch, t, OPS.apply(t, "const_inc", s)) for s in OPS.sites(t, "const_inc")
          if "= shufflevector <8 x bfloat> %f_lo" in lines[s[0]]]
    past = [j for j in js if j.mutant.what == "i32 15 -> i32 16"]
    inside = [j for j in js if j.mutant.what == "i32 11 -> i32 12"]
    assert past and inside
    assert {_argued(j) for j in past} == {None}
    assert {_argued(j) for j in inside} == {"padding-lane partner"}

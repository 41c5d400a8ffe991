"""The opt lane (parity/sim/optimised.py): modules after LLVM's -O3 run in the
emulator's optimised mode and must leave every buffer bit-identical to the
engines' module; a promise LLVM exploits, or a reassociated Stage-2 sum, is a
named failure."""
from __future__ import annotations

import numpy as np
import pytest

import python_engine as E
from parity.sim import Kernel, Poison, SimError
from parity.sim import numerics as N
from parity.sim.plans import conv_fwd_split_k_reduce as REDUCE_PLAN
from parity.sim import optimised as O

ATTR = '\nattributes #0 = { "amdgpu-flat-work-group-size"="32,32" "uniform-work-group-size"="true" }\n'


def _reduce(name: str) -> tuple:
    fam, cfg, spec, arch = N.find_config(f"conv_fwd_split_k_reduce/{name}")
    spec = N._with_defaults(fam, spec)
    return fam, cfg, spec, arch, E.lower(fam, spec, arch, N.FLAVOR).text


def _lane_run(fam, cfg, spec, arch, text):
    """run_config of ``text`` in place of the config's kernel, with the opt lane attached
    (what ``parity numerics --ir FILE CONFIG --opt`` does)."""
    lw = N.TextLowerer(fam, spec, arch, text)
    O.Lane(N.TextLowerer, fam, spec, arch, text).attach(lw)
    o = N.run_config(fam, cfg, spec, arch, lw)
    lw.opt_lane.run_order_cases(o, fam, spec, arch, lw, N)
    return o, lw.opt_lane.stats


def test_normalise_accepts_llvm_deductions_and_keeps_the_engines_signature():
    fam, cfg, spec, arch, text = _reduce("bf16_v4_t256_d0")
    opt, _ = O.optimise(text, arch)
    assert "tail call" in opt and "icmp samesign" in opt and "!amdgpu.noclobber" in opt
    assert '"amdgpu-no-workitem-id-x"' in opt and "local_unnamed_addr" in opt
    norm = O.normalise(opt, text)
    assert len(norm.split("\n")) >= len(opt.rstrip("\n").split("\n"))
    for i, line in enumerate(opt.split("\n")):   # every instruction keeps its line number
        if line.startswith("  %"):
            assert norm.split("\n")[i].split(" = ")[0] == line.split(" = ")[0]
    for gone in ("tail call", "samesign", "noclobber", "local_unnamed_addr", "nneg", "inbounds nuw"):
        assert gone not in norm
    define = [ln for ln in norm.split("\n") if ln.startswith("define ")]
    assert define == [ln for ln in text.split("\n") if ln.startswith("define ")]
    k = Kernel(norm)
    assert k.module.attrs == Kernel(text).module.attrs   # the engines' attributes, not LLVM's
    assert "umin" in norm   # an intrinsic opt introduced, now decoded


def test_normalise_refuses_a_changed_engine_attribute():
    fam, cfg, spec, arch, text = _reduce("bf16_v4_t256_d0")
    opt, _ = O.optimise(text, arch)
    with pytest.raises(SimError, match=r'"amdgpu-flat-work-group-size"="256,256" .* is \'128,128\' after opt'):
        O.normalise(opt.replace('"amdgpu-flat-work-group-size"="256,256"', '"amdgpu-flat-work-group-size"="128,128"'),
                    text)
    with pytest.raises(SimError, match="opt changed the kernel signature"):
        O.normalise(opt.replace("i32 %ks_count)", "i64 %ks_count)"), text)


def test_splat_and_poison_vector_literals():
    line = "  %v = add nuw nsw <2 x i64> %a, splat (i64 2)"
    assert O._splat(line) == "  %v = add nuw nsw <2 x i64> %a, <i64 2, i64 2>"
    lit = "  %s = shufflevector <2 x i32> %x, <2 x i32> poison, <4 x i32> <i32 0, i32 1, i32 poison, i32 poison>"
    assert O._VEC_LIT.sub(O._literal, lit).endswith("<4 x i32> <i32 0, i32 1, i32 0, i32 0>")
    assert O._VEC_LIT.sub(O._literal, "insertelement <2 x float> <float poison, float 0.0>, float %x, i64 0") \
        == "insertelement <2 x float> <float 0.0, float 0.0>, float %x, i64 0"


def test_a_promise_llvm_exploits_shows_as_a_difference(monkeypatch):
    """``lshr exact`` on values with low bits set: LLVM folds ``(x >>exact 2) << 2`` to ``x``.
    The promise check refuses the flag before any lane runs (first assertion); with that
    check lifted, the opt lane alone still shows the difference (the independent check)."""
    text = """target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @k(ptr addrspace(1) noalias %out, i32 %a) #0 {
entry0:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %x = add i32 %a, %tid
  %q = lshr exact i32 %x, 2
  %r = shl i32 %q, 2
  %t = zext i32 %tid to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %t
  store i32 %r, ptr addrspace(1) %p, align 4
  ret void
}
""" + ATTR
    with pytest.raises(Poison, match="lshr exact"):
        Kernel(text).launch((1, 1, 1), 32, {"out": np.zeros(32, np.uint32), "a": 100})
    opt, _ = O.optimise(text, "gfx1250")
    outs = []
    for t in (text.replace("lshr exact", "lshr"), O.normalise(opt, text)):  # the shift as computed without the promise
        out = np.zeros(32, np.uint32)
        Kernel(t).launch((1, 1, 1), 32, {"out": out, "a": 100})
        outs.append(out)
    probs = O.compare_buffers({"out": outs[0]}, {"out": outs[1]})
    assert probs == ["optimised module (opt -O3) differs from the engines' module: out[1] = 101 (0x65), "
                     "unoptimised 100 (0x64) (24 of 32 elements differ)"]


def test_order_cases_are_order_sensitive():
    """The cancelling slabs give a different bf16 D for a two-lane partial sum in about 30 %
    of the elements (so a reassociated Stage-2 sum cannot pass them by luck)."""
    from parity.sim import reference as ref
    ws = O.cancelling_slabs(np.random.default_rng(3), 5, 4000)
    seq = ref.split_k_sum(ws)
    lane0 = ((ws[0] + ws[1]).astype(np.float32) + ws[3]).astype(np.float32)
    lane1 = (ws[2] + ws[4]).astype(np.float32)
    two = (lane0 + lane1).astype(np.float32)
    frac = (ref.cast_bits(seq, "bf16") != ref.cast_bits(two, "bf16")).mean()
    assert 0.2 < frac < 0.4


def test_reduce_config_passes_the_lane():
    fam, cfg, spec, arch, text = _reduce("bf16_v4_t256_d0")
    o, st = _lane_run(fam, cfg, spec, arch, text)
    assert o.ok, o.problems
    assert st.cases == o.cases + st.order_cases and st.order_cases == 4 and st.modules == 1


def test_planted_reassoc_on_the_stage2_sums_is_refused():
    """The issue's planted edit at the text level: ``fadd reassoc nsz`` on the slab sums. opt
    vectorises the degree-0 tail loop into two partial sums (and a reassoc
    vector.reduce.fadd); the engines' module sums from slab 0 in order."""
    fam, cfg, spec, arch, text = _reduce("bf16_v4_t256_d0")
    planted = text.replace("= fadd <4 x float>", "= fadd reassoc nsz <4 x float>") \
        .replace("= fadd float", "= fadd reassoc nsz float")
    assert planted.count("reassoc") == 2
    opt, _ = O.optimise(planted, arch)
    assert "call reassoc nsz float @llvm.vector.reduce.fadd.v2f32" in opt
    # the promise check refuses the flag first, in the engines' module and in opt's output
    # (test_promises.py); test_order_cases_are_order_sensitive shows the order problems
    # would catch the reassociated sum on their own
    o, st = _lane_run(fam, cfg, spec, arch, planted)
    assert not o.ok
    assert any("fast-math flag reassoc on fadd" in p for p in o.problems), o.problems


def test_ci_sample_names_accepted_configs():
    """Every line of .ci/opt_sample.txt (the CI lane's `--only`) names an accepted llvm23
    config with a numerics plan, each once, and the sample has every family with a plan."""
    from pathlib import Path
    lines = [ln for ln in (Path(__file__).resolve().parents[1] / ".ci" / "opt_sample.txt").read_text().splitlines()
             if ln and not ln.startswith("#")]
    known = {f"{f}/{n}" for f, n, _, _ in N.accepted_configs()}
    assert len(lines) == len(set(lines)) > 40
    assert [ln for ln in lines if ln not in known] == []
    assert {ln.split("/")[0] for ln in lines} == set(N.PLANS)


def test_what_the_emulator_cannot_run_is_a_named_failure(monkeypatch):
    """An instruction outside the subset in opt's output fails the case with the line, not a skip."""
    fam, cfg, spec, arch, text = _reduce("bf16_v4_t256_d1")
    real = O.optimise

    def fake(t, a):
        out, cached = real(t, a)
        return out.replace("  ret void", "  %bad = call i32 @llvm.bitreverse.i32(i32 %M)\n  ret void", 1), cached
    monkeypatch.setattr(O, "optimise", fake)
    lane = O.Lane(N._Lowerer)
    case = REDUCE_PLAN.reduce_cases(spec, arch)[0]
    probs, _ = N.run_case(lane.wrap_case(case, N.run_case), N._Lowerer(), case.orders)
    assert len(probs) == 1 and probs[0].startswith(
        "optimised module (opt -O3): Unsupported: intrinsic llvm.bitreverse.i32 is not implemented by the emulator")

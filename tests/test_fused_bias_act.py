"""The fused bias + activation epilogues (bias_relu, bias_clamp: MIOpen -F 4 with
-m 3 / -m 7): the numpy reference composes bias then the activation, and the
emitted Stage 2 equals, bit for bit, "unfused split sum, then bias then the
activation in numpy, then RNE"."""
from __future__ import annotations

import numpy as np
import pytest

import python_engine as E
from parity.sim import numerics as N
from parity.sim.plans import conv_fwd_split_k_reduce as REDUCE_PLAN
from parity.sim import reference as ref
from parity.sim.numerics_fused import CALLER, ZERO_BOUNDS, epilogue_f32

ARCH = "gfx1250"


def test_epilogue_steps_compose_bias_then_the_activation():
    assert ref.epilogue_steps("identity") == ()
    assert ref.epilogue_steps("bias_relu") == ("bias", "relu")
    assert ref.epilogue_steps("bias_clamp") == ("bias", "clamp")
    assert ref.epilogue_has("bias_clamp", "bias") and not ref.epilogue_has("relu", "bias")
    for bad in ("gelu", "bias_gelu", "bias_bias", ""):
        with pytest.raises(ValueError, match="no accumulator epilogue"):
            ref.epilogue_steps(bad)


def test_epilogue_f32_is_bias_then_relu_or_clamp():
    s = np.array([-1.0, -0.25, 0.3, 2.0, np.nan, -np.inf], np.float32)
    ch = np.array([0, 1, 0, 1, 0, 1])
    bias = np.array([0.5, -0.5], np.float32)
    # bias first: -1 + 0.5 = -0.5 -> 0; -0.25 - 0.5 -> 0; 0.3 + 0.5 = 0.8; 2 - 0.5 = 1.5; NaN passes
    got = epilogue_f32("bias_relu", s, ch, bias)
    assert np.array_equal(got, np.array([0.0, 0.0, 0.8, 1.5, np.nan, 0.0], np.float32), equal_nan=True)
    # clamp to [-0.5, 0.5] after the bias (a clamp before it would give 1.0 and 0.0 at the ends)
    got = epilogue_f32("bias_clamp", s, ch, bias, {"clamp_lo": -0.5, "clamp_hi": 0.5})
    assert np.array_equal(got, np.array([-0.5, -0.5, 0.5, 0.5, np.nan, -0.5], np.float32), equal_nan=True)
    # a channel past the bias buffer reads 0 (a short bias_bytes)
    assert epilogue_f32("bias_relu", np.array([0.25], np.float32), np.array([2]), bias)[0] == np.float32(0.25)
    e, absum = ref.epilogue_f64("bias_clamp", np.array([[1.0, -3.0]]), bias, CALLER, np.array([[2.0, 2.0]]))
    assert e.tolist() == [[0.5, -0.5]] and absum.tolist() == [[2.0, 2.0]]


@pytest.mark.parametrize("acc", ["bias_relu", "bias_clamp"])
@pytest.mark.parametrize("degree", [0, 4])
def test_fused_stage2_is_the_unfused_sum_then_numpy_epilogue_then_rne(acc, degree):
    """Each reduce case's D, emulated through the runtime's packer, against an
    independent numpy model: the sequential fp32 sum of the slabs, + bias[k], then
    relu (x < 0 -> 0) or clamp to the caller's bounds, each step in float32, then
    round-to-nearest-even to bf16."""
    spec = {"dtype": "bf16", "vector": 4, "threads": 64, "degree": degree, "acc_epilogue": acc}
    cases = REDUCE_PLAN.reduce_cases(spec, ARCH)
    assert len(cases) >= 4
    changed = 0
    for case in cases:
        ws, bias = case.buffers["ws"], case.buffers["bias"]
        la = case.launches[0]
        # the launch's caller scalars: CALLER, or a zero-bound case's (numerics_fused.ZERO_BOUNDS)
        assert la.scalars in (CALLER, *ZERO_BOUNDS)
        lo, hi = np.float32(la.scalars["clamp_lo"]), np.float32(la.scalars["clamp_hi"])
        K, ks = la.args["K"], la.args["ks_count"]
        assert (la.variant, la.acc_epilogue, la.args["bias_bytes"]) == ("reduce", acc, bias.nbytes)
        s = ws[0].astype(np.float32)
        for j in range(1, ks):
            s = (s + ws[j]).astype(np.float32)
        padded = np.zeros(K, np.float32)
        padded[:bias.size] = bias
        x = (s + padded[np.arange(s.size) % K]).astype(np.float32)
        with np.errstate(invalid="ignore"):
            y = np.where(x < 0, np.float32(0), x) if acc == "bias_relu" else \
                np.where(np.where(x < lo, lo, x) > hi, hi, np.where(x < lo, lo, x))
        want = ref.ref_cast_bits(y.astype(np.float32), "bf16")
        changed += int((want != ref.ref_cast_bits(s, "bf16")).sum())

        def check(b, want=want):
            okm = ref.same_bits_16(b["d"], want, "bf16")
            return [] if okm.all() else [f"{case.name}: {int((~okm).sum())} of {okm.size} elements differ"]
        case.check = check
        probs, n = N.run_case(case, N._Lowerer())
        assert probs == [] and n > 0
    assert changed > 0   # the epilogue really changes D against the unfused sum


def test_both_engines_emit_bias_then_activation_once():
    import cpp_engine
    spec = {"dtype": "bf16", "vector": 2, "threads": 64, "degree": 2, "acc_epilogue": "bias_clamp"}
    text = E.lower("conv_fwd_split_k_reduce", spec, ARCH, "llvm23").text
    assert text == cpp_engine.lower("conv_fwd_split_k_reduce", spec, ARCH, "llvm23").text
    body = text.split("define ", 1)[1]
    # per path (vector, tail): one bias add, then the clamp's two selects on its result
    assert body.count("= fadd <2 x float> %acc") >= 1
    biased = [ln for ln in body.splitlines() if ln.startswith("  %biased") and " = fadd " in ln]
    clamps = [ln for ln in body.splitlines() if ln.startswith("  %clamp_l")]
    assert len(biased) == len(clamps) == 2
    assert all(c.split(", ")[-1].split()[-1].startswith("%biased") for c in clamps)

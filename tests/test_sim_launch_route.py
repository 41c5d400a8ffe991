"""The launch the hardware is given (issue 34 item 2), bit-exact checks (item 3)
and per-iteration loop coverage (item 5): parity/sim/launch_route.py and its use
in parity/sim/numerics.py."""
from __future__ import annotations

import numpy as np
import pytest

import python_engine as E
from parity.sim import reference as ref
from parity.launch import kernarg as KA
from parity.sim import checks as CK
from parity.sim import cover
from parity.sim import launch_route as LR
from parity.sim import numerics as N
from parity.sim.plans import conv_fwd_split_k_reduce as REDUCE_PLAN
from parity.sim.plans import conv_implicit_gemm as CONV_PLAN
from parity.sim.errors import SimError
from parity.sim.kernel import Kernel

ARCH, FL = "gfx1250", "llvm23"
VARIANT_SPECS = {"plain": {}, "two_stage": {"split_k": 2, "split_k_cluster": 0}, "cluster": {"split_k": 4, "split_k_cluster": 4},
                 "reduce": None}


def _module(variant):
    if variant == "reduce":
        return Kernel(E.lower("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 4, "threads": 256,
                                                          "degree": 0}, ARCH, FL).text).module
    return Kernel(E.lower("conv_implicit_gemm", VARIANT_SPECS[variant], ARCH, FL).text).module


@pytest.mark.parametrize("variant", list(VARIANT_SPECS))
def test_llvm_kernarg_layout_of_the_kernel_matches_the_runtime_packer(variant):
    """The two implementations of AMDGPUUsage's layout rule (the runtime's from the
    conv_abi list, the emulator's from the kernel's own parameters) agree slot by slot."""
    slots, size = KA.variant_layout(variant)
    got, gsize = LR.kernarg_layout(_module(variant))
    assert [(p.name, o, n) for p, o, n in got] == [(s.name, s.offset, s.size) for s in slots]
    assert gsize == size
    KA.check_against_metadata(slots, LR.code_object_args(_module(variant)), variant)


def test_kernarg_layout_of_compiled_code_object_matches():
    """Against LLVM itself: the ``.args`` of a compiled and linked code object."""
    from parity.runtime import codeobj
    try:
        codeobj.find_linker()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no AMDGPU linker: {exc}")
    lo = E.lower("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 4, "threads": 256, "degree": 0}, ARCH, FL)
    _, meta = codeobj.build_code_object(lo.text, lo.kernel, ARCH)
    explicit = [a for a in meta[".args"] if not str(a.get(".value_kind", "")).startswith("hidden_")]
    mine = LR.code_object_args(Kernel(lo.text).module)[".args"]
    assert [(a[".name"], a[".offset"], a[".size"]) for a in explicit] == \
        [(a[".name"], a[".offset"], a[".size"]) for a in mine]


def _reduce_case(M=7, K=9, ks=3):
    spec = {"dtype": "bf16", "vector": 4, "threads": 256, "degree": 0}
    return REDUCE_PLAN.reduce_cases(spec, ARCH)[0], spec


def test_reduce_case_runs_through_the_packer():
    case, _ = _reduce_case()
    assert case.launches[0].variant == "reduce"
    probs, n = N.run_case(case, N._Lowerer())
    assert probs == [] and n > 0


def test_abi_list_slip_is_refused_by_name_and_fails_by_numbers(monkeypatch):
    """conv_abi's reduce list with M and K swapped: the runtime's launch-time check
    against the kernel's .args (LLVM's layout of its own parameters) names it; a
    wrong value in the packed bytes makes D wrong (a numerics failure)."""
    from python_engine.kernels import conv_abi
    orig = conv_abi.args

    def swapped(variant, acc_epilogue="identity"):
        a = list(orig(variant, acc_epilogue))
        if variant == "reduce":
            i, j = [k for k, (n, _) in enumerate(a) if n in ("M", "K")]
            a[i], a[j] = a[j], a[i]
        return tuple(a)
    monkeypatch.setattr(conv_abi, "args", swapped)
    case = next(c for c in REDUCE_PLAN.reduce_cases({"dtype": "bf16", "vector": 4, "threads": 256, "degree": 0}, ARCH)
                if c.name == "M7_K9_ks2")
    with pytest.raises(LR.KernargError, match="the runtime refuses the launch: .*argument K is at offset"):
        N.run_case(case, N._Lowerer())
    # a slip the names cannot show (a value: ks_count 1 packed for 2 slabs) reaches the kernel from the bytes
    monkeypatch.setattr(conv_abi, "args", orig)
    bad = dict(case.launches[0].plan_args, ks_count=1)
    case.launches[0].plan_args = bad
    probs, _ = N.run_case(case, N._Lowerer())
    assert probs and "D[" in probs[0]


def test_pointer_that_names_no_buffer_is_an_error():
    m = _module("reduce")
    slots, size = KA.variant_layout("reduce")
    arena = LR.Arena({"ws": np.zeros(16, np.float32), "d": np.zeros(4, np.uint16)})
    vals = {"ws_ptr": arena.address["ws"] + 4, "ws_bytes": 64, "d_ptr": arena.address["d"], "d_bytes": 8,
            "M": 2, "K": 2, "ks_count": 1}
    blob = KA.Kernarg(slots, size, vals).bytes()
    with pytest.raises(LR.KernargError, match=r"pointer %ws_ptr at kernarg offset 0 is 0x[0-9a-f]+, the address "
                                              r"of no buffer"):
        LR.read_kernarg(m, blob, arena, np.zeros(0, np.uint8))
    vals["ws_ptr"] = 0
    got = LR.read_kernarg(m, KA.Kernarg(slots, size, vals).bytes(), arena, np.zeros(0, np.uint8))
    assert got["ws_ptr"].size == 0 and got["d_ptr"] is arena.views["d"] and (got["M"], got["K"]) == (2, 2)
    with pytest.raises(LR.KernargError, match="has 8 bytes, its explicit arguments take 48"):
        LR.read_kernarg(m, blob[:8], arena, np.zeros(0, np.uint8))


def test_guard_zone_write_is_named():
    arena = LR.Arena({"x": np.arange(10, dtype=np.uint16), "ws": np.zeros(8, np.float32)})
    arena.check_guards("nothing")
    start, n = arena.spans["ws"]
    assert arena.address["ws"] % LR.BUFFER_ALIGN == 0
    arena.data[start + n + 3] ^= 0xFF
    with pytest.raises(LR.GuardZoneWritten, match=r"launch: 1 guard byte\(s\) changed, first 3 bytes past the end "
                                                  r"of buffer 'ws' \(32 bytes"):
        arena.check_guards("launch")
    arena2 = LR.Arena({"x": np.arange(10, dtype=np.uint16)})
    arena2.data[arena2.spans["x"][0] - 1] ^= 1
    with pytest.raises(LR.GuardZoneWritten, match="1 bytes before buffer 'x'"):
        arena2.check_guards("launch")


def test_plan_cluster_must_match_the_kernel_attribute():
    spec = N._with_defaults("conv_implicit_gemm", {"split_k": 4, "split_k_cluster": 4})
    k = N._Lowerer().kernel("conv_implicit_gemm", spec, ARCH)
    la = N.Launch("conv", (1, 1, 4), 128, {}, variant="cluster", plan_cluster=(1, 1, 2))
    with pytest.raises(SimError, match=r"the runtime refuses the launch: .*built for cluster \(1, 1, 4\), but "
                                       r"cluster \(1, 1, 2\) was requested"):
        LR.routed_cluster(k, la.grid, la.plan_cluster)
    assert LR.routed_cluster(k, la.grid, (1, 1, 4)) == (1, 1, 4)


def test_plan_workspace_one_slab_short_is_named():
    plan = {"ks_count": 2, "workspace_bytes": 4 * 7 * 8, "args": {"M": "7", "K": "8", "ws_bytes": str(4 * 7 * 8)}}
    with pytest.raises(SimError, match=r"conv_launch plan: ws_bytes = 224, but the kernel writes ks_count 2 fp32 "
                                       r"slabs .* rule: ws_bytes = ks_count\*M\*K\*4"):
        CK.check_plan_bytes(plan)
    plan["args"]["ws_bytes"] = str(448)
    with pytest.raises(SimError, match="workspace_bytes = 224 is below ws_bytes = 448"):
        CK.check_plan_bytes(plan)


def test_exact_check_catches_truncation_the_tolerance_passes():
    rng = np.random.default_rng(0)
    x = cover.exact_values(rng, (1, 4, 4, 40), 360, "x")
    w = cover.exact_values(rng, (16, 3, 3, 40), 360, "w")
    e = ref.conv_fwd(x, w, padding=(1, 1))
    asum = ref.conv_abs_fwd(x, w, padding=(1, 1))
    tol = ref.conv_tolerance("bf16", 360, asum, e)
    rne = ref.ref_cast_bits(e.astype(np.float32).ravel(), "bf16")
    trunc = (e.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16).ravel()
    assert (rne != trunc).mean() > 0.3
    assert CK.exact_check("p", e, asum, "bf16")({"d": rne}) == []
    assert CK.tolerance_check(e, tol, "bf16")({"d": trunc}) == []   # inside numpy's tolerance...
    probs = CK.exact_check("p", e, asum, "bf16")({"d": trunc})      # ...not bit for bit
    assert probs and probs[0].startswith("bit-exact: D[") and "round-to-nearest-even" in probs[0]


def test_exact_values_are_exact_in_any_order():
    rng = np.random.default_rng(1)
    for kg in (9, 360, 3000, 70000):
        x = cover.exact_values(rng, (kg,), kg, "x").astype(np.float64)
        w = cover.exact_values(rng, (kg,), kg, "w").astype(np.float64)
        p = x * w
        assert np.abs(p).sum() * 2 ** 9 < 2 ** 22
        s32 = np.float32(0)
        for v in p[::-1]:
            s32 = np.float32(s32 + np.float32(v))
        assert float(s32) == p.sum()


def test_fold_model_check_sees_a_reversed_fold():
    rng = np.random.default_rng(2)
    ws = rng.standard_normal((3, 5 * 6)).astype(np.float32)
    ws[0, :] = 2.0 ** 20
    ws[1, :] = -2.0 ** 20
    plan = {"ks_count": 3, "args": {"M": "5", "K": "6"}}
    good = ref.ref_cast_bits(ref.split_k_sum(ws.reshape(3, 5, 6)).ravel(), "bf16")
    rev = ref.ref_cast_bits(ref.split_k_sum(ws[::-1].reshape(3, 5, 6)).ravel(), "bf16")
    chk = CK.fold_model_check(plan, "bf16", "d", "ws")
    assert chk({"d": good, "ws": ws.ravel()}) == []
    assert chk({"d": rev, "ws": ws.ravel()})[0].startswith("fold order: D[")


def test_deep_problems_are_deep_for_every_config():
    """Every conv config: the K-deep problems the plan admits give >= 3 K tiles per
    slice with the last slice shorter (numerics checks it per case), and at least
    one is admitted."""
    low = N._Lowerer()
    for fam, name, spec, arch in N.accepted_configs(["conv_implicit_gemm"]):
        fields = CONV_PLAN.C.FIELDS
        full = {f.name: v for f, v in zip(fields, (N._with_defaults(fam, spec)[f.name] for f in fields))}
        admitted = 0
        for p in cover.conv_deep_problems(full):
            pname, Nn, Cc, H, W, K, Y, X, st, pd, dl, G = p
            prob = dict(N=Nn, C=Cc, H=H, W=W, K=K, Y=Y, X=X, stride_h=1, stride_w=1, pad_h=pd[0], pad_w=pd[1],
                        dil_h=1, dil_w=1, groups=G)
            text, reason = low.launch_plan({**full, **prob, "degree": CONV_PLAN.conv_degree(full)}, arch)
            if reason:
                continue
            admitted += 1
            assert cover.deep_slicing_problem(full, CONV_PLAN.parse_launch_plan(text)) is None, (name, pname)
        assert admitted >= 2, name


def test_loop_coverage_per_iteration_class():
    text = E.lower("ir_core", {"kernel": "loop_phi"}, ARCH, FL).text
    k = Kernel(text, coverage=True)
    src = np.arange(5 * 256, dtype=np.float32)
    k.launch((1, 1, 1), 256, {"in": src, "out": np.zeros(256, np.float32), "n": 5})
    it = k.coverage.summary()["iterations"]
    # the loop's back-edge branch: taken on the first and middle trips, not on the last
    assert it["first"] == [1, 0, 1, 0] and it["middle"] == [1, 0, 1, 0] and it["last"] == [1, 0, 1, 0]
    (i,) = k.coverage.in_loop
    assert (k.coverage.by_class["first"][i], k.coverage.by_class["middle"][i], k.coverage.by_class["last"][i]) \
        == (1, 1, 2)

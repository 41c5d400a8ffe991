"""``parity run --split-k -1|0|N`` and ``--split-k-degrees`` as in the reference's
benchmark (docs/runtime.md): -1 launches the split-K binary at the policy's
resolved degree or skips the layer, 0 sweeps the listed degrees plus the
resolved one, N pins; every timed loop binds both stages once. Against the
fake HIP with a numpy "GPU" and a fake code object cache (no GPU, no linker)."""
from __future__ import annotations

import io

import pytest

from fake_hip import FakeHip
from runtime_helpers import FakeCache, NumpyGpu
from parity.runtime import cli

# Kgemm 288 < 512: the policy resolves to 1 (rule reduction), so -1 skips it.
SHORT = "convbfp16 -n 1 -c 32 -H 6 -W 6 -k 32 -y 3 -x 3 -p 1 -q 1".split()
# Kgemm 576 on one 64x64 tile: the policy resolves to 8 (rule slice: 18 K tiles of 32).
# Degrees 2 and 4 launch 2 and 4 slices (unrolled reduce d2, d4); degree 8 launches 6 (ks 96: reduce d0).
REDUCE = {2: "d2", 4: "d4", 8: "d0"}
SPLIT = "convbfp16 -n 1 -c 64 -H 7 -W 7 -k 64 -y 3 -x 3 -p 1 -q 1".split()
REPS, WARMUP = 3, 2


def _main(argv, hip=None):
    out = io.StringIO()
    rc = cli.main(argv, hip=hip, out=out)
    return rc, out.getvalue()


@pytest.fixture
def fake_cache(monkeypatch):
    import parity.runtime.cli as C
    cache = FakeCache()
    cache.manifest = None   # no AOT manifest (CodeObjectCache's attribute)
    monkeypatch.setattr(C, "CodeObjectCache", lambda *_a, **_k: cache)
    return cache


def test_policy_mode_skips_a_layer_the_policy_does_not_split(fake_cache):
    fake = FakeHip()
    rc, out = _main(SHORT + ["--split-k", "-1"], hip=fake)
    assert rc == 0
    assert "skip: the split-K policy does not split this layer (rule reduction: reduction Kgemm 288 is below " \
           "512)" in out
    assert fake.calls_of("hipModuleLaunchKernel") == [] and fake_cache.built == []


def test_policy_mode_runs_the_resolved_degree(fake_cache):
    _, _, runs, skip = cli.resolve_runs(SPLIT + ["--split-k", "-1"])
    assert skip is None and len(runs) == 1
    label, lp = runs[0]
    assert label == "degree 8 (resolved)" and lp.binary == "two_stage"
    assert lp.policy["rule"].startswith("slice:") and lp.launch_spec["degree"] == 8
    # ks = 96 (72 rounded up to tile_k 32) leaves 6 slices with data: the run-time-loop reduce kernel
    assert lp.plan["ks_count"] == 6 and lp.kernels[1][3] == "conv_fwd_split_k_reduce_bf16_v8_t256_d0"
    fake = FakeHip()
    fake.on_launch = NumpyGpu("bf16")
    rc, out = _main(SPLIT + ["--split-k", "-1", "-i", str(REPS), "--warmup", str(WARMUP)], hip=fake)
    assert rc == 0 and "verify: OK" in out and "policy: fold 1, degree 8 (slice:" in out


def _launches(fake, kernel):
    """The params addresses of every launch of ``kernel`` (in order)."""
    return [c[6] for c in fake.calls_of("hipModuleLaunchKernel") if c[0] == f"function:{kernel}"]


def test_sweep_times_each_degree_with_both_stages_bound_once(fake_cache):
    fake = FakeHip()
    gpu = NumpyGpu("bf16")
    fake.on_launch = gpu
    rc, out = _main(SPLIT + ["--split-k", "0", "--split-k-degrees", "4,2", "-i", str(REPS), "--warmup",
                             str(WARMUP)], hip=fake)
    assert rc == 0, out
    # the listed degrees plus the resolved 8, ascending, one timed loop each
    assert "sweep: 3 degrees: degree 2, degree 4, degree 8 (resolved)" in out
    assert out.count("verify: OK") == 3 and out.count("time: median 0.5000 ms over 3 launches") == 3
    assert "sweep: fastest degree 2: median 0.5000 ms (conv_implicit_gemm_" in out
    spk = "conv_implicit_gemm_bf16_64x64x32_w2x2_mem_default_va8_vb8_identity_spk"
    per_loop = 1 + WARMUP + REPS   # run (verify), warmup, timed
    first = _launches(fake, spk)
    assert len(first) == 3 * per_loop
    for i, d in enumerate((2, 4, 8)):
        loop = first[i * per_loop:(i + 1) * per_loop]
        assert len(set(loop)) == 1, f"degree {d}: Stage 1 re-bound inside its timed loop"
        red = _launches(fake, f"conv_fwd_split_k_reduce_bf16_v8_t256_{REDUCE[d]}")
        assert len(red) == per_loop and len(set(red)) == 1, f"degree {d}: Stage 2 re-bound"
    ks = [v for k, v, _, _ in gpu.launches if v == "two_stage"]
    assert len(ks) == 3 * per_loop


def test_sweep_build_only_builds_every_degree(fake_cache):
    rc, out = _main(SPLIT + ["--split-k", "0", "--split-k-degrees", "2,4,8", "--build-only"])
    assert rc == 0, out
    assert "sweep: 3 degrees: degree 2, degree 4, degree 8 (resolved, listed)" in out
    built = [k for k, _, _ in fake_cache.built]
    spk = "conv_implicit_gemm_bf16_64x64x32_w2x2_mem_default_va8_vb8_identity_spk"
    assert built.count(spk) == 3
    assert [k for k in built if k.startswith("conv_fwd")] == \
        [f"conv_fwd_split_k_reduce_bf16_v8_t256_{REDUCE[d]}" for d in (2, 4, 8)]
    assert out.count("code object: ") == 6


@pytest.mark.parametrize("mode,degrees", [("-1", None), ("3", None), ("auto", None), ("0", None)])
def test_build_only_works_for_every_mode(fake_cache, mode, degrees):
    rc, out = _main(SPLIT + ["--split-k", mode, "--build-only"])
    assert rc == 0, out
    assert "code object: " in out
    if mode == "0":   # the default list 2,4,8,16 plus the resolved 8
        assert "sweep: 4 degrees: degree 2, degree 4, degree 8 (resolved, listed), degree 16" in out


def test_pinned_degree_and_the_default_selection():
    _, _, runs, _ = cli.resolve_runs(SPLIT + ["--split-k", "4"])
    assert [(label, lp.launch_spec["degree"], lp.binary) for label, lp in runs] == [("degree 4", 4, "two_stage")]
    # the default (issue 37): --split-k -1, the reference policy's split-K binary at its resolved degree
    _, _, runs, skip = cli.resolve_runs(SPLIT)
    assert skip is None and [(label, lp.binary) for label, lp in runs] == [("degree 8 (resolved)", "two_stage")]
    # --split-k auto: --select seed (emit's default), rules (the perf model within the reference's rules), model
    _, _, runs, _ = cli.resolve_runs(SPLIT + ["--split-k", "auto"])
    assert runs[0][1].to_json()["policy"]["admitted_by"].startswith("seed: ")
    _, _, runs, _ = cli.resolve_runs(SPLIT + ["--split-k", "auto", "--select", "rules"])
    assert runs[0][1].to_json()["policy"]["admitted_by"].split(":")[0] in ("plain", "policy", "cluster offer")
    _, _, runs, _ = cli.resolve_runs(SPLIT + ["--split-k", "auto", "--select", "model"])
    assert runs[0][1].to_json()["policy"]["admitted_by"].startswith("model: ")

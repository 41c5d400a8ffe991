"""GPU tests: the conv kernels on a real gfx1250 through hip-python, numerics
against the numpy reference (parity/sim/reference.py) for the plain, two-stage
and cluster forms in bf16 and fp16, and an auto-degree spec (split_k = -1)
at the degree the split-K policy resolves. Without hip-python and a gfx1250
every test here skips, with the reason."""
from __future__ import annotations

import pytest

from runtime_helpers import GPU_FORMS
from parity.runtime import (CodeObjectCache, ConvRun, Hip, HipUnavailable, LaunchConfigError, Launcher,
                                   check_output, find_gfx1250, random_inputs)


def _gpu_reason():
    try:
        find_gfx1250(Hip())
    except HipUnavailable as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - any HIP failure while probing means "no usable GPU"
        return f"probing the GPU failed: {exc}"
    return None


REASON = _gpu_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"needs a gfx1250 GPU with hip-python: {REASON}")

FORMS = GPU_FORMS


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return CodeObjectCache(str(tmp_path_factory.mktemp("gpu-co")))


def _check(spec, cache, flavor="llvm23"):
    with ConvRun(spec, "gfx1250", flavor, cache=cache) as run:
        x, w, xb, wb = random_inputs(run.spec, seed=3)
        run.upload(xb, wb)
        run.run()
        ok, ratio, nbad = check_output(run.spec, x, w, run.download())
        assert ok, f"{run.plan.kernel}: {nbad} elements out of tolerance (max error/tol {ratio:.3g})"
        t = run.time(reps=5, warmup=1)
        assert t.median_ms > 0
        return run


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_numerics(form, dtype, cache):
    run = _check(dict(FORMS[form], dtype=dtype), cache)
    assert run.plan.needs_stage2 == form.startswith("two_stage")


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_auto_degree_spec(dtype, cache):
    spec = dict(N=1, C=512, H=7, W=7, K=512, Y=3, X=3, pad_h=1, pad_w=1, split_k=-1, split_k_cluster=0, dtype=dtype)
    run = _check(spec, cache)
    assert run.spec["split_k"] != -1 and run.plan.degree == run.spec["degree"]


def test_cluster_kernel_refuses_a_plain_launcher(cache):
    with ConvRun(FORMS["cluster_s4"], "gfx1250", "llvm23", cache=cache) as run:
        p = run.plan
        with pytest.raises(LaunchConfigError, match="cluster barrier synchronising nothing"):
            Launcher(run._kernels[0], p.variant, p.grid, p.block, None)

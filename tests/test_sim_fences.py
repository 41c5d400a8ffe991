"""The emulator's memory-visibility model (docs/sim.md): a write by one wave
is visible to another wave of the workgroup only through a release fence of
workgroup scope (or wider), a barrier, and an acquire fence of that scope in
the reader; across the workgroups of a cluster the same with cluster scope and
the cluster barrier. Deleting any of the fences the engines emit around
``s.barrier`` / ``s.cluster.barrier`` (conv K loop and cshuffle LDS path,
cluster fold, ir_core lds_barrier) is a VisibilityError naming the address,
both parties and the missing fence; the unmodified kernels pass."""
from __future__ import annotations

import numpy as np
import pytest

import python_engine.api as api
from parity.sim import numerics as N
from parity.sim import Kernel
from parity.sim.errors import VisibilityError
from parity.sim.ir import ParseError

ARCH = "gfx1250"


def _fence_lines(text: str, scope: str, ordering: str) -> list:
    """Lines of the fences of ``scope`` and ``ordering``, LDS-only (``, !mmra``) ones included."""
    want = f'fence syncscope("{scope}") {ordering}'
    return [i for i, ln in enumerate(text.split("\n")) if ln.strip() == want or ln.strip().startswith(want + ", !mmra ")]


def _delete_line(text: str, index: int) -> str:
    lines = text.split("\n")
    del lines[index]
    return "\n".join(lines)


class _EditLowerer(N._Lowerer):
    """Lowers every kernel of ``family`` (through the engine API, validated)
    with ``edit(text)`` applied."""

    def __init__(self, family: str, edit):
        super().__init__("python")
        self.family, self.edit = family, edit

    def kernel(self, family, spec, arch, flavor="llvm23"):
        if family != self.family:
            return super().kernel(family, spec, arch, flavor)
        key = ("edited", family, repr(sorted(spec.items())), arch, flavor)
        if key not in self.kernels:
            self.kernels[key] = Kernel(self.edit(api.lower(family, spec, arch, flavor).text))
        return self.kernels[key]


def _run(family, spec, edit=lambda t: t, first_failure=False):
    """The config's numerics plan on the (edited) kernel; ``first_failure``: stop at the first
    failing case (as ``parity mutate`` does) when the assertions are about that failure and
    the later cases only repeat it."""
    return N.run_config(family, "fences", spec, ARCH, _EditLowerer(family, edit), first_failure=first_failure)


def _expect_missing(o, scope: str, ordering: str, where: str):
    assert not o.ok
    msg = "\n".join(o.problems)
    assert "VisibilityError" in msg, msg
    assert f'missing `fence syncscope("{scope}") {ordering}`' in msg, msg
    assert "byte offset" in msg and where in msg and msg.count("wave") >= 2, msg


# -- the kernels as emitted pass -------------------------------------------------------------

UNMODIFIED = [
    ("conv_implicit_gemm", {"epilogue": "cshuffle"}),
    ("conv_implicit_gemm", {"pipeline": "wavelet", "num_load_waves": 1}),
    ("conv_implicit_gemm", {"split_k": 4, "split_k_cluster": 4}),
    ("conv_implicit_gemm", {"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle"}),
    ("ir_core", {"kernel": "lds_barrier", "threads": 64}),
    ("ir_core", {"kernel": "lds_barrier", "threads": 64, "cluster": 4}),
]


#: the cases the unmodified kernels run here: the plan's three base problems (K walk, every
#: epilogue path of a small problem), a tap-loop problem, a partial M tile, and a cluster's
#: empty trailing slice. The numerics lane (`parity numerics`, CI) runs every case of every
#: config with the same race and visibility shadow on (numerics.py: ``shadow`` defaults to
#: True), so the whole plan here only repeated it (44 s of the cluster kernel's 45).
FENCE_CASES = ("pad_stride", "dil_groups", "one_by_one", "cover_taps", "cover_narrow", "cl4_1x1_empty_tail",
               "reverse")


@pytest.mark.parametrize("family,spec", UNMODIFIED, ids=lambda v: v if isinstance(v, str) else repr(v))
def test_unmodified_kernels_pass(family, spec):
    ran = []

    def fence_cases(cases):
        kept = [c for c in cases if getattr(c, "name", "").split("_ks")[0] in FENCE_CASES]
        ran.extend(c.name.split("_ks")[0] for c in kept)
        return kept
    o = N.run_config(family, "fences", spec, ARCH, _EditLowerer(family, lambda t: t), order=fence_cases)
    assert o.ok and o.cases == len(ran), o.problems
    want = {"reverse"} if family == "ir_core" else {"pad_stride", "dil_groups", "one_by_one", "cover_narrow"} | (
        {"cl4_1x1_empty_tail"} if spec.get("split_k_cluster") else set())
    assert want <= set(ran), ran


# -- ir_core lds_barrier ---------------------------------------------------------------------

@pytest.mark.parametrize("ordering", ["release", "acquire"])
def test_ir_core_lds_barrier_missing_fence(ordering):
    text = api.lower("ir_core", {"kernel": "lds_barrier", "threads": 64}, ARCH, "llvm23").text
    (i,) = _fence_lines(text, "workgroup", ordering)
    k = Kernel(_delete_line(text, i))
    with pytest.raises(VisibilityError) as e:
        k.launch((1, 1, 1), 64, {"in": np.zeros(64, np.float32), "out": np.zeros(64, np.float32)})
    msg = str(e.value)
    assert f'missing `fence syncscope("workgroup") {ordering}`' in msg
    assert "LDS 'lds_buf'" in msg and "byte offset" in msg and "%y" in msg
    assert "wave 0" in msg and "wave 1" in msg


# -- conv: K-loop barriers and the cshuffle LDS path ----------------------------------------

CSHUFFLE = {"epilogue": "cshuffle"}


def test_conv_cshuffle_has_ten_workgroup_barriers():
    text = api.lower("conv_implicit_gemm", CSHUFFLE, ARCH, "llvm23").text
    # in text order: the two halves of the K walk's pipelined loop (LDS-only fences), the
    # cshuffle epilogue, the uniform-tap prologue, the two halves of the uniform-tap loop
    # (LDS-only), the K walk's prologue (block kwalk, after the tap-tile gate), the tap-tile
    # prologue, the two halves of the tap-tile loop (LDS-only): each release / s.barrier /
    # acquire
    for ordering in ("release", "acquire"):
        lines = [text.split("\n")[i].strip() for i in _fence_lines(text, "workgroup", ordering)]
        assert [ln.endswith(", !mmra !1") for ln in lines] == [True, True, False, False, True, True, False, False,
                                                                True, True]
    assert '!1 = !{!"amdgpu-synchronize-as", !"local"}' in text.split("\n")


@pytest.mark.parametrize("ordering", ["release", "acquire"])
@pytest.mark.parametrize("which,spec", [(6, CSHUFFLE), (0, CSHUFFLE), (1, CSHUFFLE), (2, CSHUFFLE),
                                        (3, CSHUFFLE), (4, CSHUFFLE), (5, CSHUFFLE),
                                        (7, CSHUFFLE), (8, CSHUFFLE), (9, CSHUFFLE),
                                        (1, {"pipeline": "wavelet", "num_load_waves": 1}),
                                        (1, {"tile_m": 128, "tile_n": 128, "tile_k": 64})],
                         ids=["prologue", "kloop", "kloop_odd", "cshuffle", "tap_prologue", "tap_loop",
                              "tap_loop_odd", "taptile_prologue", "taptile_loop", "taptile_loop_odd",
                              "kloop_wavelet", "kloop_double_buffer"])
def test_conv_missing_workgroup_fence(which, spec, ordering):
    def edit(t):
        return _delete_line(t, _fence_lines(t, "workgroup", ordering)[which])
    # the first failing case already names the missing workgroup fence (every case of the plan
    # runs the edited K loop); 7-17 s per test at load 12 without first_failure, 2-6 s with it
    o = _run("conv_implicit_gemm", spec, edit, first_failure=True)
    _expect_missing(o, "workgroup", ordering, "LDS")


def test_conv_lds_only_fence_must_name_a_local_node():
    text = api.lower("conv_implicit_gemm", CSHUFFLE, ARCH, "llvm23").text
    bad = text.replace('!1 = !{!"amdgpu-synchronize-as", !"local"}', '!1 = !{!"amdgpu-synchronize-as", !"global"}')
    with pytest.raises(ParseError, match="fence annotation !1 is not an amdgpu-synchronize-as"):
        Kernel(bad)


# -- conv cluster fold ---------------------------------------------------------------------

@pytest.mark.parametrize("epilogue", ["default", "cshuffle"])
@pytest.mark.parametrize("ordering", ["release", "acquire"])
def test_conv_cluster_missing_cluster_fence(ordering, epilogue):
    spec = {"split_k": 4, "split_k_cluster": 4, "epilogue": epilogue}

    def edit(t):
        (i,) = _fence_lines(t, "cluster", ordering)
        return _delete_line(t, i)
    o = _run("conv_implicit_gemm", spec, edit)
    _expect_missing(o, "cluster", ordering, "global 'ws_ptr'")
    assert "s.cluster.barrier" in "\n".join(o.problems)

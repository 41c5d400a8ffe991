"""The numerics oracle catches broken split-K forward kernels (issue 7): a slice
that skips its first K tile, and an accumulator epilogue applied per slice
instead of once after the sum. Each kernel is built broken in the test and run
through the conv numerics plan (Stage 1, then the reduce kernel)."""
from __future__ import annotations

import re

import pytest

from parity.sim import numerics as N
from parity.sim import Kernel
from python_engine.ir.printer import print_module
from python_engine.ir.values import i32
from python_engine.kernels import conv_implicit_gemm as C
from python_engine.kernels.conv_implicit_gemm import emitter as CIG_emitter
from python_engine.kernels.conv_implicit_gemm.lds import STORE_KEY
from python_engine.kernels import conv_launch as CL
from python_engine.families import conv_launch as CLF
from python_engine.spec.fields import normalize
from python_engine.targets.arch import find_arch
from python_engine.targets.flavors import find_flavor


class _BrokenLowerer(N._Lowerer):
    """Lowers conv_implicit_gemm with ``edit(text)`` applied (others unchanged),
    bypassing validation so a spec the engines reject can be built broken."""

    def __init__(self, edit=lambda t: t):
        super().__init__("python")
        self.edit = edit

    def kernel(self, family, spec, arch, flavor="llvm23"):
        if family != "conv_implicit_gemm":
            return super().kernel(family, spec, arch, flavor)
        s = normalize(C.FAMILY, C.FIELDS, spec)
        _, m = C.build(s, find_arch(arch), find_flavor(flavor))
        return Kernel(self.edit(print_module(m)))

    def launch_plan(self, spec, arch, flavor="llvm23"):
        """The conv_launch plan, with the binary's own rule set aside when the
        engines reject the binary (as :meth:`kernel` sets aside validation)."""
        ar, fl = find_arch(arch), find_flavor(flavor)
        s = normalize(CLF.FAMILY, CLF.FIELDS, spec)
        if C.validate({n: s[n] for n in CL.SPEC_FIELDS}, ar, fl) is None:
            return super().launch_plan(spec, arch, flavor)
        return CL.plan_text(s, ar, fl), None


def _spec(**kw):
    full = {f.name: f.default for f in C.FIELDS}
    full.update(kw)
    return full


def _skip_first_tile(text: str) -> str:
    """k_begin = slice*ks + 32: every slice starts one K tile late."""
    pat = re.compile(r"^(\s*)(%k_begin\d+) = mul i32 (%slice\d+), %ks$", re.M)
    assert len(pat.findall(text)) == 1, "the two-stage kernel computes k_begin once"
    return pat.sub(r"\1%k_skip = mul i32 \3, %ks\n\1\2 = add i32 %k_skip, 32", text)


def test_correct_two_stage_kernel_passes():
    """The control: the same plan, unbroken, passes on the cases the broken kernels fail
    first (its first three; the numerics lane runs every case of the config)."""
    o = N.run_config("conv_implicit_gemm", "spk2", _spec(split_k=2), "gfx1250", _BrokenLowerer(),
                     order=lambda cs: cs[:3])
    assert o.ok and o.cases == 3, o.problems


def test_slice_skipping_its_first_k_tile_is_caught():
    o = N.run_config("conv_implicit_gemm", "spk2_skip", _spec(split_k=2), "gfx1250",
                     _BrokenLowerer(_skip_first_tile), first_failure=True)
    assert not o.ok
    assert any("outside the tolerance" in p for p in o.problems), o.problems


@pytest.mark.parametrize("acc", ["relu", "scale"])
def test_epilogue_applied_per_slice_is_caught(monkeypatch, acc):
    """Stage 1 applies the accumulator epilogue to each partial slab as well
    (fused split-K applies it once, in Stage 2): relu(sum(relu(partial))) !=
    relu(sum), and the scale is applied twice. (Stage 1 of a bias layer builds
    no bias resource, so the bias form is the fused numerics' planted mutation,
    docs/families.md.)"""
    kernel_cls = CIG_emitter.Kernel

    def out_elem_per_slice(self, x, m, n, ok, width):
        if self.split:
            kn = self.b.add(self.kbase, n, "epi_ch")
            x = self.acc_epi(x, kn, width)
            off = self.ws_offset(self.slice, m, n, ok, "ws")
            self.b.call(STORE_KEY[4 * width], [x, self.rws, off, i32(0), i32(0)])
        else:
            kernel_cls.out_elem.__wrapped__(self, x, m, n, ok, width)

    out_elem_per_slice.__wrapped__ = kernel_cls.out_elem
    monkeypatch.setattr(kernel_cls, "out_elem", out_elem_per_slice)
    # stop at the first failing case (as parity mutate does): it already shows the tolerance miss
    o = N.run_config("conv_implicit_gemm", f"spk2_{acc}_per_slice", _spec(split_k=2, acc_epilogue=acc),
                     "gfx1250", _BrokenLowerer(), first_failure=True)
    assert not o.ok
    assert any("outside the tolerance" in p for p in o.problems), o.problems

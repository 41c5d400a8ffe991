"""bench/sim.py's base fallback: the text the base emulator (24d40b6) runs has the
no-op barrier / s.wait.loadcnt calls and the fences' ``!mmra`` attachments removed, and nothing else."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import sim as bench_sim  # noqa: E402


def test_strip_removes_noop_barriers_and_mmra_attachments_only():
    text = ("  fence syncscope(\"workgroup\") release, !mmra !1\n"
            "  call void @llvm.amdgcn.wave.barrier()\n"
            "  call void @llvm.amdgcn.sched.barrier(i32 0)\n"
            "  call void @llvm.amdgcn.s.wait.loadcnt(i16 0)\n"
            "  %x = add i32 %a, 1\n"
            "!1 = !{!\"amdgpu-synchronize-as\", !\"local\"}")
    assert bench_sim._strip_noops(text) == ("  fence syncscope(\"workgroup\") release\n"
                                           "  %x = add i32 %a, 1\n"
                                           "!1 = !{!\"amdgpu-synchronize-as\", !\"local\"}\n")


def test_stripped_conv_text_still_decodes_and_keeps_its_fences():
    from parity.sim import Kernel
    import python_engine.api as api
    text = api.lower("conv_implicit_gemm", {}, "gfx1250", "llvm23").text
    stripped = bench_sim._strip_noops(text)
    assert "!mmra !" not in stripped
    assert stripped.count("fence syncscope") == text.count("fence syncscope") > 0
    Kernel(stripped)

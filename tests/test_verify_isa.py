"""ISA report and gate: metadata reading, occupancy rules, LDS and cluster
checks, crash isolation of the compile workers, and the shipped ir_core
family verified at every flavor."""
from __future__ import annotations

import pytest

from parity.config import Config, load_families
from verify_helpers import need_llvmlite

need_llvmlite()

from parity.verify.compile_worker import CompileWorkers  # noqa: E402
from parity.verify.isa_report import (build_report, kernel_body, kernel_metadata,  # noqa: E402
                                      occupancy_gfx1250)
from parity.verify.verify import UnitResult, gate_isa, run_verify  # noqa: E402

import python_engine as E  # noqa: E402


@pytest.fixture(scope="module")
def cluster_asm():
    r = E.lower("ir_core", {"kernel": "lds_barrier", "cluster": 4}, "gfx1250", "llvm23")
    [a] = CompileWorkers(workers=1).run([{"kind": "compile", "text": r.text, "kernel": r.kernel,
                                          "arch": "gfx1250", "keep_asm": True}])
    assert a["ok"], a
    return r, a


def test_metadata_values_read(cluster_asm):
    """The kernel's ``amdhsa.kernels`` entry as PyYAML reads it from the assembly."""
    r, a = cluster_asm
    md = kernel_metadata(a["asm"], r.kernel)
    assert md[".name"] == r.kernel and md[".symbol"] == r.kernel + ".kd"
    assert md[".cluster_dims"] == [1, 1, 4] and md[".max_flat_workgroup_size"] == 256
    assert md[".group_segment_fixed_size"] == 1024 and md[".private_segment_fixed_size"] == 0
    assert md[".vgpr_spill_count"] == md[".sgpr_spill_count"] == 0 and md[".wavefront_size"] == 32
    assert md[".uses_dynamic_stack"] is False
    assert isinstance(md[".vgpr_count"], int) and isinstance(md[".sgpr_count"], int)
    args = md[".args"]  # the list of argument maps, as the code object's note holds it
    assert [(x[".name"], x[".offset"], x[".size"], x[".value_kind"]) for x in args[:2]] == [
        ("in", 0, 8, "global_buffer"), ("out", 8, 8, "global_buffer")]
    assert all(x[".value_kind"].startswith("hidden_") for x in args[2:])
    assert md[".kernarg_segment_size"] >= args[-1][".offset"] + args[-1][".size"]
    assert kernel_metadata(a["asm"], "no_such_kernel") is None
    assert kernel_metadata("\ts_endpgm\n", r.kernel) is None


def test_unreadable_metadata_is_a_report_problem():
    asm = "\t.amdgpu_metadata\n---\namdhsa.kernels: [\n\t.end_amdgpu_metadata\n"
    rep = build_report(asm, "k", "gfx1250")
    assert rep.vgprs is None and rep.problems[0].startswith("the .amdgpu_metadata block is not valid YAML")


def test_report_fields(cluster_asm):
    r, a = cluster_asm
    rep = a["report"]
    assert rep["kernel"] == r.kernel and rep["cluster_dims"] == [1, 1, 4]
    assert rep["lds_bytes"] == 1024 and rep["vgpr_spills"] == 0 and rep["scratch_bytes"] == 0
    assert rep["occupancy_source"] == "llvm" and rep["occupancy"] == rep["occupancy_computed"]
    assert rep["instructions"] > 5 and a["elf"] and rep["object_bytes"] > 0


def test_kernel_body_counts_instructions_only():
    asm = ("\t.text\nk:\n; %bb.0:\n\ts_load_b64 s[0:1], s[4:5], 0x0 ; comment\n.LBB0_1:\n"
           "\tv_wmma_f32_16x16x32_bf16 v[0:7], v[8:15], v[16:23], v[0:7]\n\t.p2align 2\n\ts_endpgm\n"
           ".Lfunc_end0:\n\tv_nop\n")
    body = kernel_body(asm, "k")
    assert body == ["s_load_b64 s[0:1], s[4:5], 0x0",
                    "v_wmma_f32_16x16x32_bf16 v[0:7], v[8:15], v[16:23], v[0:7]", "s_endpgm"]
    assert build_report(asm, "k", "gfx1250").wmma == 1


@pytest.mark.parametrize("vgprs,lds,wg,want", [
    (2, 0, 256, 16), (71, 0, 256, 12), (101, 0, 256, 9), (261, 0, 256, 3), (512, 0, 256, 2),
    (6, 0, 64, 8), (6, 0, 96, 12), (6, 0, 160, 15), (6, 65536, 256, 10), (6, 100000, 64, 2),
])
def test_occupancy_rules_gfx1250(vgprs, lds, wg, want):
    # values are LLVM 22.1's own "; Occupancy:" for such kernels
    assert occupancy_gfx1250(vgprs, lds, wg) == want


def _unit():
    return UnitResult("f", "c", "llvm23", "gfx1250")


ARCH = {"name": "gfx1250", "lds_bytes": 327680}
CLEAN = {"vgpr_spills": 0, "sgpr_spills": 0, "scratch_bytes": 0, "lds_bytes": 0, "cluster_dims": None}


def test_gate_lds_above_arch_limit():
    u = _unit()
    gate_isa(u, dict(CLEAN, lds_bytes=327681), "", Config("c", arch="gfx1250"), ARCH)
    assert u.errors == ["LDS 327681 bytes exceeds the gfx1250 limit of 327680 bytes"]


def test_gate_cluster_dims_both_ways():
    attr = 'attributes #0 = { "amdgpu-cluster-dims"="1,1,4" }'
    u = _unit()
    gate_isa(u, dict(CLEAN), attr, Config("c", arch="gfx1250"), ARCH)
    assert "has no .cluster_dims" in u.errors[0]
    u = _unit()
    gate_isa(u, dict(CLEAN, cluster_dims=[1, 1, 4]), "", Config("c", arch="gfx1250"), ARCH)
    assert "but the kernel has no amdgpu-cluster-dims" in u.errors[0]
    u = _unit()
    gate_isa(u, dict(CLEAN, cluster_dims=[1, 1, 2]), attr, Config("c", arch="gfx1250"), ARCH)
    assert "differs" in u.errors[0]
    u = _unit()
    gate_isa(u, dict(CLEAN, cluster_dims=[1, 1, 4]), attr, Config("c", arch="gfx1250"), ARCH)
    assert u.errors == []


def test_worker_abort_is_reported_with_stderr_and_next_job_runs():
    cw = CompileWorkers(workers=1, timeout=60)
    a, b = cw.run([{"kind": "selftest", "action": "abort"}, {"kind": "selftest"}])
    assert not a["ok"] and a["crashed"] and "SIGABRT" in a["error"] and "selftest abort" in a["error"]
    assert b == {"ok": True}
    assert cw.restarts == 1


def test_allow_spill_must_be_str():
    from parity.config import ConfigError
    with pytest.raises(ConfigError):
        Config("c", arch="gfx1250", allow_spill=True)
    assert Config("c", arch="gfx1250").allow_spill == ""


def test_ir_core_verifies_at_every_flavor():
    [fam] = load_families(only=["ir_core"])
    rep = run_verify([fam], workers=2)
    fails = [(r.key, r.errors) for r in rep.failures()]
    assert not fails and not rep.intrinsic_problems
    compiled = [r for r in rep.results if r.isa is not None]
    assert compiled and {r.flavor for r in compiled} == {"llvm22", "llvm23"}
    for r in compiled:
        isa = r.isa
        if isa["occupancy_computed"] is not None:
            assert isa["occupancy"] == isa["occupancy_computed"], r.key
        assert (isa["cluster_dims"] is not None) == ("cluster" in r.config), r.key
    assert any(r.isa["cluster_dims"] for r in compiled)

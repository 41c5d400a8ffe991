"""Boundary coverage (parity/sim/coverage.py: ordered compares whose operands were
equal), the boundary problems of parity/sim/cover.py that reach every epilogue row
mask's last row, the epilogue mask mutants they kill, the argued equivalences of
the conv masks, and ``parity mutate --max-mutants`` (docs/sim.md)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import python_engine.api as api
from parity.app.main import main as parity_main
from parity.mutate import operators as OPS
from parity.mutate import argued as AR
from parity.mutate import run as R
from parity.sim import Kernel
from parity.sim import cover
from parity.sim import numerics as N

ARCH = "gfx1250"
CONV = "conv_implicit_gemm"

_CMP = """define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %n) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %lt = icmp ult i32 %tid, %n
  %same = icmp eq i32 %tid, %n
  %v = select i1 %lt, i32 1, i32 0
  %w = select i1 %same, i32 2, i32 %v
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %tid
  store i32 %w, ptr addrspace(1) %p, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="32,32" }
"""


def test_boundary_coverage_records_equal_operands_of_ordered_compares_only():
    k = Kernel(_CMP, coverage=True)
    out = np.zeros(32, np.int32)
    k.launch((1, 1, 1), 32, {"out": out, "n": 40})  # tid < 40 in every lane: never equal
    s = k.coverage.summary()
    assert s["boundary"] == [1, 0]  # the ult, not the eq
    assert len(s["boundary_missing"]) == 1 and s["boundary_missing"][0][1][0] == "lt"
    assert k.coverage.boundary_of("lt") == (1, 0)
    k.launch((1, 1, 1), 32, {"out": out, "n": 7})  # lane 7: tid == n
    assert k.coverage.summary()["boundary"] == [1, 1] and k.coverage.boundary_of("lt") == (1, 1)
    assert list(out[:9]) == [1] * 7 + [2, 0]
    k.coverage.reset()
    assert k.coverage.summary()["boundary"] == [1, 0]
    assert Kernel(_CMP).coverage is None  # off: nothing wrapped


def test_boundary_phases_cover_every_row_compare_class():
    full = N._with_defaults(CONV, {"split_k": 2, "split_k_cluster": 0})
    ph = cover.boundary_phases(full)  # default 64x64, 2x2 waves: a wave's 32 rows, lanes hold 8h + e
    assert len(ph) == 16 and all(1 <= r < 64 for r, _ in ph)
    assert sorted({(r % 32) & ~8 for r, _ in ph}) == [b * 16 + e for b in (0, 1) for e in range(8)]
    assert all(k % 2 == 1 and k > 64 - 16 for _, k in ph)  # odd K (per-element stores), every N block
    cs = cover.boundary_phases(N._with_defaults(CONV, {"split_k": 2, "split_k_cluster": 0, "epilogue": "cshuffle"}))
    assert [r for r, _ in cs] == [7, 14, 21, 28, 35, 42, 49, 56]  # one per 8-row store slot
    assert all(k % 4 == 0 for _, k in cs)
    names = [p[0] for p in cover.conv_cover_problems(full)]
    assert names.count("cover_pad_images") == 1 and sum(n.startswith("cover_bound_m") for n in names) == 16
    assert not any(n.startswith("cover_bound") for n in (p[0] for p in cover.conv_cover_problems(
        N._with_defaults(CONV, {}))))  # plain: the row M store lies past D's num_records


def _config(name):
    return next((f, n, s, a) for f, n, s, a in N.accepted_configs([CONV]) if n == name)


def _job(name, hint, nth=0):
    fam, cfg, spec, arch = _config(name)
    full = N._with_defaults(fam, spec)
    text = api.lower(fam, full, arch, "llvm23").text
    lines = text.split("\n")
    sites = [s for s in OPS.sites(text, "cmp_boundary") if AR._hint_of(lines[s[0]]) == hint]
    return R.Job(fam, cfg, full, arch, text, OPS.apply(text, "cmp_boundary", sites[nth]))


@pytest.mark.parametrize("name,hint,nth", [
    ("spk2_mem_default_64x64_bf16", "e_mok", 5),       # a per-element row mask: row phase 17 of 64
    ("spk2_mem_default_64x64_bf16", "e_mok", 12),      # the second N block's, element 7
    ("spk8_mem_cshuffle_64x64_bf16", "cs_mok", 1)])    # a cshuffle store slot's (rows 8..15)
def test_epilogue_row_mask_one_long_is_killed_by_a_boundary_problem(name, hint, nth):
    job = _job(name, hint, nth)
    assert " ule " in AR._line(job.mutant.text, job.mutant.line)
    v = R.judge(job)
    assert v.status == "killed" and v.oracle == "numerics", v
    # the first problem whose M leaves a partial row tile kills it: tall_dil_pad (issue 34's K-deep
    # problem, listed before the cover problems) or a cover_bound_m problem
    assert v.reason.startswith(("tall_dil_pad", "cover_bound_m")) and "RaceError" in v.reason and "ws_ptr" in v.reason


def test_every_epilogue_row_compare_reaches_its_boundary():
    fam, cfg, spec, arch = _config("spk2_mem_default_64x64_bf16")
    lw = N._Lowerer(coverage=True)
    o = N.run_config(fam, cfg, spec, arch, lw)
    assert o.ok, o.problems
    cov = lw.kernel(fam, N._with_defaults(fam, spec), arch).coverage
    assert cov.boundary_of("e_mok") == (36, 36) and cov.boundary_of("e_nok") == (12, 12)


def test_argued_conv_mask_equivalences():
    assert AR._d_row_past_end(_job("defaults", "e_mok", 3))           # plain: D's num_records
    assert not AR._d_row_past_end(_job("spk2_mem_default_64x64_bf16", "e_mok", 3))  # two-stage: a slab
    assert AR._unstored_accumulator(_job("defaults", "b_nok"))
    assert AR._zero_k_limit(_job("defaults", "b_kin"))
    assert AR._masked_partner(_job("defaults", "a_rok"))
    assert not AR._masked_partner(_job("defaults", "a_hok"))  # a padding tap: killed by cover_pad_images


def test_max_mutants_judges_the_first_n_of_the_seeded_order(tmp_path, capsys):
    out = tmp_path / "m.json"
    rc = parity_main(["mutate", "--only", "conv_fwd_split_k_reduce/bf16_v2_t64_d4", "--per-kind", "1",
                      "--kinds", "select_swap,gep_index,align_double,cmp_negate", "--max-mutants", "2",
                      "-j", "1", "--json", str(out)])
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert rc == 0, text
    assert doc["planned"] == 4 and doc["mutants"] == 2 and doc["max_mutants"] == 2 and doc["killed"] == 2
    assert "the first 2 judged" in text and "2 of 4 mutants judged" in text
    with pytest.raises(SystemExit) as e:
        parity_main(["mutate", "--max-mutants", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and "--max-mutants must be at least 1, got 0" in err[0], err

"""``parity mutate --only ir_core`` (findings2 item 14): only what an oracle judges is planned
(no ``kernarg:NAME`` slip where the numerics plan passes arguments by name), the launch's
cluster is the config's, and the remaining survivors are argued (docs/sim.md, "Mutation
lane": *ir_core*)."""
from __future__ import annotations

import json

from parity.app.main import main as parity_main
from parity.mutate import lies as LIES
from parity.mutate import run as R
from parity.sim import numerics as N


def _run(capsys, *argv):
    rc = parity_main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_kernarg_routed_families_are_the_plans_that_route():
    # KERNARG_ROUTED must say which plans launch through the runtime's kernarg route
    lw = N._Lowerer()
    for fam in N.PLANS:
        cfg = next(c for c in N.accepted_configs([fam]) if c[0] == fam)
        cases = N.PLANS[fam].cases(N._with_defaults(fam, cfg[2]), cfg[3], lw)
        routed = any(la.variant is not None for c in cases if hasattr(c, "launches") for la in c.launches)
        assert routed == (fam in LIES.KERNARG_ROUTED), (fam, cfg[1])
    assert set(LIES.KERNARG_ROUTED) == {"conv_fwd_split_k_reduce", "conv_implicit_gemm"}


def test_ir_core_plans_no_kernarg_slip_but_the_reduce_does():
    ir = [c for c in N.accepted_configs(["ir_core"])]
    assert len(ir) == 19
    assert R.plan(ir, 0, per_kind=None, kinds=("launch_plan",)) == []   # before: 34 at --per-kind 2
    red = [c for c in N.accepted_configs(["conv_fwd_split_k_reduce"]) if c[1] == "bf16_v1_t64_d1"]
    sites = R.plan(red, 0, per_kind=None, kinds=("launch_plan",))
    assert sites and all(s.site[1].startswith("kernarg:") for s in sites)


def test_mutate_only_ir_core_is_green(capsys):
    rc, out, err = _run(capsys, "mutate", "--only", "ir_core", "-j", "1")
    assert err == ""
    lines = out.splitlines()
    assert "launch_plan          0         0           0        n/a" in lines
    assert "197 mutants: 172 killed (proof 29, numerics 142, llvm 1), 0 survived, 25 equivalent; " \
           "kill rate 100.0 %" in lines, out
    assert not any("SURVIVED" in ln or "CONTRADICTION" in ln for ln in lines)
    assert lines[-1] == "RESULT: GREEN" and rc == 0


def test_cluster_half_is_killed_by_the_configs_cluster(capsys, tmp_path):
    rep = tmp_path / "m.json"
    rc, out, err = _run(capsys, "mutate", "--only", "ir_core/workgroup_ids_cluster16", "--kinds", "promise_lie",
                        "--per-kind", "0", "-j", "1", "--json", rep)
    v = [x for x in json.loads(rep.read_text())["verdicts"] if x["what"].startswith("cluster_half")]
    assert len(v) == 1 and v[0]["status"] == "killed" and v[0]["oracle"] == "numerics"
    assert "\"amdgpu-cluster-dims\"=\"1,1,8\" but the launch uses clusters of (1, 1, 16)" in v[0]["reason"]
    assert rc == 0


def test_ir_core_arguments_and_their_kills(capsys, tmp_path):
    rep = tmp_path / "m.json"
    rc, out, err = _run(capsys, "mutate", "--only", "ir_core/workgroup_ids,ir_core/workgroup_ids_cluster16,"
                        "ir_core/constants_f16,ir_core/constants_int", "--kinds",
                        "const_inc,const_dec,cmp_negate,align_double", "--per-kind", "0", "-j", "1", "--json", rep)
    doc = json.loads(rep.read_text())
    assert rc == 0 and doc["survived"] == 0 and not doc["contradictions"]
    by = {}
    for x in doc["verdicts"]:
        by.setdefault(x["reason"] if x["status"] == "equivalent" else x["status"], []).append(x)
    assert len(by["argued: any storing wave (docs/sim.md)"]) == 6
    assert len(by["argued: constant-offset alignment (docs/sim.md)"]) == 13
    # the argument's limit: lshr 5 -> 4 splits a wave (a divergent branch): killed, not argued
    split = [x for x in doc["verdicts"] if x["what"] == "lshr operand 5 -> 4"]
    assert len(split) == 2 and all(x["status"] == "killed" and "DivergentBranch" in x["reason"] for x in split)
    # a doubled align past the offset's alignment is killed (store i16 at byte 2 made align 4)
    wrong = [x for x in doc["verdicts"] if x["kind"] == "align_double" and x["status"] == "killed"]
    assert wrong and all(not x["reason"].startswith("argued") for x in wrong)


def test_nnan_on_the_loop_sum_is_killed_and_the_cast_domain_is_argued(capsys, tmp_path):
    rep = tmp_path / "m.json"
    rc, out, err = _run(capsys, "mutate", "--only", "ir_core/loop_phi,ir_core/casts", "--kinds", "promise_lie",
                        "--per-kind", "0", "-j", "1", "--match", "= fadd", "--json", rep)
    doc = json.loads(rep.read_text())
    got = {(x["config"], x["what"].split(":")[0]): (x["status"], x["reason"]) for x in doc["verdicts"]}
    # the plan's `specials` case puts a NaN and both infinities in the summed rows
    assert got[("loop_phi", "fmf_nnan")][0] == "killed" and "specials" in got[("loop_phi", "fmf_nnan")][1]
    assert got[("loop_phi", "fmf_reassoc")][0] == "killed"   # refused statically (PromiseRefused)
    # fptosi of the cast kernel's sum is poison unless it is finite: nnan holds where it is defined
    assert got[("casts", "fmf_nnan")] == ("equivalent", "argued: cast domain (nnan holds) (docs/sim.md)")
    assert rc == 0 and doc["survived"] == 0 and not doc["contradictions"]

"""The mutation lane (parity/mutate): every operator produces a different module
that the emulator parses and LLVM verifies; the equivalence rules; the oracle
order; the report (counts per kind, the killing oracle, the kill rate, the
survivors with their diffs); the command end to end on one reduce config."""
from __future__ import annotations

import json

import pytest

import python_engine.api as api
from parity.app.main import main as parity_main
from parity.llvm.compile import parse_verify
from parity.mutate import operators as OPS
from parity.mutate import run as R
from parity.sim import ir

ARCH = "gfx1250"


def _text(family, spec):
    from parity.sim import numerics as N
    return api.lower(family, N._with_defaults(family, spec), ARCH, "llvm23").text


@pytest.fixture(scope="module")
def kernels():
    return [_text("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 2, "threads": 64, "degree": 4}),
            _text("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 4, "threads": 64, "degree": 0}),
            _text("conv_implicit_gemm", {"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle"}),
            # fused split-K (the epilogue kinds' sites): Stage 2 with bias and relu, a bias cluster fold
            _text("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 4, "threads": 64, "degree": 3,
                                              "acc_epilogue": "bias"}),
            _text("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 2, "threads": 64, "degree": 2,
                                              "acc_epilogue": "relu"}),
            _text("conv_implicit_gemm", {"split_k": 4, "split_k_cluster": 4, "epilogue": "default",
                                         "acc_epilogue": "bias"})]


@pytest.mark.parametrize("kind", OPS.KINDS)
def test_each_operator_gives_a_different_parseable_module(kernels, kind):
    seen = 0
    for text in kernels:
        for site in OPS.sites(text, kind)[:3]:
            m = OPS.apply(text, kind, site)
            # launch_plan changes the runtime's plan, not the IR (tests/test_mutate_new_kinds.py)
            assert m.kind == kind and (m.text != text) == (kind != "launch_plan") and m.what
            ir.parse(m.text)          # the emulator's parser
            parse_verify(m.text)      # LLVM 22.1 parses and verifies it
            seen += 1
    assert seen, f"no site of {kind} in the reduce and cluster kernels"


def test_operator_details(kernels):
    red = kernels[0]
    m = OPS.apply(red, "align_double", OPS.sites(red, "align_double")[0])
    assert "align 8" in m.text.split("\n")[m.line - 1]
    # the reduce's unrolled slab sum: 4 terms reversed, SSA order kept (the chain after the last load)
    sites = OPS.sites(red, "slab_reverse")
    m = OPS.apply(red, "slab_reverse", sites[0])
    assert m.what == "fadd chain of 4 terms summed in reverse"
    lines = m.text.split("\n")
    first = next(ln for ln in lines if ln.startswith("  %acc") and "fadd" in ln)
    assert first.endswith("%slab33, %slab29")
    # drop_sync deletes exactly one line
    conv = kernels[2]
    s = OPS.sites(conv, "drop_sync")
    assert len(s) >= 4
    assert len(OPS.apply(conv, "drop_sync", s[0]).text.split("\n")) == len(conv.split("\n")) - 1
    # loop_bound finds the degree-0 reduce's slab loop compare
    assert OPS.sites(kernels[1], "loop_bound")
    with pytest.raises(ValueError, match="unknown mutation kind"):
        OPS.sites(red, "bogus")


def test_equivalence_rules(kernels):
    red = kernels[0]
    swaps = [OPS.apply(red, "swap_operands", s) for s in OPS.sites(red, "swap_operands")]
    comm = [m for m in swaps if m.what.split(" ")[0] in OPS.COMMUTATIVE]
    non = [m for m in swaps if m.what.split(" ")[0] not in OPS.COMMUTATIVE]
    assert comm and all(OPS.equivalent_reason(red, m).endswith("is commutative") for m in comm)
    assert non and not any(OPS.equivalent_reason(red, m) for m in non)
    # `inside = icmp ult j, last; jc = select inside, j, last`: ult <-> ule is a min either way
    mm = [OPS.apply(red, "cmp_boundary", s) for s in OPS.sites(red, "cmp_boundary")]
    eq = [m for m in mm if OPS.equivalent_reason(red, m)]
    assert len(eq) == 1 and "%inside" in eq[0].text.split("\n")[eq[0].line - 1]


def test_oracle_registration_order():
    names = [n for n, _ in R.ORACLES]
    assert names[0] == "llvm" and names[-1] == "numerics"
    R.register_oracle("probe", lambda job: [], before="numerics")
    try:
        assert [n for n, _ in R.ORACLES][-2:] == ["probe", "numerics"]
    finally:
        R.ORACLES[:] = [o for o in R.ORACLES if o[0] != "probe"]


def test_report_counts_and_survivors():
    vs = [R.Verdict("f", "a", "const_inc", 3, "i32 1 -> i32 2", "killed", "numerics", "case: D differs"),
          R.Verdict("f", "a", "const_inc", 4, "i32 0 -> i32 1", "killed", "llvm", "parse error"),
          R.Verdict("f", "b", "select_swap", 9, "select arms swapped", "survived", diff="-x\n+y\n"),
          R.Verdict("f", "b", "swap_operands", 5, "add operands swapped", "equivalent", reason="add is commutative")]
    rep = R.report(vs)
    assert (rep.killed, rep.survived, rep.equivalent) == (2, 1, 1)
    assert rep.kill_rate == pytest.approx(2 / 3)
    assert rep.per_kind["const_inc"] == {"killed": 2, "survived": 0, "equivalent": 0}
    assert rep.killed_by == {"numerics": 1, "llvm": 1}
    text = R.render(rep)
    assert "kill rate 66.7 %" in text and "SURVIVED f/b select_swap line 9: select arms swapped" in text
    assert "    -x" in text and "    +y" in text
    doc = R.to_json(rep, 3, 1.5)
    assert doc["kill_rate"] == pytest.approx(2 / 3) and doc["verdicts"][2]["diff"] == "-x\n+y\n"
    assert R.report([]).kill_rate is None


def test_mutate_command_end_to_end(tmp_path, capsys):
    out = tmp_path / "m.json"
    rc = parity_main(["mutate", "--only", "conv_fwd_split_k_reduce/bf16_v2_t64_d4", "--per-kind", "1",
                      "--kinds", "select_swap,gep_index,align_double,cmp_negate", "-j", "1", "--json", str(out)])
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert rc == 0, text
    assert doc["result"] == "GREEN" and doc["planned"] == 4 and doc["mutants"] == 4
    assert doc["killed"] == 4 and doc["kill_rate"] == 1.0
    # the static proof runs before numerics: the doubled alignment is refused by it, the rest by numerics
    by_kind = {v["kind"]: v["oracle"] for v in doc["verdicts"]}
    assert by_kind == {"align_double": "proof", "select_swap": "numerics", "gep_index": "numerics",
                       "cmp_negate": "numerics"}, by_kind
    assert doc["killed_by"] == {"numerics": 3, "proof": 1}
    assert "kill rate 100.0 %" in text


def test_mutate_bad_kind_is_one_error_line(capsys):
    rc = parity_main(["mutate", "--kinds", "const_inc,nope"])
    err = capsys.readouterr().err.strip().split("\n")
    assert rc == 2 and len(err) == 1 and err[0].startswith("error:") and "unknown mutation kind nope (" in err[0]


class _FixedText:
    """A lowerer stand-in: every config's kernel is ``text`` (lowering is not measured)."""

    def __init__(self, text):
        self._text = text

    def text(self, family, spec, arch):
        return self._text


def test_plan_holds_no_mutant_text(kernels):
    # planning every site must not make every mutant's module text: before, a plan of the whole
    # catalog at --per-kind 0 (324861 mutants of ~47 KB) ran out of a 6 GiB cap (docs/sim.md)
    import tracemalloc
    text = kernels[2]
    configs = [("conv_implicit_gemm", f"c{i}", {"split_k": 4, "split_k_cluster": 4, "epilogue": "cshuffle"},
                ARCH) for i in range(3)]
    tracemalloc.start()
    try:
        jobs = R.plan(configs, 0, per_kind=None, lowerer=_FixedText(text))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(jobs) > 1000 and all(isinstance(j, R.Site) for j in jobs)
    # three configs sharing one kernel text: a few hundred bytes per planned mutant, far below one text each
    assert peak < 2 * len(text) + 1000 * len(jobs) < len(jobs) * len(text) // 20, (peak, len(jobs), len(text))
    # a planned site judges the same mutant as the job made from it
    j = next(j for j in jobs if j.kind == "align_double")
    made = j.job()
    assert made.mutant == OPS.apply(text, "align_double", j.site) and made.original is text


def test_judge_does_not_count_memory_error_as_a_kill(kernels):
    def starve(job):
        raise MemoryError

    text = kernels[0]
    site = R.Site("conv_fwd_split_k_reduce", "x", {}, ARCH, text, "select_swap", OPS.sites(text, "select_swap")[0])
    R.register_oracle("starve", starve, before="llvm")
    try:
        with pytest.raises(MemoryError):
            R.judge(site)
    finally:
        R.ORACLES[:] = [o for o in R.ORACLES if o[0] != "starve"]


@pytest.mark.parametrize("stage", ["plan", "run"])
def test_mutate_out_of_memory_is_one_error_line(monkeypatch, capsys, stage):
    def starve(*a, **k):
        raise MemoryError

    monkeypatch.setattr(R, stage, starve)
    rc = parity_main(["mutate", "--only", "conv_fwd_split_k_reduce/bf16_v2_t64_d4", "--kinds", "select_swap",
                      "-j", "1"])
    err = capsys.readouterr().err.strip().split("\n")
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: out of memory while "), err
    assert ("--per-kind" if stage == "plan" else "--max-mutants") in err[0]


@pytest.mark.parametrize("acc,kinds", [("bias", {"epi_twice": 2, "epi_early": 2, "bias_group": 0}),
                                       ("scale", {"epi_twice": 2, "epi_early": 2, "bias_group": 0}),
                                       ("relu", {"epi_twice": 0, "epi_early": 2, "bias_group": 0}),
                                       ("clamp", {"epi_twice": 0, "epi_early": 0, "bias_group": 0}),
                                       # bias then the activation: the bias add is on the fold's sum;
                                       # bias_relu's relu also moves before the bias add (relu, then bias)
                                       ("bias_relu", {"epi_twice": 2, "epi_early": 4, "bias_group": 0}),
                                       ("bias_clamp", {"epi_twice": 2, "epi_early": 2, "bias_group": 0})])
def test_epilogue_kinds_find_the_fused_stage2_epilogue(acc, kinds):
    """One site per vector path and tail of an unrolled fused reduce; relu twice and
    clamp twice are the same function (idempotent), so they have no epi_twice site."""
    text = _text("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 4, "threads": 64, "degree": 3,
                                             "acc_epilogue": acc})
    assert {k: len(OPS.sites(text, k)) for k in kinds} == kinds


def test_bias_group_drops_the_group_base_of_the_fold_bias():
    text = _text("conv_implicit_gemm", {"split_k": 4, "split_k_cluster": 4, "epilogue": "default",
                                        "acc_epilogue": "bias"})
    sites = OPS.sites(text, "bias_group")
    assert sites
    m = OPS.apply(text, "bias_group", sites[0])
    assert "= add i32 0, %f_n" in m.text and m.what.startswith("bias channel without the group base %kbase")


# two mutants both argued equivalent (*non-empty reduction*: the padded-pixel k_span_nz's 0 arm
# made +-1, never chosen); the clamp's bound compares of earlier rounds are killed since the
# zero-bound problems (tests/test_clamp_zero_bound.py)
CLAMP = "conv_implicit_gemm/plain_mem_default_va3_vb3_bf16"
CLAMP_EQUIVALENT = ["mutate", "--only", CLAMP, "--per-kind", "0", "--kinds", "const_inc,const_dec",
                    "--match", "%k_span_nz12 = select", "-j", "1"]


@pytest.mark.parametrize("differ", [None, 0, 7])
def test_a_run_whose_mutants_are_all_equivalent_is_not_a_failure(tmp_path, capsys, monkeypatch, differ):
    # before: "kill rate n/a" and RESULT: RED, exit 1, with nothing to kill; now GREEN unless the
    # differential (--differential N, stubbed here: the real one takes minutes) finds a difference
    from parity.mutate import cli as MC
    handed = []

    def differential(jobs, verdicts, n, seed, n_jobs=1):
        handed.extend((v.status, v.reason.split(":")[0]) for v in verdicts)
        return [{"config": CLAMP, "equal": n - differ, "differ": differ}]
    monkeypatch.setattr(MC, "_differentials", differential)
    out = tmp_path / "m.json"
    extra = [] if differ is None else ["--differential", "20"]
    rc = parity_main([*CLAMP_EQUIVALENT, *extra, "--json", str(out)])
    lines = capsys.readouterr().out.splitlines()
    doc = json.loads(out.read_text())
    assert (doc["mutants"], doc["equivalent"], doc["killed"], doc["survived"]) == (2, 2, 0, 0)
    assert doc["kill_rate"] is None
    says = "(2; nothing to kill)" if differ is None else "(2; nothing to kill, the differential decides)"
    assert f"kill rate n/a: every mutant equivalent {says}" in lines
    assert handed == ([] if differ is None else [("equivalent", "argued")] * 2)
    if differ:
        assert rc == 1 and lines[-1] == "RESULT: RED" and doc["result"] == "RED"
        assert "a mutant argued equivalent or surviving differs from its honest kernel (differential)" in lines
    else:
        assert rc == 0 and lines[-1] == "RESULT: GREEN" and doc["result"] == "GREEN"


def test_a_run_that_judged_no_mutant_stays_red(capsys, monkeypatch):
    # nothing judged is no evidence either way: RED as before (the all-equivalent GREEN needs a mutant)
    import parity.mutate.run as MR
    monkeypatch.setattr(MR, "run", lambda jobs, *a, **k: [])   # a time bound ending before the first mutant
    rc = parity_main([*CLAMP_EQUIVALENT[:-4], "-j", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert rc == 1 and lines[-1] == "RESULT: RED" and "0 of 1018 mutants judged" in lines[-2]   # every const_inc / const_dec site of va3
    # a --match that selects no site is a usage error, not an empty run
    rc = parity_main([*CLAMP_EQUIVALENT[:-4], "--match", "no such line", "-j", "1"])
    assert rc == 2 and capsys.readouterr().err.startswith("error: --match: /no such line/ matches no honest line")

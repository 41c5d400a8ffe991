"""Every verdict produced on purpose with deliberately wrong stub engines."""

import sys
import time
import uuid

import pytest

import gate_stubs
from parity.config import Family, load_families, ok, reject, Config
from parity.gate.runner import (ASYMMETRIC, BOTH_REJECTED, CRASH, EXPECTATION, IDENTICAL, MISMATCH,
                           REASON_MISMATCH, Result, classify, passes, run_gate, summarize)


@pytest.fixture(scope="module")
def stub_env(tmp_path_factory):
    d = tmp_path_factory.mktemp("gate_stubs")
    tag = uuid.uuid4().hex[:8]
    good, bad = gate_stubs.write_engines(d, f"stub{tag}")
    pkg = gate_stubs.write_configs(d, f"cfg{tag}", {
        "fam_x": gate_stubs.ALL_VERDICTS_FAMILY,
        "fam_empty": gate_stubs.EMPTY_FAMILY,
        "fam_none": gate_stubs.NOTHING_COMPARED_FAMILY,
    })
    sys.path.insert(0, str(d))
    yield types_ns(good=good, bad=bad, pkg=pkg, dir=d)
    sys.path.remove(str(d))


class types_ns:
    def __init__(self, **kw):
        self.__dict__.update(kw)


@pytest.fixture(scope="module")
def report(stub_env):
    fams = load_families(stub_env.pkg)
    t0 = time.monotonic()
    rep = run_gate(fams, engines=(stub_env.good, stub_env.bad), timeout=1.0, workers=2)
    rep.elapsed = time.monotonic() - t0
    return rep


def verdicts(report, family="fam_x"):
    return {(r.config, r.flavor): r for r in report.results if r.family == family}


def test_identical_and_both_rejected(report):
    v = verdicts(report)
    for fl in ("llvm20", "llvm22", "llvm23"):
        assert v[("ident", fl)].verdict == IDENTICAL
        assert v[("both_rej", fl)].verdict == BOTH_REJECTED
        assert v[("zz_after_crashes", fl)].verdict == IDENTICAL
    a, b = v[("ident", "llvm23")].outcomes
    assert a["sha256"] == b["sha256"] and len(a["sha256"]) == 64
    assert a["kernel"] == "fam_x_ident" and a["bytes"] == b["bytes"] > 0


def test_per_flavor_expectation_cluster(report):
    v = verdicts(report)
    assert v[("cluster", "llvm20")].verdict == BOTH_REJECTED
    assert v[("cluster", "llvm22")].verdict == BOTH_REJECTED
    assert v[("cluster", "llvm23")].verdict == IDENTICAL
    assert v[("cluster", "llvm20")].golden_entry() == {
        "rejected": "amdgpu-cluster-dims requires flavor llvm23"}


def test_mismatch_keeps_first_differing_line(report, stub_env):
    r = verdicts(report)[("text_differs", "llvm22")]
    assert r.verdict == MISMATCH
    assert r.first_diff == (6, "  ret void", "  ret void ; different")
    assert "text differs" in r.detail
    k = verdicts(report)[("kernel_differs", "llvm22")]
    assert k.verdict == MISMATCH
    assert "kernel name differs" in k.detail and "'fam_x_k_x'" in k.detail


def test_reason_mismatch_and_asymmetric(report, stub_env):
    v = verdicts(report)
    r = v[("reason_differs", "llvm20")]
    assert r.verdict == REASON_MISMATCH
    assert r.detail == (f"{stub_env.good}: 'tile_k must be a multiple of 32' | "
                        f"{stub_env.bad}: 'tile_k must be a multiple of 32 (worded differently)'")
    a = v[("one_rejects", "llvm20")]
    assert a.verdict == ASYMMETRIC
    assert a.detail == f"{stub_env.bad} rejected 'bad engine says no', {stub_env.good} accepted"
    assert v[("one_accepts", "llvm23")].verdict == ASYMMETRIC


def test_exceptions_are_crashes(report):
    v = verdicts(report)
    assert v[("raises", "llvm20")].verdict == CRASH
    assert "KeyError: 'internal bug'" in v[("raises", "llvm20")].detail
    assert v[("sys_exit", "llvm20")].verdict == CRASH
    assert "SystemExit: 3" in v[("sys_exit", "llvm20")].detail
    assert v[("garbage", "llvm20")].verdict == CRASH
    assert "lower() returned int" in v[("garbage", "llvm20")].detail


def test_process_deaths_and_hang_are_crashes(report, stub_env):
    v = verdicts(report)
    assert v[("segfault", "llvm23")].verdict == CRASH
    assert v[("segfault", "llvm23")].detail == f"{stub_env.bad}: worker killed by SIGSEGV"
    assert v[("aborts", "llvm23")].detail == f"{stub_env.bad}: worker killed by SIGABRT"
    assert v[("exits", "llvm23")].detail == f"{stub_env.bad}: worker exited with status 7"
    h = v[("hangs", "llvm23")]
    assert h.verdict == CRASH
    assert h.detail == f"{stub_env.bad}: timeout: no result after 1s (worker killed)"
    # the good engine ran first in the same worker; the crash is attributed to the bad one
    assert h.outcomes[1]["status"] == "crash" and h.outcomes[0]["status"] == "notrun"
    assert report.restarts >= 4  # dead workers were replaced and the run went on


def test_expectation_verdicts(report):
    v = verdicts(report)
    r = v[("must_reject_accepted", "llvm20")]
    assert r.verdict == EXPECTATION
    assert r.detail == "expected reject('nope') but both engines accepted"
    r = v[("must_pass_rejected", "llvm22")]
    assert r.verdict == EXPECTATION
    assert r.detail == "expected ok but both engines rejected: 'tile_k must be a multiple of 32'"
    r = v[("wrong_reason", "llvm23")]
    assert r.verdict == EXPECTATION
    assert r.detail == "rejected with 'tile_k must be a multiple of 32', expected 'another reason'"


def test_every_applicable_unit_has_one_verdict(report):
    fams = {f.name: f for f in report.families}
    expected = sum(len(c.flavors) for f in fams.values() for c in f.configs)
    assert len(report.results) == expected
    assert len({(r.family, r.config, r.flavor) for r in report.results}) == expected


def test_family_summaries(report):
    s = report.summaries
    assert not s["fam_x"].green
    assert s["fam_x"].flavors["llvm23"].counts[CRASH] == 4
    assert s["fam_x"].flavors["llvm20"].counts[CRASH] == 3
    assert s["fam_x"].flavors["llvm20"].counts[IDENTICAL] == 2
    # a family with zero configs fails
    assert not s["fam_empty"].green
    assert s["fam_empty"].problems == ["family has no configs"]
    # a family that compared nothing fails even though every verdict passes
    none = s["fam_none"]
    assert none.flavors["llvm20"].counts[BOTH_REJECTED] == 1
    assert not none.green
    assert "compared nothing (no IDENTICAL)" in none.flavors["llvm20"].problems
    assert not report.green


def test_selection_of_must_reject_configs_is_judged_by_its_verdicts(stub_env):
    """`--only FAMILY/NAME` of a config that must be rejected at some flavors (a cluster config
    before llvm23): those flavors are GREEN on the BOTH_REJECTED verdicts, with a note; the same
    configs as a whole family still compare nothing and fail."""
    from parity.cli.common import select_configs
    from parity.gate.report import summary_lines
    fams = select_configs(load_families(stub_env.pkg, only=["fam_x"]), {"fam_x": {"cluster"}})
    assert fams[0].selection and [c.name for c in fams[0].configs] == ["cluster"]
    rep = run_gate(fams, engines=(stub_env.good, stub_env.good), timeout=5, workers=1)
    s = rep.summaries["fam_x"]
    assert rep.green and [s.flavors[f].counts[BOTH_REJECTED] for f in ("llvm20", "llvm22")] == [1, 1]
    assert s.flavors["llvm20"].notes == ["the selected config must be rejected at llvm20"]
    assert s.flavors["llvm23"].counts[IDENTICAL] == 1 and s.flavors["llvm23"].notes == []
    assert rep.to_json()["families"]["fam_x"]["flavors"]["llvm22"]["notes"] == [
        "the selected config must be rejected at llvm22"]
    lines = summary_lines(rep)
    assert any("llvm20" in ln and ln.endswith("GREEN (the selected config must be rejected at llvm20)") for ln in lines)
    # naming every config of a family is the family, not a selection
    assert not select_configs(load_families(stub_env.pkg, only=["fam_none"]), {"fam_none": {"only_rejects"}})[0].selection
    # a RED flavor carries no note (notes are what a GREEN line adds)
    sel = select_configs(load_families(stub_env.pkg, only=["fam_x"]), {"fam_x": {"cluster", "reason_differs"}})
    bad = run_gate(sel, engines=(stub_env.good, stub_env.bad), timeout=5, workers=1)   # REASON_MISMATCH
    red = [fs for fs in bad.summaries["fam_x"].flavors.values() if fs.problems]
    assert red and all(fs.notes == [] for fs in red)
    # the same config as a whole family (not a selection) still fails at llvm20/22
    whole = Family("fam_x", fams[0].configs)
    rep2 = run_gate([whole], engines=(stub_env.good, stub_env.good), timeout=5, workers=1)
    assert not rep2.green
    assert rep2.summaries["fam_x"].flavors["llvm22"].problems == ["compared nothing (no IDENTICAL)"]


def test_green_run_with_good_engine_twice(stub_env):
    fams = load_families(stub_env.pkg, only=["fam_x"])
    keep = Family("fam_x", tuple(c for c in fams[0].configs
                                 if c.name in ("ident", "both_rej", "cluster", "zz_after_crashes")))
    rep = run_gate([keep], engines=(stub_env.good, stub_env.good), timeout=5, workers=2)
    assert rep.green
    assert [r.verdict for r in rep.results].count(IDENTICAL) == 7
    assert [r.verdict for r in rep.results].count(BOTH_REJECTED) == 5


def test_missing_engine_module_is_a_crash_not_an_abort(stub_env):
    fam = Family("fam_x", (Config("ident", arch="gfx1250", spec={"kernel": "i"}, flavors=("llvm23",)),))
    rep = run_gate([fam], engines=(stub_env.good, "no_such_engine_module_xyz"), timeout=5, workers=1)
    [r] = rep.results
    assert r.verdict == CRASH
    assert "cannot import engine module 'no_such_engine_module_xyz'" in r.detail


# -- classification unit tests (fail-closed) -------------------------------

OKA = {"status": "ok", "kernel": "k", "sha256": "a" * 64, "bytes": 10}


def test_unknown_status_fails_closed():
    v, d = classify({"status": "maybe"}, OKA, ok(), ("p", "c"))
    assert v == CRASH and d == "p: unknown status 'maybe'"
    v, d = classify(OKA, {"status": "notrun"}, ok(), ("p", "c"))
    assert v == CRASH


def test_unknown_verdict_never_passes():
    assert passes(IDENTICAL) and passes(BOTH_REJECTED)
    for v in (MISMATCH, REASON_MISMATCH, ASYMMETRIC, CRASH, EXPECTATION, "NEW_KIND", "", None):
        assert not passes(v)
    fam = Family("f", (Config("a", arch="gfx1250", flavors=("llvm23",)),))
    res = [Result("f", "a", "llvm23", "SOMETHING_NEW", "", "ok", (OKA, OKA))]
    s = summarize([fam], res, ("llvm23",))["f"]
    assert not s.green and s.flavors["llvm23"].counts["SOMETHING_NEW"] == 1


def test_missing_verdict_fails():
    fam = Family("f", (Config("a", arch="gfx1250"), Config("b", arch="gfx1250")))
    res = [Result("f", "a", "llvm23", IDENTICAL, "", "ok", (OKA, OKA))]
    s = summarize([fam], res, ("llvm23",))["f"]
    assert not s.green
    assert "2 configs apply but 1 verdicts" in s.flavors["llvm23"].problems


def test_kernel_name_is_part_of_identity():
    other = dict(OKA, kernel="k2")
    v, d = classify(OKA, other, ok(), ("p", "c"))
    assert v == MISMATCH and "kernel name differs" in d

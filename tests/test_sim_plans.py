"""The numerics plans' discovery (parity/sim/plans): one module per family, found
by name; a missing or malformed plan is one error line naming the module and
the rule, on the command line too."""
from __future__ import annotations

import sys
import types

import pytest

from parity.config import Family, load_families
from parity.sim import plans as P


def test_plans_are_the_modules_named_after_their_families():
    assert list(P.PLANS) == sorted(f.name for f in load_families() if not f.numerics_opt_out)
    assert {"conv_fwd_split_k_reduce", "conv_implicit_gemm", "ir_core"} <= set(P.PLANS)
    for name, plan in P.PLANS.items():
        assert plan.source.endswith(f"parity/sim/plans/{name}.py")
        assert plan.tolerance and "\n" not in plan.tolerance
    assert P.PLANS["ir_core"].tolerance == "exact bytes against numpy"
    assert P.PLANS["conv_fwd_split_k_reduce"][1].startswith("bit-exact: D == RNE(")


def test_a_family_with_neither_plan_nor_opt_out_is_one_error_line():
    fam = Family("toy_cast", (), source="parity/configs/toy_cast.py")
    with pytest.raises(P.PlanError) as e:
        P.check_families([fam])
    assert str(e.value) == (
        "family toy_cast has no numerics plan: write parity/sim/plans/toy_cast.py (TOLERANCE (a one-line "
        "text) and cases(spec, arch, lowerer) (docs/contributing.md)) or set NUMERICS_OPT_OUT = \"reason\" "
        "in parity/configs/toy_cast.py")
    P.check_families([Family("toy_cast", (), numerics_opt_out="text family: no IR to run")])  # opted out: fine


def test_a_plan_and_an_opt_out_together_are_refused():
    with pytest.raises(P.PlanError, match=r"^family ir_core has both a numerics plan \(parity/sim/plans/ir_core.py\)"
                                          r" and NUMERICS_OPT_OUT in x.py: keep one$"):
        P.check_families([Family("ir_core", (), source="x.py", numerics_opt_out="why")])


@pytest.mark.parametrize("attrs, rule", [
    ({"TOLERANCE": "exact"}, "no function cases(spec, arch, lowerer)"),
    ({"cases": lambda s, a, lw: []}, "TOLERANCE must be a non-empty one-line text"),
    ({"cases": lambda s, a, lw: [], "TOLERANCE": "two\nlines"}, "TOLERANCE must be a non-empty one-line text"),
])
def test_a_malformed_plan_module_names_the_rule(monkeypatch, attrs, rule):
    mod = types.ModuleType("parity.sim.plans.toy_bad")
    mod.__dict__.update(attrs)
    monkeypatch.setitem(sys.modules, "parity.sim.plans.toy_bad", mod)
    with pytest.raises(P.PlanError) as e:
        P._load("toy_bad")
    assert str(e.value).startswith(f"numerics plan parity/sim/plans/toy_bad.py: {rule}")
    assert "\n" not in str(e.value)


def test_a_plan_that_does_not_import_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "parity.sim.plans.toy_broken", None)  # import raises ImportError
    with pytest.raises(P.PlanError, match=r"^numerics plan parity/sim/plans/toy_broken.py cannot be loaded: "
                                          r"ModuleNotFoundError: "):
        P._load("toy_broken")


def test_numerics_refuses_a_family_without_plan_in_one_line(monkeypatch, capsys):
    from parity.app.main import main
    from parity.sim import numerics_cli
    real = numerics_cli.load_families

    def no_plan(only=None):
        return [Family(f.name, f.configs, f.source, f.output, None) if f.name == "split_k_policy" else f
                for f in real(only=only)]
    monkeypatch.setattr(numerics_cli, "load_families", no_plan)
    monkeypatch.setattr(numerics_cli.N, "run_all", lambda *a, **k: pytest.fail("ran without the check"))
    assert main(["numerics"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "family split_k_policy has no numerics plan: " \
        "write parity/sim/plans/split_k_policy.py" in err[0], err

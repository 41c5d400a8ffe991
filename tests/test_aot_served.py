"""Every selection mode is served by the AOT grid (issue 37): on the shipped
catalog (parity/data/layers.txt, unfused and fused CBAInfer layers) and on
the held-out public layers (tests/data/layers_heldout.txt), every kernel a
layer launches is an AOT job; ``parity layers`` counts them and fails a layer
outside the grid unless ``--allow-jit``; the degree columns keep one meaning each."""
from __future__ import annotations

import os

import pytest

import cpp_engine
import python_engine
from parity.app.main import main as parity_main
from parity.catalog.emit import (DEFAULT_SELECT, SELECTIONS, aot_kernels, aot_text, default_catalog, plan_layer,
                                 read_catalog)
from parity.catalog.layers import degree_columns

HELD_OUT = os.path.join(os.path.dirname(__file__), "data", "layers_heldout.txt")
CATALOGS = {"catalog": default_catalog(), "held_out": HELD_OUT}


def test_default_is_the_reference_policy():
    assert DEFAULT_SELECT == "seed" and set(SELECTIONS) == {"seed", "model", "rules"}


@pytest.mark.parametrize("which", sorted(CATALOGS))
@pytest.mark.parametrize("select", ["seed", "model", "rules"])
@pytest.mark.parametrize("E", [python_engine, cpp_engine], ids=["python", "cpp"])
def test_every_mode_served_at_llvm23(E, select, which):
    layers = read_catalog(CATALOGS[which])
    assert len(layers) == {"catalog": 67, "held_out": 8}[which]
    missed = []
    for layer in layers:
        lp = plan_layer(E, layer, "gfx1250", "llvm23", None, 0, lower=False, select=select)
        ks = aot_kernels(lp)
        assert len(ks) == len(lp.kernels) >= 1
        if not all(ok for _, ok, _ in ks) or not lp.policy["aot"].startswith("yes: "):
            missed.append((layer.name, aot_text(lp)))
    assert missed == []


def test_held_out_layers_are_not_in_the_catalog():
    shipped = {l.problem for l in read_catalog(default_catalog())}
    held = read_catalog(HELD_OUT)
    assert not [l.name for l in held if l.problem in shipped]
    # the held-out set reaches the classes the catalog lacks: depthwise, grouped, fused clipped relu, vector 3
    assert {l.problem.groups for l in held} >= {1, 32, 144}
    assert any(l.acc_epilogue == "clamp" for l in held)


def test_served_text_names_each_kernel():
    layer = [l for l in read_catalog(default_catalog()) if l.name == "resnet50_b1_conv2_1_3x3"][0]
    lp = plan_layer(python_engine, layer, "gfx1250", "llvm22", None, 0, lower=False, select="seed")
    assert lp.binary == "two_stage"
    roles = [r for r, ok, t in aot_kernels(lp) if ok and t.startswith("AOT ")]
    assert roles == ["Stage 1", "Stage 2"]
    plain = plan_layer(python_engine, read_catalog(default_catalog())[0], "gfx1250", "llvm23", None, 0,
                       lower=False, select="seed")
    assert aot_text(plain).startswith("plain AOT ") and "_va3_vb3_identity.gfx1250.llvm23" in aot_text(plain)


def test_degree_columns_policy_and_launch():
    """The policy degree and the launched cluster size are two columns (resnet50 conv5 3x3: the policy
    says 32, the cluster binary launches S = 15)."""
    layer = [l for l in read_catalog(default_catalog()) if l.name == "resnet50_b1_conv5_1_3x3"][0]
    lp = plan_layer(python_engine, layer, "gfx1250", "llvm23", None, 0, lower=False, select="seed")
    assert (lp.binary, degree_columns(lp)) == ("cluster", ("32", "15"))
    lp = plan_layer(python_engine, layer, "gfx1250", "llvm22", None, 0, lower=False, select="seed")
    assert (lp.binary, degree_columns(lp)) == ("two_stage", ("32", "29"))   # ks 160: 29 slices carry data


ODD_K = ("odd_k: MIOpenDriver convbfp16 -n 1 -c 512 -H 7 -W 7 -k 255 -y 3 -x 3 -p 1 -q 1 "
         "--in_layout NHWC --fil_layout NHWC --out_layout NHWC\n")


def test_layers_fails_outside_the_grid_unless_allow_jit(tmp_path, capsys):
    """K 255 (odd): the reduce kernel is vector 1, which the grid lacks; the Stage 1 binary is a job."""
    cat = tmp_path / "odd.txt"
    cat.write_text(ODD_K)
    args = ["layers", str(cat), "--flavor", "llvm22", "--no-verify", "--no-numerics"]
    assert parity_main(args) == 1
    out = capsys.readouterr().out
    assert "Stage 1 AOT " in out and "Stage 2 JIT: reduce vector 1 is not in the grid (8, 4, 2)" in out
    assert "AOT-served: 0 of 1 layer at llvm22 (--select seed); error: 1 layer(s) outside the AOT grid" in out
    assert parity_main(args + ["--allow-jit"]) == 0
    out = capsys.readouterr().out
    assert "AOT-served: 0 of 1 layer at llvm22 (--select seed)\n" in out and "RESULT: GREEN" in out


def test_layers_prints_the_served_count(capsys):
    assert parity_main(["layers", HELD_OUT, "--no-verify", "--no-numerics", "--select", "model"]) == 0
    out = capsys.readouterr().out
    assert "AOT-served: 8 of 8 layers at llvm23 (--select model)" in out
    assert " pol lch binary " in out

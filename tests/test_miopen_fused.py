"""MIOpenDriver's fused inference lines (CBAInfer / CBAInferfp16, issue 36):
the fusion and activation modes map onto the kernels' one accumulator
epilogue, the others are refused in one line naming the flag and value; the
shipped catalog's fused layers carry their epilogue into emit's plan."""
from __future__ import annotations

import pytest

from parity.catalog.miopen import ProblemInputError, parse_line, read_catalog

BASE = "CBAInferfp16 -n 1 -c 64 -H 7 -W 7 -k 64 -y 3 -x 3 -p 1 -q 1"


@pytest.mark.parametrize("flags,acc,scalars", [
    ("-F 6", "bias", {}),                       # cb
    ("-F 6 -m 8", "bias", {}),                  # cb has no activation: -m is not read
    ("-F 4 -m 0", "bias", {}),                  # cba with passthrough
    ("-F 4 -m 3", "bias_relu", {}),             # cba relu: bias, then relu
    ("-F 4 -m 7 -A 6", "bias_clamp", {"clamp_lo": 0.0, "clamp_hi": 6.0}),  # cba clipped relu (ReLU6)
    ("--fusion_mode 4 --activMode 7 --alpha 0", "bias_clamp", {"clamp_lo": 0.0, "clamp_hi": 0.0}),
    ("-F 5 -m 3", "relu", {}),                  # ca relu
    ("-F 5 -m 7 -A 6", "clamp", {"clamp_lo": 0.0, "clamp_hi": 6.0}),   # ca clipped relu (ReLU6)
    ("-F 5 -m 0", "identity", {}),              # ca passthrough
    ("--fusion_mode 5 --activMode 7 --alpha 0.5", "clamp", {"clamp_lo": 0.0, "clamp_hi": 0.5}),
])
def test_fused_modes_map_onto_one_epilogue(flags, acc, scalars):
    layer = parse_line(f"{BASE} {flags}")
    assert (layer.dtype, layer.acc_epilogue, layer.scalars) == ("fp16", acc, scalars)
    assert parse_line(layer.command()).acc_epilogue == acc   # the canonical command round-trips


def test_cbainfer_is_fp32_and_conv_stride_0_1_spell_the_strides():
    layer = parse_line("CBAInfer -n 1 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 --conv_stride_0 2 --conv_stride_1 2 -F 6")
    assert (layer.dtype, layer.problem.stride_h, layer.problem.stride_w) == ("fp32", 2, 2)


@pytest.mark.parametrize("flags,message", [
    ("", "flag -F 0 (cbna) is not supported: batch-norm fusion modes are refused; only cba 4, ca 5, cb 6"),
    ("-F 1", "flag -F 1 (cna) is not supported: batch-norm fusion modes are refused; only cba 4, ca 5, cb 6"),
    ("-F 3", "flag -F 3 (cn) is not supported: batch-norm fusion modes are refused; only cba 4, ca 5, cb 6"),
    ("-F 9", "flag -F 9 is not a fusion mode: only cba 4, ca 5, cb 6"),
    ("-F 5 -m 8", "flag -m 8 (leaky relu) is not supported: the activation modes are passthrough 0, relu 3, "
                  "clipped relu 7"),
    ("-F 5 -m 1", "flag -m 1 (logistic) is not supported: the activation modes are passthrough 0, relu 3, "
                  "clipped relu 7"),
    ("-F 4 -m 8", "flag -m 8 (leaky relu) is not supported: the activation modes are passthrough 0, relu 3, "
                  "clipped relu 7"),
    ("-F 4 -m 9", "flag -m 9 (elu) is not supported: the activation modes are passthrough 0, relu 3, "
                  "clipped relu 7"),
    ("-F 4 -m 7 -A -1", "flag -A -1.0 (clipped relu alpha) must be a finite value >= 0"),
    ("-F 5 -m 7 -A -1", "flag -A -1.0 (clipped relu alpha) must be a finite value >= 0"),
    ("-F 6 -z same", "flag -z same is not supported: give the padding with -p and -q (pad mode conv)"),
    ("-F 6 -r 1", "flag -r 1 is not supported: the kernels pad with 0"),
    ("-F 6 -F 6", "flag -F is given twice"),
    ("-F 6 -A x", "flag -A needs a number, got 'x'"),
])
def test_refused_fused_lines_name_the_flag_and_value(flags, message):
    with pytest.raises(ProblemInputError) as e:
        parse_line(f"{BASE} {flags}")
    assert str(e.value) == message


def test_conv_lines_keep_f_as_the_direction():
    with pytest.raises(ProblemInputError, match=r"flag -F 6 is not supported: only -F 1 \(forward\)"):
        parse_line("convfp16 -n 1 -c 64 -H 7 -W 7 -k 64 -y 3 -x 3 -F 6")


def test_shipped_catalog_has_ten_real_fused_layers_that_reach_the_plan():
    import python_engine
    from parity.catalog.emit import default_catalog, plan_layer
    fused = [lay for lay in read_catalog(default_catalog()) if lay.acc_epilogue != "identity"]
    assert len(fused) >= 10
    assert {lay.name.split("_")[0] for lay in fused} >= {"resnet50", "yolov3", "efficientnet", "retinanet"}
    lay = next(x for x in fused if x.name == "retinanet_b1_cls_p7_bias")
    lp = plan_layer(python_engine, lay, lower=False, select="rules")
    # the layer's bias reaches the binary (the cluster fold applies it) and the plan JSON
    assert lp.conv_spec["acc_epilogue"] == "bias" and lp.binary == "cluster"
    assert dict(lp.plan["args"])["bias_ptr"] == "buffer bias"
    assert lp.to_json()["epilogue"] == {"acc_epilogue": "bias"}


def test_shipped_cba_layers_reach_the_plan_with_bias_and_activation():
    import python_engine
    from parity.catalog.emit import default_catalog, plan_layer
    cba = {lay.name: lay for lay in read_catalog(default_catalog()) if lay.acc_epilogue.startswith("bias_")}
    assert len(cba) >= 8
    assert {lay.acc_epilogue for lay in cba.values()} == {"bias_relu", "bias_clamp"}
    assert cba["mobilenetv2_b1_conv_last_bias_relu6"].scalars == {"clamp_lo": 0.0, "clamp_hi": 6.0}
    # the default (seed: the reference's rules) runs a fused layer unsplit
    seed = plan_layer(python_engine, cba["resnet50_b1_conv5_3x3_bias_relu"], lower=False)
    assert seed.conv_spec["acc_epilogue"] == "bias_relu" and seed.binary == "plain"
    lp = plan_layer(python_engine, cba["resnet50_b1_conv5_3x3_bias_relu"], lower=False, select="model")
    # split by the model: the cluster fold applies bias then relu, and takes the bias buffer
    assert lp.conv_spec["acc_epilogue"] == "bias_relu" and lp.binary == "cluster"
    args = dict(lp.plan["args"])
    assert (args["bias_ptr"], args["clamp_lo"]) == ("buffer bias", "unused")

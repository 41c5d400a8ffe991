"""MIOpenDriver problem input, the layer catalog, `emit` (both engines),
`parity layers` and `parity aot` (docs/policy.md)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from parity.cli import main as parity_main
from python_engine.emit import default_catalog, parse_plan, plan_layer, write_layer
from python_engine.miopen import ProblemInputError, parse_catalog, parse_line

SMALL = "MIOpenDriver convbfp16 -n 1 -c 512 -H 7 -W 7 -k 512 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 -F 1"


def test_parse_short_and_long_flags():
    a = parse_line("conv5: ./bin/MIOpenDriver convbfp16 -n 2 -c 64 -H 56 -W 48 -k 128 -y 3 -x 5 -p 1 -q 2 "
                   "-u 2 -v 1 -l 1 -j 2 -g 2 -F 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -t 1")
    assert a.name == "conv5" and a.dtype == "bf16"
    p = a.problem
    assert (p.N, p.C, p.H, p.W, p.K, p.Y, p.X, p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w,
            p.groups) == (2, 64, 56, 48, 128, 3, 5, 1, 2, 2, 1, 1, 2, 2)
    b = parse_line("convfp16 --batchsize 2 --in_channels 64 --in_h 56 --in_w 48 --out_channels 128 --fil_h 3 "
                   "--fil_w 5 --pad_h 1 --pad_w 2 --conv_stride_h 2 --dilation_w 2 --group_count 2 --forw 1")
    assert b.dtype == "fp16" and b.problem == p
    assert parse_line(a.command()).problem == p
    assert parse_line("conv -n 1 -c 3 -H 8 -W 8 -k 4 -y 1 -x 1").dtype == "fp32"


@pytest.mark.parametrize("line,msg", [
    ("", "empty command"),
    ("MIOpenDriver", "empty command"),
    ("convint8 -n 1", "command 'convint8' is not supported"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3", "missing flag -x (--fil_w)"),
    ("convbfp16 -n one -c 64", "flag -n needs an integer, got 'one'"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x", "flag -x has no value"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -Z 1", "unknown flag -Z"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -F 2", "flag -F 2 is not supported: only -F 1 (forward)"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -F 0", "flag -F 0 is not supported"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 --in_layout NCHW", "flag --in_layout NCHW is not supported"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 --spatial_dim 3", "only 2-D convolutions"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -m trans", "only mode conv"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -g 3", "flag -g 3 must divide -c 64 and -k 8"),
    ("convbfp16 -n 0 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3", "flag -n (N) must be >= 1, got 0"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -p -1", "flag -p (pad_h) must be >= 0, got -1"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -u 0", "flag -u (stride_h) must be >= 1, got 0"),
    ("convbfp16 -n 1 -c 64 -H 2 -W 8 -k 8 -y 3 -x 3", "do not fit the padded input -H 2"),
    ("convbfp16 -n 1 -n 2 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3", "flag -n is given twice"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 'unterminated", "cannot split the line"),
])
def test_bad_lines_name_the_flag(line, msg):
    with pytest.raises(ProblemInputError) as e:
        parse_line(line)
    assert msg in str(e.value)


def test_catalog_errors_carry_the_line():
    with pytest.raises(ProblemInputError) as e:
        parse_catalog("# c\na: " + SMALL + "\n\nb: convbfp16 -n 1\n", "cat.txt")
    assert str(e.value).startswith("cat.txt:4: missing flag -c")
    with pytest.raises(ProblemInputError) as e:
        parse_catalog("a: " + SMALL + "\na: " + SMALL + "\n", "cat.txt")
    assert "layer name 'a' is used twice" in str(e.value)


def test_shipped_catalog():
    with open(default_catalog(), encoding="utf-8") as f:
        layers = parse_catalog(f.read(), "layers.txt")
    names = {l.name for l in layers}
    assert len(layers) == len(names) >= 40
    for n in (1, 32):
        assert f"resnet50_b{n}_conv1" in names and f"resnet50_b{n}_conv5_1_3x3" in names
        r = {l.name: l.problem for l in layers if l.name.startswith(f"resnet50_b{n}_")}
        assert len(r) == 21 and all(p.N == n for p in r.values())
        # He et al. 2015 table 1: output sizes 112, 56, 28, 14, 7
        assert r[f"resnet50_b{n}_conv1"].Ho == 112
        assert [r[f"resnet50_b{n}_conv{s}_1_3x3"].Ho for s in (2, 3, 4, 5)] == [56, 28, 14, 7]
        assert [r[f"resnet50_b{n}_conv{s}_1_1x1_expand"].K for s in (2, 3, 4, 5)] == [256, 512, 1024, 2048]


@pytest.fixture(scope="module")
def small():
    return parse_line("conv5: " + SMALL)


def test_emit_both_engines_agree(both, small, tmp_path):
    py, cpp = both
    for flavor, kind in (("llvm23", "cluster"), ("llvm22", "two_stage")):
        a, b = plan_layer(py, small, flavor=flavor), plan_layer(cpp, small, flavor=flavor)
        assert a.binary == b.binary == kind
        assert a.policy_text == b.policy_text and a.plan_text == b.plan_text
        assert [(k[3], k[5]) for k in a.kernels] == [(k[3], k[5]) for k in b.kernels]
        paths = write_layer(b, str(tmp_path / flavor))
        plan = json.loads(open(paths[-1]).read())
        assert plan["engine"] == "cpp" and plan["binary"] == kind
        assert plan["launch"]["needs_stage2"] == (kind == "two_stage")
        assert [k["role"] for k in plan["kernels"]] == (["stage1"] if kind == "cluster" else ["stage1", "reduce"])
        for p in paths[:-1]:
            assert open(p).read().startswith("target datalayout") or "define" in open(p).read()
        if kind == "two_stage":
            assert plan["stage2"]["grid"] == [-(-49 * 512 // 2048), 1, 1]
            assert plan["launch"]["workspace_bytes"] == plan["launch"]["ks_count"] * 49 * 512 * 4


def test_emit_fold_and_fp32(both):
    py, _ = both
    vit = parse_line("vit: convbfp16 -n 1 -c 3 -H 224 -W 224 -k 768 -y 16 -x 16 -u 16 -v 16")
    lp = plan_layer(py, vit)
    assert lp.fold == 16 and lp.folded["C"] == 48 and lp.conv_spec["vector_a"] == 8
    from python_engine.emit import EmitError
    with pytest.raises(EmitError, match="pass --dtype"):
        plan_layer(py, parse_line("conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3"))
    assert plan_layer(py, parse_line("conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3"), dtype="fp16").conv_spec["dtype"] \
        == "fp16"
    c3 = plan_layer(py, parse_line("c1: convbfp16 -n 1 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2"))
    assert c3.conv_spec["vector_a"] == 1 and c3.fold == 1


def test_parse_plan_roundtrip(both, small):
    py, _ = both
    lp = plan_layer(py, small, flavor="llvm22")
    pl = parse_plan(lp.plan_text)
    assert pl["variant"] == "two_stage" and pl["needs_stage2"] and pl["args"][0] == ["x_ptr", "buffer x"]


def test_python_m_emit(tmp_path):
    r = subprocess.run([sys.executable, "-m", "python_engine", "emit", SMALL, "--out", str(tmp_path),
                        "--engine", "cpp"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "binary cluster" in r.stdout
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".ll"]
    r = subprocess.run([sys.executable, "-m", "python_engine", "emit", "convbfp16 -n 1 -c 64"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "missing flag -H" in r.stderr


def test_parity_emit_catalog(tmp_path, capsys):
    cat = tmp_path / "cat.txt"
    cat.write_text("a: " + SMALL + "\nb: convfp16 -n 1 -c 64 -H 14 -W 14 -k 64 -y 1 -x 1\n")
    assert parity_main(["emit", "--catalog", str(cat), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "2 layer(s)" in out and (tmp_path / "o" / "a.plan.json").exists()


def test_parity_layers_small_catalog(tmp_path, capsys):
    cat = tmp_path / "cat.txt"
    cat.write_text("small: " + SMALL + "\n"
                   "vit: convbfp16 -n 1 -c 3 -H 224 -W 224 -k 768 -y 16 -x 16 -u 16 -v 16\n"
                   "pw: convbfp16 -n 1 -c 64 -H 14 -W 14 -k 64 -y 1 -x 1\n")
    rc = parity_main(["layers", str(cat), "--flavor", "llvm22"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "SCALED-DOWN" in out and "RESULT: GREEN" in out
    assert out.count("IDENTICAL") == 3


def test_parity_aot(tmp_path, capsys):
    assert parity_main(["aot", "--flavor", "llvm22"]) == 0
    assert "52 AOT jobs at llvm22" in capsys.readouterr().out
    assert parity_main(["aot", "--flavor", "llvm23", "--emit", str(tmp_path), "--check"]) == 0
    out = capsys.readouterr().out
    assert "92 AOT jobs at llvm23" in out and "every job IDENTICAL" in out
    assert len(list(tmp_path.glob("*.ll"))) == 92 and (tmp_path / "jobs.tsv").exists()
    assert parity_main(["aot", "--flavor", "llvm19"]) == 2

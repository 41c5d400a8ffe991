"""MIOpenDriver problem input, the layer catalog, `emit` (both engines),
`parity layers` and `parity aot` (docs/policy.md)."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from parity.app.main import main as parity_main
from parity.catalog.emit import default_catalog, parse_plan, plan_layer, write_layer
from parity.catalog.miopen import ProblemInputError, parse_catalog, parse_line

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
    ("convbfp16 -n one -c 64", "flag -n needs a decimal integer (ASCII digits, optional sign, at most 18 digits), got 'one'"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x", "flag -x has no value"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -Z 1", "unknown flag -Z"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -F 2", "flag -F 2 is not supported: only -F 1 (forward)"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 -F 0", "flag -F 0 is not supported"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 --in_layout NCHW", "flag --in_layout NCHW is not supported"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 --spatial_dim 3", "a 3-D convolution (--spatial_dim 3) is not supported"),
    ("convbfp16 -n 1 -c 64 -H 8 -W 8 -k 8 -y 3 -x 3 --spatial_dim 4", "only 2-D convolutions"),
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
        r = {l.name: l.problem for l in layers if l.name.startswith(f"resnet50_b{n}_")
             and l.acc_epilogue == "identity"}   # the fused (CBAInferfp16) ResNet-50 layers: tests/test_miopen_fused.py
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
    from parity.catalog.emit import EmitError
    with pytest.raises(EmitError, match="pass --dtype"):
        plan_layer(py, parse_line("conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3"))
    assert plan_layer(py, parse_line("conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3"), dtype="fp16").conv_spec["dtype"] \
        == "fp16"
    c3 = plan_layer(py, parse_line("c1: convbfp16 -n 1 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2"))
    # cpg 3: the padded-pixel (small-channel) path, both vectors 3
    assert c3.conv_spec["vector_a"] == 3 and c3.conv_spec["vector_b"] == 3 and c3.fold == 1
    c6 = plan_layer(py, parse_line("c6: convbfp16 -n 1 -c 12 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -g 2"))
    assert c6.conv_spec["vector_a"] == 6 and c6.conv_spec["vector_b"] == 6
    c1 = plan_layer(py, parse_line("c1g: convbfp16 -n 1 -c 1 -H 32 -W 32 -k 16 -y 3 -x 3 -p 1 -q 1"))
    assert c1.conv_spec["vector_a"] == 1 and c1.conv_spec["vector_b"] == 1


def test_parse_plan_roundtrip(both, small):
    py, _ = both
    lp = plan_layer(py, small, flavor="llvm22")
    pl = parse_plan(lp.plan_text)
    assert pl["variant"] == "two_stage" and pl["needs_stage2"] and pl["args"][0] == ["x_ptr", "buffer x"]


def test_python_m_emit(tmp_path):
    r = subprocess.run([sys.executable, "-m", "parity", "emit", SMALL, "--out", str(tmp_path),
                        "--engine", "cpp"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "binary cluster" in r.stdout
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".ll"]
    r = subprocess.run([sys.executable, "-m", "parity", "emit", "convbfp16 -n 1 -c 64"],
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
    assert "3668 AOT jobs at llvm22" in capsys.readouterr().out
    # the whole grid compared between the engines; one shard written (3948 .ll files are ~350 MB)
    assert parity_main(["aot", "--flavor", "llvm23", "--check"]) == 0
    out = capsys.readouterr().out
    assert "3948 AOT jobs at llvm23" in out and "every job IDENTICAL" in out
    assert parity_main(["aot", "--flavor", "llvm23", "--emit", str(tmp_path), "--shard", "1/60"]) == 0
    out = capsys.readouterr().out
    assert "3948 AOT jobs at llvm23 (gfx1250), shard 1/60: 64 jobs" in out
    assert len(list(tmp_path.glob("*.ll"))) == 64 and len((tmp_path / "jobs.tsv").read_text().splitlines()) == 64
    assert parity_main(["aot", "--flavor", "llvm19"]) == 2


# -- layer names (files in --out), runs that do nothing, failure messages, --dtype -------------

@pytest.mark.parametrize("name", ["../escaped", "a/b", "..", ".hidden", "x\\y", "a*b", ""])
def test_catalog_rejects_unsafe_layer_names(name, tmp_path):
    with pytest.raises(ProblemInputError) as e:
        parse_catalog(f"ok: {SMALL}\n{name}: {SMALL}\n", "cat.txt")
    assert str(e.value).startswith(f"cat.txt:2: layer name {name!r} is not allowed: a name is letters, digits "
                                   f"and _ . + - only, not starting with a dot")


def test_catalog_escape_writes_nothing_outside(tmp_path):
    cat = tmp_path / "cat.txt"
    cat.write_text(f"../escaped: {SMALL}\n")
    r = subprocess.run([sys.executable, "-m", "parity", "emit", "--catalog", str(cat), "--out",
                        str(tmp_path / "out" / "o")], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: {cat}:1: layer name '../escaped' is not allowed"), r.stderr
    assert not (tmp_path / "out").exists()


def test_command_line_layer_gets_a_safe_name(tmp_path, capsys):
    from parity.catalog.emit import main as emit_main
    from parity.catalog.miopen import parse_command_line
    assert parse_command_line("../up/x: " + SMALL).name == "_up_x"
    plain = parse_command_line(SMALL)
    assert plain.name == "convbfp16_n1_c512_H7_W7_k512_y3_x3_p1_q1_u1_v1_l1_j1_g1"
    out = tmp_path / "a" / "b"
    assert emit_main(["../escaped: " + SMALL, "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.rglob("*.plan.json")) == ["_escaped.plan.json"]
    assert (out / "_escaped.plan.json").exists()


def test_runs_that_do_nothing_are_errors(tmp_path, capsys):
    from parity.catalog.emit import main as emit_main
    empty = tmp_path / "empty.txt"
    empty.write_text("# only a comment\n\n")
    assert parity_main(["layers", "--only", "nonexistent", "--no-verify", "--no-numerics"]) == 2
    err = capsys.readouterr().err
    assert "--only: no layer named 'nonexistent'" in err and "resnet50_b1_conv1" in err
    assert parity_main(["layers", str(empty)]) == 2
    cap = capsys.readouterr()
    assert "has no layers" in cap.err and "GREEN" not in cap.out
    assert emit_main(["--only", "typo", "--out", str(tmp_path / "o")]) == 2
    assert "--only: no layer named 'typo'" in capsys.readouterr().err
    assert emit_main(["--catalog", str(empty), "--out", str(tmp_path / "o")]) == 2
    assert "empty.txt has no layers" in capsys.readouterr().err
    assert emit_main(["", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip() == "error: empty command: expected conv, convfp16 or convbfp16"
    assert parity_main(["emit", "", "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv,msg", [
    (["--arch", "gfx950"], "error: --arch: arch gfx950 has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)"),
    (["--arch", "gfx999"], "error: --arch: arch 'gfx999' is not one of gfx1250"),
    (["--flavor", "llvm99"], "error: --flavor: unknown flavor 'llvm99' (canonical: llvm20, llvm22, llvm23; "
                             "aliases per the engine's flavor table, e.g. llvm24)"),
    (["--cus", "-5"], "error: --cus must be 0 (the arch table's count) or 1..65536, got -5"),
])
def test_emit_validates_target_up_front(argv, msg, tmp_path, capsys):
    from parity.catalog.emit import main as emit_main
    for engine in ("python", "cpp"):
        assert emit_main(["--out", str(tmp_path / "o"), "--engine", engine] + argv) == 2
        cap = capsys.readouterr()
        assert cap.err.startswith(msg) and len(cap.err.strip().splitlines()) == 1, cap.err
        assert cap.out == ""
    assert parity_main(["layers", "--no-verify", "--no-numerics"] + argv) == 2
    assert msg[len("error: "):] in capsys.readouterr().err


def test_emit_rejected_layer_is_one_error_line_and_nothing_written(tmp_path, capsys):
    # issue 24: a layer that parses but is then rejected is bad input: one line, exit 2, nothing written
    from parity.catalog.emit import main as emit_main
    cat = tmp_path / "cat.txt"
    cat.write_text(f"good: {SMALL}\nfp32: conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3\n")
    assert emit_main(["--catalog", str(cat), "--out", str(tmp_path / "o")]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and not (tmp_path / "o").exists()
    assert cap.err == (f"error: {cat}: layer fp32 is fp32 (MIOpenDriver 'conv'); the kernels are bf16/fp16: write "
                       "it as convbfp16 or convfp16, or pass --dtype bf16 or --dtype fp16 to build the plain 'conv' "
                       "layers at that precision (2 layers: the first rejected one is shown; nothing was written)\n")
    assert emit_main(["conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3", "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the command: layer conv_n1_c8_H8_W8_k8_y3_x3_p0_q0_u1_v1_l1_j1_g1 is fp32")
    assert len(err.splitlines()) == 1 and not (tmp_path / "p").exists()


def test_dtype_applies_to_plain_conv_lines_only(both, tmp_path, capsys):
    py, _ = both
    bf = parse_line("b: " + SMALL)
    assert plan_layer(py, bf, dtype="fp16").conv_spec["dtype"] == "bf16"  # the line's dtype wins
    fp32 = parse_line("f: conv -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3")
    assert plan_layer(py, fp32, dtype="fp16").conv_spec["dtype"] == "fp16"
    from parity.catalog.emit import main as emit_main
    assert emit_main(["b: " + SMALL, "--dtype", "fp16", "--out", str(tmp_path)]) == 0
    plan = json.loads((tmp_path / "b.plan.json").read_text())
    assert plan["dtype"] == "bf16" and plan["kernels"][0]["spec"]["dtype"] == "bf16"


def test_parity_layers_several_catalogs_and_flavors_in_one_run(tmp_path, capsys):
    """CI's six `parity layers` runs as one process (docs/ci.md): one report per catalog and
    flavor, in that order; the worst status wins; bad input anywhere stops before any report."""
    a, b, empty = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "empty.txt"
    a.write_text("small: " + SMALL + "\n")
    b.write_text("pw: convbfp16 -n 1 -c 64 -H 14 -W 14 -k 64 -y 1 -x 1\n")
    empty.write_text("# only a comment\n")
    rc = parity_main(["layers", str(a), str(b), "--flavor", "llvm20,llvm23", "--no-verify", "--no-numerics"])
    out = capsys.readouterr().out
    assert rc == 0, out
    heads = [ln.split("(")[1].split(")")[0] for ln in out.splitlines() if ln.startswith("parity layers: ")]
    assert heads == ["1 layer, gfx1250 llvm20", "1 layer, gfx1250 llvm23"] * 2, heads  # was "1 layers"
    closing = [ln.split(" s; ")[0] for ln in out.splitlines() if ln.startswith("1 layer")]
    assert len(closing) == 4 and all(re.fullmatch(r"1 layer, (1 distinct kernel|[02-9] distinct kernels), [\d.]+", c)
                                     for c in closing), closing
    assert out.count("RESULT: GREEN") == 4 and out.index("a.txt") < out.index("b.txt")
    for argv, msg in ((["--flavor", "llvm20,llvm19"], "unknown flavor 'llvm19'"),
                      ([str(empty)], "has no layers"),
                      (["--json", str(tmp_path / "r.json"), "--flavor", "llvm20,llvm22"], "--json: takes one")):
        assert parity_main(["layers", str(a), *argv, "--no-verify", "--no-numerics"]) == 2
        cap = capsys.readouterr()
        assert cap.out == "" and cap.err.count("\n") == 1 and msg in cap.err, cap
    assert not (tmp_path / "r.json").exists()


def test_parity_layers_refuses_a_flavor_or_catalog_given_twice(tmp_path, capsys):
    """`--flavor llvm22,llvm22` (or one catalog named twice) ran the same report twice."""
    a = tmp_path / "a.txt"
    a.write_text("small: " + SMALL + "\n")
    for argv, msg in ((["--flavor", "llvm22,llvm22"], "--flavor: llvm22 given twice"),
                      ([str(a), "--flavor", "llvm22"], f"catalog {a} given twice"),
                      # llvm24 is an alias of llvm23: the pair ran the llvm23 report twice
                      (["--flavor", "llvm23,llvm24"], "--flavor: llvm24 is an alias of llvm23, and llvm23 is given too"),
                      (["--flavor", "llvm24,llvm22,llvm23"],
                       "--flavor: llvm24 is an alias of llvm23, and llvm23 is given too")):
        assert parity_main(["layers", str(a), *argv, "--no-verify", "--no-numerics"]) == 2
        cap = capsys.readouterr()
        assert cap.out == "" and cap.err.count("\n") == 1 and msg in cap.err, cap


def test_shipped_catalog_header_names_each_reader_once():
    """The header said "read by `parity layers`, `parity emit` and `parity emit`"."""
    from parity.cli.help import EXIT_STATUS
    with open(default_catalog(), encoding="utf-8") as fh:
        head = "".join(ln for ln in fh if ln.startswith("#")).split("\n#\n")[0]
    named = re.findall(r"`parity ([\w-]+)", head)
    assert named and len(named) == len(set(named)), named
    assert set(named) <= set(EXIT_STATUS), named   # each a real subcommand

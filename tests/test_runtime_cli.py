"""``parity run``: the MIOpen parser and emit's resolution to a conv_launch spec,
clear one-line errors without a GPU, and a full run (verify, timing,
TFLOP/s) against the fake HIP with a numpy "GPU"."""
from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from fake_hip import FakeHip
from runtime_helpers import FakeCache, NumpyGpu
from parity.runtime import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


SMALL = ["convbfp16", "-n", "1", "-c", "32", "-H", "6", "-W", "6", "-k", "32", "-y", "3", "-x", "3", "-p", "1",
         "-q", "1"]
PATCH = "convbfp16 -n 1 -c 3 -H 224 -W 224 -k 768 -y 16 -x 16 -u 16 -v 16"


def resolved(*argv):
    return cli.resolve(list(argv))


def test_miopen_flags_map_to_the_layer():
    _, layer, lp = resolved("convfp16", "-n", "2", "-c", "32", "-H", "9", "-W", "11", "-k", "48", "-y", "5", "-x",
                            "3", "-p", "2", "-q", "1", "-u", "2", "-v", "1", "-l", "1", "-j", "2", "-g", "4")
    p = layer.problem
    assert layer.dtype == "fp16" and lp.conv_spec["dtype"] == "fp16"
    assert (p.N, p.C, p.H, p.W, p.K, p.Y, p.X) == (2, 32, 9, 11, 48, 5, 3)
    assert (p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.groups) == (2, 1, 2, 1, 1, 2, 4)
    # long spellings, MIOpenDriver's -i/-V, and one quoted command work as in emit
    ns, layer2, _ = resolved("MIOpenDriver convfp16 --batchsize 2 --in_channels 32 --in_h 9 --in_w 11 "
                             "--out_channels 48 --fil_h 5 --fil_w 3 --pad_h 2 --pad_w 1 --conv_stride_h 2 "
                             "--dilation_w 2 --group_count 4", "-i", "7", "-V", "0")
    assert layer2.problem == p and ns.iter == 7 and ns.verify == 0


def test_same_parser_and_defaults_as_emit():
    """Defaults are the MIOpen parser's (pad 0), not run's own."""
    _, layer, _ = resolved("convbfp16", "-n", "1", "-c", "64", "-H", "8", "-W", "8", "-k", "64", "-y", "3", "-x", "3")
    assert (layer.problem.pad_h, layer.problem.pad_w) == (0, 0)


def test_resolution_is_emits():
    """The ViT patch embed (C = 3, 16x16 stride 16): folded, vector 8, the policy's degree
    and binary, the policy's reduce kernel -- exactly what emit plans."""
    import python_engine
    from parity.catalog.emit import plan_layer
    from parity.catalog.miopen import parse_line
    _, _, lp = resolved(*PATCH.split())
    ref = plan_layer(python_engine, parse_line(PATCH), lower=False)
    assert lp.fold == ref.fold == 16 and lp.conv_spec["vector_a"] == 8
    assert lp.policy_text == ref.policy_text and lp.launch_spec == ref.launch_spec
    assert [k[3] for k in lp.kernels] == [k[3] for k in ref.kernels]


def test_kernel_choice_overrides():
    _, _, lp = resolved(*SMALL, "--split-k", "8")
    assert lp.conv_spec["split_k"] == 8 and lp.launch_spec["degree"] == 8 and lp.binary == "two_stage"
    _, _, lp = resolved(*SMALL, "--split-k", "1")
    assert lp.binary == "plain" and lp.launch_spec["degree"] == 1
    _, _, lp = resolved(*SMALL, "--cluster", "3")
    assert lp.binary == "cluster" and lp.conv_spec["split_k_cluster"] == 3 and lp.launch_spec["degree"] == 3
    _, _, lp = resolved(*SMALL, "--split-k=auto", "--tile", "32x32x64", "--waves", "2x1", "--epilogue", "cshuffle")
    c = lp.conv_spec
    assert (c["tile_m"], c["tile_n"], c["tile_k"], c["waves_m"], c["waves_n"], c["epilogue"]) == \
        (32, 32, 64, 2, 1, "cshuffle")


def _main(argv, hip=None):
    out = io.StringIO()
    rc = cli.main(argv, hip=hip, out=out)
    return rc, out.getvalue()


@pytest.mark.parametrize("argv,msg", [
    (["conv"] + SMALL[1:], "error: command 'conv' is fp32: this runtime builds bf16 and fp16 kernels"),
    (SMALL + ["-F", "2"], "error: flag -F 2 is not supported: only -F 1 (forward)"),
    (SMALL + ["--cluster", "4", "--flavor", "llvm22"],
     "error: launch not admitted: split_k_cluster requires flavor llvm23"),
    (SMALL[:-6], "error: missing flag -x (--fil_w); -n -c -H -W -k -y -x are required"),
    (SMALL[1:], "error: command '-n' is not supported"),
    ([], "error: no layer: give one MIOpenDriver command"),
    (SMALL + ["--split-k", "two"], "error: --split-k must be auto, -1 (the policy's degree), 0 (a sweep) or a "
                                   "degree >= 1 (1 = no split), got 'two'"),
    (SMALL + ["--split-k", "-2"], "error: --split-k must be auto, -1 (the policy's degree), 0 (a sweep) or a "
                                  "degree >= 1 (1 = no split), got '-2'"),
    (SMALL + ["--split-k", "0", "--split-k-degrees", "2,x"],
     "error: --split-k-degrees must be degrees >= 1 joined by commas (e.g. 2,4,8), got '2,x'"),
    (SMALL + ["--split-k-degrees", "2,4"], "error: --split-k-degrees needs --split-k 0 (the sweep)"),
    (SMALL + ["--select", "best"], "error: --select must be one of seed, model, rules, got 'best'"),
    (SMALL + ["--split-k", "2", "--cluster", "4"], "error: give --split-k or --cluster, not both"),
    (SMALL + ["--cluster", "1"], "error: --cluster must be a slice count >= 2, got '1'"),
    (SMALL + ["--tile", "abc"], "error: --tile must be 3 positive integers joined by x (e.g. 64x64x32), got 'abc'"),
    (SMALL + ["--waves", "2"], "error: --waves must be 2 positive integers joined by x (e.g. 2x2), got '2'"),
    (SMALL + ["--tile", "48x48x32"], "error: launch not admitted: waves 2x2 must divide the tile 48x48"),
    (SMALL + ["--flavor", "llvm99"], "error: --flavor: unknown flavor 'llvm99' (canonical: llvm20, llvm22, llvm23;"),
    (SMALL + ["--cus", "-1"], "error: --cus must be 0 (the arch table's count) or 1..65536, got -1"),
    (SMALL + ["--split-k"], "error: --split-k needs a value"),
])
def test_rejections_are_one_line(argv, msg, capsys):
    rc, _ = _main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(msg) and len(err.strip().splitlines()) == 1, err


def test_no_gpu_is_a_clear_message_without_traceback():
    """Here (no hip-python, no GPU) the real command fails with one error line."""
    try:
        import hip  # noqa: F401
        pytest.skip("hip-python is installed here; the no-HIP message is tested with the fake")
    except ImportError:
        pass
    r = subprocess.run([sys.executable, "-m", "parity", "run"] + SMALL + ["--split-k", "auto"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("error: the HIP runtime is not available: cannot import hip-python"), r.stderr


def test_fake_device_that_is_not_gfx1250(capsys):
    rc, _ = _main(SMALL + ["--split-k", "auto"], hip=FakeHip(arch="gfx942"))
    assert rc == 2 and capsys.readouterr().err.strip() == "error: no gfx1250 GPU: device 0 is gfx942"


@pytest.mark.parametrize("layer,extra", [
    (SMALL, ["--split-k", "1"]), (SMALL, ["--split-k", "3"]), (SMALL, ["--cluster", "2"]),
    (["convfp16"] + SMALL[1:], ["--split-k", "auto"]),
    # the default --split-k -1 (issue 37): the policy's split-K binary on a layer it splits (degree 8)
    ("convbfp16 -n 1 -c 64 -H 7 -W 7 -k 64 -y 3 -x 3 -p 1 -q 1".split(), []),
    (PATCH.replace("-H 224 -W 224 -k 768", "-H 32 -W 48 -k 64").split(), ["--split-k", "auto"]),
], ids=["plain", "two_stage", "cluster", "auto", "default", "patch_embed_folded"])
def test_full_run_on_the_fake(layer, extra, monkeypatch):
    import parity.runtime as R
    fake = FakeHip()
    dtype = "fp16" if layer[0] == "convfp16" else "bf16"
    fake.on_launch = NumpyGpu(dtype)
    monkeypatch.setattr(R, "CodeObjectCache", lambda *_a, **_k: FakeCache())
    rc, out = _main(layer + extra + ["-i", "4"], hip=fake)
    assert rc == 0, out
    assert "verify: OK" in out and "time: median 0.5000 ms over 4 launches" in out
    assert "TFLOP/s" in out and "kernel: conv_implicit_gemm_" in out
    if "patch" in str(layer):
        assert "policy: fold 16 (folded C=48 W=3 X=1 stride_w=1 pad_w=0)" in out and "_va8_vb8_" in out


def test_main_module_usage():
    """The engine package holds the generator only: ``python -m python_engine``
    names the parity commands in one line and exits 2, whatever it is given."""
    for extra in ([], ["emit"], ["run", "--help"]):
        r = subprocess.run([sys.executable, "-m", "python_engine", *extra], capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr == ("error: python -m python_engine has no commands: use `parity emit ...` or "
                            "`parity run ...` (docs/cli.md)\n")


def test_convrun_builds_the_policys_reduce_kernel():
    """run hands ConvRun the reduce kernel the policy selected (as emit's plan); an
    unrolled degree that is not the plan's ks_count is refused (--split-k 8: the perf
    model's own choice for the patch embedding is a cluster binary)."""
    from parity.runtime import ConvRun, LaunchConfigError
    _, _, lp = resolved("--split-k", "8", *PATCH.split())
    rspec = lp.kernels[1][2]
    assert rspec["degree"] == lp.plan["ks_count"] == 8 and rspec["vector"] == 8
    run = ConvRun(lp.launch_spec, "gfx1250", "llvm23", cache=FakeCache(), reduce=rspec)
    assert run.red_code.kernel == lp.kernels[1][3] == "conv_fwd_split_k_reduce_bf16_v8_t256_d8"
    with pytest.raises(LaunchConfigError, match="ks_count 8 does not match the reduce kernel.s degree 4"):
        ConvRun(lp.launch_spec, "gfx1250", "llvm23", cache=FakeCache(), reduce=dict(rspec, degree=4))

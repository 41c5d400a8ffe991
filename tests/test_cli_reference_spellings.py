"""The reference harness's spellings (issue 38 item 7, docs/cli.md "The reference's spellings"):
``parity --write [options]`` is ``parity write [options]``, ``--check`` is ``check``, and ``--only``
takes a family token (``conv``) and an arch (``gfx1250``), the two kinds intersecting."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parity.app.main import reference_spelling
from parity.cli.common import parse_only
from parity.config import ConfigError, load_families

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = {f.name: f for f in load_families()}
CONV = sorted(n for n in FAMILIES if "conv" in n.split("_"))


def _arch_names(fam: str, arch: str) -> set[str]:
    return {c.name for c in FAMILIES[fam].configs if c.arch == arch}


def test_the_shipped_families_have_what_the_tests_select():
    assert CONV == ["conv_abi", "conv_fwd_split_k_reduce", "conv_implicit_gemm", "conv_launch"]
    # gfx1250 narrows at least one conv family and keeps at least one whole (so both paths run)
    assert any(0 < len(_arch_names(f, "gfx1250")) < len(FAMILIES[f].configs) for f in FAMILIES)
    assert len(_arch_names("ir_core", "gfx942")) >= 1


def test_exact_names_are_unchanged():
    assert parse_only("ir_core,conv_abi/x") == (["ir_core", "conv_abi"], {"conv_abi": {"x"}})
    assert parse_only(None) == (None, {})
    with pytest.raises(ValueError):
        parse_only(",")


def test_family_token_selects_every_family_with_it():
    assert parse_only("conv") == (CONV, {})
    split = sorted(n for n in FAMILIES if "split" in n.split("_"))
    assert split == ["conv_fwd_split_k_reduce", "split_k_policy"]
    assert parse_only("split") == (split, {})
    assert parse_only("conv,ir_core") == (CONV + ["ir_core"], {})


def test_arch_selects_the_configs_built_for_it_and_intersects_with_families():
    fams, names = parse_only("conv,gfx1250")
    assert set(fams) == {f for f in CONV if _arch_names(f, "gfx1250")}
    for f in fams:
        want = _arch_names(f, "gfx1250")
        if want == {c.name for c in FAMILIES[f].configs}:
            assert f not in names  # every config of the family: it stays whole
        else:
            assert names[f] == want
    fams, names = parse_only("gfx942")  # an arch alone: every family's configs for it
    assert set(fams) == {f for f in FAMILIES if _arch_names(f, "gfx942")}
    assert names["ir_core"] == _arch_names("ir_core", "gfx942")
    # two arches add up; an exact FAMILY/NAME item is narrowed by the arch too
    fams, names = parse_only("ir_core,gfx942,gfx950")
    assert names == {"ir_core": _arch_names("ir_core", "gfx942") | _arch_names("ir_core", "gfx950")}
    one = sorted(_arch_names("ir_core", "gfx942"))[0]
    assert parse_only(f"ir_core/{one},gfx942") == (["ir_core"], {"ir_core": {one}})


def test_selectors_that_select_nothing_are_refused():
    if not [c for c in FAMILIES["conv_abi"].configs if c.arch != "gfx1250"]:
        with pytest.raises(ConfigError, match="no config of the selected families is built for gfx942"):
            parse_only("conv_abi,gfx942")
    fams, _ = parse_only("nosuch")  # neither family, token nor arch: left for the loader to refuse
    assert fams == ["nosuch"]
    with pytest.raises(ConfigError, match="unknown family: nosuch"):
        load_families(only=fams)


def test_reference_spelling_rewrites_to_the_subcommand():
    assert reference_spelling(["--write", "--only", "ir_core"]) == ["write", "--only", "ir_core"]
    assert reference_spelling(["--only", "ir_core", "--check"]) == ["check", "--only", "ir_core"]
    assert reference_spelling(["--color", "never", "--write"]) == ["write", "--color", "never"]
    assert reference_spelling(["check", "--only", "x"]) == ["check", "--only", "x"]
    assert reference_spelling(["--write", "--check"]) == ["--write", "--check"]  # argparse names the conflict


def _run(*argv, cwd=ROOT, env=None):
    e = {k: v for k, v in os.environ.items() if k != "CI"}
    e.update(env or {})
    return subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True, env=e, timeout=600)


def test_parity_dash_dash_write_reblesses_like_write(tmp_path):
    """The same MISSING entry re-blessed both ways: same shard bytes, same report."""
    dirs = []
    for name in ("a", "b"):
        d = tmp_path / name
        shutil.copytree(ROOT / "golden", d)
        lines = (d / "ir_core.json").read_text().splitlines(keepends=True)
        gone = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith('"llvm20/buffer_copy_gfx942"'))
        del lines[gone]
        (d / "ir_core.json").write_text("".join(lines))
        dirs.append(d)
    outs = []
    for argv, d in ((["--write", "--only", "ir_core"], dirs[0]), (["write", "--only", "ir_core"], dirs[1])):
        r = _run("-m", "parity", *argv, "--golden-dir", str(d), "--json", str(tmp_path / f"{d.name}.json"))
        assert r.returncode == 0, r.stderr
        outs.append(re.sub(r", [0-9.]+s$", "", r.stdout.replace(str(d), "DIR"), flags=re.M))  # no timings
    assert outs[0] == outs[1]
    assert "ADDED ir_core/buffer_copy_gfx942@llvm20" in outs[0]
    assert (dirs[0] / "ir_core.json").read_bytes() == (dirs[1] / "ir_core.json").read_bytes() \
        == (ROOT / "golden" / "ir_core.json").read_bytes()
    docs = [json.loads((tmp_path / f"{n}.json").read_text()) for n in ("a", "b")]
    assert docs[0]["command"] == docs[1]["command"] == "write"
    assert docs[0]["changed_entries"] == docs[1]["changed_entries"] == 1
    # under CI it is refused exactly as `parity write`
    r = _run("-m", "parity", "--write", "--only", "ir_core", "--golden-dir", str(dirs[0]), env={"CI": "1"})
    assert r.returncode == 2 and r.stderr.startswith("error: parity write refuses to run when CI is set")
    r = _run(str(ROOT / "parity" / "check_byte_identity.py"), "--write", "--only", "ir_core", env={"CI": "1"})
    assert r.returncode == 2 and r.stderr.startswith("error: parity write refuses to run when CI is set")


def test_check_byte_identity_only_conv_gfx1250(tmp_path):
    out = tmp_path / "r.json"
    r = _run(str(ROOT / "parity" / "check_byte_identity.py"), "--only", "conv,gfx1250", "--flavor", "llvm23",
             "--json", str(out))
    assert r.returncode == 0, r.stderr
    ran = {(x["family"], x["config"]) for x in json.loads(out.read_text())["results"]}
    want = {(f, c.name) for f in CONV for c in FAMILIES[f].configs if c.arch == "gfx1250" and "llvm23" in c.flavors}
    assert ran == want and len(want) > 100
    r = _run("-m", "parity", "check", "--only", "conv,gfx1250", "--flavor", "llvm23")
    assert r.returncode == 0 and "RESULT: GREEN" in r.stdout

"""``parity layers`` streams its layers (issue 39): one plan per distinct command, one IR
text per distinct kernel, the rows and the exit status as before; its catalog cap is
larger than emit's because of it."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from parity.app.main import main as parity_main
from parity.base.input_files import MAX_CATALOG_BYTES, MAX_LAYERS_CATALOG_BYTES
from parity.catalog import layers as LY

ROOT = Path(__file__).resolve().parents[1]
A = "MIOpenDriver convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 -p 1 -q 1"
B = "MIOpenDriver convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1"


def _main(argv) -> int:
    try:
        return parity_main(argv)
    except SystemExit as e:
        return e.code


def _catalog(tmp_path, n: int) -> Path:
    cat = tmp_path / "net.txt"
    cat.write_text("".join(f"l{i:03d}: {(A, B)[i % 2]}\n" for i in range(n)))
    return cat


def test_repeated_commands_are_planned_once_and_every_layer_gets_its_row(tmp_path, capsys, monkeypatch):
    calls = []
    real = LY.plan_layer

    def counting(E, layer, *a, **k):
        calls.append((E.ENGINE, layer.name, k.get("lower", True)))
        return real(E, layer, *a, **k)
    monkeypatch.setattr(LY, "plan_layer", counting)
    import parity.catalog.emit as EM
    monkeypatch.setattr(EM, "plan_layer", counting)
    cat = _catalog(tmp_path, 12)
    code = _main(["layers", str(cat), "--no-verify", "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = [ln.split()[0] for ln in out.splitlines() if ln.startswith("l0")]
    assert rows == [f"l{i:03d}" for i in range(12)]  # one row per layer, catalog order
    planned = [c for c in calls if c[2]]
    assert sorted(planned) == [("cpp", "l000", True), ("cpp", "l001", True),
                               ("python", "l000", True), ("python", "l001", True)]
    # the numerics re-plan (no IR: the kernels' text comes from the one kept per kernel), once per command
    assert sorted(c for c in calls if not c[2]) == [("python", "l000", False), ("python", "l001", False)]
    assert out.count("numerics: real N1 8x8x64 K64 g1 Kgemm 576") == 6
    assert "12 layers, " in out.splitlines()[-1] and "RESULT: GREEN (0 failing)" in out.splitlines()[-1]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [r["layer"] for r in doc["layers"]] == [f"l{i:03d}" for i in range(12)]
    assert doc["layers"][0]["numerics"] == "ok" and doc["layers"][2] == {**doc["layers"][0], "layer": "l002"}


def test_a_rejected_layer_is_still_named_in_its_own_row(tmp_path, capsys, monkeypatch):
    # a rejection names the layer: it is never reused for another layer with the same command
    real = LY._plan_both

    def one_engine_rejects(py, cpp, layer, args):
        if layer.name in ("l001", "l003"):
            raise LY.EmitError(f"layer {layer.name}: refused")
        return real(py, cpp, layer, args)
    monkeypatch.setattr(LY, "_plan_both", one_engine_rejects)
    code = _main(["layers", str(_catalog(tmp_path, 4)), "--no-verify", "--no-numerics"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert [ln for ln in out if "REJECTED" in ln] == [f"{'l001':34s} REJECTED: layer l001: refused",
                                                       f"{'l003':34s} REJECTED: layer l003: refused"]
    assert out[-1].endswith("RESULT: RED (2 failing)")


def test_the_layers_catalog_cap_fits_100k_layers_and_emit_keeps_its_own():
    assert MAX_CATALOG_BYTES == 4 << 20 and MAX_LAYERS_CATALOG_BYTES == 32 << 20
    assert 100_000 * 200 < MAX_LAYERS_CATALOG_BYTES


def test_the_scale_bench_writes_a_catalog_of_distinct_names_and_few_commands(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_layers_scale", ROOT / "bench" / "layers_scale.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    size = mod.write_catalog(tmp_path / "c.txt", 1000, 3)
    lines = (tmp_path / "c.txt").read_text().splitlines()
    assert size == (tmp_path / "c.txt").stat().st_size and len(lines) == 1000
    assert len({ln.split(":", 1)[0] for ln in lines}) == 1000
    assert len({ln.split(":", 1)[1] for ln in lines}) == 3

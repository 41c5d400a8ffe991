"""Issue 24, the catalog and command-line input side: catalogs that are not
UTF-8, not regular files or too large; integer options in ASCII digits only;
a layer rejected after parsing; repeated MIOpenDriver flags; argv bytes that
are not UTF-8; manifests that are not regular files. Each is one ``error:``
line and exit 2, nothing written, no traceback, no hang."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.catalog.model import catalog_predictions
from parity.app.main import main as parity_main
from parity.catalog.emit import main as emit_main
from parity.base.input_files import (MAX_CATALOG_BYTES, MAX_CATALOG_LINE_BYTES, MAX_LAYERS_CATALOG_BYTES,
                                     InputFileError, read_bytes)
from parity.catalog.miopen import ProblemInputError, parse_command_line, parse_line, read_catalog

REPO = Path(__file__).resolve().parents[1]
LAYER = "MIOpenDriver convbfp16 -n 1 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 -p 1 -q 1"


def _main(argv) -> int:
    """``parity ARGV``'s exit status (argparse's errors exit through SystemExit)."""
    try:
        return parity_main(argv)
    except SystemExit as e:
        return e.code


def _one_error(capsys, code, want_code=2) -> str:
    cap = capsys.readouterr()
    assert code == want_code, cap.err
    lines = cap.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), cap.err
    assert "Traceback" not in cap.err
    return lines[0]


def _entry_points(path, tmp_path):
    """The three ways a catalog is read: `parity layers FILE`, `parity emit
    --catalog FILE` and the `parity.catalog.emit.main` entry point."""
    return [lambda: _main(["layers", str(path), "--no-verify", "--no-numerics"]),
            lambda: _main(["emit", "--catalog", str(path), "--out", str(tmp_path / "o1")]),
            lambda: emit_main(["--catalog", str(path), "--out", str(tmp_path / "o2")])]


# -- catalog files (findings 12, 13) ---------------------------------------------------------

def test_non_utf8_catalog_names_file_and_byte_offset(tmp_path, capsys):
    # finding 12: one non-UTF-8 byte (the input: an 0xff in a flag value)
    cat = tmp_path / "bad.txt"
    first = f"a: {LAYER}\n".encode()
    cat.write_bytes(first + f"b: {LAYER} -t ".encode() + b"\xff\n")
    off = len(first) + len(f"b: {LAYER} -t ")
    for run in _entry_points(cat, tmp_path):
        line = _one_error(capsys, run())
        assert line == (f"error: catalog {cat}: byte offset {off} (line 2, byte {off - len(first) + 1} of the "
                        f"line): byte 0xff is not UTF-8 text")
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()
    with pytest.raises(ProblemInputError, match=f"byte offset {off}"):
        catalog_predictions(str(cat))


def test_catalog_with_a_byte_order_mark_is_refused_as_such(tmp_path, capsys):
    # an editor's UTF-8 BOM (with CRLF, which is accepted): before, the BOM became part of the
    # first layer's name and the error blamed the name
    cat = tmp_path / "bom.txt"
    cat.write_bytes(b"\xef\xbb\xbf" + f"a: {LAYER}\r\n".encode())
    for run in _entry_points(cat, tmp_path):
        assert _one_error(capsys, run()) == (f"error: catalog {cat}: starts with a UTF-8 byte order mark "
                                             "(U+FEFF); save it without one")
    cat.write_bytes(f"a: {LAYER}\r\n".encode())  # the same catalog without it reads
    assert [layer.name for layer in read_catalog(cat)] == ["a"]


@pytest.mark.parametrize("kind", ["directory", "dev_zero", "dev_null_dir"])
def test_catalog_that_is_not_a_regular_file(tmp_path, capsys, kind):
    path = {"directory": tmp_path, "dev_zero": Path("/dev/zero"), "dev_null_dir": Path("/dev")}[kind]
    want = "a character device" if kind == "dev_zero" else "a directory"
    for run in _entry_points(path, tmp_path):
        assert _one_error(capsys, run()) == f"error: catalog {path}: is {want}, not a regular file"


def test_fifo_catalog_is_refused_without_opening_it(tmp_path):
    # finding 13: a FIFO hung `layers` and `emit` (nobody writes to it); in a
    # child with a timeout, so a regression fails instead of hanging the suite
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in (["layers", str(fifo), "--no-verify", "--no-numerics"],
                 ["emit", "--catalog", str(fifo), "--out", str(tmp_path / "o")]):
        r = subprocess.run([sys.executable, "-m", "parity", *args], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 2, r.stderr
        err = [ln for ln in r.stderr.splitlines() if not ln.startswith("parity: golden")]
        assert err == [f"error: catalog {fifo}: is a named pipe (FIFO), not a regular file"]


def test_catalog_size_cap_is_checked_before_reading(tmp_path, capsys):
    # `parity layers` streams its layers (issue 39): its cap is 32 MiB, emit's stays 4 MiB
    for i, run in enumerate(_entry_points(tmp_path / "big.txt", tmp_path)):
        cap, mib = (MAX_LAYERS_CATALOG_BYTES, "32.0") if i == 0 else (MAX_CATALOG_BYTES, "4.0")
        big = tmp_path / "big.txt"
        with open(big, "wb") as f:  # sparse: the size is checked from stat, nothing is read
            f.truncate(cap + 1)
        line = _one_error(capsys, run())
        assert line == (f"error: catalog {big}: is {cap + 1} bytes ({mib} MiB); a catalog is at most "
                        f"{cap} bytes ({mib} MiB)")
    sparse = tmp_path / "sparse.txt"
    with open(sparse, "wb") as f:
        f.truncate(10 << 30)  # the 10 GiB sparse file
    with pytest.raises(ProblemInputError, match="is 10737418240 bytes"):
        read_catalog(sparse)


def test_catalog_line_cap(tmp_path, capsys):
    cat = tmp_path / "long.txt"
    cat.write_text(f"a: {LAYER}\n# {'x' * MAX_CATALOG_LINE_BYTES}\n")
    for run in _entry_points(cat, tmp_path):
        assert _one_error(capsys, run()) == (f"error: catalog {cat}: line 2 is {MAX_CATALOG_LINE_BYTES + 2} bytes; "
                                             f"a catalog line is at most {MAX_CATALOG_LINE_BYTES} bytes")
    cat.write_text(f"a: {LAYER}\n# {'x' * (MAX_CATALOG_LINE_BYTES - 2)}\r\n")  # at the cap, CRLF: read
    assert [l.name for l in read_catalog(cat)] == ["a"]


_COL = len(f"a: {LAYER}") + 1  # the column just past a catalog line "a: LAYER"


@pytest.mark.parametrize("text,where", [
    (f"a: {LAYER}\u2028b: {LAYER}\n", f"line 1, column {_COL}: U+2028 is a line or paragraph separator"),
    (f"a: {LAYER} -t 1\u2029\n", f"line 1, column {_COL + 5}: U+2029 is a line or paragraph separator"),
    (f"a: {LAYER}\x85\n", f"line 1, column {_COL}: U+0085 is a control character"),
    (f"a: {LAYER}\rb: x\n", f"line 1, column {_COL}: U+000D is a control character"),
    (f"# ok\na: {LAYER} -t \x1b[2J\n", f"line 2, column {_COL + 4}: U+001B is a control character"),
])
def test_catalog_control_and_separator_characters(tmp_path, capsys, text, where):
    cat = tmp_path / "c.txt"
    cat.write_bytes(text.encode())
    for run in _entry_points(cat, tmp_path):
        assert _one_error(capsys, run()) == f"error: catalog {cat}: {where}"


def test_catalog_file_name_is_escaped(tmp_path, capsys):
    cat = tmp_path / "a\nRESULT: GREEN"
    cat.write_bytes(b"\xff")
    line = _one_error(capsys, _main(["layers", str(cat), "--no-verify", "--no-numerics"]))
    assert "a\\nRESULT: GREEN" in line


def test_shipped_catalog_is_within_the_caps():
    from parity.catalog.emit import default_catalog
    data = Path(default_catalog()).read_bytes()
    assert len(data) <= MAX_CATALOG_BYTES // 100
    assert max(len(l) for l in data.split(b"\n")) <= MAX_CATALOG_LINE_BYTES // 10
    assert len(read_catalog(default_catalog())) > 40


# -- integer options: ASCII digits only (finding 15) ----------------------------------------

_INT_OPTIONS = [
    ["emit", LAYER, "--cus", "{}"],
    ["layers", "--cus", "{}"],
    ["layers", "-j", "{}"],
    ["check", "-j", "{}"],
    ["list", "--jobs", "{}"],
    ["verify", "-j", "{}"],
    ["numerics", "-j", "{}"],
    ["fuzz", "-j", "{}"],
    ["fuzz", "--seed", "{}"],
    ["fuzz", "--specs", "{}"],
    ["aot", "--shard", "{}/2"],
]


@pytest.mark.parametrize("value", ["\u0661\u0662", "1_0", " 4", "\uff14", "4\u2028"])
@pytest.mark.parametrize("argv", _INT_OPTIONS, ids=lambda a: " ".join(a[:1] + a[-2:-1]))
def test_integer_options_take_ascii_digits_only(argv, value, capsys):
    line = _one_error(capsys, _main([a.format(value) for a in argv]))
    assert "ASCII" in line and "\u2028" not in line


@pytest.mark.parametrize("flag", ["--cus", "-i", "--iter", "--warmup", "--seed", "-V"])
def test_run_integer_options_take_ascii_digits_only(flag):
    from parity.runtime.cli import _parser
    with pytest.raises(SystemExit) as ei:
        _parser().parse_args([flag, "\u0661\u0662"])
    assert ei.value.code == 2


@pytest.mark.parametrize("value", ["\u0661", "1_0", "inf", "nan", "\uff11"])
def test_seconds_options_take_ascii_decimal_only(value, capsys):
    line = _one_error(capsys, _main(["fuzz", "--seconds", value]))
    assert "--seconds" in line
    line = _one_error(capsys, _main(["verify", "--compile-timeout", value]))
    assert "--compile-timeout" in line


def test_ascii_integers_still_work(tmp_path, capsys):
    assert _main(["emit", LAYER, "--cus", "+64", "--out", str(tmp_path)]) == 0
    plan = json.loads(next(tmp_path.glob("*.plan.json")).read_text())
    assert plan["policy"]["cus"] == 64


def test_unrecognized_argument_cannot_forge_a_line(capsys):
    line = _one_error(capsys, _main(["check", "x\nRESULT: GREEN\u2028y"]))
    assert "x\\nRESULT: GREEN\\u2028y" in line


# -- a layer rejected after parsing ------------------------------------------------------------

HUGE_H = "MIOpenDriver convbfp16 -n 1 -c 64 -H 2147483647 -W 8 -k 64 -y 3 -x 3"
NO_CANDIDATE = "MIOpenDriver convbfp16 -n 4096 -c 64 -H 512 -W 512 -k 64 -y 1 -x 1"


@pytest.mark.parametrize("engine", ["python", "cpp"])
def test_layer_rejected_after_parsing_is_one_line_exit_2(tmp_path, capsys, engine):
    out = tmp_path / "o"
    line = _one_error(capsys, _main(["emit", HUGE_H, "--engine", engine, "--out", str(out)]))
    assert line == ("error: the command: layer convbfp16_n1_c64_H2147483647_W8_k64_y3_x3_p0_q0_u1_v1_l1_j1_g1: "
                    "kernel argument M = 12884901870 exceeds the i32 range (max 2147483647)")
    line = _one_error(capsys, _main(["emit", NO_CANDIDATE, "--engine", engine, "--out", str(out)]))
    assert line == ("error: the command: layer convbfp16_n4096_c64_H512_W512_k64_y1_x1_p0_q0_u1_v1_l1_j1_g1: no "
                    "kernel for gfx1250/llvm23: x_bytes = 137438953472 must be below 2^31 (the kernel's buffer offsets are 32-bit)")
    assert not out.exists()


def test_layers_rejected_by_both_engines_is_one_line_exit_2(tmp_path, capsys):
    cat = tmp_path / "c.txt"
    cat.write_text(f"ok: {LAYER}\nbig: {HUGE_H}\n")
    line = _one_error(capsys, _main(["layers", str(cat), "--no-verify", "--no-numerics"]))
    assert line == (f"error: {cat}: layer big: kernel argument M = 12884901870 exceeds the i32 range "
                    f"(max 2147483647) (2 layers: the first rejected one is shown; nothing was written)")
    cat.write_text(f"none: {NO_CANDIDATE}\n")
    line = _one_error(capsys, _main(["layers", str(cat), "--no-verify", "--no-numerics", "--select", "model"]))
    assert line.endswith("no candidate is admitted; the seed policy selects no admitted binary: x_bytes = "
                         "137438953472 must be below 2^31 (the kernel's buffer offsets are 32-bit)")


# -- MIOpenDriver flags given twice; argv bytes that are not UTF-8 -----------------------------

@pytest.mark.parametrize("extra,flag", [
    ("--spatial_dim 2 --spatial_dim 2", "--spatial_dim"),
    ("--spatial_dim 2 -_ 3", "-_"),
    ("--in_layout NHWC -I NHWC", "-I"),
    ("--mode conv -m conv", "-m"),
    ("--spatial_dim 3 --in_d 4 -! 4", "-!"),
    ("-n 1", "-n"),
])
def test_repeated_flags_are_refused(extra, flag):
    with pytest.raises(ProblemInputError) as ei:
        parse_line(f"{LAYER} {extra}")
    assert str(ei.value) == f"flag {flag} is given twice"


def test_depth_flags_take_ascii_digits():
    with pytest.raises(ProblemInputError, match=r"flag --in_d needs a decimal integer .* got '\u0664'"):
        parse_line(f"{LAYER} --spatial_dim 3 --in_d \u0664")


@pytest.mark.parametrize("value,why", [
    ("\udcff", "byte 0xff is not UTF-8"),            # what os.fsdecode makes of the byte 0xff in argv
    ("a\u2028b", "U+2028 is a line or paragraph separator"),
    ("\x1b[2J", "U+001B is a control character"),
])
def test_command_line_bytes_that_are_not_text(tmp_path, capsys, value, why):
    cmd = f"{LAYER} -t {value}"
    col = len(LAYER) + 5 + (1 if value.startswith("a") else 0)
    with pytest.raises(ProblemInputError) as ei:
        parse_command_line(cmd)
    assert str(ei.value) == f"the command: column {col}: {why}"
    line = _one_error(capsys, _main(["emit", cmd, "--out", str(tmp_path / "o")]))
    assert line == f"error: the command: column {col}: {why}"
    assert not (tmp_path / "o").exists()


def test_non_utf8_argv_never_reaches_plan_json(tmp_path):
    # the input: a 0xff byte in the value of an ignored flag (-t), in a real argv
    r = subprocess.run([sys.executable, "-m", "parity", "emit", os.fsencode(LAYER + " -t ") + b"\xff",
                        "--out", str(tmp_path / "o")], cwd=tmp_path, capture_output=True, timeout=120)
    assert r.returncode == 2 and b"Traceback" not in r.stderr
    assert b"byte 0xff is not UTF-8" in r.stderr and not (tmp_path / "o").exists()
    r = subprocess.run([sys.executable, "-m", "parity", "emit", LAYER + " -t 1", "--out", str(tmp_path / "p")],
                       cwd=tmp_path, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    raw = next((tmp_path / "p").glob("*.plan.json")).read_bytes()
    raw.decode("utf-8")  # strict UTF-8 and strict JSON: no \ud8xx escapes
    assert b"\\ud" not in raw.lower() and json.loads(raw)["command"] == LAYER + " -t 1"


# -- manifests and the files they name ---------------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "directory", "not_utf8"])
def test_aot_validate_refuses_files_that_are_not_manifests(tmp_path, capsys, kind):
    pytest.importorskip("elftools")
    path = tmp_path / "m.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path = Path("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_bytes(b'{"format": "\xff"}')
    line = _one_error(capsys, _main(["aot", "validate", str(path)]))
    want = {"fifo": "is a named pipe (FIFO), not a regular file", "dev_zero": "is a character device, not a "
            "regular file", "directory": "is a directory, not a regular file"}
    if kind in want:
        assert line == f"error: AOT manifest {path}: {want[kind]}"
    else:
        assert line.startswith(f"error: AOT manifest {path} is not UTF-8 JSON (")


def test_runtime_manifest_code_object_that_is_a_fifo(tmp_path):
    pytest.importorskip("elftools")
    from parity.launch.errors import CodeObjectError
    from parity.runtime.manifest import MANIFEST_FORMAT, MANIFEST_VERSION, AotManifest
    from parity.runtime.objects import text_sha256
    os.mkfifo(tmp_path / "k.co")
    (tmp_path / "manifest.json").write_text(json.dumps({
        "format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "arch": "gfx1250", "flavor": "llvm23",
        "jobs": [{"kernel": "k", "ir_sha256": text_sha256("ir"), "code_object": "k.co"}]}))
    m = AotManifest(str(tmp_path / "manifest.json"))
    with pytest.raises(CodeObjectError, match=r"code object .*k\.co: is a named pipe \(FIFO\), not a regular file"):
        m.code_object("k", "ir", "gfx1250", "llvm23")


def test_read_bytes_refuses_a_file_that_grows_past_its_cap(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x" * 10)
    assert read_bytes(p, "thing", 10) == b"x" * 10
    with pytest.raises(InputFileError, match="is 10 bytes; a thing is at most 9 bytes"):
        read_bytes(p, "thing", 9)


def test_configs_module_that_is_a_fifo_is_refused_before_import(tmp_path, monkeypatch, capsys):
    from parity.config import ConfigError, load_families
    pkg = tmp_path / "fifo_configs_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    os.mkfifo(pkg / "zz_family.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as ei:
        load_families("fifo_configs_pkg")
    assert str(ei.value) == f"configs module {pkg / 'zz_family.py'}: is a named pipe (FIFO), not a regular file"
    line = _one_error(capsys, _main(["list", "--configs", "fifo_configs_pkg"]))
    assert "is a named pipe (FIFO)" in line

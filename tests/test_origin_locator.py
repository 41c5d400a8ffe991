"""The divergence locator (issue 23 item 5): origin recording in both engines
never changes a byte, names a real builder call for every instruction and
block label, is off by default, crosses the C API (cpe_origins_record /
cpe_origins_take), and `parity diff --origin` / `parity check --origin`
name the .py and the .cpp line behind a planted one-engine slip."""

import json
import re
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import cpp_engine
import python_engine
from cpp_engine._binding import ffi, lib
from parity.app.main import main as parity_main
from parity.config import load_families
from python_engine.ir.builder import IRBuilder

REPO = Path(__file__).resolve().parents[1]
ENGINES = {"python": python_engine, "cpp": cpp_engine}
REDUCE = ("conv_fwd_split_k_reduce", {"dtype": "bf16", "vector": 2, "degree": 0}, "gfx1250", "llvm23")

PY_METHODS = {n for n in vars(IRBuilder) if not n.startswith("_")} - {"position"}  # position emits nothing
CPP_METHODS = set(re.findall(r"\b(\w+)\([^;()]*(?:\([^;()]*\)[^;()]*)*Here here = \{\}\);",
                             re.sub(r"//[^\n]*", "", (REPO / "cpp_engine/src/ir/builder.h").read_text())))
#: the module's own recorded call: an LDS global's line names its add_lds call
LDS_METHODS = set(re.findall(r"\b(add_lds)\([^;]*Here here = \{\}\);",
                             (REPO / "cpp_engine/src/ir/function.h").read_text()))
assert LDS_METHODS == {"add_lds"}  # Module::add_lds records its caller as the builders do


def one_config_each():
    """Every config of every family at one flavor it applies to (llvm23 first)."""
    for fam in load_families():
        for c in fam.configs:
            fl = next((f for f in ("llvm23", "llvm22", "llvm20") if c.applies(f)), None)
            if fl:
                yield fam.name, c, fl


def test_builder_method_lists_are_read():
    assert {"store", "load", "add", "br", "phi", "call", "new_block"} <= PY_METHODS
    assert {"store", "load", "add", "br", "phi", "call", "call_void", "new_block", "binop"} <= CPP_METHODS


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_origin_mode_is_bytes_identical_and_points_at_builder_calls(engine):
    E = ENGINES[engine]
    methods = PY_METHODS if engine == "python" else CPP_METHODS
    root = "python_engine/" if engine == "python" else "cpp_engine/src/"
    sources: dict[str, list[str]] = {}
    modules = nlds = 0
    for fam, c, fl in one_config_each():
        try:
            low = E.lower(fam, dict(c.spec), c.arch, fl)
        except E.SpecRejected:
            continue
        got, table = E.lower_origins(fam, dict(c.spec), c.arch, fl)
        assert got.text == low.text and got.kernel == low.kernel, f"{fam}/{c.name}@{fl}"
        if not table:  # a text family: no IR module, no table
            assert not low.text.startswith("target datalayout"), f"{fam}/{c.name}"
            continue
        modules += 1
        lines = low.text.split("\n")[:-1]
        assert len(table) == len(lines)
        body = False
        for text, org in zip(lines, table):
            body = (body or text.startswith("define ")) and text != "}"
            lds = text.startswith("@") and " = internal addrspace(3) global " in text
            made = lds or (body and text != "" and not text.startswith("define "))
            assert bool(org) == made, (fam, c.name, text, org)  # every LDS global, instruction and label
            if not org:
                continue
            path, line = org.rsplit(":", 1)
            assert path.startswith(root), org
            src = sources.setdefault(path, (REPO / path).read_text().split("\n"))[int(line) - 1]
            called = set(re.findall(r"\.(\w+)\(", src))
            assert called & (LDS_METHODS if lds else methods), f"{org} is no builder call: {src.strip()!r}"
            nlds += lds
    assert modules > 100
    assert nlds > 10  # ir_core's lds_barrier and every conv kernel with an LDS layout


def test_recording_is_off_by_default_and_after_lower_origins():
    fam, spec, arch, fl = REDUCE
    python_engine.lower_origins(fam, spec, arch, fl)
    cpp_engine.lower_origins(fam, spec, arch, fl)
    from python_engine.ir import origin
    assert origin.recording() is False
    out = ffi.new("char **")
    assert lib.cpe_origins_take(out, ffi.NULL, 0) == lib.CPE_OK and out[0] == ffi.NULL  # nothing held
    cpp_engine.lower(fam, spec, arch, fl)  # recording off: no table is left behind
    assert lib.cpe_origins_take(out, ffi.NULL, 0) == lib.CPE_OK and out[0] == ffi.NULL


def test_c_api_origin_table_shape():
    fam, spec, arch, fl = REDUCE
    lib.cpe_origins_record(1)
    try:
        low = cpp_engine.lower(fam, spec, arch, fl)
        out = ffi.new("char **")
        assert lib.cpe_origins_take(out, ffi.NULL, 0) == lib.CPE_OK
        text = ffi.string(out[0]).decode()
        lib.cpe_free(out[0])
        assert lib.cpe_origins_take(out, ffi.NULL, 0) == lib.CPE_OK and out[0] == ffi.NULL  # taken once
    finally:
        lib.cpe_origins_record(0)
    assert text.endswith("\n") and text.count("\n") == low.text.count("\n")
    assert lib.cpe_origins_take(ffi.NULL, ffi.NULL, 0) == lib.CPE_INTERNAL_ERROR


def test_both_engines_name_the_twin_lines_of_the_reduce_store():
    fam, spec, arch, fl = REDUCE
    (pl, pt), (cl, ct) = (E.lower_origins(fam, spec, arch, fl) for E in (python_engine, cpp_engine))
    i = next(i for i, ln in enumerate(pl.text.split("\n")) if ln.startswith("  store <2 x bfloat>"))
    py_src = (REPO / pt[i].rsplit(":", 1)[0]).read_text().split("\n")[int(pt[i].rsplit(":", 1)[1]) - 1]
    cc_src = (REPO / ct[i].rsplit(":", 1)[0]).read_text().split("\n")[int(ct[i].rsplit(":", 1)[1]) - 1]
    assert pt[i].startswith("python_engine/kernels/conv_fwd_split_k_reduce.py:")
    assert ct[i].startswith("cpp_engine/src/kernels/conv_fwd_split_k_reduce.cpp:")
    assert py_src.strip() == "b.store(y, p, 2 * width)" and cc_src.strip() == "b.store(y, p, 2 * width);"


# A one-engine slip planted in a scratch copy of the Python engine's reduce
# kernel (the one-line change, `2 * width` -> `2`), at
# <tmp>/python_engine/kernels/conv_fwd_split_k_reduce.py; the stub engine is
# python_engine with that copy registered for the family.
SLIP = """
import importlib.util, os
import python_engine as _E
from python_engine import *  # noqa: F401,F403
from python_engine import Lowered, SpecRejected  # noqa: F401
from python_engine.families import registry as _registry
ENGINE = "slip"
_path = os.path.join(os.path.dirname(__file__), "python_engine", "kernels", "conv_fwd_split_k_reduce.py")
_spec = importlib.util.spec_from_file_location("python_engine.kernels.conv_fwd_split_k_reduce_slip", _path)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
_registry.BY_NAME["conv_fwd_split_k_reduce"] = _mod
"""
KERNEL = REPO / "python_engine/kernels/conv_fwd_split_k_reduce.py"
STORE = "    b.store(y, p, 2 * width)\n"


@pytest.fixture(scope="module")
def slip(tmp_path_factory):
    d = tmp_path_factory.mktemp("slip_origin")
    name = f"sliporigin{uuid.uuid4().hex[:8]}"
    (d / f"{name}.py").write_text(textwrap.dedent(SLIP))
    src = KERNEL.read_text()
    assert src.count(STORE) == 1
    (d / "python_engine/kernels").mkdir(parents=True)
    (d / "python_engine/kernels/conv_fwd_split_k_reduce.py").write_text(
        src.replace(STORE, "    b.store(y, p, 2)\n"))
    sys.path.insert(0, str(d))
    yield name, src[:src.index(STORE)].count("\n") + 1
    sys.path.remove(str(d))


def test_parity_diff_origin_names_a_py_and_a_cpp_line(slip, capsys):
    slip, line = slip
    rc = parity_main(["diff", "conv_fwd_split_k_reduce/bf16_v2_t64_d0", "--origin", "--engines", f"{slip},cpp"])
    out = capsys.readouterr().out.splitlines()
    assert rc == 1
    i = out.index("first difference at line 60, made by:")
    assert re.fullmatch(rf"  {slip} +python_engine/kernels/conv_fwd_split_k_reduce\.py:{line}  store .* align 2",
                        out[i + 1]), out[i + 1]
    assert re.fullmatch(r"  cpp +cpp_engine/src/kernels/conv_fwd_split_k_reduce\.cpp:\d+  store .* align 4",
                        out[i + 2]), out[i + 2]
    assert out[i + 3].startswith("--- ")  # then the unified diff, as without --origin


def test_parity_check_origin_locates_each_mismatch_group(slip, capsys, tmp_path):
    slip, line = slip
    rc = parity_main(["check", "--origin", "--only", "conv_fwd_split_k_reduce/bf16_v2_t64_d0",
                      "--engines", f"{slip},cpp", "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out.splitlines()
    doc = json.loads((tmp_path / "r.json").read_text())  # --origin's locations are in the report too
    [o] = [x for x in doc["origin"] if x["config"] == "bf16_v2_t64_d0"][:1]
    assert {"file": "python_engine/kernels/conv_fwd_split_k_reduce.py", "line": line} in o["locations"]
    assert any(x["file"] == "cpp_engine/src/kernels/conv_fwd_split_k_reduce.cpp" for x in o["locations"])
    assert rc == 1 and len(out) <= 60
    assert "      first difference at line 60, made by:" in out
    assert any(f"python_engine/kernels/conv_fwd_split_k_reduce.py:{line}  store" in ln for ln in out)
    assert any(re.search(r"cpp_engine/src/kernels/conv_fwd_split_k_reduce\.cpp:\d+", ln) for ln in out)


def test_origin_is_refused_with_base(capsys):
    assert parity_main(["diff", "--base", "HEAD", "--origin"]) == 2
    assert "--origin locates a difference between the two engines" in capsys.readouterr().err


def test_an_lds_global_line_names_the_add_lds_call_in_both_engines():
    # before, `parity diff --origin` said "(no builder call: printer line)" for an LDS global
    spec = ("ir_core", {"kernel": "lds_barrier"}, "gfx1250", "llvm23")
    py_line = next(i for i, ln in enumerate((REPO / "python_engine/kernels/ir_core.py").read_text().split("\n"), 1)
                   if 'add_lds("lds_buf"' in ln)
    cpp_line = next(i for i, ln in enumerate((REPO / "cpp_engine/src/kernels/ir_core.cpp").read_text().split("\n"), 1)
                    if 'add_lds("lds_buf"' in ln)
    for E, want in ((python_engine, f"python_engine/kernels/ir_core.py:{py_line}"),
                    (cpp_engine, f"cpp_engine/src/kernels/ir_core.cpp:{cpp_line}")):
        low, table = E.lower_origins(*spec)
        lines = low.text.split("\n")
        assert lines[3].startswith("@lds_buf = internal addrspace(3) global [256 x float]")
        assert table[3] == want
        assert list(table[:3]) == ["", "", ""]  # datalayout, triple, blank: no call made them

"""Failure summaries of `parity check` (issue 23 item 4): grouping by family,
verdict and first differing normalised line, hint lines, the full list in
--json, and a one-engine slip of the real Python engine summarised in at most
60 lines (the same slip printed 922 lines before the summary)."""

import json
import sys
import textwrap
import uuid

import pytest

from parity.app.main import main as parity_main
from parity.gate.failure_summary import configs_text, normalise_line, signature
from parity.gate.runner import Result

# The slip of the issue, in the Python engine only: the reduce kernel's store
# aligned to 2 bytes instead of 2 * width (a text edit of its output, so the
# real engine stays untouched).
SLIP_ENGINE = '''
import re
import python_engine as _E
from python_engine import *  # noqa: F401,F403 - the engine API, unchanged
from python_engine import Lowered, SpecRejected  # noqa: F401
ENGINE = "slip"
_STORE = re.compile(r"^(  store <\\d+ x \\w+> %out\\d+, ptr addrspace\\(1\\) %pd\\d+, align )\\d+$", re.M)


def lower(family, spec, arch, flavor):
    low = _E.lower(family, spec, arch, flavor)
    if family != "conv_fwd_split_k_reduce":
        return low
    return Lowered(low.kernel, _STORE.sub(lambda m: m.group(1) + "2", low.text))
'''


def test_normalise_drops_ssa_numbers_and_vector_types():
    assert normalise_line("  store <2 x bfloat> %out37, ptr addrspace(1) %pd38, align 2") == \
        "store <N x T> %out, ptr addrspace(1) %pd, align 2"
    assert normalise_line("loop12:") == "loop:"
    assert normalise_line("  br label %exit3") == "br label %exit"


def test_signature_merges_widths_and_numbers_but_not_other_changes():
    a = signature("  store <2 x bfloat> %out37, ptr addrspace(1) %pd38, align 2",
                  "  store <2 x bfloat> %out37, ptr addrspace(1) %pd38, align 4")
    b = signature("  store <8 x half> %out23, ptr addrspace(1) %pd24, align 2",
                  "  store <8 x half> %out23, ptr addrspace(1) %pd24, align 16")
    assert a == b == "store <N x T> %out, ptr addrspace(1) %pd, align #"
    c = signature("  %x1 = add i32 %a, %b", "  %x1 = sub i32 %a, %b")
    assert c == "%x = add i32 %a, %b  |  %x = sub i32 %a, %b"


def test_configs_text_lists_flavors_per_config_and_cuts():
    rs = [Result("f", n, fl, "MISMATCH", "", "ok", ({}, {})) for n in ("a", "b") for fl in ("llvm20", "llvm23")]
    assert configs_text(rs) == "a@{llvm20,llvm23}, b@{llvm20,llvm23}"
    assert configs_text(rs, limit=1) == "a@{llvm20,llvm23}, ... (+1 configs)"


@pytest.fixture(scope="module")
def slip(tmp_path_factory):
    d = tmp_path_factory.mktemp("slip")
    name = f"slip{uuid.uuid4().hex[:8]}"
    (d / f"{name}.py").write_text(textwrap.dedent(SLIP_ENGINE))
    sys.path.insert(0, str(d))
    yield name
    sys.path.remove(str(d))


def test_one_engine_slip_is_summarised_in_at_most_60_lines(slip, capsys, tmp_path):
    js = tmp_path / "r.json"
    rc = parity_main(["check", "--only", "conv_fwd_split_k_reduce", "--engines", f"{slip},cpp", "--json", str(js)])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert rc == 1
    assert len(lines) <= 60, out
    assert lines[-1] == "RESULT: RED"
    [head] = [ln for ln in lines if ln.startswith("conv_fwd_split_k_reduce: MISMATCH: ")]
    # 139 configs x 3 flavors whose store is wider than 2 bytes: one divergence, cpp still the blessed text
    assert head == "conv_fwd_split_k_reduce: MISMATCH: 1 divergence x 417 entries (cpp matches golden in all)"
    assert "  normalised: store <N x T> %out, ptr addrspace(1) %pd, align #" in lines
    hints = [ln for ln in lines if ln.startswith("hint: MISMATCH: ")]
    assert len(hints) == 1 and f"{slip} alone changed" in hints[0] and "--origin" in hints[0]
    assert "golden conv_fwd_split_k_reduce.json: 417 not compared (engines disagree)" in lines
    doc = json.loads(js.read_text())
    [g] = doc["summary_groups"]
    assert g["count"] == 417 and len(g["entries"]) == 417 and g["golden_sides"] == {"cpp matches golden": 417}
    assert g["key"] == "store <N x T> %out, ptr addrspace(1) %pd, align #"

    rc = parity_main(["check", "--only", "conv_fwd_split_k_reduce", "--engines", f"{slip},cpp", "--full"])
    full = capsys.readouterr().out
    assert rc == 1
    assert f"  bf16_v2_t64_d0@llvm20: MISMATCH, {slip} differs from golden, cpp matches golden" in full
    assert len(full.splitlines()) > 600  # the full listing is still there on request


EVERY_KIND = '''
from parity.config import Config, ok, reject
FAMILY = "fam_a"
CONFIGS = [
    Config("plain", arch="gfx1250", spec={"kernel": "plain"}),
    Config("drift1", arch="gfx1250", spec={"kernel": "d1", "b_text": 1}),
    Config("drift2", arch="gfx1250", spec={"kernel": "d2", "b_text": 1}),
    Config("reason", arch="gfx1250", spec={"reject": "tile_k must be a multiple of 32", "b_reason": 1},
           expect=reject("tile_k must be a multiple of 32")),
    Config("onesided", arch="gfx1250", spec={"kernel": "o", "b_reject": 1}),
    Config("raises", arch="gfx1250", spec={"kernel": "r", "b_raise": 1}),
    Config("expected", arch="gfx1250", spec={"kernel": "e"}, expect=reject("must not lower")),
]
'''


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory):
    import gate_stubs
    yield from gate_stubs.importable_world(tmp_path_factory.mktemp("kinds"), "kinds", {"fam_a": EVERY_KIND})


def test_every_red_kind_is_grouped_and_has_its_hint(every_kind, capsys, tmp_path):
    good, bad, cfg = every_kind
    js = tmp_path / "r.json"   # beside the golden directory, not in it (a report there is refused)
    (tmp_path / "golden").mkdir()
    rc = parity_main(["check", "--engines", f"{good},{bad}", "--configs", cfg, "--flavor", "llvm23",
                      "--golden-dir", str(tmp_path / "golden"), "--timeout", "20", "--json", str(js)])
    lines = capsys.readouterr().out.splitlines()
    assert rc == 1
    heads = [ln for ln in lines if ln.startswith("fam_a: ")]
    # the two drifted configs share their first differing line: one group of 2
    assert "fam_a: MISMATCH: 1 divergence x 2 entries (no golden entry in all)" in heads
    assert "  in: drift1@llvm23, drift2@llvm23" in lines
    for kind in ("REASON_MISMATCH", "ASYMMETRIC", "CRASH", "EXPECTATION"):
        assert f"fam_a: {kind}: 1 failure x 1 entry (no golden entry in all)" in heads, heads
    hints = {ln.split(":")[1].strip(): ln for ln in lines if ln.startswith("hint: ")
             and ln.split(":")[1].strip() in ("MISMATCH", "REASON_MISMATCH", "ASYMMETRIC", "CRASH", "EXPECTATION")}
    assert set(hints) == {"MISMATCH", "REASON_MISMATCH", "ASYMMETRIC", "CRASH", "EXPECTATION"}
    assert "`parity diff fam_a/drift1 --flavor llvm23 --origin`" in hints["MISMATCH"]
    assert "`parity diff fam_a/reason --flavor llvm23`" in hints["REASON_MISMATCH"]
    assert "`parity diff fam_a/onesided --flavor llvm23`" in hints["ASYMMETRIC"]
    assert f"`parity show fam_a/raises --flavor llvm23 --engine {bad}`" in hints["CRASH"]
    assert "parity/configs/fam_a.py" in hints["EXPECTATION"]
    doc = json.loads(js.read_text())
    assert sorted((g["verdict"], g["count"]) for g in doc["summary_groups"]) == [
        ("ASYMMETRIC", 1), ("CRASH", 1), ("EXPECTATION", 1), ("MISMATCH", 2), ("REASON_MISMATCH", 1)]

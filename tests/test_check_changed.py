"""``parity check --changed``: an edit's changed lines -> functions -> the configs whose
lowering ran them (parity/gate/edit_units.py, edit_map.py, changed.py; docs/gate.md,
"Checking only what an edit reached"). The selection tests edit a scratch git copy of
the engines and assert which configs would be checked."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parity.config import load_families
from parity.gate import changed as CH
from parity.gate import edit_map as M
from parity.gate import edit_units as U
from scratch_checkout import REPO, git, needs_git

REDUCE = "conv_fwd_split_k_reduce"
RED_PY = "python_engine/kernels/conv_fwd_split_k_reduce.py"
RED_CPP = "cpp_engine/src/kernels/conv_fwd_split_k_reduce.cpp"


# -- units ------------------------------------------------------------------------------

PY = '''"""doc"""
X = 1


def f(a, b=X):
    y = a + b

    def g(c=y):
        return c  # comment
    return g()


class C:
    K = 2

    def m(self):
        return self.K
'''


def test_python_units_nested_header_module_level_and_comments():
    assert [(s.name, s.first, s.last, s.parent) for s in U.python_spans(PY)] == [
        ("f", 5, 10, None), ("f.g", 8, 9, "f"), ("C.m", 16, 17, None)]
    assert U.units_of_lines("a.py", PY, [6]) == {"f"}
    assert U.units_of_lines("a.py", PY, [8]) == {"f.g", "f"}  # a default runs in the enclosing def
    assert U.units_of_lines("a.py", PY, [9]) == {"f.g"}
    assert U.units_of_lines("a.py", PY, [2, 14]) == {U.OUTSIDE}
    assert U.units_of_lines("a.py", PY, [3, 7]) == set()  # blank lines
    assert U.units_of_lines("a.py", PY.replace("y = a + b", "# note"), [6]) == set()


def test_python_unit_hashes_see_only_the_changed_function():
    old = U.unit_hashes("a.py", PY)
    assert U.changed_units("a.py", old, U.unit_hashes("a.py", PY.replace("return c", "return c + 1"))) == {"f.g"}
    assert U.changed_units("a.py", old, U.unit_hashes("a.py", PY.replace("K = 2", "K = 3"))) == {U.OUTSIDE}
    assert U.changed_units("a.py", old, U.unit_hashes("a.py", PY.replace("# comment", "# other"))) == set()
    assert U.normalise_qualname("f.<locals>.g.<locals>.<lambda>") == "f.g"
    assert U.normalise_qualname("<module>") is None


CPP = '''#include "x.h"
namespace cpe {
namespace {
const char *kBrace = "{ not a block }";
int helper(int x) {
    auto l = [](int y) { return y; };  // {
    return l(x);
}
}  // namespace
struct S {
    int get() const { return 1; }
};
static const int kTable[] = {1, 2};
std::string S2::name(const Spec &s) const
{
    if (s.x) { return "a"; }
    return "b";
}
}  // namespace cpe
'''


def test_cpp_spans_functions_methods_and_namespace_tables():
    assert [(s.name, s.first, s.last) for s in U.cpp_spans(CPP)] == [
        ("helper", 5, 8), ("get", 11, 11), ("name", 14, 18)]
    assert U.units_of_lines("a.cpp", CPP, [6]) == {"helper"}
    assert U.units_of_lines("a.cpp", CPP, [13]) == {U.OUTSIDE}  # a namespace-scope table
    assert U.units_of_lines("a.cpp", CPP, [17]) == {"name"}


# -- selection on a scratch copy ------------------------------------------------------

@pytest.fixture(scope="module")
def emap(tmp_path_factory):
    """The edit map of two families, recorded from this checkout (the others are
    unknown to it, so they are always selected)."""
    out = tmp_path_factory.mktemp("map") / M.MAP_NAME
    M.build(REPO, out, families=[REDUCE, "ir_core"])
    doc = M.load(out)
    assert doc is not None and doc["families"] == [REDUCE, "ir_core"]
    return doc


@pytest.fixture
def scratch(tmp_path):
    """A git copy of the engine sources, configs and goldens at one commit."""
    r = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for d in ("python_engine", "cpp_engine/src", "cpp_engine/include", "cpp_engine/cmake",
              "parity/configs", "golden", "tests"):
        shutil.copytree(REPO / d, r / d, ignore=ignore)
    git(r, "init", "-q", "-b", "main")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "base")
    return r


def _names():
    return {f.name: [c.name for c in f.configs] for f in load_families()}


def _edit(root: Path, path: str, old: str, new: str) -> None:
    p = root / path
    text = p.read_text()
    assert text.count(old) == 1, old
    p.write_text(text.replace(old, new))


def _in(sel, family):
    return {c for c in sel.configs if c.startswith(family + "/")}


def _others(names):
    return {f"{f}/{n}" for f, ns in names.items() if f not in (REDUCE, "ir_core") for n in ns}


@needs_git
def test_untouched_tree_and_docs_edits_check_nothing(scratch, emap):
    names = _names()
    (scratch / "tests" / "test_x.py").write_text("# a new test\n")
    sel = CH.select(scratch, "HEAD", emap, names)
    assert not sel.full and sel.units == set()
    assert sel.configs == _others(names)  # only the families the map does not know


@needs_git
def test_python_function_edit_checks_only_the_configs_that_ran_it(scratch, emap):
    names = _names()
    _edit(scratch, RED_PY, '    n = b.fn.param("bias_bytes")\n', '    n = b.fn.param("bias_bytes")\n    n = n\n')
    sel = CH.select(scratch, "HEAD", emap, names)
    unit = f"{RED_PY}::_bias_rsrc"
    assert not sel.full and sel.units == {unit}
    want = {emap["configs"][i] for i in emap["py"][unit]}
    assert want and all("bias" in c for c in want)
    assert _in(sel, REDUCE) == want and len(want) < len(names[REDUCE])
    assert _in(sel, "ir_core") == set()
    # the same edit committed and measured --since the base
    git(scratch, "commit", "-qam", "edit")
    assert CH.select(scratch, "HEAD~1", emap, names).configs == sel.configs


@needs_git
def test_cpp_function_edit_maps_through_origins_and_the_python_twin(scratch, emap):
    names = _names()
    _edit(scratch, RED_CPP, "Value bias_rsrc(IRBuilder &b) {\n", "Value bias_rsrc(IRBuilder &b) {\n    (void)0;\n")
    sel = CH.select(scratch, "HEAD", emap, names)
    assert not sel.full and sel.units == {f"{RED_CPP}::bias_rsrc"}
    twin = {emap["configs"][i] for i in emap["py"][f"{RED_PY}::_bias_rsrc"]}
    assert twin and _in(sel, REDUCE) == twin


@needs_git
@pytest.mark.parametrize("path,old,new,why", [
    (RED_PY, "\nFAMILY = ", "\nEXTRA = 1\nFAMILY = ", "outside every function"),
    (RED_CPP, "Value bias_values(IRBuilder &b, const Ctx &ctx, const Value &idx, int64_t width) {\n",
     "Value bias_values(IRBuilder &b, const Ctx &ctx, const Value &idx, int64_t width) {\n    (void)0;\n",
     "no function of that name in its Python twin"),
    ("cpp_engine/src/kernels/conv_fwd_split_k_reduce.h", "#pragma once", "#pragma once\n#define CPE_X 1",
     "not an engine source mapped by function"),
])
def test_unmappable_edits_fall_back_to_the_full_check(scratch, emap, path, old, new, why):
    _edit(scratch, path, old, new)
    sel = CH.select(scratch, "HEAD", emap, _names())
    assert sel.full and any(why in r and path in r for r in sel.reasons), sel.reasons


@needs_git
def test_a_function_the_configs_call_while_loaded_is_unmappable(scratch, emap):
    # parity/configs/perf_model.py computes its specs with load_vector: a change to it changes
    # configs no lowering trace shows
    assert "python_engine/api.py::load_vector" in emap["import_time"]
    _edit(scratch, "python_engine/api.py", "def load_vector(cpg: int) -> int:\n",
          "def load_vector(cpg: int) -> int:\n    cpg = cpg + 0\n")
    sel = CH.select(scratch, "HEAD", emap, _names())
    assert sel.full and any("load_vector: runs while the Python engine is imported or the configs are loaded" in r
                            for r in sel.reasons), sel.reasons


@needs_git
def test_config_and_golden_edits_check_their_family(scratch, emap):
    names = _names()
    p = scratch / "parity/configs/ir_core.py"
    p.write_text(p.read_text() + "\n# a note\n")
    sel = CH.select(scratch, "HEAD", emap, names)
    assert not sel.full and _in(sel, "ir_core") == {f"ir_core/{n}" for n in names["ir_core"]}
    assert _in(sel, REDUCE) == set()


@needs_git
def test_a_change_since_the_map_was_recorded_is_checked_too(scratch, emap):
    """A function changed between the map's sources and the working tree, though
    committed (so not in the edit since HEAD): its configs are checked."""
    names = _names()
    _edit(scratch, RED_PY, '    n = b.fn.param("bias_bytes")\n', '    n = b.fn.param("bias_bytes")\n    n = n\n')
    git(scratch, "commit", "-qam", "edit")
    sel = CH.select(scratch, "HEAD", emap, names)
    assert _in(sel, REDUCE) == {emap["configs"][i] for i in emap["py"][f"{RED_PY}::_bias_rsrc"]}


@pytest.mark.parametrize("argv,needle", [
    (["check", "--changed", "--only", "ir_core"], "--only cannot be combined"),
    (["write", "--changed", "--only", "ir_core"], "--only cannot be combined"),
    (["check", "--changed", "--since", "nosuchref"], "--since: 'nosuchref' names no commit"),
    (["check", "--since", "HEAD"], "--since REV goes with --changed"),   # before: a full check, --since unseen
    # before: "24 of 2 configs reached", then an --only error (the map holds the default package's)
    (["check", "--changed", "--configs", "tests_pkg.cfg"], "--configs tests_pkg.cfg cannot be combined"),
])
def test_changed_bad_input_is_one_error_line_exit_2(argv, needle):
    # Without CI in the environment: under CI, `parity write` refuses before it reads its flags
    # (tests/test_cli_exit_help_color.py checks that refusal).
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    r = subprocess.run([sys.executable, "-m", "parity", *argv], capture_output=True, text=True, cwd=REPO,
                       env=env)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith("error:") and needle in err[0], r.stderr
    # refused before any work: a bad --since used to record the edit map first (11 s in the suite)
    assert "recording the edit map" not in r.stdout, r.stdout


def test_since_resolves_text_searches_and_names_a_missing_checkout(tmp_path):
    """``--since :/text`` (git's message search) names a commit: resolved before its commit is
    taken (a ``^{commit}`` suffix made it search for ``text^{commit}``); a tree is refused; a
    directory without git is named as such, not blamed on --since."""
    from parity.gate import changed as CH
    want = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", ":/gate"], capture_output=True,
                          text=True).stdout.strip()
    assert len(want) == 40 and CH.check_rev(REPO, ":/gate") == want
    with pytest.raises(CH.ChangedError, match=r"--since: 'HEAD\^\{tree\}' names no commit"):
        CH.check_rev(REPO, "HEAD^{tree}")
    with pytest.raises(CH.ChangedError, match=r"--since: '-x' names no commit"):
        CH.check_rev(REPO, "-x")
    with pytest.raises(CH.ChangedError, match=rf"--changed: {tmp_path} is not a git checkout"):
        CH.check_rev(tmp_path, "HEAD")

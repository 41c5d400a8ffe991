"""`parity diff --base REF` (parity/golden/ir_diff.py): REF's own Python engine against the working tree.

Each test builds a small git repository holding a copy of this checkout's
python_engine/, parity/ and golden/, commits a variant as REF, and runs the
command with the repository as working directory: REF's side is lowered from
the commit, the working side by the installed (this checkout's) engine.
"""

import json
import re
from pathlib import Path


from parity.golden import ir_diff as D
from parity.app.main import main as parity_main


from scratch_checkout import REDUCE_PY, git, needs_git, repo  # noqa: E402,F401 (repo: the fixture)

pytestmark = needs_git


def commit(repo: Path, msg: str = "ref"):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", msg)


def run(capsys, *argv):
    # the scratch checkout runs this checkout's engine on purpose (the working-tree side)
    argv = (*argv, "--allow-foreign-engines") if argv and argv[0] == "diff" else argv
    rc = parity_main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_grouped_hunks_of_a_kernel_change(repo, capsys, tmp_path):
    f = repo / REDUCE_PY
    text = f.read_text()
    # REF: unrolled slab loads at align 8 instead of 4 (the working tree keeps align 4)
    assert text.count('x = b.load(vt, p, 4, "slab")') == 2
    f.write_text(text.replace('            x = b.load(vt, p, 4, "slab")', '            x = b.load(vt, p, 8, "slab")'))
    commit(repo)
    js = tmp_path / "d.json"
    rc, out, err = run(capsys, "diff", "--base", "HEAD", "--only", "conv_fwd_split_k_reduce",
                       "--flavor", "llvm23", "--json", js)
    assert rc == 1, err
    lines = out.splitlines()
    assert lines[0].startswith(f"parity: golden {repo.resolve() / 'golden'} | ")
    assert lines[1].startswith("IR changes from HEAD (")
    doc = json.loads(js.read_text())
    fam = doc["families"]["conv_fwd_split_k_reduce"]
    counts = fam["counts"]["llvm23"]
    # every config with degree >= 2 has an unrolled slab load; degree 0/1 configs have none
    assert counts["changed"] > 0 and counts["unchanged"] > 0 and counts["added"] == counts["removed"] == 0
    groups = fam["groups"]
    # one edit, one group (issue 38): the align change repeated in every unrolled copy of every
    # degree, dtype and vector width (and the scalar tail path) is one group, shown once
    assert len(groups) == 1 and {g["kind"] for g in groups} == {"text"}
    [g] = groups
    degrees = {int(e["config"].rsplit("_d", 1)[1]) for e in g["entries"]}
    assert degrees == {2, 4, 7, 8, 16, 32}
    widths = {re.search(r"_(v\d)_", e["config"]).group(1) for e in g["entries"] if "t1024" not in e["config"]}
    assert widths == {"v1", "v2", "v4", "v8"}, widths
    assert {re.search(r"(bf16|fp16|t1024)", e["config"]).group(1) for e in g["entries"]} - {"t1024"} == {"bf16", "fp16"}
    assert sum(len(g["entries"]) for g in groups) == counts["changed"] == doc["entries"]
    assert doc["groups"] == 1
    lines = [l for h in g["hunks"] for l in h]
    minus = [l for l in lines if l.startswith("-")]
    plus = [l for l in lines if l.startswith("+")]
    assert len(minus) == len(plus) == 1 and ", align 8" in minus[0] and ", align 4" in plus[0]
    assert "%slab#" in minus[0]  # value numbers dropped by default
    assert g["repeated"][0] >= 1 and g["repeated"][1] == 61  # d32: 31 copies in each of 2 paths, 1 shown
    top = groups[0]
    assert f"  @@ group 1/1 [{top['id']}] IR change: {len(top['entries'])} entries: {top['configs']}" in out
    assert out.rstrip().splitlines()[-1] == f"groups: 1, entries: {counts['changed']}"
    assert "\x1b[" not in out  # plain when piped
    rc, out2, _ = run(capsys, "diff", "--base", "HEAD", "--only", "conv_fwd_split_k_reduce",
                      "--flavor", "llvm23", "--stat")
    assert rc == 1 and "@@" not in out2
    assert f"changed={counts['changed']} added=0 removed=0 unchanged={counts['unchanged']}" in out2
    assert out2.rstrip().splitlines()[-1] == f"groups: 1, entries: {counts['changed']}"


def test_ref_that_predates_a_family_adds_every_config(repo, capsys):
    cfg = repo / "parity" / "configs" / "ir_core.py"
    text = cfg.read_bytes()
    cfg.unlink()
    commit(repo)
    cfg.write_bytes(text)  # the working tree has the family, REF (HEAD) does not
    rc, out, err = run(capsys, "diff", "--base", "HEAD", "--only", "ir_core", "--stat")
    assert rc == 1, err
    assert "ir_core: family does not exist at HEAD: every config is added" in out
    assert "ir_core  llvm23  changed=0 added=25 removed=0 unchanged=0" in out  # every ir_core config at llvm23


def test_ref_whose_engine_fails_to_import_is_one_clear_error(repo, capsys):
    init = repo / "python_engine" / "__init__.py"
    init.write_text("raise ImportError('broken at this ref')\n" + init.read_text())
    commit(repo)
    rc, out, err = run(capsys, "diff", "--base", "HEAD", "--only", "ir_core")
    assert rc == 2
    assert err.strip().splitlines() == [
        "error: the Python engine at HEAD cannot be imported: ImportError: broken at this ref"]


def test_bad_ref_and_no_change(repo, capsys):
    commit(repo)
    rc, out, err = run(capsys, "diff", "--base", "no-such-branch", "--only", "ir_core")
    assert rc == 2 and "--base no-such-branch: not a commit in the git repository" in err
    rc, out, err = run(capsys, "diff", "--base", "HEAD", "--only", "ir_core", "--flavor", "llvm24")
    assert rc == 0 and out.rstrip().splitlines()[-2:] == ["no IR change", "groups: 0, entries: 0"]


def test_hunks_drop_line_numbers_so_equal_changes_group():
    a = "x\n" * 10 + "load align 4\n" + "y\n" * 10
    b = "z\n" + a  # same change, shifted one line
    h1 = D.hunks(a, a.replace("align 4", "align 8"))
    assert D.hunks(a, a.replace("align 4", "align 8"), normalise=True) == h1
    h2 = D.hunks(b, b.replace("align 4", "align 8"))
    assert h1 == h2 == [(" x", " x", " x", "-load align 4", "+load align 8", " y", " y", " y")]


def test_family_slash_name_compares_only_that_config_at_ref(repo, capsys):
    """Review finding: `diff --base HEAD ir_core/casts` reported every other ir_core config removed."""
    commit(repo)
    for argv in (["ir_core/casts"], ["--only", "ir_core/casts"]):
        rc, out, err = run(capsys, "diff", "--base", "HEAD", *argv)
        assert rc == 0, out + err
        assert "ir_core  llvm23  changed=0 added=0 removed=0 unchanged=1" in out
        assert "no IR change" in out
    # --stat prints only the rows that differ
    rc, out, err = run(capsys, "diff", "--base", "HEAD", "--only", "ir_core", "--stat")
    assert rc == 0 and "ir_core  llvm" not in out


def test_dropped_ssa_numbers_turn_a_renumbering_into_one_hunk(repo, capsys, tmp_path):
    """REF has one more instruction near the top of the reduce kernel than the
    working tree, so every later value number differs by one: with
    --keep-ssa-numbers, that is hunks all over the text; by default it is exactly that line."""
    f = repo / REDUCE_PY
    text = f.read_text()
    anchor = '    wg = b.call("workgroup_id_x", [], "wg")\n'
    assert text.count(anchor) == 1
    f.write_text(text.replace(anchor, anchor + '    b.binop("or", wg, wg, "probe")\n'))
    commit(repo)  # REF: the kernel with the probe; the working tree is this checkout's engine
    js = tmp_path / "plain.json"
    args = ("diff", "--base", "HEAD", "--only", "conv_fwd_split_k_reduce/bf16_v8_t256_d4", "--flavor", "llvm23")
    rc, out, err = run(capsys, *args, "--keep-ssa-numbers", "--json", js)
    assert rc == 1, err
    plain = json.loads(js.read_text())["families"]["conv_fwd_split_k_reduce"]
    changed_lines = [l for g in plain["groups"] for h in g["hunks"] for l in h if l[0] in "+-"]
    assert len(changed_lines) > 20  # every line after the probe is renumbered
    js2 = tmp_path / "norm.json"
    rc, out, err = run(capsys, *args, "--json", js2)
    assert rc == 1, err
    fam = json.loads(js2.read_text())["families"]["conv_fwd_split_k_reduce"]
    [group] = fam["groups"]
    [hunk] = group["hunks"]
    assert [l for l in hunk if l[0] in "+-"] == ["-  %probe# = or i32 %wg#, %wg#"]
    # a change of numbering alone is its own group, with no hunk
    D_text = "  %a3 = add i32 %b1, 1\n"
    d = D.compare({"f/c@llvm23": {"status": "ok", "sha256": "x", "text": D_text.replace("a3", "a4")}},
                  {"f/c@llvm23": {"status": "ok", "sha256": "y", "text": D_text}}, ["f"], ["f"])["f"]
    [g] = d.groups
    assert g.kind == "renumbered" and g.entries == [("c", "llvm23")] and g.hunks == []
    assert d.counts["llvm23"]["changed"] == 1


def test_drop_ssa_numbers_keeps_hints_globals_and_types():
    t = ('entry0:\n  %v12 = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16(i1 false, <16 x bfloat> %frag7)\n'
         '  br i1 %again294, label %kloop96, label %kdone97\n')
    assert D.drop_ssa_numbers(t) == ('entry#:\n  %v# = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16('
                                     'i1 false, <16 x bfloat> %frag#)\n'
                                     '  br i1 %again#, label %kloop#, label %kdone#\n')

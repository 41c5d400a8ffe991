"""`parity golden-textconv` (parity/golden/textconv.py): a golden change shown by git as IR,
on a real two-commit repository in a temporary directory."""

import shutil
import sys


from parity.golden import shards as G
from parity.golden import textconv as T
from parity.golden.ref_tree import run_ref_script

FAM = "conv_fwd_split_k_reduce"

from scratch_checkout import REDUCE_PY, REPO, git, needs_git, repo  # noqa: E402,F401 (repo: the fixture)

pytestmark = needs_git


def textconv_git(repo, *args):
    """git with the driver registered for this one command (the test never writes git config)."""
    cmd = f"{sys.executable} -m parity golden-textconv"
    return git(repo, "-c", f"diff.{T.DRIVER}.textconv={cmd}", "-c", f"diff.{T.DRIVER}.xfuncname=^== .*$",
               *args)


def test_git_show_of_a_golden_change_is_the_ir_change(repo):
    (repo / ".gitattributes").write_text(T.ATTRIBUTES_LINE + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "A")
    # B: the reduce store at align 2, and two of its entries re-blessed from B's own engine
    f = repo / REDUCE_PY
    text = f.read_text()
    assert text.count("    b.store(y, p, 2 * width)\n") == 1
    f.write_text(text.replace("    b.store(y, p, 2 * width)\n", "    b.store(y, p, 2)\n"))
    doc = run_ref_script(repo, {"kind": "configs", "only": [FAM], "flavors": ["llvm20", "llvm22", "llvm23"],
                                "want": {}}, "B")
    shard = G.load_shard(repo / "golden", FAM)
    for key, o in doc["units"].items():  # B re-blessed from its own engine, as `parity write` would
        cfg, fl = key.split("/", 1)[1].rsplit("@", 1)
        shard[fl][cfg] = ({"bytes": len(o["text"].encode()), "kernel": o["kernel"], "sha256": o["sha256"]}
                          if o["status"] == "ok" else {"rejected": o["reason"]})
    G.write_shard(repo / "golden", FAM, shard)
    git(repo, "commit", "-q", "-am", "B")

    plain = git(repo, "show", "HEAD", "--", f"golden/{FAM}.json")
    assert '"sha256"' in plain and "store" not in plain  # without the driver: hashes
    out = textconv_git(repo, "show", "HEAD", "--", f"golden/{FAM}.json")
    minus = [l for l in out.splitlines() if l.startswith("-  ")]
    plus = [l for l in out.splitlines() if l.startswith("+  ")]
    # every v2/v4/v8 entry at every flavor: its vector store, and nothing else
    assert len(minus) == len(plus) == 417, out[:3000]
    assert all(" store <" in l and l.endswith(("align 4", "align 8", "align 16")) for l in minus)
    assert all(" store <" in l and l.endswith("align 2") for l in plus)
    assert sum("store <8 x bfloat>" in l and l.endswith("align 16") for l in minus) == 29 * 3  # 17 identity + 12 fused (6 epilogues x 2 degrees) bf16 v8 configs
    heads = [l for l in out.splitlines() if l.startswith("@@ ")]
    assert len(heads) == 417 and all(" == llvm2" in h for h in heads)  # each hunk names its entry
    assert any(h.endswith("== llvm23/bf16_v8_t64_d4 conv_fwd_split_k_reduce_bf16_v8_t64_d4") for h in heads)
    # the texts are cached by sha256 in the git directory, and the next run reads them from there
    cached = list((repo / ".git" / T.CACHE_DIR).glob("*.ll"))
    assert len(cached) > 100 and all(len(p.stem) == 64 for p in cached)  # both engines' reduce texts
    again = textconv_git(repo, "show", "HEAD", "--", f"golden/{FAM}.json")
    assert again == out
    # the external diff driver (issue 38): the same commit as change groups, each change once
    ext = git(repo, "-c", f"diff.{T.DRIVER}.command={sys.executable} -m parity golden-diff",
              "show", "--ext-diff", "HEAD", "--", f"golden/{FAM}.json")
    assert f"# {FAM}: 417 entries changed in " in ext and len(ext.splitlines()) < 200, ext[:3000]
    groups = [l for l in ext.splitlines() if l.startswith("  @@ group ")]
    assert 1 <= len(groups) <= 4  # align 4, 8, 16 -> 2: one group per old alignment at most
    assert sum(l.startswith("  -  ") for l in ext.splitlines()) == len(groups)  # one -/+ pair per group
    # a working-tree change (no commit holds that blob) is lowered with the working tree's engine
    shutil.rmtree(repo / ".git" / T.CACHE_DIR)
    git(repo, "checkout", "-q", "HEAD~1", "--", f"golden/{FAM}.json")
    wt = textconv_git(repo, "diff", "HEAD", "--", f"golden/{FAM}.json")  # working tree: A's shard
    assert sorted(l[1:] for l in wt.splitlines() if l.startswith(("-  ", "+  "))) == \
        sorted(l[1:] for l in minus + plus)


def test_textconv_of_a_file_that_is_not_a_shard_prints_it_and_says_why(repo, tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{not json\n")
    out = T.textconv(str(bad))
    lines = out.splitlines()
    assert lines[0].startswith("# parity golden-textconv: shown as text (") and "malformed JSON" in lines[0]
    assert lines[1] == "{not json"
    # an entry no engine gives: one line saying so, not a failure
    shard = G.load_shard(REPO / "golden", "ir_core")
    fl = "llvm23"
    cfg = next(c for c, e in shard[fl].items() if "sha256" in e)
    shard = {fl: {cfg: dict(shard[fl][cfg], sha256="f" * 64), "zz_same": dict(shard[fl][cfg], sha256="f" * 64)}}
    p = tmp_path / "ir_core.json"
    p.write_text(G.render_shard("ir_core", shard))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "A")
    out = T.textconv(str(p))
    assert out.splitlines()[1:] == [f"== {fl}/{cfg} {shard[fl][cfg]['kernel']}",
                                    "  (IR not available: no engine gave sha256 ffffffffffff)",
                                    f"== {fl}/zz_same {shard[fl][cfg]['kernel']}",
                                    f"  (same IR as {fl}/{cfg})"]  # an identical text is printed once


def test_install_registers_the_driver(repo):
    done = T.install(repo)
    assert git(repo, "config", f"diff.{T.DRIVER}.textconv").strip().endswith("-m parity golden-textconv")
    assert T.ATTRIBUTES_LINE in (repo / ".gitattributes").read_text().splitlines()
    assert git(repo, "config", f"diff.{T.DRIVER}.command").strip().endswith("-m parity golden-diff")
    assert len(done) == 3 and len(T.install(repo)) == 2  # the attributes line is added once


def test_install_from_a_linked_worktree_leaves_the_main_checkouts_drivers(repo, tmp_path):
    """A helper's worktree registers its own venv's drivers in its worktree config
    (extensions.worktreeConfig); the main checkout keeps the command it registered."""
    from parity.golden import merge_driver as MD
    T.install(repo)
    MD.install(repo)
    main_cmd = git(repo, "config", f"diff.{T.DRIVER}.textconv").strip()
    main_merge = git(repo, "config", f"merge.{MD.DRIVER}.driver").strip()
    wt = tmp_path / "wt"
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    git(repo, "worktree", "add", "-q", str(wt), "-b", "side")
    real = T.sys.executable
    T.sys.executable = MD.sys.executable = "/elsewhere/.venv/bin/python"
    try:
        done = T.install(wt) + MD.install(wt)
    finally:
        T.sys.executable = MD.sys.executable = real
    assert any(d.startswith(f"git config --worktree diff.{T.DRIVER}.textconv ") for d in done)
    assert any(d.startswith(f"git config --worktree merge.{MD.DRIVER}.driver ") for d in done)
    assert git(wt, "config", f"diff.{T.DRIVER}.textconv").strip() == "/elsewhere/.venv/bin/python -m parity golden-textconv"
    assert git(wt, "config", f"merge.{MD.DRIVER}.driver").strip().startswith("/elsewhere/.venv/bin/python -m parity")
    assert git(repo, "config", f"diff.{T.DRIVER}.textconv").strip() == main_cmd
    assert git(repo, "config", f"merge.{MD.DRIVER}.driver").strip() == main_merge

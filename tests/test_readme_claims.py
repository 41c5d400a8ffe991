"""README.md's figures and example outputs are today's, not a past release's.

A new user copies README's commands and compares what they print with what the
README shows; stale figures (the AOT grid's job count, the gate fuzzer's kind
count, the `parity check` sample's counters, the `emit` example printed by a
selection that is no longer the default) read as a broken install. Each test
takes the figure from the code, so a change that moves one names the README
line to update.
"""

import re
import shlex
from pathlib import Path

from parity.app.main import main as parity_main
from parity.config import CANONICAL_FLAVORS, load_families

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_check_sample_counts_every_config_of_the_families_it_shows():
    # a GREEN check counts each config expected to lower as IDENTICAL and each expected
    # rejection as BOTH_REJECTED, at every flavor the config applies to
    shown = {(fam, fl): (int(a), int(b)) for fam, fl, a, b in re.findall(
        r"^(\w+) +(llvm\d+)  IDENTICAL=(\d+) BOTH_REJECTED=(\d+) MISMATCH=0 ", README, re.M)}
    want, lines = {}, []
    for fam in load_families():
        for fl in CANONICAL_FLAVORS:
            kinds = [c.expectation(fl).kind for c in fam.configs if fl in c.flavors]
            want[fam.name, fl] = (kinds.count("ok"), kinds.count("reject"))
            lines.append(f"{fam.name} {fl} IDENTICAL={kinds.count('ok')} BOTH_REJECTED={kinds.count('reject')}")
    # a sample: the families it shows are shown whole and right; a family added later need
    # not be (a contributor's new family does not make the README stale)
    families = sorted({f for f, _ in shown})
    assert families and {(f, fl) for f in families for fl in CANONICAL_FLAVORS} == set(shown), \
        "README's `parity check` sample shows a family at some flavors only"
    assert shown == {k: want.get(k) for k in shown}, "README's `parity check` sample is stale; today:\n" + \
        "\n".join(ln for ln in lines if ln.split()[0] in families)
    clean = re.findall(r"^golden (\w+)\.json: clean$", README, re.M)
    assert clean == families


def test_the_aot_grid_size_is_the_engines():
    import python_engine
    m = re.search(r"\((\d+) jobs at llvm20/llvm22, (\d+) at llvm23", README)
    assert m, "README names the AOT grid's size"
    sizes = {fl: python_engine.aot_jobs_text(fl)[0] for fl in CANONICAL_FLAVORS}
    assert (int(m[1]), int(m[1]), int(m[2])) == (sizes["llvm20"], sizes["llvm22"], sizes["llvm23"]), sizes
    assert f"{sizes['llvm20']} jobs at llvm20/llvm22" in (REPO / "docs" / "policy.md").read_text()


def test_the_gate_fuzzer_kind_count_is_its_kind_table():
    from parity.fuzz.gate_kinds import KINDS
    m = re.search(r"(\d+) kinds of hostile shards", README)
    assert m and int(m[1]) == len(KINDS), f"README: {m and m[0]}; the table holds {len(KINDS)} kinds"


def _emit_examples():
    """(argv after `parity`, the output lines README shows) of each `$ parity emit` example."""
    block = README[README.index("```sh\n$ parity emit"):]
    block = block[:block.index("```\n", 4)].splitlines()[1:]
    out, i = [], 0
    while i < len(block):
        cmd = block[i][2:]
        while cmd.endswith("\\"):
            i += 1
            cmd = cmd[:-1] + block[i].strip()
        i += 1
        shown = []
        while i < len(block) and not block[i].startswith("$ "):
            shown.append(block[i])
            i += 1
        out.append((shlex.split(cmd)[1:], shown))
    return out


def test_the_emit_examples_print_what_readme_shows(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    examples = _emit_examples()
    assert len(examples) == 3 and "--select" not in examples[0][0] and "model" in examples[1][0]
    for argv, shown in examples:
        argv = [str(tmp_path) if a == "out" and argv[k - 1] == "--out" else a for k, a in enumerate(argv)]
        assert parity_main(argv) == 0
        got = capsys.readouterr().out.replace(f"{tmp_path}/", "out/").splitlines()
        timing = re.compile(r" in [0-9.]+ s$")
        assert [timing.sub("", ln) for ln in got] == [timing.sub("", ln) for ln in shown], argv

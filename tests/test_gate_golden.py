"""Golden shard I/O (parity/golden/shards.py): format, strict loading, atomic writes."""

import json

import pytest

from parity.golden import shards as G

SHA = "0123456789abcdef" * 4
FLAVORS = {
    "llvm20": {"b": {"rejected": "amdgpu-cluster-dims requires flavor llvm23"},
               "a": {"bytes": 120, "kernel": "k_a", "sha256": SHA}},
    "llvm22": {},
    "llvm23": {"a": {"bytes": 121, "kernel": "k_a", "sha256": SHA.replace("0", "f")}},
}


NONEMPTY = {fl: e for fl, e in FLAVORS.items() if e}  # format 2 has no line for an empty flavor


def test_render_format_is_one_sorted_entry_per_line_lf_and_trailing_newline():
    text = G.render_shard("fam", FLAVORS)
    assert "\r" not in text and text.endswith("\n")
    assert text.splitlines() == [
        '{"family": "fam",',
        '"llvm20/a": {"bytes": 120, "kernel": "k_a", "sha256": "%s"},' % SHA,
        '"llvm20/b": {"rejected": "amdgpu-cluster-dims requires flavor llvm23"},',
        '"llvm23/a": {"bytes": 121, "kernel": "k_a", "sha256": "%s"},' % SHA.replace("0", "f"),
        '"format": 2}',
    ]
    assert "count" not in text  # no stored counters
    doc = json.loads(text)
    assert doc["format"] == 2 and doc["family"] == "fam"


def test_format_1_is_still_read(tmp_path):
    old = json.dumps({"format": 1, "family": "fam", "flavors": FLAVORS}, sort_keys=True, indent=2) + "\n"
    (tmp_path / "fam.json").write_text(old)
    assert G.load_shard(tmp_path, "fam") == FLAVORS


def test_conflict_entries_load_and_bad_ones_are_refused(tmp_path):
    e = {"bytes": 1, "kernel": "k", "sha256": SHA}
    c = {"conflict": {"base": None, "ours": e, "theirs": {"rejected": "r"}}}
    G.write_shard(tmp_path, "fam", {"llvm23": {"a": c}})
    got = G.load_shard(tmp_path, "fam")
    assert got == {"llvm23": {"a": c}} and G.is_conflict(got["llvm23"]["a"])
    assert "merge conflict (ours k 1B" in G.describe_entry(c)
    bad = {"conflict": {"ours": e}}
    assert "'conflict' must hold base/ours/theirs" in _load_bad(
        tmp_path, ('{"family": "fam",\n"llvm23/a": %s,\n"format": 2}\n' % json.dumps(bad)).encode())


def test_marker_sides_split_a_conflicted_text():
    text = "a\n<<<<<<< HEAD\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> b\nz\n"
    assert G.marker_sides(text) == ("a\nours\nz\n", "a\ntheirs\nz\n")
    assert G.marker_sides("a\n") is None
    assert G.marker_sides("<<<<<<< x\nours\n") is None


def test_round_trip_is_byte_stable(tmp_path):
    p = G.write_shard(tmp_path, "fam", FLAVORS)
    first = p.read_bytes()
    loaded = G.load_shard(tmp_path, "fam")
    assert loaded == NONEMPTY
    G.write_shard(tmp_path, "fam", loaded)
    assert p.read_bytes() == first
    assert sorted(x.name for x in tmp_path.iterdir()) == ["fam.json"]  # no temp files left


def test_missing_shard_is_none(tmp_path):
    assert G.load_shard(tmp_path, "nope") is None


def _load_bad(tmp_path, data: bytes):
    (tmp_path / "fam.json").write_bytes(data)
    with pytest.raises(G.GoldenError) as ei:
        G.load_shard(tmp_path, "fam")
    msg = str(ei.value)
    assert "\n" not in msg and msg.startswith(str(tmp_path / "fam.json") + ": ")
    return msg


def test_crlf_on_every_line_is_read_as_lf_and_mixed_line_ends_are_rejected(tmp_path):
    # issue 39: a core.autocrlf checkout gets CRLF on every line: read unambiguously
    lf = G.render_shard("fam", FLAVORS)
    (tmp_path / "fam.json").write_bytes(lf.replace("\n", "\r\n").encode())
    assert G.load_shard(tmp_path, "fam") == G.load_shard_layout(tmp_path, "fam")[0]
    notes = []
    assert G.load_shard_layout(tmp_path, "fam", notes=notes)[1] is None  # canonical once read as LF
    assert len(notes) == 1 and notes[0].startswith(f"note: {tmp_path / 'fam.json'}: CRLF line ends on every line")
    mixed = lf.replace("\n", "\r\n", 1).encode()
    assert "mixed line ends (CRLF at line 1, LF at line 2)" in _load_bad(tmp_path, mixed)
    assert "a CR without LF at line 2" in _load_bad(tmp_path, lf.replace("\n", "\n\r", 1).encode())


def test_conflict_markers_are_rejected(tmp_path):
    good = G.render_shard("fam", FLAVORS).splitlines(keepends=True)
    conflicted = good[:3] + ["<<<<<<< HEAD\n"] + good[3:4] + ["=======\n"] + good[3:4] + \
        [">>>>>>> feature\n"] + good[4:]
    msg = _load_bad(tmp_path, "".join(conflicted).encode())
    assert "git conflict marker '<<<<<<<' at line 4" in msg and "run `parity write`" in msg


def test_malformed_json_is_rejected(tmp_path):
    msg = _load_bad(tmp_path, b'{"format": 1, "family": "fam",\n "flavors": {\n')
    assert "malformed JSON at line 3" in msg


@pytest.mark.parametrize("doc, what", [
    ({"format": 3, "family": "fam", "flavors": {}}, "unsupported format 3"),
    ({"format": 2, "family": "fam", "llvm23": {"rejected": "r"}}, "key 'llvm23' is not FLAVOR/CONFIG"),
    ({"format": 2, "family": "fam", "llvm23/a/b": {"rejected": "r"}}, "is not FLAVOR/CONFIG"),
    ({"format": 2, "family": "fam", "llvm23/a": {"rejected": 3}}, "'rejected' must be a string"),
    ({"format": 1, "family": "other", "flavors": {}}, "holds family 'other'"),
    ({"format": 1, "family": "fam", "flavors": {}, "count": 3}, "top-level keys"),
    ({"format": 1, "family": "fam", "flavors": {"llvm20": {"a": {"sha256": SHA}}}}, "entry keys"),
    ({"format": 1, "family": "fam", "flavors": {"llvm20": {"a": {"bytes": 1, "kernel": "k",
                                                                  "sha256": "xyz"}}}}, "64 lowercase hex"),
])
def test_bad_structure_is_rejected(tmp_path, doc, what):
    assert what in _load_bad(tmp_path, (json.dumps(doc) + "\n").encode())


def test_alias_flavor_keys_resolve_through_the_engine_table(tmp_path):
    table = {"llvm20": "llvm20", "llvm22": "llvm22", "llvm23": "llvm23", "llvm24": "llvm23"}
    doc = {"format": 1, "family": "fam", "flavors": {"llvm24": {"a": {"rejected": "r"}}}}
    (tmp_path / "fam.json").write_text(json.dumps(doc) + "\n")
    assert G.load_shard(tmp_path, "fam", table.get) == {"llvm23": {"a": {"rejected": "r"}}}
    doc["flavors"]["llvm23"] = {}
    (tmp_path / "fam.json").write_text(json.dumps(doc) + "\n")
    with pytest.raises(G.GoldenError, match="alias of 'llvm23'"):
        G.load_shard(tmp_path, "fam", table.get)


def test_diff_flavors_reports_added_removed_changed():
    old = {"llvm20": {"a": {"rejected": "x"}, "gone": {"rejected": "y"}}}
    new = {"llvm20": {"a": {"rejected": "z"}, "new": {"bytes": 1, "kernel": "k", "sha256": SHA}}}
    got = [(f.kind, f.config, f.detail) for f in G.diff_flavors("fam", old, new)]
    assert got == [("CHANGED", "a", "reason 'x' -> 'z'"),
                   ("REMOVED", "gone", "rejected 'y'"),
                   ("ADDED", "new", "k 1B sha256:0123456789ab")]


def test_write_under_lock(tmp_path):
    with G.lock(tmp_path):
        G.write_shard(tmp_path, "fam", FLAVORS)
    assert G.load_shard(tmp_path, "fam") == NONEMPTY


def test_duplicate_key_in_shard_is_refused(tmp_path):
    """A key given twice (e.g. left by a merge) must not be silently resolved."""
    text = ('{"family": "ir_core", "flavors": {"llvm20": {"casts": {"rejected": "a"}, '
            '"casts": {"rejected": "b"}}}, "format": 1}\n')
    with pytest.raises(G.GoldenError) as e:
        G.parse_shard(text, "ir_core.json", "ir_core")
    assert "duplicate key 'casts'" in str(e.value) and "ir_core.json" in str(e.value)


def test_bless_runs_numerics_on_llvm23_text_when_only_llvm20_changed():
    """Review finding: `parity write --flavor llvm20` must not bless a kernel change without the
    numerics oracle; the emulator runs the config's llvm23 text (docs/gate.md)."""
    from parity.golden.bless import numerics_selection
    from parity.config import load_families
    fams = load_families(only=["conv_fwd_split_k_reduce", "perf_model"])
    sel = numerics_selection(fams, {"conv_fwd_split_k_reduce": {"llvm20": {"bf16_v8_t256_d4"}},
                                    "perf_model": {"llvm20": {"x"}}})
    assert sel == {("conv_fwd_split_k_reduce", "bf16_v8_t256_d4")}
    # a must-reject config has no llvm23 text to run
    assert numerics_selection(fams, {"conv_fwd_split_k_reduce": {"llvm22": {"reject_vector3"}}}) == set()


def test_bless_plan_change_runs_the_numerics_of_every_planned_config():
    """Issue 34: a change to a family that plans launches or degrees (conv_launch,
    split_k_policy, conv_abi) is blessed only through the numerics of every config
    whose launch it plans; none planned is a refusal, not "numerics oracle 0 config(s)"."""
    from parity.golden.bless import numerics_selection, run_oracles
    from parity.config import load_families
    from parity.sim import numerics as N
    conv = {("conv_implicit_gemm", c) for f, c, _, _ in N.accepted_configs(["conv_implicit_gemm"])}
    red = {("conv_fwd_split_k_reduce", c) for f, c, _, _ in N.accepted_configs(["conv_fwd_split_k_reduce"])}
    fams = load_families(only=["conv_launch"])
    assert len(conv) > 90 and len(red) > 100
    assert numerics_selection(fams, {"conv_launch": {"llvm23": {"x"}}}) == conv
    assert numerics_selection(load_families(only=["conv_abi"]), {"conv_abi": {"llvm22": {"x"}}}) == conv | red
    assert set(N.PLANNERS) <= {f.name for f in load_families()}
    for fam, planned in N.PLANNERS.items():
        assert set(planned) <= set(N.PLANS), fam
    # nothing planned (the planned families have no accepted config here): refused
    orig = N.PLANNERS["conv_launch"]
    try:
        N.PLANNERS["conv_launch"] = ("no_such_family",)
        rep = run_oracles([], {"conv_launch": {"llvm23": {"x"}}})
    finally:
        N.PLANNERS["conv_launch"] = orig
    assert rep.simulated == 0
    assert rep.failed("conv_launch")
    assert "numerics oracle: 0 config(s) for a change to conv_launch" in rep.failures["conv_launch"][0]

"""Golden shard I/O (parity/golden.py): format, strict loading, atomic writes."""

import json

import pytest

from parity import golden as G

SHA = "0123456789abcdef" * 4
FLAVORS = {
    "llvm20": {"b": {"rejected": "amdgpu-cluster-dims requires flavor llvm23"},
               "a": {"bytes": 120, "kernel": "k_a", "sha256": SHA}},
    "llvm22": {},
    "llvm23": {"a": {"bytes": 121, "kernel": "k_a", "sha256": SHA.replace("0", "f")}},
}


def test_render_format_is_sorted_lf_and_trailing_newline():
    text = G.render_shard("fam", FLAVORS)
    assert text.endswith("}\n") and "\r" not in text
    assert text == json.dumps({"format": 1, "family": "fam", "flavors": FLAVORS},
                              sort_keys=True, indent=2) + "\n"
    assert text.index('"a"') < text.index('"b"')
    assert "count" not in text  # no stored counters
    doc = json.loads(text)
    assert doc["format"] == 1 and doc["family"] == "fam"


def test_round_trip_is_byte_stable(tmp_path):
    p = G.write_shard(tmp_path, "fam", FLAVORS)
    first = p.read_bytes()
    loaded = G.load_shard(tmp_path, "fam")
    assert loaded == FLAVORS
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


def test_crlf_is_rejected(tmp_path):
    data = G.render_shard("fam", FLAVORS).replace("\n", "\r\n").encode()
    assert "CRLF line ends (line 1)" in _load_bad(tmp_path, data)


def test_conflict_markers_are_rejected(tmp_path):
    good = G.render_shard("fam", FLAVORS).splitlines(keepends=True)
    conflicted = good[:3] + ["<<<<<<< HEAD\n"] + good[3:5] + ["=======\n"] + good[3:5] + \
        [">>>>>>> feature\n"] + good[5:]
    msg = _load_bad(tmp_path, "".join(conflicted).encode())
    assert "git conflict marker '<<<<<<<' at line 4" in msg


def test_malformed_json_is_rejected(tmp_path):
    msg = _load_bad(tmp_path, b'{"format": 1, "family": "fam",\n "flavors": {\n')
    assert "malformed JSON at line 3" in msg


@pytest.mark.parametrize("doc, what", [
    ({"format": 2, "family": "fam", "flavors": {}}, "unsupported format 2"),
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
    assert G.load_shard(tmp_path, "fam") == FLAVORS


def test_duplicate_key_in_shard_is_refused(tmp_path):
    """A key given twice (e.g. left by a merge) must not be silently resolved."""
    text = ('{"family": "ir_core", "flavors": {"llvm20": {"casts": {"rejected": "a"}, '
            '"casts": {"rejected": "b"}}}, "format": 1}\n')
    with pytest.raises(G.GoldenError) as e:
        G.parse_shard(text, "ir_core.json", "ir_core")
    assert "duplicate key 'casts'" in str(e.value) and "ir_core.json" in str(e.value)

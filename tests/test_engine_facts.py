"""The engine-facts API: both engines give the same facts (a mismatch fails like a byte mismatch)."""
import cpp_engine.facts as cpp_facts
import python_engine.facts as py_facts


def test_facts_both_engines_agree():
    py, cpp = py_facts.facts_data(), cpp_facts.facts_data()
    assert set(cpp) <= set(py)
    assert set(cpp) == {"lds_bytes", "reduce_degrees", "cluster_sizes", "abi_arg_names"}
    for key in cpp:
        assert cpp[key] == py[key], key


def test_facts_values():
    py = py_facts.facts_data()
    assert py["lds_bytes"]["gfx1250"] == 327680 and py["lds_bytes"]["gfx942"] == 65536
    assert py["reduce_degrees"] == [0, 2, 4, 8, 16, 32]
    assert py["cluster_sizes"] == [4, 8, 12, 15]
    assert py["abi_args"]["plain"][0] == ["x_ptr", "in_ptr"]
    assert py["bf16_bits"][1] == 0x3EAB  # 1/3 rounded to bf16, nearest even
    assert py_facts.lds_bytes("gfx950") == 163840


def test_resolve_degree_unknown_arch():
    import pytest
    with pytest.raises(ValueError, match="unknown arch"):
        py_facts.resolve_degree({"split_k": -1, "split_k_cluster": 0}, "gfx0", "llvm22")

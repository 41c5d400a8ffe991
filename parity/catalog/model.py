"""The perf model's predictions for every layer of a catalog, as ``parity
emit`` selects (docs/perf_model.md): ``parity perf --layers`` and
bench/catalog_model.py read them. A tool above both engines; it calls the
Python engine's perf model directly (a debt: the C++ engine gives the same
numbers as the ``perf_model`` family's text)."""
from __future__ import annotations

import python_engine
from python_engine.facts import fold_width, layer_predictions, select_by_model

from .emit import default_catalog
from .miopen import read_catalog


def catalog_predictions(path: str | None = None, arch="gfx1250", flavor="llvm23", cus: int | None = None) -> list:
    """Every layer of a catalog (default the shipped parity/data/layers.txt)
    with its candidate predictions, as emit selects: the layer's dtype and
    vector widths ``conv_implicit_gemm.load_vector`` of the folded channels per
    group. ``[{"layer", "dtype", "M", "Kgemm", "candidates":
    layer_predictions(...), "selected": row | None, "runner_up": row | None,
    "seed": {"binary", "tile_m", "tile_n", "tile_k", "degree", "total_ps"} |
    None}, ...]`` in catalog order; times in picoseconds. Raises
    ProblemInputError for an unreadable or bad catalog."""
    path = path or default_catalog()
    layers = read_catalog(path)
    out = []
    for layer in layers:
        cpg = fold_width(layer.problem)[1].cpg
        v = python_engine.load_vector(cpg)
        spec = {"dtype": layer.dtype if layer.dtype != "fp32" else "bf16", "vector_a": v, "vector_b": v,
                "acc_epilogue": layer.acc_epilogue}
        ms = select_by_model(layer.problem, arch, flavor, spec, cus)
        rows = layer_predictions(layer.problem, arch, flavor, spec, cus)
        sd = ms.seed
        out.append({"layer": layer.name, "dtype": spec["dtype"], "M": layer.problem.M, "Kgemm": layer.problem.Kgemm,
                    "candidates": rows, "selected": next((r for r in rows if r["selected"]), None),
                    "runner_up": next((r for r in rows if r["runner_up"]), None),
                    "seed": None if sd is None else {"binary": sd.binary, "tile_m": sd.spec["tile_m"],
                                                     "tile_n": sd.spec["tile_n"], "tile_k": sd.spec["tile_k"],
                                                     "degree": sd.degree, "total_ps": sd.total_ps}})
    return out

"""The per-layer part of ``parity perf --layers [CATALOG]``: every catalog layer's
admitted candidates (tile x degree x binary: plain, two-stage with Stage 2 and its
workspace traffic, cluster) predicted by the gfx1250 roofline perf model
(python_engine/policy/perf_model.py, docs/perf_model.md), the model's choice, its
runner-up and the seed policy's choice scored by the same model.

Times are the model's integer picoseconds, printed in microseconds.
"""
from __future__ import annotations

from .table import render
from parity.catalog.model import catalog_predictions

HEAD = ("layer", "M", "Kgemm", "cands", "selected", "us", "runner-up", "us", "seed", "us", "seed/sel")


def describe(row: dict | None) -> str:
    """``binary tile_mxtile_nxtile_k [dN]`` of a candidate or seed row ('-' for None)."""
    if row is None:
        return "-"
    tile = f"{row['tile_m']}x{row['tile_n']}x{row['tile_k']}"
    if row["binary"] == "plain":
        return f"plain {tile}"
    return f"{row['binary']} {tile} d{row['degree']}"


def _us(row: dict | None) -> str:
    return "-" if row is None else f"{row['total_ps'] / 1e6:.3f}"


def predict(catalog: str | None, flavor: str) -> list[dict]:
    """``perf_model.catalog_predictions`` of ``catalog`` (None: the shipped one) at
    ``flavor`` on gfx1250. OSError / ProblemInputError for a bad catalog."""
    return catalog_predictions(catalog, "gfx1250", flavor)


def totals(layers: list[dict]) -> tuple[int, int]:
    """(model's choices, seed's choices) summed over the layers, picoseconds."""
    sel = sum(x["selected"]["total_ps"] for x in layers if x["selected"])
    seed = sum(x["seed"]["total_ps"] for x in layers if x["seed"])
    return sel, seed


def lines(layers: list[dict], catalog: str, flavor: str) -> list[str]:
    """The text section: a header with the catalog totals, then one row per layer."""
    sel, seed = totals(layers)
    ratio = f", {seed / sel:.2f}x" if sel else ""
    out = [f"layers: {len(layers)} from {catalog}, gfx1250 {flavor}: predicted total {sel / 1e6:.3f} us "
           f"with the model's choices, {seed / 1e6:.3f} us with the seed policy's (seed/model{ratio or ' -'})"]
    rows = []
    for x in layers:
        s, r, d = x["selected"], x["runner_up"], x["seed"]
        rel = f"{d['total_ps'] / s['total_ps']:.2f}" if s and d and s["total_ps"] else "-"
        rows.append([x["layer"], str(x["M"]), str(x["Kgemm"]), str(len(x["candidates"])), describe(s), _us(s),
                     describe(r), _us(r), describe(d), _us(d), rel])
    out += ["  " + line for line in render(rows, HEAD)]
    return out


def to_json(layers: list[dict], catalog: str, flavor: str) -> dict:
    sel, seed = totals(layers)
    return {"catalog": catalog, "flavor": flavor, "arch": "gfx1250", "total_ps": sel, "seed_total_ps": seed,
            "layers": layers}

"""Text tables of a perf report: one row per config, and before/after rows with ratios.

Columns (per main-loop iteration unless said):

=========  ===================================================================
wmma       WMMA instructions in the loop
insts      instructions in the loop
nonW/W     non-WMMA instructions per WMMA
kt         K tiles one iteration covers
gB/W       global (buffer) bytes per WMMA, per wave (32 lanes)
ldsB/W     LDS bytes per WMMA, per wave
cyc        llvm-mca cycles per iteration (whole body)
cyc-nb     llvm-mca cycles per iteration without barrier instructions
cyc-bm     the barrier model's cycles per iteration: cyc-nb plus each barrier's
           exposed latency (parity/perf/barrier.py; its latency is an assumption)
gap        cycles of work between each barrier signal and its wait (llvm-mca, one pass)
v/s        VGPRs / SGPRs
lds        LDS bytes of the kernel (KiB)
scr        scratch bytes
occ        waves per SIMD (LLVM's), and its VGPR / LDS limits
stores     epilogue global stores, count x bytes per lane
=========  ===================================================================
"""
from __future__ import annotations

from .targets import label_of

HEAD = ("config", "wmma", "insts", "nonW/W", "kt", "gB/W", "ldsB/W", "cyc", "cyc-nb", "cyc-bm", "gap", "v/s",
        "lds", "scr", "occ(v,l)", "stores")


def _f(v, nd=1) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}".rstrip("0").rstrip(".") if nd else f"{v:.0f}"
    return str(v)


def gaps_text(m) -> str:
    """The barrier gaps' work cycles, "/"-separated ("-" without a barrier model)."""
    bm = (m.mca or {}).get("barrier_model")
    if not bm:
        return "-"
    return "/".join(_f(w, 0) for w in bm["gaps"]) or "none"


def stores_text(st: dict) -> str:
    return " ".join(f"{n}x{w}B" for w, n in sorted(st.items())) if st else "-"


def cells(name: str, m) -> list[str]:
    if m is None:
        return [name] + ["absent"] + [""] * (len(HEAD) - 2)
    if not m.ok:
        return [name, "ERROR", m.error[:80]] + [""] * (len(HEAD) - 3)
    mx = m.mix.to_json() if m.mix else {}
    return [name, _f(m.mix.wmma if m.mix else None), _f(m.mix.total if m.mix else None),
            _f(mx.get("non_wmma_per_wmma"), 2), _f(m.k_tiles_per_iteration, 2),
            _f(mx.get("global_bytes_per_wmma")), _f(mx.get("lds_bytes_per_wmma")),
            _f(m.cycles("full"), 0), _f(m.cycles("no_barrier"), 0), _f(m.cycles("barrier_model"), 0),
            gaps_text(m), f"{_f(m.vgprs)}/{_f(m.sgprs)}",
            _f(round(m.lds_bytes / 1024, 1) if m.lds_bytes is not None else None), _f(m.scratch_bytes),
            f"{_f(m.occupancy)}({_f(m.waves_vgpr)},{_f(m.waves_lds)})", stores_text(m.epilogue_stores)]


def render(rows: list[list[str]], head=HEAD) -> list[str]:
    rows = [list(head)] + rows
    w = [max(len(r[i]) for r in rows) for i in range(len(head))]
    out = []
    for r in rows:
        out.append("  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r)).rstrip())
    return out


def name_of(key: str) -> str:
    lab = label_of(key)
    return f"{key} [{lab}]" if lab else key


def report_rows(keys: list[str], measures: dict) -> list[list[str]]:
    return [cells(name_of(k), measures.get(k)) for k in keys]


#: (column, getter, decimals) of the before/after table; ratio = after / before.
COMPARE = (
    ("insts", lambda m: m.mix.total if m.mix else None, 0),
    ("nonW/W", lambda m: m.non_wmma_per_wmma, 2),
    ("cyc", lambda m: m.cycles("full"), 0),
    ("cyc/kt", lambda m: (m.cycles("full") / (m.k_tiles_per_iteration or 1)) if m.cycles("full") else None, 0),
    ("cyc-nb", lambda m: m.cycles("no_barrier"), 0),
    ("cyc-bm/kt", lambda m: (m.cycles("barrier_model") / (m.k_tiles_per_iteration or 1))
     if m.cycles("barrier_model") else None, 0),
    ("gB/W", lambda m: m.mix.to_json()["global_bytes_per_wmma"] if m.mix else None, 1),
    ("ldsB/W", lambda m: m.mix.to_json()["lds_bytes_per_wmma"] if m.mix else None, 1),
    ("vgpr", lambda m: m.vgprs, 0),
    ("lds", lambda m: m.lds_bytes, 0),
    ("occ", lambda m: m.occupancy, 0),
)


def compare_value(m, col: str):
    for name, get, _ in COMPARE:
        if name == col:
            try:
                return get(m) if m is not None and m.ok else None
            except (TypeError, ZeroDivisionError):
                return None
    raise KeyError(col)


def compare_rows(keys: list[str], before: dict, after: dict) -> list[list[str]]:
    """One row per config: ``before -> after (ratio)`` per :data:`COMPARE` column, then the stores."""
    rows = []
    for k in keys:
        b, a = before.get(k), after.get(k)
        row = [name_of(k)]
        for name, _, nd in COMPARE:
            vb, va = compare_value(b, name), compare_value(a, name)
            if vb is None and va is None:
                row.append("-")
                continue
            ratio = f" ({va / vb:.2f}x)" if vb and va is not None else ""
            row.append(f"{_f(vb, nd)}->{_f(va, nd)}{ratio}")
        sb = stores_text(b.epilogue_stores) if b is not None and b.ok else "-"
        sa = stores_text(a.epilogue_stores) if a is not None and a.ok else "-"
        row.append(sb if sb == sa else f"{sb} -> {sa}")
        rows.append(row)
    return rows


COMPARE_HEAD = ("config",) + tuple(c for c, _, _ in COMPARE) + ("stores",)

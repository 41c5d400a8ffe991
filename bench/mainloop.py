"""Main-loop cost of conv_implicit_gemm kernels, read from LLVM's gfx1250 code.

For each config: lower the spec with the Python engine (llvm22 text), compile it
with ``llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1250 -O3``, find the K loop
(the basic-block range ending in a backward branch that holds the WMMAs), and
print its instruction count, WMMA count, non-WMMA instructions per WMMA, the
instruction mix (VALU, SALU, LDS, global, waits) and the cycles per iteration
``llvm-mca-22 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1250`` predicts for the loop
body (Total Cycles / iterations, 100 iterations).

    python bench/mainloop.py                 # the working tree
    python bench/mainloop.py --base HEAD~3   # REF's Python engine and the working tree, side by side

Cycles are per K tile (an unrolled loop covers several: ``kt``), so loops of
different unroll compare. Also per config: VGPRs, LLVM's occupancy (waves per
SIMD), and the prefetch distance of the loop's global loads in K tiles of work
(parity/perf/prefetch.py). Last, the issue-26 goal lines of ``64x64x32 plain``
for each tree (the limits of parity/perf/targets.py): met / not met.

Needs ``llc-22`` and ``llvm-mca-22`` (Debian ``llvm-22``). Prints a table; no
timing of this machine is involved.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LLC = os.environ.get("LLC", "llc-22")
MCA = os.environ.get("LLVM_MCA", "llvm-mca-22")
TARGET = ["-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx1250"]

# name -> spec (the 16x16 tile is the AOT grid's small tile; the stem rows are the
# 3-channel stem's kernels: element-wise loads, and the padded-pixel small-channel path,
# which a tree without it rejects: its row is then left out for that tree).
CONFIGS = {
    "64x64x32 plain": {},
    "64x64x32 K walk": {},
    "16x16x32 w1x1 (AOT)": {"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1},
    "16x16x32 K walk": {"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1},
    "32x32x32 w1x1 (AOT)": {"tile_m": 32, "tile_n": 32, "waves_m": 1, "waves_n": 1, "split_k": 2,
                            "split_k_cluster": 0},
    "32x32x32 K walk": {"tile_m": 32, "tile_n": 32, "waves_m": 1, "waves_n": 1, "split_k": 2,
                        "split_k_cluster": 0},
    "128x128x64 plain": {"tile_m": 128, "tile_n": 128, "tile_k": 64},
    "128x128x64 K walk": {"tile_m": 128, "tile_n": 128, "tile_k": 64},
    "64x64x64 two-stage": {"tile_k": 64, "split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"},
    "64x64x64 K walk": {"tile_k": 64, "split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"},
    "64x64x32 tap-tile": {},
    "16x16x32 tap-tile": {"tile_m": 16, "tile_n": 16, "waves_m": 1, "waves_n": 1},
    "32x32x32 tap-tile": {"tile_m": 32, "tile_n": 32, "waves_m": 1, "waves_n": 1, "split_k": 2,
                          "split_k_cluster": 0},
    "128x128x64 tap-tile": {"tile_m": 128, "tile_n": 128, "tile_k": 64},
    "64x64x64 tap-tile": {"tile_k": 64, "split_k": 4, "split_k_cluster": 0, "epilogue": "cshuffle"},
    "64x64x32 va1 (C=3)": {"vector_a": 1},
    "64x64x32 stem va1 vb1": {"vector_a": 1, "vector_b": 1},
    "64x64x32 stem va3 vb3": {"vector_a": 3, "vector_b": 3},
}

GOAL_CONFIG = "64x64x32 plain"

# rows that measure a named loop (its header's IR block name) instead of the smallest:
# the K walk beside the uniform-tap loop (docs/conv_implicit_gemm.md, "Uniform-tap loop"),
# the loop a layer whose cpg is not a multiple of 2*tile_k runs; a tree without the
# uniform-tap loop has only this loop, so its row equals the plain row there.
# Since issue 40 the 64x64x64 tile runs the uniform-tap loop beside its one-tile K walk
# (tap_beside): its row measures the tap loop (a tree without it: the smallest loop,
# its K walk) and the "K walk" row the walk beside it.
# Issue 40 then put it beside the one-wave 32x32x32 tile's walk too (its rows likewise).
# Stop 52 put it beside the 16x16x32 w1x1 and 128x128x64 walks (tap rows): their rows likewise.
LOOP_BLOCK = {"64x64x32 K walk": "kloop", "64x64x64 two-stage": "tap_loop", "64x64x64 K walk": "kloop",
              "32x32x32 w1x1 (AOT)": "tap_loop", "32x32x32 K walk": "kloop",
              "16x16x32 w1x1 (AOT)": "tap_loop", "16x16x32 K walk": "kloop",
              "128x128x64 plain": "tap_loop", "128x128x64 K walk": "kloop",
              "64x64x32 tap-tile": "taptile_loop", "16x16x32 tap-tile": "taptile_loop",
              "32x32x32 tap-tile": "taptile_loop", "128x128x64 tap-tile": "taptile_loop",
              "64x64x64 tap-tile": "taptile_loop"}

_LOWER = r"""
import json, sys
# the tree's package by path: an editable install's import redirector must not shadow it
sys.meta_path = [f for f in sys.meta_path if "Redirecting" not in type(f).__name__]
sys.path.insert(0, sys.argv[2])
from python_engine import api
assert api.__file__.startswith(sys.argv[2]), api.__file__
specs = json.loads(sys.argv[1])
out = {}
for k, s in specs.items():
    try:
        out[k] = api.lower('conv_implicit_gemm', s, 'gfx1250', 'llvm22').text
    except Exception as e:  # a spec this tree rejects (SpecRejected)
        if type(e).__name__ != "SpecRejected":
            raise
        out[k] = None
print(json.dumps(out))
"""


def lower_all(tree: Path, specs: dict) -> dict:
    """IR text of every spec from the Python engine found at ``tree``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", _LOWER, json.dumps(specs), str(tree)], cwd=tree, env=env,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def compile_asm(text: str) -> str:
    with tempfile.TemporaryDirectory() as d:
        ll = Path(d) / "k.ll"
        ll.write_text(text)
        r = subprocess.run([LLC, *TARGET, "-O3", str(ll), "-o", "-"], capture_output=True, text=True, check=True)
        return r.stdout


_LABEL = re.compile(r"^(\.LBB\d+_\d+):")
_BRANCH = re.compile(r"^\s+s_cbranch_\w+\s+(\.LBB\d+_\d+)")


def main_loop(asm: str, block: str | None = None) -> list[str]:
    """Instructions of the K loop: from a block label to the last backward branch to it,
    the smallest such range that holds a WMMA; with ``block``, only a range whose label
    LLVM annotates with that IR block name (``.LBB0_3: ; %kloop172``)."""
    return main_loop_marks(asm, block)[0]


def main_loop_marks(asm: str, block: str | None = None) -> tuple[list[str], list[int]]:
    """:func:`main_loop` and the body indices a ``; wave barrier`` comment stands before
    (a one-wave workgroup's barrier: no instruction; parity/perf/prefetch.py)."""
    lines = asm.splitlines()
    labels = {}
    best = None
    for i, ln in enumerate(lines):
        m = _LABEL.match(ln)
        if m:
            if block is None or re.search(rf";\s*%{block}\d*\s*$", ln):
                labels[m.group(1)] = i
            continue
        m = _BRANCH.match(ln)
        if m and m.group(1) in labels:
            body = lines[labels[m.group(1)]:i + 1]
            if any("v_wmma" in x for x in body) and (best is None or len(body) < len(best)):
                best = body
    if best is None:
        raise SystemExit("no K loop with WMMA found")
    body, marks = [], []
    for x in best:
        t = x.strip()
        if t == "; wave barrier":
            marks.append(len(body))
        elif t and not t.startswith((".", ";")) and not _LABEL.match(x):
            body.append(t)
    return body, marks


def classify(ins: str) -> str:
    mn = ins.split()[0]
    if mn.startswith("v_wmma"):
        return "wmma"
    if mn.startswith(("s_wait", "s_barrier")):
        return "wait"
    if mn in ("s_delay_alu", "s_clause", "s_nop", "s_set_vgpr_msb"):
        return "hint"
    if mn.startswith(("buffer_", "global_")):
        return "global"
    if mn.startswith("ds_"):
        return "lds"
    if mn.startswith("s_"):
        return "salu"
    return "valu"


def mca_cycles(body: list[str], iterations: int = 100) -> float:
    r = subprocess.run([MCA, *TARGET, f"-iterations={iterations}"], input="\n".join(body) + "\n",
                       capture_output=True, text=True, check=True)
    m = re.search(r"Total Cycles:\s+(\d+)", r.stdout)
    return int(m.group(1)) / iterations


# WMMAs one wave issues per K tile: (tile_m/(16 waves_m)) * (tile_n/(16 waves_n)) * tile_k/32
# with the spec defaults 64x64x32, 2x2 waves.
def wmmas_per_tile(spec: dict) -> int:
    g = {"tile_m": 64, "tile_n": 64, "tile_k": 32, "waves_m": 2, "waves_n": 2, **spec}
    return (g["tile_m"] // (16 * g["waves_m"])) * (g["tile_n"] // (16 * g["waves_n"])) * (g["tile_k"] // 32)


def _resource(asm: str, rx: str) -> int | None:
    m = re.search(rx, asm)
    return int(m.group(1)) if m else None


def measure(text: str, spec: dict, block: str | None = None) -> dict:
    from parity.perf.prefetch import prefetch, tiles
    asm = compile_asm(text)
    try:
        body, marks = main_loop_marks(asm, block)
    except SystemExit:   # a tree without that loop: its smallest K loop
        if block is None:
            raise
        body, marks = main_loop_marks(asm)
    mix = {k: 0 for k in ("wmma", "valu", "salu", "lds", "global", "wait", "hint")}
    for ins in body:
        mix[classify(ins)] += 1
    n = len(body)
    # llvm-mca's gfx1250 model gives s_barrier_signal/wait a 2000-cycle latency, which
    # swamps the loop; the second figure leaves the two barrier instructions out.
    nobar = [x for x in body if not x.startswith("s_barrier")]
    per = wmmas_per_tile(spec)
    kt = mix["wmma"] / per
    ds_loads = sum(1 for x in body if x.startswith("ds_load"))
    return dict(n=n, mix=mix, per_wmma=(n - mix["wmma"]) / mix["wmma"], kt=kt, cycles=mca_cycles(body) / kt,
                cycles_nobar=mca_cycles(nobar) / kt, vgprs=_resource(asm, r"; NumVgprs: (\d+)"),
                occupancy=_resource(asm, r"; Occupancy: (\d+)"), scratch=_resource(asm, r"; ScratchSize: (\d+)"),
                spills=sum(int(x) for x in re.findall(r"\.[vs]gpr_spill_count:\s+(\d+)", asm)),
                prefetch=tiles(prefetch(body, marks), per, ds_loads / kt))


def row(name: str, tag: str, r: dict) -> str:
    m = r["mix"]
    pf = "-" if r["prefetch"] is None else f"{r['prefetch']:.2f}"
    return (f"{name:<22} {tag:<6} {r['n']:>5} {m['wmma']:>4} {r['kt']:>3.0f} {r['per_wmma']:>7.1f} {m['valu']:>5} "
            f"{m['salu']:>5} {m['lds']:>4} {m['global']:>4} {m['wait']:>5} {m['hint']:>4} {r['cycles']:>8.1f} "
            f"{r['cycles_nobar']:>8.1f} {r['vgprs']:>5} {r['occupancy']:>3} {pf:>5}")


def goal_lines(tag: str, r: dict) -> list[str]:
    """The issue-26 goals of 64x64x32 plain (limits of parity/perf/targets.py), met or not."""
    from parity.perf import targets as T
    checks = (("non-WMMA per WMMA", r["per_wmma"], r["per_wmma"] <= T.NON_WMMA_LIMIT, f"<= {T.NON_WMMA_LIMIT}"),
              ("mca cycles/K tile w/o barriers", r["cycles_nobar"], r["cycles_nobar"] <= T.MCA_NB_LIMIT,
               f"<= {T.MCA_NB_LIMIT}"),
              ("prefetch distance (K tiles)", r["prefetch"], (r["prefetch"] or 0) >= T.PREFETCH_TILES,
               f">= {T.PREFETCH_TILES}"),
              ("occupancy (waves/SIMD)", r["occupancy"], (r["occupancy"] or 0) >= T.OCCUPANCY_MIN,
               f">= {T.OCCUPANCY_MIN}"),
              ("spills", r["spills"], r["spills"] == 0, "0"),
              ("scratch bytes", r["scratch"], r["scratch"] == 0, "0"))
    out = []
    for what, v, ok, lim in checks:
        shown = "-" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))
        out.append(f"goal [{tag}] {what}: {shown} (goal {lim}): {'met' if ok else 'not met'}")
    return out


def main(argv=None) -> int:
    from parity.cli.common import Parser, git_commit
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=git_commit("--base"), metavar="REF", help="also measure the Python engine of git REF")
    args = ap.parse_args(argv)
    import shutil
    for tool in (LLC, MCA):
        if shutil.which(tool) is None:
            print(f"error: {tool} not found (Debian/Ubuntu package llvm-22; or set LLC / LLVM_MCA)",
                  file=sys.stderr)
            return 2
    trees = []
    with tempfile.TemporaryDirectory(prefix="bench-mainloop-") as tmp:
        if args.base:
            sys.path.insert(0, str(ROOT))
            from parity.golden.ref_tree import extract, resolve_ref
            commit = resolve_ref(ROOT, args.base)
            extract(ROOT, commit, Path(tmp))
            trees.append((args.base[:6], Path(tmp)))
        trees.append(("now", ROOT))
        texts = [(tag, lower_all(tree, CONFIGS)) for tag, tree in trees]
        print(f"{'config':<22} {'tree':<6} {'insns':>5} {'wmma':>4} {'kt':>3} {'non/w':>7} {'valu':>5} "
              f"{'salu':>5} {'lds':>4} {'glob':>4} {'waits':>5} {'hint':>4} {'cyc/kt':>8} {'-barrier':>8} "
              f"{'vgpr':>5} {'occ':>3} {'pref':>5}")
        goals = []
        for name in CONFIGS:
            for tag, tx in texts:
                if tx[name] is not None:
                    r = measure(tx[name], CONFIGS[name], LOOP_BLOCK.get(name))
                    print(row(name, tag, r))
                    if name == GOAL_CONFIG:
                        goals += goal_lines(tag, r)
        print("\n".join(goals))
    return 0


if __name__ == "__main__":
    from parity.base.outputs import run_quietly_on_broken_pipe
    raise SystemExit(run_quietly_on_broken_pipe(main))  # Ctrl-C: one error line, exit 130

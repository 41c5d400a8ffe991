"""The vectorised race shadow (parity/sim/shadow.py) reports exactly what the
per-field shadow it replaced reported (tests/sim_shadow_reference.py, the
571ae5d code): a differential run over random access sequences, and a planted
race of every access kind (plain / raw-buffer load and store, global and LDS,
lanes in one contiguous span or scattered) caught through the IR."""
from __future__ import annotations

import numpy as np
import pytest

import sim_shadow_reference as ref
from parity.sim import Kernel, RaceError
from parity.sim.errors import VisibilityError
from parity.sim.launch import _Phase, _Run
from parity.sim.memory import WAVE
from parity.sim.shadow import Shadow
from python_engine.ir import types as T
from python_engine.ir.builder import IRBuilder
from python_engine.ir.printer import print_module
from python_engine.ir.values import const_int, i32, i64
from python_engine.kernels.common import inout_ptr, kernel_attrs, new_module
from python_engine.targets.arch import find_arch
from python_engine.targets.flavors import find_flavor


# -- differential: random access sequences through both shadows ----------------------------

class _Mem:
    def label(self):
        return "global 'buf' (256 bytes)"


class _X:
    """A wave context as parity/sim/launch.py builds it (the fields the shadow reads)."""


def _scenario(seed: int, clusters: int, S: int, W: int, steps: int, lds: bool):
    """Run one random sequence through the reference and the vectorised shadow;
    return the outcome (the first error's type and message, or None) after
    checking both agree at every step."""
    rng = np.random.default_rng(seed)
    n = 256
    names = [(i, 0, 0) for i in range(clusters * S)]
    run = _Run(None, W, names)
    cl = [_Phase() for _ in range(clusters)]
    wgs = [_Phase() for _ in range(clusters * S)]
    waves = []
    for wgi in range(clusters * S):
        for w in range(W):
            X = _X()
            X.agent, X.wgi, X.cli, X.wg, X.cl, X.S, X.launch, X.wave = wgi * W + w, wgi, wgi // S, wgs[wgi], \
                cl[wgi // S], S, run, w
            X.nrel1 = X.nrel2 = 0
            X.acq1 = X.acq2 = -1
            waves.append(X)
    if lds:   # one workgroup's LDS: only its waves reach it
        waves = waves[:W]
    old, new = ref.Shadow(n), Shadow(n, clustered=S > 1 and not lds)
    mem = _Mem()
    cross = float(rng.choice([0.0, 0.02, 0.1]))   # how often an access leaves the wave's own part
    for _ in range(steps):
        X = waves[rng.integers(len(waves))]
        ev = rng.random()
        if ev < 0.08:       # a workgroup barrier
            X.wg.phase += 1
            continue
        if ev < 0.12:       # a cluster barrier: also a workgroup barrier of every member
            c = X.cli
            for g in range(c * S, c * S + S):
                wgs[g].phase += 1
            cl[c].phase += 1
            continue
        if ev < 0.2:        # a fence
            level = int(rng.integers(0, 3))
            if rng.random() < 0.5:
                if level >= 1:
                    run.release(X, level)
            elif level >= 1:
                X.acq1 = X.wg.phase
                if level >= 2:
                    X.acq2 = X.cl.phase
            continue
        nb = int(rng.choice([1, 2, 4]))
        if rng.random() < cross and WAVE * nb <= n:   # lanes in one contiguous span: the slice path
            o = int(rng.integers(0, n - WAVE * nb + 1))
            idx = np.arange(o, o + WAVE * nb, dtype=np.int64).reshape(WAVE, nb)
            span = slice(o, o + WAVE * nb)
        else:   # scattered lanes; mostly inside the wave's own part of the memory
            home = n // len(waves) // 4 * 4
            lo, hi = (home * waves.index(X), home * (waves.index(X) + 1)) if rng.random() >= cross else (0, n)
            offs = rng.integers(lo // nb, hi // nb, WAVE) * nb
            idx = offs[:, None].astype(np.int64) + np.arange(nb)
            span = idx
        outs = []
        if ev < 0.6:
            for sh, ix in ((old, idx), (new, span)):
                try:
                    sh.read(ix, X, mem, "load")
                    outs.append(None)
                except (RaceError, VisibilityError) as e:
                    outs.append((type(e).__name__, str(e)))
        else:
            changed = rng.random(idx.shape) < 0.7
            for sh, ix in ((old, idx), (new, span)):
                try:
                    sh.write(ix, changed, X, mem, "store")
                    outs.append(None)
                except RaceError as e:
                    outs.append((type(e).__name__, str(e)))
        assert outs[0] == outs[1], (seed, outs)
        if outs[0] is not None:
            return outs[0]
    return None


@pytest.mark.parametrize("clusters,S,W,lds", [(2, 1, 2, False), (1, 2, 2, False), (2, 3, 2, False),
                                              (1, 1, 4, True), (1, 2, 3, True)])
def test_vectorised_shadow_reports_what_the_reference_reports(clusters, S, W, lds):
    kinds = set()
    for seed in range(150):
        out = _scenario(seed, clusters, S, W, 60, lds)
        kinds.add(None if out is None else (out[0], out[1].split(" byte offset")[0].split(":")[0]))
    # the sequences reach clean runs and both race and visibility reports
    assert None in kinds and ("RaceError", "race") in kinds


def test_differential_reaches_every_report_kind():
    msgs = set()
    for cfg in ((2, 2, 2, False), (1, 1, 4, True), (1, 2, 3, True)):
        for seed in range(150):
            out = _scenario(seed, *cfg[:3], 60, cfg[3])
            if out is not None:
                t, m = out
                msgs.add((t, next(w for w in ("visibility", "reads", "overwrites", "changes") if w in m)))
    assert msgs >= {("RaceError", "reads"), ("RaceError", "overwrites"), ("RaceError", "changes"),
                    ("VisibilityError", "visibility")}


# -- planted races through the IR, one per access kind --------------------------------------

N = 128   # floats: 4 regions of one wave each


def _racy(kind: str, space: str, access: str, layout: str, fixed: bool) -> str:
    """64 threads (2 waves). Wave w, lane l touches element ``region * 32 + li``
    (li = l, or 31 - l when ``layout`` is "scattered"):

    * RAW: load region (w + 1) % 2, store region w -- wave 1 reads what wave 0 wrote;
    * WAR: load region w + 1, store region w -- wave 1 rewrites what wave 0 read;
    * WAW: store region 0 -- both waves write it (different values: the thread id).

    ``fixed``: RAW / WAR get a release / barrier / acquire between the load and
    the store; WAW stores the lane index, the same bytes from both waves (an
    unchanged byte never races). LDS is filled first (its index; fenced)."""
    fl, ar = find_flavor("llvm23"), find_arch("gfx1250")
    m, fn = new_module(fl, ar, f"racy_{kind}", [inout_ptr("g")], kernel_attrs(64))  # read and written: not writeonly
    b = IRBuilder(m, fn)
    b.position(b.new_block("entry"))
    tid = b.call("workitem_id_x", [], "tid")
    w = b.binop("lshr", tid, i32(5), "w")
    lane = b.binop("and", tid, i32(31), "l")
    li = b.sub(i32(31), lane, "rl") if layout == "scattered" else lane

    def barrier():
        b.fence("workgroup", "release")
        b.call("s_barrier", [])
        b.fence("workgroup", "acquire")

    if space == "lds":
        lds = m.add_lds("lds_buf", T.array(N, T.FLOAT), 16)
        for k, h in ((0, "lo"), (64, "hi")):
            t = b.add(tid, i32(k), f"t_{h}")
            b.store(b.cast("uitofp", t, T.FLOAT, f"z_{h}"), b.gep(T.FLOAT, lds, [t], f"pz_{h}"), 4)
        barrier()
        base = lds
    else:
        base = fn.param("g")
        rsrc = b.call("make_buffer_rsrc", [base, const_int(T.I16, 0), i64(N * 4), i32(2)], "rs") \
            if access == "buffer" else None

    def elem(region):
        return b.add(b.mul(region, i32(32), "rb"), li, "e")

    def load(region):
        e = elem(region)
        if access == "buffer":
            return b.call("raw_buffer_load_f32", [rsrc, b.mul(e, i32(4), "vo"), i32(0), i32(0)], "y")
        return b.load(T.FLOAT, b.gep(T.FLOAT, base, [e], "pl"), 4, "y")

    def store(v, region):
        e = elem(region)
        if access == "buffer":
            b.call("raw_buffer_store_f32", [v, rsrc, b.mul(e, i32(4), "vo"), i32(0), i32(0)])
        else:
            b.store(v, b.gep(T.FLOAT, base, [e], "ps"), 4)

    val = b.cast("uitofp", lane if (kind == "WAW" and fixed) else b.add(tid, i32(1000), "tv"), T.FLOAT, "v")
    if kind == "RAW":
        y = load(b.binop("and", b.add(w, i32(1), "wn"), i32(1), "wo"))
        if fixed:
            barrier()
        store(b.fadd(y, val, "s"), w)
    elif kind == "WAR":
        load(b.add(w, i32(1), "wn"))
        if fixed:
            barrier()
        store(val, w)
    else:
        store(val, i32(0))
    b.ret_void()
    return print_module(m)


CASES = [(k, s, a, lay) for k in ("RAW", "WAR", "WAW") for s, a in (("global", "plain"), ("lds", "plain"),
                                                                     ("global", "buffer"))
         for lay in ("contiguous", "scattered")]


@pytest.mark.parametrize("kind,space,access,layout", CASES)
def test_planted_race_is_caught_by_the_shadow(kind, space, access, layout):
    k = Kernel(_racy(kind, space, access, layout, fixed=False))
    with pytest.raises(RaceError) as e:
        k.launch((1, 1, 1), 64, {"g": np.zeros(N, np.float32)})
    msg = str(e.value)
    # the shadow's report (not the two orders' comparison): the address, both waves, the instruction
    word = {"RAW": "reads byte offset", "WAR": "that workgroup (0, 0, 0) wave 0 read",
            "WAW": "overwrites byte offset"}[kind]
    what = ("buffer " if access == "buffer" else "") + ("load" if kind == "RAW" else "store")
    assert word in msg and f"race: {what} float" in msg, msg
    assert ("LDS 'lds_buf'" if space == "lds" else "global 'g'") in msg, msg
    assert "wave 1" in msg and "wave 0" in msg, msg


@pytest.mark.parametrize("kind,space,access,layout", CASES)
def test_the_ordered_twin_runs_clean(kind, space, access, layout):
    k = Kernel(_racy(kind, space, access, layout, fixed=True))
    g = np.zeros(N, np.float32)
    k.launch((1, 1, 1), 64, {"g": g})
    if space == "global" and kind == "WAW":   # element li holds lane l
        want = np.arange(32)[::-1] if layout == "scattered" else np.arange(32)
        assert (g[:32] == want).all()

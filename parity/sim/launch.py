"""Launch scheduling: clusters, workgroups, waves, barriers, the two orders.

Forward order runs clusters, the workgroups of a cluster and the waves of a
workgroup in increasing index; reverse order in decreasing index. A wave runs
until it reaches ``s.barrier``, ``s.cluster.barrier`` or ``ret``. When every
wave of a workgroup that has not returned waits at a workgroup barrier, the
barrier completes (waves that returned no longer take part, as on hardware);
a workgroup whose live waves wait at different kinds of barrier is an error.
A cluster barrier is also a workgroup barrier; it completes when every
workgroup of the cluster waits at it (a workgroup that returned while others
wait is an error).

:func:`run_launch` drives a decoded :class:`parity.sim.kernel.Kernel` (its
module, register template and slots, entry block); ``Kernel.launch`` calls it.
This module imports only the lower layers (errors, memory, shadow), never the
kernel or the op compilers.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .errors import BarrierMismatch, RaceError, SimError, Unsupported
from .memory import CONTROL_CLUSTER, CONTROL_RET, WAVE, Memory, Ptr
from .shadow import NEVER


@dataclass
class LaunchStats:
    kernel: str
    grid: tuple
    block: int
    cluster: tuple
    orders: tuple
    instructions: int = 0          # wave-instructions executed, all orders
    seconds: float = 0.0
    per_order: dict = field(default_factory=dict)


class _Phase:
    __slots__ = ("phase",)

    def __init__(self):
        self.phase = 0


class Ctx:
    """What an instruction may ask about the wave executing it."""

    __slots__ = ("tid", "wgid", "agent", "wgi", "cli", "wg", "cl", "S", "launch", "wave",
                 "nrel1", "nrel2", "acq1", "acq2")


class _Wave:
    __slots__ = ("R", "blk", "pc", "done", "status", "X")


class _Run:
    def __init__(self, kernel, waves_per_wg: int, names: list):
        self.kernel = kernel
        self.W = waves_per_wg
        self.names = names  # wg index -> (x, y, z)
        self.count = 0
        # memory-visibility model: per wave (agent), the barrier phase of its k-th release
        # fence of workgroup(+) scope (workgroup phases) and of cluster(+) scope (cluster
        # phases); NEVER where there is none yet (docs/sim.md)
        n = len(names) * waves_per_wg
        self.rel1 = np.full((n, 8), NEVER, np.int64)
        self.rel2 = np.full((n, 8), NEVER, np.int64)

    def release(self, X, level: int) -> None:
        for lv, attr, cnt, ph in ((1, "rel1", "nrel1", X.wg.phase), (2, "rel2", "nrel2", X.cl.phase)):
            if level < lv:
                break
            arr = getattr(self, attr)
            k = getattr(X, cnt)
            if k >= arr.shape[1]:
                arr = np.concatenate((arr, np.full_like(arr, NEVER)), axis=1)
                setattr(self, attr, arr)
            arr[X.agent, k] = ph
            setattr(X, cnt, k + 1)

    def agent_name(self, agent: int) -> str:
        wgi, w = divmod(agent, self.W)
        return f"workgroup {self.names[wgi]} wave {w}"


def _check_args(kernel, args: dict) -> None:
    names = [p.name for p in kernel.module.params]
    missing = [n for n in names if n not in args]
    extra = [n for n in args if n not in names]
    if missing or extra:
        raise SimError(f"kernel {kernel.name}: arguments do not match the parameters "
                       f"(missing {missing}, unexpected {extra})")
    for p in kernel.module.params:
        v = args[p.name]
        if p.ty.kind == "ptr":
            if p.ty.addrspace != 1:
                raise Unsupported(f"parameter %{p.name}: pointer in address space {p.ty.addrspace}")
            if not isinstance(v, np.ndarray) or not v.flags.c_contiguous:
                raise SimError(f"argument {p.name}: expected a C-contiguous numpy array")
        elif p.ty.kind == "int":
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise SimError(f"argument {p.name}: expected an int for {p.ty.text}")
            if not -(1 << (p.ty.bits - 1)) <= int(v) < (1 << p.ty.bits):
                raise SimError(f"argument {p.name}: {v} does not fit {p.ty.text}")
        elif p.ty.kind == "float":
            if not isinstance(v, (int, float, np.floating)):
                raise SimError(f"argument {p.name}: expected a number for {p.ty.text}")
        else:
            raise Unsupported(f"parameter %{p.name} of type {p.ty.text}")


def run_launch(kernel, grid, block, args, cluster, orders, shadow, max_instructions):
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(tuple(grid)))
    if any(g < 1 for g in grid):
        raise SimError(f"grid {grid} has an empty dimension")
    if block < WAVE or block % WAVE:
        raise SimError(f"block of {block} threads is not a positive multiple of the wave size {WAVE}")
    fwg = kernel.module.flat_work_group_size
    if fwg is not None and fwg != block:
        raise SimError(f"kernel {kernel.name} is built for exactly {fwg} threads per workgroup, launched with {block}")
    if cluster is None:
        cluster = kernel.module.cluster_dims or (1, 1, 1)
    cluster = tuple(int(c) for c in cluster)
    if any(g % c for g, c in zip(grid, cluster)):
        raise SimError(f"grid {grid} is not a multiple of the cluster shape {cluster}")
    _check_args(kernel, args)
    for o in orders:
        if o not in ("forward", "reverse"):
            raise SimError(f"unknown order {o!r}")
    stats = LaunchStats(kernel.name, grid, block, cluster, tuple(orders))
    t0 = time.perf_counter()
    results = {}
    for order in orders:
        bufs = {k: v.copy() for k, v in args.items() if isinstance(v, np.ndarray)}
        pr = getattr(kernel, "promises", None)   # parity/sim/promises.py: per-order promise state
        if pr is not None:
            pr.begin(args)
        with np.errstate(all="ignore"):  # IEEE results (inf, NaN) are values here, not warnings
            n = _run_order(kernel, grid, block, cluster, args, bufs, order == "reverse", shadow, max_instructions)
        if pr is not None:
            pr.end(bufs)
        stats.per_order[order] = n
        stats.instructions += n
        results[order] = bufs
    if len(orders) > 1:
        first = orders[0]
        for order in orders[1:]:
            for name in results[first]:
                a = results[first][name].reshape(-1).view(np.uint8)
                b = results[order][name].reshape(-1).view(np.uint8)
                diff = np.flatnonzero(a != b)
                if diff.size:
                    k = int(diff[0])
                    raise RaceError(
                        f"race: kernel {kernel.name} leaves different bytes in global {name!r} in the {first} "
                        f"and {order} wave orders, first at byte offset {k} ({a[k]:#04x} vs {b[k]:#04x}; "
                        f"{diff.size} bytes differ): a missing barrier or an unsynchronised access")
    for name, arr in results[orders[0]].items():
        args[name][...] = arr
    stats.seconds = time.perf_counter() - t0
    return stats


def _run_order(kernel, grid, block, cluster, args, bufs, rev, shadow, limit) -> int:
    gx, gy, gz = grid
    cx, cy, cz = cluster
    S = cx * cy * cz
    W = block // WAVE
    mems = {name: Memory(name, "global", arr.reshape(-1).view(np.uint8), False, shadow, clustered=S > 1)
            for name, arr in bufs.items()}
    template = list(kernel.template)
    zeros = np.zeros(WAVE, np.int64)
    for p in kernel.module.params:
        s = kernel.slots["%" + p.name]
        v = args[p.name]
        if p.ty.kind == "ptr":
            template[s] = Ptr(mems[p.name], zeros)
        else:
            if p.ty.kind == "int":
                val = np.array(int(v) & ((1 << p.ty.bits) - 1), dtype=p.ty.dtype)
            else:
                val = np.array(v, dtype=p.ty.dtype)
            arr = np.full(WAVE, val, dtype=p.ty.dtype)
            arr.setflags(write=False)
            template[s] = arr
    clusters = [(x, y, z) for z in range(gz // cz) for y in range(gy // cy) for x in range(gx // cx)]
    ranks = [(x, y, z) for z in range(cz) for y in range(cy) for x in range(cx)]
    names = [(c[0] * cx + r[0], c[1] * cy + r[1], c[2] * cz + r[2]) for c in clusters for r in ranks]
    run = _Run(kernel, W, names)
    lanes = np.arange(WAVE, dtype=np.uint32)
    corder = range(len(clusters) - 1, -1, -1) if rev else range(len(clusters))
    for ci in corder:
        cl = _Phase()
        wgs = []
        for ri in range(S):
            wgi = ci * S + ri
            ids = names[wgi]
            wg = _Phase()
            lds_slots = []
            for g in kernel.module.lds:
                mem = Memory(g.name, "lds", np.zeros(g.ty.size, np.uint8), True, shadow)
                lds_slots.append((kernel.slots["@" + g.name], Ptr(mem, zeros)))
            wgid = tuple(np.full(WAVE, i, np.uint32) for i in ids)
            waves = []
            for w in range(W):
                X = Ctx()
                X.tid = lanes + np.uint32(w * WAVE)
                X.wgid = wgid
                X.agent = wgi * W + w
                X.wgi = wgi
                X.cli = ci
                X.wg = wg
                X.cl = cl
                X.S = S
                X.launch = run
                X.wave = w
                X.nrel1 = X.nrel2 = 0
                X.acq1 = X.acq2 = -1
                wv = _Wave()
                wv.R = list(template)
                for s, ptr in lds_slots:
                    wv.R[s] = ptr
                wv.blk = kernel.entry
                wv.pc = 0
                wv.done = False
                wv.status = None
                wv.X = X
                waves.append(wv)
            wgs.append((wg, waves, ids))
        _run_cluster(run, wgs, cl, rev, limit)
    return run.count


def _run_cluster(run, wgs, cl, rev, limit):
    order = list(reversed(wgs)) if rev else wgs
    while True:
        st = []
        for wg, waves, ids in order:
            st.append((ids, _run_wg(run, wg, waves, rev, limit)))
        kinds = {s for _, s in st}
        if kinds == {CONTROL_RET}:
            return
        if kinds == {CONTROL_CLUSTER}:
            cl.phase += 1
            continue
        waiting = [ids for ids, s in st if s == CONTROL_CLUSTER]
        gone = [ids for ids, s in st if s == CONTROL_RET]
        raise BarrierMismatch(f"cluster barrier: workgroups {waiting} wait at s.cluster.barrier while "
                              f"workgroups {gone} returned; every workgroup of a cluster must reach it")


def _run_wg(run, wg, waves, rev, limit) -> str:
    order = list(reversed(waves)) if rev else waves
    while True:
        for wv in order:
            if not wv.done and wv.status != CONTROL_CLUSTER:
                wv.status = _run_wave(run, wv, limit)
                if wv.status == CONTROL_RET:
                    wv.done = True
        live = [wv for wv in waves if not wv.done]
        if not live:
            return CONTROL_RET
        kinds = {wv.status for wv in live}
        if len(kinds) > 1:
            desc = ", ".join(f"wave {wv.X.wave}: {wv.status}" for wv in live)
            raise BarrierMismatch(f"workgroup {run.names[live[0].X.wgi]}: waves wait at different barriers "
                                  f"({desc})")
        wg.phase += 1
        if kinds == {CONTROL_CLUSTER}:
            for wv in live:
                wv.status = None
            return CONTROL_CLUSTER
        for wv in live:
            wv.status = None


def _run_wave(run, wv, limit) -> str:
    R, X = wv.R, wv.X
    blk, pc = wv.blk, wv.pc
    count = 0
    while True:
        ops = blk.ops
        n = len(ops)
        start = pc
        r = None
        try:
            while pc < n:
                r = ops[pc](R, X)
                pc += 1
                if r is not None:
                    break
        except SimError as e:
            raise e.at(blk.texts[pc] + f" [{run.agent_name(X.agent)}]")
        except Exception as e:  # a numpy error or an emulator bug: still name the instruction
            raise SimError(f"{type(e).__name__}: {e}").at(blk.texts[pc] + f" [{run.agent_name(X.agent)}]") from e
        count += pc - start
        if r.__class__ is str:
            wv.blk, wv.pc = blk, pc
            run.count += count
            if run.count > limit:  # a loop that passes a barrier each trip returns here, never reaching 100k
                raise SimError(f"instruction limit of {limit} wave-instructions exceeded (an endless loop?)",
                               f"block {blk.name} [{run.agent_name(X.agent)}]")
            return r
        blk = r
        pc = 0
        if count > 100_000:
            run.count += count
            count = 0
            if run.count > limit:
                raise SimError(f"instruction limit of {limit} wave-instructions exceeded (an endless loop?)",
                               f"block {blk.name} [{run.agent_name(X.agent)}]")

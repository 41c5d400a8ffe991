"""The race shadow: per byte of a memory, the last writer and readers (class :class:`Shadow`).

Also the memory-visibility model's constants: fence scope levels
(:data:`SCOPE_LEVEL`) and :data:`NEVER`, the barrier phase of a release fence
that has not happened. ``X`` below is the executing wave's context
(parity/sim/launch.py ``Ctx``); ``mem`` a :class:`parity.sim.memory.Memory`.

Layout (vectorised: every check and update is a handful of numpy operations
over all the bytes of an access, never a loop over lanes or bytes). A barrier
phase and the workgroup (cluster) it belongs to are packed into one int64
*key* ``(group << 32) + phase``, so "same workgroup and an earlier phase" is
one unsigned compare ``(key - (G << 32)) as uint64 < P``; a group of -2
("several") never matches. Per byte:

* ``wa``: the writer's agent (wave index of the launch), -1 none; ``wk1`` /
  ``wk2``: its workgroup / cluster key; ``wn``: its count of workgroup(+) /
  cluster(+)-scope releases before the write (``nrel1 << 32 | nrel2``);
* ``ra``: the reader's agent (-1 none, -2 several); ``rk1`` / ``rk2``: its
  workgroup / cluster key (group -2: readers of several workgroups / clusters).

All seven are (n,) int64 arrays (one gather per field: a row gather from an
(n, k) array costs ten times more in numpy).

When the last reader of a byte was not ordered before a new read, the reader
fields become "several" (agent -2) and the workgroup / cluster keep their
group only when the new reader shares it; the phase kept is the new read's
(phases of one workgroup or cluster only grow, so it is the maximum).
"""
from __future__ import annotations

import numpy as np

from .errors import RaceError, VisibilityError

#: syncscope -> level; a fence of level >= L orders for scope L (1 workgroup, 2 cluster)
SCOPE_LEVEL = {"singlethread": 0, "wavefront": 0, "workgroup": 1, "cluster": 2, "agent": 3, "system": 4}
NEVER = np.int64(1) << np.int64(62)   # "no such release fence (yet)"

_SEVERAL = -2 << 32          # the key of "several workgroups / clusters"
_LOG_MAX = 4096              # logged reads applied at the latest after this many
_LOW = (1 << 32) - 1
_U64 = np.uint64


def _keys(X) -> tuple:
    """(agent, workgroup key base, workgroup phase, cluster key base, cluster phase) of wave ``X``."""
    return X.agent, X.wgi << 32, X.wg.phase, X.cli << 32, X.cl.phase


def _ordered(agent, k1, k2, A, b1, P, b2, CP) -> np.ndarray:
    """Per byte: the access (agent, workgroup key, cluster key) is ordered before
    the executing wave's (A, b1 + P, b2 + CP): same wave, or same workgroup in an
    earlier phase, or same cluster in an earlier cluster phase (``k2`` None: a
    memory only one workgroup per cluster reaches, where a cluster barrier is
    also a workgroup barrier and the cluster test adds nothing)."""
    if k2 is None:
        return (agent == A) | ((k1 - b1).view(_U64) < P)
    return (agent == A) | ((k1 - b1).view(_U64) < P) | ((k2 - b2).view(_U64) < CP)


def _all_ordered(summ, A, G, P) -> bool:
    """Every access a summary ``(workgroup, last phase, agent)`` covers is ordered
    before wave ``A`` of workgroup ``G`` in phase ``P`` (same wave, or same
    workgroup in an earlier phase); ``None``: there is none."""
    if summ is None:
        return True
    g, ph, ag = summ
    return g == G and (ph < P or (ph == P and ag == A))


def _summed(summ, A, G, P) -> tuple:
    """The summary ``summ`` after one more access by wave ``A`` of workgroup ``G``
    in phase ``P`` (phases of one workgroup only grow)."""
    if summ is None:
        return (G, P, A)
    g, ph, ag = summ
    if g != G:
        return (-2, 0, -2)
    if ph < P:
        return (G, P, A)
    return summ if ag == A else (G, P, -2)


def _offsets(idx, mask) -> np.ndarray:
    """The byte offsets of ``idx`` (an index array or a slice) where ``mask`` holds."""
    if isinstance(idx, slice):
        return np.arange(idx.start, idx.stop, dtype=np.int64)[mask]
    return idx[mask]


def _at(idx, k: int) -> int:
    """The ``k``-th byte offset of ``idx`` (an index array or a slice)."""
    return idx.start + k if isinstance(idx, slice) else int(idx[k])


class Shadow:
    """Per byte: the last writer and the last readers, with the barrier phases
    they ran in. Two accesses are ordered when made by the same wave, by waves
    of one workgroup with a workgroup barrier between them, or by workgroups of
    one cluster with a cluster barrier between them. Writes that leave the
    bytes unchanged never race (surplus lanes re-store identical bytes).
    ``n``: the memory's size in bytes. ``idx`` below: the byte offsets of one
    access in lane order (an int64 array, or a ``slice`` when the lanes cover
    one contiguous range in order: the same bytes in the same order, read and
    written as views)."""

    __slots__ = ("wa", "wk1", "wk2", "wn", "ra", "rk1", "rk2", "rsum", "wsum", "wonly", "rlog")

    def __init__(self, n: int, clustered: bool = True):
        """``clustered``: waves of several workgroups of one cluster can reach the
        memory (a global buffer in a launch with clusters of more than one
        workgroup); otherwise the cluster keys are not kept (every cluster
        barrier is also a workgroup barrier, so same-cluster ordering is
        same-workgroup ordering there)."""
        # Summaries over every read / write recorded so far (O(1) per access):
        # (workgroup, last phase, agent) -- the one workgroup that made them all
        # (-2 several), the latest workgroup phase among them, the one agent that
        # made the accesses of that phase (-2 several); None: none yet. When they
        # show every earlier access ordered before the current one, the per-byte
        # check would pass on every byte and is skipped (the state it records is
        # the same). ``wonly``: the one agent that made every write (-2 several,
        # -1 none): a read by that agent has no other writer to check.
        self.rsum = None
        self.wsum = None
        self.wonly = -1
        self.rlog = []   # reads not yet applied to ra / rk1 / rk2 (:meth:`_replay`)
        self.wa = np.full(n, -1, np.int64)     # writer agent, -1 none
        self.wk1 = np.zeros(n, np.int64)       # writer workgroup key
        self.wk2 = np.zeros(n, np.int64) if clustered else None   # writer cluster key
        self.wn = np.zeros(n, np.int64)        # writer's releases before the write (nrel1 << 32 | nrel2)
        self.ra = np.full(n, -1, np.int64)     # reader agent, -1 none, -2 several
        self.rk1 = np.zeros(n, np.int64)       # reader workgroup key
        self.rk2 = np.zeros(n, np.int64) if clustered else None   # reader cluster key

    def read(self, idx, X, mem, what: str):
        """Record a read of byte offsets ``idx`` by wave ``X``. Raises RaceError
        (a write by another wave not ordered before it) or VisibilityError
        (ordered, but without release / acquire fences)."""
        if not isinstance(idx, slice):
            idx = idx.ravel()
        A, b1, P, b2, CP = _keys(X)
        G = X.wgi
        wonly = self.wonly
        if wonly != -1 and wonly != A:
            wa = self.wa[idx]
            cand = (wa >= 0) & (wa != A)
            ncand = np.count_nonzero(cand)
        else:
            ncand = 0   # no byte of this memory was written by another wave
        if ncand:
            if ncand == cand.size:
                sel = _offsets(idx, slice(None))
                wac = wa
            else:
                sel = _offsets(idx, cand)
                wac = wa[cand]
            wk1 = self.wk1[sel]
            ok = (wk1 - b1).view(_U64) < P
            if self.wk2 is not None:
                ok |= (self.wk2[sel] - b2).view(_U64) < CP
            if np.count_nonzero(ok) != ok.size:
                k = int(np.argmin(ok))
                raise RaceError(f"race: {what} reads byte offset {int(sel[k])} of {mem.label()}, "
                                f"written by {X.launch.agent_name(int(wac[k]))} with no barrier "
                                f"between the write and this read by {X.launch.agent_name(X.agent)}")
            self._visible(sel, wac, wk1, X, mem, what)
        rsum = self.rsum
        self.rsum = _summed(rsum, A, G, P)
        self.rlog.append((idx, A, b1, P, b2, CP, G, X.cli, _all_ordered(rsum, A, G, P)))
        if len(self.rlog) >= _LOG_MAX:
            self._replay()

    def _replay(self) -> None:
        """Apply the logged reads to the per-byte reader fields, in order. Reads
        only change the reader fields, which only writes consult: so a read
        is logged (O(1)) and applied when a write needs them (a memory no
        wave writes, a kernel's input, never pays for its readers)."""
        log, self.rlog = self.rlog, []
        for idx, A, b1, P, b2, CP, G, C, fast in log:
            if not fast:   # some earlier read may not be ordered before this one
                ra = self.ra[idx]
                rk1 = self.rk1[idx]
                rk2 = None if self.rk2 is None else self.rk2[idx]
                po = (ra == -1) | _ordered(ra, rk1, rk2, A, b1, P, b2, CP)
                if np.count_nonzero(po) != po.size:
                    n1 = np.where(po | ((rk1 >> 32) == G), b1 + P, _SEVERAL)
                    if rk2 is not None:
                        self.rk2[idx] = np.where(po | ((rk2 >> 32) == C), b2 + CP, _SEVERAL)
                    self.ra[idx] = np.where(po, A, -2)
                    self.rk1[idx] = n1
                    continue
            self.ra[idx] = A
            self.rk1[idx] = b1 + P
            if self.rk2 is not None:
                self.rk2[idx] = b2 + CP

    def _visible(self, sel, wa, wk1, X, mem, what: str):
        """The memory-visibility model: bytes ``sel`` written by other waves
        ``wa`` (writer workgroup keys ``wk1``) and ordered before this read by a
        barrier are visible only through release fence -> barrier -> acquire
        fence: the writer's first release fence of at least the needed scope
        after the write lies in a barrier phase that has ended for the reader,
        and the reader's last acquire fence of that scope came after that
        barrier. Same workgroup: workgroup scope and workgroup phases (any
        barrier); other workgroups of the cluster: cluster scope and cluster
        phases."""
        run = X.launch
        same = (wk1 >> 32) == X.wgi
        nsame = np.count_nonzero(same)
        for level, m, cnt in ((2, ~same, same.size - nsame), (1, same, nsame)):
            if not cnt:
                continue
            a, b = (wa, sel) if cnt == same.size else (wa[m], sel[m])
            if level == 1:
                n, rel, cur, acq = self.wn[b] >> 32, run.rel1, X.wg.phase, X.acq1
            else:
                n, rel, cur, acq = self.wn[b] & _LOW, run.rel2, X.cl.phase, X.acq2
            cap = rel.shape[1]   # rel: (agents, cap); gathered through its flat view (one 1-D take)
            rp = np.where(n < cap, rel.ravel()[a * cap + np.minimum(n, cap - 1)], NEVER)
            no_rel = rp >= cur           # no release fence before a barrier this reader passed
            no_acq = acq < rp + 1        # no acquire fence after that barrier
            bad = no_rel | no_acq
            if np.count_nonzero(bad):
                k = int(np.argmax(bad))
                scope = "workgroup" if level == 1 else "cluster"
                bar = "s.barrier" if level == 1 else "s.cluster.barrier"
                writer = run.agent_name(int(a[k]))
                reader = run.agent_name(X.agent)
                if no_rel[k]:
                    miss = (f"the writer ({writer}) executed no release fence of {scope} scope or wider "
                            f"between the write and a {bar} before this read: missing "
                            f"`fence syncscope(\"{scope}\") release` before {bar}")
                else:
                    miss = (f"the reader ({reader}) executed no acquire fence of {scope} scope or wider "
                            f"after the {bar} that follows the writer's release: missing "
                            f"`fence syncscope(\"{scope}\") acquire` after {bar}")
                raise VisibilityError(f"visibility: {what} by {reader} reads byte offset {int(b[k])} of "
                                      f"{mem.label()} written by {writer} in an earlier barrier phase, but "
                                      f"{miss}")

    def write(self, idx, changed: np.ndarray, X, mem, what: str):
        """Record a write of byte offsets ``idx`` by wave ``X``; ``changed`` (bool,
        one per byte of ``idx``): the bytes whose value the write changes.
        Raises RaceError when a changed byte was written or read by another
        wave not ordered before this write."""
        if not isinstance(idx, slice):
            idx = idx.ravel()
        changed = changed.ravel()
        A, b1, P, b2, CP = _keys(X)
        G = X.wgi
        upd = idx
        if not _all_ordered(self.wsum, A, G, P):
            wa = self.wa[idx]
            w_ok = (wa < 0) | _ordered(wa, self.wk1[idx], None if self.wk2 is None else self.wk2[idx],
                                       A, b1, P, b2, CP)
            if np.count_nonzero(w_ok) != w_ok.size:
                upd = None
        if upd is None:
            bad = changed & ~w_ok
            if np.count_nonzero(bad):
                k = int(np.argmax(bad))
                raise RaceError(f"race: {what} overwrites byte offset {_at(idx, k)} of {mem.label()} with a "
                                f"different value; {X.launch.agent_name(int(wa[k]))} wrote it with no barrier "
                                f"before this write by {X.launch.agent_name(X.agent)}")
        if not _all_ordered(self.rsum, A, G, P):
            if self.rlog:
                self._replay()
            ra = self.ra[idx]
            r_ok = (ra == -1) | _ordered(ra, self.rk1[idx], None if self.rk2 is None else self.rk2[idx],
                                         A, b1, P, b2, CP)
            if np.count_nonzero(r_ok) != r_ok.size:
                bad = changed & ~r_ok
                if np.count_nonzero(bad):
                    k = int(np.argmax(bad))
                    who = "several waves" if ra[k] == -2 else X.launch.agent_name(int(ra[k]))
                    raise RaceError(f"race: {what} changes byte offset {_at(idx, k)} of {mem.label()} that "
                                    f"{who} read with no barrier before this write by "
                                    f"{X.launch.agent_name(X.agent)}")
        if upd is None:
            upd = _offsets(idx, changed | w_ok)
        self.wsum = _summed(self.wsum, A, G, P)
        self.wonly = A if self.wonly in (-1, A) else -2
        self.wa[upd] = A
        self.wk1[upd] = b1 + P
        if self.wk2 is not None:
            self.wk2[upd] = b2 + CP
        self.wn[upd] = (X.nrel1 << 32) | X.nrel2

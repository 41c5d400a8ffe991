"""The race shadow as it was before it was vectorised (parity/sim/shadow.py at
571ae5d), kept verbatim as the reference of tests/test_sim_shadow.py: the
vectorised shadow must report exactly the races (and messages) this one does."""
from __future__ import annotations

import numpy as np

from parity.sim.errors import RaceError, VisibilityError

#: syncscope -> level; a fence of level >= L orders for scope L (1 workgroup, 2 cluster)
SCOPE_LEVEL = {"singlethread": 0, "wavefront": 0, "workgroup": 1, "cluster": 2, "agent": 3, "system": 4}
NEVER = np.int64(1) << np.int64(62)   # "no such release fence (yet)"


class Shadow:
    """Per byte: the last writer and the last readers, with the barrier phases
    they ran in. Two accesses are ordered when made by the same wave, by waves
    of one workgroup with a workgroup barrier between them, or by workgroups of
    one cluster with a cluster barrier between them. Writes that leave the
    bytes unchanged never race (surplus lanes re-store identical bytes)."""

    __slots__ = ("wa", "wg", "wph", "wcph", "wn1", "wn2", "ra", "rg", "rc", "rph", "rcph")

    def __init__(self, n: int):
        self.wa = np.full(n, -1, np.int64)     # writer agent
        self.wg = np.full(n, -1, np.int64)     # writer workgroup
        self.wph = np.zeros(n, np.int64)       # writer's workgroup phase
        self.wcph = np.zeros(n, np.int64)      # writer's cluster phase
        self.wn1 = np.zeros(n, np.int64)       # writer's count of workgroup(+)-scope releases before the write
        self.wn2 = np.zeros(n, np.int64)       # ... of cluster(+)-scope releases
        self.ra = np.full(n, -1, np.int64)     # reader agent (-2 several)
        self.rg = np.full(n, -1, np.int64)     # reader workgroup (-2 several)
        self.rc = np.full(n, -1, np.int64)     # reader cluster (-2 several)
        self.rph = np.zeros(n, np.int64)
        self.rcph = np.zeros(n, np.int64)

    @staticmethod
    def _ordered(agent, wg, cl, ph, cph, X) -> np.ndarray:
        return ((agent == X.agent) | ((wg == X.wgi) & (X.wg.phase > ph))
                | ((cl == X.cli) & (X.cl.phase > cph)))

    def read(self, idx: np.ndarray, X, mem, what: str):
        idx = idx.ravel()
        wa = self.wa[idx]
        cand = (wa >= 0) & (wa != X.agent)
        if cand.any():
            sel = idx[cand]
            wg = self.wg[sel]
            ok = self._ordered(wa[cand], wg, wg // X.S, self.wph[sel], self.wcph[sel], X)
            if not ok.all():
                k = int(np.argmin(ok))
                raise RaceError(f"race: {what} reads byte offset {int(sel[k])} of {mem.label()}, "
                                f"written by {X.launch.agent_name(int(wa[cand][k]))} with no barrier "
                                f"between the write and this read by {X.launch.agent_name(X.agent)}")
            self._visible(sel, wa[cand], wg, X, mem, what)
        ra = self.ra[idx]
        rg = self.rg[idx]
        rc = self.rc[idx]
        prev_ordered = (ra == -1) | self._ordered(ra, rg, rc, self.rph[idx], self.rcph[idx], X)
        same_wg = rg == X.wgi
        same_cl = rc == X.cli
        self.ra[idx] = np.where(prev_ordered, X.agent, -2)
        self.rg[idx] = np.where(prev_ordered | same_wg, X.wgi, -2)
        self.rc[idx] = np.where(prev_ordered | same_cl, X.cli, -2)
        self.rph[idx] = np.where(prev_ordered, X.wg.phase, np.maximum(self.rph[idx], X.wg.phase))
        self.rcph[idx] = np.where(prev_ordered, X.cl.phase, np.maximum(self.rcph[idx], X.cl.phase))

    def _visible(self, sel, wa, wg, X, mem, what: str):
        """The memory-visibility model: bytes ``sel`` written by other waves
        ``wa`` (workgroups ``wg``) and ordered before this read by a barrier
        are visible only through release fence -> barrier -> acquire fence:
        the writer's first release fence of at least the needed scope after
        the write lies in a barrier phase that has ended for the reader, and
        the reader's last acquire fence of that scope came after that barrier.
        Same workgroup: workgroup scope and workgroup phases (any barrier);
        other workgroups of the cluster: cluster scope and cluster phases."""
        run = X.launch
        same = wg == X.wgi
        for level, m in ((2, ~same), (1, same)):
            if not m.any():
                continue
            a = wa[m]
            b = sel[m]
            if level == 1:
                n, rel, cur, acq = self.wn1[b], run.rel1, X.wg.phase, X.acq1
            else:
                n, rel, cur, acq = self.wn2[b], run.rel2, X.cl.phase, X.acq2
            cap = rel.shape[1]
            rp = np.where(n < cap, rel[a, np.minimum(n, cap - 1)], NEVER)
            no_rel = rp >= cur           # no release fence before a barrier this reader passed
            no_acq = acq < rp + 1        # no acquire fence after that barrier
            bad = no_rel | no_acq
            if bad.any():
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

    def write(self, idx: np.ndarray, changed: np.ndarray, X, mem, what: str):
        idx = idx.ravel()
        changed = changed.ravel()
        wa = self.wa[idx]
        wg = self.wg[idx]
        w_ok = (wa < 0) | self._ordered(wa, wg, wg // X.S, self.wph[idx], self.wcph[idx], X)
        bad = changed & ~w_ok
        if bad.any():
            k = int(np.argmax(bad))
            raise RaceError(f"race: {what} overwrites byte offset {int(idx[k])} of {mem.label()} with a "
                            f"different value; {X.launch.agent_name(int(wa[k]))} wrote it with no barrier "
                            f"before this write by {X.launch.agent_name(X.agent)}")
        ra = self.ra[idx]
        r_ok = (ra == -1) | self._ordered(ra, self.rg[idx], self.rc[idx], self.rph[idx], self.rcph[idx], X)
        bad = changed & ~r_ok
        if bad.any():
            k = int(np.argmax(bad))
            who = "several waves" if ra[k] == -2 else X.launch.agent_name(int(ra[k]))
            raise RaceError(f"race: {what} changes byte offset {int(idx[k])} of {mem.label()} that {who} "
                            f"read with no barrier before this write by {X.launch.agent_name(X.agent)}")
        upd = idx[changed | w_ok]
        self.wn1[upd] = X.nrel1
        self.wn2[upd] = X.nrel2
        self.wa[upd] = X.agent
        self.wg[upd] = X.wgi
        self.wph[upd] = X.wg.phase
        self.wcph[upd] = X.cl.phase

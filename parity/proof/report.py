"""The proof's entry point and its report (docs/proof.md).

    prove_module(ir_text, family, config_name, spec, arch, flavor) -> ProofReport

proves, for every memory access of one kernel, the byte alignment that holds
for every admissible problem (kernel arguments symbolic under
parity/proof/assumptions.py), and the offset interval where an interval
suffices. ``ProofReport.failures`` lists one line per access whose declared
alignment (``align N``), or the alignment the arch table needs for a buffer
access of that width, exceeds what is proved.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from parity.base.escape import shown
from parity.proof import assumptions as A
from parity.proof.interpret import Access, ProofParseError, analyse


@dataclass
class ProofReport:
    """What the proof established for one module.

    ``accesses``: every :class:`Access` (global, LDS, buffer) in text order;
    ``proved_aligned``: those whose needed alignment is proved;
    ``proved_in_bounds``: those whose byte-offset interval lies inside a base of
    static size (LDS globals); ``left_to_sampling``: ``(access, reason)`` for
    every access the interval argument cannot bound (the numerics oracle must
    exercise them); ``unjustified``: one line per ``nuw`` / ``disjoint`` flag the
    proof would have needed but cannot derive from the operands (it never trusts
    them; the emulator checks each flag on every sampled problem, docs/sim.md
    Promises); ``failures``: one-line messages (empty: the module passes);
    ``error``: set when the module could not be read (then it fails)."""

    family: str
    config: str
    flavor: str
    arch: str
    kernel: str = ""
    accesses: list = field(default_factory=list)
    proved_aligned: list = field(default_factory=list)
    proved_in_bounds: list = field(default_factory=list)
    left_to_sampling: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    error: str | None = None
    unjustified: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def counts(self) -> dict:
        """{accesses, proved_aligned, proved_in_bounds, left_to_sampling}: counts."""
        return {"accesses": len(self.accesses), "proved_aligned": len(self.proved_aligned),
                "proved_in_bounds": len(self.proved_in_bounds), "left_to_sampling": len(self.left_to_sampling)}

    def to_json(self) -> dict:
        d = {"family": self.family, "config": self.config, "flavor": self.flavor, "arch": self.arch,
             "kernel": self.kernel, **self.counts(), "failures": list(self.failures)}
        d["unjustified_flags"] = list(self.unjustified)
        d["left_to_sampling_list"] = [f"line {a.line}: {a.text} ({why})" for a, why in self.left_to_sampling]
        return d


def needed(acc: Access, arch: str) -> tuple[int, str]:
    """(alignment the access needs, where that need comes from)."""
    if acc.declared is not None:
        return acc.declared, f"declared align {acc.declared}"
    need = A.buffer_align(arch, acc.nbytes)
    return need, f"{arch} needs align {need} for a {acc.nbytes}-byte buffer access (parity.sim.rsrc.BUFFER_UNALIGNED)"


def _space(acc: Access) -> str:
    return {1: "global ", 3: "LDS ", 8: ""}.get(acc.space, f"addrspace({acc.space}) ")


def prove_module(ir_text: str, family: str, config_name: str, spec: dict, arch: str, flavor: str) -> ProofReport:
    """Prove the alignment (and, where an interval suffices, the bounds) of every
    global, buffer and LDS access of one module.

    ``ir_text``: the module as an engine printed it; ``spec``: the config's spec
    (the admission rules in parity/proof/assumptions.py that depend on it);
    ``arch``: the buffer alignment table's row. Never raises on a bad module:
    an unreadable one is a report with ``error`` and one failure line."""
    rep = ProofReport(family, config_name, flavor, arch)
    try:
        bits = tuple(sorted(A.arg_multiples(family, spec or {}).items()))
        mod, accesses, unjustified = _analyse(ir_text, bits)
    except (ProofParseError, ValueError, KeyError, IndexError) as exc:
        rep.error = str(exc)
        rep.failures.append(f"{shown(family)}/{shown(config_name)}@{flavor}: the proof cannot read the module: "
                            f"{shown(str(exc))}")
        return rep
    rep.kernel = mod.kernel
    rep.accesses = accesses
    rep.unjustified = list(unjustified)
    for acc in accesses:
        need, why = needed(acc, arch)
        if acc.proved >= need:
            rep.proved_aligned.append(acc)
        else:
            rep.failures.append(
                f"{shown(family)}/{shown(config_name)}@{flavor}: @{shown(mod.kernel)} line {acc.line}: "
                f"{_space(acc)}{acc.kind} of {acc.nbytes} bytes `{shown(acc.text)}`: {why}, "
                f"proved align {acc.proved}")
        if acc.in_bounds:
            rep.proved_in_bounds.append(acc)
        else:
            rep.left_to_sampling.append((acc, _why_not_bounded(acc)))
    return rep


@functools.lru_cache(maxsize=64)
def _analyse(ir_text: str, bits: tuple):
    """analyse() memoised on the text: the gate lowers the same text for several
    flavors and configs (identical bytes give identical results)."""
    return analyse(ir_text, dict(bits), A.PTR_ARG_ALIGN)


def _why_not_bounded(acc: Access) -> str:
    if acc.base is None:
        return "base pointer not known to the proof"
    if acc.limit is None:
        if acc.space == 8:
            return f"buffer {acc.base}: range-checked against num_records, a symbolic bound"
        return f"{acc.base}: size is a kernel argument (symbolic bound)"
    if acc.lo is None:
        return "offset interval unbounded"
    return f"offset interval [{acc.lo}, {acc.hi + acc.nbytes}) not inside {acc.limit} bytes"


@dataclass
class FamilySummary:
    """Per-family totals over the proved modules (``parity verify`` prints them)."""

    family: str
    modules: int = 0
    accesses: int = 0
    proved_aligned: int = 0
    proved_in_bounds: int = 0
    left_to_sampling: int = 0
    failures: int = 0

    def add(self, rep: ProofReport) -> None:
        """Count one module's report."""
        self.modules += 1
        self.accesses += len(rep.accesses)
        self.proved_aligned += len(rep.proved_aligned)
        self.proved_in_bounds += len(rep.proved_in_bounds)
        self.left_to_sampling += len(rep.left_to_sampling)
        self.failures += len(rep.failures)

    def line(self) -> str:
        """One report line: ``proof FAMILY: N modules, A accesses, ...``."""
        return (f"proof {self.family}: {self.modules} modules, {self.accesses} accesses, "
                f"{self.proved_aligned} proved aligned, {self.proved_in_bounds} proved in bounds, "
                f"{self.left_to_sampling} left to sampling, {self.failures} failures")

    def to_json(self) -> dict:
        return {"modules": self.modules, "accesses": self.accesses, "proved_aligned": self.proved_aligned,
                "proved_in_bounds": self.proved_in_bounds, "left_to_sampling": self.left_to_sampling,
                "failures": self.failures}


def summarise(reports) -> dict[str, FamilySummary]:
    """{family: FamilySummary} over an iterable of ProofReport."""
    out: dict[str, FamilySummary] = {}
    for r in reports:
        out.setdefault(r.family, FamilySummary(r.family)).add(r)
    return out

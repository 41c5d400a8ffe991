"""Every promise the IR makes, checked as LangRef / AMDGPUUsage define it, or refused.

A flag, attribute or metadata node in the IR is a claim LLVM may exploit
(DESIGN §7.4). This module is the one place that knows every kind the
emulator's parser (parity/sim/ir.py) reads, and for each kind either checks
it or refuses it (:class:`PromiseRefused`, naming the kind and why):

* at decode (:func:`check_module`): which flags an opcode may carry, the
  fast-math flags no family licenses, the function and parameter attributes
  (``amdgpu-no-*`` against the intrinsics the kernel calls, the denormal mode,
  ``target-features``, ``inreg``), the metadata kinds;
* per instruction (:func:`wrap`): the poison rules of ``nuw``/``nsw`` on shl
  and trunc, ``exact``, ``disjoint``, ``nneg``, ``samesign``, the
  ``inbounds``/``nusw``/``nuw`` rules of getelementptr against the object the
  pointer is based on, ``nnan``/``ninf``, ``!range``, ``!invariant.load``,
  ``!amdgpu.noclobber``, ``!noalias``/``!alias.scope``, and the
  ``readonly``/``writeonly``/``readnone`` arguments (add/sub/mul
  ``nuw``/``nsw`` are checked inline in parity/sim/ops_arith.py);
* per launch (:func:`check_launch`): ``amdgpu-cluster-dims``,
  ``amdgpu-flat-work-group-size``, ``amdgpu-waves-per-eu``,
  ``uniform-work-group-size`` against the launch, ``noalias`` arguments that
  overlap, ``dereferenceable`` / ``align`` against the buffers given.

The table of every kind, its LangRef / AMDGPUUsage section, the check and an
example error is docs/sim.md ("Promises"); tests/test_promises.py plants one
violation per kind. :data:`KINDS` lists them for that test.
"""
from __future__ import annotations

import re

import numpy as np

from .errors import SimError, Unsupported


class PromiseError(SimError):
    """A promise the IR makes (an attribute, argument attribute or metadata) is
    broken by the launch: undefined behaviour in LangRef's terms."""


class PromiseRefused(Unsupported):
    """A promise kind the oracles do not check: refused, never ignored."""


#: opcode -> the poison-generating flags LangRef defines for it (checked here or in ops_arith)
INT_FLAGS = {"add": {"nuw", "nsw"}, "sub": {"nuw", "nsw"}, "mul": {"nuw", "nsw"}, "shl": {"nuw", "nsw"},
             "trunc": {"nuw", "nsw"}, "udiv": {"exact"}, "sdiv": {"exact"}, "lshr": {"exact"},
             "ashr": {"exact"}, "or": {"disjoint"}, "zext": {"nneg"}, "uitofp": {"nneg"},
             "icmp": {"samesign"}, "getelementptr": {"inbounds", "nusw", "nuw"}}
FMF_CHECKED = {"nnan", "ninf"}
FMF_REFUSED = {"reassoc", "nsz", "arcp", "contract", "afn", "fast"}
FMF_OPS = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fcmp", "fptrunc", "fpext", "sitofp", "uitofp",
           "select", "phi", "call"}

#: function attributes with a check (key -> what is checked); any other is refused
FN_CHECKED = {
    "amdgpu-flat-work-group-size": "lo <= launch block <= hi",
    "amdgpu-cluster-dims": "equal to the launch's cluster shape",
    "amdgpu-waves-per-eu": "consistent with the launch's workgroup (LLVM ignores it otherwise)",
    "uniform-work-group-size": "the launch's grid is whole workgroups",
    "denormal-fp-math": "ieee,ieee (numpy's IEEE binary32, the mode the numerics assume)",
    "denormal-fp-math-f32": "ieee,ieee (as denormal-fp-math)",
    "target-features": "only +wavefrontsize32 (the emulator's wave)",
    "target-cpu": "equal to the launch's arch",
}
#: ``amdgpu-no-X`` -> the intrinsics that read X (AMDGPUUsage "LLVM IR Attributes";
#: llvm/lib/Target/AMDGPU/AMDGPUAttributes.def; those kept in the implicit arguments: implicitarg.ptr).
#: (``amdgpu-no-agpr``, ``amdgpu-no-flat-scratch-init`` are about registers and scratch the
#: emulator does not model: refused like any unknown attribute.)
NO_ATTRS = {
    "amdgpu-no-workitem-id-x": ("llvm.amdgcn.workitem.id.x",),
    "amdgpu-no-workitem-id-y": ("llvm.amdgcn.workitem.id.y",),
    "amdgpu-no-workitem-id-z": ("llvm.amdgcn.workitem.id.z",),
    "amdgpu-no-workgroup-id-x": ("llvm.amdgcn.workgroup.id.x",),
    "amdgpu-no-workgroup-id-y": ("llvm.amdgcn.workgroup.id.y",),
    "amdgpu-no-workgroup-id-z": ("llvm.amdgcn.workgroup.id.z",),
    "amdgpu-no-dispatch-ptr": ("llvm.amdgcn.dispatch.ptr",),
    "amdgpu-no-queue-ptr": ("llvm.amdgcn.queue.ptr",),
    "amdgpu-no-dispatch-id": ("llvm.amdgcn.dispatch.id",),
    "amdgpu-no-implicitarg-ptr": ("llvm.amdgcn.implicitarg.ptr",),
    # these live in the implicit kernel arguments: reading any of them goes through implicitarg.ptr
    "amdgpu-no-hostcall-ptr": ("llvm.amdgcn.implicitarg.ptr",),
    "amdgpu-no-heap-ptr": ("llvm.amdgcn.implicitarg.ptr",),
    "amdgpu-no-multigrid-sync-arg": ("llvm.amdgcn.implicitarg.ptr",),
    "amdgpu-no-default-queue": ("llvm.amdgcn.implicitarg.ptr",),
    "amdgpu-no-completion-action": ("llvm.amdgcn.implicitarg.ptr",),
    "amdgpu-no-lds-kernel-id": ("llvm.amdgcn.lds.kernel.id",),
    "amdgpu-no-cluster-id-x": ("llvm.amdgcn.cluster.id.x",),
    "amdgpu-no-cluster-id-y": ("llvm.amdgcn.cluster.id.y",),
    "amdgpu-no-cluster-id-z": ("llvm.amdgcn.cluster.id.z",),
}
#: bare function attributes that hold for every kernel of the subset (no calls but
#: intrinsics, no unwinding, no allocation; every launch returns or is an error)
FN_WORDS_HOLD = {"nounwind", "norecurse", "nofree", "willreturn", "mustprogress", "convergent"}
#: parameter attributes with a check; any other is refused
PARAM_CHECKED = {"noalias", "nocapture", "captures(none)", "readonly", "writeonly", "readnone", "noundef",
                 "nonnull", "inreg"}
_PARAM_VALUED = re.compile(r"(align) (\d+)$|(dereferenceable|dereferenceable_or_null)\((\d+)\)$")
#: metadata kinds with a check; any other is refused
MD_CHECKED = {"range", "noundef", "invariant.load", "amdgpu.noclobber", "noalias", "alias.scope", "mmra"}
MD_POINTER_ONLY = {"nonnull", "align", "dereferenceable", "dereferenceable_or_null"}
#: gfx1250 (GFX10.3+ encoding): LLVM AMDGPUBaseInfo getMaxWavesPerEU = 16, getEUsPerCU = 4
#: (WGP mode, the default): an assumption for gfx1250, from LLVM's tables, not a run
MAX_WAVES_PER_EU = 16
EUS_PER_CU = 4

#: every promise kind (docs/sim.md's table; tests/test_promises.py plants each)
KINDS = (sorted(f"{op} {f}" for op, fs in INT_FLAGS.items() for f in fs) + sorted(FMF_CHECKED | FMF_REFUSED)
         + sorted(FN_CHECKED) + sorted(NO_ATTRS) + sorted(FN_WORDS_HOLD | {"nosync"})
         + sorted(PARAM_CHECKED | {"align", "dereferenceable", "dereferenceable_or_null"})
         + sorted(MD_CHECKED | MD_POINTER_ONLY))


def _where(ins) -> str:
    return f"`{ins.text}` (block {ins.block}, line {ins.line})"


# -- decode time -----------------------------------------------------------------------------

def check_module(K) -> "ModulePromises":
    """Refuse every promise kind the oracles do not check and check the static
    ones; return the per-launch state holder. ``K``: the Kernel being decoded
    (its ``module`` and ``arch``). Raises :class:`PromiseRefused` /
    :class:`PromiseError` naming the instruction or attribute and the rule."""
    mod = K.module
    calls = {i.extra["callee"]: i for b in mod.blocks for i in b.ins if i.op == "call"}
    _check_fn_attrs(mod, calls, K.arch)
    params = _check_params(mod)
    noundef = False
    for b in mod.blocks:
        for ins in b.ins:
            _check_flags(ins)
            noundef |= _check_md(ins, mod.md)
    if noundef:   # the emulator reads `poison` operands as zero: no poison may reach a !noundef load
        for b in mod.blocks:
            for ins in b.ins:
                if ins.op == "store" and ins.ops[0].kind == "poison":
                    raise PromiseRefused("a store of poison/undef in a module whose loads promise !noundef "
                                         "(LangRef '!noundef' metadata): the emulator does not carry poison "
                                         "through memory", _where(ins))
    return ModulePromises(params)


def _check_fn_attrs(mod, calls: dict, arch: str) -> None:
    for key, val in mod.attrs.items():
        if key in NO_ATTRS:
            for callee in NO_ATTRS[key]:
                if callee in calls:
                    raise PromiseError(f"function attribute \"{key}\" promises the kernel does not read that "
                                       f"implicit input, but it calls @{callee} (AMDGPUUsage 'LLVM IR Attributes')",
                                       _where(calls[callee]))
            continue
        if key not in FN_CHECKED:
            raise PromiseRefused(f"function attribute \"{key}\"=\"{val}\" is a promise the oracles do not check "
                                 f"(docs/sim.md, Promises)")
        if key in ("denormal-fp-math", "denormal-fp-math-f32") and val not in ("ieee,ieee", "ieee"):
            raise PromiseError(f"function attribute \"{key}\"=\"{val}\": the numerics assume IEEE denormals "
                               f"(\"ieee,ieee\": numpy binary32 keeps subnormal inputs and results; LangRef "
                               f"'Function Attributes', denormal-fp-math)")
        if key == "target-features":
            for feat in filter(None, val.split(",")):
                if feat != "+wavefrontsize32":
                    raise PromiseRefused(f"target feature {feat} in \"target-features\": only +wavefrontsize32 "
                                         f"(the emulator's 32-lane wave) is checked")
        if key == "target-cpu" and val != arch:
            raise PromiseError(f"function attribute \"target-cpu\"=\"{val}\" but the kernel is run as {arch}")
        if key == "uniform-work-group-size" and val not in ("true", "false"):
            raise PromiseRefused(f"\"uniform-work-group-size\"=\"{val}\" is neither true nor false")
        if key in ("amdgpu-flat-work-group-size", "amdgpu-cluster-dims", "amdgpu-waves-per-eu"):
            _ints(key, val)
    for w in mod.attr_words:
        if w == "nosync":
            for callee, ins in calls.items():
                if "barrier" in callee:
                    raise PromiseError("function attribute nosync promises no synchronisation with other "
                                       f"threads, but the kernel calls @{callee} (LangRef 'Function Attributes')",
                                       _where(ins))
            fence = next((i for b in mod.blocks for i in b.ins if i.op == "fence"), None)
            if fence is not None:
                raise PromiseError("function attribute nosync promises no synchronisation with other threads, "
                                   "but the kernel has a fence (LangRef 'Function Attributes')", _where(fence))
        elif w not in FN_WORDS_HOLD:
            raise PromiseRefused(f"function attribute {w} is a promise the oracles do not check "
                                 f"(docs/sim.md, Promises)")


def _ints(key: str, val: str) -> tuple:
    try:
        return tuple(int(x) for x in val.split(","))
    except ValueError:
        raise PromiseRefused(f"function attribute \"{key}\"=\"{val}\" is not a list of integers") from None


def _check_params(mod) -> dict:
    """{param name: {attribute: value}}; refuses unknown attributes and checks inreg's prefix rule."""
    out, seen_plain = {}, False
    for p in mod.params:
        d = {}
        for a in p.attrs:
            m = _PARAM_VALUED.match(a)
            if m:
                d[m.group(1) or m.group(3)] = int(m.group(2) or m.group(4))
            elif a in PARAM_CHECKED:
                d[a] = True
            else:
                raise PromiseRefused(f"parameter attribute {a} of %{p.name} is a promise the oracles do not "
                                     f"check (docs/sim.md, Promises)")
        if p.ty.kind != "ptr" and set(d) - {"noundef", "inreg"}:
            raise PromiseRefused(f"parameter attributes {sorted(set(d) - {'noundef', 'inreg'})} on the "
                                 f"non-pointer %{p.name}")
        if "inreg" in d and seen_plain:
            raise PromiseError(f"parameter %{p.name} is inreg after a parameter that is not: AMDGPU preloads "
                               f"only a leading run of kernel arguments (AMDGPUUsage 'Preloaded Kernel "
                               f"Arguments')")
        seen_plain |= "inreg" not in d
        if d.get("align", 1) & (d.get("align", 1) - 1):
            raise PromiseRefused(f"align {d['align']} of %{p.name} is not a power of two")
        out[p.name] = d
    return out


def _check_flags(ins) -> None:
    op, flags = ins.op, ins.extra.get("flags", ())
    for f in flags:
        if f in FMF_CHECKED | FMF_REFUSED:
            if op not in FMF_OPS:
                raise PromiseRefused(f"fast-math flag {f} on {op}", _where(ins))
            if f in FMF_REFUSED:
                raise PromiseRefused(
                    f"fast-math flag {f} on {op}: it licenses LLVM to reassociate, contract or approximate, and "
                    f"no family licenses that (the reduce and the cluster fold sum slabs from slab 0 in order, "
                    f"docs/families.md and docs/conv_implicit_gemm.md; the numerics compare IEEE results bit for "
                    f"bit); refused (LangRef 'Fast-Math Flags')", _where(ins))
        elif f not in INT_FLAGS.get(op, ()):
            raise PromiseRefused(f"flag {f} on {op} is not one LangRef defines for it", _where(ins))


def _check_md(ins, nodes: dict) -> bool:
    """Check the metadata kinds of one instruction; True when it carries !noundef."""
    for kind, node in ins.extra.get("md", {}).items():
        if node not in nodes:
            raise PromiseRefused(f"!{kind} {node}: the module does not define {node}", _where(ins))
        if kind in MD_POINTER_ONLY:
            raise PromiseRefused(f"!{kind} applies to loads of pointers, which the emulator does not execute",
                                 _where(ins))
        if kind not in MD_CHECKED:
            raise PromiseRefused(f"metadata !{kind} is a promise the oracles do not check (docs/sim.md, "
                                 f"Promises)", _where(ins))
        if kind == "mmra" and ins.op != "fence":
            raise PromiseRefused("!mmra on an instruction other than a fence", _where(ins))
        if kind in ("range", "noundef", "invariant.load", "amdgpu.noclobber") and \
                not (ins.op == "load" or (kind == "range" and ins.op == "call")):
            raise PromiseRefused(f"!{kind} on {ins.op}", _where(ins))
        if kind in ("noalias", "alias.scope") and ins.op not in ("load", "store"):
            raise PromiseRefused(f"!{kind} on {ins.op} (checked on load and store only)", _where(ins))
        if kind in ("invariant.load", "noundef") and nodes[node] != "!{}":
            raise PromiseRefused(f"!{kind} {node} is not the empty node !{{}}", _where(ins))
    return "noundef" in ins.extra.get("md", {})


def range_pairs(node: str, nodes: dict, bits: int, where: str) -> list:
    """The ``[lo, hi)`` pairs of a ``!range`` node (``!{iN lo, iN hi, ...}``), as unsigned ints."""
    vals = re.findall(r"i(\d+) (-?\d+)", nodes[node])
    if not vals or len(vals) % 2 or any(int(b) != bits for b, _ in vals):
        raise PromiseRefused(f"!range {node} = {nodes[node]} is not pairs of i{bits}", where)
    m = (1 << bits) - 1
    v = [int(x) & m for _, x in vals]
    return list(zip(v[::2], v[1::2]))


def scope_set(node: str, nodes: dict, where: str) -> frozenset:
    """The scope ids of a ``!noalias`` / ``!alias.scope`` list node (``!{!5, !6}``)."""
    return frozenset(re.findall(r"!\d+", nodes[node].replace("!{", "{", 1))) or \
        _refuse(f"scope list {node} names no scope", where)


def _refuse(msg, where):
    raise PromiseRefused(msg, where)


# -- launch time -----------------------------------------------------------------------------

class ModulePromises:
    """The promise state of one decoded kernel: its parameters' attributes, and
    per launch order the launch's initial bytes (``!invariant.load``,
    ``!amdgpu.noclobber``), the invariant loads made and the bytes each alias
    scope touched (``!noalias`` / ``!alias.scope``)."""

    def __init__(self, params: dict):
        self.params = params
        self.no_write = {n for n, d in params.items() if "readonly" in d or "readnone" in d}
        self.no_read = {n for n, d in params.items() if "writeonly" in d or "readnone" in d}
        self.initial: dict = {}
        self.invariant: list = []
        self.scopes: dict = {}
        self.defs = None   # register name -> defining instruction (promises_ops, built on first use)

    def begin(self, args: dict) -> None:
        """Called by the launch before each order with the caller's (unchanged) arrays."""
        self.initial = {n: v.reshape(-1).view(np.uint8) for n, v in args.items() if isinstance(v, np.ndarray)}
        self.invariant = []
        self.scopes = {}

    def end(self, bufs: dict) -> None:
        """Called by the launch after each order with its final buffers: every byte an
        ``!invariant.load`` read still holds the launch's initial value."""
        for name, idx, where in self.invariant:
            fin = bufs[name].reshape(-1).view(np.uint8)[idx]
            bad = fin != self.initial[name][idx]
            if np.count_nonzero(bad):
                k = int(np.asarray(idx)[bad][0])
                raise PromiseError(f"!invariant.load promises the location is not written during the launch, but "
                                   f"byte offset {k} of global {name!r} changed (LangRef '!invariant.load' "
                                   f"metadata)", where)


def check_launch(K, grid, block: int, cluster, args: dict) -> None:
    """The function attributes and pointer-argument attributes against one launch:
    ``grid`` (workgroups), ``block`` (threads), ``cluster`` (None: the kernel's
    ``amdgpu-cluster-dims``), ``args`` (parameter -> numpy array / number).
    Raises :class:`PromiseError` naming the attribute and the rule."""
    mod = K.module
    at = mod.attrs
    if "amdgpu-flat-work-group-size" in at:
        lo, hi = _ints("amdgpu-flat-work-group-size", at["amdgpu-flat-work-group-size"])
        if not lo <= block <= hi:
            raise PromiseError(f"kernel {K.name}: \"amdgpu-flat-work-group-size\"=\"{lo},{hi}\" but the launch "
                               f"uses {block} threads per workgroup (AMDGPUUsage 'LLVM IR Attributes')")
    if "amdgpu-cluster-dims" in at:
        want = _ints("amdgpu-cluster-dims", at["amdgpu-cluster-dims"])
        if len(want) != 3 or min(want) < 1:
            raise PromiseRefused(f"\"amdgpu-cluster-dims\"=\"{at['amdgpu-cluster-dims']}\": only three "
                                 f"positive dims are checked")
        got = tuple(int(c) for c in cluster) if cluster is not None else want
        if got != want:
            raise PromiseError(f"kernel {K.name}: \"amdgpu-cluster-dims\"=\"{at['amdgpu-cluster-dims']}\" but the "
                               f"launch uses clusters of {got}: LLVM rebuilds the workgroup ids from the "
                               f"attribute's dims (AMDGPUUsage 'LLVM IR Attributes', amdgpu-cluster-dims)")
    if "amdgpu-waves-per-eu" in at:
        v = _ints("amdgpu-waves-per-eu", at["amdgpu-waves-per-eu"])
        lo, hi = v[0], (v[1] if len(v) > 1 and v[1] else MAX_WAVES_PER_EU)
        need = -(-(block // 32) // EUS_PER_CU)
        if not need <= lo <= hi <= MAX_WAVES_PER_EU:
            raise PromiseError(f"kernel {K.name}: \"amdgpu-waves-per-eu\"=\"{at['amdgpu-waves-per-eu']}\" is not "
                               f"within [{need}, {MAX_WAVES_PER_EU}] for a launch of {block} threads per workgroup "
                               f"({EUS_PER_CU} EUs per CU; LLVM ignores it then: AMDGPUUsage 'LLVM IR Attributes', "
                               f"GCNSubtarget::getWavesPerEU)")
    # uniform-work-group-size: the emulator's grid counts whole workgroups, so every
    # dimension of the global size is a multiple of the workgroup size by construction.
    _check_pointer_args(K, args)


def _check_pointer_args(K, args: dict) -> None:
    prm = K.promises.params
    ptrs = [p.name for p in K.module.params if p.ty.kind == "ptr" and isinstance(args.get(p.name), np.ndarray)]
    for n in ptrs:
        a, d = args[n], prm[n]
        for key in ("dereferenceable", "dereferenceable_or_null"):
            if key in d and a.nbytes < d[key]:
                raise PromiseError(f"argument %{n} is {key}({d[key]}) but the launch passes {a.nbytes} bytes "
                                   f"(LangRef 'Parameter Attributes')")
        if d.get("align", 1) > 256:
            raise PromiseError(f"argument %{n} promises align {d['align']}, more than the 256 bytes a hipMalloc "
                               f"base guarantees (the launch plans pass whole allocations)")
    for i, n in enumerate(ptrs):
        for m in ptrs[i + 1:]:
            dn, dm = prm[n], prm[m]
            if not ("noalias" in dn or "noalias" in dm) or ("readonly" in dn and "readonly" in dm):
                continue
            a, b = args[n], args[m]
            if a.nbytes and b.nbytes and np.may_share_memory(a, b):
                raise PromiseError(f"arguments %{n} and %{m} overlap in the launch but "
                                   f"{'%' + n if 'noalias' in dn else '%' + m} is noalias and one of them is "
                                   f"written (LangRef 'Parameter Attributes', noalias)")

"""Emit the kernels a convolution layer needs, with a launch plan, using either
engine (docs/policy.md#emit).

Engine-agnostic: every decision comes from the engine's own families —
``split_k_policy`` (the default since issue 37, ``select="seed"``: the
reference's measured degree policy on the spec's tile), ``perf_model`` (``select="rules"``: tile, degree and binary by
the lowest predicted time among the candidates the reference's rules admit,
``rules = 1``; ``select="model"``: among every admitted candidate,
docs/perf_model.md) or ``split_k_policy`` (``select="seed"``: the seed's
degree policy on the spec's tile) for fold, degree, binary and reduce
kernel, ``conv_launch``
(admission and launch plan, on the folded problem), ``conv_implicit_gemm``
and ``conv_fwd_split_k_reduce`` (the IR) — so ``engine`` may be
``python_engine`` or ``cpp_engine``.

Per layer: ``<dir>/<layer>.plan.json`` and one ``<kernel>.ll`` per kernel the
layer needs (Stage 1, the reduce kernel when Stage 2 runs). Vector widths are
the engine API's ``load_vector`` of the folded problem's channels per group:
``cpg`` itself for 3, 5, 6 and 7 (the padded-pixel loads), else the largest of
8, 4, 2, 1 dividing it.
``--dtype`` is the precision of plain ``conv`` (fp32) lines only; a
``convbfp16`` / ``convfp16`` line keeps its own.
"""
from __future__ import annotations

import importlib.resources
import json
import os
from dataclasses import dataclass, field
import importlib
import sys
import time

from parity.base.escape import shown
from .miopen import Layer
from parity.launch.reduce_launch import reduce_launch_reason
from python_engine.facts import CLUSTER_SIZES
from .miopen import ProblemInputError, parse_command_line, read_catalog
from parity.base.outputs import OutputError, check_file_names, ensure_dir, out, write_text_atomic
from parity.cli.common import Parser, add_options, add_version, die, finish, integer, progress

DEFAULT_ARCH = "gfx1250"
DEFAULT_FLAVOR = "llvm23"
# plan_layer's select: split_k_policy, the reference's measured rules (the default since issue 37:
# the perf model's constants are assumptions until a gfx1250 run validates them, docs/policy.md),
# perf_model over every admitted candidate, or perf_model within the reference's rules
SELECTIONS = ("seed", "model", "rules")
DEFAULT_SELECT = "seed"
PROBLEM_FIELDS = ("N", "C", "H", "W", "K", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w", "dil_h", "dil_w",
                  "groups")


class EmitError(ValueError):
    """A layer this tool cannot emit (the message says why; ``reason``: the
    admission reason alone, when the engine gave one)."""

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason


def _kv(text: str) -> dict:
    """``a=1;b=x`` or ``a=1 b=x`` -> dict with ints where they parse."""
    out = {}
    for part in text.replace(";", " ").split():
        k, v = part.split("=", 1)
        try:
            out[k] = int(v)
        except ValueError:
            out[k] = v
    return out


def parse_policy(text: str) -> dict:
    """The split_k_policy text as a dict of its lines (first word -> rest)."""
    return dict((ln.split(" ", 1) + [""])[:2] for ln in text.splitlines())


def parse_plan(text: str) -> dict:
    """conv_launch plan text -> dict (header fields, ``args`` and ``stage2_args`` lists)."""
    out: dict = {"args": [], "stage2_args": []}
    cur = None
    for ln in text.splitlines():
        head, _, rest = ln.partition(" ")
        if head in ("args", "stage2_args"):
            cur = out[head]
            out[head + "_variant"] = rest
        elif cur is not None and head.isdigit():
            name, _, val = rest.partition(" = ")
            cur.append([name, int(val) if val.lstrip("-").isdigit() else val])
        elif head in ("ks", "ks_count", "data_slices", "degree", "lds_bytes", "workspace_bytes"):
            out[head] = int(rest)
        elif head in ("grid", "block"):
            out[head] = [int(v) for v in rest.split()]
        elif head == "cluster":
            out[head] = None if rest == "none" else [int(v) for v in rest.split()]
        elif head == "needs_stage2":
            out[head] = rest == "true"
        else:
            out[head] = rest
    return out


@dataclass
class LayerPlan:
    layer: Layer
    engine: str
    arch: str
    flavor: str
    policy_text: str
    policy: dict
    fold: int
    folded: dict                 # folded problem fields
    binary: str
    conv_spec: dict
    launch_spec: dict
    plan_text: str
    plan: dict
    kernels: list = field(default_factory=list)   # [(role, family, spec, kernel name, identity, text)]

    def to_json(self, files: dict | None = None) -> dict:
        p = self.layer.problem
        red = [k for k in self.kernels if k[0] == "reduce"]
        stage2 = None
        if red:
            rs = red[0][2]
            n = p.M * p.K
            per = rs["threads"] * rs["vector"]
            stage2 = {"kernel": red[0][3], "grid": [(n + per - 1) // per, 1, 1], "block": [rs["threads"], 1, 1],
                      "args": self.plan["stage2_args"]}
        return {
            "layer": self.layer.name, "command": self.layer.line, "dtype": self.layer.dtype,
            "epilogue": {"acc_epilogue": self.conv_spec.get("acc_epilogue", "identity"), **self.layer.scalars},
            "engine": self.engine, "arch": self.arch, "flavor": self.flavor,
            "problem": {n: getattr(p, n) for n in PROBLEM_FIELDS},
            "gemm": {"M": p.M, "kpg": p.kpg, "groups": p.groups, "Kgemm": p.Kgemm},
            "fold": self.fold, "folded_problem": self.folded,
            "policy": {"degree": int(self.policy["degree"]), "rule": self.policy["rule"],
                       "cus": int(self.policy["cus"]), "cluster": self.policy["cluster"],
                       "admitted_by": admitted_by(self.policy)},
            "binary": self.binary, "model": model_json(self.policy_text),
            "aot": self.policy["aot"].startswith("yes:"),
            "aot_note": self.policy["aot"].split(": ", 1)[1],
            "aot_kernels": [{"role": r, "aot": ok, "served_by": t} for r, ok, t in aot_kernels(self)],
            "kernels": [{"role": r, "family": fam, "kernel": name, "identity": ident, "spec": spec,
                         **({"file": files[name]} if files and name in files else {})}
                        for r, fam, spec, name, ident, _ in self.kernels],
            "launch": {"kernel": self.plan["conv_launch"], "variant": self.plan["variant"],
                       "degree": self.plan["degree"], "ks": self.plan["ks"], "ks_count": self.plan["ks_count"],
                       **({"data_slices": self.plan["data_slices"]} if "data_slices" in self.plan else {}),
                       "slices_reason": slices_reason(self),
                       "grid": self.plan["grid"], "block": self.plan["block"], "lds_bytes": self.plan["lds_bytes"],
                       "cluster": self.plan["cluster"], "workspace_bytes": self.plan["workspace_bytes"],
                       "needs_stage2": self.plan["needs_stage2"], "args": self.plan["args"]},
            "stage2": stage2,
        }


def _candidate(text: str) -> dict:
    """``c16 plain 16x64x32 w1x2 d1 [k=v ...]`` -> dict (ints where they parse)."""
    words = text.split()
    out = {"candidate": int(words[0][1:]), "binary": words[1], "tile": words[2], "waves": words[3][1:],
           "degree": int(words[4][1:])}
    out.update(_kv(" ".join(w for w in words[5:] if "=" in w)))
    return out


def model_json(policy_text: str) -> dict | None:
    """The perf model's choice in a perf_model text (the plan JSON's ``model``):
    ``{"selected": {candidate, binary, tile, waves, degree, predicted_ps,
    terms}, "runner_up": {... } | None, "seed": {binary, tile, waves, degree,
    predicted_ps} | None, "seed_note": str | None, "candidates": N}``; None
    for a split_k_policy text (``select="seed"``). Times in picoseconds."""
    lines = policy_text.splitlines()
    if not lines or not lines[0].startswith("perf_model "):
        return None
    pol = parse_policy(policy_text)
    rows = {ln.split(" ", 1)[0]: ln for ln in lines if ln[:1] == "c" and ln[1:2].isdigit()}

    def pick(key):
        rest = pol.get(key, "none")
        if rest.startswith("none"):
            return None
        c = _candidate(rest)
        c["predicted_ps"] = c.pop("total_ps")
        terms = _candidate(rows[f"c{c['candidate']}"])
        c["terms"] = {k: v for k, v in terms.items() if k not in ("candidate", "binary", "tile", "waves", "degree")}
        return c

    seed = None
    if not pol["seed"].startswith("none"):
        w = pol["seed"].split()
        seed = {"binary": w[0], "tile": w[1], "waves": w[2][1:], "degree": int(w[3][1:]),
                "predicted_ps": int(w[4].split("=")[1])}
    return {"selected": pick("selected"), "runner_up": pick("runner_up"), "seed": seed,
            "seed_note": None if seed else pol["seed"].split(": ", 1)[-1],
            "candidates": int(pol["candidates"].split()[0])}


def admitted_by(policy: dict) -> str:
    """The rule that admitted the chosen binary (the plan JSON's
    ``policy.admitted_by``): the perf_model text's ``admitted_by`` line
    (``select="rules"``), ``model: ...`` for ``select="model"`` (no rule of the
    reference applied) or ``seed: ...`` (the split-K policy's own rule)."""
    if "admitted_by" in policy:
        return policy["admitted_by"]
    if policy["rule"].startswith("model:"):
        return "model: every candidate conv_launch admits (the reference's rules are not applied)"
    return f"seed: the split-K policy (rule {policy['rule']})"


def slices_reason(lp: "LayerPlan") -> str | None:
    """Why the launched slice count differs from the policy degree (the plan
    JSON's ``launch.slices_reason``), or None when ``ks_count`` equals the
    degree and every slice carries data. The cases: a cluster binary launches
    its S slices (the cluster sizes of the AOT grid end at 15, so a policy
    degree of 16 or 32 becomes S <= 15), trailing slices of a cluster launch
    that start at or past Kgemm (empty: they write zero slabs), and a
    two-stage launch whose ``ks`` rounding leaves fewer slices with data than
    the degree (only those are launched)."""
    deg, kc = int(lp.policy["degree"]), int(lp.plan["ks_count"])
    data = int(lp.plan.get("data_slices", kc))
    ks, kg = int(lp.plan["ks"]), int(lp.policy["gemm"].split("Kgemm=")[1].split()[0])
    out = []
    if lp.binary == "cluster" and kc != deg:
        out.append(f"the cluster binary launches its S = {kc} slices, not the policy degree {deg} "
                   f"(cluster sizes {', '.join(map(str, CLUSTER_SIZES))}: at most {max(CLUSTER_SIZES)})")
    elif kc != deg:
        out.append(f"ks = {ks} (a multiple of tile_k covering Kgemm {kg} / degree {deg}) leaves "
                   f"ceil({kg} / {ks}) = {kc} slices with data; the two-stage binary launches only those")
    if data < kc:
        out.append(f"{kc - data} trailing slices start at or past Kgemm {kg} (k_begin >= Kgemm) and are empty: "
                   f"they write zero slabs")
    return "; ".join(out) or None


def aot_kernels(lp: "LayerPlan") -> list:
    """Per kernel the layer launches, which AOT job serves it: ``[(role, served,
    text)]`` with role ``plain``, ``Stage 1``, ``cluster`` (the forward kernel)
    or ``Stage 2`` (the reduce kernel), ``served`` True when the kernel's
    identity hash is an AOT job of the layer's flavor (the selection's ``aot``
    line lists the hashes), and ``text`` ``AOT <hash> <label>`` or
    ``JIT: <reason>`` (the first grid axis the selection's binaries leave)."""
    aot = lp.policy["aot"]
    why = aot.split(": ", 1)[1] if not aot.startswith("yes:") else ""
    grid = _aot_hashes(lp.flavor) if lp.arch == DEFAULT_ARCH else frozenset()
    out = []
    for role, _, _, _, ident, _ in lp.kernels:
        name = "Stage 2" if role == "reduce" else {"plain": "plain", "cluster": "cluster"}.get(lp.binary, "Stage 1")
        ok = ident["hash"] in grid
        out.append((name, ok, f"AOT {ident['hash']} {ident['label']}" if ok else f"JIT: {why}"))
    return out


_GRIDS: dict = {}


def _aot_hashes(flavor: str) -> frozenset:
    """The job hashes of the AOT grid at ``flavor`` (the engine API's
    ``aot_jobs_text``; both engines' grids are equal, tests/test_policy.py)."""
    if flavor not in _GRIDS:
        import python_engine
        _GRIDS[flavor] = frozenset(ln.split("\t")[1] for ln in python_engine.aot_jobs_text(flavor)[1].splitlines())
    return _GRIDS[flavor]


def aot_text(lp: "LayerPlan") -> str:
    """``plain AOT <hash> <label>; ...`` or ``Stage 1 JIT: <reason>; ...``: :func:`aot_kernels` as one line."""
    return "; ".join(f"{role} {text}" for role, _, text in aot_kernels(lp))


def _ident(policy: dict, key: str) -> dict:
    h, label = policy[key].split(" ", 1)
    return {"hash": h, "label": label}


def plan_layer(E, layer: Layer, arch: str = DEFAULT_ARCH, flavor: str = DEFAULT_FLAVOR, dtype: str | None = None,
               cus: int = 0, spec: dict | None = None, lower: bool = True, select: str = DEFAULT_SELECT
               ) -> LayerPlan:
    """Resolve, select and (``lower``) emit one layer with engine ``E``.

    ``dtype`` (``--dtype``) is the precision of a plain ``conv`` (fp32) layer;
    a ``convbfp16`` / ``convfp16`` layer keeps its own precision. ``select``:
    ``"seed"`` (the default since issue 37: the reference's measured policy
    on the spec's tile), ``"rules"`` (the perf model's lowest predicted time among
    the candidates the reference's rules admit; the plan names the admitting
    rule), ``"model"`` (the perf model over every admitted candidate: tile,
    degree and binary; the plan records the prediction, the runner-up and
    the seed's choice)."""
    if select not in SELECTIONS:
        raise ValueError(f"select must be one of {', '.join(SELECTIONS)}, got {select!r}")
    fam = "split_k_policy" if select == "seed" else "perf_model"
    dt = layer.dtype if layer.dtype != "fp32" else dtype
    if dt is None:
        raise EmitError(f"layer {layer.name} is fp32 (MIOpenDriver 'conv'); the kernels are bf16/fp16: "
                        f"write it as convbfp16 or convfp16, or pass --dtype bf16 or --dtype fp16 "
                        f"to build the plain 'conv' layers at that precision")
    p = layer.problem
    base = dict(spec or {})
    base.setdefault("split_k", -1)
    base.setdefault("split_k_cluster", 0)  # the split-K fields come together (spec_front.SPLIT_K_FIELDS)
    base.setdefault("acc_epilogue", layer.acc_epilogue)  # a fused (CBAInfer) line's epilogue
    base["dtype"] = dt
    prob = {n: getattr(p, n) for n in PROBLEM_FIELDS}
    given_vec = "vector_a" in base or "vector_b" in base
    pspec = dict(base, **prob, cus=cus, **({"rules": int(select == "rules")} if fam == "perf_model" else {}))
    text = E.lower(fam, pspec, arch, flavor).text
    pol = parse_policy(text)
    folded = _kv(pol["folded"]) if "folded" in pol else prob
    cpg = folded["C"] // folded["groups"]
    # the widest vector dividing cpg; cpg 3, 5, 6, 7: the padded-pixel (small-channel) path
    v = E.load_vector(cpg)
    if not given_vec and v != 8:
        pspec = dict(pspec, vector_a=v, vector_b=v)
        text = E.lower(fam, pspec, arch, flavor).text
        pol = parse_policy(text)
    if pol["kernel"] == "none" or pol["admission"] != "ok":
        why = pol["admission"] if pol["admission"] != "ok" else pol["rule"]
        seed = pol.get("seed", "")
        if why == "no candidate is admitted" and seed.startswith("none: "):
            # the perf model admitted none: name the rule that refused the seed policy's candidate
            why += f"; {seed[len('none: '):]}"
        raise EmitError(f"layer {layer.name}: no kernel for {arch}/{flavor}: {why}", reason=why)
    cspec = _kv(pol["spec"])
    cspec["name_prefix"] = cspec.get("name_prefix", "") if cspec.get("name_prefix") != "" else ""
    lspec = dict(cspec, **folded, degree=int(pol["launch_degree"]))
    plan_text = E.lower("conv_launch", lspec, arch, flavor).text
    lp = LayerPlan(layer, E.ENGINE, arch, E.resolve_flavor(flavor), text, pol, int(pol["fold"]), folded,
                   pol["binary"], cspec, lspec, plan_text, parse_plan(plan_text))
    todo = [("stage1", "conv_implicit_gemm", cspec, _ident(pol, "identity"))]
    if pol["reduce"] != "none":
        todo.append(("reduce", "conv_fwd_split_k_reduce", _kv(pol["reduce_spec"]), _ident(pol, "reduce_identity")))
    for role, fam, s, ident in todo:
        if lower:
            out = E.lower(fam, s, arch, flavor)
            lp.kernels.append((role, fam, s, out.kernel, ident, out.text))
        else:
            lp.kernels.append((role, fam, s, E.kernel_name(fam, s, arch, flavor), ident, None))
    if lp.plan["needs_stage2"] != (pol["reduce"] != "none"):
        raise RuntimeError(f"layer {layer.name}: the launch plan and the policy disagree on Stage 2")
    if lp.plan["needs_stage2"]:
        why = reduce_launch_reason(_kv(pol["reduce_spec"]), dict(lp.plan["stage2_args"]))
        if why:
            raise EmitError(f"layer {layer.name}: Stage 2 refused: {why}", reason=why)
    return lp


def write_layer(lp: LayerPlan, out_dir: str) -> list:
    """Write the layer's ``.ll`` files and ``<layer>.plan.json``; returns the
    paths. Every file name is checked against the file system's limit before
    anything is written (EmitError), and each file is written atomically."""
    if os.path.basename(lp.layer.name) != lp.layer.name or lp.layer.name.startswith("."):
        raise EmitError(f"layer name {lp.layer.name!r} would leave the output directory")
    names = [f"{k[3]}.ll" for k in lp.kernels] + [f"{lp.layer.name}.plan.json"]
    try:
        check_file_names(out_dir, names, f"layer {lp.layer.name[:40]}")
    except OutputError as e:
        raise EmitError(str(e)) from None
    os.makedirs(out_dir, exist_ok=True)
    files, paths = {}, []
    for _, _, _, name, _, text in lp.kernels:
        path = os.path.join(out_dir, f"{name}.ll")
        write_text_atomic(path, text)
        files[name] = os.path.basename(path)
        paths.append(path)
    path = os.path.join(out_dir, f"{lp.layer.name}.plan.json")
    write_text_atomic(path, json.dumps(lp.to_json(files), indent=2, sort_keys=False) + "\n")
    paths.append(path)
    return paths


def us_text(ps: int) -> str:
    """Picoseconds as microseconds with 3 decimals (``2750000`` -> ``2.750 us``)."""
    return f"{ps // 1000000}.{ps // 1000 % 1000:03d} us"


def model_text(m: dict | None) -> str:
    """`` predicted 2.750 us (runner-up 2.755 us, seed 5.314 us)``, or '' without a model."""
    if not m or not m["selected"]:
        return ""
    r = f"runner-up {us_text(m['runner_up']['predicted_ps'])}" if m["runner_up"] else "no runner-up"
    sd = f"seed {us_text(m['seed']['predicted_ps'])}" if m["seed"] else "seed none"
    return f" predicted {us_text(m['selected']['predicted_ps'])} ({r}, {sd})"


def summary_line(lp: LayerPlan) -> str:
    p = lp.layer.problem
    pl = lp.plan
    cs = lp.conv_spec
    return (f"{lp.layer.name}: M {p.M} Kgemm {p.Kgemm} fold {lp.fold} tile {cs['tile_m']}x{cs['tile_n']}x"
            f"{cs['tile_k']} degree {lp.policy['degree']} "
            f"({lp.policy['rule'].split(':', 1)[0]}) binary {lp.binary} launch {pl['grid'][0]}x{pl['grid'][1]}"
            f"x{pl['grid'][2]} ks_count {pl['ks_count']} workspace {pl['workspace_bytes']} "
            f"kernels {', '.join(k[3] for k in lp.kernels)}{model_text(model_json(lp.policy_text))}; "
            f"served: {aot_text(lp)}")


def load_layers(args_line: str | None, catalog: str | None) -> list:
    """The layer of one command-line command (``args_line``, an unsafe ``name:``
    made safe) or of a catalog file (:func:`parity.catalog.miopen.read_catalog`: file
    type, size and line caps, strict UTF-8). Raises ProblemInputError."""
    if args_line is not None:
        return [parse_command_line(args_line)]
    return read_catalog(catalog)


def check_target(E, arch: str, flavor: str, cus: int) -> str | None:
    """Why ``arch`` / ``flavor`` / ``cus`` cannot emit any layer with engine ``E``, or None."""
    if not 0 <= cus <= 65536:
        return f"--cus must be 0 (the arch table's count) or 1..65536, got {cus}"
    try:
        E.resolve_flavor(flavor)
    except E.SpecRejected:  # the same text as every parity command's --flavor check
        canonical = sorted({f["canonical"] for f in E.flavor_table()})
        return (f"--flavor: unknown flavor {flavor!r} (canonical: {', '.join(canonical)}; "
                "aliases per the engine's flavor table, e.g. llvm24)")
    why = E.validate("conv_implicit_gemm", {"dtype": "bf16"}, arch, flavor)
    if why:
        opt = "--flavor" if why.startswith("flavor") else "--arch"
        return f"{opt}: {why}"
    return None


def select_layers(layers: list, only: str | None, source: str) -> list:
    """``layers`` (``only``: the comma-separated names, in catalog order). EmitError
    when nothing is left or a name in ``only`` is no layer of ``source``."""
    if not layers:
        raise EmitError(f"{source} has no layers (only comments and blank lines)")
    if only is None:
        return layers
    want = only.split(",")
    names = [l.name for l in layers]
    unknown = [w for w in want if w not in names]
    if unknown:
        known = ", ".join(names[:6]) + (f", ... ({len(names)} layers)" if len(names) > 6 else "")
        raise EmitError(f"--only: no layer named {', '.join(repr(u) for u in unknown)} in {source} "
                        f"(known: {known})")
    return [l for l in layers if l.name in want]


def default_catalog() -> str:
    """Path of the shipped catalog, the package data file parity/data/layers.txt
    (read through importlib.resources, so an installed wheel finds its own copy)."""
    return str(importlib.resources.files("parity") / "data" / "layers.txt")


DEFAULT_OUT = os.path.join("out", "emit")


def add_emit_arguments(ap) -> None:
    """The options of ``emit`` (shared by ``parity emit`` and
    ``parity emit``; the vocabulary of docs/cli.md)."""
    # dest layer_command: "command" is `parity`'s subcommand name (parity/app/main.py), which this
    # positional overwrote (args.command was the MIOpenDriver line, or None)
    ap.add_argument("layer_command", metavar="COMMAND", nargs="?",
                    help="one MIOpenDriver command, quoted (else --catalog)")
    ap.add_argument("--catalog", metavar="FILE", help="a catalog file (default: the shipped parity/data/layers.txt "
                                                       "when no command is given)")
    ap.add_argument("--out", "-o", metavar="DIR", default=DEFAULT_OUT,
                    help=f"output directory (default {DEFAULT_OUT}, under the ignored out/)")
    ap.add_argument("--engine", default="python", choices=("python", "cpp"),
                    help="the engine that emits (default python)")
    ap.add_argument("--arch", default=DEFAULT_ARCH, help=f"the target arch (default {DEFAULT_ARCH})")
    ap.add_argument("--dtype", choices=("bf16", "fp16"),
                    help="the precision of plain 'conv' (fp32) layers; convbfp16/convfp16 layers keep theirs")
    ap.add_argument("--cus", type=integer("--cus"), default=0,
                    help="the device's CU count (default 0: the arch table's)")
    ap.add_argument("--select", default=DEFAULT_SELECT, choices=SELECTIONS,
                    help="seed (default): the reference's measured split-K policy on the 64x64 tile "
                         "(docs/policy.md); model: tile, degree and binary by the perf model's lowest predicted "
                         "time among every admitted candidate (docs/perf_model.md); rules: the perf model "
                         "among the candidates the reference's rules admit")
    add_options(ap, only="layers", flavor=True, flavor_default=DEFAULT_FLAVOR, jobs=False, json=True,
                timeout=False, engines=False)


def rejected_text(e, layer: Layer, source: str, count: int) -> str:
    """The one error line (without ``error: ``) of a layer that parsed but
    was then rejected (``e``: an EmitError or the engine's SpecRejected): the
    source (``the command`` or the catalog file), the layer, the rule, and
    for a catalog of ``count`` > 1 layers that nothing was written."""
    why = shown(str(e)) if isinstance(e, EmitError) else f"layer {shown(layer.name)}: {shown(e.reason)}"
    more = f" ({count} layers: the first rejected one is shown; nothing was written)" if count > 1 else ""
    return f"{shown(source)}: {why}{more}"


def run_emit(a) -> int:
    """Run ``emit`` with parsed arguments ``a`` (see :func:`add_emit_arguments`)."""
    E = importlib.import_module("python_engine" if a.engine == "python" else "cpp_engine")
    if a.layer_command is not None and a.catalog:
        return die("give one MIOpenDriver command or --catalog FILE, not both")
    why = check_target(E, a.arch, a.flavor, a.cus)
    if why:
        return die(why)
    source = "the command" if a.layer_command is not None else (a.catalog or default_catalog())
    try:
        layers = select_layers(load_layers(a.layer_command, None if a.layer_command is not None else source), a.only,
                               shown(source))
    except (ProblemInputError, EmitError) as e:
        return die(str(e))
    t0 = time.perf_counter()
    plans = []
    with progress("emit", len(layers)) as bar:
        for i, layer in enumerate(layers):
            try:
                plans.append(plan_layer(E, layer, a.arch, a.flavor, a.dtype, a.cus, select=a.select))
            except (EmitError, E.SpecRejected) as e:
                # a layer that parses but is then rejected is bad input: one line, exit 2, nothing written
                return die(rejected_text(e, layer, source, len(layers)))
            finally:
                if bar:
                    bar(i + 1)
    try:  # after the input is known good: a refused catalog creates nothing
        ensure_dir(a.out, "--out")
    except OutputError as e:
        return die(str(e))
    failed = []
    written = []
    for lp in plans:
        layer = lp.layer
        try:
            paths = write_layer(lp, a.out)
        except (EmitError, OSError) as e:  # this layer only; the others are still written
            msg = str(e) if isinstance(e, EmitError) else f"{shown(e.filename or a.out)}: {shown(e.strerror)}"
            print(f"error: layer {shown(layer.name, 60)}: {msg}", file=sys.stderr)
            failed.append({"layer": layer.name, "error": msg})
            continue
        written.append({"layer": layer.name, "plan": paths[-1], "files": paths,
                        "binary": lp.binary, "degree": int(lp.policy["degree"])})
        out(summary_line(lp))
    payload = {"engine": a.engine, "arch": a.arch, "flavor": E.resolve_flavor(a.flavor), "out": a.out,
               "layers": written, "failed": failed}
    if failed:
        print(f"error: {len(failed)} of {len(layers)} layer(s) failed; {len(layers) - len(failed)} written "
              f"into {shown(a.out)}/", file=sys.stderr)
        return finish(a, "emit", False, payload)
    out(f"{len(layers)} layer(s) with the {a.engine} engine into {shown(a.out)}/ in "
        f"{time.perf_counter() - t0:.2f} s")
    return finish(a, "emit", True, payload)


def main(argv=None) -> int:
    """``parity emit``."""
    ap = Parser(prog="parity emit",
                description="Emit the kernels and launch plan of convolution layers "
                            "(MIOpenDriver command lines; docs/policy.md, docs/cli.md).")
    add_version(ap)
    add_emit_arguments(ap)
    return run_emit(ap.parse_args(argv))


def add_command(sub) -> None:
    """``parity emit`` on the ``parity`` subparsers (parity/app/main.py)."""
    e = sub.add_parser("emit", help="emit the kernels + launch plan of convolution layers (docs/policy.md)")
    add_emit_arguments(e)
    e.set_defaults(func=run_emit)

"""The conv_launch plan, read from the text the engine prints
(docs/conv_launch.md "Launch plan text"); nothing here recomputes a grid,
a workspace size or an argument value: the plan is the one source."""
from __future__ import annotations

from dataclasses import dataclass, field

from parity.launch.errors import LaunchConfigError
import python_engine as api


@dataclass(frozen=True)
class LaunchPlan:
    kernel: str
    variant: str
    degree: int
    ks: int
    ks_count: int
    grid: tuple
    block: tuple
    lds_bytes: int
    cluster: tuple | None
    workspace_bytes: int
    needs_stage2: bool
    args: dict = field(default_factory=dict)          # name -> int or text, in ABI order
    stage2_args: dict = field(default_factory=dict)   # reduce kernel, only when needs_stage2


def _value(v: str):
    try:
        return int(v)
    except ValueError:
        return v


def parse_plan(text: str) -> LaunchPlan:
    lines = text.rstrip("\n").split("\n")
    head, blocks, cur = {}, {"args": {}, "stage2_args": {}}, None
    for ln in lines:
        if ln.startswith("args "):
            cur = "args"
            head["args_variant"] = ln.split(" ", 1)[1]
            continue
        if ln.startswith("stage2_args "):
            cur = "stage2_args"
            continue
        if cur:
            idx, rest = ln.split(" ", 1)
            name, val = rest.split(" = ", 1)
            if int(idx) != len(blocks[cur]):
                raise LaunchConfigError(f"launch plan: argument {name} has index {idx}, expected {len(blocks[cur])}")
            blocks[cur][name] = _value(val)
            continue
        key, val = ln.split(" ", 1)
        head[key] = val
    try:
        cl = head["cluster"]
        return LaunchPlan(
            kernel=head["conv_launch"], variant=head["variant"], degree=int(head["degree"]),
            ks=int(head["ks"]), ks_count=int(head["ks_count"]),
            grid=tuple(int(v) for v in head["grid"].split()),
            block=tuple(int(v) for v in head["block"].split()),
            lds_bytes=int(head["lds_bytes"]),
            cluster=None if cl == "none" else tuple(int(v) for v in cl.split()),
            workspace_bytes=int(head["workspace_bytes"]),
            needs_stage2=head["needs_stage2"] == "true",
            args=blocks["args"], stage2_args=blocks["stage2_args"])
    except KeyError as exc:
        raise LaunchConfigError(f"launch plan: missing line {exc.args[0]!r}") from None


def buffer_bytes(plan: LaunchPlan, bias: bool) -> dict:
    """Device buffer name -> bytes to allocate, all from the plan: ``x``, ``w``,
    ``d`` from ``x_bytes`` / ``w_bytes`` / ``d_bytes``, ``ws`` from
    ``workspace_bytes`` (when not 0), ``bias`` (``bias``: the fused bias
    epilogue) ``K`` fp32 values."""
    sizes = {"x": plan.args["x_bytes"], "w": plan.args["w_bytes"], "d": plan.args["d_bytes"]}
    if plan.workspace_bytes:
        sizes["ws"] = plan.workspace_bytes
    if bias:
        sizes["bias"] = plan.args["K"] * 4
    return sizes


def launch_plan(spec: dict, arch: str = "gfx1250", flavor: str = "llvm23") -> LaunchPlan:
    """The plan of a conv_launch spec (binary fields + problem + degree) from the
    Python engine; SpecRejected(reason) when the launch is not admitted."""
    return parse_plan(api.lower("conv_launch", spec, arch, flavor).text)

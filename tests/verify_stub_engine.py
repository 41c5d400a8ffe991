"""A stub engine for tests/test_verify_*.py: each spec names a hand-written
module (``{"case": NAME}``) that is wrong in exactly one way. Tables are
python_engine's (plus a typo'd intrinsic row when ``TYPO_TABLE`` is set in the
environment), so `parity verify` can run it end to end."""

from __future__ import annotations

import os

import python_engine as _E

ENGINE = "verify_stub"
FAMILIES = ("stub",)
Lowered = _E.Lowered
SpecRejected = _E.SpecRejected
resolve_flavor = _E.resolve_flavor
flavor_table = _E.flavor_table


def arch_table():
    """python_engine's rows; with ``GFX12_RSRC_TABLE`` set, gfx1250 claims the
    gfx11/gfx12 descriptor word (rsrc_flags = rsrc_word3 = 0x31004000): the
    table this project had before LLVM's gfx1250 lowering was checked."""
    rows = tuple(dict(r) for r in _E.arch_table())
    if os.environ.get("GFX12_RSRC_TABLE"):
        for r in rows:
            if r["name"] == "gfx1250":
                r.update(rsrc_flags=0x31004000, rsrc_word3=0x31004000)
    return rows


def intrinsic_table(flavor):
    rows = tuple(_E.intrinsic_table(flavor))
    if os.environ.get("TYPO_TABLE"):
        rows += (("typo", "declare i32 @llvm.amdgcn.workitem.id.xx()"),)
    return rows


def header(flavor: str) -> str:
    text = _E.lower("ir_core", {"kernel": "casts"}, "gfx1250", flavor).text
    return "\n".join(l for l in text.splitlines() if l.startswith(("target ", "source_filename")))


def _kernel(name, body, decls="", attrs='"amdgpu-flat-work-group-size"="64,64"', params="ptr addrspace(1) %p",
            cap="", globals_=""):
    return (f"{globals_}\n{decls}\n"
            f"define amdgpu_kernel void @{name}({params}) #0 {{\nentry:\n{body}\n  ret void\n}}\n\n"
            f"attributes #0 = {{ {attrs} }}\n")


def _hungry(n):
    lines = ["  %tid = call i32 @llvm.amdgcn.workitem.id.x()", "  %t64 = zext i32 %tid to i64"]
    for i in range(n):
        lines.append(f"  %a{i} = getelementptr float, ptr addrspace(1) %p, i64 {i * 1024}")
        lines.append(f"  %b{i} = getelementptr float, ptr addrspace(1) %a{i}, i64 %t64")
        lines.append(f"  %v{i} = load volatile float, ptr addrspace(1) %b{i}, align 4")
    for i in reversed(range(n)):
        lines.append(f"  %c{i} = getelementptr float, ptr addrspace(1) %q, i64 {i * 1024}")
        lines.append(f"  %d{i} = getelementptr float, ptr addrspace(1) %c{i}, i64 %t64")
        lines.append(f"  store volatile float %v{i}, ptr addrspace(1) %d{i}, align 4")
    return "\n".join(lines)


_TID = "declare i32 @llvm.amdgcn.workitem.id.x()"
_STORE_TID = ("  %t = call i32 @llvm.amdgcn.workitem.id.x()\n"
              "  store i32 %t, ptr addrspace(1) %p, align 4")
_WMMA = ("declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16"
         "(i1, <16 x bfloat>, i1, <16 x bfloat>, i16, <8 x float>, i1, i1)")

CASES = {
    # valid, for contrast
    "good": lambda fl: _kernel("stub_good", _STORE_TID, _TID),
    # a known intrinsic with a wrong signature: verify() fails
    "wrong_signature": lambda fl: _kernel(
        "stub_wrong_signature",
        "  %t = call i32 @llvm.amdgcn.workitem.id.x(i32 0)\n  store i32 %t, ptr addrspace(1) %p, align 4",
        "declare i32 @llvm.amdgcn.workitem.id.x(i32)"),
    # a typo'd intrinsic name: verify() passes, the existence check does not
    "typo_intrinsic": lambda fl: _kernel(
        "stub_typo_intrinsic",
        "  %t = call i32 @llvm.amdgcn.workitem.id.xx()\n  store i32 %t, ptr addrspace(1) %p, align 4",
        "declare i32 @llvm.amdgcn.workitem.id.xx()"),
    # an external function that is not an intrinsic
    "external_call": lambda fl: _kernel(
        "stub_external_call", "  %t = call i32 @helper(i32 1)\n  store i32 %t, ptr addrspace(1) %p, align 4",
        "declare i32 @helper(i32)"),
    # llvm22-only syntax (captures(none)) in llvm20 text: opt-19 rejects it
    "captures_in_llvm20": lambda fl: _kernel(
        "stub_captures", _STORE_TID, _TID, params="ptr addrspace(1) noalias captures(none) %p"),
    # register-hungry kernel under a forced low VGPR limit: spills (LLVM 22.1 honours
    # amdgpu-num-vgpr=64 at workgroup size 256, not at 64)
    "spill": lambda fl: _kernel(
        "stub_spill", _hungry(100), _TID, params="ptr addrspace(1) %p, ptr addrspace(1) %q",
        attrs='"amdgpu-flat-work-group-size"="256,256" "amdgpu-num-vgpr"="64"'),
    # gfx1250 WMMA compiled for gfx942: LLVM aborts ("Cannot select")
    "abort_wmma": lambda fl: _kernel(
        "stub_abort_wmma",
        "  %r = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(i1 0, "
        "<16 x bfloat> zeroinitializer, i1 0, <16 x bfloat> zeroinitializer, i16 0, "
        "<8 x float> zeroinitializer, i1 0, i1 0)\n  store <8 x float> %r, ptr addrspace(1) %p, align 16",  # kernel pointer args are assumed 16-aligned (docs/proof.md)
        _WMMA),
    # ir_core's buffer copy with the gfx11/gfx12 word as make.buffer.rsrc flags
    "gfx12_flags": lambda fl: _E.lower("ir_core", {"kernel": "buffer_copy"}, "gfx1250", fl).text.split(
        "\n\n", 1)[1].replace("i32 2)", "i32 822099968)"),
    # the same WMMA where it exists, to count v_wmma
    "wmma": lambda fl: CASES["abort_wmma"](fl).replace("stub_abort_wmma", "stub_wmma"),
}


def lower(family, spec, arch, flavor):
    if family != "stub":
        raise SpecRejected(f"family '{family}' is not one of stub")
    fl = resolve_flavor(flavor)
    case = spec.get("case")
    if case not in CASES:
        raise SpecRejected(f"no case {case!r}")
    text = header(fl) + "\n" + CASES[case](fl)
    name = text.split("define amdgpu_kernel void @", 1)[1].split("(", 1)[0]
    return Lowered(name, text)

"""Every promise kind of docs/sim.md's table: a kernel that keeps it runs, one
that breaks it is refused with the named error (parity/sim/promises.py).

Each case plants one violation into a small hand-written kernel (``%in``
readonly, ``%out`` writeonly, ``%buf`` read and written, 32 lanes, one wave)
and asserts the error class and the words of its message.
"""
from __future__ import annotations

import numpy as np
import pytest

from parity.sim import Kernel, Poison, SimError, Unsupported
from parity.sim.promises import KINDS, PromiseError, PromiseRefused

P_IN = "ptr addrspace(1) noalias captures(none) readonly %in"
P_OUT = "ptr addrspace(1) noalias captures(none) writeonly %out"
P_BUF = "ptr addrspace(1) noalias captures(none) %buf"
INTRINSICS = ("workitem.id.x", "workitem.id.y", "workitem.id.z", "workgroup.id.x", "workgroup.id.y",
              "workgroup.id.z", "dispatch.ptr", "queue.ptr", "dispatch.id", "implicitarg.ptr", "lds.kernel.id",
              "cluster.id.x", "cluster.id.y", "cluster.id.z")
FWG = '"amdgpu-flat-work-group-size"="32,32" "uniform-work-group-size"="true"'


def kernel(body: str = "", attrs: str = "", md: str = "", params: tuple = (P_IN, P_OUT, P_BUF)) -> str:
    """A one-wave kernel: ``out[tid] = in[tid]`` after ``body`` (which may use %tid, %in, %out, %buf)."""
    decl = "\n".join(f"declare i32 @llvm.amdgcn.{n}()" for n in INTRINSICS)
    return f"""target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [32 x i32] poison, align 4

{decl}
declare void @llvm.amdgcn.s.barrier()

define amdgpu_kernel void @k({", ".join(params)}) #0 {{
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
{body}
  %pin = getelementptr inbounds i32, ptr addrspace(1) %in, i32 %tid
  %v = load i32, ptr addrspace(1) %pin, align 4
  %pout = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %pout, align 4
  ret void
}}

attributes #0 = {{ {FWG}{" " + attrs if attrs else ""} }}
{md}
"""


def run(text: str, block: int = 32, cluster=None, grid=(1, 1, 1), args=None):
    a = {"in": np.arange(32, dtype=np.int32), "out": np.zeros(32, np.int32), "buf": np.zeros(32, np.int32)}
    a.update(args or {})
    return Kernel(text).launch(grid, block, a, cluster=cluster, max_instructions=100_000)


def body(*lines: str) -> str:
    return "\n".join("  " + ln for ln in lines)


def test_the_base_kernel_keeps_every_promise():
    a = {"in": np.arange(32, dtype=np.int32), "out": np.zeros(32, np.int32), "buf": np.zeros(32, np.int32)}
    Kernel(kernel()).launch((1, 1, 1), 32, a)
    assert a["out"].tolist() == list(range(32))


FSRC = body("%f = sitofp i32 %tid to float")
SUB1 = body("%s = sub i32 %tid, 1")
OFF = body("%x = add i32 %tid, 32")
STORE_BUF = "  %pb = getelementptr inbounds i32, ptr addrspace(1) %buf, i32 %tid\n"
SPIN = "  br label %spin\nspin:\n  br label %spin\nafter:"
SCOPES = '!4 = distinct !{!4, !"dom"}\n!6 = distinct !{!6, !4, !"s"}\n!5 = !{!6}'

# kind -> (body, attrs, md, params, launch kwargs, error class, message words)
CASES = {
    "add nuw": (body("%x = add nuw i32 %tid, 4294967295"), "", "", None, {}, Poison, "add nuw overflows"),
    "add nsw": (body("%x = add nsw i32 %tid, 2147483647"), "", "", None, {}, Poison, "add nsw overflows"),
    "sub nuw": (body("%x = sub nuw i32 %tid, 1"), "", "", None, {}, Poison, "sub nuw overflows"),
    "sub nsw": (body("%x = sub nsw i32 -2147483648, %tid"), "", "", None, {}, Poison, "sub nsw overflows"),
    "mul nuw": (body("%x = mul nuw i32 %tid, 2147483648"), "", "", None, {}, Poison, "mul nuw overflows"),
    "mul nsw": (body("%x = mul nsw i32 %tid, 1073741824"), "", "", None, {}, Poison, "mul nsw overflows"),
    "shl nuw": (body("%x = shl nuw i32 %tid, 31"), "", "", None, {}, Poison, "shl nuw: the shift drops a set bit"),
    "shl nsw": (body("%x = shl nsw i32 %tid, 30"), "", "", None, {}, Poison, "shl nsw"),
    "trunc nuw": (body("%w = zext i32 %tid to i64", "%t = add i64 %w, 4294967296", "%x = trunc nuw i64 %t to i32"),
                  "", "", None, {}, Poison, "trunc nuw: the value does not fit i32 unsigned"),
    "trunc nsw": (body("%t = add i32 %tid, 120", "%x = trunc nsw i32 %t to i8"), "", "", None, {}, Poison,
                  "trunc nsw: the value does not fit i8 signed"),
    "udiv exact": (body("%x = udiv exact i32 %tid, 2"), "", "", None, {}, Poison, "udiv exact"),
    "sdiv exact": (body("%x = sdiv exact i32 %tid, 3"), "", "", None, {}, Poison, "sdiv exact"),
    "lshr exact": (body("%x = lshr exact i32 %tid, 1"), "", "", None, {}, Poison, "lshr exact"),
    "ashr exact": (body("%x = ashr exact i32 %tid, 1"), "", "", None, {}, Poison, "ashr exact"),
    "or disjoint": (body("%x = or disjoint i32 %tid, 1"), "", "", None, {}, Poison, "or disjoint"),
    "zext nneg": (SUB1 + "\n" + body("%x = zext nneg i32 %s to i64"), "", "", None, {}, Poison,
                  "zext nneg: the operand is negative in lane 0"),
    "uitofp nneg": (SUB1 + "\n" + body("%x = uitofp nneg i32 %s to float"), "", "", None, {}, Poison,
                    "uitofp nneg"),
    "icmp samesign": (SUB1 + "\n" + body("%x = icmp samesign ult i32 %s, 5"), "", "", None, {}, Poison,
                      "icmp samesign: the operands' signs differ in lane 0"),
    "getelementptr inbounds": (OFF + "\n" + body("%p = getelementptr inbounds i32, ptr addrspace(1) %in, i32 %x"),
                               "", "", None, {}, Poison, "getelementptr inbounds: byte offset 132 in lane 1"),
    "getelementptr nusw": (OFF + "\n" + body("%p = getelementptr nusw i32, ptr addrspace(1) %in, i32 %x"),
                           "", "", None, {}, Poison, "getelementptr nusw: byte offset 132"),
    "getelementptr nuw": (SUB1 + "\n" + body("%p = getelementptr nuw i32, ptr addrspace(1) %in, i32 %s"),
                          "", "", None, {}, Poison, "getelementptr nuw: a negative offset in lane 0"),
    "nnan": (FSRC + "\n" + body("%q = fdiv nnan float %f, 0.0"), "", "", None, {}, Poison,
             "fdiv nnan: an operand or the result is NaN in lane 0"),
    "ninf": (FSRC + "\n" + body("%q = fdiv ninf float %f, 0.0"), "", "", None, {}, Poison,
             "fdiv ninf: an operand or the result is an infinity in lane 1"),
    "amdgpu-flat-work-group-size": ("", "", "", None, {"block": 64}, PromiseError,
                                    "\"amdgpu-flat-work-group-size\"=\"32,32\" but the launch uses 64"),
    "amdgpu-cluster-dims": ("", '"amdgpu-cluster-dims"="1,1,2"', "", None, {"grid": (1, 1, 4), "cluster": (1, 1, 4)},
                            PromiseError, "\"amdgpu-cluster-dims\"=\"1,1,2\" but the launch uses clusters of (1, 1, 4)"),
    "amdgpu-waves-per-eu": ("", '"amdgpu-waves-per-eu"="20,20"', "", None, {}, PromiseError,
                            "\"amdgpu-waves-per-eu\"=\"20,20\" is not within [1, 16]"),
    "uniform-work-group-size": ("", '"uniform-work-group-size"="maybe"', "", None, {}, PromiseRefused,
                                "is neither true nor false"),
    "denormal-fp-math": ("", '"denormal-fp-math"="preserve-sign,preserve-sign"', "", None, {}, PromiseError,
                         "the numerics assume IEEE denormals"),
    "denormal-fp-math-f32": ("", '"denormal-fp-math-f32"="positive-zero,ieee"', "", None, {}, PromiseError,
                             "\"denormal-fp-math-f32\"=\"positive-zero,ieee\""),
    "target-features": ("", '"target-features"="+wavefrontsize64"', "", None, {}, PromiseRefused,
                        "target feature +wavefrontsize64"),
    "target-cpu": ("", '"target-cpu"="gfx942"', "", None, {}, PromiseError, "kernel is run as gfx1250"),
    "nosync": ("  call void @llvm.amdgcn.s.barrier()", "nosync", "", None, {}, PromiseError,
               "nosync promises no synchronisation"),
    "willreturn": (SPIN, "willreturn", "", None, {}, SimError,
                   "instruction limit"),
    "mustprogress": (SPIN, "mustprogress", "", None, {}, SimError,
                     "instruction limit"),
    "readonly": (body("%pi = getelementptr inbounds i32, ptr addrspace(1) %in, i32 %tid",
                      "store i32 1, ptr addrspace(1) %pi, align 4"), "", "", None, {}, PromiseError,
                 "the kernel writes argument %in, which is readonly"),
    "writeonly": (body("%po = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %tid",
                       "%r = load i32, ptr addrspace(1) %po, align 4"), "", "", None, {}, PromiseError,
                  "the kernel reads argument %out, which is writeonly"),
    "readnone": (body("%pb = getelementptr inbounds i32, ptr addrspace(1) %buf, i32 %tid",
                      "%r = load i32, ptr addrspace(1) %pb, align 4"), "", "",
                 (P_IN, P_OUT, "ptr addrspace(1) readnone %buf"), {}, PromiseError,
                 "reads argument %buf, which is readnone"),
    "noalias": ("", "", "", None, {"overlap": True}, PromiseError, "arguments %in and %out overlap in the launch"),
    "nocapture": (body("store ptr addrspace(1) %buf, ptr addrspace(3) @lds, align 8"), "", "",
                  (P_IN, P_OUT, "ptr addrspace(1) nocapture %buf"), {}, Unsupported, "store of ptr"),
    "captures(none)": (body("store ptr addrspace(1) %buf, ptr addrspace(3) @lds, align 8"), "", "", None, {},
                       Unsupported, "store of ptr"),
    "align": ("", "", "", (P_IN, P_OUT, "ptr addrspace(1) align 512 %buf"), {}, PromiseError,
              "%buf promises align 512"),
    "dereferenceable": ("", "", "", (P_IN, P_OUT, "ptr addrspace(1) dereferenceable(256) %buf"), {}, PromiseError,
                        "%buf is dereferenceable(256) but the launch passes 128 bytes"),
    "dereferenceable_or_null": ("", "", "", (P_IN, P_OUT, "ptr addrspace(1) dereferenceable_or_null(256) %buf"),
                                {}, PromiseError, "dereferenceable_or_null(256) but the launch passes 128"),
    "noundef": ("", "", "", (P_IN, P_OUT, "ptr addrspace(1) noundef %buf"), {"args": {"buf": 0}}, SimError,
                "argument buf: expected a C-contiguous numpy array"),
    "nonnull": ("", "", "", (P_IN, P_OUT, "ptr addrspace(1) nonnull %buf"), {"args": {"buf": None}}, SimError,
                "argument buf: expected a C-contiguous numpy array"),
    "inreg": ("", "", "", (P_IN, P_OUT, "ptr addrspace(1) inreg %buf"), {}, PromiseError,
              "%buf is inreg after a parameter that is not"),
    "range": (body("%pr = getelementptr inbounds i32, ptr addrspace(1) %in, i32 %tid",
                   "%r = load i32, ptr addrspace(1) %pr, align 4, !range !2"), "", "!2 = !{i32 0, i32 10}", None,
              {}, Poison, "!range: the loaded value 10 in lane 10"),
    "noundef md": (body("store i32 poison, ptr addrspace(3) @lds, align 4",
                        "%r = load i32, ptr addrspace(3) @lds, align 4, !noundef !3"), "", "!3 = !{}", None, {},
                   PromiseRefused, "a store of poison/undef in a module whose loads promise !noundef"),
    "invariant.load": (body(STORE_BUF.strip(), "%r = load i32, ptr addrspace(1) %pb, align 4, !invariant.load !3",
                            "%r1 = add i32 %r, 1", "store i32 %r1, ptr addrspace(1) %pb, align 4"), "", "!3 = !{}",
                       None, {}, PromiseError, "!invariant.load promises the location is not written"),
    "amdgpu.noclobber": (body(STORE_BUF.strip(), "store i32 7, ptr addrspace(1) %pb, align 4",
                              "%r = load i32, ptr addrspace(1) %pb, align 4, !amdgpu.noclobber !3"), "", "!3 = !{}",
                         None, {}, PromiseError, "!amdgpu.noclobber: byte offset 0 of global 'buf' was written"),
    "alias.scope": (body(STORE_BUF.strip(), "store i32 7, ptr addrspace(1) %pb, align 4, !alias.scope !5",
                         "%r = load i32, ptr addrspace(1) %pb, align 4, !noalias !5"), "", SCOPES, None, {},
                    PromiseError, "!noalias names scope !6, but an access in that scope touched byte offset 0"),
    "noalias md": (body(STORE_BUF.strip(), "%r = load i32, ptr addrspace(1) %pb, align 4, !noalias !5",
                        "store i32 7, ptr addrspace(1) %pb, align 4, !alias.scope !5"), "", SCOPES, None, {},
                   PromiseError, "an access in scope !6 touches byte offset 0"),
    "mmra": (body("%r = load i32, ptr addrspace(3) @lds, align 4, !mmra !1"), "",
             '!1 = !{!"amdgpu-synchronize-as", !"local"}', None, {}, PromiseRefused, "!mmra on an instruction other"),
}
for _f in ("reassoc", "nsz", "arcp", "contract", "afn", "fast"):
    CASES[_f] = (FSRC + "\n" + body(f"%q = fadd {_f} float %f, 1.0"), "", "", None, {}, PromiseRefused,
                 f"fast-math flag {_f} on fadd")
for _k in ("nonnull", "align", "dereferenceable", "dereferenceable_or_null"):
    CASES[f"{_k} md"] = (body(f"%r = load i32, ptr addrspace(1) %buf, align 4, !{_k} !3"), "", "!3 = !{}", None,
                         {}, PromiseRefused, f"!{_k} applies to loads of pointers")
for _a, _calls in [("amdgpu-no-workitem-id-x", "workitem.id.x")] + [
        (f"amdgpu-no-{n}", c) for n, c in (
            ("workitem-id-y", "workitem.id.y"), ("workitem-id-z", "workitem.id.z"),
            ("workgroup-id-x", "workgroup.id.x"), ("workgroup-id-y", "workgroup.id.y"),
            ("workgroup-id-z", "workgroup.id.z"), ("dispatch-ptr", "dispatch.ptr"), ("queue-ptr", "queue.ptr"),
            ("dispatch-id", "dispatch.id"), ("implicitarg-ptr", "implicitarg.ptr"),
            ("hostcall-ptr", "implicitarg.ptr"), ("heap-ptr", "implicitarg.ptr"),
            ("multigrid-sync-arg", "implicitarg.ptr"), ("default-queue", "implicitarg.ptr"),
            ("completion-action", "implicitarg.ptr"), ("lds-kernel-id", "lds.kernel.id"),
            ("cluster-id-x", "cluster.id.x"), ("cluster-id-y", "cluster.id.y"), ("cluster-id-z", "cluster.id.z"))]:
    CASES[_a] = (body(f"%n = call i32 @llvm.amdgcn.{_calls}()"), f'"{_a}"', "", None, {}, PromiseError,
                 f"\"{_a}\" promises the kernel does not read that implicit input, but it calls "
                 f"@llvm.amdgcn.{_calls}")
for _w in ("nounwind", "norecurse", "nofree", "convergent"):   # broken only through a call the subset refuses
    CASES[_w] = ("  call void @other()", _w, "", None, {}, Unsupported, "intrinsic other is not implemented")


def _launch_kw(kw: dict) -> dict:
    kw = dict(kw)
    if kw.pop("overlap", False):
        shared = np.arange(64, dtype=np.int32)
        kw["args"] = {"in": shared[:32], "out": shared[16:48]}
    return kw


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_broken_promise_is_named(kind):
    b, attrs, md, params, kw, err, words = CASES[kind]
    text = kernel(b, attrs, md, params or (P_IN, P_OUT, P_BUF))
    with pytest.raises(err) as e:
        run(text, **_launch_kw(kw))
    assert words in str(e.value), str(e.value)


def test_every_kind_has_a_case():
    names = {k.removesuffix(" md") for k in CASES}
    missing = [k for k in KINDS if k.removeprefix("getelementptr ") not in names and k not in names
               and k.split(" ", 1)[-1] not in names]
    assert missing == []


@pytest.mark.parametrize("text,words", [
    ('"amdgpu-foo"="1"', "function attribute \"amdgpu-foo\"=\"1\" is a promise the oracles do not check"),
    ("memory(none)", "function attribute memory(none) is a promise the oracles do not check"),
    ('"amdgpu-no-agpr"', "\"amdgpu-no-agpr\"=\"\" is a promise the oracles do not check"),
])
def test_an_unknown_function_attribute_is_refused(text, words):
    with pytest.raises(PromiseRefused) as e:
        run(kernel(attrs=text))
    assert words in str(e.value)


def test_unknown_parameter_attribute_and_metadata_are_refused():
    with pytest.raises(PromiseRefused, match="parameter attribute nofree of %buf"):
        run(kernel(params=(P_IN, P_OUT, "ptr addrspace(1) nofree %buf")))
    with pytest.raises(PromiseRefused, match="metadata !tbaa is a promise the oracles do not check"):
        run(kernel(body("%r = load i32, ptr addrspace(3) @lds, align 4, !tbaa !3"), md="!3 = !{}"))


def test_promises_kept_pass():
    """The same kinds, kept: no error, the result is the copy."""
    b = body("%x = add nuw nsw i32 %tid, 1", "%y = shl nuw nsw i32 %x, 2", "%z = lshr exact i32 %y, 2",
             "%o = or disjoint i32 %y, 1", "%c = icmp samesign ult i32 %x, 40", "%e = zext nneg i32 %x to i64",
             "%t = trunc nuw nsw i64 %e to i16", "%f = sitofp i32 %x to float", "%g = fadd nnan ninf float %f, 1.0",
             STORE_BUF.strip(), "%r = load i32, ptr addrspace(1) %pb, align 4, !range !2, !noundef !3")
    text = kernel(b, '"amdgpu-cluster-dims"="1,1,2" "amdgpu-no-workgroup-id-z" "denormal-fp-math"="ieee,ieee"',
                  "!2 = !{i32 0, i32 1}\n!3 = !{}",
                  (P_IN, P_OUT, "ptr addrspace(1) noalias align 16 dereferenceable(128) %buf"))
    a = {"in": np.arange(32, dtype=np.int32), "out": np.zeros(32, np.int32), "buf": np.zeros(32, np.int32)}
    Kernel(text).launch((1, 1, 2), 32, a, cluster=(1, 1, 2))
    assert a["out"].tolist() == list(range(32))

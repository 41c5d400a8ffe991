"""Code objects: compile a project kernel with llvmlite (child process), link
with LLVM 22 ld.lld, check the result is a loadable AMDGPU HSA code object
with the kernel symbol and its .kd descriptor, cache by kernel identity and
flavor. Needs the linker: under CI (env CI set) a missing one fails, here it skips."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import threading

import pytest

from runtime_helpers import GPU_FORMS, linker_or_skip
import python_engine as E
from parity.runtime import CodeObjectCache, CodeObjectError, LinkerMissing, build_kernel, find_linker
from parity.runtime import elf
from parity.runtime.codeobj import compile_object, link_object
from parity.launch.kernarg import check_against_metadata, variant_layout

pytest.importorskip("llvmlite", reason="llvmlite (the [test] extra) compiles the IR")

CLUSTER = {"split_k": 2, "split_k_cluster": 4}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    linker_or_skip()
    return CodeObjectCache(str(tmp_path_factory.mktemp("co")))


def test_linker_is_llvm22():
    L = linker_or_skip()
    assert L.major >= 22, L


@pytest.mark.parametrize("family,spec,flavor,variant", [
    ("conv_implicit_gemm", {}, "llvm22", "plain"),
    ("conv_implicit_gemm", {"split_k": 2, "split_k_cluster": 0, "dtype": "fp16"}, "llvm22", "two_stage"),
    ("conv_implicit_gemm", CLUSTER, "llvm23", "cluster"),
    ("conv_fwd_split_k_reduce", {"vector": 4, "threads": 256, "degree": 0}, "llvm23", "reduce"),
])
def test_link_a_project_kernel(cache, family, spec, flavor, variant):
    co = build_kernel(family, spec, "gfx1250", flavor, cache)
    h = elf.header(co.data)
    assert (h["osabi"], h["type"], h["machine"]) == (elf.ELFOSABI_AMDGPU_HSA, elf.ET_DYN, elf.EM_AMDGPU)
    assert h["flags"] & elf.EF_AMDGPU_MACH == elf.MACH["gfx1250"]
    syms = elf.dynamic_symbols(co.data)
    assert co.kernel in syms and co.kernel + ".kd" in syms
    meta = elf.amdgpu_metadata(co.data)
    assert meta["amdhsa.target"].startswith("amdgcn-amd-amdhsa--gfx1250")
    # the packer's layout is the compiler's layout
    slots, size = variant_layout(variant)
    check_against_metadata(slots, co.metadata, co.kernel)
    assert co.metadata[".kernarg_segment_size"] >= size
    assert co.cluster_dims == ((1, 1, 4) if variant == "cluster" else None)
    if family == "conv_implicit_gemm":
        from python_engine.kernels import conv_implicit_gemm as CIG
        full = dict(dict((f.name, f.default) for f in CIG.FIELDS), **spec)
        assert co.group_segment_bytes == CIG.lds_bytes(full)


def test_llvm_readelf_agrees(cache):
    readelf = shutil.which("llvm-readelf-19") or shutil.which("llvm-readelf")
    if not readelf:
        pytest.skip("no llvm-readelf to cross-check with")
    co = build_kernel("conv_implicit_gemm", CLUSTER, "gfx1250", "llvm23", cache)
    r = subprocess.run([readelf, "-h", "--dyn-syms", "--notes", co.path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "DYN (Shared object file)" in r.stdout and "EM_AMDGPU" in r.stdout and "AMDGPU - HSA" in r.stdout
    assert f" {co.kernel}.kd" in r.stdout and f" {co.kernel}\n" in r.stdout
    assert ".cluster_dims:" in r.stdout and "NT_AMDGPU_METADATA" in r.stdout


def test_cache_by_identity_and_flavor(tmp_path):
    linker_or_skip()
    c = CodeObjectCache(str(tmp_path))
    a = build_kernel("conv_implicit_gemm", {}, "gfx1250", "llvm22", c)
    b = build_kernel("conv_implicit_gemm", {}, "gfx1250", "llvm22", c)
    assert (c.builds, c.hits) == (1, 1) and a.data == b.data and a.path == b.path
    d = build_kernel("conv_implicit_gemm", {}, "gfx1250", "llvm23", c)
    assert c.builds == 2 and d.path != a.path and ".llvm23." in d.path
    lo = E.lower("conv_implicit_gemm", {}, "gfx1250", "llvm22")
    assert os.path.basename(a.path) == f"{lo.kernel}.gfx1250.llvm22.{a.text_sha256}.hsaco"
    # a damaged entry is rebuilt, not loaded
    with open(a.path, "wb") as f:
        f.write(b"garbage")
    e = build_kernel("conv_implicit_gemm", {}, "gfx1250", "llvm22", c)
    assert c.builds == 3 and e.data == a.data
    # a second cache on the same directory (another process) hits
    c2 = CodeObjectCache(str(tmp_path))
    build_kernel("conv_implicit_gemm", {}, "gfx1250", "llvm23", c2)
    assert (c2.builds, c2.hits) == (0, 1)


def test_cache_concurrent_builders_link_once(tmp_path):
    linker_or_skip()
    caches = [CodeObjectCache(str(tmp_path)) for _ in range(3)]
    out = []
    ts = [threading.Thread(target=lambda c=c: out.append(build_kernel("conv_fwd_split_k_reduce", {}, "gfx1250",
                                                                      "llvm22", c))) for c in caches]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(out) == 3 and len({o.data for o in out}) == 1
    assert sum(c.builds for c in caches) == 1


def test_cache_dir_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SPLITK_CODE_OBJECT_CACHE", str(tmp_path / "x"))
    assert str(CodeObjectCache().dir) == str(tmp_path / "x")


def test_compile_errors_are_reported_not_fatal(tmp_path):
    with pytest.raises(CodeObjectError, match="parse"):
        compile_object("this is not IR\n", "gfx1250", str(tmp_path))
    lo = E.lower("conv_implicit_gemm", {}, "gfx1250", "llvm22")
    # an unknown CPU: LLVM warns and may abort; either way a CodeObjectError, never a dead test process
    try:
        compile_object(lo.text, "gfx9999", str(tmp_path))
    except CodeObjectError as exc:
        assert "gfx9999" in str(exc)


def test_link_errors_are_reported(tmp_path):
    L = linker_or_skip()
    with pytest.raises(CodeObjectError, match="link with LLD"):
        link_object(b"not an object", str(tmp_path), L)


def test_missing_linker_message(monkeypatch):
    import parity.runtime.codeobj as C
    monkeypatch.delenv("SPLITK_LLD", raising=False)
    monkeypatch.setattr(C, "_candidates", lambda: iter(()))
    with pytest.raises(LinkerMissing, match=r"no LLVM 22 linker .*apt-get install lld-22"):
        find_linker()
    monkeypatch.setattr(C, "_candidates", lambda: iter([("/bin/sh", "-c", "echo 'LLD 19.1.7'", "--")]))
    with pytest.raises(LinkerMissing, match=r"is LLD 19.1.7 \(gfx1250 code objects need LLD >= 22\)"):
        find_linker()
    monkeypatch.setenv("SPLITK_LLD", "/nonexistent/ld.lld")
    with pytest.raises(LinkerMissing, match="SPLITK_LLD=/nonexistent/ld.lld is not a working ld.lld"):
        find_linker()


def test_invalid_code_objects_are_rejected():
    with pytest.raises(CodeObjectError, match="not an ELF file"):
        elf.check_code_object(b"hello", "k", "gfx1250")
    hdr = bytearray(64)
    hdr[:4] = b"\x7fELF"
    hdr[4], hdr[5], hdr[7] = 2, 1, 0
    struct.pack_into("<HH", hdr, 16, 1, 62)          # ET_REL, x86-64
    struct.pack_into("<HH", hdr, 0x3A, 64, 0)        # no sections
    with pytest.raises(CodeObjectError) as e:
        elf.check_code_object(bytes(hdr), "k", "gfx1250")
    msg = str(e.value)
    for part in ("EI_OSABI 0 is not ELFOSABI_AMDGPU_HSA", "e_type 1 is not ET_DYN", "e_machine 62 is not EM_AMDGPU",
                 "no dynamic symbol k", "no dynamic symbol k.kd"):
        assert part in msg


def test_damaged_metadata_note_is_rejected(cache):
    co = build_kernel("conv_fwd_split_k_reduce", {}, "gfx1250", "llvm22", cache)
    # the note's MessagePack map (LLVM writes its keys sorted: amdhsa.kernels first)
    at = co.data.index(b"\xaeamdhsa.kernels") - 1
    assert co.data[at] & 0xF0 == 0x80
    bad = bytearray(co.data)
    bad[at] = 0xC1                                    # the one type byte MessagePack never uses
    with pytest.raises(CodeObjectError, match="the NT_AMDGPU_METADATA note is not valid MessagePack"):
        elf.check_code_object(bytes(bad), co.kernel, "gfx1250")
    with pytest.raises(CodeObjectError, match=r"e_flags mach 0x049 is not gfx950 \(0x04f\)"):
        elf.check_code_object(co.data, co.kernel, "gfx950")
    with pytest.raises(CodeObjectError, match="metadata has no kernel nope"):
        elf.kernel_metadata(elf.amdgpu_metadata(co.data), "nope")


@pytest.mark.parametrize("form", sorted(GPU_FORMS))
def test_gpu_test_forms_build_here(form, cache):
    """Everything the GPU tests launch is admitted and links without a GPU."""
    from parity.runtime import ConvRun
    for dtype in ("bf16", "fp16"):
        run = ConvRun(dict(GPU_FORMS[form], dtype=dtype), cache=cache)
        assert run.fwd_code.kernel == run.plan.kernel
        assert (run.red_code is not None) == run.plan.needs_stage2
        assert run.fwd_code.cluster_dims == run.plan.cluster

"""Read what the runtime needs from an AMDGPU HSA code object (ELF64) without
any LLVM tool: the header, the dynamic symbols and the ``NT_AMDGPU_METADATA``
note (a MessagePack map, AMDGPUUsage.rst "Code Object V3+ Metadata").

The ELF is read with pyelftools, the note's payload decoded with msgpack
(both in the ``[runtime]`` extra); anything either rejects becomes a
:class:`CodeObjectError`.

:func:`check_code_object` is the validity check every linked object passes:
ELF64 little-endian, ``EI_OSABI`` = ``ELFOSABI_AMDGPU_HSA`` (64), ``e_type`` =
``ET_DYN`` (a shared object, what ``hipModuleLoadData`` loads), ``e_machine`` =
``EM_AMDGPU`` (224), the kernel symbol and its ``<kernel>.kd`` kernel
descriptor in ``.dynsym``, and a metadata entry for the kernel.
"""
from __future__ import annotations

import io

import msgpack
from elftools.common.exceptions import ELFError
from elftools.elf import enums
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection, SymbolTableSection

from parity.launch.errors import CodeObjectError

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
ET_DYN = 3
NT_AMDGPU_METADATA = 32
EF_AMDGPU_MACH = 0xFF
# EF_AMDGPU_MACH values (llvm/BinaryFormat/ELF.h) of the arches this project names.
MACH = {"gfx1250": 0x049, "gfx950": 0x04F, "gfx942": 0x04C, "gfx1100": 0x041, "gfx1201": 0x04E}


def _raw(value, enum) -> int:
    """pyelftools names the enum values it knows (EI_OSABI 64 is ARM's there);
    the checks compare numbers."""
    return value if isinstance(value, int) else enum[value]


def _elf(data: bytes) -> ELFFile:
    try:
        f = ELFFile(io.BytesIO(bytes(data)))
    except ELFError as e:
        what = "not an ELF file" if bytes(data[:4]) != b"\x7fELF" else "unreadable ELF file"
        raise CodeObjectError(f"{what} ({e})") from None
    if f.elfclass != 64 or not f.little_endian:
        raise CodeObjectError("not an ELF64 little-endian file")
    return f


def header(data: bytes) -> dict:
    """ELF header fields, or CodeObjectError if ``data`` is not an ELF64 LE file."""
    return _header(_elf(data))


def _header(f: ELFFile) -> dict:
    h = f.header
    ident = h["e_ident"]
    return {"osabi": _raw(ident["EI_OSABI"], enums.ENUM_EI_OSABI), "abiversion": ident["EI_ABIVERSION"],
            "type": _raw(h["e_type"], enums.ENUM_E_TYPE), "machine": _raw(h["e_machine"], enums.ENUM_E_MACHINE),
            "flags": h["e_flags"]}


def dynamic_symbols(data: bytes) -> list:
    """Names of the ``.dynsym`` symbols."""
    return _dynamic_symbols(_elf(data))


def _dynamic_symbols(f: ELFFile) -> list:
    try:
        return [sym.name for sec in f.iter_sections()
                if isinstance(sec, SymbolTableSection) and sec["sh_type"] == "SHT_DYNSYM"
                for sym in sec.iter_symbols()]
    except ELFError as e:
        raise CodeObjectError(f"unreadable .dynsym ({e})") from None


def amdgpu_metadata(data: bytes) -> dict:
    """The decoded ``NT_AMDGPU_METADATA`` note (``amdhsa.kernels``, ``amdhsa.target``, ...)."""
    return _amdgpu_metadata(_elf(data))


def _amdgpu_metadata(f: ELFFile) -> dict:
    try:
        notes = [n for sec in f.iter_sections() if isinstance(sec, NoteSection)
                 for n in sec.iter_notes()]
    except ELFError as e:
        raise CodeObjectError(f"unreadable note section ({e})") from None
    for n in notes:
        if n["n_name"] == "AMDGPU" and n["n_type"] == NT_AMDGPU_METADATA:
            try:
                meta = msgpack.unpackb(n["n_descdata"], raw=False)
            except (ValueError, msgpack.UnpackException) as e:
                raise CodeObjectError(f"the NT_AMDGPU_METADATA note is not valid MessagePack ({e})") from None
            if not isinstance(meta, dict):
                raise CodeObjectError("the NT_AMDGPU_METADATA note is not a MessagePack map")
            return meta
    raise CodeObjectError("the code object has no NT_AMDGPU_METADATA note")


def kernel_metadata(meta: dict, kernel: str) -> dict:
    for k in meta.get("amdhsa.kernels", []):
        if k.get(".name") == kernel:
            return k
    raise CodeObjectError(f"the code object's metadata has no kernel {kernel}")


def check_code_object(data: bytes, kernel: str, arch: str) -> dict:
    """Validate a linked code object (see the module docstring); return the
    kernel's metadata entry."""
    f = _elf(data)
    h = _header(f)
    problems = []
    if h["osabi"] != ELFOSABI_AMDGPU_HSA:
        problems.append(f"EI_OSABI {h['osabi']} is not ELFOSABI_AMDGPU_HSA (64)")
    if h["type"] != ET_DYN:
        problems.append(f"e_type {h['type']} is not ET_DYN (3): not a shared object")
    if h["machine"] != EM_AMDGPU:
        problems.append(f"e_machine {h['machine']} is not EM_AMDGPU (224)")
    want = MACH.get(arch)
    if want is not None and h["flags"] & EF_AMDGPU_MACH != want:
        problems.append(f"e_flags mach 0x{h['flags'] & EF_AMDGPU_MACH:03x} is not {arch} (0x{want:03x})")
    syms = set(_dynamic_symbols(f))
    for s in (kernel, kernel + ".kd"):
        if s not in syms:
            problems.append(f"no dynamic symbol {s}")
    if problems:
        raise CodeObjectError(f"invalid code object for {kernel}: " + "; ".join(problems))
    return kernel_metadata(_amdgpu_metadata(f), kernel)

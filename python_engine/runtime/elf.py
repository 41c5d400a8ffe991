"""Read what the runtime needs from an AMDGPU HSA code object (ELF64) without
any LLVM tool: the header, the dynamic symbols and the ``NT_AMDGPU_METADATA``
note (a MessagePack map, AMDGPUUsage.rst "Code Object V3+ Metadata").

:func:`check_code_object` is the validity check every linked object passes:
ELF64 little-endian, ``EI_OSABI`` = ``ELFOSABI_AMDGPU_HSA`` (64), ``e_type`` =
``ET_DYN`` (a shared object, what ``hipModuleLoadData`` loads), ``e_machine`` =
``EM_AMDGPU`` (224), the kernel symbol and its ``<kernel>.kd`` kernel
descriptor in ``.dynsym``, and a metadata entry for the kernel.
"""
from __future__ import annotations

import struct

from .errors import CodeObjectError

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
ET_DYN = 3
SHT_NOTE = 7
SHT_DYNSYM = 11
NT_AMDGPU_METADATA = 32
EF_AMDGPU_MACH = 0xFF
# EF_AMDGPU_MACH values (llvm/BinaryFormat/ELF.h) of the arches this project names.
MACH = {"gfx1250": 0x049, "gfx950": 0x04F, "gfx942": 0x04C, "gfx1100": 0x041, "gfx1201": 0x04E}


# ---------------------------------------------------------------- MessagePack

def _unpack(b: bytes, i: int):
    t = b[i]
    i += 1
    if t <= 0x7F:
        return t, i
    if t >= 0xE0:
        return t - 0x100, i
    if 0x80 <= t <= 0x8F:
        return _map(b, i, t & 0x0F)
    if 0x90 <= t <= 0x9F:
        return _arr(b, i, t & 0x0F)
    if 0xA0 <= t <= 0xBF:
        n = t & 0x1F
        return b[i:i + n].decode("utf-8"), i + n
    if t == 0xC0:
        return None, i
    if t in (0xC2, 0xC3):
        return t == 0xC3, i
    fixed = {0xCA: ">f", 0xCB: ">d", 0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q",
             0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}
    if t in fixed:
        fmt = fixed[t]
        return struct.unpack_from(fmt, b, i)[0], i + struct.calcsize(fmt)
    sized = {0xC4: (">B", "bin"), 0xC5: (">H", "bin"), 0xC6: (">I", "bin"),
             0xD9: (">B", "str"), 0xDA: (">H", "str"), 0xDB: (">I", "str"),
             0xDC: (">H", "arr"), 0xDD: (">I", "arr"), 0xDE: (">H", "map"), 0xDF: (">I", "map")}
    if t not in sized:
        raise CodeObjectError(f"metadata note: unsupported MessagePack type 0x{t:02x}")
    fmt, what = sized[t]
    n = struct.unpack_from(fmt, b, i)[0]
    i += struct.calcsize(fmt)
    if what == "bin":
        return bytes(b[i:i + n]), i + n
    if what == "str":
        return b[i:i + n].decode("utf-8"), i + n
    return (_arr if what == "arr" else _map)(b, i, n)


def _arr(b, i, n):
    out = []
    for _ in range(n):
        v, i = _unpack(b, i)
        out.append(v)
    return out, i


def _map(b, i, n):
    out = {}
    for _ in range(n):
        k, i = _unpack(b, i)
        v, i = _unpack(b, i)
        out[k] = v
    return out, i


def msgpack_loads(b: bytes):
    """Decode one MessagePack value (the subset the AMDGPU metadata uses)."""
    v, _ = _unpack(bytes(b), 0)
    return v


# ---------------------------------------------------------------- ELF

def _sections(data: bytes):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for k in range(shnum):
        o = shoff + k * shentsize
        name, typ, _flags, _addr, off, size, link, _info, _align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, o)
        out.append({"type": typ, "offset": off, "size": size, "link": link, "entsize": entsize})
    return out


def header(data: bytes) -> dict:
    """ELF header fields, or CodeObjectError if ``data`` is not an ELF64 LE file."""
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise CodeObjectError("not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise CodeObjectError("not an ELF64 little-endian file")
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    e_flags, = struct.unpack_from("<I", data, 48)
    return {"osabi": data[7], "abiversion": data[8], "type": e_type, "machine": e_machine,
            "flags": e_flags}


def dynamic_symbols(data: bytes) -> list:
    """Names of the ``.dynsym`` symbols."""
    secs = _sections(data)
    names = []
    for s in secs:
        if s["type"] != SHT_DYNSYM:
            continue
        strtab = secs[s["link"]]
        stro = strtab["offset"]
        for k in range(s["size"] // (s["entsize"] or 24)):
            st_name, = struct.unpack_from("<I", data, s["offset"] + k * 24)
            end = data.index(b"\0", stro + st_name)
            names.append(data[stro + st_name:end].decode("utf-8", "replace"))
    return names


def amdgpu_metadata(data: bytes) -> dict:
    """The decoded ``NT_AMDGPU_METADATA`` note (``amdhsa.kernels``, ``amdhsa.target``, ...)."""
    for s in _sections(data):
        if s["type"] != SHT_NOTE:
            continue
        o, end = s["offset"], s["offset"] + s["size"]
        while o + 12 <= end:
            namesz, descsz, typ = struct.unpack_from("<III", data, o)
            o += 12
            name = data[o:o + namesz].rstrip(b"\0")
            o += (namesz + 3) & ~3
            desc = data[o:o + descsz]
            o += (descsz + 3) & ~3
            if name == b"AMDGPU" and typ == NT_AMDGPU_METADATA:
                return msgpack_loads(desc)
    raise CodeObjectError("the code object has no NT_AMDGPU_METADATA note")


def kernel_metadata(meta: dict, kernel: str) -> dict:
    for k in meta.get("amdhsa.kernels", []):
        if k.get(".name") == kernel:
            return k
    raise CodeObjectError(f"the code object's metadata has no kernel {kernel}")


def check_code_object(data: bytes, kernel: str, arch: str) -> dict:
    """Validate a linked code object (see the module docstring); return the
    kernel's metadata entry."""
    h = header(data)
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
    syms = set(dynamic_symbols(data))
    for s in (kernel, kernel + ".kd"):
        if s not in syms:
            problems.append(f"no dynamic symbol {s}")
    if problems:
        raise CodeObjectError(f"invalid code object for {kernel}: " + "; ".join(problems))
    return kernel_metadata(amdgpu_metadata(data), kernel)

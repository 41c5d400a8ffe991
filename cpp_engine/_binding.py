"""The engine API (docs/engine_api.md) of the C++ engine, over the C API.

What happens where (the order of python_engine/api.py ``_prepare``):
family name (here), spec shape, unknown fields and field kinds in field order
(here, by the front description both Python-side readers share: the rules,
order and reasons of :mod:`spec_front`), then flavor, arch and the family
rules (in C++). Values are read as their exact built-in type first
(an int, float or str subclass never formats itself); a float field takes a
float or an int of magnitude at most 2**53 and goes to C as a double. A spec string longer
than ``CPE_MAX_STRING_BYTES`` bytes of UTF-8, or that is not printable text (a
control character such as NUL or newline, U+2028/U+2029, a lone surrogate),
is refused here in field order, with the Python engine's text; the C++ engine
checks the same for C callers. Strings go to C as UTF-8 bytes kept alive for
the call; a spec field's ``None`` goes as NULL (JSON null). An arch or flavor
``None`` goes as the text ``None``: the Python engine reads None so ("arch
'None' is not one of ..."), while the C API names a C caller's NULL as NULL
("arch NULL is not one of ..."). An arch or flavor string longer than the
limit goes as ``CPE_MAX_STRING_BYTES + 1`` bytes (C++ refuses it by its
length, never encoding the whole); one C cannot carry (a NUL or a lone
surrogate) goes as a one-byte control character, which C++ rejects with the
same "must be printable UTF-8 text" reason; a non-str arch or flavor is
rejected here in the engine's order (flavor first). A failing call runs
once: a reason longer than the first buffer is fetched whole with
``cpe_last_reason``.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import spec_front

from ._ffi import ffi, lib, libpath

ENGINE = "cpp"


class SpecRejected(Exception):
    """A spec, arch or flavor this engine will not lower; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class EngineError(RuntimeError):
    """The C++ engine reported an internal error (CPE_INTERNAL_ERROR)."""


@dataclass(frozen=True)
class Lowered:
    """Result of :func:`lower`: the kernel (symbol) name and the IR module text."""

    kernel: str
    text: str


_REASON_LEN = 1024


# -- C strings -------------------------------------------------------------------

class _Args:
    """Converts Python values to C strings for one call and keeps the buffers
    alive until the call returns."""

    def __init__(self):
        self.keep = []

    def cstr(self, value):
        """``None`` -> NULL; a str -> its UTF-8 bytes; ``MAX_STRING_BYTES + 1``
        bytes for a longer one (C++ refuses it by its length first, as the
        Python engine does); ``"\\x01"`` when C cannot carry it (a NUL, a lone
        surrogate): C++ rejects both with the not-printable reason. Callers
        pass str or None only."""
        if value is None:
            return ffi.NULL
        value = str.__str__(value)
        if spec_front.too_long(value):
            raw = b"x" * (MAX_STRING_BYTES + 1)
        else:
            try:
                raw = value.encode("utf-8")
            except UnicodeEncodeError:
                raw = b"\x01"
        if b"\0" in raw:
            raw = b"\x01"
        buf = ffi.new("char[]", raw)
        self.keep.append(buf)
        return buf


#: The longest string the C API takes, in bytes (``CPE_MAX_STRING_BYTES`` of cpp_engine.h;
#: the front description's :data:`spec_front.MAX_STRING_BYTES`, checked equal at import).
MAX_STRING_BYTES = int(lib.CPE_MAX_STRING_BYTES)
if MAX_STRING_BYTES != spec_front.MAX_STRING_BYTES:
    raise ImportError(f"cpp_engine: CPE_MAX_STRING_BYTES {MAX_STRING_BYTES} differs from spec_front's "
                      f"{spec_front.MAX_STRING_BYTES}: rebuild the C++ engine (bash scripts/bootstrap.sh)")


_TLS = threading.local()


def _reason_buffer():
    """The calling thread's reason buffer (_REASON_LEN bytes), made once per
    thread: the engine writes it only on failure, and it is read before the
    thread's next call."""
    try:
        return _TLS.reason
    except AttributeError:
        _TLS.reason = ffi.new("char[]", _REASON_LEN)
        return _TLS.reason


def _call(fn, args: _Args):
    """Run ``fn(reason_buf, reason_len) -> status`` once; raise SpecRejected /
    EngineError on failure, with the whole reason (``cpe_last_reason`` gives
    one that did not fit the first buffer)."""
    buf = _reason_buffer()
    status = fn(buf, _REASON_LEN)
    if status != _CPE_OK:
        _fail(status, buf)


_CPE_OK = int(lib.CPE_OK)


def _fail(status, buf):
    """Raise SpecRejected / EngineError for a failed call's ``status``, with the
    whole reason (``buf`` holds its first _REASON_LEN bytes; ``cpe_last_reason``
    gives one that did not fit)."""
    need = lib.cpe_last_reason(ffi.NULL, 0)
    if need > _REASON_LEN:
        buf = ffi.new("char[]", need)
        lib.cpe_last_reason(buf, need)
    text = ffi.string(buf).decode("utf-8", "replace")
    if status == lib.CPE_REJECTED:
        raise SpecRejected(text)
    raise EngineError(text or f"cpp_engine internal error (status {int(status)})")


def _take(p) -> str:
    """Decode and free a malloc'd C string."""
    try:
        return ffi.string(p).decode("utf-8")
    finally:
        lib.cpe_free(p)


# -- families ----------------------------------------------------------------------

@dataclass(frozen=True)
class _Family:
    """One family's C entry points: ``fields`` are ``(name, kind)`` in spec order
    (kind ``int``, ``str``, ``bool`` or ``float``), ``ctype`` the spec struct."""

    name: str
    fields: tuple
    ctype: str
    default: object
    validate: object
    lower: object

    def defaults(self) -> tuple:
        d = self.default()
        out = []
        for fname, kind in self.fields:
            v = getattr(d, fname)
            if kind == "str":
                v = None if v == ffi.NULL else ffi.string(v).decode("utf-8")
            elif kind == "bool":
                v = bool(v)
            elif kind == "float":
                v = float(v)
            else:
                v = int(v)
            out.append((fname, v))
        return tuple(out)


def _struct_fields(ctype: str) -> tuple:
    """``(name, kind)`` of every member of the C spec struct ``ctype``, in
    declaration order (= spec order): ``char *`` members are ``str``, ``bool``
    members ``bool``, ``double`` members ``float``, integers ``int``. Read from
    the installed headers through cffi, so the binding never repeats a field list."""
    out = []
    for fname, f in ffi.typeof(ctype).fields:
        t = f.type
        if t.kind == "pointer":
            kind = "str"
        elif t.cname in ("_Bool", "bool"):
            kind = "bool"
        elif t.cname == "double":
            kind = "float"
        elif t.kind == "primitive" and t.cname in ("int64_t", "int32_t", "long", "long long", "int"):
            kind = "int"
        else:
            raise TypeError(f"{ctype}.{fname}: C type {t.cname} is not a spec field kind "
                            "(char *, bool, int64_t, double)")
        out.append((fname, kind))
    return tuple(out)


def _row(name: str, prefix: str) -> _Family:
    """The family ``name`` whose C API is ``<prefix>_spec`` with
    ``<prefix>_spec_default``, ``<prefix>_validate`` and ``<prefix>_lower``."""
    ctype = prefix + "_spec"
    return _Family(name, _struct_fields(ctype), ctype, getattr(lib, prefix + "_spec_default"),
                   getattr(lib, prefix + "_validate"), getattr(lib, prefix + "_lower"))


def registry() -> tuple:
    """``(name, prefix, fields text)`` of every family of the C++ engine's
    registry (include/cpp_engine/families.def), in its family order, read
    through ``cpe_family_count`` / ``cpe_family_name`` / ``cpe_family_prefix``
    / ``cpe_family_fields`` (fields text: ``name:kind,...``, kind i, s, b or f)."""
    return tuple((ffi.string(lib.cpe_family_name(i)).decode(), ffi.string(lib.cpe_family_prefix(i)).decode(),
                  ffi.string(lib.cpe_family_fields(i)).decode()) for i in range(lib.cpe_family_count()))


# The engine's family order (that of python_engine's FAMILIES, tests/test_family_registry.py).
_FAMILY_LIST = tuple(_row(name, prefix) for name, prefix, _ in registry())
FAMILIES = tuple(f.name for f in _FAMILY_LIST)
_BY_FAMILY = {f.name: f for f in _FAMILY_LIST}
_DEFAULTS = {f.name: f.defaults() for f in _FAMILY_LIST}


def _family(name) -> _Family:
    fam = _BY_FAMILY.get(str.__str__(name)) if isinstance(name, str) else None
    if fam is None:
        # the front description's reason (spec_front), as the Python engine gives it
        raise SpecRejected(spec_front.unknown_name_reason("family", name, ", ".join(FAMILIES),
                                                          "family must be a string"))
    return fam


#: Per family: ``(name, kind, default)`` of every field in spec order, and the kinds by name.
_ROWS = {f.name: tuple((n, k, d) for (n, k), (_, d) in zip(f.fields, _DEFAULTS[f.name])) for f in _FAMILY_LIST}
_KINDS = {f.name: dict(f.fields) for f in _FAMILY_LIST}
#: Per family, its split-K fields a spec gives together or not at all (spec_front.group_fields).
_GROUPS = {f.name: spec_front.group_fields(_KINDS[f.name]) for f in _FAMILY_LIST}


def _unknown_field(fam: _Family, spec: dict) -> None:
    """SpecRejected for the first key of ``spec`` that is not a field of ``fam``."""
    kinds = _KINDS[fam.name]
    for k in spec:
        if k not in kinds:
            raise SpecRejected(spec_front.unknown_field_reason(fam.name, k))


#: Per family, the C-side kind code of every field in spec order (the plan of _c_spec's fast path).
_INT, _STR, _BOOL, _FLOAT = range(4)
_PLANS = {name: tuple((n, {"int": _INT, "str": _STR, "bool": _BOOL, "float": _FLOAT}[k], d) for n, k, d in rows)
          for name, rows in _ROWS.items()}
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_F53 = 1 << 53


def _plain_text(value: str) -> bool:
    """True for printable ASCII of at most MAX_STRING_BYTES characters: a str every
    string rule accepts (spec_front.string_reason gives None), told in C-level calls."""
    return len(value) <= MAX_STRING_BYTES and value.isascii() and value.isprintable()


#: C strings (``char[]`` cdata) of valid spec, arch and flavor strings, by value: one
#: buffer per distinct string for the whole process (bounded; an entry dropped when
#: full stays alive in every conversion that holds it).
_CSTRS: dict = {}
_CSTRS_MAX = 4096


def _cstr_of(value: str):
    """The shared C string of a str (exact type) that _plain_text accepts."""
    buf = _CSTRS.get(value)
    if buf is None:
        if len(_CSTRS) >= _CSTRS_MAX:
            _CSTRS.clear()
        buf = _CSTRS[value] = ffi.new("char[]", value.encode("ascii"))
    return buf


def _c_spec(fam: _Family, spec, args: _Args):
    """The C spec struct of ``spec`` in one pass over the fields: unknown
    fields first, then a partial group of split-K fields
    (:func:`spec_front.group_reason`), then each field in spec order is read, checked (the first
    failing field's reason, as SpecRejected) and written into the struct;
    strings are kept alive by ``args``. A value of the exact built-in type
    that every rule accepts (an int in the 64-bit range, printable ASCII
    within the length limit, a bool, a float) is written at once; anything
    else goes through the front description's rules (:func:`spec_front.exact`,
    :func:`spec_front.type_reason`), the Python engine's reasons in its order."""
    if not isinstance(spec, dict):
        raise SpecRejected(f"spec for family '{fam.name}' must be a mapping of field names to values")
    if len(spec) and not spec.keys() <= _KINDS[fam.name].keys():
        _unknown_field(fam, spec)
    group = _GROUPS[fam.name]
    if group and len(spec):
        r = spec_front.group_reason(group, spec)
        if r:
            raise SpecRejected(r)
    get = spec.get
    keep = args.keep
    vals = []
    put = vals.append
    for name, kind, default in _PLANS[fam.name]:
        v = get(name, default)
        t = type(v)
        if kind == _INT:
            if t is int and _I64_MIN <= v <= _I64_MAX:
                put(v)
                continue
        elif kind == _STR:
            if v is None:
                put(ffi.NULL)
                continue
            if t is str and _plain_text(v):
                buf = _cstr_of(v)
                keep.append(buf)
                put(buf)
                continue
        elif kind == _BOOL:
            if t is bool:
                put(v)
                continue
        elif t is float or (t is int and -_F53 <= v <= _F53):
            put(float(v))
            continue
        put(_slow_field(name, kind, v, args))
    return ffi.new(_PTR_TYPES[fam.name], vals)


_KIND_NAMES = ("int", "str", "bool", "float")
#: Per family, the cffi type of a pointer to its C spec struct.
_PTR_TYPES = {f.name: ffi.typeof(f.ctype + " *") for f in _FAMILY_LIST}


def _slow_field(name: str, kind: int, value, args: _Args):
    """One field whose value is not of the fast path's types, checked and
    converted: SpecRejected with the Python engine's reason, else the value as
    C takes it (a C string kept alive by ``args``)."""
    v = spec_front.exact(value)
    r = spec_front.type_reason(name, _KIND_NAMES[kind], v)
    if r:
        raise SpecRejected(r)
    if kind == _STR:
        return args.cstr(v)
    if kind == _BOOL:
        return bool(v)
    if kind == _FLOAT:
        return float(v) if type(v) is int else float.__float__(v)
    return int(v)


#: Converted specs, by _spec_key: (family row, C spec struct, args keeping its strings
#: alive). The C API only reads the struct (``const``), so one conversion serves every
#: later call with the same family and spec, at any arch and flavor. Bounded: emptied
#: when full.
_SPECS: dict = {}
_SPECS_MAX = 4096
_KEY_TYPES = frozenset((int, str, bool, type(None)))
_STR_TYPE = frozenset((str,))


def _spec_key(family, spec):
    """A key that tells apart every (family, spec) the conversion could treat
    differently (each value with its exact type: True is not 1), or None for
    an input not cached (not a dict, a key that is not exactly a str, a value
    of another type, e.g. a float, where -0.0 == 0.0)."""
    if type(spec) is not dict or type(family) is not str:
        return None
    types = tuple(map(type, spec.values()))
    if not _KEY_TYPES.issuperset(types) or not _STR_TYPE.issuperset(map(type, spec)):
        return None
    return family, *spec, *spec.values(), *types  # flat; its length, 1 + 3 x fields, tells the parts apart


def _name_arg(args: _Args, value, what: str):
    """The C string of an arch or flavor (None as the text ``None``, as the
    Python engine reads it); SpecRejected (the Python engine's text,
    targets/*.py ``unknown_*_reason``) for a value that is neither str nor None."""
    if type(value) is str and _plain_text(value):
        return _cstr_of(value)
    if value is None:
        return _cstr_of("None")  # the Python engine's reading of None (a C NULL reads as NULL)
    if not isinstance(value, str):
        raise SpecRejected(f"{what} must be a string or None")
    return args.cstr(value)


def _prepare(family, spec, arch, flavor):
    """(family, C spec struct, C arch, C flavor, args) after the binding's
    checks, in the engine's order (family, spec, flavor, arch); a repeated
    (family, spec) (the same spec values of the same types) reuses its first
    conversion (_SPECS) whatever the arch and flavor."""
    key = _spec_key(family, spec)
    hit = _SPECS.get(key) if key is not None else None
    if hit is None:
        fam = _family(family)
        args = _Args()
        cs = _c_spec(fam, spec, args)
        if key is not None:
            if len(_SPECS) >= _SPECS_MAX:
                _SPECS.clear()
            _SPECS[key] = (fam, cs, args)
    else:
        fam, cs, args = hit
    # an arch and flavor seen before: their shared C strings (_CSTRS holds valid text only)
    fl = _CSTRS.get(flavor) if type(flavor) is str else None
    ar = _CSTRS.get(arch) if type(arch) is str else None
    if fl is None or ar is None:
        names = _Args()
        fl = _name_arg(names, flavor, "flavor")  # the engine checks flavor before arch
        if arch is not None and not isinstance(arch, str):
            resolve_flavor(flavor)              # an unknown flavor is reported first
        ar = _name_arg(names, arch, "arch")
        args = (args, names)
    return fam, cs, ar, fl, args


# -- the engine API ------------------------------------------------------------------

def spec_fields(family: str) -> tuple:
    """``(name, default)`` of every spec field of ``family`` in spec order."""
    return _DEFAULTS[_family(family).name]


def validate(family: str, spec: dict, arch: str, flavor: str) -> str | None:
    """The first failing rule's reason for (spec, arch, flavor), or None."""
    try:
        fam, cs, ar, fl, args = _prepare(family, spec, arch, flavor)
        _call(lambda buf, n: fam.validate(cs, ar, fl, buf, n), args)
    except SpecRejected as e:
        return e.reason
    return None


_OUTPUT = ffi.typeof("cpe_output *")


def lower(family: str, spec: dict, arch: str, flavor: str) -> Lowered:
    """Emit the LLVM IR module of ``family``/``spec`` for ``arch`` at ``flavor``.

    Raises SpecRejected(reason) for a spec, arch or flavor that is not accepted,
    EngineError for an internal error of the C++ engine."""
    fam, cs, ar, fl, args = _prepare(family, spec, arch, flavor)
    out = ffi.new(_OUTPUT)
    buf = _reason_buffer()
    try:
        status = fam.lower(cs, ar, fl, out, buf, _REASON_LEN)
        if status != _CPE_OK:
            _fail(status, buf)
        return Lowered(ffi.string(out.kernel).decode("utf-8"), ffi.string(out.text).decode("utf-8"))
    finally:
        lib.cpe_output_free(out)


def lower_origins(family: str, spec: dict, arch: str, flavor: str) -> tuple:
    """:func:`lower` with origin recording on (the divergence locator,
    docs/gate.md): ``(Lowered, origins)`` where ``Lowered`` holds the same bytes
    as :func:`lower` and ``origins`` is a tuple of str, one per line of its text
    (``text.split("\\n")`` without the empty piece after the final newline):
    ``"cpp_engine/src/<path>.cpp:<line>"`` of the builder call that made that
    line's block label or instruction, ``""`` for a line no builder call made;
    ``()`` for a text family. Through ``cpe_origins_record`` /
    ``cpe_origins_take`` (cpp_engine.h). Raises like :func:`lower`."""
    lib.cpe_origins_record(1)
    try:
        low = lower(family, spec, arch, flavor)
        out = ffi.new("char **")
        _call(lambda buf, n: lib.cpe_origins_take(out, buf, n), _Args())
        table = () if out[0] == ffi.NULL else tuple(_take(out[0]).split("\n")[:-1])
    finally:
        lib.cpe_origins_record(0)
    return low, table


def kernel_name(family: str, spec: dict, arch: str, flavor: str) -> str:
    """The kernel symbol name; raises SpecRejected like :func:`lower`."""
    return lower(family, spec, arch, flavor).kernel


#: The one reason :func:`load_vector` gives (the same text as python_engine/api.py).
CPG_REASON = "cpg must be an integer in 1 .. 2**63-1 (channels per group)"


def load_vector(cpg: int) -> int:
    """The A/B load width in elements for ``cpg`` channels per group
    (``cpe_conv_load_vector``; the rule of python_engine/api.py ``load_vector``).
    Raises SpecRejected for a ``cpg`` that is not an integer in 1 .. 2**63-1."""
    if isinstance(cpg, bool) or not isinstance(cpg, int):
        raise SpecRejected(CPG_REASON)
    cpg = int.__int__(cpg)
    if not 1 <= cpg < (1 << 63):
        raise SpecRejected(CPG_REASON)
    return int(lib.cpe_conv_load_vector(cpg))


def resolve_flavor(name: str) -> str:
    """Canonical flavor of ``name`` (``llvm24`` -> ``llvm23``); SpecRejected if unknown."""
    args = _Args()
    fl = _name_arg(args, name, "flavor")
    canon = ffi.new("char[]", 64)
    _call(lambda buf, n: lib.cpe_resolve_flavor(fl, canon, 64, buf, n), args)
    return ffi.string(canon).decode("utf-8")


def _bool01(s: str) -> bool:
    return s == "1"


def flavor_table() -> tuple:
    """Every flavor row (aliases included) as a dict, in table order."""
    p = lib.cpe_flavor_table_text()
    if p == ffi.NULL:
        raise EngineError("cpe_flavor_table_text failed")
    rows = []
    for line in _take(p).splitlines():
        name, canonical, dl, cap, bits, clusters = line.split("\t")
        rows.append({"name": name, "canonical": canonical, "datalayout": dl, "capture_attr": cap,
                     "rsrc_num_records_bits": int(bits), "clusters": _bool01(clusters)})
    return tuple(rows)


def arch_table() -> tuple:
    """Every arch row as a dict, in table order."""
    p = lib.cpe_arch_table_text()
    if p == ffi.NULL:
        raise EngineError("cpe_arch_table_text failed")
    rows = []
    for line in _take(p).splitlines():
        name, wave, lds, matrix, wmma, clusters, cus, rsrc_flags, layout, word3, fields, roof = line.split("\t")
        shapes = []
        for s in filter(None, wmma.split(";")):
            m, n, k, dtype = s.split(",")
            shapes.append([int(m), int(n), int(k), dtype])
        rows.append({"name": name, "wave_size": int(wave), "lds_bytes": int(lds), "matrix": matrix,
                     "wmma": shapes, "clusters": _bool01(clusters), "cus": int(cus),
                     "rsrc_flags": int(rsrc_flags), "rsrc_layout": layout, "rsrc_word3": int(word3),
                     "rsrc_fields": [[f, int(lo), int(w)] for f, lo, w in
                                     (x.split(",") for x in filter(None, fields.split(";")))],
                     "roofline": [[n, int(v)] for n, v in (x.split(",") for x in filter(None, roof.split(";")))]})
    return tuple(rows)


def intrinsic_table(flavor: str) -> tuple:
    """``(key, declaration)`` of every intrinsic row for ``flavor``, in table order."""
    args = _Args()
    fl = _name_arg(args, flavor, "flavor")
    out = ffi.new("char **")
    _call(lambda buf, n: lib.cpe_intrinsic_table_text(fl, out, buf, n), args)
    return tuple(tuple(line.split("\t", 1)) for line in _take(out[0]).splitlines())


def aot_jobs_text(flavor: str) -> tuple:
    """``(count_jobs, jobs text)`` of the C++ engine's AOT job grid at ``flavor``
    (one ``family\thash\tlabel\tspec`` line per job; docs/policy.md)."""
    args = _Args()
    fl = _name_arg(args, flavor, "flavor")
    out = ffi.new("char **")
    count = ffi.new("int64_t *")
    _call(lambda buf, n: lib.cpe_aot_jobs_text(fl, out, count, buf, n), args)
    return int(count[0]), _take(out[0])


def version() -> str:
    """The C++ engine's version string (cpe_version)."""
    return ffi.string(lib.cpe_version()).decode("ascii")


def source_digest() -> str:
    """sha256 (64 hex digits) of the C++ sources the loaded library was built
    from (cpe_source_digest; parity/base/stale.py compares it with the sources on disk)."""
    return ffi.string(lib.cpe_source_digest()).decode("ascii")


def library_path() -> str:
    """Absolute path of the loaded libcpp_engine shared library."""
    return libpath.LIBRARY


def cmake_prefix() -> str:
    """The directory to put on CMAKE_PREFIX_PATH for ``find_package(cpp_engine CONFIG)``."""
    return libpath.PREFIX

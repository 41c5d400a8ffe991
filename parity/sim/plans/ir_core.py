"""The numerics plan of ir_core (parity/sim/plans/__init__.py): every
accepted config's kernel on its own small case, exact bytes against numpy."""
from __future__ import annotations

import struct

import numpy as np

from parity.sim import reference as ref
from parity.sim.cases import Buf, Case, Launch
from parity.sim.errors import SimError
from python_engine.facts import IR_CORE_FLOAT_VALUES as FLOAT_VALUES, IR_CORE_INT_VALUES as INT_VALUES
from python_engine.facts import IR_CORE_SUBNORMAL as SUBNORMAL


def _exact(name: str, want: np.ndarray):
    def check(bufs):
        got = bufs[name]
        g = got.reshape(-1).view(np.uint8)
        w = np.ascontiguousarray(want).reshape(-1).view(np.uint8)
        if g.size != w.size:
            return [f"{name}: {g.size} bytes, want {w.size}"]
        bad = np.flatnonzero(g != w)
        if bad.size == 0:
            return []
        return [f"{name}: byte {int(bad[0])} is {int(g[bad[0]]):#04x}, want {int(w[bad[0]]):#04x} "
                f"({bad.size} bytes differ)"]
    return check


def ir_core_cases(spec: dict, arch: str) -> list:
    """The numerics cases of one ir_core config: one case builder per ``kernel``
    (:data:`_KIND_CASES`); SimError for a kernel kind without one."""
    kind = spec["kernel"]
    kern = {"k": ("ir_core", spec, arch)}
    fn = _KIND_CASES.get("constants_float" if kind in _FLOAT_CONSTANTS else kind)
    if fn is None:
        raise SimError(f"ir_core kernel {kind!r} has no numerics plan")
    out = fn(spec, kern, spec["threads"], spec["cluster"] or 1, np.random.default_rng(7))
    if spec["cluster"]:   # the launcher's cluster is the config's, not read back from the kernel's
        for case in out:  # attribute: a kernel whose amdgpu-cluster-dims says otherwise is refused
            for la in case.launches:   # (parity/sim/promises.py check_launch)
                la.cluster = (1, 1, spec["cluster"])
    return out


_FLOAT_CONSTANTS = ("constants_f32", "constants_f16", "constants_bf16")


def _constants_float(spec: dict, kern: dict, t: int, cz: int, rng) -> list:
    """The float constants kernels: every FLOAT_VALUES entry and the type's subnormal, stored bit for bit (NaN canonical)."""
    tname = {"constants_f32": "float", "constants_f16": "half", "constants_bf16": "bfloat"}[spec["kernel"]]
    vals = np.array(FLOAT_VALUES + (SUBNORMAL[tname],), np.float64)
    if tname == "float":
        want = vals.astype(np.float32).view(np.uint32)
        want = np.where(np.isnan(vals), np.uint32(0x7FC00000), want)
    elif tname == "half":
        want = ref.round_to_format(vals, 10, -14, 15).astype(np.float16).view(np.uint16)
        want = np.where(np.isnan(vals), np.uint16(0x7E00), want)
    else:
        r = ref.round_to_format(vals, 7, -126, 127).astype(np.float32)
        want = np.where(np.isnan(vals), np.uint16(0x7FC0), (r.view(np.uint32) >> np.uint32(16)).astype(np.uint16))
    out = np.zeros_like(want)
    return [Case("values", kern, {"out": out}, [Launch("k", (1, 1, cz), t, {"out": Buf("out")})],
                 _exact("out", want))]


def _constants_int(spec: dict, kern: dict, t: int, cz: int, rng) -> list:
    """constants_int: every INT_VALUES entry and the double 0.1, byte for byte."""
    blob = b"".join(int(v).to_bytes(ty.bits // 8, "little", signed=True) for ty, v in INT_VALUES)
    blob += struct.pack("<d", 0.1)
    want = np.frombuffer(blob, np.uint8).copy()
    return [Case("values", kern, {"out": np.zeros_like(want)},
                 [Launch("k", (1, 1, cz), t, {"out": Buf("out")})], _exact("out", want))]


def _buffer_copy(spec: dict, kern: dict, t: int, cz: int, rng) -> list:
    """buffer_copy: n_bytes whole, half plus one vector, and 0 bytes copied; the rest untouched."""
    cases = []
    for nb in (16 * t, 16 * (t // 2) + 16, 0):
        src = rng.standard_normal(4 * t).astype(np.float32)
        dst = np.full(4 * t, -7.0, np.float32)
        want = dst.copy()
        want[: nb // 4] = src[: nb // 4]
        cases.append(Case(f"n_bytes{nb}", kern, {"in": src, "out": dst},
                          [Launch("k", (1, 1, cz), t, {"in": Buf("in"), "out": Buf("out"), "n_bytes": nb})],
                          _exact("out", want)))
    return cases


def _lds_barrier(spec: dict, kern: dict, t: int, cz: int, rng) -> list:
    """lds_barrier: the workgroup's values reversed through LDS across a barrier."""
    src = rng.standard_normal(t).astype(np.float32)
    return [Case("reverse", kern, {"in": src, "out": np.zeros(t, np.float32)},
                 [Launch("k", (1, 1, cz), t, {"in": Buf("in"), "out": Buf("out")})], _exact("out", src[::-1]))]


def _loop_phi(spec: dict, kern: dict, t: int, cz: int, rng) -> list:
    """loop_phi: n = 0, 1, 5 rows summed in order (the loop-carried phi); and 3 rows with
    IEEE specials (``specials``): a quiet NaN in lane 0, +inf in lane 1 and -inf in lane 2
    (never both infinities in one lane), so a ``nnan`` / ``ninf`` promised on the sum is
    poison on data the kernel admits (LangRef fast-math flags)."""
    cases = []
    for n in (0, 1, 5, "specials"):
        src = rng.standard_normal(max(n if isinstance(n, int) else 3, 1) * t).astype(np.float32)
        if n == "specials":
            src[t + 0], src[1], src[2 * t + 2] = np.float32("nan"), np.float32("inf"), np.float32("-inf")
            n = 3
        acc = np.zeros(t, np.float32)
        for i in range(n):
            acc = (acc + src[i * t:(i + 1) * t]).astype(np.float32)
        name = "specials" if not np.isfinite(src).all() else f"n{n}"
        cases.append(Case(name, kern, {"in": src, "out": np.full(t, 9.0, np.float32)},
                          [Launch("k", (1, 1, cz), t, {"in": Buf("in"), "out": Buf("out"), "n": n})],
                          _exact("out", acc)))
    return cases


def _vector_ops(spec: dict, kern: dict, t: int, cz: int, rng) -> list:
    """vector_ops: insert/shuffle/extract, scaled, cast to half, then widened."""
    v = rng.standard_normal((t, 4)).astype(np.float32)
    v[0] = [1.0, 2.0, 65520.0, -3.0]
    w = v.copy()
    w[:, 0] = v[:, 2]
    r = w[:, ::-1]
    k = np.array([1.0, 0.5, -0.0, 0.1], np.float32)
    h = (r * k).astype(np.float32)
    hb = ref.round_to_format(h.astype(np.float64), 10, -14, 15).astype(np.float16)
    want = hb[:, [0, 1, 0, 1, 2, 3, 2, 3]]
    return [Case("ops", kern, {"in": v, "out": np.zeros((t, 8), np.float16)},
                 [Launch("k", (1, 1, cz), t, {"in": Buf("in"), "out": Buf("out")})], _exact("out", want))]


def _casts(spec: dict, kern: dict, t: int, cz: int, rng) -> list:
    """casts: fp32 -> half and bfloat (RNE), abs, fptosi, bit ops, sitofp."""
    x = (rng.standard_normal(t) * 1000).astype(np.float32)
    x[:6] = [1 + 2 ** -8, -(1 + 3 * 2 ** -11), 0.0, -0.0, 65519.0, 1e-6]
    h = ref.round_to_format(x.astype(np.float64), 10, -14, 15).astype(np.float32)
    bf = ref.round_to_format(x.astype(np.float64), 7, -126, 127).astype(np.float32)
    d = (h + bf).astype(np.float32)
    a = np.where(d < 0, -d, d).astype(np.float32)
    q = np.trunc(a.astype(np.float64)).astype(np.int32)
    z = (a.view(np.uint32) >> np.uint32(16)) & np.uint32(0xFFFF)
    mix = (z.view(np.int32) ^ q).astype(np.int32)
    want = mix.astype(np.float32)
    return [Case("casts", kern, {"in": x, "out": np.zeros(t, np.float32)},
                 [Launch("k", (1, 1, cz), t, {"in": Buf("in"), "out": Buf("out")})], _exact("out", want))]


def _float_field(spec: dict, kern: dict, t: int, cz: int, rng) -> list:
    """float_field: the spec's float value stored as float32 at byte 0 and float64 at byte 8."""
    # value as float32 (numpy's RNE cast; overflow to inf) at byte 0, as
    # float64 at byte 8; bytes 4..7 untouched.
    x = float(spec["value"])
    with np.errstate(over="ignore"):
        f32 = np.array([x], np.float32)
    want = np.full(16, 0xA5, np.uint8)
    want[0:4] = f32.view(np.uint8)
    want[8:16] = np.array([x], np.float64).view(np.uint8)
    return [Case("value", kern, {"out": np.full(16, 0xA5, np.uint8)},
                 [Launch("k", (1, 1, cz), t, {"out": Buf("out")})], _exact("out", want))]


def _workgroup_ids(spec: dict, kern: dict, t: int, cz: int, rng) -> list:
    """workgroup_ids: wave 0 of each workgroup stores its linear id (a cluster along z)."""
    # Wave 0 of each workgroup stores its linear id (z*ny + y)*nx + x.
    nx, ny, nz = (3, 2, 2) if not spec["cluster"] else (2, 1, spec["cluster"])
    want = np.arange(nx * ny * nz, dtype=np.int32)
    return [Case(f"grid{nx}x{ny}x{nz}", kern, {"out": np.full(want.size, -1, np.int32)},
                 [Launch("k", (nx, ny, nz), t, {"out": Buf("out"), "nx": nx, "ny": ny})], _exact("out", want))]


#: ir_core kernel kind -> its case builder (the float constants kernels share one).
_KIND_CASES = {"constants_float": _constants_float, "constants_int": _constants_int, "buffer_copy": _buffer_copy,
               "lds_barrier": _lds_barrier, "loop_phi": _loop_phi, "vector_ops": _vector_ops, "casts": _casts,
               "float_field": _float_field, "workgroup_ids": _workgroup_ids}


TOLERANCE = "exact bytes against numpy"


def cases(spec: dict, arch: str, lowerer) -> list:
    """The plan's entry point (parity/sim/plans/__init__.py): :func:`ir_core_cases`."""
    return ir_core_cases(spec, arch)

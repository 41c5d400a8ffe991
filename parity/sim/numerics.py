"""``parity numerics``: every accepted config of every family with a numerics
plan, run through the emulator on small problems and compared with numpy.

A *plan* (one per family, :data:`PLANS`) turns a config's spec into cases. A
:class:`Case` lists the kernels it needs (family, spec), its buffers, its
launches in order (Stage 1 then Stage 2, ...) and a check of the final
buffers against a numpy reference, with the tolerance stated by the plan.
Every launch runs in forward and reverse wave order (the emulator compares
the two byte for byte). A config the emulator cannot run is a failure.

Plans today: ``conv_fwd_split_k_reduce`` (bit-exact against a sequential fp32
sum and an independent RNE cast), ``ir_core`` (exact). ``conv_implicit_gemm``
has its plan here too (:func:`conv_cases`); it is picked up automatically
once the family is registered and has parity configs.
"""
from __future__ import annotations

import math
import struct
import time
from dataclasses import dataclass, field

import numpy as np

from parity import reference as ref
from parity.sim.core import Kernel, SimError

FLAVOR = "llvm23"


@dataclass
class Buf:
    """A kernel argument that names a case buffer."""

    name: str


@dataclass
class Launch:
    kernel: str          # key into Case.kernels
    grid: tuple
    block: int
    args: dict           # param -> Buf | int | float


@dataclass
class Case:
    name: str
    kernels: dict        # key -> (family, spec, arch)
    buffers: dict        # name -> np.ndarray
    launches: list
    check: object        # callable(buffers) -> list[str] of problems
    expect_error: object = None  # a SimError subclass the emulator must raise instead (and where)
    expect_where: str = ""


@dataclass
class Outcome:
    family: str
    config: str
    ok: bool
    cases: int = 0
    launches: int = 0
    instructions: int = 0
    seconds: float = 0.0
    problems: list = field(default_factory=list)
    expected_errors: int = 0


# -- conv_fwd_split_k_reduce ------------------------------------------------------------------

#: (M, K): 1 element; M*K not a multiple of 2/4/8; a multiple of every vector but of
#: no threads*vector; several workgroups with a partial last wave.
REDUCE_PROBLEMS = ((1, 1), (7, 9), (16, 20), (33, 70))
REDUCE_KS_DEGREE0 = (1, 2, 5)
#: values whose conversion is an edge: ties (bf16 and fp16), overflow to inf,
#: subnormals, signed zero, inf, NaN
REDUCE_SPECIALS = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520.0, 65519.0,
                            -65520.0, 3.3961776e38, 1e-40, -1e-40, 2 ** -25, 3 * 2 ** -26, -0.0, np.inf,
                            -np.inf, np.nan], dtype=np.float32)
REDUCE_TOLERANCE = ("bit-exact: D == RNE(sequential fp32 sum over slabs from slab 0), "
                    "NaN compared as NaN")


def reduce_cases(spec: dict, arch: str) -> list:
    dt, v, t, deg = spec["dtype"], spec["vector"], spec["threads"], spec["degree"]
    out = []
    rng = np.random.default_rng(1234 + v * 7 + t + deg)
    kss = REDUCE_KS_DEGREE0 if deg == 0 else (deg,)
    for (M, K) in REDUCE_PROBLEMS:
        for ks in kss:
            mk = M * K
            scale = rng.choice([1.0, 300.0, 1e-3], size=(ks, mk)).astype(np.float32)
            ws = (rng.standard_normal((ks, mk)).astype(np.float32) * scale).astype(np.float32)
            ns = min(mk, REDUCE_SPECIALS.size)
            ws[0, :ns] = REDUCE_SPECIALS[:ns]
            ws[1:, :ns] = 0.0
            d = np.full(mk, 0xDEAD, np.uint16)
            grid = (math.ceil(mk / (t * v)), 1, 1)
            want = ref.ref_cast_bits(ref.split_k_sum(ws.reshape(ks, M, K)).ravel(), dt)

            def check(bufs, want=want, dt=dt):
                got = bufs["d"]
                okm = ref.same_bits_16(got, want, dt)
                if okm.all():
                    return []
                k = int(np.argmin(okm))
                return [f"D[{k}] = {int(got[k]):#06x}, want {int(want[k]):#06x} "
                        f"({int((~okm).sum())} of {okm.size} elements differ)"]
            out.append(Case(
                f"M{M}_K{K}_ks{ks}", {"reduce": ("conv_fwd_split_k_reduce", spec, arch)},
                {"ws": ws, "d": d},
                [Launch("reduce", grid, t, {"ws_ptr": Buf("ws"), "ws_bytes": ws.nbytes, "d_ptr": Buf("d"),
                                            "d_bytes": d.nbytes, "M": M, "K": K, "ks_count": ks})],
                check))
    return out


# -- ir_core ------------------------------------------------------------------------------

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
    from python_engine.kernels.ir_core import FLOAT_VALUES, INT_VALUES, SUBNORMAL
    kind, t, cl = spec["kernel"], spec["threads"], spec["cluster"]
    kern = {"k": ("ir_core", spec, arch)}
    cz = cl or 1
    rng = np.random.default_rng(7)
    if kind.startswith("constants_") and kind != "constants_int":
        tname = {"constants_f32": "float", "constants_f16": "half", "constants_bf16": "bfloat"}[kind]
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
    if kind == "constants_int":
        blob = b"".join(int(v).to_bytes(ty.bits // 8, "little", signed=True) for ty, v in INT_VALUES)
        blob += struct.pack("<d", 0.1)
        want = np.frombuffer(blob, np.uint8).copy()
        return [Case("values", kern, {"out": np.zeros_like(want)},
                     [Launch("k", (1, 1, cz), t, {"out": Buf("out")})], _exact("out", want))]
    if kind == "buffer_copy":
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
    if kind == "lds_barrier":
        src = rng.standard_normal(t).astype(np.float32)
        return [Case("reverse", kern, {"in": src, "out": np.zeros(t, np.float32)},
                     [Launch("k", (1, 1, cz), t, {"in": Buf("in"), "out": Buf("out")})], _exact("out", src[::-1]))]
    if kind == "loop_phi":
        cases = []
        for n in (0, 1, 5):
            src = rng.standard_normal(max(n, 1) * t).astype(np.float32)
            acc = np.zeros(t, np.float32)
            for i in range(n):
                acc = (acc + src[i * t:(i + 1) * t]).astype(np.float32)
            cases.append(Case(f"n{n}", kern, {"in": src, "out": np.full(t, 9.0, np.float32)},
                              [Launch("k", (1, 1, cz), t, {"in": Buf("in"), "out": Buf("out"), "n": n})],
                              _exact("out", acc)))
        return cases
    if kind == "vector_ops":
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
    if kind == "casts":
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
    if kind == "workgroup_ids":
        # Wave 0 of each workgroup stores its linear id (z*ny + y)*nx + x.
        nx, ny, nz = (3, 2, 2) if not cl else (2, 1, cl)
        want = np.arange(nx * ny * nz, dtype=np.int32)
        return [Case(f"grid{nx}x{ny}x{nz}", kern, {"out": np.full(want.size, -1, np.int32)},
                     [Launch("k", (nx, ny, nz), t, {"out": Buf("out"), "nx": nx, "ny": ny})], _exact("out", want))]
    raise SimError(f"ir_core kernel {kind!r} has no numerics plan")


# -- conv_implicit_gemm (plugs in when the family is registered) --------------------------

#: (name, N, C, H, W, K, Y, X, stride, pad, dil, groups): partial M and N tiles, a
#: reduction not a multiple of tile_k, padding, stride, dilation, groups, 1x1.
CONV_PROBLEMS = (
    ("pad_stride", 1, 8, 9, 7, 24, 3, 3, (2, 1), (1, 1), (1, 1), 1),
    ("dil_groups", 2, 16, 6, 6, 16, 3, 2, (1, 1), (2, 1), (2, 1), 2),
    ("one_by_one", 1, 40, 5, 5, 20, 1, 1, (1, 1), (0, 0), (1, 1), 1),
)
CONV_TOLERANCE = ("|D - ref| <= 2*u_out*|ref| + (Kgemm+2)*2^-24*sum|a*b| + tiny, ref in float64 from the "
                  "rounded inputs (u_out = 2^-8 bf16, 2^-11 fp16); parity.reference.conv_tolerance")


def conv_cases(spec: dict, arch: str, reduce_spec_for=None) -> list:
    """Cases of one conv_implicit_gemm spec (plain, two-stage + reduce, cluster)."""
    from python_engine.kernels import conv_implicit_gemm as C
    dt = spec.get("dtype", "bf16")
    full = {f.name: spec.get(f.name, f.default) for f in C.FIELDS}
    tm, tn, tk = full["tile_m"], full["tile_n"], full["tile_k"]
    T = C.threads(full)
    spk, skc = full["split_k"], full["split_k_cluster"]
    rng = np.random.default_rng(99)
    out = []
    for (pname, N, Cc, H, W, K, Y, X, st, pd, dl, G) in CONV_PROBLEMS:
        cpg, kpg = Cc // G, K // G
        if cpg % full["vector_a"] or cpg % full["vector_b"]:
            continue  # admission: the plan picks problems the config admits (see below)
        Ho = ref.conv_out_size(H, Y, st[0], pd[0], dl[0])
        Wo = ref.conv_out_size(W, X, st[1], pd[1], dl[1])
        M = N * Ho * Wo
        kg = Y * X * cpg
        xs = ref.round_bf16(rng.standard_normal((N, H, W, Cc))) if dt == "bf16" else \
            rng.standard_normal((N, H, W, Cc)).astype(np.float16).astype(np.float32)
        ws_ = ref.round_bf16(rng.standard_normal((K, Y, X, cpg))) if dt == "bf16" else \
            rng.standard_normal((K, Y, X, cpg)).astype(np.float16).astype(np.float32)
        bias = rng.standard_normal(K).astype(np.float32)
        kw = dict(groups=G, stride=st, padding=pd, dilation=dl)
        r64 = ref.conv_fwd(xs, ws_, **kw)
        asum = ref.conv_abs_fwd(xs, ws_, **kw)
        acc = full["acc_epilogue"]
        scale, lo, hi = 0.75, -0.5, 0.5
        e = r64 + bias if acc == "bias" else r64 * scale if acc == "scale" else \
            np.maximum(r64, 0) if acc == "relu" else np.clip(r64, lo, hi) if acc == "clamp" else r64
        tol = ref.conv_tolerance(dt, kg, asum * (scale if acc == "scale" else 1.0), e)

        def enc(a):
            a = np.asarray(a, np.float32)
            return ref.cast_bits(a, dt)
        xb, wb = enc(xs), enc(ws_)
        d = np.full(M * K, 0x7FC0 if dt == "bf16" else 0x7E00, np.uint16)
        prob = dict(N=N, C=Cc, H=H, W=W, K=K, Y=Y, X=X, stride_h=st[0], stride_w=st[1], pad_h=pd[0], pad_w=pd[1],
                    dil_h=dl[0], dil_w=dl[1], groups=G, Ho=Ho, Wo=Wo, M=M, kpg=kpg, cpg=cpg, Kgemm=kg)
        args = {"x_ptr": Buf("x"), "x_bytes": xb.nbytes, "w_ptr": Buf("w"), "w_bytes": wb.nbytes,
                "d_ptr": Buf("d"), "d_bytes": d.nbytes, "bias_ptr": Buf("bias"), "scale": scale,
                "clamp_lo": lo, "clamp_hi": hi, **prob}
        bufs = {"x": xb, "w": wb, "d": d, "bias": bias}
        kern = {"conv": ("conv_implicit_gemm", spec, arch)}
        launches = []
        if spk > 1:
            ks_count = skc if skc else spk
            ks = max(tk, math.ceil(math.ceil(kg / ks_count) / tk) * tk)
            if skc:
                ks = math.ceil(math.ceil(kg / skc) / tk) * tk
            ws = np.full(ks_count * M * K, np.nan, np.float32)
            bufs["ws"] = ws
            args.update(ws_ptr=Buf("ws"), ws_bytes=ws.nbytes, ks=ks, ks_count=ks_count)
        grid = (math.ceil(M / tm), math.ceil(kpg / tn), G * (ks_count if spk > 1 else 1))
        launches.append(Launch("conv", grid, T, args))
        if spk > 1 and not skc:
            rspec = {"dtype": dt, "vector": 4, "threads": 256, "degree": 0}
            kern["reduce"] = ("conv_fwd_split_k_reduce", rspec, arch)
            launches.append(Launch("reduce", (math.ceil(M * K / 1024), 1, 1), 256,
                                   {"ws_ptr": Buf("ws"), "ws_bytes": ws.nbytes, "d_ptr": Buf("d"),
                                    "d_bytes": d.nbytes, "M": M, "K": K, "ks_count": ks_count}))

        def check(b, e=e, tol=tol, dt=dt):
            bits = b["d"]
            got = (bits.astype(np.uint32) << np.uint32(16)).view(np.float32) if dt == "bf16" else bits.view(np.float16)
            got = got.astype(np.float64).reshape(e.shape)
            err = np.abs(got - e)
            bad = ~(err <= tol)
            if not bad.any():
                return []
            k = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), e.shape))
            return [f"D{list(k)} (n, ho, wo, k) = {float(got[k])!r}, want {float(e[k])!r} +- {float(tol[k]):.3g} ({int(bad.sum())} of {bad.size} "
                    f"outside the tolerance)"]
        out.append(Case(pname, kern, bufs, launches, check))
    if not out:
        raise SimError("no conv problem in CONV_PROBLEMS is admissible for this config")
    return out


PLANS = {
    "conv_fwd_split_k_reduce": (reduce_cases, REDUCE_TOLERANCE),
    "ir_core": (ir_core_cases, "exact bytes against numpy"),
    "conv_implicit_gemm": (conv_cases, CONV_TOLERANCE),
}


# -- running ----------------------------------------------------------------------------------

class _Lowerer:
    def __init__(self, engine: str = "python"):
        import importlib
        self.E = importlib.import_module("python_engine" if engine == "python" else "cpp_engine")
        self.kernels: dict = {}

    def kernel(self, family, spec, arch, flavor=FLAVOR) -> Kernel:
        key = (family, repr(sorted(spec.items())), arch, flavor)
        k = self.kernels.get(key)
        if k is None:
            text = self.E.lower(family, spec, arch, flavor).text
            k = self.kernels[key] = Kernel(text)
        return k


def run_case(case: Case, lowerer, orders=("forward", "reverse")) -> tuple:
    bufs = {k: v.copy() for k, v in case.buffers.items()}
    n = 0
    for la in case.launches:
        fam, spec, arch = case.kernels[la.kernel]
        k = lowerer.kernel(fam, spec, arch)
        args = {p: (bufs[v.name] if isinstance(v, Buf) else v) for p, v in la.args.items()}
        st = k.launch(la.grid, la.block, args, orders=orders)
        n += st.instructions
    return case.check(bufs), n


def run_config(family: str, cfg_name: str, spec: dict, arch: str, lowerer=None) -> Outcome:
    lowerer = lowerer or _Lowerer()
    o = Outcome(family, cfg_name, True)
    t0 = time.perf_counter()
    try:
        cases = PLANS[family][0](_with_defaults(family, spec), arch)
        for case in cases:
            try:
                probs, n = run_case(case, lowerer)
                if case.expect_error is not None:
                    probs = [f"expected {case.expect_error.__name__} at `{case.expect_where}`, the kernel ran"]
            except SimError as e:
                n = 0
                if case.expect_error is not None and isinstance(e, case.expect_error) \
                        and case.expect_where in str(e):
                    probs = []
                    o.expected_errors += 1
                else:
                    probs = [f"{type(e).__name__}: {e}"]
            o.cases += 1
            o.launches += len(case.launches)
            o.instructions += n
            o.problems += [f"{case.name}: {p}" for p in probs]
    except Exception as e:  # lowering failed, plan failed, emulator bug: a failure, not a skip
        o.problems.append(f"{type(e).__name__}: {e}")
    o.ok = not o.problems
    o.seconds = time.perf_counter() - t0
    return o


def _with_defaults(family: str, spec: dict) -> dict:
    """``spec`` with the engine's defaults for missing fields (the kernels are
    lowered from the config's own spec; the plan needs every field)."""
    import python_engine.api as api
    try:
        fields = api.spec_fields(family)
    except Exception:
        return dict(spec)
    return {**{n: d for n, d in fields}, **spec}


def accepted_configs(only=None, flavor: str = FLAVOR) -> list:
    """(family, config name, spec, arch) of every config expected to lower at
    ``flavor`` in every family that has a numerics plan."""
    from parity.config import load_families
    out = []
    for fam in load_families():
        if fam.name not in PLANS or (only and fam.name not in only):
            continue
        for c in fam.configs:
            if c.applies(flavor) and c.expectation(flavor).kind == "ok":
                out.append((fam.name, c.name, dict(c.spec), c.arch))
    return out


def _worker(item):
    fam, name, spec, arch = item
    return run_config(fam, name, spec, arch, _worker_lowerer())


_LOWERER = None


def _worker_lowerer():
    global _LOWERER
    if _LOWERER is None:
        _LOWERER = _Lowerer()
    return _LOWERER


def run_all(only=None, jobs: int = 1, progress=None) -> list:
    items = accepted_configs(only)
    if jobs <= 1:
        out = []
        for it in items:
            out.append(_worker(it))
            if progress:
                progress(out[-1])
        return out
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    out = []
    with ctx.Pool(jobs) as pool:
        for r in pool.imap(_worker, items, chunksize=4):
            out.append(r)
            if progress:
                progress(r)
    return out


# -- CLI ------------------------------------------------------------------------------------

def add_numerics_command(sub) -> None:
    p = sub.add_parser("numerics", help="run every accepted config through the CPU emulator against numpy")
    p.add_argument("--only", metavar="F[,F...]", help="only these families")
    p.add_argument("-j", "--jobs", type=int, default=0, help="worker processes (default: CPU count)")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per config")
    p.set_defaults(func=cmd_numerics)


def cmd_numerics(args) -> int:
    import os
    only = [s for s in args.only.split(",") if s] if args.only else None
    if only:
        unknown = [f for f in only if f not in PLANS]
        if unknown:
            print(f"parity numerics: no numerics plan for {', '.join(unknown)} (plans: {', '.join(PLANS)})")
            return 2
    jobs = args.jobs or os.cpu_count() or 1
    t0 = time.perf_counter()

    def prog(o):
        if args.verbose or not o.ok:
            print(f"{'PASS' if o.ok else 'FAIL'} {o.family}/{o.config}: {o.cases} cases, {o.launches} launches "
                  f"x 2 orders, {o.instructions} wave-instructions, {o.seconds:.2f}s", flush=True)
        for p in o.problems:
            print(f"    {p}", flush=True)
    res = run_all(only, jobs, prog)
    wall = time.perf_counter() - t0
    fams = sorted({o.family for o in res} | set(only or []))
    green = bool(res)
    for f in fams:
        rs = [o for o in res if o.family == f]
        bad = [o for o in rs if not o.ok]
        xe = sum(o.expected_errors for o in rs)
        print(f"{f}: {len(rs) - len(bad)}/{len(rs)} configs pass, {sum(o.cases for o in rs)} cases"
              + (f" ({xe} expected to be rejected by the emulator)" if xe else "")
              + f", {sum(o.launches for o in rs)} launches x 2 wave orders; tolerance: {PLANS[f][1]}")
        green = green and not bad and bool(rs)
    for f in PLANS:
        if f not in fams and not only:
            print(f"{f}: no accepted configs (family not registered yet)")
    instr = sum(o.instructions for o in res)
    print(f"{instr} wave-instructions in {wall:.1f}s wall ({jobs} jobs)")
    print(f"RESULT: {'GREEN' if green else 'RED'}")
    return 0 if green else 1

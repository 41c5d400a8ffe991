// Twin of python_engine/kernels/ir_core.py. Every builder call is a statement
// of its own (no builder call nested in another call's arguments), so the SSA
// counter runs in source order.
#include "kernels/ir_core.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "ir/builder.h"
#include "ir/constants.h"
#include "ir/values.h"
#include "kernels/common.h"

namespace cpe::kernels::ir_core {

using namespace cpe::ir;

const char *const kFamily = "ir_core";

const std::vector<spec::Field> &fields() {
    static const std::vector<spec::Field> f{
        {"kernel", spec::FieldKind::Str},
        {"threads", spec::FieldKind::Int},
        {"cluster", spec::FieldKind::Int},
        {"value", spec::FieldKind::Float},
    };
    return f;
}

const std::vector<std::string> &kernels() {
    static const std::vector<std::string> k{
        "constants_f32", "constants_f16", "constants_bf16", "constants_int", "buffer_copy",
        "lds_barrier",   "loop_phi",      "vector_ops",     "casts",         "workgroup_ids",
    };
    return k;
}

const std::vector<std::string> &unlisted_kernels() {
    static const std::vector<std::string> k{"float_field"};
    return k;
}

namespace {

// The special values every floating constant kind is printed for, then the
// type's subnormal (float 1e-40, half 3e-6, bfloat 1e-40).
std::vector<double> float_values(const Type *t) {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> v{0.0, -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(), 0.1, 1.0, -2.5};
    v.push_back(t == half() ? 3e-6 : 1e-40);
    return v;
}

std::string join(const std::vector<std::string> &xs, const char *sep) {
    std::string s;
    for (size_t i = 0; i < xs.size(); ++i) s += (i ? sep : "") + xs[i];
    return s;
}

// -- bodies ----------------------------------------------------------------------

void store_constants(IRBuilder &b, const Type *t, const std::vector<Value> &values) {
    const Value out = b.fn().param("out");
    for (size_t i = 0; i < values.size(); ++i) {
        const Value p = b.gep(t, out, {ci64(static_cast<int64_t>(i))}, "p");
        b.store(values[i], p, std::max<int64_t>(1, t->bits() / 8));
    }
}

void constants_float(IRBuilder &b, const Type *t) {
    std::vector<Value> vals;
    for (double x : float_values(t)) vals.push_back(const_float(t, x));
    store_constants(b, t, vals);
    b.ret_void();
}

void constants_int(IRBuilder &b, const IrCoreSpec &) {
    const std::pair<const Type *, int64_t> int_values[] = {
        {i8(), -128},
        {i8(), 127},
        {i16(), -32768},
        {i32(), -2147483648LL},
        {i32(), 2147483647LL},
        {i64(), std::numeric_limits<int64_t>::max()},
        {i64(), std::numeric_limits<int64_t>::min()},
        {i64(), 1099511627776LL},
    };
    const Value out = b.fn().param("out");
    int64_t off = 0;
    for (const auto &tv : int_values) {
        const Value p = b.gep(i8(), out, {ci64(off)}, "p");
        b.store(const_int(tv.first, tv.second), p, 1);
        off += tv.first->bits() / 8;
    }
    const Value p = b.gep(i8(), out, {ci64(off)}, "p");
    b.store(const_float(double_(), 0.1), p, 1);
    b.ret_void();
}

// `value` as a float (rounded like every float constant) at byte 0 and as a
// double at byte 8 of `out`.
void float_field(IRBuilder &b, const IrCoreSpec &spec) {
    const Value out = b.fn().param("out");
    const Value p0 = b.gep(i8(), out, {ci64(0)}, "p");
    b.store(const_float(float_(), spec.value), p0, 4);
    const Value p8 = b.gep(i8(), out, {ci64(8)}, "p");
    b.store(const_float(double_(), spec.value), p8, 8);
    b.ret_void();
}

Value tid(IRBuilder &b) { return b.call("workitem_id_x", {}, "tid"); }

void buffer_copy(IRBuilder &b, const IrCoreSpec &) {
    const bool wide = b.module().flavor().rsrc_num_records_bits == 64;
    Value nbytes = b.fn().param("n_bytes");
    if (wide) nbytes = b.cast("zext", nbytes, i64(), "nrec");
    const Value zero16 = const_int(i16(), 0);
    const int64_t flags = b.module().arch().rsrc_flags;  // raw buffer word 3 (arch table)
    const Value src = b.call("make_buffer_rsrc", {b.fn().param("in"), zero16, nbytes, ci32(flags)}, "src");
    const Value dst = b.call("make_buffer_rsrc", {b.fn().param("out"), zero16, nbytes, ci32(flags)}, "dst");
    const Value t = tid(b);
    const Value off = b.mul(t, ci32(16), "off", {"nuw", "nsw"});
    const Value v = b.call("raw_buffer_load_v4f32", {src, off, ci32(0), ci32(0)}, "v");
    b.call_void("raw_buffer_store_v4f32", {v, dst, off, ci32(0), ci32(0)});
    b.ret_void();
}

void lds_barrier(IRBuilder &b, const IrCoreSpec &spec) {
    const int64_t n = spec.threads;
    const Value lds = b.module().add_lds("lds_buf", array(n, float_()), 16);
    const Value t = tid(b);
    const Value t64 = b.cast("zext", t, i64(), "tidw");
    const Value pin = b.gep(float_(), b.fn().param("in"), {t64}, "pin");
    const Value x = b.load(float_(), pin, 4, "x");
    const Value pl = b.gep(float_(), lds, {t}, "pl");
    b.store(x, pl, 4);
    b.fence("workgroup", "release");
    b.call_void("s_barrier", {});
    b.fence("workgroup", "acquire");
    const Value rev = b.sub(ci32(n - 1), t, "rev", {"nuw", "nsw"});
    const Value pr = b.gep(float_(), lds, {rev}, "pr");
    const Value y = b.load(float_(), pr, 4, "y");
    const Value pout = b.gep(float_(), b.fn().param("out"), {t64}, "pout");
    b.store(y, pout, 4);
    b.ret_void();
}

void loop_phi(IRBuilder &b, const IrCoreSpec &spec) {
    Block &entry = *b.block();
    const Value t = tid(b);
    const Value n = b.fn().param("n");
    const Value has = b.icmp("sgt", n, ci32(0), "has");
    Block &loop = b.new_block("loop");
    Block &done = b.new_block("done");
    b.cond_br(has, loop, done);
    b.position(loop);
    Phi &i = b.phi(i32(), "i");
    Phi &acc = b.phi(float_(), "acc");
    const Value row = b.mul(i.result(), ci32(spec.threads), "row", {"nuw", "nsw"});
    const Value idx = b.add(row, t, "idx", {"nuw", "nsw"});
    const Value idxw = b.cast("zext", idx, i64(), "idxw");
    const Value p = b.gep(float_(), b.fn().param("in"), {idxw}, "p");
    const Value x = b.load(float_(), p, 4, "x");
    const Value acc2 = b.fadd(acc.result(), x, "acc");
    const Value i2 = b.add(i.result(), ci32(1), "inext", {"nuw", "nsw"});
    const Value more = b.icmp("slt", i2, n, "more");
    b.cond_br(more, loop, done);
    i.add_incoming(ci32(0), entry);
    i.add_incoming(i2, loop);
    const Value fzero = const_float(float_(), 0.0);
    acc.add_incoming(fzero, entry);
    acc.add_incoming(acc2, loop);
    b.position(done);
    Phi &s = b.phi(float_(), "sum");
    s.add_incoming(fzero, entry);
    s.add_incoming(acc2, loop);
    const Value t64 = b.cast("zext", t, i64(), "tidw");
    const Value po = b.gep(float_(), b.fn().param("out"), {t64}, "po");
    b.store(s.result(), po, 4);
    b.ret_void();
}

void vector_ops(IRBuilder &b, const IrCoreSpec &) {
    const Type *v4 = vec(4, float_());
    const Value t = tid(b);
    const Value t64 = b.cast("zext", t, i64(), "tidw");
    const Value pin = b.gep(v4, b.fn().param("in"), {t64}, "pin");
    const Value v = b.load(v4, pin, 16, "v");
    const Value e2 = b.extractelement(v, ci32(2), "e");
    const Value w = b.insertelement(v, e2, ci32(0), "w");
    const Value r = b.shufflevector(w, poison(v4), {3, 2, 1, 0}, "rev");
    std::vector<Value> lanes;
    for (double x : {1.0, 0.5, -0.0, 0.1}) lanes.push_back(const_float(float_(), x));
    const Value k = const_vector(v4, lanes);
    const Value s = b.fmul(r, k, "scaled");
    const Value h = b.cast("fptrunc", s, vec(4, half()), "h");
    const Value lo = b.shufflevector(h, h, {0, 1, 4, 5, 2, 3, 6, 7}, "wide");
    const Value pout = b.gep(vec(8, half()), b.fn().param("out"), {t64}, "pout");
    b.store(lo, pout, 16);
    b.ret_void();
}

void casts(IRBuilder &b, const IrCoreSpec &) {
    const Value t = tid(b);
    const Value t64 = b.cast("zext", t, i64(), "tidw");
    const Value pin = b.gep(float_(), b.fn().param("in"), {t64}, "pin");
    const Value x = b.load(float_(), pin, 4, "x");
    const Value h = b.cast("fptrunc", x, half(), "h");
    const Value bf = b.cast("fptrunc", x, bfloat(), "bf");
    const Value hx = b.cast("fpext", h, float_(), "hx");
    const Value bx = b.cast("fpext", bf, float_(), "bx");
    const Value d = b.fadd(hx, bx, "d");
    const Value neg = b.fcmp("olt", d, const_float(float_(), 0.0), "neg");
    const Value nd = b.fneg(d, "nd");
    const Value a = b.select(neg, nd, d, "abs");
    const Value q = b.cast("fptosi", a, i32(), "q");
    const Value bits = b.cast("bitcast", a, i32(), "bits");
    const Value hi = b.binop("lshr", bits, ci32(16), "hi");
    const Value lo16 = b.cast("trunc", hi, i16(), "lo");
    const Value z = b.cast("zext", lo16, i32(), "z");
    const Value m = b.binop("xor", z, q, "mix");
    const Value f = b.cast("sitofp", m, float_(), "f");
    const Value pout = b.gep(float_(), b.fn().param("out"), {t64}, "pout");
    b.store(f, pout, 4);
    b.ret_void();
}

void workgroup_ids(IRBuilder &b, const IrCoreSpec &) {
    const Value x = b.call("workgroup_id_x", {}, "wgx");
    const Value y = b.call("workgroup_id_y", {}, "wgy");
    const Value z = b.call("workgroup_id_z", {}, "wgz");
    const Value nx = b.fn().param("nx");
    const Value ny = b.fn().param("ny");
    const Value zy = b.mul(z, ny, "zy", {"nuw"});
    const Value zyy = b.add(zy, y, "zyy", {"nuw"});
    const Value lin = b.mul(zyy, nx, "lin", {"nuw"});
    const Value lin2 = b.add(lin, x, "lin", {"nuw"});
    // Wave 0 stores (every lane the same value to the same address): the branch
    // depends on the wave index only, so it is wave-uniform.
    const Value t = tid(b);
    int shift = 0;
    while ((int64_t{1} << (shift + 1)) <= b.module().arch().wave_size) ++shift;
    const Value wave = b.binop("lshr", t, ci32(shift), "wave");
    const Value first = b.icmp("eq", wave, ci32(0), "first");
    Block &st = b.new_block("store");
    Block &done = b.new_block("done");
    b.cond_br(first, st, done);
    b.position(st);
    const Value l64 = b.cast("zext", lin2, i64(), "linw");
    const Value p = b.gep(i32(), b.fn().param("out"), {l64}, "p");
    b.store(lin2, p, 4);
    b.br(done);
    b.position(done);
    b.ret_void();
}

using Body = void (*)(IRBuilder &, const IrCoreSpec &);
using ParamsFn = std::vector<Param> (*)();

struct KernelDef {
    ParamsFn params;
    Body body;
};

std::vector<Param> io() { return {in_ptr("in"), out_ptr("out")}; }
std::vector<Param> out_only() { return {out_ptr("out")}; }

const std::map<std::string, KernelDef> &defs() {
    static const std::map<std::string, KernelDef> d{
        {"constants_f32", {out_only, [](IRBuilder &b, const IrCoreSpec &) { constants_float(b, float_()); }}},
        {"constants_f16", {out_only, [](IRBuilder &b, const IrCoreSpec &) { constants_float(b, half()); }}},
        {"constants_bf16", {out_only, [](IRBuilder &b, const IrCoreSpec &) { constants_float(b, bfloat()); }}},
        {"constants_int", {out_only, constants_int}},
        {"buffer_copy", {[] { return std::vector<Param>{in_ptr("in"), out_ptr("out"), scalar("n_bytes")}; },
                         buffer_copy}},
        {"lds_barrier", {io, lds_barrier}},
        {"loop_phi", {[] { return std::vector<Param>{in_ptr("in"), out_ptr("out"), scalar("n")}; }, loop_phi}},
        {"vector_ops", {io, vector_ops}},
        {"casts", {io, casts}},
        {"workgroup_ids",
         {[] { return std::vector<Param>{out_ptr("out"), scalar("nx"), scalar("ny")}; }, workgroup_ids}},
        {"float_field", {out_only, float_field}},
    };
    return d;
}

}  // namespace

std::optional<std::string> validate(const IrCoreSpec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor) {
    const auto &ks = kernels();
    const auto &uk = unlisted_kernels();
    if (!spec.kernel || (std::find(ks.begin(), ks.end(), *spec.kernel) == ks.end() &&
                         std::find(uk.begin(), uk.end(), *spec.kernel) == uk.end()))
        return "kernel must be one of " + join(ks, ", ") + ", got " + spec::show(spec.kernel);
    const int64_t t = spec.threads;
    const int64_t w = arch.wave_size;
    if (t < w || t > 1024 || t % w)
        return "threads must be a multiple of the wave size " + dec(w) + " in " + dec(w) + "..1024, got " + dec(t);
    const int64_t c = spec.cluster;
    if (c < 0 || c > 16) return "cluster must be 0 (off) or 1..16, got " + dec(c);
    if (c && !flavor.clusters) return std::string("amdgpu-cluster-dims requires flavor llvm23");
    if (c && !arch.clusters) return std::string("amdgpu-cluster-dims requires arch gfx1250");
    if (std::isnan(spec.value))
        return "value must not be NaN (the IR prints every NaN as the canonical NaN), got " +
               spec::float_text(spec.value);
    return std::nullopt;
}

std::string kernel_name(const IrCoreSpec &spec) {
    std::string name = "ir_core_" + spec.kernel.value() + "_t" + dec(spec.threads);
    if (spec.cluster) name += "_c" + dec(spec.cluster);
    if (*spec.kernel == "float_field") name += "_v" + spec::float_text(spec.value);
    return name;
}

std::pair<std::string, std::unique_ptr<Module>> build(const IrCoreSpec &spec, const targets::Arch &arch,
                                                      const targets::Flavor &flavor) {
    const std::string name = kernel_name(spec);
    const KernelDef &def = defs().at(spec.kernel.value());
    std::optional<ClusterDims> cl;
    if (spec.cluster) cl = ClusterDims{1, 1, spec.cluster};
    std::unique_ptr<Module> m = new_module(flavor, arch, name, def.params(), kernel_attrs(spec.threads, cl));
    IRBuilder b(*m);
    Block &entry = b.new_block("entry");
    b.position(entry);
    def.body(b, spec);
    return {name, std::move(m)};
}

}  // namespace cpe::kernels::ir_core

// Twin of python_engine/kernels/conv_fwd_split_k_reduce.py. Every builder call
// is a statement of its own, so the SSA counter runs in source order.
#include "kernels/conv_fwd_split_k_reduce.h"

#include <map>
#include <stdexcept>

#include "ir/builder.h"
#include "ir/constants.h"
#include "ir/values.h"
#include "kernels/acc_epilogue.h"
#include "kernels/common.h"

namespace cpe::kernels::conv_fwd_split_k_reduce {

using namespace cpe::ir;

const char *const kFamily = "conv_fwd_split_k_reduce";

namespace {
constexpr int64_t kMaxDegree = 32;

const Type *out_type(const std::string &dtype) { return dtype == "bf16" ? bfloat() : half(); }
}  // namespace

const std::vector<spec::Field> &fields() {
    static const std::vector<spec::Field> f{
        {"dtype", spec::FieldKind::Str},
        {"vector", spec::FieldKind::Int},
        {"threads", spec::FieldKind::Int},
        {"degree", spec::FieldKind::Int},
        {"acc_epilogue", spec::FieldKind::Str},
    };
    return f;
}

const std::vector<Arg> &args() {
    static const std::vector<Arg> a{
        {"ws_ptr", "in_ptr"}, {"ws_bytes", "i64"}, {"d_ptr", "out_ptr"}, {"d_bytes", "i64"},
        {"M", "i32"},         {"K", "i32"},        {"ks_count", "i32"},
    };
    return a;
}

const std::vector<Arg> &epilogue_args(const std::string &acc) {
    static const std::map<std::string, std::vector<Arg>> table = [] {
        std::map<std::string, std::vector<Arg>> t;
        for (const std::string &k : acc_epilogue::names())
            for (const acc_epilogue::StepArg &a : acc_epilogue::args(k)) t[k].push_back({a.name, a.kind});
        return t;
    }();
    static const std::vector<Arg> none{};
    if (!acc_epilogue::known(acc))
        throw std::logic_error("conv_fwd_split_k_reduce: no accumulator epilogue '" + acc + "'");
    const auto it = table.find(acc);
    return it == table.end() ? none : it->second;
}

std::vector<Arg> args(const std::string &acc) {
    std::vector<Arg> a = args();
    for (const Arg &e : epilogue_args(acc)) a.push_back(e);
    return a;
}

std::optional<std::string> validate(const ReduceSpec &spec, const targets::Arch &arch, const targets::Flavor &) {
    if (!spec.dtype || (*spec.dtype != "bf16" && *spec.dtype != "fp16"))
        return "dtype must be bf16 or fp16, got " + spec::show(spec.dtype);
    const int64_t v = spec.vector;
    if (v != 1 && v != 2 && v != 4 && v != 8)
        return "vector must be 1, 2, 4 or 8 elements, got " + std::to_string(v);
    const int64_t t = spec.threads, w = arch.wave_size;
    if (t < w || t > 1024 || t % w)
        return "threads must be a multiple of the wave size " + std::to_string(w) + " in " + std::to_string(w) +
               "..1024, got " + std::to_string(t);
    if (spec.degree < 0 || spec.degree > kMaxDegree)
        return "degree must be 0 (runtime ks_count) or 1.." + std::to_string(kMaxDegree) + ", got " +
               std::to_string(spec.degree);
    if (!acc_epilogue::known(spec.acc_epilogue))
        return std::string("acc_epilogue must be ") + acc_epilogue::kNamesText + ", got " +
               spec::show(spec.acc_epilogue);
    if (std::string(arch.name) != "gfx1250")
        return "arch " + std::string(arch.name) + " has no conv_fwd_split_k_reduce kernel (requires gfx1250)";
    return std::nullopt;
}

std::string kernel_name(const ReduceSpec &spec) {
    return "conv_fwd_split_k_reduce_" + *spec.dtype + "_v" + std::to_string(spec.vector) + "_t" +
           std::to_string(spec.threads) + "_d" + std::to_string(spec.degree) +
           (*spec.acc_epilogue == "identity" ? std::string() : "_" + *spec.acc_epilogue);
}

namespace {

std::vector<Param> params(const std::string &acc) {
    std::vector<Param> ps;
    for (const Arg &a : args(acc)) {
        const std::string kind = a.kind;
        if (kind == "in_ptr") ps.push_back(in_ptr(a.name));
        else if (kind == "out_ptr") ps.push_back(out_ptr(a.name));
        else if (kind == "i64") ps.push_back(scalar(a.name, i64()));
        else if (kind == "f32") ps.push_back(scalar(a.name, float_()));
        else ps.push_back(scalar(a.name, i32()));
    }
    return ps;
}

// What the epilogue needs from the entry block: K widened to i64 and the bias
// buffer resource (bias only).
struct Ctx {
    Value k64;
    Value rbias;
};

// Buffer resource over bias_bytes bytes at bias_ptr (word 3: the arch table's
// rsrc_flags), as conv_implicit_gemm builds it.
Value bias_rsrc(IRBuilder &b) {
    Value n = b.fn().param("bias_bytes");
    if (b.module().flavor().rsrc_num_records_bits == 32) n = b.cast("trunc", n, i32(), "rsrc_bias_nrec");
    const Value ptr = b.fn().param("bias_ptr");
    return b.call("make_buffer_rsrc", {ptr, const_int(i16(), 0), n, ci32(b.module().arch().rsrc_flags)},
                  "rsrc_bias");
}

// fp32 bias of the `width` elements from flat index idx (i64): channel
// c = idx mod K, then c + 1 wrapped to 0 at K per next element; one
// range-checked f32 buffer load per element (past bias_bytes reads 0).
Value bias_values(IRBuilder &b, const Ctx &ctx, const Value &idx, int64_t width) {
    const Value cw = b.binop("urem", idx, ctx.k64, "ch_w");
    Value c = b.cast("trunc", cw, i32(), "ch");
    Value out = width > 1 ? zeroinit(vec(width, float_())) : Value();
    for (int64_t i = 0; i < width; ++i) {
        if (i) {
            const Value c1 = b.add(c, ci32(1), "ch_next", {"nuw", "nsw"});
            const Value wrap = b.icmp("eq", c1, b.fn().param("K"), "ch_wrap");
            c = b.select(wrap, ci32(0), c1, "ch");
        }
        const Value off = b.mul(c, ci32(4), "bias_byte");
        const Value x = b.call("raw_buffer_load_f32", {ctx.rbias, off, ci32(0), ci32(0)}, "bias");
        if (width == 1) return x;
        out = b.insertelement(out, x, ci32(i), "biasv");
    }
    return out;
}

// The accumulator epilogue on the fp32 slab sum x of the elements from flat
// index idx (acc_epilogue::emit, the bias from bias_values); identity returns x.
Value epilogue(IRBuilder &b, const ReduceSpec &spec, const Ctx &ctx, const Value &x, const Value &idx,
               int64_t width) {
    const auto bias = [&]() { return bias_values(b, ctx, idx, width); };
    const auto param = [&](const char *name) { return b.fn().param(name); };
    return acc_epilogue::emit(b, *spec.acc_epilogue, x, width, bias, param);
}

// Sum over slabs of the `width` fp32 elements at flat index idx (i64); leaves
// the builder in the block where the sum is available.
Value slab_sum(IRBuilder &b, const ReduceSpec &spec, const Value &idx, const Value &mk, int64_t width) {
    const Type *vt = width == 1 ? float_() : vec(width, float_());
    const Value ws = b.fn().param("ws_ptr");
    const Value p0 = b.gep(float_(), ws, {idx}, "pws");
    Value acc = b.load(vt, p0, 4, "slab");
    if (spec.degree) {
        Value off = idx;
        for (int64_t s = 1; s < spec.degree; ++s) {
            off = b.add(off, mk, "off", {"nuw", "nsw"});
            const Value p = b.gep(float_(), ws, {off}, "pws");
            const Value x = b.load(vt, p, 4, "slab");
            acc = b.fadd(acc, x, "acc");
        }
        return acc;
    }
    const Value ks = b.fn().param("ks_count");
    const Value off1 = b.add(idx, mk, "off", {"nuw", "nsw"});
    const Value more = b.icmp("sgt", ks, ci32(1), "more");
    Block &pre = *b.block();
    Block &loop = b.new_block("slabs");
    Block &done = b.new_block("summed");
    b.cond_br(more, loop, done);
    b.position(loop);
    Phi &s = b.phi(i32(), "s");
    Phi &off = b.phi(i64(), "off");
    Phi &a = b.phi(vt, "acc");
    const Value p = b.gep(float_(), ws, {off.result()}, "pws");
    const Value x = b.load(vt, p, 4, "slab");
    const Value a2 = b.fadd(a.result(), x, "acc");
    const Value s2 = b.add(s.result(), ci32(1), "snext", {"nuw", "nsw"});
    const Value off2 = b.add(off.result(), mk, "offnext", {"nuw", "nsw"});
    const Value again = b.icmp("slt", s2, ks, "again");
    b.cond_br(again, loop, done);
    s.add_incoming(ci32(1), pre);
    s.add_incoming(s2, loop);
    off.add_incoming(off1, pre);
    off.add_incoming(off2, loop);
    a.add_incoming(acc, pre);
    a.add_incoming(a2, loop);
    b.position(done);
    Phi &total = b.phi(vt, "sum");
    total.add_incoming(acc, pre);
    total.add_incoming(a2, loop);
    return total.result();
}

void store(IRBuilder &b, const ReduceSpec &spec, const Ctx &ctx, const Value &total, const Value &idx,
           int64_t width) {
    const Type *et = out_type(*spec.dtype);
    const Type *ot = width == 1 ? et : vec(width, et);
    const Value fused = epilogue(b, spec, ctx, total, idx, width);
    const Value y = b.cast("fptrunc", fused, ot, "out");
    const Value p = b.gep(et, b.fn().param("d_ptr"), {idx}, "pd");
    b.store(y, p, 2 * width);
}

void body(IRBuilder &b, const ReduceSpec &spec, int64_t wave) {
    const int64_t v = spec.vector, threads = spec.threads;
    Block &entry = b.new_block("entry");
    b.position(entry);
    const Value tid = b.call("workitem_id_x", {}, "tid");
    const Value wg = b.call("workgroup_id_x", {}, "wg");
    const Value m64 = b.cast("zext", b.fn().param("M"), i64(), "mw");
    const Value k64 = b.cast("zext", b.fn().param("K"), i64(), "kw");
    const Value mk = b.mul(m64, k64, "mk", {"nuw", "nsw"});
    Ctx ctx{k64, Value()};
    if (acc_epilogue::has(spec.acc_epilogue, "bias")) ctx.rbias = bias_rsrc(b);
    const Value wg64 = b.cast("zext", wg, i64(), "wgw");
    const Value base = b.mul(wg64, ci64(threads), "base", {"nuw", "nsw"});
    const Value tid64 = b.cast("zext", tid, i64(), "tidw");
    const Value thread = b.add(base, tid64, "thread", {"nuw", "nsw"});
    const Value e = b.mul(thread, ci64(v), "elem", {"nuw", "nsw"});
    // Wave-uniform bounds: the first and one-past-last element of this wave.
    const Value lane0 = b.binop("and", tid64, ci64(-wave), "lanezero");
    const Value wthread = b.add(base, lane0, "wthread", {"nuw", "nsw"});
    const Value wfirst = b.mul(wthread, ci64(v), "wfirst", {"nuw", "nsw"});
    const Value wend = b.add(wfirst, ci64(wave * v), "wend", {"nuw", "nsw"});
    const Value live = b.icmp("ult", wfirst, mk, "live");
    Block &body_b = b.new_block("body");
    Block &exit_b = b.new_block("exit");
    b.cond_br(live, body_b, exit_b);
    b.position(body_b);
    const Value full = b.icmp("ule", wend, mk, "full");
    Block &vec_b = b.new_block("vector");
    Block &tail = b.new_block("tail");
    b.cond_br(full, vec_b, tail);
    b.position(vec_b);
    const Value total = slab_sum(b, spec, e, mk, v);
    store(b, spec, ctx, total, e, v);
    b.br(exit_b);
    // Last wave: each lane walks its `vector` elements with the index clamped
    // to M*K-1 (lanes past the end re-store the last element's own value).
    b.position(tail);
    const Value last = b.sub(mk, ci64(1), "last", {"nuw", "nsw"});
    Block &pre = *b.block();
    Block &loop = b.new_block("tail_elem");
    b.br(loop);
    b.position(loop);
    Phi &i = b.phi(i64(), "i");
    const Value j = b.add(e, i.result(), "j", {"nuw", "nsw"});
    const Value inside = b.icmp("ult", j, last, "inside");
    const Value jc = b.select(inside, j, last, "jc");
    const Value t_total = slab_sum(b, spec, jc, mk, 1);
    store(b, spec, ctx, t_total, jc, 1);
    const Value i2 = b.add(i.result(), ci64(1), "inext", {"nuw", "nsw"});
    const Value again = b.icmp("ult", i2, ci64(v), "again");
    b.cond_br(again, loop, exit_b);
    i.add_incoming(ci64(0), pre);
    i.add_incoming(i2, *b.block());
    b.position(exit_b);
    b.ret_void();
}

}  // namespace

std::pair<std::string, std::unique_ptr<ir::Module>> build(const ReduceSpec &spec, const targets::Arch &arch,
                                                         const targets::Flavor &flavor) {
    std::string name = kernel_name(spec);
    auto m = new_module(flavor, arch, name, params(*spec.acc_epilogue), kernel_attrs(spec.threads));
    IRBuilder b(*m);
    body(b, spec, arch.wave_size);
    return {std::move(name), std::move(m)};
}

}  // namespace cpe::kernels::conv_fwd_split_k_reduce

// Twin of python_engine/kernels/conv_fwd_split_k_reduce.py. Every builder call
// is a statement of its own, so the SSA counter runs in source order.
#include "kernels/conv_fwd_split_k_reduce.h"

#include "ir/builder.h"
#include "ir/values.h"
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
    if (std::string(arch.name) != "gfx1250")
        return "arch " + std::string(arch.name) + " has no conv_fwd_split_k_reduce kernel (requires gfx1250)";
    return std::nullopt;
}

std::string kernel_name(const ReduceSpec &spec) {
    return "conv_fwd_split_k_reduce_" + *spec.dtype + "_v" + std::to_string(spec.vector) + "_t" +
           std::to_string(spec.threads) + "_d" + std::to_string(spec.degree);
}

namespace {

std::vector<Param> params() {
    std::vector<Param> ps;
    for (const Arg &a : args()) {
        const std::string kind = a.kind;
        if (kind == "in_ptr") ps.push_back(in_ptr(a.name));
        else if (kind == "out_ptr") ps.push_back(out_ptr(a.name));
        else if (kind == "i64") ps.push_back(scalar(a.name, i64()));
        else ps.push_back(scalar(a.name, i32()));
    }
    return ps;
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

void store(IRBuilder &b, const ReduceSpec &spec, const Value &total, const Value &idx, int64_t width) {
    const Type *et = out_type(*spec.dtype);
    const Type *ot = width == 1 ? et : vec(width, et);
    const Value y = b.cast("fptrunc", total, ot, "out");
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
    store(b, spec, total, e, v);
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
    store(b, spec, t_total, jc, 1);
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
    auto m = new_module(flavor, arch, name, params(), kernel_attrs(spec.threads));
    IRBuilder b(*m);
    body(b, spec, arch.wave_size);
    return {std::move(name), std::move(m)};
}

}  // namespace cpe::kernels::conv_fwd_split_k_reduce

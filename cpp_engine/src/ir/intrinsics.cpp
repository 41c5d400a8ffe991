// Twin of python_engine/ir/intrinsics.py.
#include "ir/intrinsics.h"

#include <map>
#include <string_view>
#include <unordered_map>
#include <stdexcept>

namespace cpe::ir {

std::string Intrinsic::declaration() const {
    std::string ps;
    for (size_t i = 0; i < params.size(); ++i) {
        if (i) ps += ", ";
        ps += params[i]->text();
    }
    return "declare " + ret->text() + " @" + name + "(" + ps + ")";
}

namespace {

struct Signature {
    std::string name;
    const Type *ret;
    std::vector<const Type *> params;
    std::string decl = {};  // the declaration line, filled once when the table is made (with_declarations)
};

struct Row {
    std::string key;
    Signature sig;
    std::map<std::string, Signature> per_flavor;  // canonical flavor -> override

    const Signature &signature(const std::string &flavor) const {
        if (per_flavor.empty()) return sig;
        auto it = per_flavor.find(flavor);
        return it == per_flavor.end() ? sig : it->second;
    }
    Intrinsic resolve(const std::string &flavor) const {
        const Signature &s = signature(flavor);
        return Intrinsic{key, s.name, s.ret, s.params};
    }
};

// `rows` with every signature's declaration line filled in.
std::vector<Row> with_declarations(std::vector<Row> rows) {
    const auto fill = [](Signature &s) { s.decl = Intrinsic{"", s.name, s.ret, s.params}.declaration(); };
    for (Row &r : rows) {
        fill(r.sig);
        for (auto &kv : r.per_flavor) fill(kv.second);
    }
    return rows;
}

const std::vector<Row> &rows() {
    static const std::vector<Row> table = with_declarations([] {
        const Type *g = global_ptr();
        const Type *r = rsrc_ptr();
        const Type *v4f = vec(4, float_());
        const Type *v2f = vec(2, float_());
        const Type *v8f = vec(8, float_());
        const Type *v16bf = vec(16, bfloat());
        const Type *v16h = vec(16, half());
        return std::vector<Row>{
            {"workitem_id_x", {"llvm.amdgcn.workitem.id.x", i32(), {}}, {}},
            {"workgroup_id_x", {"llvm.amdgcn.workgroup.id.x", i32(), {}}, {}},
            {"workgroup_id_y", {"llvm.amdgcn.workgroup.id.y", i32(), {}}, {}},
            {"workgroup_id_z", {"llvm.amdgcn.workgroup.id.z", i32(), {}}, {}},
            {"s_barrier", {"llvm.amdgcn.s.barrier", void_(), {}}, {}},
            // LLVM 20: make.buffer.rsrc overloaded on the base pointer only, i32 num_records.
            // LLVM 22: result overloaded too (.p8.p1), num_records i64.
            {"make_buffer_rsrc",
             {"llvm.amdgcn.make.buffer.rsrc.p8.p1", r, {g, i16(), i64(), i32()}},
             {{"llvm20", {"llvm.amdgcn.make.buffer.rsrc.p1", r, {g, i16(), i32(), i32()}}}}},
            {"raw_buffer_load_f32", {"llvm.amdgcn.raw.ptr.buffer.load.f32", float_(), {r, i32(), i32(), i32()}}, {}},
            {"raw_buffer_load_v4f32", {"llvm.amdgcn.raw.ptr.buffer.load.v4f32", v4f, {r, i32(), i32(), i32()}}, {}},
            {"raw_buffer_store_f32",
             {"llvm.amdgcn.raw.ptr.buffer.store.f32", void_(), {float_(), r, i32(), i32(), i32()}}, {}},
            {"raw_buffer_store_v4f32",
             {"llvm.amdgcn.raw.ptr.buffer.store.v4f32", void_(), {v4f, r, i32(), i32(), i32()}}, {}},
            // -- conv_implicit_gemm (appended; same rows as the Python table) ------------
            // gfx1250 wave32 WMMA, D(16x16 f32) = A(16x32) * B(32x16) + C. LLVM 22
            // IntrinsicsAMDGPU.td AMDGPUWmmaIntrinsicModsAllReuse: (i1 neg_a, A, i1 neg_b, B,
            // i16 c_mod, C, i1 reuse_a, reuse_b); the neg/mod/reuse operands are immargs
            // (LLVM attaches `immarg` itself when it parses the declaration).
            {"wmma_f32_16x16x32_bf16",
             {"llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16", v8f,
              {i1(), v16bf, i1(), v16bf, i16(), v8f, i1(), i1()}}, {}},
            {"wmma_f32_16x16x32_f16",
             {"llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16", v8f,
              {i1(), v16h, i1(), v16h, i16(), v8f, i1(), i1()}}, {}},
            // Makes the wave index an SGPR value so role branches are scalar (wave-uniform).
            {"readfirstlane_i32", {"llvm.amdgcn.readfirstlane.i32", i32(), {i32()}}, {}},
            // gfx1250 workgroup-cluster barrier (LLVM 22.1): a workgroup barrier, then the
            // cluster barrier (s_barrier_signal/wait -3). Paired with syncscope("cluster") fences.
            {"s_cluster_barrier", {"llvm.amdgcn.s.cluster.barrier", void_(), {}}, {}},
            {"raw_buffer_load_i16", {"llvm.amdgcn.raw.ptr.buffer.load.i16", i16(), {r, i32(), i32(), i32()}}, {}},
            {"raw_buffer_load_v2f32", {"llvm.amdgcn.raw.ptr.buffer.load.v2f32", v2f, {r, i32(), i32(), i32()}}, {}},
            {"raw_buffer_store_i16",
             {"llvm.amdgcn.raw.ptr.buffer.store.i16", void_(), {i16(), r, i32(), i32(), i32()}}, {}},
            {"raw_buffer_store_v2f32",
             {"llvm.amdgcn.raw.ptr.buffer.store.v2f32", void_(), {v2f, r, i32(), i32(), i32()}}, {}},
            // Scheduling barrier (IntrinsicsAMDGPU.td int_amdgcn_sched_barrier, LLVM 15+:
            // one i32 immarg mask of the instruction classes that may cross; 0 = none).
            // Emits no machine instruction; keeps the conv main loop's global loads
            // above its WMMAs.
            {"sched_barrier", {"llvm.amdgcn.sched.barrier", void_(), {i32()}}, {}},
            // Wave barrier (IntrinsicsAMDGPU.td int_amdgcn_wave_barrier: no operands,
            // convergent, has side effects; codegen prints only a "; wave barrier"
            // comment, no machine instruction). Orders the conv default epilogue's
            // cross-lane LDS transpose writes and reads.
            {"wave_barrier", {"llvm.amdgcn.wave.barrier", void_(), {}}, {}},
            // gfx12+ wait on the load counter (IntrinsicsAMDGPU.td int_amdgcn_s_wait_loadcnt,
            // one i16 immarg: the count of newer loads that may stay outstanding; present in
            // LLVM 19, so llvm20 text verifies with opt-19). The conv uniform-tap loop waits
            // once for its held tile instead of LLVM's per-store graded waits.
            {"s_wait_loadcnt", {"llvm.amdgcn.s.wait.loadcnt", void_(), {i16()}}, {}},
        };
    }());
    return table;
}

// Row index by key (the keys view the static rows).
const std::unordered_map<std::string_view, size_t> &row_index() {
    static const std::unordered_map<std::string_view, size_t> index = [] {
        std::unordered_map<std::string_view, size_t> m;
        for (size_t i = 0; i < rows().size(); ++i) m.emplace(rows()[i].key, i);
        return m;
    }();
    return index;
}

IntrinsicRef ref_of(size_t index, const std::string &flavor) {
    const Signature &s = rows()[index].signature(flavor);
    return IntrinsicRef{s.name, s.ret, s.params, s.decl, index};
}

}  // namespace

const std::vector<std::string> &intrinsic_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (const Row &r : rows()) k.push_back(r.key);
        return k;
    }();
    return keys;
}

Intrinsic intrinsic(const std::string &key, const std::string &flavor) {
    for (const Row &r : rows())
        if (r.key == key) return r.resolve(flavor);
    throw std::out_of_range("unknown intrinsic key " + key);
}

IntrinsicRef intrinsic_ref(std::string_view key, const std::string &flavor) {
    const auto it = row_index().find(key);
    if (it == row_index().end()) throw std::out_of_range("unknown intrinsic key " + std::string(key));
    return ref_of(it->second, flavor);
}

size_t intrinsic_count() { return rows().size(); }

IntrinsicRef intrinsic_at(size_t index, const std::string &flavor) {
    if (index >= rows().size()) throw std::out_of_range("intrinsic row " + std::to_string(index) + " out of range");
    return ref_of(index, flavor);
}

std::vector<std::pair<std::string, std::string>> intrinsic_table(const std::string &flavor) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Row &r : rows()) out.emplace_back(r.key, r.resolve(flavor).declaration());
    return out;
}

}  // namespace cpe::ir

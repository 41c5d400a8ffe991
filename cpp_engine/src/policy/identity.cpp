// Twin of python_engine/policy/identity.py.
#include "policy/identity.h"

#include "ir/constants.h"
#include "policy/sha256.h"

namespace cpe::policy {

namespace {
using ir::dec;
std::string b(bool v) { return v ? "true" : "false"; }
}  // namespace

const std::vector<IdentField> &identity_fields() {
    using K = KernelIdentity;
    using R = IdentRule;
    static const std::vector<IdentField> f{
        {"family", R::Always, [](const K &k) { return k.family; }},
        {"arch", R::Always, [](const K &k) { return k.arch; }},
        {"flavor", R::Always, [](const K &k) { return k.flavor; }},
        {"dtype", R::Always, [](const K &k) { return k.dtype; }},
        {"tile_m", R::OmitAtDefault, [](const K &k) { return dec(k.tile_m); }},
        {"tile_n", R::OmitAtDefault, [](const K &k) { return dec(k.tile_n); }},
        {"tile_k", R::OmitAtDefault, [](const K &k) { return dec(k.tile_k); }},
        {"waves_m", R::OmitAtDefault, [](const K &k) { return dec(k.waves_m); }},
        {"waves_n", R::OmitAtDefault, [](const K &k) { return dec(k.waves_n); }},
        {"pipeline", R::OmitAtDefault, [](const K &k) { return k.pipeline; }},
        {"num_load_waves", R::OmitAtDefault, [](const K &k) { return dec(k.num_load_waves); }},
        {"epilogue", R::OmitAtDefault, [](const K &k) { return k.epilogue; }},
        {"vector_a", R::OmitAtDefault, [](const K &k) { return dec(k.vector_a); }},
        {"vector_b", R::OmitAtDefault, [](const K &k) { return dec(k.vector_b); }},
        {"acc_epilogue", R::OmitAtDefault, [](const K &k) { return k.acc_epilogue; }},
        {"two_stage", R::OmitAtDefault, [](const K &k) { return b(k.two_stage); }},
        {"split_k_cluster", R::OmitAtDefault, [](const K &k) { return dec(k.split_k_cluster); }},
        {"name_prefix", R::OmitAtDefault, [](const K &k) { return k.name_prefix; }},
        {"vector", R::OmitAtDefault, [](const K &k) { return dec(k.vector); }},
        {"threads", R::OmitAtDefault, [](const K &k) { return dec(k.threads); }},
        {"degree", R::OmitAtDefault, [](const K &k) { return dec(k.degree); }},
    };
    return f;
}

KernelIdentity KernelIdentity::of_conv(const kernels::conv_implicit_gemm::ConvSpec &s, const std::string &arch,
                                       const std::string &flavor) {
    KernelIdentity k;
    k.family = "conv_implicit_gemm";
    k.arch = arch;
    k.flavor = flavor;
    k.dtype = s.dtype.value_or("");
    k.tile_m = s.tile_m;
    k.tile_n = s.tile_n;
    k.tile_k = s.tile_k;
    k.waves_m = s.waves_m;
    k.waves_n = s.waves_n;
    k.pipeline = s.pipeline.value_or("");
    k.num_load_waves = k.pipeline == "wavelet" ? s.num_load_waves : 1;
    k.epilogue = s.epilogue.value_or("");
    k.vector_a = s.vector_a;
    k.vector_b = s.vector_b;
    // two-stage Stage 1 is the identity binary whatever the layer's epilogue (Stage 2 applies it)
    k.acc_epilogue = s.acc_epilogue ? kernels::conv_implicit_gemm::stage1_acc(s) : std::string();
    k.two_stage = s.split_k > 1;
    k.split_k_cluster = s.split_k_cluster;
    k.name_prefix = s.name_prefix.value_or("");
    return k;
}

KernelIdentity KernelIdentity::of_reduce(const kernels::conv_fwd_split_k_reduce::ReduceSpec &s,
                                         const std::string &arch, const std::string &flavor) {
    KernelIdentity k;
    k.family = "conv_fwd_split_k_reduce";
    k.arch = arch;
    k.flavor = flavor;
    k.dtype = s.dtype.value_or("");
    k.vector = s.vector;
    k.threads = s.threads;
    k.degree = s.degree;
    k.acc_epilogue = s.acc_epilogue.value_or("");
    return k;
}

kernels::conv_implicit_gemm::ConvSpec KernelIdentity::conv_spec() const {
    kernels::conv_implicit_gemm::ConvSpec s;
    s.dtype = dtype;
    s.tile_m = tile_m;
    s.tile_n = tile_n;
    s.tile_k = tile_k;
    s.waves_m = waves_m;
    s.waves_n = waves_n;
    s.pipeline = pipeline;
    s.num_load_waves = num_load_waves;
    s.epilogue = epilogue;
    s.vector_a = vector_a;
    s.vector_b = vector_b;
    s.acc_epilogue = acc_epilogue;
    s.split_k = two_stage ? 2 : 1;
    s.split_k_cluster = split_k_cluster;
    s.name_prefix = name_prefix;
    return s;
}

kernels::conv_fwd_split_k_reduce::ReduceSpec KernelIdentity::reduce_spec() const {
    kernels::conv_fwd_split_k_reduce::ReduceSpec s;
    s.dtype = dtype;
    s.vector = vector;
    s.threads = threads;
    s.degree = degree;
    s.acc_epilogue = acc_epilogue;
    return s;
}

std::string KernelIdentity::kernel_name() const {
    if (family == "conv_implicit_gemm") return kernels::conv_implicit_gemm::kernel_name(conv_spec());
    return kernels::conv_fwd_split_k_reduce::kernel_name(reduce_spec());
}

std::string KernelIdentity::hashed_text() const {
    // the default's text of every field, made once (C++11 thread-safe static
    // initialization, read-only after): a field omitted at its default is compared with it
    static const std::vector<std::string> defaults = [] {
        const KernelIdentity d;
        std::vector<std::string> v;
        for (const IdentField &f : identity_fields()) v.push_back(f.text(d));
        return v;
    }();
    const std::vector<IdentField> &fields = identity_fields();
    std::string out;
    out.reserve(256);
    for (size_t i = 0; i < fields.size(); ++i) {
        const IdentField &f = fields[i];
        const std::string v = f.text(*this);
        if (f.rule == IdentRule::OmitAtDefault && v == defaults[i]) continue;
        out += f.name;
        out += '=';
        out += v;
        out += '\n';
    }
    return out;
}

std::string KernelIdentity::hash() const { return sha256_hex(hashed_text()).substr(0, kHashHex); }

std::string KernelIdentity::label() const { return kernel_name() + "." + arch + "." + flavor; }

}  // namespace cpe::policy

// C API of family split_k_policy and the AOT job grid
// (include/cpp_engine/split_k_policy.h).
#include "cpp_engine/split_k_policy.h"

#include <stdexcept>

#include "api/c_api.h"
#include "policy/aot.h"
#include "policy/split_k_policy.h"

using namespace cpe;

namespace {

struct Fam {
    using Spec = policy::split_k_policy::PolicySpec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return policy::split_k_policy::validate(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_split_k_policy_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    auto &c = s.launch.conv;
    c.dtype = api::str_field(spec->dtype);
    c.tile_m = spec->tile_m;
    c.tile_n = spec->tile_n;
    c.tile_k = spec->tile_k;
    c.waves_m = spec->waves_m;
    c.waves_n = spec->waves_n;
    c.pipeline = api::str_field(spec->pipeline);
    c.num_load_waves = spec->num_load_waves;
    c.epilogue = api::str_field(spec->epilogue);
    c.vector_a = spec->vector_a;
    c.vector_b = spec->vector_b;
    c.acc_epilogue = api::str_field(spec->acc_epilogue);
    c.split_k = spec->split_k;
    c.split_k_cluster = spec->split_k_cluster;
    c.name_prefix = api::str_field(spec->name_prefix);
    auto &l = s.launch;
    l.N = spec->N;
    l.C = spec->C;
    l.H = spec->H;
    l.W = spec->W;
    l.K = spec->K;
    l.Y = spec->Y;
    l.X = spec->X;
    l.stride_h = spec->stride_h;
    l.stride_w = spec->stride_w;
    l.pad_h = spec->pad_h;
    l.pad_w = spec->pad_w;
    l.dil_h = spec->dil_h;
    l.dil_w = spec->dil_w;
    l.groups = spec->groups;
    s.cus = spec->cus;
    return s;
}

}  // namespace

extern "C" {

cpe_split_k_policy_spec cpe_split_k_policy_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    const auto &c = d.launch.conv;
    const auto &l = d.launch;
    cpe_split_k_policy_spec s;
    s.dtype = c.dtype->c_str();
    s.tile_m = c.tile_m;
    s.tile_n = c.tile_n;
    s.tile_k = c.tile_k;
    s.waves_m = c.waves_m;
    s.waves_n = c.waves_n;
    s.pipeline = c.pipeline->c_str();
    s.num_load_waves = c.num_load_waves;
    s.epilogue = c.epilogue->c_str();
    s.vector_a = c.vector_a;
    s.vector_b = c.vector_b;
    s.acc_epilogue = c.acc_epilogue->c_str();
    s.split_k = c.split_k;
    s.split_k_cluster = c.split_k_cluster;
    s.name_prefix = c.name_prefix->c_str();
    s.N = l.N;
    s.C = l.C;
    s.H = l.H;
    s.W = l.W;
    s.K = l.K;
    s.Y = l.Y;
    s.X = l.X;
    s.stride_h = l.stride_h;
    s.stride_w = l.stride_w;
    s.pad_h = l.pad_h;
    s.pad_w = l.pad_w;
    s.dil_h = l.dil_h;
    s.dil_w = l.dil_w;
    s.groups = l.groups;
    s.cus = d.cus;
    return s;
}

cpe_status cpe_split_k_policy_validate(const cpe_split_k_policy_spec *spec, const char *arch, const char *flavor,
                                       char *reason, size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status cpe_split_k_policy_lower(const cpe_split_k_policy_spec *spec, const char *arch, const char *flavor,
                                    cpe_output *out, char *reason, size_t reason_len) {
    if (out) {
        out->kernel = nullptr;
        out->text = nullptr;
    }
    return api::guarded(reason, reason_len, [&] {
        const Fam::Spec s = to_cpp(spec);
        const kernels::Target t = api::check_spec<Fam>(s, arch, flavor);
        if (!out) throw std::invalid_argument("out is NULL");
        const auto built = policy::split_k_policy::build(s, *t.arch, *t.flavor);
        api::fill_output(out, built.first, built.second);
    });
}

cpe_status cpe_aot_jobs_text(const char *flavor, char **out, int64_t *count, char *reason, size_t reason_len) {
    if (out) *out = nullptr;
    return api::guarded(reason, reason_len, [&] {
        const std::string name = api::name_arg(flavor);
        const targets::Flavor *fl = targets::find_flavor(name);
        if (!fl) throw kernels::SpecRejected(targets::unknown_flavor_reason(name));
        if (count) *count = policy::aot::count_jobs(*fl);
        if (out) *out = api::dup_c(policy::aot::jobs_text(*fl));
    });
}

}  // extern "C"

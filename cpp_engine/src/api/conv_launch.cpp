// C API of family conv_launch (include/cpp_engine/conv_launch.h): converts the
// flat C spec; lower returns the launch plan text (not an LLVM module).
#include "cpp_engine/conv_launch.h"

#include <stdexcept>

#include "api/c_api.h"
#include "kernels/conv_launch.h"

using namespace cpe;

namespace {

struct Fam {
    using Spec = kernels::conv_launch::LaunchSpec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return kernels::conv_launch::validate(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_conv_launch_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    s.conv.dtype = api::str_field(spec->dtype);
    s.conv.tile_m = spec->tile_m;
    s.conv.tile_n = spec->tile_n;
    s.conv.tile_k = spec->tile_k;
    s.conv.waves_m = spec->waves_m;
    s.conv.waves_n = spec->waves_n;
    s.conv.pipeline = api::str_field(spec->pipeline);
    s.conv.num_load_waves = spec->num_load_waves;
    s.conv.epilogue = api::str_field(spec->epilogue);
    s.conv.vector_a = spec->vector_a;
    s.conv.vector_b = spec->vector_b;
    s.conv.acc_epilogue = api::str_field(spec->acc_epilogue);
    s.conv.split_k = spec->split_k;
    s.conv.split_k_cluster = spec->split_k_cluster;
    s.conv.name_prefix = api::str_field(spec->name_prefix);
    s.N = spec->N;
    s.C = spec->C;
    s.H = spec->H;
    s.W = spec->W;
    s.K = spec->K;
    s.Y = spec->Y;
    s.X = spec->X;
    s.stride_h = spec->stride_h;
    s.stride_w = spec->stride_w;
    s.pad_h = spec->pad_h;
    s.pad_w = spec->pad_w;
    s.dil_h = spec->dil_h;
    s.dil_w = spec->dil_w;
    s.groups = spec->groups;
    s.degree = spec->degree;
    return s;
}

}  // namespace

extern "C" {

cpe_conv_launch_spec cpe_conv_launch_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    cpe_conv_launch_spec s;
    s.dtype = d.conv.dtype->c_str();
    s.tile_m = d.conv.tile_m;
    s.tile_n = d.conv.tile_n;
    s.tile_k = d.conv.tile_k;
    s.waves_m = d.conv.waves_m;
    s.waves_n = d.conv.waves_n;
    s.pipeline = d.conv.pipeline->c_str();
    s.num_load_waves = d.conv.num_load_waves;
    s.epilogue = d.conv.epilogue->c_str();
    s.vector_a = d.conv.vector_a;
    s.vector_b = d.conv.vector_b;
    s.acc_epilogue = d.conv.acc_epilogue->c_str();
    s.split_k = d.conv.split_k;
    s.split_k_cluster = d.conv.split_k_cluster;
    s.name_prefix = d.conv.name_prefix->c_str();
    s.N = d.N;
    s.C = d.C;
    s.H = d.H;
    s.W = d.W;
    s.K = d.K;
    s.Y = d.Y;
    s.X = d.X;
    s.stride_h = d.stride_h;
    s.stride_w = d.stride_w;
    s.pad_h = d.pad_h;
    s.pad_w = d.pad_w;
    s.dil_h = d.dil_h;
    s.dil_w = d.dil_w;
    s.groups = d.groups;
    s.degree = d.degree;
    return s;
}

cpe_status cpe_conv_launch_validate(const cpe_conv_launch_spec *spec, const char *arch, const char *flavor,
                                    char *reason, size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status cpe_conv_launch_lower(const cpe_conv_launch_spec *spec, const char *arch, const char *flavor,
                                 cpe_output *out, char *reason, size_t reason_len) {
    if (out) {
        out->kernel = nullptr;
        out->text = nullptr;
    }
    return api::guarded(reason, reason_len, [&] {
        const Fam::Spec s = to_cpp(spec);
        const kernels::Target t = api::check_spec<Fam>(s, arch, flavor);
        if (!out) throw std::invalid_argument("out is NULL");
        const auto built = kernels::conv_launch::build(s, *t.arch, *t.flavor);
        api::fill_output(out, built.first, built.second);
    });
}

}  // extern "C"

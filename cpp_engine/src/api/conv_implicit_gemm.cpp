// C API of family conv_implicit_gemm (include/cpp_engine/conv_implicit_gemm.h):
// converts the C spec and runs the shared validate/lower bodies of api/c_api.h.
#include "cpp_engine/conv_implicit_gemm.h"

#include <stdexcept>

#include "api/c_api.h"
#include "kernels/conv_implicit_gemm.h"

using namespace cpe;

namespace {

struct Fam {
    using Spec = kernels::conv_implicit_gemm::ConvSpec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return kernels::conv_implicit_gemm::validate(s, a, f);
    }
    static auto build(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return kernels::conv_implicit_gemm::build(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_conv_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    s.dtype = api::str_field(spec->dtype);
    s.tile_m = spec->tile_m;
    s.tile_n = spec->tile_n;
    s.tile_k = spec->tile_k;
    s.waves_m = spec->waves_m;
    s.waves_n = spec->waves_n;
    s.pipeline = api::str_field(spec->pipeline);
    s.num_load_waves = spec->num_load_waves;
    s.epilogue = api::str_field(spec->epilogue);
    s.vector_a = spec->vector_a;
    s.vector_b = spec->vector_b;
    s.acc_epilogue = api::str_field(spec->acc_epilogue);
    s.split_k = spec->split_k;
    s.split_k_cluster = spec->split_k_cluster;
    s.name_prefix = api::str_field(spec->name_prefix);
    return s;
}

}  // namespace

extern "C" {

cpe_conv_spec cpe_conv_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    cpe_conv_spec s;
    s.dtype = d.dtype->c_str();
    s.tile_m = d.tile_m;
    s.tile_n = d.tile_n;
    s.tile_k = d.tile_k;
    s.waves_m = d.waves_m;
    s.waves_n = d.waves_n;
    s.pipeline = d.pipeline->c_str();
    s.num_load_waves = d.num_load_waves;
    s.epilogue = d.epilogue->c_str();
    s.vector_a = d.vector_a;
    s.vector_b = d.vector_b;
    s.acc_epilogue = d.acc_epilogue->c_str();
    s.split_k = d.split_k;
    s.split_k_cluster = d.split_k_cluster;
    s.name_prefix = d.name_prefix->c_str();
    return s;
}

cpe_status cpe_conv_validate(const cpe_conv_spec *spec, const char *arch, const char *flavor, char *reason,
                             size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status cpe_conv_lower(const cpe_conv_spec *spec, const char *arch, const char *flavor, cpe_output *out,
                          char *reason, size_t reason_len) {
    return api::lower_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, out, reason, reason_len);
}

}  // extern "C"

// C API of family conv_fwd_split_k_reduce (include/cpp_engine/conv_fwd_split_k_reduce.h): converts the C spec and
// runs the shared validate/lower bodies of api/c_api.h.
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#include "cpp_engine/conv_fwd_split_k_reduce.h"

#include <stdexcept>

#include "api/c_api.h"
#include "kernels/conv_fwd_split_k_reduce.h"

using namespace cpe;

namespace {

struct Fam {
    using Spec = kernels::conv_fwd_split_k_reduce::ReduceSpec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return kernels::conv_fwd_split_k_reduce::validate(s, a, f);
    }
    static auto build(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return kernels::conv_fwd_split_k_reduce::build(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_reduce_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    s.dtype = api::str_field(spec->dtype, "dtype");
    s.vector = spec->vector;
    s.threads = spec->threads;
    s.degree = spec->degree;
    s.acc_epilogue = api::str_field(spec->acc_epilogue, "acc_epilogue");
    return s;
}

}  // namespace

extern "C" {

cpe_reduce_spec cpe_reduce_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    cpe_reduce_spec s;
    s.dtype = d.dtype->c_str();
    s.vector = d.vector;
    s.threads = d.threads;
    s.degree = d.degree;
    s.acc_epilogue = d.acc_epilogue->c_str();
    return s;
}

cpe_status cpe_reduce_validate(const cpe_reduce_spec *spec, const char *arch, const char *flavor, char *reason,
                               size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status cpe_reduce_lower(const cpe_reduce_spec *spec, const char *arch, const char *flavor, cpe_output *out,
                            char *reason, size_t reason_len) {
    return api::lower_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, out, reason, reason_len);
}

}  // extern "C"

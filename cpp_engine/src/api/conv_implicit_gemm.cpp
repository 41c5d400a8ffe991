// C API of family conv_implicit_gemm (include/cpp_engine/conv_implicit_gemm.h):
// converts the C spec and runs the shared validate/lower bodies of api/c_api.h.
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#include "cpp_engine/conv_implicit_gemm.h"

#include <stdexcept>

#include "api/c_api.h"
#include "api/conv_spec_c.h"
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
    api::conv_from_c(*spec, s);
    return s;
}

}  // namespace

extern "C" {

int64_t cpe_conv_load_vector(int64_t cpg) { return cpg < 1 ? 0 : kernels::conv_implicit_gemm::load_vector(cpg); }

cpe_conv_spec cpe_conv_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    cpe_conv_spec s;
    api::conv_to_c(d, s);
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

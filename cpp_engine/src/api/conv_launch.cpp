// C API of family conv_launch (include/cpp_engine/conv_launch.h): converts the
// flat C spec; lower returns the launch plan text (not an LLVM module).
#include "cpp_engine/conv_launch.h"

#include <stdexcept>

#include "api/c_api.h"
#include "api/conv_spec_c.h"
#include "kernels/conv_launch.h"

using namespace cpe;

namespace {

struct Fam {
    using Spec = kernels::conv_launch::LaunchSpec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return kernels::conv_launch::validate(s, a, f);
    }
    static auto build(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return kernels::conv_launch::build(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_conv_launch_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    api::launch_from_c(*spec, s);
    s.degree = spec->degree;
    return s;
}

}  // namespace

extern "C" {

cpe_conv_launch_spec cpe_conv_launch_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    cpe_conv_launch_spec s;
    api::launch_to_c(d, s);
    s.degree = d.degree;
    return s;
}

cpe_status cpe_conv_launch_validate(const cpe_conv_launch_spec *spec, const char *arch, const char *flavor,
                                    char *reason, size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status cpe_conv_launch_lower(const cpe_conv_launch_spec *spec, const char *arch, const char *flavor,
                                 cpe_output *out, char *reason, size_t reason_len) {
    return api::lower_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, out, reason, reason_len);
}

}  // extern "C"

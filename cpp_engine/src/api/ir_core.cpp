// C API of family ir_core (include/cpp_engine/ir_core.h): converts the C spec and
// runs the shared validate/lower bodies of api/c_api.h.
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#include "cpp_engine/ir_core.h"

#include <stdexcept>

#include "api/c_api.h"
#include "kernels/ir_core.h"

using namespace cpe;

namespace {

struct Fam {
    using Spec = kernels::ir_core::IrCoreSpec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return kernels::ir_core::validate(s, a, f);
    }
    static auto build(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return kernels::ir_core::build(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_ir_core_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    s.kernel = api::str_field(spec->kernel, "kernel");
    s.threads = spec->threads;
    s.cluster = spec->cluster;
    s.value = spec->value;
    return s;
}

}  // namespace

extern "C" {

cpe_ir_core_spec cpe_ir_core_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    cpe_ir_core_spec s;
    s.kernel = d.kernel->c_str();
    s.threads = d.threads;
    s.cluster = d.cluster;
    s.value = d.value;
    return s;
}

cpe_status cpe_ir_core_validate(const cpe_ir_core_spec *spec, const char *arch, const char *flavor, char *reason,
                                size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status cpe_ir_core_lower(const cpe_ir_core_spec *spec, const char *arch, const char *flavor, cpe_output *out,
                             char *reason, size_t reason_len) {
    return api::lower_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, out, reason, reason_len);
}

}  // extern "C"

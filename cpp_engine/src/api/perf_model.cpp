// C API of family perf_model (include/cpp_engine/perf_model.h).
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#include "cpp_engine/perf_model.h"

#include <stdexcept>

#include "api/c_api.h"
#include "api/conv_spec_c.h"
#include "families/perf_model.h"

using namespace cpe;

namespace {

struct Fam {
    static constexpr bool kAnyProcessor = true;  // the split-K resolver takes any LLVM AMDGPU processor
    using Spec = families::perf_model::Spec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return families::perf_model::validate(s, a, f);
    }
    static auto build(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return families::perf_model::build(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_perf_model_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    api::launch_from_c(*spec, s.launch);
    s.cus = spec->cus;
    s.rules = spec->rules;
    return s;
}

}  // namespace

extern "C" {

cpe_perf_model_spec cpe_perf_model_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    cpe_perf_model_spec s;
    api::launch_to_c(d.launch, s);
    s.cus = d.cus;
    s.rules = d.rules;
    return s;
}

cpe_status cpe_perf_model_validate(const cpe_perf_model_spec *spec, const char *arch, const char *flavor,
                                   char *reason, size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status cpe_perf_model_lower(const cpe_perf_model_spec *spec, const char *arch, const char *flavor,
                                cpe_output *out, char *reason, size_t reason_len) {
    return api::lower_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, out, reason, reason_len);
}

}  // extern "C"

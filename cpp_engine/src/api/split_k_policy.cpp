// C API of family split_k_policy and the AOT job grid
// (include/cpp_engine/split_k_policy.h).
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#include "cpp_engine/split_k_policy.h"

#include <stdexcept>

#include "api/c_api.h"
#include "api/conv_spec_c.h"
#include "families/split_k_policy.h"
#include "policy/aot.h"

using namespace cpe;

namespace {

struct Fam {
    static constexpr bool kAnyProcessor = true;  // the split-K resolver takes any LLVM AMDGPU processor
    using Spec = families::split_k_policy::PolicySpec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return families::split_k_policy::validate(s, a, f);
    }
    static auto build(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return families::split_k_policy::build(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_split_k_policy_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    api::launch_from_c(*spec, s.launch);
    s.cus = spec->cus;
    return s;
}

}  // namespace

extern "C" {

cpe_split_k_policy_spec cpe_split_k_policy_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    cpe_split_k_policy_spec s;
    api::launch_to_c(d.launch, s);
    s.cus = d.cus;
    return s;
}

cpe_status cpe_split_k_policy_validate(const cpe_split_k_policy_spec *spec, const char *arch, const char *flavor,
                                       char *reason, size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status cpe_split_k_policy_lower(const cpe_split_k_policy_spec *spec, const char *arch, const char *flavor,
                                    cpe_output *out, char *reason, size_t reason_len) {
    return api::lower_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, out, reason, reason_len);
}

cpe_status cpe_aot_jobs_text(const char *flavor, char **out, int64_t *count, char *reason, size_t reason_len) {
    if (out) *out = nullptr;
    return api::guarded(reason, reason_len, [&] {
        const std::string name = api::flavor_arg(flavor);
        const targets::Flavor *fl = targets::find_flavor(name);
        if (!fl) throw spec::SpecRejected(targets::unknown_flavor_reason(name));
        if (count) *count = policy::aot::count_jobs(*fl);
        if (out) *out = api::dup_c(policy::aot::jobs_text(*fl));
    });
}

}  // extern "C"

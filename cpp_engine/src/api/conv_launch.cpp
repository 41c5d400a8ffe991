// C API of family conv_launch (include/cpp_engine/conv_launch.h): converts the
// flat C spec; lower returns the launch plan text (not an LLVM module).
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#include "cpp_engine/conv_launch.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/c_api.h"
#include "api/conv_spec_c.h"
#include "families/conv_launch.h"
#include "kernels/conv_launch.h"

using namespace cpe;

namespace {

struct Fam {
    static constexpr bool kAnyProcessor = true;  // the split-K resolver takes any LLVM AMDGPU processor
    using Spec = kernels::conv_launch::LaunchSpec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return families::conv_launch::validate(s, a, f);
    }
    static auto build(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return families::conv_launch::build(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_conv_launch_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    api::launch_from_c(*spec, s);
    s.degree = spec->degree;
    return s;
}

// A plan argument's value text ("buffer x", "unused", "caller", decimal) as a cpe_launch_arg.
void to_c_arg(const kernels::conv_launch::PlanArg &a, cpe_launch_arg &c) {
    c.name = api::dup_c(a.name);
    c.value = 0;
    c.tensor = nullptr;
    if (a.value.rfind("buffer ", 0) == 0) {
        c.kind = CPE_LAUNCH_ARG_BUFFER;
        c.tensor = api::dup_c(a.value.substr(7));
    } else if (a.value == "unused") {
        c.kind = CPE_LAUNCH_ARG_UNUSED;
    } else if (a.value == "caller") {
        c.kind = CPE_LAUNCH_ARG_CALLER;
    } else {
        size_t used = 0;
        const long long v = std::stoll(a.value, &used, 10);
        if (used != a.value.size()) throw std::logic_error("conv_launch: argument " + a.name + " = " + a.value);
        c.kind = CPE_LAUNCH_ARG_VALUE;
        c.value = static_cast<int64_t>(v);
    }
}

void free_args(cpe_launch_arg *args, size_t n) {
    if (!args) return;
    for (size_t i = 0; i < n; ++i) {
        std::free(const_cast<char *>(args[i].name));
        std::free(const_cast<char *>(args[i].tensor));
    }
    std::free(args);
}

// calloc'd arguments (zeroed, so a partial fill frees cleanly).
cpe_launch_arg *to_c_args(const std::vector<kernels::conv_launch::PlanArg> &args, size_t *n) {
    *n = 0;
    if (args.empty()) return nullptr;
    auto *out = static_cast<cpe_launch_arg *>(std::calloc(args.size(), sizeof(cpe_launch_arg)));
    if (!out) throw std::bad_alloc();
    try {
        for (size_t i = 0; i < args.size(); ++i) to_c_arg(args[i], out[i]);
    } catch (...) {
        free_args(out, args.size());
        throw;
    }
    *n = args.size();
    return out;
}

}  // namespace

extern "C" {

void cpe_conv_launch_plan_free(cpe_conv_launch_plan *plan) {
    if (!plan) return;
    std::free(plan->kernel);
    std::free(plan->variant);
    free_args(plan->args, plan->num_args);
    free_args(plan->stage2_args, plan->num_stage2_args);
    std::memset(plan, 0, sizeof *plan);
}

cpe_status cpe_conv_launch_lower_plan(const cpe_conv_launch_spec *spec, const char *arch, const char *flavor,
                                      cpe_conv_launch_plan *out, char *reason, size_t reason_len) {
    if (out) std::memset(out, 0, sizeof *out);
    return api::guarded(reason, reason_len, [&] {
        const Fam::Spec s = to_cpp(spec);
        const targets::Target t = api::check_spec<Fam>(s, arch, flavor);
        if (!out) throw std::invalid_argument("out is NULL");
        const kernels::conv_launch::Plan p = families::conv_launch::plan(s, *t.arch, *t.flavor);
        cpe_conv_launch_plan c;
        std::memset(&c, 0, sizeof c);
        try {
            c.kernel = api::dup_c(p.kernel);
            c.variant = api::dup_c(p.variant);
            c.degree = p.degree;
            c.ks = p.ks;
            c.ks_count = p.ks_count;
            c.data_slices = p.data_slices;
            for (int i = 0; i < 3; ++i) {
                c.grid[i] = p.grid[i];
                c.block[i] = p.block[i];
            }
            c.lds_bytes = p.lds_bytes;
            if (p.cluster_slices) {
                c.cluster[0] = 1;
                c.cluster[1] = 1;
                c.cluster[2] = p.cluster_slices;
            }
            c.workspace_bytes = p.workspace_bytes;
            c.needs_stage2 = p.needs_stage2 ? 1 : 0;
            c.args = to_c_args(p.args, &c.num_args);
            c.stage2_args = to_c_args(p.stage2_args, &c.num_stage2_args);
        } catch (...) {
            cpe_conv_launch_plan_free(&c);
            throw;
        }
        *out = c;
    });
}


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

// Twin of python_engine/families/conv_launch.py.
#include "families/conv_launch.h"

#include "ir/constants.h"
#include "policy/split_k.h"
#include "spec/fields.h"

namespace cpe::families::conv_launch {

namespace launch = kernels::conv_launch;

std::pair<Spec, std::optional<std::string>> resolve(const Spec &spec, const targets::Arch &arch,
                                                    const targets::Flavor &flavor) {
    if (spec.conv.split_k != -1) return {spec, std::nullopt};
    if (auto r = launch::problem_reason(spec)) return {spec, r};
    if (spec.degree != 1)
        return {spec, "degree must be left at 1 when split_k = -1 (the policy picks it), got " + ir::dec(spec.degree)};
    int64_t d = 1;
    try {
        d = policy::resolve_conv_split_k("fwd", spec.conv, launch::problem_of(spec), arch, false, &flavor).degree;
    } catch (const spec::SpecRejected &e) {  // an explicit cluster request the flavor/arch cannot build
        return {spec, std::string(e.what())};
    }
    Spec r = spec;
    r.conv.split_k = d;
    r.degree = d;
    return {r, std::nullopt};
}

std::optional<std::string> validate(const Spec &given, const targets::Arch &arch, const targets::Flavor &flavor) {
    const auto resolved = resolve(given, arch, flavor);
    if (resolved.second) return resolved.second;
    return launch::validate(resolved.first, arch, flavor);
}

std::string kernel_name(const Spec &given, const targets::Arch &arch, const targets::Flavor &flavor) {
    return launch::kernel_name(resolve(given, arch, flavor).first);
}

kernels::conv_launch::Plan plan(const Spec &given, const targets::Arch &arch, const targets::Flavor &flavor) {
    return launch::plan(resolve(given, arch, flavor).first, arch, flavor);
}

std::pair<std::string, std::string> build(const Spec &given, const targets::Arch &arch,
                                          const targets::Flavor &flavor) {
    return launch::build(resolve(given, arch, flavor).first, arch, flavor);
}

}  // namespace cpe::families::conv_launch

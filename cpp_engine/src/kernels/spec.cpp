// Twin of python_engine/kernels/spec.py (and the flavor/arch part of api.py `_prepare`).
#include "kernels/spec.h"

namespace cpe::kernels {

std::string show(const std::optional<std::string> &v) { return v ? "'" + *v + "'" : "null"; }

Target resolve_target(const std::string &arch, const std::string &flavor) {
    const targets::Flavor *fl = targets::find_flavor(flavor);
    if (!fl) throw SpecRejected(targets::unknown_flavor_reason(flavor));
    const targets::Arch *ar = targets::find_arch(arch);
    if (!ar) throw SpecRejected(targets::unknown_arch_reason(arch));
    return Target{fl, ar};
}

}  // namespace cpe::kernels

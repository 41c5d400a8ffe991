// Twin of python_engine/targets/target.py.
#include "targets/target.h"

namespace cpe::targets {

Target resolve_target(const std::string &arch, const std::string &flavor, bool any_processor) {
    const Flavor *fl = find_flavor(flavor);
    if (!fl) throw spec::SpecRejected(unknown_flavor_reason(flavor));
    const Arch *ar = any_processor ? processor_arch(arch) : find_arch(arch);
    if (!ar) throw spec::SpecRejected(unknown_arch_reason(arch));
    return Target{fl, ar};
}

}  // namespace cpe::targets

// Twin of python_engine/targets/flavors.py (sources cited in flavors.h).
#include "spec/fields.h"
#include "targets/flavors.h"

namespace cpe::targets {

const char *const kTriple = "amdgcn-amd-amdhsa";

namespace {

const char *const kDlHead = "-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32";
const char *const kDlTail =
    "-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128"
    "-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9";

std::string dl(const char *lead, const char *p8) { return std::string(lead) + kDlHead + p8 + kDlTail; }

}  // namespace

const std::vector<Flavor> &flavors() {
    static const std::vector<Flavor> table = [] {
        const std::string dl20 = dl("e", "-p8:128:128");
        const std::string dl22 = dl("e", "-p8:128:128:128:48");
        const std::string dl23 = dl("e-m:e", "-p8:128:128:128:48");
        return std::vector<Flavor>{
            {"llvm20", "llvm20", dl20, "nocapture", 32, false},
            {"llvm22", "llvm22", dl22, "captures(none)", 64, false},
            {"llvm23", "llvm23", dl23, "captures(none)", 64, true},
            {"llvm24", "llvm23", dl23, "captures(none)", 64, true},
        };
    }();
    return table;
}

const Flavor *find_flavor(const std::string &name) {
    for (const Flavor &f : flavors())
        if (f.name == name) return &f;
    return nullptr;
}

std::string unknown_flavor_reason(const std::string &name) {
    if (auto why = spec::string_reason("flavor", name)) return *why;
    return "flavor '" + name + "' is not one of llvm20, llvm22, llvm23, llvm24";
}

}  // namespace cpe::targets

// Twin of python_engine/kernels/common.py.
#include "kernels/common.h"

#include "ir/constants.h"

namespace cpe::kernels {

const char *const kKernelAttrOrder[4] = {
    "amdgpu-flat-work-group-size",
    "amdgpu-cluster-dims",
    "amdgpu-waves-per-eu",
    "uniform-work-group-size",
};

const char *const kModuleFlags[2] = {
    "!llvm.module.flags = !{!0}",
    "!0 = !{i32 1, !\"amdhsa_code_object_version\", i32 600}",
};

ir::Function::Attrs kernel_attrs(int64_t threads, const std::optional<ClusterDims> &cluster_dims,
                                 const std::optional<int64_t> &waves_per_eu) {
    ir::Function::Attrs out;
    for (const char *key : kKernelAttrOrder) {
        const std::string k = key;
        if (k == "amdgpu-flat-work-group-size") {
            out.emplace_back(k, ir::dec(threads) + "," + ir::dec(threads));
        } else if (k == "amdgpu-cluster-dims") {
            if (cluster_dims) {
                const ClusterDims &d = *cluster_dims;
                out.emplace_back(k, ir::dec(d[0]) + "," + ir::dec(d[1]) + "," + ir::dec(d[2]));
            }
        } else if (k == "amdgpu-waves-per-eu") {
            if (waves_per_eu) out.emplace_back(k, ir::dec(*waves_per_eu));
        } else if (k == "uniform-work-group-size") {
            out.emplace_back(k, "true");
        }
    }
    return out;
}

ir::Param in_ptr(const std::string &name) { return {name, ir::global_ptr(), {"noalias", "capture", "readonly"}}; }
ir::Param out_ptr(const std::string &name) { return {name, ir::global_ptr(), {"noalias", "capture", "writeonly"}}; }
ir::Param inout_ptr(const std::string &name) { return {name, ir::global_ptr(), {"noalias", "capture"}}; }
ir::Param scalar(const std::string &name, const ir::Type *t) { return {name, t, {}}; }

std::unique_ptr<ir::Module> new_module(const targets::Flavor &flavor, const targets::Arch &arch,
                                       const std::string &name, std::vector<ir::Param> params,
                                       ir::Function::Attrs attrs) {
    auto m = std::make_unique<ir::Module>(flavor, arch);
    m->set_function(std::make_unique<ir::Function>(name, std::move(params), ir::void_(), "amdgpu_kernel",
                                                   std::move(attrs)));
    for (const char *line : kModuleFlags) m->add_metadata(line);
    return m;
}

}  // namespace cpe::kernels

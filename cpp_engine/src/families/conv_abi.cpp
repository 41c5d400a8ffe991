// Twin of python_engine/families/conv_abi.py.
#include "families/conv_abi.h"

#include "ir/constants.h"
#include "kernels/acc_epilogue.h"
#include "kernels/conv_abi.h"

namespace cpe::families::conv_abi {

const char *const kFamily = "conv_abi";

namespace {
const char *const kKernelArch = "gfx1250";

bool one_of(const std::optional<std::string> &v, const std::vector<std::string> &names) {
    if (!v) return false;
    for (const std::string &n : names)
        if (*v == n) return true;
    return false;
}
}  // namespace

const std::vector<spec::Field> &fields() {
    static const std::vector<spec::Field> f{
        {"direction", spec::FieldKind::Str},
        {"variant", spec::FieldKind::Str},
        {"spatial_dims", spec::FieldKind::Int},
        {"acc_epilogue", spec::FieldKind::Str},
    };
    return f;
}

std::optional<std::string> validate(const AbiSpec &spec, const targets::Arch &arch, const targets::Flavor &flavor) {
    if (!one_of(spec.direction, {"fwd", "bwd_data", "bwd_weight"}))
        return "direction must be fwd, bwd_data or bwd_weight, got " + spec::show(spec.direction);
    if (*spec.direction != "fwd")
        return "direction '" + *spec.direction + "' has no kernels (only fwd is implemented)";
    if (!one_of(spec.variant, kernels::conv_abi::variants()))
        return "variant must be plain, two_stage, cluster or reduce, got " + spec::show(spec.variant);
    if (spec.spatial_dims == 3)
        return std::string("spatial_dims 3 (3-D convolution) has no kernels (only 2-D is implemented)");
    if (spec.spatial_dims != 2) return "spatial_dims must be 2 or 3, got " + ir::dec(spec.spatial_dims);
    if (!kernels::acc_epilogue::known(spec.acc_epilogue))
        return std::string("acc_epilogue must be ") + kernels::acc_epilogue::kNamesText + ", got " +
               spec::show(spec.acc_epilogue);
    if (*spec.acc_epilogue != "identity" && *spec.variant != "reduce")
        return "acc_epilogue '" + *spec.acc_epilogue +
               "' applies to variant reduce only (the forward kernels take every epilogue argument)";
    if (arch.name != kKernelArch) return "arch " + arch.name + " has no conv kernels (requires gfx1250)";
    if (*spec.variant == "cluster" && !flavor.clusters) return std::string("variant cluster requires flavor llvm23");
    return std::nullopt;
}

std::string kernel_name(const AbiSpec &spec) {
    const std::string acc = *spec.acc_epilogue == "identity" ? std::string() : "_" + *spec.acc_epilogue;
    return "conv_abi_" + *spec.direction + "_" + *spec.variant + acc;
}

std::pair<std::string, std::string> build(const AbiSpec &spec, const targets::Arch &,
                                          const targets::Flavor &flavor) {
    return {kernel_name(spec), kernels::conv_abi::text(*spec.variant, flavor, *spec.acc_epilogue)};
}

}  // namespace cpe::families::conv_abi

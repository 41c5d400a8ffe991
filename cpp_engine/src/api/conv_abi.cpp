// C API of family conv_abi (include/cpp_engine/conv_abi.h): converts the C
// spec; lower returns the family's text (not an LLVM module).
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#include "cpp_engine/conv_abi.h"

#include <stdexcept>

#include "api/c_api.h"
#include "families/conv_abi.h"

using namespace cpe;

namespace {

struct Fam {
    using Spec = families::conv_abi::AbiSpec;
    static auto validate(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return families::conv_abi::validate(s, a, f);
    }
    static auto build(const Spec &s, const targets::Arch &a, const targets::Flavor &f) {
        return families::conv_abi::build(s, a, f);
    }
};

Fam::Spec to_cpp(const cpe_conv_abi_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    Fam::Spec s;
    s.direction = api::str_field(spec->direction, "direction");
    s.variant = api::str_field(spec->variant, "variant");
    s.spatial_dims = spec->spatial_dims;
    s.acc_epilogue = api::str_field(spec->acc_epilogue, "acc_epilogue");
    return s;
}

}  // namespace

extern "C" {

cpe_conv_abi_spec cpe_conv_abi_spec_default(void) {
    static const Fam::Spec d;  // the defaults live in the C++ spec struct
    cpe_conv_abi_spec s;
    s.direction = d.direction->c_str();
    s.variant = d.variant->c_str();
    s.spatial_dims = d.spatial_dims;
    s.acc_epilogue = d.acc_epilogue->c_str();
    return s;
}

cpe_status cpe_conv_abi_validate(const cpe_conv_abi_spec *spec, const char *arch, const char *flavor, char *reason,
                                 size_t reason_len) {
    return api::validate_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, reason, reason_len);
}

cpe_status cpe_conv_abi_lower(const cpe_conv_abi_spec *spec, const char *arch, const char *flavor, cpe_output *out,
                              char *reason, size_t reason_len) {
    return api::lower_spec<Fam>([&] { return to_cpp(spec); }, arch, flavor, out, reason, reason_len);
}

}  // extern "C"

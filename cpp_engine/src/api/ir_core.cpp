// C API of family ir_core (include/cpp_engine/ir_core.h).
#include "cpp_engine/ir_core.h"

#include <stdexcept>

#include "api/c_api.h"
#include "ir/printer.h"
#include "kernels/ir_core.h"

using namespace cpe;
namespace fam = cpe::kernels::ir_core;

namespace {

fam::IrCoreSpec to_cpp(const cpe_ir_core_spec *spec) {
    if (!spec) throw std::invalid_argument("spec is NULL");
    fam::IrCoreSpec s;
    s.kernel = api::str_field(spec->kernel);
    s.threads = spec->threads;
    s.cluster = spec->cluster;
    return s;
}

// Front checks then family rules; returns the resolved target of an accepted spec.
kernels::Target check(const fam::IrCoreSpec &s, const char *arch, const char *flavor) {
    const kernels::Target t = kernels::resolve_target(api::name_arg(arch), api::name_arg(flavor));
    if (auto r = fam::validate(s, *t.arch, *t.flavor)) throw kernels::SpecRejected(*r);
    return t;
}

}  // namespace

extern "C" {

cpe_ir_core_spec cpe_ir_core_spec_default(void) {
    static const fam::IrCoreSpec d;  // the defaults live in the C++ spec struct
    cpe_ir_core_spec s;
    s.kernel = d.kernel->c_str();
    s.threads = d.threads;
    s.cluster = d.cluster;
    return s;
}

cpe_status cpe_ir_core_validate(const cpe_ir_core_spec *spec, const char *arch, const char *flavor, char *reason,
                                size_t reason_len) {
    return api::guarded(reason, reason_len, [&] { check(to_cpp(spec), arch, flavor); });
}

cpe_status cpe_ir_core_lower(const cpe_ir_core_spec *spec, const char *arch, const char *flavor, cpe_output *out,
                             char *reason, size_t reason_len) {
    if (out) {
        out->kernel = nullptr;
        out->text = nullptr;
    }
    return api::guarded(reason, reason_len, [&] {
        const fam::IrCoreSpec s = to_cpp(spec);
        const kernels::Target t = check(s, arch, flavor);
        if (!out) throw std::invalid_argument("out is NULL");
        auto built = fam::build(s, *t.arch, *t.flavor);
        const std::string text = ir::print_module(*built.second);
        api::fill_output(out, built.first, text);
    });
}

}  // extern "C"

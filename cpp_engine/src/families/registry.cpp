// The family registry of the C++ engine. Twin of python_engine/families/registry.py.
#include "families/registry.h"

// Each family's fields(), declared from its families.def row (the one
// registration: no per-family #include here).
#define CPE_FAMILY(name, prefix, cxx_namespace) \
    namespace cxx_namespace {                   \
    const std::vector<spec::Field> &fields();   \
    }
#include "cpp_engine/families.def"
#undef CPE_FAMILY

namespace cpe::families::registry {

const std::vector<Family> &families() {
    static const std::vector<Family> rows = {
#define CPE_FAMILY(name, prefix, cxx_namespace) {#name, #prefix, &cxx_namespace::fields},
#include "cpp_engine/families.def"
#undef CPE_FAMILY
    };
    return rows;
}

std::string fields_text(const std::vector<spec::Field> &fields) {
    std::string out;
    for (const spec::Field &f : fields) {
        if (!out.empty()) out += ',';
        out += f.name;
        out += ':';
        switch (f.kind) {
            case spec::FieldKind::Int: out += 'i'; break;
            case spec::FieldKind::Str: out += 's'; break;
            case spec::FieldKind::Bool: out += 'b'; break;
            case spec::FieldKind::Float: out += 'f'; break;
        }
    }
    return out;
}

}  // namespace cpe::families::registry

// The family registry of the C++ engine. Twin of python_engine/families/registry.py.
//
// One row per family, in the engine's family order, generated from the
// X-macro list include/cpp_engine/families.def (the one place a family is
// registered in this engine). The C API (cpe_family_*, api/engine.cpp) and,
// through it, the Python binding's family list are read from here.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "spec/fields.h"

namespace cpe::families::registry {

struct Family {
    const char *name;    // the engine API's family name
    const char *prefix;  // the C prefix of its spec struct and entry points
    const std::vector<spec::Field> &(*fields)();  // spec fields in order
};

// Every family, in the engine's family order.
const std::vector<Family> &families();

// "name:kind,name:kind,..." of a field list, kind one letter: i (int64_t),
// s (const char *, NULL = null), b (bool), f (double).
std::string fields_text(const std::vector<spec::Field> &fields);

}  // namespace cpe::families::registry

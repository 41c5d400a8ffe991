// The intrinsic table: every intrinsic the engine may declare, keyed by a
// stable name, in the order the printer declares them (DESIGN §2).
// Twin of python_engine/ir/intrinsics.py; a test compares the two tables
// entry by entry.
//
// Each row is (key, name, return type, parameter types); a row may override
// those per canonical flavor. Signatures follow LLVM `IntrinsicsAMDGPU.td`
// (and the generic `Intrinsics.td`) of the generation each flavor names.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/types.h"

namespace cpe::ir {

// One resolved intrinsic: its LLVM name, return type and parameter types.
struct Intrinsic {
    std::string key;
    std::string name;
    const ir::Type *ret;
    std::vector<const ir::Type *> params;

    // `declare <ret> @<name>(<params>)`.
    std::string declaration() const;
};

// The stable keys of every row, in table order.
const std::vector<std::string> &intrinsic_keys();

// The intrinsic `key` as written for canonical `flavor`;
// std::out_of_range if the key is unknown.
Intrinsic intrinsic(const std::string &key, const std::string &flavor);

// The row intrinsic(key, flavor) copies, by reference into the table (static
// storage, never freed): what the IR builder reads per call. Same errors.
// `declaration` is Intrinsic::declaration() of the row, made once per
// process; `index` its position in table order (intrinsic_keys()).
struct IntrinsicRef {
    const std::string &name;
    const ir::Type *ret;
    const std::vector<const ir::Type *> &params;
    const std::string &declaration;
    size_t index;
};
IntrinsicRef intrinsic_ref(std::string_view key, const std::string &flavor);

// Rows in the table (intrinsic_keys().size()).
size_t intrinsic_count();
// The row at `index` (table order) as intrinsic_ref gives it; std::out_of_range past the end.
IntrinsicRef intrinsic_at(size_t index, const std::string &flavor);

// (key, declaration line) of every row, in table order, for canonical `flavor`.
std::vector<std::pair<std::string, std::string>> intrinsic_table(const std::string &flavor);

}  // namespace cpe::ir

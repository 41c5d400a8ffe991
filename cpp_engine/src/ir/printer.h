// The LLVM text printer (DESIGN §2). Twin of python_engine/ir/printer.py.
//
// Section order: header (datalayout, target triple), LDS globals, intrinsic
// declarations (table order), the kernel `define`, attribute groups, metadata;
// one blank line between non-empty sections, `\n` line ends, a trailing
// newline. Blocks inside the function are separated by one blank line.
#pragma once

#include <string>

#include "ir/function.h"

namespace cpe::ir {

// Render `m` as LLVM IR text. std::logic_error if the module has no function.
std::string print_module(const Module &m);

}  // namespace cpe::ir

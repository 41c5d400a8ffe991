// The LLVM text printer (DESIGN §2). Twin of python_engine/ir/printer.py.
//
// Section order: header (datalayout, target triple), LDS globals, intrinsic
// declarations (table order), the kernel `define`, attribute groups, metadata;
// one blank line between non-empty sections, `\n` line ends, a trailing
// newline. Blocks inside the function are separated by one blank line.
#pragma once

#include <string>
#include <vector>

#include "ir/function.h"

namespace cpe::ir {

// Render `m` as LLVM IR text. std::logic_error if the module has no function.
std::string print_module(const Module &m);

// The origin table of `text` (print_module(m)): one entry per line of `text`
// (its final "\n" ends the last line), "cpp_engine/src/<file>:<line>" of the
// builder call that made the block label or instruction on that line (ir/origin.h),
// "" for a line no builder call made (header, declarations, `define`, `}`,
// blank lines, attributes, metadata) or one made while recording was off.
// std::logic_error if `text` is not laid out as print_module lays `m` out.
std::vector<std::string> line_origins(const Module &m, const std::string &text);

}  // namespace cpe::ir

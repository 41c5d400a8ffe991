// The LLVM text printer (DESIGN §2). Twin of python_engine/ir/printer.py.
//
// Section order: header (datalayout, target triple), LDS globals, intrinsic
// declarations (table order), the kernel `define`, attribute groups, metadata;
// one blank line between non-empty sections, `\n` line ends, a trailing
// newline. Blocks inside the function are separated by one blank line.
//
// Output path (docs/cpp_engine.md, "The output path"): the builder has already
// written every instruction line into its block's text (ir/function.h Block),
// so printing is one sizing pass (exact byte count) and one writing pass into a
// buffer of that size: the module text is written once, with no per-line
// string. Both passes run the same code, so the size always matches.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/function.h"

namespace cpe::ir {

// A module ready to print: its intrinsic declarations looked up once (lines
// made once per process), then its exact text size. Every other line,
// the `define` line and the attribute group included, is written piece by
// piece by both passes.
// std::logic_error if the module has no function or a phi has no incoming edge.
class ModulePrint {
public:
    explicit ModulePrint(const Module &m);
    // Bytes of the module text (no NUL).
    size_t size() const { return size_; }
    // Write the text into `dst`, which holds at least size() bytes; no NUL is
    // added. Returns dst + size().
    char *write(char *dst) const;

private:
    const Module &m_;
    std::vector<const std::string *> decls_;  // declaration lines of the intrinsic table (static storage)
    size_t size_ = 0;

    template <class Out>
    void emit(Out &o) const;
};

// Render `m` as LLVM IR text (ModulePrint into a string). std::logic_error if
// the module has no function.
std::string print_module(const Module &m);

// The origin table of `text` (print_module(m)): one entry per line of `text`
// (its final "\n" ends the last line), "cpp_engine/src/<file>:<line>" of the
// builder call that made the block label or instruction on that line, or of the
// add_lds call that declared the LDS global on that line (ir/origin.h), "" for a
// line no such call made (header, declarations, `define`, `}`, blank lines,
// attributes, metadata) or one made while recording was off.
// std::logic_error if `text` is not laid out as print_module lays `m` out.
std::vector<std::string> line_origins(const Module &m, const std::string &text);

}  // namespace cpe::ir
